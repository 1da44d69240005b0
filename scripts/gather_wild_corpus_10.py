"""Gather the tenth batch of wild sources (2026-12-06, issue 19: neural TTS, voice-conversion and
speech-LM systems no batch had yet) into /work/exp/wild/manifest_tts10.csv, beside the first nine
batches (left as they were): E1 TTS, CosyVoice (1), FireRedTTS (1), MVoice (Make-A-Voice),
SPEAR-TTS, NANSY and Lina-Speech, from their demo pages, to MEASURE only, gathered before any
experiment rule for them was written.

Sources, licences and doubts: benchmarks/data/wild_sources/tts_10.py and its .md. Everything else
(measure-only rows, options, licence notes, why, and that it does not run in CI) is the ninth
batch's: scripts/gather_wild_corpus_9.py (``gather_measure_only``). The manifest it wrote is kept
in benchmarks/data/wild_manifest_10.csv.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gather_wild_corpus_9 import gather_measure_only, licence_of  # noqa: E402,F401  (the ninth batch's rules)

RULES = "tts_10"


def main() -> int:
    gather_measure_only(RULES, "manifest_tts10.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
