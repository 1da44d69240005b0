"""Gather the second batch of wild sources (2026-12-03, issue 19: more neural families) into
/work/exp/wild/manifest_new.csv, beside the first batch (scripts/gather_wild_corpus.py,
manifest.csv: the corpus the sealed split was drawn on, left as it was).

Sources: benchmarks/data/wild_sources/demo_pages.py (paper demo pages) and project_samples.py
(TTS project sample folders), each rule with its label and licence evidence in the .md beside
it, plus the LJSpeech clips of coqui-ai/TTS's test data. Data gathering only, like the first
batch: the mirrors come from a development session's `fetch` tool, so this does not run in CI.
The manifest it wrote is kept in benchmarks/data/wild_manifest_2.csv.

Licence per row: the repository's licence, except a human recording the page identifies as a
clip of a public corpus, which keeps that corpus's licence wherever it is hosted
(LibriSpeech/LibriTTS/VCTK: CC-BY-4.0; LJSpeech: public domain; Common Voice: CC0-1.0); the
column licence_note says so. Measure-only sources (no licence, NC, ND, SA, AGPL, MPL) are never
fitted (benchmarks/judge_lofo.py FIT_OK). Reserved sources and systems are refused as in the
first batch, and MegaTTS and Kokoro (sealed families) are skipped.
"""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gather_wild_corpus import gather  # noqa: E402  (the extraction loop both batches share)

SOURCES_DIR = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "wild_sources"

CAP_PER_REPO = 128
EXTRA = [
    {"repo": "coqui-ai/TTS", "commit": "dbf1a08a0d4e47fdad6172e433eeb34bc6b13b4e", "licence": "MPL-2.0",
     "rules": [(r"^tests/data/ljspeech/wavs/LJ\d+-\d+\.wav$", "human", "human-read-audiobook", "ljspeech-gt(coqui-tests)", "LJ")]},
]
CORPUS_LICENCE = [  # (regex on the system name, licence of the recording, corpus)
    (r"ljspeech", "public-domain", "LJSpeech"),
    (r"libri-?tts", "CC-BY-4.0", "LibriTTS"),
    (r"librispeech", "CC-BY-4.0", "LibriSpeech"),
    (r"^vctk|vctk-gt|vctk-target|VCTK-GT", "CC-BY-4.0", "VCTK"),
    (r"commonvoice", "CC0-1.0", "Common Voice"),
]


def load(name: str, which: str = "SOURCES") -> list[dict]:
    """A rule file's ``SOURCES`` (or another list it defines, e.g. ``MEASURE_ONLY_SOURCES``)."""
    spec = importlib.util.spec_from_file_location(name, SOURCES_DIR / f"{name}.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return getattr(m, which)


def corpus_licence(src: dict, label: str, system: str, corpora=None) -> tuple[str, str]:
    """(licence, licence_note) of a row: the repository's, or a public corpus's own licence for a
    human recording the page identifies as that corpus's (module docstring). ``corpora``: the
    (pattern, licence, corpus) list, default ``CORPUS_LICENCE`` (a later batch passes its own)."""
    if label == "human":
        for pat, lic, corpus in (CORPUS_LICENCE if corpora is None else corpora):
            if re.search(pat, system, re.I):
                return lic, f"{corpus} recording ({lic}); hosted in {src['repo']} ({src['licence']})"
    return src["licence"], ""


def main() -> int:
    gather(load("demo_pages") + load("project_samples") + EXTRA, "manifest_new.csv", cap_per_repo=CAP_PER_REPO,
           skip_rx=r"(styletts|tortoise|vibevoice|megatts|kokoro)", min_duration_s=0.8, split_over_s=16,
           licence_of=corpus_licence)
    return 0


if __name__ == "__main__":
    sys.exit(main())
