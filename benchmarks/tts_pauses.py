"""How long one voice's pauses read between VAD segments: the evidence for
``TurnConfig.phrase_break_s`` (livejudge/timing/turns.py).

A TTS agent that talks on through a caller's barge-in pauses at its commas and sentence ends.
If it comes back after such a pause, timing must read the rest of its phrase as the same turn
(a slow yield), not as a yield and an agent backchannel. This measures the pauses a single
speaker leaves inside one clip, as the whole-call path sees them (front end and streaming VAD,
``timing.vad.detect_segments``, default ``VADConfig``): the gap from one segment's offset to the
next one's onset, seconds.

Run:
    HF_HUB_OFFLINE=1 python benchmarks/tts_pauses.py [FILE|GLOB|MANIFEST.csv ...] [--json OUT]
With no argument it reads the clips that ship with livejudge (``livejudge/data/audio``: espeak
and people). A CSV manifest needs a ``path`` column; its ``system`` (or ``family``) column groups
the rows. Each clip is padded with 0.5 s of silence before and 1 s after.
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import sys
from math import gcd
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
THRESHOLDS_S = (0.3, 0.4, 0.5, 0.6, 0.8)


def pauses_s(path: str | Path) -> list[float]:
    """The pauses between consecutive VAD segments of one clip (mono or the mean of its channels,
    any rate, resampled to 16 kHz), seconds."""
    import soundfile as sf
    from scipy.signal import resample_poly

    from livejudge.timing.vad import detect_segments

    x, rate = sf.read(str(path), dtype="float32", always_2d=True)
    x = x.mean(axis=1)
    if rate != 16000:
        g = gcd(int(rate), 16000)
        x = resample_poly(x, 16000 // g, int(rate) // g).astype(np.float32)
    x = np.concatenate([np.zeros(8000, np.float32), x, np.zeros(16000, np.float32)])
    s = detect_segments(x, "agent")
    return [b.onset_s - a.offset_s for a, b in zip(s, s[1:])]


def _groups(args: list[str]) -> dict[str, list[Path]]:
    if not args:
        base = ROOT / "livejudge" / "data" / "audio"
        return {"espeak (shipped)": sorted((base / "machine").glob("*.wav")),
                "people (shipped)": sorted((base / "human").glob("*.wav"))}
    out: dict[str, list[Path]] = {}
    for a in args:
        if a.endswith(".csv"):
            for row in csv.DictReader(open(a, newline="")):
                out.setdefault(row.get("system") or row.get("family") or Path(a).stem, []).append(Path(row["path"]))
        else:
            out.setdefault(a, []).extend(Path(p) for p in sorted(glob.glob(a)))
    return out


def _stats(v: list[float]) -> dict:
    a = np.asarray(v, dtype=np.float64)
    if not a.size:
        return {"n": 0}
    return {"n": int(a.size), "median_s": round(float(np.median(a)), 3),
            "p10_s": round(float(np.percentile(a, 10)), 3), "p90_s": round(float(np.percentile(a, 90)), 3),
            **{f"share_under_{t:g}_s": round(float(np.mean(a < t)), 3) for t in THRESHOLDS_S}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="*", help="audio files, globs, or CSV manifests with a 'path' column")
    p.add_argument("--json", default=None, metavar="OUT", help="write the figures as JSON")
    args = p.parse_args(argv)
    groups = _groups(args.inputs)
    if not any(groups.values()):
        print("tts_pauses: no audio files matched; give files, globs or a CSV manifest", file=sys.stderr)
        return 2
    rows, pooled = {}, []
    for name, paths in list(groups.items()) + [("all (pooled)", [])]:
        if name == "all (pooled)":
            if len(groups) < 2:
                break
            v, paths = pooled, [q for ps in groups.values() for q in ps]
        else:
            v = [g for path in paths for g in pauses_s(path)]
            pooled.extend(v)
        rows[name] = {"clips": len(paths), **_stats(v)}
        r = rows[name]
        if r["n"]:
            print(f"{name:32s} clips {len(paths):3d}  pauses {r['n']:3d}  median {r['median_s']:.2f} s  "
                  f"p10 {r['p10_s']:.2f}  p90 {r['p90_s']:.2f}  under 0.5 s: {r['share_under_0.5_s']:.0%}")
        else:
            print(f"{name:32s} clips {len(paths):3d}  pauses   0")
    if args.json:
        Path(args.json).write_text(json.dumps({"command": "python benchmarks/tts_pauses.py " + " ".join(args.inputs),
                                               "groups": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
