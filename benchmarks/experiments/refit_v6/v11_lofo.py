"""v11's S1 (README.md, "v11: 0.2.0 ⊕ the stage-2 CNN"): on round 2's 45 LOFO folds, the mean log-odds
of the v5 fold head and of the two stage-2 CNN fold networks, against the v5 fold heads alone.

Inputs: ``judge_lofo.py … --preds V5.npz`` (the v5 command from its cache; the command is in the
output) and ``$FRAME_OUT/preds_frame_cnn_stage2{,_s1}.npz`` (frame_lofo round 2). The rows must be the
same dialogues in the same folds: checked on every row's label, family and group and every fold's
test rows. Prints per-family ROC-AUC, the parts (a)-(d) and writes --json.

Usage: python v11_lofo.py V5.npz FRAME_OUT [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from judge_lofo import logit, roc_auc, sigmoid  # noqa: E402


def load_checked(v5: str, frame_out: str, tags: tuple[str, ...] = ("frame_cnn_stage2", "frame_cnn_stage2_s1")):
    """(y, family per row, p of the v5 fold heads, seed-mean p of the CNN fold networks ``preds_<tag>.npz``).

    Raises SystemExit when a CNN file's rows or folds are not the v5 run's (not comparable)."""
    V = np.load(v5)
    C = [np.load(Path(frame_out) / f"preds_{t}.npz") for t in tags]
    meta = V["meta"]
    # the same rows in the same folds, in the same order
    for c in C:
        if not (np.array_equal(c["fold"], V["fold"]) and np.array_equal(c["idx"], V["idx"])
                and list(c["families"]) == list(V["families"])):
            sys.exit("the CNN's fold predictions are not on the v5 run's folds and rows: not comparable")
    y = (meta[V["idx"], 0] == "human").astype(int)
    return y, V["families"][V["fold"]], V["p"], np.mean([c["p"] for c in C], axis=0)


def blend(p0: np.ndarray, pc: np.ndarray) -> np.ndarray:
    """v11's per-row blend: the mean of the two log-odds."""
    return sigmoid((logit(p0) + logit(pc)) / 2)


def table(y: np.ndarray, fam: np.ndarray, preds: dict[str, np.ndarray]):
    """(per-family ROC-AUC {family: {name: auc}}, mean over families, pooled, people's and machines'
    mean P(human)), each {name: figure}, for the named per-row predictions."""
    rows = {F: {k: roc_auc(p[fam == F], y[fam == F]) for k, p in preds.items()} for F in sorted(set(fam))}
    mean = {k: float(np.mean([r[k] for r in rows.values()])) for k in preds}
    pooled = {k: roc_auc(p, y) for k, p in preds.items()}
    people = {k: float(np.mean(p[y == 1])) for k, p in preds.items()}
    machines = {k: float(np.mean(p[y == 0])) for k, p in preds.items()}
    return rows, mean, pooled, people, machines


def report(script: str, argv, json_out: Path | None, parts: list, rows: dict, mean: dict, pooled: dict,
           people: dict, machines: dict) -> int:
    """Print S1's parts, write the table and parts to ``json_out`` (if given); 0 when every part holds."""
    for name, ok, why in parts:
        print(f"S1 {name}: {why} -> {'met' if ok else 'NOT met'}")
    met = all(ok for _, ok, _ in parts)
    print(f"S1: {'met' if met else 'NOT met'}")
    if json_out:
        json_out.write_text(json.dumps({"command": f"python benchmarks/experiments/refit_v6/{script} " + " ".join(argv or sys.argv[1:]),
                                        "families": rows, "mean": mean, "pooled": pooled, "people": people,
                                        "machines": machines, "parts": [{"part": n, "met": ok, "figure": w} for n, ok, w in parts],
                                        "met": met}, indent=1))
    return 0 if met else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("v5")
    ap.add_argument("frame_out")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    y, fam, p0, pc = load_checked(a.v5, a.frame_out)
    pb = blend(p0, pc)
    rows, mean, pooled, people, machines = table(y, fam, {"v5": p0, "cnn": pc, "v11": pb})
    print(f"{'held-out family':28} {'v5 heads':>9} {'CNN mean':>9} {'v11 (both)':>10} {'change':>8}")
    for F, r in rows.items():
        print(f"{F:28} {r['v5']:9.3f} {r['cnn']:9.3f} {r['v11']:10.3f} {r['v11'] - r['v5']:+8.3f}")
    print(f"{'mean over families':28} {mean['v5']:9.3f} {mean['cnn']:9.3f} {mean['v11']:10.3f} {mean['v11'] - mean['v5']:+8.3f}")
    print(f"{'pooled':28} {pooled['v5']:9.3f} {pooled['cnn']:9.3f} {pooled['v11']:10.3f} {pooled['v11'] - pooled['v5']:+8.3f}")
    print(f"{'P(h) people':28} {people['v5']:9.3f} {people['cnn']:9.3f} {people['v11']:10.3f}")
    print(f"{'P(h) machines':28} {machines['v5']:9.3f} {machines['cnn']:9.3f} {machines['v11']:10.3f}")
    worst = min(rows, key=lambda F: rows[F]["v11"] - rows[F]["v5"])
    parts = [("(a) mean per-family ROC-AUC up by at least 0.03", mean["v11"] - mean["v5"] >= 0.03,
              f"{mean['v11'] - mean['v5']:+.3f}"),
             ("(b) pooled ROC-AUC up", pooled["v11"] > pooled["v5"], f"{pooled['v11'] - pooled['v5']:+.3f}"),
             ("(c) no family down by more than 0.05", rows[worst]["v11"] - rows[worst]["v5"] >= -0.05,
              f"worst {worst} {rows[worst]['v11'] - rows[worst]['v5']:+.3f}"),
             ("(d) people's mean P(human) at least 0.5", people["v11"] >= 0.5, f"{people['v11']:.3f}")]
    return report("v11_lofo.py", argv, a.json, parts, rows, mean, pooled, people, machines)


if __name__ == "__main__":
    sys.exit(main())
