"""Table of the frame experiment's LOFO predictions beside the stored judge_lofo fold heads.

Usage: python report.py TAG... [--json OUT] [--heads-json PATH] [--new-people NAMES] [--min-family-auc AUC]
       (TAGs: preds_<TAG>.npz written by lofo.py)

Per held-out family: ROC-AUC of that family's outer folds' test dialogues pooled (people of the
held-out human chunk vs the family's machines), the mean of the per-fold AUCs (the mean over families of the latter is the figure of ``../data_batch2/recipes.txt``),
then over all folds:
the pooled AUC, the mean over families, the worst family, accuracy at 0.5 and mean P(human) of people
and machines. The last column is the shipped recipe's fold heads on the same folds from
``--heads-json`` (v4 for round 1, v5 for round 2; acoustic + encoder features, nested Platt; its
dialogues are judge_lofo's: the same draws, see README.md for how they differ).
"""
import argparse
import json
import os
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fl  # noqa: E402
from fl import JL  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("tags", nargs="+")
ap.add_argument("--json", default=None)
ap.add_argument("--baseline", default="moments_lr", help="the tag the adoption rule compares with (README.md)")
ap.add_argument("--heads-json", default="benchmarks/results/judge_lofo_protocol_v4.json", metavar="PATH",
                help="judge_lofo JSON whose fold heads fill the last column (its folds must be these: v4 for "
                     "round 1, v5 for round 2; default %(default)s)")
ap.add_argument("--new-people", default="", metavar="NAMES",
                help="the diagnostic's people (human groups or speakers, comma-separated) left out of the test rows "
                     "(default: the groups the last seal extension added)")
ap.add_argument("--min-family-auc", type=float, default=None, metavar="AUC",
                help="round 2's rule part (d): every held-out family's ROC-AUC at least this (README.md)")
args = ap.parse_args()
calls, meta, sealed, aug, key = fl.setup()
y = np.array([1 if m["label"] == "human" else 0 for m in meta])
v4 = json.loads((fl.REPO / args.heads_json).read_text())
HEADS = Path(args.heads_json).stem.replace("judge_lofo_protocol_", "") + " heads"
res = {"key": key, "n_dialogues": len(meta), "models": {}}
# diagnostic (round 2, added after the baseline's round-2 table, so labelled as such): the same AUCs with
# the held-out people of the human groups the last seal extension added left out of the test rows,
# so that a change between rounds is not only easier held-out people
ext = json.loads(fl.common.SEALED.read_text()).get("extensions") or [{}]
new_groups = sorted(n for n in args.new_people.split(",") if n) or sorted(ext[-1].get("added_groups", []))
new_person = np.array([m["label"] == "human" and bool({m["group"], m["speaker"]} & set(new_groups)) for m in meta])
fams = None
for tag in args.tags:
    z = np.load(fl.preds_path(tag))
    assert str(z["key"]) == key, f"{tag}: predictions of another corpus"
    F = z["families"]
    fams = sorted(set(F.tolist()))
    fold, idx, p = z["fold"], z["idx"], z["p"]
    keep = ~new_person[idx]  # the diagnostic's test rows
    per, auc_wo = {}, {}
    for f in fams:
        m = np.isin(fold, np.where(F == f)[0])
        fa = [JL.roc_auc(p[fold == k], y[idx[fold == k]]) for k in np.unique(fold[m])]
        per[f] = dict(JL.summary(p[m], y[idx[m]]), fold_auc_mean=float(np.nanmean(fa)))
        auc_wo[f] = JL.roc_auc(p[m & keep], y[idx[m & keep]])
    res["models"][tag] = dict(lofo=per, pooled=JL.summary(p, y[idx]),
                              family_mean_auc=float(np.mean([per[f]["auc"] for f in fams])),
                              fold_mean_auc=float(np.mean([per[f]["fold_auc_mean"] for f in fams])),
                              worst=min(fams, key=lambda f: per[f]["auc"]), seconds=float(z["seconds"]))
    if new_groups:
        res["models"][tag]["without_new_groups"] = dict(
            groups_left_out=new_groups, lofo_auc=auc_wo, family_mean_auc=float(np.mean(list(auc_wo.values()))),
            pooled_auc=JL.roc_auc(p[keep], y[idx[keep]]))
hdr = f"{'held-out family':24}" + "".join(f"{t[-13:]:>14}" for t in args.tags) + f"{HEADS:>10}"
print("columns: " + ", ".join(args.tags) + f", {HEADS} (judge_lofo's fold heads on the same folds, {args.heads_json}; "
      "headers: the last 13 characters of each tag)")
print(hdr)
for f in fams:
    print(f"{f:24}" + "".join(f"{res['models'][t]['lofo'][f]['auc']:14.3f}" for t in args.tags)
          + (f"{v4['lofo'][f]['auc']:10.3f}" if f in v4["lofo"] else f"{'-':>10}"))
