"""Gather the seventh batch of wild sources (2026-12-05, issue 19: more commercial TTS that may be
fitted on) into /work/exp/wild/manifest_comm7.csv, beside the first six batches (left as they were).

Why: as the sixth batch's (scripts/gather_wild_corpus_6.py): a head fitted on a few commercial
engines ranks other commercial engines far better than the shipped head, so every commercial
engine that may be fitted on is worth having. This batch adds Amazon Polly (neural and
generative), OpenAI tts-1 (two repositories, seven voices) and IBM Watson TTS V3; Azure neural
voices only measure-only (no LICENSE file).

Sources: benchmarks/data/wild_sources/commercial_tts_7.py and its .md. Rows keep their
repository's licence (``judge_lofo.FIT_OK``, which takes MIT-0 from this batch on); measure-only
rows are written ``measure-only (<the repository's licence>)``. The shared gatherer's caps apply
(at most 14 source files per system and repository; clips over 16 s cut into at most four 8 s
pieces). Data gathering only: the mirrors come from a development session's `fetch` tool, so this
does not run in CI. The manifest it wrote is kept in benchmarks/data/wild_manifest_7.csv.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gather_wild_corpus_5 import gather_commercial  # noqa: E402  (the options every commercial batch shares)
from gather_wild_corpus_6 import licence_of, sources  # noqa: E402  (same licence rule as the sixth batch)

RULES = "commercial_tts_7"


def main() -> int:
    gather_commercial(sources(RULES), "manifest_comm7.csv", licence_of)
    return 0


if __name__ == "__main__":
    sys.exit(main())
