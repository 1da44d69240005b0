"""Gather the fourth batch of wild sources (2026-12-04, issue 19: more conversational speech of both
classes) into /work/exp/wild/manifest_conv4.csv, beside the first three batches (left as they were).

Why: the third batch moved the held-out figures more than any readout change, and the one family
every readout still ranks near or below chance is commercial-neural-tts (docs/judge.md). This batch
brings more conversational and telephone people (IBM's speaker-labelling demo calls, more of the
Apollo 11 air-to-ground loop) and a commercial conversational voice (Gemini TTS podcasts and voice
cards).

Sources: benchmarks/data/wild_sources/conversational_human_4.py and conversational_tts_4.py, each
rule with its label and licence evidence in the .md beside it; their ``MEASURE_ONLY_SOURCES`` are
listed there and not gathered. Data gathering only, like the first three batches: the mirrors come
from a development session's `fetch` tool, so this does not run in CI. The manifest it wrote is
kept in benchmarks/data/wild_manifest_4.csv.

Licence per row: as in the third batch (scripts/gather_wild_corpus_3.py ``corpus_licence``).
Reserved sources and systems are refused; MegaTTS and Kokoro (sealed families) skipped.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gather_wild_corpus import gather  # noqa: E402  (the extraction loop every batch shares)
from gather_wild_corpus_2 import CAP_PER_REPO, load  # noqa: E402
from gather_wild_corpus_3 import corpus_licence  # noqa: E402  (one licence rule for batches 3 and 4)


def main() -> int:
    gather(load("conversational_human_4") + load("conversational_tts_4"), "manifest_conv4.csv",
           cap_per_repo=CAP_PER_REPO, skip_rx=r"(styletts|tortoise|vibevoice|megatts|kokoro|hibari)",
           min_duration_s=0.8, split_over_s=16, licence_of=corpus_licence)
    return 0


if __name__ == "__main__":
    sys.exit(main())
