"""LFCC-GMM (ASVspoof 2019/2021 baseline style, smaller): two diagonal-covariance GMMs (human,
machine), 64 components each (fixed up front; the ASVspoof baseline uses 512), on LFCC-60 frames of
the agent's speech frames; dialogue score = mean frame log-likelihood ratio. Per outer fold
(same folds as judge_lofo): GMMs fitted on the fit part of the training rows (judge_lofo.calib_split),
40k random frames per class, 25 EM iterations from random-frame initialisation; Platt on the calibration
split (judge_lofo --calibrate split: no nested held-out-family step, cost).
Usage: python gmm.py -> $LFCC_OUT/preds_gmm64_split.npz"""
import os, sys, time
import numpy as np
from scipy.special import logsumexp
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder (common.py, lfcc.py)
import common
from common import JL, P
from livejudge.judge.training.whisper_head import class_weights, fit_logistic

K, NF, IT = 64, 40000, 25
calls, meta, sealed, aug, key = common.setup()
FR = common.lfcc_frames(key)
y = np.array([1 if m["label"] == "human" else 0 for m in meta])


def loglik(Xf, w, mu, var):
    """(n, K) log w_k N(x | mu_k, diag var_k)."""
    iv = 1.0 / var
    ll = -0.5 * ((Xf ** 2) @ iv.T - 2 * Xf @ (mu * iv).T + (mu ** 2 * iv).sum(1)) - 0.5 * np.log(2 * np.pi * var).sum(1)
    return ll + np.log(w)


def fit_gmm(Xf, rng):
    mu = Xf[rng.choice(len(Xf), K, replace=False)].astype(np.float64)
    var = np.tile(Xf.var(0), (K, 1)) + 1e-3
    w = np.full(K, 1.0 / K)
    for _ in range(IT):
        ll = loglik(Xf, w, mu, var)
        r = np.exp(ll - logsumexp(ll, axis=1, keepdims=True))
        nk = r.sum(0) + 1e-6
        w = nk / nk.sum()
        mu = (r.T @ Xf) / nk[:, None]
        var = np.maximum((r.T @ Xf ** 2) / nk[:, None] - mu ** 2, 1e-3)
    return w, mu, var


def score(i, gh, gm, m, s):
    Xf = (FR[i] - m) / s
    return float(np.mean(logsumexp(loglik(Xf, *gh), axis=1) - logsumexp(loglik(Xf, *gm), axis=1)))


def fit_predict(train_idx, test_idx, seed):
    cal = JL.calib_split(meta, train_idx, seed)
    fit, cl = train_idx[~cal], train_idx[cal]
    rng = np.random.default_rng(seed)
    allf = np.concatenate([FR[i] for i in fit])
    m, s = allf.mean(0), allf.std(0) + 1e-6
    gs = []
    for lab in (1, 0):
        Xc = np.concatenate([FR[i] for i in fit if y[i] == lab]).astype(np.float64)
        Xc = (Xc[rng.choice(len(Xc), min(NF, len(Xc)), replace=False)] - m) / s
        gs.append(fit_gmm(Xc, rng))
    s_cl = np.array([score(i, *gs, m, s) for i in cl])
    ab, c = fit_logistic(s_cl[:, None], y[cl], 1e-4, class_weights(y[cl]))
    return JL.sigmoid(max(float(ab[0]), 1e-3) * np.array([score(i, *gs, m, s) for i in test_idx]) + c)


folds = list(P.outer_folds(meta, sealed, aug, common.GROUP_CHUNKS))
t0 = time.time()
fi, ti, ps = [], [], []
for k, fold in enumerate(folds):
    P.check_nested(meta, sealed, fold, np.array([], int))
    p = fit_predict(fold.train, fold.test, common.SEED)
    fi.append(np.full(len(fold.test), k)); ti.append(fold.test); ps.append(p)
    print(f"fold {k+1}/{len(folds)} {fold.family}/{fold.group[:20]} auc {JL.roc_auc(p, y[fold.test]):.3f} ({time.time()-t0:.0f}s)", flush=True)
np.savez(common.preds_path("gmm64_split"), fold=np.concatenate(fi), idx=np.concatenate(ti), p=np.concatenate(ps),
         families=np.array([f.family for f in folds]), groups=np.array([f.group for f in folds]))
