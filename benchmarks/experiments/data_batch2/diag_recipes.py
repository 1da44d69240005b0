"""Recipe variants on the v4 cache: per-family mean per-fold AUC (calibration-free, plain ridge
logistic on standardised features, class-balanced), same 42 LOFO folds. Diagnosis only."""
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from diag_subsets import G, P, X, aug, meta, roc_auc, sealed, y_all  # noqa: E402  (the v4 rows and cache)
from livejudge.judge.training.whisper_head import fit_logistic, class_weights
folds = list(P.outer_folds(meta, sealed, aug, 3))
y = y_all
def lofo(cols, l2, tag, gate=False):
    byf = defaultdict(list); allp=[]; ally=[]
    for f in folds:
        Xt = X[f.train][:, cols].astype(np.float64); mu = Xt.mean(0); sd = Xt.std(0) + 1e-6
        b, c = fit_logistic((Xt - mu) / sd, y[f.train], l2, class_weights(y[f.train]))
        t = ((X[f.test][:, cols] - mu) / sd) @ b + c
        byf[f.family].append(roc_auc(t, y[f.test]))
    res = {F: np.nanmean(v) for F, v in byf.items()}
    print(f"{tag:34} mean {np.nanmean(list(res.values())):.3f} min {min(res.values()):.3f} | " + " ".join(f"{F[:6]} {v:.2f}" for F, v in sorted(res.items())), flush=True)
A = list(range(36)); W = list(range(36, 1572)); WM = list(range(36, 36+384)); WS = list(range(36+384, 36+768))
for l2 in (0.3, 3.0, 30.0):
    lofo(A + W, l2, f"all, l2 {l2}")
lofo(A, 0.3, "acoustic only, l2 0.3")
lofo(W, 3.0, "whisper 4 moments only, l2 3")
lofo(WM + WS, 3.0, "whisper mean+sd only, l2 3")
lofo(WM, 3.0, "whisper mean only, l2 3")
lofo(A + WM + WS, 3.0, "acoustic + whisper mean+sd, l2 3")
