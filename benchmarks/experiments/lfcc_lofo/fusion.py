"""Whisper (v3 head features) + LFCC-60 utterance statistics, under judge_lofo's LOFO protocol.

PRE-DECLARED (written before any outer-fold result of either variant was computed; the whisper-alone and
LFCC-alone outer-fold results in RESULTS.md were already known). Both variants are run and reported; nothing
is tuned on outer test rows; l2 is fixed at 0.3 (judge_lofo's default), no other knob.

Rows and folds: common.setup() (the v3 open dialogues; the sealed split file is only read, sealed rows are
never in any fold), protocol.outer_folds(meta, sealed, aug_fams, group_chunks=3) -> 30 folds;
inner folds for nested calibration: protocol.inner_folds(meta, fold, aug_fams, 3), checked by
protocol.check_nested. Whisper features: X, G from $LFCC_WHISPER_CACHE/<key>.npz (as whisper_rerun.py).
LFCC features: feats.npz["lfcc_stats"] (LFCC-60 mean/std, 120 columns).

Variant 1 "concat"  (tag concat_l2_0.3):
  judge_lofo.fold_predict with fit_predict swapped for fit_predict_concat below, nested held-out-family
  Platt ON (fold_predict's own code). fit_whisper_head cannot take extra columns (its dimension_columns are
  fixed to the 1572 VECTOR_NAMES; columns beyond are zeroed by design()), so the fit replicates its
  arithmetic with extra columns appended: calibration split judge_lofo.calib_split; whisper block
  standardised on the fit part of the training rows (sd floor 1e-6) and passed through
  whisper_head.design (gates, encoder-column scaling, unread columns zeroed) exactly as fit_whisper_head;
  LFCC block standardised on the same fit rows (sd floor 1e-9, as lofo_readout.py); one class-weighted
  L2 logistic regression (whisper_head.fit_logistic, class_weights) at l2 0.3 on [whisper | LFCC];
  Platt on the calibration split (l2 1e-4, class-weighted, slope floored at 1e-3), then the nested
  held-out-family Platt. (The head's JudgeHead re-parametrisation is exact, so it is not rebuilt;
  `--check` verifies that the whisper-only path of this code reproduces judge_lofo.fit_predict on one fold.)

Variant 2 "score"  (tag score_l2_0.3):
  per outer fold, two base models fitted on fold.train, each as in its own experiment:
    whisper: judge_lofo.fit_predict (fit_whisper_head, l2 0.3, split Platt);
    LFCC:    lofo_readout.py's fit_predict (LFCC stats, class-weighted LR l2 0.3, split Platt).
  Their log-odds (logit of the split-Platt P(human)) on the outer test rows are combined by a logistic
  regression with 2 weights + bias (fit_logistic, l2 1e-4, class-weighted, same settings as judge_lofo's
  nested Platt) fitted ONLY on the inner folds' held-out log-odds of that outer fold's training rows
  (the same inner_folds as nested calibration; a row held out by several inner folds gets the mean of its
  log-odds, as fold_predict does; an inner fold is skipped only if either base model raises ValueError).
  This fuser takes the place of the nested held-out-family Platt step (it is fitted on the same
  held-out-family scores); no further Platt is applied on top.
  As by-products from the same loop the script also saves whisper-alone and LFCC-alone with their nested
  Platt (tags score_whisper_only, score_lfcc_only) -- these must reproduce whisper_preds.npz and
  preds_lfcc_stats_l2_0.3.npz (consistency check, not a new result) -- and the fuser weights per fold.

Primary comparison (declared): per held-out-family AUC, pooled AUC, mean/min of family AUCs,
acc@0.5, held-out people and channel breakdown, each variant vs whisper alone (report.py).
"Beats whisper alone" is read from pooled AUC and the mean and min of family AUCs together; per-family
differences of a few hundredths are within fold-to-fold noise (30 folds, 3 per family) and are reported
as such, no significance test is claimed.

Usage (from the repo root):  python benchmarks/experiments/lfcc_lofo/fusion.py concat|score [--check]
"""
import os, sys, time
from collections import defaultdict
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder (common.py, lfcc.py)
import common
from common import JL, P
from livejudge.judge.training.whisper_head import class_weights, design, dimension_columns, fit_logistic

variant = sys.argv[1]
assert variant in ("concat", "score")
CHECK = "--check" in sys.argv
L2 = 0.3

calls, meta, sealed, aug, key = common.setup()
Xw, G = common.whisper_features(key)
F = np.load(common.FEATS, allow_pickle=True)
assert str(F["key"]) == key and len(F["lfcc_stats"]) == len(meta) == len(Xw)
Xl = F["lfcc_stats"].astype(np.float64)
y = np.array([1 if m["label"] == "human" else 0 for m in meta])
NW = Xw.shape[1]
COLS = dimension_columns()
whisper_fit_predict = JL.fit_predict  # the original (fit_whisper_head)


def _platt(s_fit_rows, y_rows):
    ab, c = fit_logistic(s_fit_rows[:, None], y_rows, 1e-4, class_weights(y_rows))
    return max(float(ab[0]), 1e-3), float(c)


