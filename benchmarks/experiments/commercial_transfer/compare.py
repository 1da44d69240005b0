"""Per commercial engine of the fifth batch, two heads side by side (a diagnostic; README.md).

Reads two stored judge_wild.py runs on the same dialogues (whisper-fitted 0.1.0's, the head shipped
when the diagnostic ran, and another head's)
and prints, per engine (system), the dialogues, each head's mean P(human) and share called
machine (P(human) < 0.5), and per condition the pooled ROC-AUC of the fifth batch's machines
against the people of the run. Shares and means rounded DOWN to two decimals.

Run:  python benchmarks/experiments/commercial_transfer/compare.py [--other judge_wild_measure_only_batch5_v7]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
from judge_lofo import floor2, roc_auc  # noqa: E402


def batch5_machine_clips() -> set[str]:
    with (ROOT / "benchmarks" / "data" / "wild_manifest_5.csv").open() as f:
        return {row["path"] for row in csv.DictReader(f) if row["label"] == "machine"}


def per_engine(result: dict, cond: str, b5: set[str]) -> dict[str, list[float]]:
    """{system: [P(human) per scored dialogue]} for dialogues made only of fifth-batch machine clips."""
    out: dict[str, list[float]] = {}
    for x in result["conditions"][cond]["dialogues"]:
        if x["label"] == "machine" and x.get("p") is not None and set(x["clips"]) <= b5:
            out.setdefault(x["system"], []).append(x["p"])
    return out


def pooled_auc(result: dict, cond: str, b5: set[str]) -> float | None:
    dl = [x for x in result["conditions"][cond]["dialogues"] if x.get("p") is not None]
    ppl = [x["p"] for x in dl if x["label"] == "human"]
    mach = [x["p"] for x in dl if x["label"] == "machine" and set(x["clips"]) <= b5]
    return roc_auc(mach + ppl, [0] * len(mach) + [1] * len(ppl))


def table(shipped: dict, other: dict, other_name: str) -> str:
    """Markdown: per-engine rows (wideband) and a per-condition ROC-AUC line."""
    b5 = batch5_machine_clips()
    cond = next(iter(shipped["conditions"]))
    for r, n in ((shipped, "shipped"), (other, other_name)):
        if [x["clips"] for x in r["conditions"][cond]["dialogues"]] != \
                [x["clips"] for x in shipped["conditions"][cond]["dialogues"]]:
            raise SystemExit(f"the {n} run does not hold the shipped run's dialogues; rerun it with the same manifests and seed")
    a, b = per_engine(shipped, cond, b5), per_engine(other, cond, b5)
    rows = [f"| engine (system) | dialogues | 0.1.0: mean P(human) | 0.1.0: called machine | "
            f"{other_name}: mean P(human) | {other_name}: called machine |", "|---|---|---|---|---|---|"]
    for s in sorted(a, key=lambda k: -sum(a[k]) / len(a[k])):
        pa, pb = a[s], b.get(s, [])
        cell = (lambda ps: f"{floor2(sum(ps) / len(ps))} | {floor2(sum(p < 0.5 for p in ps) / len(ps))}" if ps else "– | –")
        rows.append(f"| {s} | {len(pa)} | {cell(pa)} | {cell(pb)} |")
    aucs = "; ".join(f"{c}: 0.1.0 {floor2(pooled_auc(shipped, c, b5))}, {other_name} {floor2(pooled_auc(other, c, b5))}"
                     for c in shipped["conditions"] if c in other["conditions"])
    ppl = "; ".join(f"{c}: 0.1.0 {floor2(shipped['conditions'][c]['people']['mean_p_human'])}, "
                    f"{other_name} {floor2(other['conditions'][c]['people']['mean_p_human'])}"
                    for c in shipped["conditions"] if c in other["conditions"])
    n_ppl = shipped["conditions"][cond]["people"]["n_scored"]
    return ("\n".join(rows) + f"\n\nPooled ROC-AUC, fifth-batch machines against the run's people: {aucs}. "
            f"People's mean P(human) ({n_ppl} dialogues): {ppl}.")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shipped", default="judge_wild_measure_only_batch5_shipped", help="stored run of the shipped head (name in benchmarks/results)")
    ap.add_argument("--other", default="judge_wild_measure_only_batch5_v7", help="stored run of the other head (name in benchmarks/results)")
    ap.add_argument("--name", default="v7", help="the other head's name in the table")
    a = ap.parse_args(argv)
    res = ROOT / "benchmarks" / "results"
    for n in (a.shipped, a.other):
        if not (res / f"{n}.json").exists():
            raise SystemExit(f"missing benchmarks/results/{n}.json: run the commands in this folder's README.md first")
    print(table(json.loads((res / f"{a.shipped}.json").read_text()), json.loads((res / f"{a.other}.json").read_text()), a.name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
