"""Gather the eighth batch of wild sources (2026-12-05, issue 19: more commercial TTS that may be
fitted on) into /work/exp/wild/manifest_comm8.csv, beside the first seven batches (left as they were).

Why: as the sixth and seventh batches' (scripts/gather_wild_corpus_6.py, _7.py): every commercial
engine that may be fitted on is worth having. This round looked for the hosted engines voice agents
use that had no fit-OK clips (ElevenLabs, Cartesia, PlayHT, Rime, LMNT, Murf, WellSaid, Resemble,
Speechify, Hume, Inworld, Unreal Speech, OpenAI gpt-4o-mini-tts). Fit-OK audio was found only where
a vendor published its own engine's output under a permissive licence: Speechify (simba-english,
simba-3.2), Inworld (tts-1.5-mini), Smallest.ai Lightning and one ElevenLabs clip. Inworld TTS-1 /
TTS-1-Max, ElevenLabs v3 dialogue, ElevenLabs made by a third party, and Rime come measure-only.

Sources: benchmarks/data/wild_sources/commercial_tts_8.py and its .md. Rows keep their
repository's licence (``judge_lofo.FIT_OK``); measure-only rows are written ``measure-only (<the
repository's licence>)``. One repository and commit (smallest-inc/waves-examples @ 0ecb1e6) is in
both lists, with different files. The shared gatherer's caps apply (at most 14 source files per
system and repository; clips over 16 s cut into at most four 8 s pieces). Data gathering only: the
mirrors come from a development session's `fetch` tool, so this does not run in CI. The manifest it
wrote is kept in benchmarks/data/wild_manifest_8.csv.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gather_wild_corpus_5 import gather_commercial  # noqa: E402  (the options every commercial batch shares)
from gather_wild_corpus_6 import licence_of, sources  # noqa: E402  (same licence rule as the sixth batch)

RULES = "commercial_tts_8"


def main() -> int:
    gather_commercial(sources(RULES), "manifest_comm8.csv", licence_of)
    return 0


if __name__ == "__main__":
    sys.exit(main())
