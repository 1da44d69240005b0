"""Shared setup of the frame-level whisper experiment (issue 19): the v4 LOFO configuration.

Uses ``benchmarks/experiments/lfcc_lofo/common.py`` (which replicates judge_lofo's row filtering,
dialogue building and sealed-split loading; it only reads the seal) with the v4 run's excluded
families (``benchmarks/results/judge_lofo_protocol_v4.json``, ``command``).

Configuration (environment):
  LFCC_MANIFESTS  colon-separated manifests in judge_lofo's order (v4: CORPUS/manifest.jsonl,
                  WILD/manifest.csv, WILD/manifest_new.csv); required
  FRAME_OUT       features and predictions (default .scratch/frame_lofo under the repo root)
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
os.environ["LFCC_OUT"] = os.environ.get("FRAME_OUT") or str(REPO / ".scratch" / "frame_lofo")
sys.path.insert(0, str(HERE.parent / "lfcc_lofo"))
import common  # noqa: E402  (lfcc_lofo/common.py: puts the repo and benchmarks/ on sys.path)
from common import JL, P  # noqa: E402,F401

EXCLUDE_V4 = ["copysyn-griffinlim", "copysyn-lpc", "copysyn-world", "codec-resynthesis", "pyannote-sample",
              "other-neural", "resynthesis", "voice-conversion"]
OUT = common.OUT
FEATS = OUT / "whisper_frames.npz"


def setup(build_audio: bool = False):
    """(calls, meta, sealed, aug_fams, key) of the v4 open dialogues (``common.setup``)."""
    return common.setup(build_audio=build_audio, exclude=EXCLUDE_V4)


def preds_path(tag: str) -> Path:
    return OUT / f"preds_{tag}.npz"
