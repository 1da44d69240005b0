"""Build v11 (README.md, "v11: 0.2.0 ⊕ the stage-2 CNN"): the shipped 0.2.0 head's files, unchanged, plus
the frame readout exported from frame_lofo round 3's two networks (``wild.py train --seed 0/1``).

Usage: python make_v11.py OUT_DIR CHECKPOINT_S0.pt CHECKPOINT_S1.pt [--version V] [--base DIR]
                           [--extra-manifests CSV ...]

``--extra-manifests`` (v12, README.md): the networks were also trained on these manifests' open
rows (``frame_lofo/extra.py``); their sources are added to the config's list (those not already in
it: 0.2.0's linear head was fitted on some of them) and the readout's ``data`` says so.

``--base``: 0.2.0's folder (default: the shipped head's; once 0.3.0 ships, take 0.2.0's files from git:
``git show ea9737a:livejudge/judge/heads/whisper-fitted/config.json`` and ``weights.safetensors``).

The linear head's weights are copied byte for byte (their digest is checked against
``rule.SHIPPED_020``). The config keeps 0.2.0's sources (every row the networks were fitted on is
a row of 0.2.0's sources: round 2's open rows less VoxConverse and ChatTTS, made measure-only since)
and records the readout's training in ``training.frame_readout``. Its sealed validity and wild
caveat are cleared: they belong to 0.2.0 and are written again from this head's own runs.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rule  # noqa: E402

from livejudge.judge.model.judge import DEFAULT_WHISPER_HEAD  # noqa: E402
from livejudge.judge.training.blend import weights_digest  # noqa: E402
from livejudge.judge.training.frame_cnn import export  # noqa: E402


def clear_validity(training: dict) -> None:
    """Drop a base head's sealed validity and wild caveat from its config's ``training`` (they
    belong to the base head; a candidate's are written from its own runs), in place."""
    v = training.get("validity") or {}
    for k in ("summary", "sealed", "caveat", "caveat_source"):
        v.pop(k, None)
    v["summary"] = "not yet evaluated on the sealed split (benchmarks/judge_lofo.py --final --write-validity)"
    training["validity"] = v


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("checkpoints", nargs=2, type=Path)
    ap.add_argument("--version", default="2026-12-05-candidate-v11")
    ap.add_argument("--base", type=Path, default=DEFAULT_WHISPER_HEAD, help="0.2.0's head folder")
    ap.add_argument("--extra-manifests", type=Path, nargs="*", default=[],
                    help="manifests whose open rows the networks were also trained on (v12)")
    ap.add_argument("--rule", default="v11", help="the README.md section whose rule built this head")
    a = ap.parse_args(argv)
    base_cfg = json.loads((a.base / "config.json").read_text())
    if weights_digest(a.base) != rule.SHIPPED_020 or "frame_readout" in base_cfg:
        sys.exit(f"{a.base} is not 0.2.0 (weights digest differs, or it has a frame readout): pass --base with 0.2.0's files")
    a.out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(a.base / "weights.safetensors", a.out / "weights.safetensors")
    cks = [torch.load(p, weights_only=False) for p in a.checkpoints]
    section = export(cks, a.out, stage=2, weight=0.5)
    cfg = base_cfg
    cfg["version"] = a.version
    cfg["frame_readout"] = section
    cfg["notes"] = (f"{a.version}: 0.2.0 ({base_cfg.get('notes', '')}) with a frame readout beside it "
                    "(frame_cnn.safetensors: a temporal CNN over the Whisper encoder's block-2 frames), blended per "
                    "window in log-odds 0.5 each; livejudge/judge/heads/README.md")
    tr = cfg["training"]
    tr["method"] = ("0.2.0 (" + tr.get("method", "") + ") and a frame readout, a temporal CNN over the encoder's "
                    "block-2 frames (livejudge.judge.model.frame_cnn), blended per window: log-odds 0.5 each")
    tr["frame_readout"] = {
        "recipe": "benchmarks/experiments/frame_lofo (round 1's network, lofo.py docstring; round 2 picked the encoder's "
                  "block 2 on the LOFO table); trained once on every open row by wild.py train, seeds 0 and 1",
        "rows": {"open_dialogues": cks[0]["rows"], "fit": cks[0]["fit"], "calibration": cks[0]["calib"]},
        "data": "round 2's open dialogues (corpus + wild batches 1-3, git 896e6a9's third-batch manifest) less "
                "VoxConverse and ChatTTS (measure-only since e06f0fd): every one a row of this head's sources",
        "dialogue_key": cks[0].get("key") or cks[-1].get("key"),
        "rule": f"benchmarks/experiments/refit_v6/README.md, {a.rule}",
        "linear_head_weights_sha256_16": rule.SHIPPED_020,
    }
    if a.extra_manifests:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from judge_lofo import read_manifest

        rows = [r for m in a.extra_manifests for r in read_manifest(m) if r.get("fit") and (r.get("lang") or "en") == "en"]
        have = {s.split(": ", 1)[1] for s in cfg["sources"] if ": " in s}
        new = sorted({f"{r['family']}: {r['source']} ({r['licence']})" for r in rows} - {
            f"{r['family']}: {s}" for r in rows for s in have if s.startswith(r["source"] + " (")})
        cfg["sources"] = sorted(set(cfg["sources"]) | set(new))
        tr["frame_readout"]["data"] += (f"; plus the open English rows of {', '.join(m.name for m in a.extra_manifests)} "
                                        f"({len(rows)} rows, {cks[0].get('extra', '?')} dialogues; "
                                        f"{len(new)} sources not already listed for the linear head)")
        tr["frame_readout"]["recipe"] = tr["frame_readout"]["recipe"].replace("wild.py train", "extra.py train")
    clear_validity(tr)
    (a.out / "config.json").write_text(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n")
    print(f"-> {a.out}: 0.2.0's linear head + frame readout ({section['members']} networks, encoder block "
          f"{section['stage']}, weight {section['weight']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
