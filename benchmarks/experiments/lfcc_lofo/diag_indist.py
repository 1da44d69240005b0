"""DIAGNOSTIC ONLY (not the protocol): is the LFCC front end informative at all in-distribution?
Speaker/voice-grouped 5-fold CV over the OPEN dialogues (every family and group seen in training;
sealed rows are not in common.setup's output). Standardisation fitted on training rows, l2 0.3."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder (common.py, lfcc.py)
import common
from common import JL
from livejudge.judge.training.whisper_head import class_weights, fit_logistic
calls, meta, sealed, aug, key = common.setup()
F = np.load(common.FEATS, allow_pickle=True)
y = np.array([1 if m["label"] == "human" else 0 for m in meta])
spk = np.array([f"{m['label']}:{m['family']}:{m['speaker']}" for m in meta])
u = np.unique(spk); rng = np.random.default_rng(0); fold_of = dict(zip(u, rng.integers(5, size=len(u))))
fo = np.array([fold_of[s] for s in spk])
Wz = common.whisper_features(key)[0].astype(np.float64)
L2S = [float(a) for a in sys.argv[1:]] or [0.3]
for l2 in L2S:
 for name, X in (("lfcc_stats", F["lfcc_stats"]), ("lfb_stats", F["lfb_stats"]), ("whisper-X (v3 cache, plain LR)", Wz)) if l2 >= 0.01 else (("lfcc_stats", F["lfcc_stats"]), ("lfb_stats", F["lfb_stats"])):
     p = np.zeros(len(y))
     for k in range(5):
         tr, te = fo != k, fo == k
         mu, sd = X[tr].mean(0), X[tr].std(0); sd = np.where(sd > 1e-9, sd, 1)
         b, c = fit_logistic((X[tr] - mu) / sd, y[tr], l2, class_weights(y[tr]))
         p[te] = (X[te] - mu) / sd @ b + c
     print(f"l2 {l2:<6} {name:32} speaker-grouped 5-fold CV AUC {JL.roc_auc(p, y):.3f}")
