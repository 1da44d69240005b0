"""DIAGNOSTIC: spectral tilt/bandwidth of the agent channel per family / human group (open rows only,
clean channel 'none'): mean log energy (dB) of 4-7.5 kHz minus 0.3-3.4 kHz, from lfb_stats; and the
single-feature AUC (human vs machine) of that number. Explains what a spectral front end can key on."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder (common.py, lfcc.py)
import common
from common import JL
calls, meta, sealed, aug, key = common.setup()
F = np.load(common.FEATS, allow_pickle=True)
B = F["lfb_stats"][:, :60] * 10 / np.log(10)
cen = (np.arange(60) + 1) * 8000 / 61
hi = B[:, (cen > 4000) & (cen < 7500)].mean(1) - B[:, (cen > 300) & (cen < 3400)].mean(1)
y = np.array([m["label"] == "human" for m in meta])
ch = np.array([m["channel"] for m in meta])
grp = np.array([m["family"] if m["label"] == "machine" else "H:" + m["family"] for m in meta])
print("single-feature AUC of (4-7.5k minus 0.3-3.4k dB), all open dialogues:", round(JL.roc_auc(hi, y), 3),
      " clean only:", round(JL.roc_auc(hi[ch == "none"], y[ch == "none"]), 3))
for g in sorted(set(grp)):
    s = (grp == g) & (ch == "none")
    if s.any():
        print(f"  {g:28} n={s.sum():3d} hi-minus-speechband {np.median(hi[s]):7.1f} dB (IQR {np.percentile(hi[s], 25):6.1f}..{np.percentile(hi[s], 75):6.1f})")
