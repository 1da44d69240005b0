"""v15's to v21's S1 (README.md, "v15" to "v21"): on round 2's 45 LOFO folds, 0.3.0's blend
recipe (the mean log-odds of the v5 fold head and of the stage-2 CNN fold network, per row) with both
calibrated on the candidate split (``--candidate-split``: ``family-keep-small``, v15, the default;
``family-out``, v16), or on the ``voice`` split with the CNN trained by another recipe
(``--candidate-recipe``: ``centre``, v17; ``mask``, v18; ``ep6``, v19; ``base3``, v20; ``tiny+base3``, v21; the readout then is the
baseline's own),
against the same recipe on the ``voice`` split, each read over several draws of its calibration
split (the same ``--calib-seed`` values on both sides).

Inputs, per draw s (CAND: the candidate split):
* ``PREDS_DIR/preds_voice_s<s>.npz`` and ``PREDS_DIR/preds_CAND_s<s>.npz``: ``judge_lofo.py …
  --calib-split SPLIT --calib-seed s --preds`` (the readout's fold predictions);
* ``FRAME_OUT/preds_frame_cnn_stage2_extra_ctlrepro_cs<s>.npz`` and
  ``FRAME_OUT/preds_frame_cnn_stage2_extra_ctlrepro_splitCAND_cs<s>.npz``: ``frame_lofo/extra.py
  lofo --control repro [--split CAND] --calib-seed s`` (the CNN's fold predictions, network seed 0);
  with ``--candidate-recipe R`` the candidate's CNN file is
  ``FRAME_OUT/preds_frame_cnn_stage2_extra_ctlrepro_recipeR_cs<s>.npz`` (``extra.py lofo --control
  repro --recipe R --calib-seed s``) and its readout file ``preds_voice_s<s>.npz``.
Every file's rows and folds are checked against its readout file (``v11_lofo.load_checked``), and all
draws against the first (the same dialogues, labels and held-out families).

Every figure of the rule is a mean over the draws; the range (min–max) is printed and stored beside
it. Parts (README.md, "v15"): (a) mean per-family ROC-AUC at least the baseline's + 0.01; (b) pooled
at least the baseline's; (c) no family's mean ROC-AUC down by more than 0.05; (d) people's mean
P(human) at least 0.5. Exit 0 when every part holds, 1 when not.

Usage: python v15_lofo.py PREDS_DIR FRAME_OUT [--seeds 0 1 2] [--candidate-split SPLIT | --candidate-recipe R] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from v11_lofo import blend, load_checked, table  # noqa: E402

CANDIDATE_SPLITS = ("family-keep-small", "family-out")
"""The candidate side's split: v15's (the default) or v16's (README.md, "v16")."""
CANDIDATE_RECIPES = ("centre", "mask", "ep6", "base3", "tiny+base3", "tiny+tiny-s1")
"""The candidate CNN's training recipe (``extra.py --recipe``): v17's, v18's (README.md, "v17 and v18"),
v19's (README.md, "v19"), v20's, Whisper base's stage-3 frames (README.md, "v20"), or v21's, the
baseline's own tiny network and v20's base network together, their P(human) averaged per row as a
seed ensemble is (``v11_lofo.load_checked``) before the blend (README.md, "v21"); ``tiny+tiny-s1``
is v21's control, a diagnostic that decides nothing: the baseline's tiny network and a second tiny
network of network seed 1 (``extra.py lofo --control repro --seed 1 --calib-seed s``) averaged the
same way (README.md, "v21's control")."""


