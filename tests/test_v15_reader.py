"""benchmarks/experiments/refit_v6/v15_lofo.py: v15's S1 reader (README.md there, "v15"), on small
made-up fold predictions whose ROC-AUCs are known: it blends each side per draw, reads every figure
as a mean over draws, and its parts pass and fail where the rule says."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
FAMS = ["fa", "fb", "fc"]


@pytest.fixture(scope="module")
def v15():
    d = ROOT / "benchmarks" / "experiments" / "refit_v6"
    sys.path.insert(0, str(d))
    spec = importlib.util.spec_from_file_location("v15_lofo_t", d / "v15_lofo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _write(tmp: Path, good: dict[str, float], seeds=(0, 1), cand: str = "family-keep-small") -> tuple[Path, Path]:
    """Per fold (one held-out family) 4 people and 4 machines. ``good[side]``: how many of each fold's
    machines score below every person (4 = ROC-AUC 1.0, 0 = 0.0 on that fold). The candidate side
    (split ``cand``) of family fb gets ``good['fb']`` instead."""
    pd, fo = tmp / "preds", tmp / "frames"
    pd.mkdir(exist_ok=True)
    fo.mkdir(exist_ok=True)
    meta, fold, idx = [], [], []
    for k, f in enumerate(FAMS):
        for lab in ["human"] * 4 + ["machine"] * 4:
            idx.append(len(meta))
            fold.append(k)
            meta.append([lab, f if lab == "machine" else "g", "g", f"{f}{len(meta)}"])
    meta, fold, idx = np.array(meta), np.array(fold), np.array(idx)

    def p_for(n_good: int) -> np.ndarray:
        p = []
        for _ in FAMS:
            p += [0.7] * 4 + [0.2] * n_good + [0.9] * (4 - n_good)
        return np.array(p)

    for s in seeds:
        for side, (split, tag) in (("base", ("voice", "frame_cnn_stage2_extra_ctlrepro_cs{s}")),
                                   ("candidate", (cand, f"frame_cnn_stage2_extra_ctlrepro_split{cand}" + "_cs{s}"))):
            p = p_for(good[side])
            if side == "candidate" and "fb" in good:
                p[8:16] = p_for(good["fb"])[8:16]
            np.savez(pd / f"preds_{split}_s{s}.npz", fold=fold, idx=idx, p=p, families=np.array(FAMS), meta=meta)
            np.savez(fo / f"preds_{tag.format(s=s)}.npz", fold=fold, idx=idx, p=p, families=np.array(FAMS))
    return pd, fo


def test_a_better_split_meets_the_rule_and_figures_are_means_over_draws(v15, tmp_path):
    pd, fo = _write(tmp_path, {"base": 2, "candidate": 4})
    out = tmp_path / "r.json"
    assert v15.main([str(pd), str(fo), "--seeds", "0", "1", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["seeds"] == [0, 1] and r["met"] is True
    assert r["mean_family_auc"]["base"]["mean"] == pytest.approx(0.5)  # 2 of 4 machines below: 0.5
    assert r["mean_family_auc"]["candidate"] == {"mean": pytest.approx(1.0), "min": pytest.approx(1.0),
                                           "max": pytest.approx(1.0), "n": 2}
    assert set(r["families"]) == set(FAMS)
    assert [p["met"] for p in r["parts"]] == [True, True, True, True]
    # the diagnostic reads each input alone: here both inputs of a side are the same predictions
    assert set(r["components"]) == {"base/readout", "base/cnn", "candidate/readout", "candidate/cnn"}
    assert r["components"]["base/cnn"]["mean_family_auc"]["mean"] == pytest.approx(0.5)
    assert r["components"]["candidate/readout"]["pooled_auc"]["mean"] == pytest.approx(1.0)


def test_one_family_falling_fails_part_c(v15, tmp_path):
    pd, fo = _write(tmp_path, {"base": 4, "candidate": 4, "fb": 2})
    out = tmp_path / "r.json"
    assert v15.main([str(pd), str(fo), "--json", str(out), "--seeds", "0", "1"]) == 1
    r = json.loads(out.read_text())
    parts = {p["part"][:3]: p for p in r["parts"]}
    assert not parts["(c)"]["met"] and "fb -0.500" in parts["(c)"]["figure"]
    assert not parts["(a)"]["met"]  # the mean over families fell too


def test_draws_on_other_rows_and_a_single_draw_are_refused(v15, tmp_path):
    pd, fo = _write(tmp_path, {"base": 2, "candidate": 4})
    with pytest.raises(SystemExit):
        v15.main([str(pd), str(fo), "--seeds", "0"])  # one draw: argparse error
    f = fo / "preds_frame_cnn_stage2_extra_ctlrepro_cs1.npz"
    d = dict(np.load(f))
    d["idx"] = d["idx"][::-1].copy()
    np.savez(f, **d)
    with pytest.raises(SystemExit, match="not comparable"):
        v15.main([str(pd), str(fo), "--seeds", "0", "1"])


def test_v16_reads_the_family_out_files_with_the_same_parts(v15, tmp_path):
    """``--candidate-split family-out`` (v16) reads preds_family-out_s<s>.npz and the CNN's
    ``_splitfamily-out_`` files against the same voice baseline, and records the split it read."""
    pd, fo = _write(tmp_path, {"base": 2, "candidate": 4}, cand="family-out")
    out = tmp_path / "r16.json"
    assert v15.main([str(pd), str(fo), "--seeds", "0", "1", "--candidate-split", "family-out", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["candidate_split"] == "family-out" and r["met"] is True
    assert r["mean_family_auc"]["candidate"]["mean"] == pytest.approx(1.0)
    with pytest.raises(FileNotFoundError):  # v15's default split has no files here
        v15.main([str(pd), str(fo), "--seeds", "0", "1"])


def test_v17_reads_the_recipe_network_beside_the_baselines_own_readout(v15, tmp_path):
    """``--candidate-recipe centre`` (v17) blends the baseline's own readout (preds_voice_s<s>.npz)
    with the CNN file ``_recipecentre_``: a network whose every fold is perfect lifts the blend to 1.0
    while the candidate's readout reads what the baseline's does."""
    pd, fo = _write(tmp_path, {"base": 2, "candidate": 2})
    for s in (0, 1):
        d = dict(np.load(fo / f"preds_frame_cnn_stage2_extra_ctlrepro_cs{s}.npz"))
        d["p"] = np.array(([0.7] * 4 + [0.2] * 4) * len(FAMS))
        np.savez(fo / f"preds_frame_cnn_stage2_extra_ctlrepro_recipecentre_cs{s}.npz", **d)
    out = tmp_path / "r17.json"
    assert v15.main([str(pd), str(fo), "--seeds", "0", "1", "--candidate-recipe", "centre", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["candidate_recipe"] == "centre" and r["candidate_split"] == "voice" and r["met"] is True
    assert r["mean_family_auc"]["base"]["mean"] == pytest.approx(0.5)
    assert r["mean_family_auc"]["candidate"]["mean"] == pytest.approx(1.0)
    c = r["components"]
    assert c["candidate/readout"]["mean_family_auc"]["mean"] == pytest.approx(c["base/readout"]["mean_family_auc"]["mean"])
    assert c["candidate/cnn"]["mean_family_auc"]["mean"] == pytest.approx(1.0)
    with pytest.raises(FileNotFoundError):  # v18's files were never written here
        v15.main([str(pd), str(fo), "--seeds", "0", "1", "--candidate-recipe", "mask"])
    with pytest.raises(SystemExit):  # a split and a recipe at once: which candidate? (argparse error)
        v15.main([str(pd), str(fo), "--seeds", "0", "1", "--candidate-recipe", "centre", "--candidate-split", "family-out"])


def test_v21_averages_the_baselines_tiny_network_and_the_base_network(v15, tmp_path):
    """``--candidate-recipe tiny+base3`` (v21) reads two CNN files, the baseline's own
    (``_ctlrepro_cs<s>``) and v20's (``_recipebase3_``), averages their P(human) per row, then
    blends with the baseline's own readout: the CNN input it reports is exactly that average."""
    pd, fo = _write(tmp_path, {"base": 2, "candidate": 2})
    for s in (0, 1):
        d = dict(np.load(fo / f"preds_frame_cnn_stage2_extra_ctlrepro_cs{s}.npz"))
        d["p"] = np.array(([0.9] * 4 + [0.1] * 4) * len(FAMS))
        np.savez(fo / f"preds_frame_cnn_stage2_extra_ctlrepro_recipebase3_cs{s}.npz", **d)
    inputs: dict = {}
    y, fam, p = v15.draw(pd, str(fo), 0, inputs, recipe="tiny+base3")
    tiny = np.load(fo / "preds_frame_cnn_stage2_extra_ctlrepro_cs0.npz")["p"]
    np.testing.assert_allclose(inputs["candidate/cnn"], (tiny + np.array(([0.9] * 4 + [0.1] * 4) * len(FAMS))) / 2)
    np.testing.assert_allclose(inputs["candidate/readout"], inputs["base/readout"])
    out = tmp_path / "r21.json"
    v15.main([str(pd), str(fo), "--seeds", "0", "1", "--candidate-recipe", "tiny+base3", "--json", str(out)])
    assert json.loads(out.read_text())["candidate_recipe"] == "tiny+base3"
