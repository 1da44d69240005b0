"""Read the v6 ship rule (README.md beside this file, fixed before the runs) from the stored JSON.

Prints each part (R1-R4) with its figures and exits 0 when every part is met, 1 when one is not,
2 when an input is missing. Inputs (repo-relative, in benchmarks/results/):
judge_lofo_protocol_v6.json (fold heads, with the shipped head as --compare-head),
judge_wild_measure_only_batch2_shipped.json (the shipped head on the measure-only sources) and
judge_wild_measure_only_batch3_v6.json (the candidate on the same sources, same options);
``--candidate v7`` reads judge_lofo_protocol_v7.json and judge_wild_measure_only_batch4_v7.json.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "results"
MIN_PEOPLE_ROWS = 20   # R2: fewer held-out-for-both human test rows than this -> read on all people
MAX_FAMILY_DROP = 0.05  # R2
CONDITIONS = ("wideband", "telephone")


def evaluate(lofo: dict, shipped: dict, cand: dict) -> list[tuple[str, bool, str]]:
    """[(part, met, figures)] of the rule; pure function of the three stored results."""
    parts = []
    c = lofo["compare_head"]
    a, b = c["fold_heads_auc_fresh_families_and_people"], c["compare_head_auc_fresh_families_and_people"]
    parts.append(("R1 never-met families, people neither head met", a >= b,
                  f"fold heads {a:.3f} vs shipped {b:.3f} ({c['fresh_people_test_rows']} human test rows, "
                  f"{len(c['fresh_families'])} families)"))
    worst, lines = None, []
    for fam in c["fresh_families"]:
        s = lofo["lofo"][fam]
        pn = s["people_neither_met"]
        if pn["n_h"] >= MIN_PEOPLE_ROWS and not math.isnan(pn["auc"]):
            x, y, how = pn["auc"], pn["compare_head_auc"], ""
        else:
            x, y, how = s["auc"], s["compare_head"]["auc"], f" (all people: {pn['n_h']} held-out-for-both rows)"
        d = x - y
        lines.append(f"{fam} {x:.3f} vs {y:.3f} ({d:+.3f}){how}")
        worst = d if worst is None else min(worst, d)
    parts.append(("R2 no never-met family more than 0.05 below the shipped head", worst >= -MAX_FAMILY_DROP,
                  "; ".join(lines)))
    for cond in CONDITIONS:
        x = cand["conditions"][cond]["pooled_auc_machines_vs_people"]
        y = shipped["conditions"][cond]["pooled_auc_machines_vs_people"]
        parts.append((f"R3 measure-only sources, {cond}", x >= y, f"candidate {x:.3f} vs shipped {y:.3f}"))
    for cond in CONDITIONS:
        p = cand["conditions"][cond]["people"]["mean_p_human"]
        parts.append((f"R4 people's mean P(human) >= 0.5, {cond}", p >= 0.5, f"candidate {p:.3f}"))
    return parts


CANDIDATES = {  # candidate -> (its LOFO table, its measure-only run); the shipped head's run is shared
    "v6": ("judge_lofo_protocol_v6", "judge_wild_measure_only_batch3_v6"),
    "v7": ("judge_lofo_protocol_v7", "judge_wild_measure_only_batch4_v7"),
}


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--candidate", choices=sorted(CANDIDATES), default="v6", help="which refit (default v6)")
    a = ap.parse_args(argv)
    lofo, wild = CANDIDATES[a.candidate]
    names = (lofo, "judge_wild_measure_only_batch2_shipped", wild)
    missing = [n for n in names if not (RESULTS / f"{n}.json").exists()]
    if missing:
        print(f"missing stored result(s): {', '.join(missing)}; run the commands in README.md first", file=sys.stderr)
        return 2
    parts = evaluate(*(json.loads((RESULTS / f"{n}.json").read_text()) for n in names))
    for name, ok, figs in parts:
        print(f"{'met    ' if ok else 'NOT met'}  {name}: {figs}")
    ok = all(p[1] for p in parts)
    print(f"rule met: ship {a.candidate}" if ok else "rule not met: the shipped head stays")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