def sides(candidate: str = "family-keep-small", recipe: str = "") -> dict[str, tuple[str, str]]:
    """Each side: (the readout's --calib-split, the CNN preds file's tag with the draw's seed); the
    baseline is the ``voice`` split, the candidate ``candidate``, or with ``recipe`` the ``voice``
    split's readout and the CNN trained by ``recipe``."""
    base = {"base": ("voice", "frame_cnn_stage2_extra_ctlrepro_cs{s}")}
    if recipe:
        if recipe not in CANDIDATE_RECIPES:
            raise ValueError(f"unknown recipe {recipe!r}: use one of {CANDIDATE_RECIPES}")
        if recipe == "tiny+base3":  # two CNN files, averaged (``draw`` splits the tag at "|")
            return {**base, "candidate": ("voice", base["base"][1] + "|frame_cnn_stage2_extra_ctlrepro_recipebase3_cs{s}")}
        if recipe == "tiny+tiny-s1":
            return {**base, "candidate": ("voice", base["base"][1] + "|frame_cnn_stage2_extra_ctlrepro_cs{s}_s1")}
        return {**base, "candidate": ("voice", f"frame_cnn_stage2_extra_ctlrepro_recipe{recipe}" + "_cs{s}")}
    return {**base, "candidate": (candidate, f"frame_cnn_stage2_extra_ctlrepro_split{candidate}" + "_cs{s}")}


def draw(preds_dir: Path, frame_out: str, s: int, parts: dict | None = None, candidate: str = "family-keep-small",
         recipe: str = ""):
    """(y, family per row, {side: blended p}) of draw ``s``; SystemExit when the sides' rows differ.
    ``parts``, when given, receives ``{"<side>/readout": p, "<side>/cnn": p}`` (the blend's inputs)."""
    out, ref, splits = {}, None, sides(candidate, recipe)
    for side, (split, tag) in splits.items():
        y, fam, p0, pc = load_checked(str(preds_dir / f"preds_{split}_s{s}.npz"), frame_out,
                                      tuple(t.format(s=s) for t in tag.split("|")))
        if ref is not None and not (np.array_equal(y, ref[0]) and np.array_equal(fam, ref[1])):
            sys.exit(f"draw {s}: the {split} files are not on the same rows as the {splits['base'][0]} ones")
        ref = (y, fam)
        out[side] = blend(p0, pc)
        if parts is not None:
            parts[f"{side}/readout"], parts[f"{side}/cnn"] = p0, pc
    return ref[0], ref[1], out


def spread(values: list[float]) -> dict:
    return {"mean": float(np.mean(values)), "min": float(np.min(values)), "max": float(np.max(values)),
            "n": len(values)}


def read(preds_dir: Path, frame_out: str, seeds: list[int], candidate: str = "family-keep-small",
         recipe: str = "") -> dict:
    """Per draw the table of ``v11_lofo.table``, then every figure as {mean, min, max, n} over draws:
    ``{"families": {family: {side: spread}}, "mean_family_auc", "pooled_auc", "people", "machines"}``,
    and ``"components"``: a DIAGNOSTIC outside the rule (added after v15's S1 was read), the same four
    figures of each side's two inputs alone, ``{"<side>/readout"|"<side>/cnn": {figure: spread}}``."""
    per, first, comp = [], None, []
    for s in seeds:
        inputs: dict = {}
        y, fam, p = draw(preds_dir, frame_out, s, inputs, candidate, recipe)
        comp.append(table(y, fam, inputs))
        if first is not None and not (np.array_equal(y, first[0]) and np.array_equal(fam, first[1])):
            sys.exit(f"draw {s} is not on draw {seeds[0]}'s rows: not comparable")
        first = first or (y, fam)
        per.append(table(y, fam, p))
    names = list(sides(candidate, recipe))
    fams = sorted(per[0][0])
    return {"seeds": seeds, "candidate_split": "voice" if recipe else candidate, "candidate_recipe": recipe,
            "families": {F: {k: spread([t[0][F][k] for t in per]) for k in names} for F in fams},
            "mean_family_auc": {k: spread([t[1][k] for t in per]) for k in names},
            "pooled_auc": {k: spread([t[2][k] for t in per]) for k in names},
            "people": {k: spread([t[3][k] for t in per]) for k in names},
            "machines": {k: spread([t[4][k] for t in per]) for k in names},
            "components": {k: {name: spread([t[i][k] for t in comp]) for i, name in
                               ((1, "mean_family_auc"), (2, "pooled_auc"), (3, "people"), (4, "machines"))}
                           for k in comp[0][1]}}


