"""Diagnostic (issue 19; README.md of refit_v6, "v12"): the shipped head's frame readout at the user's unit
(``livejudge score`` defaults: live VAD turns, 30 s windows, mean over windows) against the same networks
over the dialogue's true agent turns (extract.py's energy rule), on OPEN rows only (licence in
``judge_lofo.FIT_OK``; no measure-only yardstick is read). Dialogues as ``judge_wild.py`` builds them.

Usage: python unit_gap.py MANIFEST.csv N [--telephone] [--json OUT]
Prints ROC-AUC of both units and the per-dialogue correlation of their log-odds.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import judge_wild as W  # noqa: E402
from judge_lofo import FIT_OK, logit, roc_auc  # noqa: E402


def main(argv=None) -> int:
    from livejudge.commands.cli import build_parser
    from livejudge.commands.runner import judge_config, judge_from_config, session_config
    from livejudge.judge.features.backbones.whisper_blocks import kept_frames
    from livejudge.session import Session, stream_call

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("manifest", type=Path)
    ap.add_argument("n", type=int, help="dialogues, half with a person as agent")
    ap.add_argument("--telephone", action="store_true")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    cli = build_parser().parse_args(["score", "call.wav"])
    judge = judge_from_config(judge_config(cli))
    if judge is None or judge.frame_readout is None:
        sys.exit("the default judge has no frame readout here: nothing to compare")
    config = session_config(cli, "every")
    fr = judge.frame_readout
    sealed = json.loads((Path(__file__).resolve().parents[3] / "benchmarks/results/sealed_split.json").read_text())
    skip = set(sealed["families"]) | set(sealed["groups"])
    rows = [r for r in W.read_manifest(a.manifest) if r.get("licence") in FIT_OK and r["family"] not in skip]
    plans = W.plan_dialogues([r for r in rows if W.has_speech(r["path"])], 20.0)
    random.Random(0).shuffle(plans)
    plans = [p for p in plans if p["label"] == "human"][: a.n // 2] + [p for p in plans if p["label"] == "machine"][: a.n // 2]
    out = []
    for i, plan in enumerate(plans):
        d = W.build(plan, i, 0, a.telephone, 4.0)
        s = Session(config, judge=judge, info={"sample_rate_in": d.call.sample_rate_in, "channels": d.call.channels, "kind": "score"})
        stream_call(s, d.call, speed=None)
        doc = s.close()
        live = [w["frame_readout"]["p_human"] for w in doc.get("judge") or [] if w.get("frame_readout")]
        x = d.call.agent.astype(np.float32)
        stats = [judge.backbone.frame_stats(seg)
                 for p in d.truth.placed if p.channel == "agent" and p.kind == "turn"
                 for seg in [x[int(p.onset_s * 16000):int(p.offset_s * 16000)]] if len(seg) >= 640]
        out.append({"label": plan["label"], "family": plan["family"], "live_windows": len(live),
                    "live": float(np.mean(live)) if live else None, "true_turns": fr.p_human(stats)})
    ok = [o for o in out if o["live"] is not None and o["true_turns"] is not None]
    y = [1 if o["label"] == "human" else 0 for o in ok]
    lv, tt = np.array([o["live"] for o in ok]), np.array([o["true_turns"] for o in ok])
    res = {"command": "python benchmarks/experiments/frame_lofo/unit_gap.py " + " ".join(argv or sys.argv[1:]),
           "dialogues": len(out), "with_both": len(ok), "auc_live": roc_auc(lv, y), "auc_true_turns": roc_auc(tt, y),
           "log_odds_correlation": float(np.corrcoef(logit(lv), logit(tt))[0, 1]), "rows": out}
    print({k: v for k, v in res.items() if k != "rows"})
    if a.json:
        a.json.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
