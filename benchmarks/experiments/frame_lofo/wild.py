"""Round 3 (README.md): the stage-2 CNN, trained once on the open rows, against the shipped 0.2.0 on
the four measure-only yardsticks (issue 19).

    wild.py extract   rebuild every dialogue of the four stored 0.2.0 runs (``judge_wild.build``:
                      same plan, index, seed and condition; the stored duration is checked) and keep
                      the stage-2 frames of its true agent turns (extract.py's energy rule)
                      -> $FRAME_OUT/wild_l2.npz
    wild.py train --seed S   the CNN on round 2's open rows less those made measure-only since
                      (VoxConverse, ChatTTS), split Platt -> $FRAME_OUT/wild_cnn2_sS.pt
    wild.py score     the rule's 8 readouts for 0.2.0, the CNN (seed mean) and the exploratory
                      log-odds mean -> stdout and --json

Environment as ``lofo.py`` (round 2: LFCC_MANIFESTS with the round-2 third-batch manifest, git
896e6a9, and FRAME_OUT=.scratch/frame_lofo_r2).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fl  # noqa: E402  (puts the repo and benchmarks/ on sys.path)

REPO = fl.REPO
RESULTS = REPO / "benchmarks" / "results"
YARDSTICKS = {  # name -> stored 0.2.0 run (README.md, round 3)
    "Y1 R3 sources": "judge_wild_measure_only_batch4_v9blend.json",
    "Y2 fifth batch": "judge_wild_measure_only_batch5_v9blend.json",
    "Y3 Azure": "judge_wild_measure_only_batch7_shipped020.json",
    "Y4 eighth batch": "judge_wild_measure_only_batch8_shipped020.json",
}
NOW_MEASURE_ONLY = {"VoxConverse", "ChatTTS"}  # speakers made measure-only after round 2 (git e06f0fd)
SR = 16000
WILD = fl.OUT / "wild_l2.npz"


def _key(cond: str, i: int, clips: list[str]) -> str:
    return f"{cond}|{i}|" + "|".join(clips)


def extract() -> None:
    import torch

    import judge_wild as W
    import layers

    torch.set_num_threads(2)
    enc = layers.Encoder()
    out: dict[str, np.ndarray] = {}
    t0, n_audio = time.time(), 0.0
    for name, fn in YARDSTICKS.items():
        res = json.loads((RESULTS / fn).read_text())
        for cond, c in res["conditions"].items():
            telephone, mp3 = W.parse_condition(cond)
            for i, d in enumerate(c["dialogues"]):
                k = _key(cond, i, d["clips"])
                if k in out:
                    continue
                dia = W.build({"clips": [{"path": p} for p in d["clips"]]}, i, res["seed"], telephone,
                              res["user_max_s"], mp3)
                dur = round(len(dia.call.user) / SR, 1)
                if abs(dur - d["duration_s"]) > 0.05:
                    sys.exit(f"{fn} {cond} dialogue {i}: rebuilt {dur} s, stored {d['duration_s']} s: not the same dialogue")
                out[k], secs = layers.dialogue_stage2(enc, dia, SR)
                n_audio += secs
                if len(out) % 50 == 0:
                    print(f"{len(out)} dialogues, {n_audio:.0f} s agent speech, {time.time() - t0:.0f} s", flush=True)
    keys = sorted(out)
    fr = np.empty(len(keys), object)
    fr[:] = [out[k] for k in keys]
    np.savez(WILD, keys=np.array(keys), frames=fr, seconds=time.time() - t0, audio_s=n_audio)
    print(f"-> {WILD}: {len(keys)} dialogues, {n_audio:.0f} s agent speech, {time.time() - t0:.0f} s")


def train(seed: int) -> None:
    import torch

    import temporal_cnn as cnn
    from livejudge.judge.training.whisper_head import class_weights, fit_logistic

    torch.set_num_threads(2)
    calls, meta, sealed, aug, key = fl.setup()
    Z = np.load(fl.OUT / "whisper_frames_l2.npz", allow_pickle=True)
    if str(Z["key"]) != key or len(Z["frames"]) != len(meta):
        sys.exit(f"stage-2 frames were extracted for another corpus (key {Z['key']} vs {key}): set LFCC_MANIFESTS as round 2")
    FR = Z["frames"]
    y = np.array([1 if m["label"] == "human" else 0 for m in meta])
    rows = np.array([i for i, m in enumerate(meta) if m["speaker"] not in NOW_MEASURE_ONLY])
    cal = fl.JL.calib_split(meta, rows, fl.common.SEED)
    fit, cl = rows[~cal], rows[cal]
    t0 = time.time()
    net, mu, sd = cnn.train(FR, y, fit, seed)
    s_cl = cnn.scores(net, mu, sd, [FR[i] for i in cl])
    ab, c = fit_logistic(s_cl[:, None], y[cl], 1e-4, class_weights(y[cl]))
    path = fl.OUT / f"wild_cnn2_s{seed}.pt"
    torch.save({"state": net.state_dict(), "mu": mu, "sd": sd, "a": max(float(ab[0]), 1e-3), "c": float(c),
                "rows": len(rows), "fit": len(fit), "calib": len(cl), "key": key, "seconds": time.time() - t0}, path)
    print(f"-> {path}: {len(rows)} rows ({len(fit)} fit, {len(cl)} calibration), {time.time() - t0:.0f} s")


def score(json_out: Path | None) -> int:
    import torch

    import temporal_cnn as cnn
    from refit_v6 import rule  # noqa: F401  (benchmarks/experiments on sys.path below)

    Z = np.load(WILD, allow_pickle=True)
    frames = dict(zip(Z["keys"].tolist(), Z["frames"]))
    seeds = sorted(fl.OUT.glob("wild_cnn2_s*.pt"))
    if len(seeds) < 2:
        sys.exit("train seeds 0 and 1 first (wild.py train --seed N)")
    P = []
    keys = list(frames)
    for path in seeds:
        m = torch.load(path, weights_only=False)
        net = cnn.make_net(3)
        net.load_state_dict(m["state"])
        s = cnn.scores(net, m["mu"], m["sd"], [frames[k] for k in keys])
        P.append(dict(zip(keys, fl.JL.sigmoid(m["a"] * s + m["c"]))))
    with (REPO / "benchmarks" / "data" / "wild_manifest_8.csv").open() as f:
        b8 = {r["path"] for r in csv.DictReader(f) if r["label"] == "machine" and r["licence"] not in fl.JL.FIT_OK}
    cmp = rule._compare()
    readers = {"Y1 R3 sources": _pooled,
               "Y2 fifth batch": rule.fifth_batch_auc, "Y3 Azure": rule.seventh_batch_auc,
               "Y4 eighth batch": lambda r, c: cmp.pooled_auc(r, c, b8)}
    table, out = [], {"command": "python benchmarks/experiments/frame_lofo/wild.py score", "readouts": {}}
    for name, fn in YARDSTICKS.items():
        res = json.loads((RESULTS / fn).read_text())
        for cond in rule.CONDITIONS:
            ds = res["conditions"][cond]["dialogues"]
            ks = [_key(cond, i, d["clips"]) for i, d in enumerate(ds)]
            variants = {"0.2.0": [d["p"] for d in ds]}
            for j, p in enumerate(P):
                variants[f"cnn s{j}"] = [float(p[k]) for k in ks]
            mean_cnn = np.mean([[p[k] for k in ks] for p in P], 0)
            variants["log-odds mean"] = [None if d["p"] is None else float(fl.JL.sigmoid((fl.JL.logit(d["p"]) + fl.JL.logit(c)) / 2))
                                         for d, c in zip(ds, mean_cnn)]
            row = {}
            for v, ps in variants.items():
                r = {"seed": res["seed"],
                     "conditions": {cond: {"dialogues": [d | {"p": p} for d, p in zip(ds, ps)]}}}
                row[v] = float(readers[name](r, cond))
                hum = [p for d, p in zip(ds, ps) if d["label"] == "human" and p is not None]
                mac = [p for d, p in zip(ds, ps) if d["label"] == "machine" and p is not None]
                row[v + " P(h) people/machines"] = (round(float(np.mean(hum)), 3), round(float(np.mean(mac)), 3))
            row["cnn (seed mean)"] = float(np.mean([row[f"cnn s{j}"] for j in range(len(P))]))
            out["readouts"][f"{name}, {cond}"] = row
            table.append((f"{name}, {cond}", row))
    print(f"{'readout':32} {'0.2.0':>7} {'cnn s0':>7} {'cnn s1':>7} {'cnn mean':>8} {'log-odds':>8}")
    for name, r in table:
        print(f"{name:32} {r['0.2.0']:7.3f} {r['cnn s0']:7.3f} {r['cnn s1']:7.3f} {r['cnn (seed mean)']:8.3f} {r['log-odds mean']:8.3f}")
    for v in ("cnn (seed mean)", "log-odds mean"):
        diffs = [r[v] - r["0.2.0"] for _, r in table]
        ok = all(d >= 0 for d in diffs) and float(np.mean(diffs)) >= 0.03
        print(f"rule, {v}: worst {min(diffs):+.3f}, mean {np.mean(diffs):+.3f} -> {'MET' if ok else 'not met'}"
              + (" (exploratory, not a candidate)" if v != "cnn (seed mean)" else ""))
        out[f"rule {v}"] = {"worst": min(diffs), "mean": float(np.mean(diffs)), "met": ok}
    print("P(h) people / machines (wideband, Y1):",
          {v: table[0][1][v + " P(h) people/machines"] for v in ("0.2.0", "cnn s0", "cnn s1", "log-odds mean")})
    if json_out:
        json_out.write_text(json.dumps(out, indent=1))
        print(f"-> {json_out}")
    return 0


def _pooled(r, cond):
    """judge_wild's pooled ROC-AUC (machines vs people, re-synthesis left out) of a run's dialogues."""
    from judge_wild import RESYNTH
    from livejudge.judge.training.evaluate import roc_auc

    ds = [d for d in r["conditions"][cond]["dialogues"] if d["p"] is not None and d["family"] not in RESYNTH]
    return roc_auc([d["p"] for d in ds], [1 if d["label"] == "human" else 0 for d in ds])


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("step", choices=("extract", "train", "score"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    {"extract": extract, "train": lambda: train(a.seed), "score": lambda: score(a.json)}[a.step]()