def parts(r: dict) -> list[tuple[str, bool, str]]:
    """The rule's S1 parts on the means over draws (README.md, "v15"; v16 reads the same parts)."""
    m = {k: r["mean_family_auc"][k]["mean"] for k in ("base", "candidate")}
    p = {k: r["pooled_auc"][k]["mean"] for k in ("base", "candidate")}
    d = {F: v["candidate"]["mean"] - v["base"]["mean"] for F, v in r["families"].items()}
    worst = min(d, key=d.get)
    people = r["people"]["candidate"]["mean"]
    return [("(a) mean per-family ROC-AUC at least the baseline's + 0.01", m["candidate"] - m["base"] >= 0.01,
             f"{m['candidate'] - m['base']:+.3f}"),
            ("(b) pooled ROC-AUC at least the baseline's", p["candidate"] >= p["base"],
             f"{p['candidate'] - p['base']:+.3f}"),
            ("(c) no family's mean ROC-AUC down by more than 0.05", d[worst] >= -0.05, f"worst {worst} {d[worst]:+.3f}"),
            ("(d) people's mean P(human) at least 0.5", people >= 0.5, f"{people:.3f}")]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("preds_dir", type=Path)
    ap.add_argument("frame_out")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--candidate-split", choices=CANDIDATE_SPLITS, default="family-keep-small",
                       help="the candidate side's calibration split (v15: family-keep-small; v16: family-out)")
    which.add_argument("--candidate-recipe", choices=CANDIDATE_RECIPES, default="",
                       help="instead: the voice split with the CNN trained by this recipe (v17: centre; v18: mask; v19: ep6; v20: base3; v21: tiny+base3, both networks averaged; v21's control: tiny+tiny-s1)")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    if len(a.seeds) < 2:
        ap.error("read at least two draws (--seeds): one draw is what v14 warned against")
    r = read(a.preds_dir, a.frame_out, a.seeds, a.candidate_split, a.candidate_recipe)
    label = f"CNN {a.candidate_recipe}" if a.candidate_recipe else a.candidate_split

    def c(x: dict) -> str:
        return f"{x['mean']:.3f} ({x['min']:.3f}-{x['max']:.3f})"

    print(f"{len(a.seeds)} draws (calibration seeds {a.seeds}); mean (min-max) over draws")
    print(f"{'held-out family':28} {'voice split':>22} {label:>22}")
    for F, v in r["families"].items():
        print(f"{F:28} {c(v['base']):>22} {c(v['candidate']):>22}")
    for key, label in (("mean_family_auc", "mean per-family"), ("pooled_auc", "pooled"),
                       ("people", "P(h) people"), ("machines", "P(h) machines")):
        print(f"{label:28} {c(r[key]['base']):>22} {c(r[key]['candidate']):>22}")
    print("diagnostic, outside the rule: each input alone (mean per-family / pooled ROC-AUC, people / machines P(h))")
    for k, v in r["components"].items():
        print(f"  {k:28} {c(v['mean_family_auc'])} / {c(v['pooled_auc'])}, "
              f"{v['people']['mean']:.2f} / {v['machines']['mean']:.2f}")
    ps = parts(r)
    for name, ok, why in ps:
        print(f"S1 {name}: {why} -> {'met' if ok else 'NOT met'}")
    met = all(ok for _, ok, _ in ps)
    print(f"S1: {'met' if met else 'NOT met'}")
    if a.json:
        a.json.write_text(json.dumps({"command": "python benchmarks/experiments/refit_v6/v15_lofo.py "
                                      + " ".join(argv if argv is not None else sys.argv[1:]), **r,
                                      "parts": [{"part": n, "met": ok, "figure": w} for n, ok, w in ps],
                                      "met": met}, indent=1))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
