"""Gather the ninth batch of wild sources (2026-12-06, issue 19: neural TTS and speech-LM systems no
batch had yet) into /work/exp/wild/manifest_tts9.csv, beside the first eight batches (left as they were).

Why: every system the corpus measured so far is in /work/exp/v23/systems_used.txt; a judge's error on
systems it has never seen (neither in fitting nor in any earlier measurement) is the number this
batch is for. It brings NaturalSpeech 3, NaturalSpeech (1), UniAudio, SimpleSpeech 2, E3-TTS, ARDiT,
DiTTo-TTS, Step-Audio (chat and voice clone) and Spark-TTS, from the systems' own demo pages and
repositories, to MEASURE only: no head is ever fitted on these rows, whatever their repository's
licence, and they were gathered before any experiment rule for them was written.

Sources: benchmarks/data/wild_sources/tts_9.py and its .md (evidence, licences, doubts per source).
Its ``SOURCES`` list is empty; every ``MEASURE_ONLY_SOURCES`` row is written ``measure-only
(<the repository's licence>)``, outside ``judge_lofo.FIT_OK``. Gathered with the options every
commercial batch shares (``gather_wild_corpus_5.gather_commercial``: reserved and sealed systems
skipped, clips under 0.8 s dropped, clips over 16 s cut into at most four 8 s pieces at pauses; at
most 14 source files per system and repository). Data gathering only: the mirrors come from a
development session's `fetch` tool, so this does not run in CI. The manifest it wrote is kept in
benchmarks/data/wild_manifest_9.csv.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gather_wild_corpus_5 import gather_commercial  # noqa: E402  (the options every batch since the fifth shares)
from gather_wild_corpus_6 import sources  # noqa: E402  (the rule file's lists, each source tagged)

RULES = "tts_9"


def licence_of(src: dict, label: str, system: str) -> tuple[str, str]:
    """Every row of this batch is measure-only, whatever its repository's licence (as the fifth
    batch's); the note names the rule file whose .md holds the evidence. The sixth batch's
    ``licence_of`` is not used: its measure-only note ("the generator's plan and terms are unknown")
    is about commercial engines and untrue here."""
    md = f"{src.get('rules_file', RULES)}.md"
    return f"measure-only ({src['licence']})", f"measure-only batch: gathered to measure, never to fit ({md})"


def gather_measure_only(rules: str, manifest_name: str) -> None:
    """Gather a batch whose every source is measure-only (this one, the tenth) into
    /work/exp/wild/``manifest_name`` with the shared options and ``licence_of``."""
    srcs = sources(rules)
    assert all(s.get("measure_only") for s in srcs), f"{rules}: a measure-only batch"
    gather_commercial(srcs, manifest_name, licence_of)


def main() -> int:
    gather_measure_only(RULES, "manifest_tts9.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
