"""Tables in judge_lofo's shape from saved per-dialogue outer-fold predictions (preds_*.npz), with the
v3 whisper head's figures (whisper_preds.npz, re-run from the v3 cache) next to them, and a
breakdown by meta['channel'].  Usage: python report.py TAG [TAG...]
(reads $LFCC_OUT/preds_<TAG>.npz and whisper_preds.npz; writes $LFCC_OUT/report_<TAGs>.json)"""
import os, json, sys
from collections import defaultdict
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder (common.py, lfcc.py)
import common
from common import JL

calls, meta, sealed, aug, key = common.setup()
y = np.array([1 if m["label"] == "human" else 0 for m in meta])
chan = np.array([m["channel"] for m in meta])
CH_GROUP = {"none": "clean", "6dB": "clean", "mulaw8k": "telephone(mulaw8k)", "gsm": "codec(gsm/codec2)",
            "codec2-1300": "codec(gsm/codec2)", "codec2-3200": "codec(gsm/codec2)", "noise": "noise"}


def load(path):
    z = np.load(path)
    fams, grps = list(z["families"]), list(z["groups"])
    by_f, by_g = defaultdict(list), defaultdict(list)
    for k in range(len(fams)):
        s = z["fold"] == k
        idx, p = z["idx"][s], z["p"][s]
        by_f[fams[k]].append((idx, p))
        by_g[grps[k]].append((idx, p))
    return by_f, by_g


def tables(by_f, by_g):
    lofo, loso = {}, {}
    for F_ in sorted(by_f):
        idx = np.concatenate([a for a, _ in by_f[F_]]); p = np.concatenate([b for _, b in by_f[F_]])
        s = JL.summary(p, y[idx])
        fa = [JL.roc_auc(b, y[a]) for a, b in by_f[F_]]
        s["fold_auc_mean"], s["fold_auc_min"] = float(np.nanmean(fa)), float(np.nanmin(fa))
        lofo[F_] = s
    for g in sorted(by_g):
        ph = np.concatenate([b[y[a] == 1] for a, b in by_g[g]])
        loso[g] = {"n": int(len(ph)), "acc": float((ph >= 0.5).mean()), "p_human": float(ph.mean())}
    allidx = np.concatenate([a for v in by_f.values() for a, _ in v])
    allp = np.concatenate([b for v in by_f.values() for _, b in v])
    return lofo, loso, allidx, allp


def chan_table(by_f, allidx, allp, key_fn):
    out = {}
    cg = np.array([key_fn(c) for c in chan])
    for c in sorted(set(cg)):
        s = cg[allidx] == c
        r = JL.summary(allp[s], y[allidx][s])
        fa = []
        for F_, v in by_f.items():
            idx = np.concatenate([a for a, _ in v]); p = np.concatenate([b for _, b in v])
            m = cg[idx] == c
            fa.append(JL.roc_auc(p[m], y[idx][m]))
        r["mean_family_auc"] = float(np.nanmean(fa))
        r["min_family_auc"] = float(np.nanmin(fa))
        r["n_dlg_h"] = int(((cg == c) & (y == 1)).sum()); r["n_dlg_m"] = int(((cg == c) & (y == 0)).sum())
        out[c] = r
    return out


W = tables(*load(common.WHISPER_PREDS))
W_by_f, _ = load(common.WHISPER_PREDS)
res = {}
for tag in sys.argv[1:]:
    by_f, by_g = load(common.preds_path(tag))
    lofo, loso, allidx, allp = tables(by_f, by_g)
    cal = "split Platt only (judge_lofo --calibrate split)" if tag.endswith("_split") else "nested held-out-family Platt"
    print(f"\n=== {tag}  (LOFO x leave-one-human-group-out, 30 folds, calibration {cal}) vs v3 whisper head (nested held-out-family Platt)")
    print(f"{'held-out family':22} {'AUC':>6} {'acc@0.5':>8} {'P(h) hum':>9} {'P(h) mach':>10} {'fold AUC mean/min':>18} |"
          f" {'whisper AUC':>11} {'acc':>6} {'P(h)h':>6} {'P(h)m':>6}")
    for F_ in lofo:
        s, w = lofo[F_], W[0][F_]
        print(f"{F_:22} {s['auc']:6.3f} {s['acc']:8.3f} {s['p_human_h']:9.3f} {s['p_human_m']:10.3f} "
              f"{s['fold_auc_mean']:11.3f}/{s['fold_auc_min']:.3f} | {w['auc']:11.3f} {w['acc']:6.3f} {w['p_human_h']:6.3f} {w['p_human_m']:6.3f}")
    pa = JL.roc_auc(allp, y[allidx]); wpa = JL.roc_auc(W[3], y[W[2]])
    ma = np.mean([s["auc"] for s in lofo.values()]); wma = np.mean([s["auc"] for s in W[0].values()])
    mn = min(s["auc"] for s in lofo.values()); wmn = min(s["auc"] for s in W[0].values())
    print(f"{'pooled (all folds)':22} {pa:6.3f}   [mean of family AUCs {ma:.3f}, min {mn:.3f}] | "
          f"whisper pooled {wpa:.3f} [mean {wma:.3f}, min {wmn:.3f}]")
    print("held-out people (each group's dialogues over every fold that tests it)            | whisper")
    for g in loso:
        s, w = loso[g], W[1][g]
        print(f"  {g[:70]:70} n={s['n']:4d} acc@0.5 {s['acc']:.3f} P(h) {s['p_human']:.3f} | acc {w['acc']:.3f} P(h) {w['p_human']:.3f}")
    ct = {}
    for name, fn in (("channel", lambda c: c), ("channel group", lambda c: CH_GROUP.get(c, c))):
        a = chan_table(by_f, allidx, allp, fn); wch = chan_table(W_by_f, W[2], W[3], fn)
        ct[name] = {"lfcc": a, "whisper": wch}
        print(f"by {name} (humans vs machines on the same channel; pooled over the 30 folds | mean/min over families)")
        for c in a:
            s, w = a[c], wch[c]
            print(f"  {c:22} dialogues h={s['n_dlg_h']:3d} m={s['n_dlg_m']:3d}  AUC {s['auc']:.3f} ({s['mean_family_auc']:.3f}/{s['min_family_auc']:.3f}) acc {s['acc']:.3f} "
                  f"P(h) {s['p_human_h']:.3f}/{s['p_human_m']:.3f} | whisper AUC {w['auc']:.3f} ({w['mean_family_auc']:.3f}/{w['min_family_auc']:.3f}) acc {w['acc']:.3f} P(h) {w['p_human_h']:.3f}/{w['p_human_m']:.3f}")
    res[tag] = {"lofo": lofo, "loso": loso, "pooled_auc": pa, "channels": ct}
res["whisper_v3_rerun"] = {"lofo": W[0], "loso": W[1], "pooled_auc": JL.roc_auc(W[3], y[W[2]])}
json.dump(res, open(common.OUT / ("report_" + "_".join(sys.argv[1:])[:120] + ".json"), "w"), indent=1, default=float)
