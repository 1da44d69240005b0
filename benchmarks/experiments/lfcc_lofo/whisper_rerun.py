"""Re-run the v3 whisper head's LOFO from its cached embeddings ($LFCC_WHISPER_CACHE,
written by judge_lofo.py --cache), exactly as
judge_lofo.main does (fold_predict, l2 0.3, nested held-out-family Platt), keeping the per-dialogue
predictions so that they can be broken down by channel. Output: $LFCC_OUT/whisper_preds.npz"""
import os, sys, time
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder (common.py, lfcc.py)
import common
from common import JL, P

calls, meta, sealed, aug, key = common.setup()
X, G = common.whisper_features(key)
assert len(X) == len(meta)
y = np.array([1 if m["label"] == "human" else 0 for m in meta])
folds = list(P.outer_folds(meta, sealed, aug, common.GROUP_CHUNKS))
t0 = time.time()
fi, ti, ps = [], [], []
for k, fold in enumerate(folds):
    p = JL.fold_predict(X, G, y, meta, fold, sealed, common.SEED, 0.3, True, aug, common.GROUP_CHUNKS)
    fi.append(np.full(len(fold.test), k)); ti.append(fold.test); ps.append(p)
    print(f"fold {k+1}/{len(folds)} {fold.family}/{fold.group[:20]} auc {JL.roc_auc(p, y[fold.test]):.3f} ({time.time()-t0:.0f}s)", flush=True)
np.savez(common.WHISPER_PREDS, fold=np.concatenate(fi), idx=np.concatenate(ti), p=np.concatenate(ps),
         families=np.array([f.family for f in folds]), groups=np.array([f.group for f in folds]))
