"""v12's S1 (README.md, "v12"): on round 2's 45 LOFO folds, v11's blend (the v5 fold head ⊕ round 2's two
stage-2 CNN fold networks) against v12's (the same v5 fold head ⊕ the two fold networks trained with
the extra rows, ``frame_lofo/extra.py lofo``), on the same held-out rows.

Inputs: ``judge_lofo.py … --preds V5.npz`` (v11's commands), ``$FRAME_OUT/preds_frame_cnn_stage2{,_s1}.npz``
and ``$FRAME_OUT/preds_frame_cnn_stage2_extra{,_s1}.npz``; every file's rows and folds are checked
against the v5 run's (``v11_lofo.load_checked``). Prints per-family ROC-AUC, the parts (a)-(d) and
writes --json; exit 0 when every part holds.

``--candidate v13`` (README.md, "v13"): the same comparison and parts for the fold networks trained with
the extra rows through the wild channels (``extra.py lofo --channels``: ``preds_frame_cnn_stage2_extrach{,_s1}.npz``).

``--split-control`` (README.md, "v13 result"; diagnostics, seed 0 only): the CNN fold networks of round
2's split (v11 seed 0), of v12's split without any extra row (``extra.py lofo --control split``) and
of v12 (seed 0), alone and blended with the v5 fold heads; writes --json, exit 0.

Usage: python v12_lofo.py V5.npz FRAME_OUT [--candidate v12|v13|v14] [--json OUT]
       python v12_lofo.py V5.npz FRAME_OUT --split-control [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
from v11_lofo import blend, load_checked, report, table  # noqa: E402

TAGS = {"v12": ("frame_cnn_stage2_extra", "frame_cnn_stage2_extra_s1"),
        "v13": ("frame_cnn_stage2_extrach", "frame_cnn_stage2_extrach_s1"),
        "v14": ("frame_cnn_stage2_extra_ctlrepro_splitfamily", "frame_cnn_stage2_extra_ctlrepro_splitfamily_s1")}
V12_TAGS = TAGS["v12"]


def parts(rows: dict, mean: dict, pooled: dict, people: dict, machines: dict, c: str = "v12") -> list[tuple[str, bool, str]]:
    """The rule's S1 parts (README.md, "v12"; v13 has the same), candidate ``c`` against v11 on the same rows."""
    worst = min(rows, key=lambda F: rows[F][c] - rows[F]["v11"])
    return [
        ("(a) mean per-family ROC-AUC at least v11's", mean[c] >= mean["v11"], f"{mean[c] - mean['v11']:+.3f}"),
        ("(b) pooled ROC-AUC at least v11's", pooled[c] >= pooled["v11"], f"{pooled[c] - pooled['v11']:+.3f}"),
        ("(c) no family down by more than 0.03", rows[worst][c] - rows[worst]["v11"] >= -0.03,
         f"worst {worst} {rows[worst][c] - rows[worst]['v11']:+.3f}"),
        ("(d) people's mean P(human) higher than v11's, machines' not higher",
         people[c] > people["v11"] and machines[c] <= machines["v11"],
         f"people {people['v11']:.3f} -> {people[c]:.3f}, machines {machines['v11']:.3f} -> {machines[c]:.3f}")
        if c != "v14" else  # v14's (d) is v11's (README.md, "v14")
        ("(d) people's mean P(human) at least 0.5", people[c] >= 0.5, f"{people[c]:.3f}"),
    ]


def split_control(v5: str, frame_out: str) -> dict:
    """The seed-0 table of ``--split-control`` (module docstring)."""
    y, fam, p0, c11 = load_checked(v5, frame_out, ("frame_cnn_stage2",))
    ctl = load_checked(v5, frame_out, ("frame_cnn_stage2_extra_ctlsplit",))[3]
    c12 = load_checked(v5, frame_out, ("frame_cnn_stage2_extra",))[3]
    preds = {"v5": p0, "cnn_v11_split": c11, "cnn_v12_split_no_extra": ctl, "cnn_v12": c12,
             "blend_v11_split": blend(p0, c11), "blend_v12_split_no_extra": blend(p0, ctl)}
    rows, mean, pooled, people, machines = table(y, fam, preds)
    worst = {k: min(r[k] - r["v5"] for r in rows.values()) for k in preds}
    return {"seed": 0, "families": rows, "mean": mean, "pooled": pooled, "people": people, "machines": machines,
            "worst_family_change_vs_v5": worst}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("v5")
    ap.add_argument("frame_out")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--candidate", choices=sorted(TAGS), default="v12")
    ap.add_argument("--split-control", action="store_true", help="the seed-0 diagnostics table (docstring)")
    a = ap.parse_args(argv)
    if a.split_control:
        res = split_control(a.v5, a.frame_out)
        for k in res["mean"]:
            print(f"{k:26} mean {res['mean'][k]:.3f} pooled {res['pooled'][k]:.3f} people {res['people'][k]:.3f} "
                  f"machines {res['machines'][k]:.3f} worst vs v5 {res['worst_family_change_vs_v5'][k]:+.3f}")
        if a.json:
            a.json.write_text(json.dumps({"command": "python benchmarks/experiments/refit_v6/v12_lofo.py "
                                          + " ".join(argv or sys.argv[1:]), **res}, indent=1))
        return 0
    c = a.candidate
    y, fam, p0, pc11 = load_checked(a.v5, a.frame_out)
    _, _, _, pcc = load_checked(a.v5, a.frame_out, TAGS[c])
    preds = {"v5": p0, "cnn11": pc11, "cnn" + c[1:]: pcc, "v11": blend(p0, pc11), c: blend(p0, pcc)}
    rows, mean, pooled, people, machines = table(y, fam, preds)
    k = "cnn" + c[1:]
    print(f"{'held-out family':28} {'CNN v11':>8} {'CNN ' + c:>8} {'v11':>7} {c:>7} {'change':>7}")
    for F, r in rows.items():
        print(f"{F:28} {r['cnn11']:8.3f} {r[k]:8.3f} {r['v11']:7.3f} {r[c]:7.3f} {r[c] - r['v11']:+7.3f}")
    for name, d in (("mean over families", mean), ("pooled", pooled), ("P(h) people", people), ("P(h) machines", machines)):
        print(f"{name:28} {d['cnn11']:8.3f} {d[k]:8.3f} {d['v11']:7.3f} {d[c]:7.3f} {d[c] - d['v11']:+7.3f}")
    ps = parts(rows, mean, pooled, people, machines, c)
    return report("v12_lofo.py", argv, a.json, ps, rows, mean, pooled, people, machines)


if __name__ == "__main__":
    sys.exit(main())
