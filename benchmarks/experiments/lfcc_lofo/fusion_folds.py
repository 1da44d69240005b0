"""Per-fold AUC of the fusion variants minus whisper alone (outer folds; descriptive only)."""
import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder (common.py, lfcc.py)
import numpy as np, common
from common import JL
calls, meta, sealed, aug, key = common.setup()
y = np.array([1 if m['label'] == 'human' else 0 for m in meta])
W = np.load(common.WHISPER_PREDS)
fam, grp = W['families'], W['groups']
def fa(z): return np.array([JL.roc_auc(z['p'][z['fold'] == k], y[z['idx'][z['fold'] == k]]) for k in range(30)])
w = fa(W); res = {}
for t in ('concat_l2_0.3', 'score_l2_0.3'):
    a = fa(np.load(common.preds_path(t))); d = a - w; res[t] = a
    print(f"{t}: per-fold AUC minus whisper: higher in {int((d > 0).sum())}/30 folds, mean {d.mean():+.3f}, median {np.median(d):+.3f}, min {d.min():+.3f}, max {d.max():+.3f}")
fw = np.load(common.preds_path('score_l2_0.3'))['fuser_weights']
print(f"fuser weight on LFCC log-odds: {fw[:,1].min():+.3f}..{fw[:,1].max():+.3f}, negative in {int((fw[:,1] < 0).sum())}/30 folds; on whisper log-odds {fw[:,0].min():.3f}..{fw[:,0].max():.3f}")
print(f"{'fold':48} {'whisper':>8} {'concat':>8} {'score':>8} {'w_wh':>6} {'w_lfcc':>7}")
for k in range(30):
    print(f"{fam[k] + '/' + grp[k][:24]:48} {w[k]:8.3f} {res['concat_l2_0.3'][k]:8.3f} {res['score_l2_0.3'][k]:8.3f} {fw[k,0]:6.3f} {fw[k,1]:+7.3f}")
