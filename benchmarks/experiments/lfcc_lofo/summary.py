"""Side-by-side per-family LOFO AUC (pooled over held-out groups) and pooled AUC for every model, + the v3 whisper re-run."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder (common.py, lfcc.py)
import common
from common import JL
calls, meta, sealed, aug, key = common.setup()
y = np.array([1 if m["label"] == "human" else 0 for m in meta])
chan = np.array([m["channel"] for m in meta])
TAGS = ["whisper_preds"] + ["preds_" + t for t in sys.argv[1:]]
cols = {}
for t in TAGS:
    z = np.load(common.OUT / f"{t}.npz")
    fams = z["families"]
    ff = fams[z["fold"]]
    r = {F: JL.roc_auc(z["p"][ff == F], y[z["idx"]][ff == F]) for F in sorted(set(fams))}
    r["POOLED"] = JL.roc_auc(z["p"], y[z["idx"]])
    r["mean over families"] = np.mean([v for k, v in r.items() if k != "POOLED"])
    for name, chs in (("clean (none, gain)", ("none", "6dB")), ("mulaw8k", ("mulaw8k",)),
                      ("gsm+codec2", ("gsm", "codec2-1300", "codec2-3200")), ("noise", ("noise",))):
        s = np.isin(chan[z["idx"]], chs)
        r["ch: " + name] = JL.roc_auc(z["p"][s], y[z["idx"]][s])
    cols[t.replace("preds_", "").replace("whisper_preds", "whisper-v3")] = r
names = list(cols)
print(f"{'AUC':24}" + "".join(f"{n[:16]:>17}" for n in names))
for k in cols[names[0]]:
    print(f"{k:24}" + "".join(f"{cols[n][k]:17.3f}" for n in names))
