"""Read several draws of one LOFO table together: the same ``benchmarks/judge_lofo.py`` run under
different ``--calib-seed`` values (the calibration split alone; same folds, same dialogues).

Why: one draw of the calibration split moved the mean per-family ROC-AUC of round 3's frame CNN by
0.05 on the same folds (docs/judge.md, "A caveat found later"), so a rule that compares two
candidates on one draw compares the draws as much as the candidates. This prints, per held-out
family, the mean, minimum and maximum over the draws of ROC-AUC and of each class's mean P(human),
then the same for the pooled ROC-AUC and for each draw's mean per-family ROC-AUC.

Refused (exit 2, one line): fewer than two runs, two runs with the same calibration seed, or runs
that differ in anything but ``--calib-seed`` and ``--json`` (command, families, human groups, sealed
split, calibration, calibration split), since those would not be draws of one table.

Run: python benchmarks/lofo_draws.py A.json B.json C.json [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

SAME = ("families", "human_groups", "sealed", "calibration", "calibration_split", "seed")
"""Keys of judge_lofo's JSON that draws of one table share."""

PER_FAMILY = ("auc", "p_human_h", "p_human_m")


def _command_without_draw(cmd: str) -> list[str]:
    """The run's command without ``--calib-seed N`` and ``--json OUT`` (what draws may differ in)."""
    words = shlex.split(cmd) if cmd else []
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
            continue
        if w in ("--calib-seed", "--json"):
            skip = True
            continue
        if w.startswith(("--calib-seed=", "--json=")):
            continue
        out.append(w)
    return out


def _stats(values: list[float]) -> dict:
    return {"mean": sum(values) / len(values), "min": min(values), "max": max(values), "n": len(values)}


def combine(runs: list[dict]) -> dict:
    """The draws' table: ``{"calib_seeds", "families": {family: {auc|p_human_h|p_human_m: {mean,
    min, max, n}}}, "pooled_auc": {...}, "mean_family_auc": {...}}``. Pure.

    Raises:
        ValueError: fewer than two runs, a repeated calibration seed, or runs that are not draws of
            one table (the message names the first key that differs).
    """
    if len(runs) < 2:
        raise ValueError("need at least two runs of judge_lofo.py (one per --calib-seed)")
    seeds = [r.get("calib_seed", r.get("seed")) for r in runs]
    if any(s is None for s in seeds):
        raise ValueError("a run records no calib_seed: rerun it with this judge_lofo.py (it writes calib_seed)")
    if len(set(seeds)) < len(seeds):
        raise ValueError(f"calibration seeds repeat ({seeds}): each run must use another --calib-seed")
    first = runs[0]
    for r in runs[1:]:
        for k in SAME:
            if r.get(k) != first.get(k):
                raise ValueError(f"runs differ in {k!r}: not draws of one table (only --calib-seed may differ)")
        if _command_without_draw(r.get("command", "")) != _command_without_draw(first.get("command", "")):
            raise ValueError("runs differ in their command beyond --calib-seed/--json: not draws of one table")
        if set(r["lofo"]) != set(first["lofo"]):
            raise ValueError("runs hold out different families: not draws of one table")
    fams = sorted(first["lofo"])
    out = {"calib_seeds": seeds, "families": {}, "command": first.get("command", "")}
    for f in fams:
        out["families"][f] = {k: _stats([float(r["lofo"][f][k]) for r in runs]) for k in PER_FAMILY
                              if all(k in r["lofo"][f] for r in runs)}
    out["pooled_auc"] = _stats([float(r["pooled_auc"]) for r in runs])
    out["mean_family_auc"] = _stats([sum(float(r["lofo"][f]["auc"]) for f in fams) / len(fams) for r in runs])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="judge_lofo.py --json outputs, one per --calib-seed")
    ap.add_argument("--json", default=None, metavar="OUT", help="write the combined table here")
    args = ap.parse_args(argv)
    try:
        runs = [json.loads(Path(p).read_text()) for p in args.runs]
        doc = combine(runs)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"lofo_draws: {exc}", file=sys.stderr)
        return 2
    print(f"{len(runs)} draws of the calibration split (seeds {doc['calib_seeds']})")
    print(f"{'held-out family':24} {'AUC mean':>9} {'min':>6} {'max':>6} {'P(h) people':>12} {'P(h) machines':>14}")
    for f, row in doc["families"].items():
        a = row["auc"]
        ph, pm = row.get("p_human_h", {}).get("mean"), row.get("p_human_m", {}).get("mean")
        print(f"{f:24} {a['mean']:9.3f} {a['min']:6.3f} {a['max']:6.3f} "
              f"{'' if ph is None else f'{ph:12.3f}'} {'' if pm is None else f'{pm:14.3f}'}")
    for key, name in (("mean_family_auc", "mean per-family AUC"), ("pooled_auc", "pooled AUC")):
        s = doc[key]
        print(f"{name:24} {s['mean']:9.3f} {s['min']:6.3f} {s['max']:6.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
