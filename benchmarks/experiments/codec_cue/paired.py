"""Paired change of P(human) between two conditions of one judge_wild.py run (a diagnostic).

Each dialogue of a judge_wild.py result exists once per condition with the same clips, caller,
timing, level and noise; only the condition differs. This prints, per agent class and family,
the mean and the 10th/90th percentiles of P(human, condition) − P(human, base) over the
dialogues scored in both, and the pooled ROC-AUC machines vs people in each condition.

Run:  python benchmarks/experiments/codec_cue/paired.py RESULT.json [--base wideband]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np


def paired(result: dict, base: str, cond: str) -> dict:
    """{(label, family): [deltas]} over dialogues scored in both conditions (matched by index)."""
    a, b = result["conditions"][base]["dialogues"], result["conditions"][cond]["dialogues"]
    if [d["clips"] for d in a] != [d["clips"] for d in b]:
        raise SystemExit(f"conditions {base} and {cond} do not hold the same dialogues; run both in one judge_wild.py call")
    out: dict = defaultdict(list)
    for x, y in zip(a, b):
        if x["p"] is not None and y["p"] is not None:
            out[(x["label"], x["family"])].append(y["p"] - x["p"])
            out[(x["label"], "ALL")].append(y["p"] - x["p"])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("result", type=Path, help="a judge_wild.py --json output with two or more conditions")
    ap.add_argument("--base", default="wideband", help="the condition the others are compared with")
    a = ap.parse_args(argv)
    r = json.loads(a.result.read_text())
    print(f"# {a.result.name}: {r['command']}\n# commit {r['commit']}")
    for cond, c in r["conditions"].items():
        print(f"{cond}: pooled ROC-AUC machines vs people {c['pooled_auc_machines_vs_people']}, "
              f"mean P(human) people {c['people']['mean_p_human']}, machines {c['machines']['mean_p_human']}")
    for cond in r["conditions"]:
        if cond == a.base:
            continue
        print(f"\nP(human, {cond}) - P(human, {a.base}), per dialogue:")
        print(f"{'class:family':44s} {'n':>4s} {'mean':>7s} {'p10':>7s} {'p90':>7s}")
        for (label, fam), ds in sorted(paired(r, a.base, cond).items(), key=lambda kv: (kv[0][0], kv[0][1] != "ALL", kv[0][1])):
            d = np.asarray(ds)
            print(f"{label + ':' + fam:44s} {len(d):4d} {d.mean():+7.3f} {np.percentile(d, 10):+7.3f} {np.percentile(d, 90):+7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
