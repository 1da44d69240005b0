"""Gather the sixth batch of wild sources (2026-12-05, issue 19: commercial TTS that may be fitted
on) into /work/exp/wild/manifest_comm6.csv, beside the first five batches (left as they were).

Why: a head refitted on the two commercial engines the corpus could fit on (OpenAI tts-1-hd and
Gemini TTS; the v7 refit) called the fifth batch's commercial engines (measure-only) machine far
more often than the shipped head (benchmarks/experiments/commercial_transfer/README.md), so more
commercial engines that may be fitted on are worth having. This batch adds Google Cloud TTS
(voice previews of many voices, and the API's default voice) and Deepgram Aura, from repositories
whose LICENSE file allows fitting.

Sources: benchmarks/data/wild_sources/commercial_tts_6.py and its .md (evidence, licences, doubts
per source). ``SOURCES`` rows keep their repository's licence (in ``judge_lofo.FIT_OK``);
``MEASURE_ONLY_SOURCES`` rows are written ``measure-only (<the repository's licence>)``, outside
``FIT_OK``. Data gathering only, like the earlier batches: the mirrors come from a development
session's `fetch` tool, so this does not run in CI. The manifest it wrote is kept in
benchmarks/data/wild_manifest_6.csv.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gather_wild_corpus_5 import gather_commercial  # noqa: E402  (the options every commercial batch shares)
from gather_wild_corpus_2 import load  # noqa: E402


def licence_of(src: dict, label: str, system: str) -> tuple[str, str]:
    """A fit-OK source keeps its repository's licence; a measure-only one is marked so. The note
    names the rule file whose .md holds the evidence (``sources`` tags each source with it)."""
    md = f"{src.get('rules_file', 'commercial_tts_6')}.md"
    if src.get("measure_only"):
        return f"measure-only ({src['licence']})", f"the generator's plan and terms are unknown ({md})"
    return src["licence"], f"LICENSE file of {src['repo']} at {src['commit'][:12]} ({md})"


def sources(name: str = "commercial_tts_6") -> list[dict]:
    """The rule file's fit-OK sources, then its measure-only ones (marked ``measure_only``), each
    tagged with the rule file's name."""
    return [s | {"rules_file": name} for s in load(name, "SOURCES")] + \
        [s | {"measure_only": True, "rules_file": name} for s in load(name, "MEASURE_ONLY_SOURCES")]


def main() -> int:
    gather_commercial(sources(), "manifest_comm6.csv", licence_of)
    return 0


if __name__ == "__main__":
    sys.exit(main())
