"""Leave-one-family-out readouts of the Whisper tiny.en frames (the open dialogues and folds of $LFCC_MANIFESTS; round 1: v4, round 2: v5).

Models (fixed before any result; README.md):
  moments_lr  the shipped readout's encoder part: the four moments of the same frames (1536), standardised,
              class-weighted logistic regression at judge_lofo's l2 0.3 (lfcc_lofo common.standardised_lr_fit_predict)
  frame_cnn   PRIMARY: a light temporal CNN over the frames: input 384 x T (per-component standardised with
              the fold's fit frames) -> Conv1d(384,64,k3) BN ReLU -> Conv1d(64,64,k3,dil 2) BN ReLU ->
              Conv1d(64,64,k3,dil 4) BN ReLU -> mean+std pooling over time -> dropout 0.3 -> Linear(128,1)
              (receptive field 15 frames = 0.3 s on top of the encoder's own context)
  frame_k1    the same network with kernel 1 everywhere: no temporal context (ablation of the temporal part)
Training (both networks): 12 epochs, Adam lr 1e-3, weight decay 1e-3, batch 32, random crops of 150
frames (3 s), class-weighted loss; test: all of a dialogue's kept frames. Calibration for every model:
judge_lofo's split Platt (a calibration split of ~25 % of the training speakers/voices,
judge_lofo.calib_split); the nested held-out-family Platt would need an inner network per inner fold.

``--stage S`` (default 5, the last): which encoder stage's moments or frames (extract.py; frames are
stored for stages 1, 2 and 5 only); ``--stage -1`` (moments_lr only): the six stages' moments side by
side (9216 columns).

Usage: python lofo.py MODEL [--stage S] [--seed N] [--folds a:b] [--train-without NAMES]
       -> $FRAME_OUT/preds_<MODEL>[_stageS][_sN][_woK].npz
"""
import argparse
import dataclasses
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import temporal_cnn as cnn  # noqa: E402
import fl  # noqa: E402
from fl import JL, P  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("model", choices=("moments_lr", "frame_cnn", "frame_k1"))
ap.add_argument("--seed", type=int, default=0, help="network init and crop seed (the calibration split stays seed 0)")
ap.add_argument("--folds", default=None, metavar="A:B", help="only outer folds A..B-1 (partial file)")
ap.add_argument("--epochs", type=int, default=12)
ap.add_argument("--threads", type=int, default=2, help="torch threads (1 to run two models side by side)")
ap.add_argument("--stage", type=int, default=5, choices=range(-1, 6),
                help="encoder stage (default 5, the last; -1 with moments_lr: all six stages' moments side by side; "
                     "the networks need stored frames: stages 1, 2 and 5 only)")
ap.add_argument("--train-without", default="", metavar="NAMES",
                help="comma-separated machine families, human groups and speakers (a wild row's system) whose rows no fold "
                     "trains on (the test rows "
                     "stay): round 2's ablation of the third batch (README.md); adds _wo<N> to the tag")
args = ap.parse_args()

calls, meta, sealed, aug, key = fl.setup()
Z = np.load(fl.FEATS, allow_pickle=True)
if str(Z["key"]) != key or len(Z["frames"]) != len(meta):
    sys.exit(f"{fl.FEATS} was extracted for another corpus (key {Z['key']} vs {key}): run extract.py again")
y = np.array([1 if m["label"] == "human" else 0 for m in meta])


_FRAMES = []


def frames():
    """Per dialogue float16 (T_i, 384) frames of ``--stage`` (read once)."""
    if not _FRAMES:
        _FRAMES.append(Z["frames"] if args.stage == 5 else
                       np.load(fl.OUT / f"whisper_frames_l{args.stage}.npz", allow_pickle=True)["frames"])
    return _FRAMES[0]


def fit_predict_net(train_idx, test_idx, seed, k):
    import torch
    from livejudge.judge.training.whisper_head import class_weights, fit_logistic

    torch.set_num_threads(args.threads)
    if args.stage not in (1, 2, 5):
        sys.exit(f"--stage {args.stage}: frames are stored for stages 1, 2 and 5 only (extract.py KEEP)")
    FR = frames()
    cal = JL.calib_split(meta, train_idx, JL_SEED)
    fit, cl = train_idx[~cal], train_idx[cal]
    net, mu, sd = cnn.train(FR, y, fit, seed, k, args.epochs)
    s_cl = cnn.scores(net, mu, sd, [FR[i] for i in cl])
    ab, c = fit_logistic(s_cl[:, None], y[cl], 1e-4, class_weights(y[cl]))
    return JL.sigmoid(max(float(ab[0]), 1e-3) * cnn.scores(net, mu, sd, [FR[i] for i in test_idx]) + c)


JL_SEED = fl.common.SEED
folds = list(P.outer_folds(meta, sealed, aug, fl.common.GROUP_CHUNKS))
a, b = (0, len(folds)) if args.folds is None else map(int, args.folds.split(":"))
X = (Z["moments"].reshape(len(meta), -1) if args.stage == -1 else Z["moments"][:, args.stage]).astype(np.float64)
t0 = time.time()
fi, ti, ps = [], [], []
WITHOUT = {n for n in args.train_without.split(",") if n}
drop = np.array([bool({m["family"] if m["label"] == "machine" else m["group"], m["speaker"]} & WITHOUT) for m in meta])
if WITHOUT and not drop.any():
    sys.exit(f"--train-without {args.train_without}: no dialogue of those families or groups")
for k in range(a, b):
    fold = folds[k]
    P.check_nested(meta, sealed, fold, np.array([], int))  # training rows: no test, held-out or sealed row
    if WITHOUT:
        fold = dataclasses.replace(fold, train=fold.train[~drop[fold.train]])
    if args.model == "moments_lr":
        p, _ = fl.common.standardised_lr_fit_predict(X, None, y, meta, fold.train, fold.test, JL_SEED, 0.3)
    else:
        p = fit_predict_net(fold.train, fold.test, args.seed, 3 if args.model == "frame_cnn" else 1)
    fi.append(np.full(len(fold.test), k))
    ti.append(fold.test)
    ps.append(p)
    print(f"fold {k + 1}/{len(folds)} {fold.family}/{fold.group[:24]} auc {JL.roc_auc(p, y[fold.test]):.3f} "
          f"({time.time() - t0:.0f} s)", flush=True)
tag = args.model + ({5: "", -1: "_allstages"}.get(args.stage, f"_stage{args.stage}")) + (f"_s{args.seed}" if args.seed else "") \
    + (f"_wo{len(WITHOUT)}" if WITHOUT else "")
out = fl.preds_path(tag) if args.folds is None else fl.OUT / f"part_{tag}_{a}_{b}.npz"
np.savez(out, fold=np.concatenate(fi), idx=np.concatenate(ti), p=np.concatenate(ps), key=key,
         families=np.array([f.family for f in folds]), groups=np.array([f.group for f in folds]),
         seconds=time.time() - t0)
print(f"-> {out}")
