"""Light CNN over LFCC frames (LFCC-20 + deltas + delta-deltas of the agent's speech frames), LOFO.

Architecture (fixed up front, no tuning on outer test rows): input 60 x T (per-coefficient
standardised with the fold's training frames) -> Conv1d(60,32,k5) BN ReLU -> Conv1d(32,32,k5,dil 2)
BN ReLU -> Conv1d(32,32,k5,dil 4) BN ReLU -> mean+std pooling over time -> dropout 0.3 -> Linear(64,1).
Training: 12 epochs, Adam lr 1e-3, weight decay 1e-3, batch 32, random 3 s crops (300 frames), class-balanced
loss. Test: the whole dialogue's speech frames. Calibration: judge_lofo's split Platt only (the
nested held-out-family Platt would need ~27 inner CNN fits per outer fold: too costly on 2 CPU cores),
i.e. judge_lofo --calibrate split. Same outer folds, same calibration split (judge_lofo.calib_split).

Usage: python cnn.py [--seed N] [--folds a:b]   -> $LFCC_OUT/preds_cnn_split.npz (seed N>0: preds_cnn_sN_split.npz;
--folds: partial files cnn_part_a_b.npz)
"""
import argparse, os, sys, time
import numpy as np
import torch
import torch.nn as nn
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder (common.py, lfcc.py)
import common
from common import JL, P
from livejudge.judge.training.whisper_head import class_weights, fit_logistic

torch.set_num_threads(2)
ap = argparse.ArgumentParser()
ap.add_argument("--folds", default=None)
ap.add_argument("--epochs", type=int, default=12)
ap.add_argument("--seed", type=int, default=0, help="network init / crop seed (the calibration split stays judge_lofo's, seed 0)")
args = ap.parse_args()

calls, meta, sealed, aug, key = common.setup()
FR = common.lfcc_frames(key)
y = np.array([1 if m["label"] == "human" else 0 for m in meta])
CROP = 300


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        def blk(i, o, d):
            return nn.Sequential(nn.Conv1d(i, o, 5, dilation=d, padding=2 * d), nn.BatchNorm1d(o), nn.ReLU())
        self.f = nn.Sequential(blk(60, 32, 1), blk(32, 32, 2), blk(32, 32, 4))
        self.out = nn.Sequential(nn.Dropout(0.3), nn.Linear(64, 1))

    def forward(self, x, mask=None):
        h = self.f(x)
        if mask is None:
            mu, sd = h.mean(2), h.std(2)
        else:
            m = mask[:, None, :]
            n = m.sum(2).clamp(min=1)
            mu = (h * m).sum(2) / n
            sd = (((h - mu[:, :, None]) ** 2 * m).sum(2) / n).clamp(min=1e-6).sqrt()
        return self.out(torch.cat([mu, sd], 1))[:, 0]


def crop(x, rng):
    T = len(x)
    if T <= CROP:
        return np.pad(x, ((0, CROP - T), (0, 0)), mode="wrap")
    s = rng.integers(T - CROP + 1)
    return x[s:s + CROP]


def scores(net, idx, mu, sd):
    net.eval()
    out = []
    with torch.no_grad():
        for i in idx:
            x = torch.as_tensor(((FR[i] - mu) / sd).T[None])
            out.append(float(net(x)[0]))
    return np.array(out)


def fit_predict(train_idx, test_idx, seed):
    cal = JL.calib_split(meta, train_idx, seed)
    fit, cl = train_idx[~cal], train_idx[cal]
    allf = np.concatenate([FR[i] for i in fit])
    mu, sd = allf.mean(0), allf.std(0) + 1e-6
    torch.manual_seed(args.seed); rng = np.random.default_rng(args.seed)
    net = Net()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-3)
    w = class_weights(y[fit])
    for ep in range(args.epochs):
        net.train()
        perm = rng.permutation(len(fit))
        for b in range(0, len(perm), 32):
            ii = fit[perm[b:b + 32]]
            xb = torch.as_tensor(np.stack([((crop(FR[i], rng) - mu) / sd).T for i in ii]))
            yb = torch.as_tensor(y[ii], dtype=torch.float32)
            wb = torch.as_tensor(w[perm[b:b + 32]], dtype=torch.float32)
            loss = (wb * nn.functional.binary_cross_entropy_with_logits(net(xb), yb, reduction="none")).mean()
            opt.zero_grad(); loss.backward(); opt.step()
    s_cl = scores(net, cl, mu, sd)
    ab, c = fit_logistic(s_cl[:, None], y[cl], 1e-4, class_weights(y[cl]))
    a = max(float(ab[0]), 1e-3)
    return JL.sigmoid(a * scores(net, test_idx, mu, sd) + c)


folds = list(P.outer_folds(meta, sealed, aug, common.GROUP_CHUNKS))
a, b = (0, len(folds)) if args.folds is None else map(int, args.folds.split(":"))
t0 = time.time()
fi, ti, ps = [], [], []
for k in range(a, b):
    fold = folds[k]
    P.check_nested(meta, sealed, fold, np.array([], int))
    p = fit_predict(fold.train, fold.test, common.SEED)
    fi.append(np.full(len(fold.test), k)); ti.append(fold.test); ps.append(p)
    print(f"fold {k+1}/{len(folds)} {fold.family}/{fold.group[:20]} auc {JL.roc_auc(p, y[fold.test]):.3f} ({time.time()-t0:.0f}s)", flush=True)
out = (common.preds_path("cnn_split" if args.seed == 0 else f"cnn_s{args.seed}_split")) if args.folds is None else common.OUT / f"cnn_part_{a}_{b}.npz"
np.savez(out, fold=np.concatenate(fi), idx=np.concatenate(ti), p=np.concatenate(ps),
         families=np.array([f.family for f in folds]), groups=np.array([f.group for f in folds]))
