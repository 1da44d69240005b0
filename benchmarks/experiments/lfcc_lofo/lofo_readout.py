"""LOFO x leave-one-human-group-out for an LFCC-statistics logistic readout, under judge_lofo's protocol.

Folds: protocol.outer_folds(meta, sealed, aug_fams, group_chunks=3) over the v3 open dialogues (common.setup).
Per outer fold: judge_lofo.fold_predict with its fit_predict replaced by the LFCC readout below, so the
structure is judge_lofo's own: calibration split of ~25 % of the training speakers/voices
(judge_lofo.calib_split), standardisation fitted on the fit part of the TRAINING rows only, L2
logistic regression (whisper_head.fit_logistic, class-balanced), Platt on the calibration split, then
the nested held-out-family Platt fitted on inner-fold out-of-fold scores only (protocol.inner_folds,
check_nested). l2 fixed up front (0.3, judge_lofo's default) -- no tuning on outer test rows.

Usage: python lofo_readout.py FEATURE [--l2 0.3] [--tune [--grid a,b,..]] [--calibrate heldout|split] [--tag NAME]
  -> $LFCC_OUT/preds_<tag>.npz
  FEATURE: lfcc_stats | lfb_stats | lfcc+lfb | cnn:<file.npz with scores?> (see cnn.py)
"""
import os, argparse, json, sys, time
from collections import defaultdict
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder (common.py, lfcc.py)
import common
from common import JL, P
from livejudge.judge.training.whisper_head import class_weights, fit_logistic

ap = argparse.ArgumentParser()
ap.add_argument("feature")
ap.add_argument("--l2", type=float, default=0.3)
ap.add_argument("--tag", default=None)
ap.add_argument("--tune", action="store_true", help="choose l2 per outer fold on its inner folds (L2_GRID)")
ap.add_argument("--grid", default="0.003,0.03,0.3,3", help="l2 grid for --tune")
ap.add_argument("--calibrate", choices=("heldout", "split"), default="heldout")
args = ap.parse_args()
tag = args.tag or f"{args.feature}_l2_{'tuned' if args.tune else args.l2}" + ("" if args.calibrate == "heldout" else "_split")

calls, meta, sealed, aug, key = common.setup()
F = np.load(common.FEATS, allow_pickle=True)
assert str(F["key"]) == key and len(F["lfcc_stats"]) == len(meta)
if args.feature == "lfcc+lfb":
    X = np.concatenate([F["lfcc_stats"], F["lfb_stats"]], 1)
else:
    X = F[args.feature]
X = X.astype(np.float64)
y = np.array([1 if m["label"] == "human" else 0 for m in meta])
G = np.zeros((len(meta), 1), bool)  # unused (the whisper head's gates)


fit_predict = common.standardised_lr_fit_predict


JL.fit_predict = fit_predict  # fold_predict looks it up as a module global

L2_GRID = tuple(float(v) for v in args.grid.split(","))


def tuned_fold_predict(fold):
    """judge_lofo.fold_predict with l2 chosen on the inner folds (never on fold.test)."""
    oof = {l2: defaultdict(list) for l2 in L2_GRID}
    for inner in P.inner_folds(meta, fold, aug, common.GROUP_CHUNKS):
        if len(set(y[inner.train].tolist())) < 2 or len(inner.test) == 0:
            continue
        for l2 in L2_GRID:
            try:
                q, _ = fit_predict(X, G, y, meta, inner.train, inner.test, common.SEED, l2)
            except ValueError:
                continue
            for i, lo in zip(inner.test, JL.logit(q)):
                oof[l2][int(i)].append(float(lo))
    score = {}
    for l2 in L2_GRID:
        idx = np.array(sorted(oof[l2]), dtype=int)
        score[l2] = JL.roc_auc([np.mean(oof[l2][i]) for i in idx], y[idx])
    best = max(L2_GRID, key=lambda l2: score[l2])
    idx = np.array(sorted(oof[best]), dtype=int)
    P.check_nested(meta, sealed, fold, idx)
    p, _ = fit_predict(X, G, y, meta, fold.train, fold.test, common.SEED, best)
    s_oof = np.array([np.mean(oof[best][i]) for i in idx])
    ab, c0 = fit_logistic(s_oof[:, None], y[idx], 1e-4, class_weights(y[idx]))
    print(f"  {fold.family}/{fold.group[:20]}: inner AUC by l2 {({k: round(v, 3) for k, v in score.items()})} -> {best}", file=sys.stderr, flush=True)
    return JL.sigmoid(max(float(ab[0]), 1e-3) * JL.logit(p) + float(c0)), best


folds = list(P.outer_folds(meta, sealed, aug, common.GROUP_CHUNKS))
t0 = time.time()
fi, ti, ps, chosen = [], [], [], []
for k, fold in enumerate(folds):
    if args.tune:
        p, best = tuned_fold_predict(fold)
        chosen.append(best)
    else:
        p = JL.fold_predict(X, G, y, meta, fold, sealed, common.SEED, args.l2, args.calibrate == "heldout", aug, common.GROUP_CHUNKS)
    fi.append(np.full(len(fold.test), k)); ti.append(fold.test); ps.append(p)
print(f"{len(folds)} folds in {time.time() - t0:.0f} s", file=sys.stderr)
np.savez(common.preds_path(tag), fold=np.concatenate(fi), idx=np.concatenate(ti), p=np.concatenate(ps),
         families=np.array([f.family for f in folds]), groups=np.array([f.group for f in folds]), chosen_l2=np.array(chosen))