def fit_predict_concat(X, G, y, meta, train_idx, test_idx, seed, l2, use_lfcc=True):
    cal = JL.calib_split(meta, train_idx, seed)
    fit, cl = train_idx[~cal], train_idx[cal]
    for nm, rr in (("fit", fit), ("calibration", cl)):
        if len(set(y[rr].tolist())) < 2:
            raise ValueError(f"the {nm} split needs both classes")
    Xa = np.asarray(X[:, :NW], dtype=np.float64)
    Xb = np.asarray(X[:, NW:], dtype=np.float64)
    mw, sw = Xa[fit].mean(0), Xa[fit].std(0)
    sw = np.where(sw > 1e-6, sw, 1.0)
    ml, sl = Xb[fit].mean(0), Xb[fit].std(0)
    sl = np.where(sl > 1e-9, sl, 1.0)

    def H(r):
        hw = design(Xa[r], G[r], mw, sw, COLS)
        return np.concatenate([hw, (Xb[r] - ml) / sl], 1) if use_lfcc else hw

    beta, b0 = fit_logistic(H(fit), y[fit], l2, class_weights(y[fit]))
    a, c = _platt(H(cl) @ beta + b0, y[cl])
    return JL.sigmoid(a * (H(test_idx) @ beta + b0) + c), None


lfcc_fit_predict = common.standardised_lr_fit_predict  # lofo_readout.py's readout


folds = list(P.outer_folds(meta, sealed, aug, common.GROUP_CHUNKS))
assert len(folds) == 30, len(folds)

if CHECK:  # whisper-only path of fit_predict_concat == judge_lofo.fit_predict (one outer fold, no nesting)
    f0 = folds[0]
    pa, _ = whisper_fit_predict(Xw, G, y, meta, f0.train, f0.test, common.SEED, L2)
    pb, _ = fit_predict_concat(np.concatenate([Xw, Xl], 1), G, y, meta, f0.train, f0.test, common.SEED, L2, use_lfcc=False)
    d = np.abs(JL.logit(pa) - JL.logit(pb))
    print(f"check fold {f0.family}/{f0.group[:20]}: max |log-odds diff| {d.max():.2e}, AUC {JL.roc_auc(pa, y[f0.test]):.4f} vs {JL.roc_auc(pb, y[f0.test]):.4f}")
    sys.exit(0)

t0 = time.time()
out = defaultdict(list)  # tag -> list of p arrays
fi, ti, wts = [], [], []
if variant == "concat":
    Xc = np.concatenate([Xw.astype(np.float64), Xl], 1)
    JL.fit_predict = fit_predict_concat  # fold_predict looks it up as a module global
    for k, fold in enumerate(folds):
        p = JL.fold_predict(Xc, G, y, meta, fold, sealed, common.SEED, L2, True, aug, common.GROUP_CHUNKS)
        fi.append(np.full(len(fold.test), k)); ti.append(fold.test); out["concat_l2_0.3"].append(p)
        print(f"fold {k+1}/30 {fold.family}/{fold.group[:20]} ({time.time()-t0:.0f}s)", file=sys.stderr, flush=True)
else:
    for k, fold in enumerate(folds):
        pw, _ = whisper_fit_predict(Xw, G, y, meta, fold.train, fold.test, common.SEED, L2)
        pl, _ = lfcc_fit_predict(Xl, G, y, meta, fold.train, fold.test, common.SEED, L2)
        ow, ol = defaultdict(list), defaultdict(list)
        for inner in P.inner_folds(meta, fold, aug, common.GROUP_CHUNKS):
            if len(set(y[inner.train].tolist())) < 2 or len(inner.test) == 0:
                continue
            try:
                qw, _ = whisper_fit_predict(Xw, G, y, meta, inner.train, inner.test, common.SEED, L2)
                ql, _ = lfcc_fit_predict(Xl, G, y, meta, inner.train, inner.test, common.SEED, L2)
            except ValueError:
                continue
            for i, a_, b_ in zip(inner.test, JL.logit(qw), JL.logit(ql)):
                ow[int(i)].append(float(a_)); ol[int(i)].append(float(b_))
        idx = np.array(sorted(ow), dtype=int)
        P.check_nested(meta, sealed, fold, idx)
        assert len(idx) and len(set(y[idx].tolist())) == 2
        S = np.column_stack([[np.mean(ow[i]) for i in idx], [np.mean(ol[i]) for i in idx]])
        St = np.column_stack([JL.logit(pw), JL.logit(pl)])
        w, c = fit_logistic(S, y[idx], 1e-4, class_weights(y[idx]))
        out["score_l2_0.3"].append(JL.sigmoid(St @ w + c))
        for j, tag in ((0, "score_whisper_only"), (1, "score_lfcc_only")):  # nested Platt per model (consistency)
            a, c1 = _platt(S[:, j], y[idx])
            out[tag].append(JL.sigmoid(a * St[:, j] + c1))
        wts.append([w[0], w[1], c])
        fi.append(np.full(len(fold.test), k)); ti.append(fold.test)
        print(f"fold {k+1}/30 {fold.family}/{fold.group[:20]} fuser w_whisper {w[0]:.3f} w_lfcc {w[1]:.3f} b {c:.3f} "
              f"inner-oof AUC fused/whisper/lfcc {JL.roc_auc(S @ w + c, y[idx]):.3f}/{JL.roc_auc(S[:, 0], y[idx]):.3f}/{JL.roc_auc(S[:, 1], y[idx]):.3f} "
              f"({time.time()-t0:.0f}s)", file=sys.stderr, flush=True)
print(f"{variant}: 30 folds in {time.time() - t0:.0f} s", file=sys.stderr)
for tag, ps in out.items():
    np.savez(common.preds_path(tag), fold=np.concatenate(fi), idx=np.concatenate(ti), p=np.concatenate(ps),
             families=np.array([f.family for f in folds]), groups=np.array([f.group for f in folds]),
             fuser_weights=np.array(wts))
