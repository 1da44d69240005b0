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

import csv
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from gather_wild_corpus import CAP_PER_SYSTEM, CLIPS, MIRROR, OUT, RESERVED, git, split_at_pauses, to_wav16k  # noqa: E402

SOURCES_DIR = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "wild_sources"

CAP_PER_REPO = 128
A = r"\.(?:wav|mp3|flac|ogg|m4a)$"
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
SKIP_SYSTEM = re.compile(r"megatts|styletts|tortoise|vibevoice|kokoro", re.I)


def load(name: str) -> list[dict]:
    spec = importlib.util.spec_from_file_location(name, SOURCES_DIR / f"{name}.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.SOURCES


def main() -> int:
    sources = load("demo_pages") + load("project_samples") + EXTRA
    rows, seen = [], set()
    for src in sources:
        repo = src["repo"]
        if repo.lower() in RESERVED:
            raise SystemExit(f"reserved source in the list: {repo}")
        gdir = MIRROR / repo.replace("/", "+") / "repo"
        commit = git(gdir, "rev-parse", src["commit"]).strip()
        paths = git(gdir, "ls-tree", "-r", "--name-only", commit).splitlines()
        n, per = 0, {}
        for path in sorted(paths):
            if re.search(r"(styletts|tortoise|vibevoice|megatts|kokoro)", path, re.I) or (repo, path) in seen:
                continue
            for rule in src["rules"]:
                rx, label, family, system, spk = rule[:5]
                m = re.search(rx, path)
                if not m:
                    continue
                if SKIP_SYSTEM.search(system) or SKIP_SYSTEM.search(rx):
                    break
                if n >= CAP_PER_REPO or per.get((family, system), 0) >= CAP_PER_SYSTEM:
                    break
                stem = re.sub(r"[^\w.-]+", "_", f"{repo.split('/')[0]}__{path}")[:150]
                dest = CLIPS / family / (Path(stem).with_suffix(".wav").name)
                try:
                    dur = to_wav16k(git(gdir, "show", f"{commit}:{path}", binary=True), dest)
                except subprocess.CalledProcessError as exc:
                    print(f"skip {repo}:{path}: {exc}", file=sys.stderr)
                    break
                if dur < 0.8:
                    dest.unlink()
                    break
                seen.add((repo, path))
                per[(family, system)] = per.get((family, system), 0) + 1
                lic, note = src["licence"], ""
                if label == "human":
                    for pat, corpus_lic, corpus in CORPUS_LICENCE:
                        if re.search(pat, system, re.I):
                            lic, note = corpus_lic, f"{corpus} recording ({corpus_lic}); hosted in {repo} ({src['licence']})"
                            break
                pieces = split_at_pauses(dest, 8, 4) if dur > 16 else [(dest, dur)]
                for piece, d in pieces:
                    rows.append({"path": str(piece), "label": label, "family": family, "system": system,
                                 "speaker": m.expand(spk), "duration_s": round(d, 3), "lang": "en", "repo": repo,
                                 "commit": commit, "source_path": path, "licence": lic, "licence_note": note})
                n += 1
                break
        print(f"{repo}: {n} clips", file=sys.stderr)
    with open(OUT / "manifest_new.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} clips -> {OUT / 'manifest_new.csv'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
