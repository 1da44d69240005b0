"""Run from the repo root after the judge_lofo.py run of README.md (it fills LOFO_CACHE).

Diagnosis of the v4 LOFO drop: per-family mean per-fold AUC (calibration-free, no nesting) on
subsets of the v4 open dialogues, from the v4 whisper-feature cache."""
import csv, hashlib, os, sys
from collections import defaultdict
from pathlib import Path
import numpy as np
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
CORPUS = os.environ.get("CORPUS_MANIFEST", "/work/corpus/manifest.jsonl")
WILD = os.environ.get("WILD_DIR", "/work/exp/wild")
CACHE = os.environ.get("LOFO_CACHE", "/work/exp/v4/cache")
import judge_lofo as JL
from livejudge.judge.training import protocol as P
from livejudge.judge.training.evaluate import roc_auc

M = [Path(CORPUS), Path(WILD) / "manifest.csv", Path(WILD) / "manifest_new.csv"]
EXC = ["copysyn-griffinlim", "copysyn-lpc", "copysyn-world", "codec-resynthesis", "pyannote-sample", "other-neural", "resynthesis", "voice-conversion"]
rows = [r for m in M for r in JL.read_manifest(m)]
rows = [r for r in rows if r.get("fit", True) and (r.get("lang") or "en") == "en" and r["family"] not in EXC]
aug = sorted({r["family"] for r in rows if r["label"] == "machine"} - {r["family"] for r in rows if r["label"] == "machine" and r.get("augment") in (None, "", "none")})
key = hashlib.sha256(("".join(m.read_text() for m in M) + f"3/0/4/12/3/60/family/en/{sorted(EXC)}/v6").encode()).hexdigest()[:16]
z = np.load(f"{CACHE}/{key}.npz"); X, G = z["X"], z["G"]
calls = JL.build_calls(rows, 0, 4, 12, 3, 60, "family", dry=True)
meta = [m for _, m in calls]
sealed = P.load_sealed("benchmarks/results/sealed_split.json")
sa = {(m["label"], m["family"], m["speaker"]) for m in meta if sealed.is_sealed(m)}
rows_open = [r for r in rows if (r["label"], r["family"], r["speaker"]) not in sa]
calls = JL.build_calls(rows_open, 0, 4, 12, 3, 60, "family", dry=True)
meta = [m for _, m in calls]
assert len(meta) == len(X), (len(meta), len(X))
new = list(csv.DictReader(open(M[2])))
old_sys = {r["system"] for m in M[1:2] for r in csv.DictReader(open(m))} | {r.get("speaker") for r in JL.read_manifest(M[0])}
new_h = {r["system"] for r in new if r["label"] == "human"} - old_sys
new_m = {r["system"] for r in new if r["label"] == "machine"} - old_sys
lj_m = {r["system"] for r in new if r["label"] == "machine" and r["speaker"] == "LJ"}
lj_h = {r["system"] for r in new if r["label"] == "human" and "lj" in r["system"].lower()}
y_all = np.array([1 if m["label"] == "human" else 0 for m in meta])

def run(keep, tag):
    idx = np.flatnonzero(keep)
    mt = [meta[i] for i in idx]; Xs, Gs, ys = X[idx], G[idx], y_all[idx]
    folds = list(P.outer_folds(mt, sealed, aug, 3))
    byf = defaultdict(list); byg = defaultdict(list)
    for f in folds:
        p, _ = JL.fit_predict(Xs, Gs, ys, mt, f.train, f.test, 0, 0.3)
        byf[f.family].append(roc_auc(p, ys[f.test]))
        byg[f.group].append(p[ys[f.test] == 1].mean())
    res = {F: np.nanmean(v) for F, v in byf.items()}
    print(f"\n== {tag}: {len(idx)} dialogues, {len(folds)} folds; mean over families {np.nanmean(list(res.values())):.3f}")
    print("  " + "  ".join(f"{F[:14]} {v:.2f}" for F, v in sorted(res.items())))
    print("  people P(h) by held-out chunk: " + "; ".join(f"{g[:25]} {np.mean(v):.2f}" for g, v in byg.items()))
    return res

sp = np.array([m["speaker"] for m in meta])

if __name__ == "__main__":
    run(np.ones(len(meta), bool), "A all v4")
    run(~np.isin(sp, list(new_h)), "B v4 without the new human systems")
    run(~np.isin(sp, list(lj_m)), "C v4 without LJ-voice machine systems")
    run(~np.isin(sp, list(new_m)), "D v4 without the new machine systems")
    run(~np.isin(sp, list(new_m | new_h)), "E v4 without any new system (about v3)")
