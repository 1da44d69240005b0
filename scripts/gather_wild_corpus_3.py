"""Gather the third batch of wild sources (2026-12-04, issue 19: conversational speech of both
classes) into /work/exp/wild/manifest_conv.csv, beside the first two batches (left as they were).

Why: every fit-OK person in the corpus read a prompt, and every fit-OK machine read a sentence, so
a readout can learn "conversational = human"; the one conversational machine family
(commercial-neural-tts) is ranked above held-out people by every readout tried
(benchmarks/experiments/frame_lofo/README.md). This batch brings conversational and spontaneous
people (meetings, interviews, speeches) and conversational neural TTS (dialogue and podcast TTS).

Sources: benchmarks/data/wild_sources/conversational_human.py and conversational_tts.py, each rule
with its label and licence evidence in the .md beside it. Data gathering only, like the first two
batches: the mirrors come from a development session's `fetch` tool, so this does not run in CI.
The manifest it wrote is kept in benchmarks/data/wild_manifest_3.csv.

Licence per row: as in the second batch (scripts/gather_wild_corpus_2.py ``corpus_licence``): the
repository's, or a public corpus's own licence for a human recording the rule names as that
corpus's. Reserved sources and systems are refused; MegaTTS and Kokoro (sealed families) skipped.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gather_wild_corpus import gather  # noqa: E402  (the extraction loop every batch shares)
import gather_wild_corpus_2 as g2  # noqa: E402
from gather_wild_corpus_2 import CAP_PER_REPO, CORPUS_LICENCE, load  # noqa: E402

# the second batch's public corpora, plus this batch's (evidence: conversational_human.md)
CORPUS_LICENCE_3 = CORPUS_LICENCE + [
    (r"^AMI-meeting", "CC-BY-4.0", "AMI Meeting Corpus"),
    (r"^VoxConverse", "CC-BY-4.0", "VoxConverse"),
    (r"public-domain$", "public-domain", "US-government work"),
]


# Sources whose audio may be used to measure but not to fit, whatever the hosting repository's
# licence (decided 2026-12-04 after a reviewer's reading of the evidence; docs/corpus.md, third
# batch). (regex on the system name, licence recorded, why). Neither licence is in
# benchmarks/judge_lofo.py FIT_OK, so these rows are measure-only everywhere.
MEASURE_ONLY = [
    (r"^VoxConverse", "research-only",
     "VoxConverse recording: its README grants the data 'for research purposes' and the videos' copyright "
     "stays with their owners; measure only"),
    (r"^ChatTTS", "CC-BY-NC-4.0",
     "generated with ChatTTS (podcast_tts's default engine), whose weights are CC-BY-NC-4.0; the repository "
     "(MIT) does not name the engine it ran; measure only"),
]


def corpus_licence(src: dict, label: str, system: str) -> tuple[str, str]:
    """(licence, licence_note) of a row: a ``MEASURE_ONLY`` source's recorded licence first, else
    gather_wild_corpus_2.corpus_licence with this batch's corpora."""
    for pat, lic, why in MEASURE_ONLY:
        if re.search(pat, system):
            return lic, f"{why}; hosted in {src['repo']} ({src['licence']})"
    return g2.corpus_licence(src, label, system, CORPUS_LICENCE_3)


def main() -> int:
    gather(load("conversational_human") + load("conversational_tts"), "manifest_conv.csv", cap_per_repo=CAP_PER_REPO,
           skip_rx=r"(styletts|tortoise|vibevoice|megatts|kokoro|hibari)", min_duration_s=0.8, split_over_s=16,
           licence_of=corpus_licence)
    return 0


if __name__ == "__main__":
    sys.exit(main())
