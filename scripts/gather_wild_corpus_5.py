"""Gather the fifth batch of wild sources (2026-12-04, issue 19: commercial neural TTS) into
/work/exp/wild/manifest_comm5.csv, beside the first four batches (left as they were).

Why: every head so far ranks commercial neural TTS below chance against people, and the shipped
head rates those voices more human than people (its wild caveat). The voices most voice agents
use (OpenAI, Google, ElevenLabs, Amazon Polly, Cartesia) had two engines' worth of clips in the
corpus. This batch brings several hundred clips of those engines, to MEASURE only.

Sources: benchmarks/data/wild_sources/commercial_tts_5.py and its .md (evidence and licences per
source). Its ``SOURCES`` list is empty (no source that may be fitted on was found); every
``MEASURE_ONLY_SOURCES`` entry is gathered here with its row licence written as
``measure-only (<the repository's licence>)``, outside ``judge_lofo.FIT_OK``, so no head is ever
fitted on these rows. Data gathering only, like the earlier batches: the mirrors come from a
development session's `fetch` tool, so this does not run in CI. The manifest it wrote is kept in
benchmarks/data/wild_manifest_5.csv.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gather_wild_corpus import gather  # noqa: E402  (the extraction loop every batch shares)
from gather_wild_corpus_2 import CAP_PER_REPO, load  # noqa: E402


def measure_only_sources(name: str = "commercial_tts_5") -> list[dict]:
    """The rule file's ``MEASURE_ONLY_SOURCES``: the whole batch."""
    return load(name, "MEASURE_ONLY_SOURCES")


def licence_of(src: dict, label: str, system: str) -> tuple[str, str]:
    """Every row of this batch is measure-only, whatever its repository's licence says."""
    return f"measure-only ({src['licence']})", "generator terms or repository licence do not allow fitting (commercial_tts_5.md)"


def gather_commercial(sources: list[dict], manifest_name: str, licence_of) -> list[dict]:
    """The options every commercial batch (5, 6, 7) is gathered with: the reserved and sealed
    systems skipped, clips under 0.8 s dropped, clips over 16 s cut into 8 s pieces."""
    return gather(sources, manifest_name, cap_per_repo=CAP_PER_REPO,
                  skip_rx=r"(styletts|tortoise|vibevoice|megatts|kokoro|hibari)", min_duration_s=0.8,
                  split_over_s=16, licence_of=licence_of)


def main() -> int:
    gather_commercial(measure_only_sources(), "manifest_comm5.csv", licence_of)
    return 0


if __name__ == "__main__":
    sys.exit(main())