# the heads column's means only where its run held out every family of these folds
v4_all = all(f in v4["lofo"] for f in fams)
print(f"{'mean over families':24}" + "".join(f"{res['models'][t]['family_mean_auc']:14.3f}" for t in args.tags)
      + (f"{np.mean([v4['lofo'][f]['auc'] for f in fams]):10.3f}" if v4_all else f"{'-':>10}"))
print(f"{'mean per-fold AUC':24}" + "".join(f"{res['models'][t]['fold_mean_auc']:14.3f}" for t in args.tags)
      + (f"{np.mean([v4['lofo'][f]['fold_auc_mean'] for f in fams]):10.3f}" if v4_all else f"{'-':>10}"))
for nm, fn in (("pooled AUC", lambda s: s["auc"]), ("acc@0.5", lambda s: s["acc"]),
               ("P(h) people", lambda s: s["p_human_h"]), ("P(h) machines", lambda s: s["p_human_m"])):
    print(f"{nm:24}" + "".join(f"{fn(res['models'][t]['pooled']):14.3f}" for t in args.tags))
if new_groups:
    print(f"diagnostic, these new people left out of the test rows ({', '.join(new_groups)}):")
    print(f"{'  mean over families':24}" + "".join(f"{res['models'][t]['without_new_groups']['family_mean_auc']:14.3f}" for t in args.tags))
    print(f"{'  pooled AUC':24}" + "".join(f"{res['models'][t]['without_new_groups']['pooled_auc']:14.3f}" for t in args.tags))
    for f in ("commercial-neural-tts",):
        if f in fams:
            print(f"{'  ' + f[:22]:24}" + "".join(f"{res['models'][t]['without_new_groups']['lofo_auc'][f]:14.3f}" for t in args.tags))
res["heads_column"] = {"source": args.heads_json, "auc": {f: v4["lofo"][f]["auc"] for f in fams if f in v4["lofo"]}}
# the adoption rule fixed before the runs (README.md): mean family AUC +0.05, pooled AUC up, no family -0.05;
# where a model was run with several seeds (tags TAG, TAG_s1, TAG_s2, ...) the rule reads the mean over its seeds
# (per-family AUC and pooled AUC averaged), and --min-family-auc adds round 2's part (d)


def seed_base(tag: str) -> str:
    return re.sub(r"_s\d+$", "", tag)


def rule(M: dict, B: dict) -> dict:
    drops = {f: M["lofo"][f]["auc"] - B["lofo"][f]["auc"] for f in fams}
    r = dict(d_family_mean=M["family_mean_auc"] - B["family_mean_auc"],
             d_pooled=M["pooled"]["auc"] - B["pooled"]["auc"],
             worst_change=min(drops.values()), worst_family=min(drops, key=drops.get))
    r["met"] = bool(r["d_family_mean"] >= 0.05 and r["d_pooled"] > 0 and r["worst_change"] >= -0.05)
    if args.min_family_auc is not None:
        f_low = min(fams, key=lambda f: M["lofo"][f]["auc"])
        r["lowest_family"], r["lowest_family_auc"] = f_low, M["lofo"][f_low]["auc"]
        r["met"] = bool(r["met"] and r["lowest_family_auc"] >= args.min_family_auc)
    return r


if args.baseline in res["models"]:
    B = res["models"][args.baseline]
    res["rule"] = {}
    extra = f", no family below ROC-AUC {args.min_family_auc}" if args.min_family_auc is not None else ""
    print(f"\nadoption rule vs {args.baseline}: mean over families >= +0.05, pooled up, no family below -0.05{extra}")
    groups: dict = {}
    for t in res["models"]:
        if t != args.baseline:
            groups.setdefault(seed_base(t), []).append(t)
    rows = [(t, res["models"][t]) for t in res["models"] if t != args.baseline]
    for base, ts in groups.items():
        if len(ts) > 1:  # the seed mean: per-family and pooled AUC averaged over the seeds
            ms = [res["models"][t] for t in ts]
            lofo = {f: {"auc": float(np.mean([m["lofo"][f]["auc"] for m in ms]))} for f in fams}
            rows.append((f"{base} (mean of {len(ts)} seeds)",
                         dict(lofo=lofo, family_mean_auc=float(np.mean([lofo[f]["auc"] for f in fams])),
                              pooled={"auc": float(np.mean([m["pooled"]["auc"] for m in ms]))})))
    for t, M in rows:
        r = rule(M, B)
        res["rule"][t] = r
        low = f"  lowest {r['lowest_family_auc']:.3f} ({r['lowest_family']})" if "lowest_family" in r else ""
        print(f"  {t:24} mean {r['d_family_mean']:+.3f}  pooled {r['d_pooled']:+.3f}  worst family "
              f"{r['worst_change']:+.3f} ({r['worst_family']}){low}  -> {'MET' if r['met'] else 'not met'}")
if args.json:
    with open(args.json, "w") as fh:
        json.dump(res, fh, indent=1, sort_keys=True)
    print(f"-> {args.json}")
