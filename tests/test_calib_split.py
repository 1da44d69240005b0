"""benchmarks/judge_lofo.py ``calib_split``: the calibration part of a fold's training rows.

Round 3's finding (benchmarks/experiments/refit_v6/README.md, "v13 result"): drawn over all
families at once (``by="voice"``, every stored run), a family with a single voice can be drawn
whole into calibration and never be fitted on. ``by="family"`` draws within each family and
human group and never takes the only voice. Both stay nested: only the fold's training rows are
read, whole voices go one way."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def jl():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("judge_lofo_cs", ROOT / "benchmarks" / "judge_lofo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _meta():
    """Rows of a small corpus: machine families with 1, 2 and 5 voices, human groups with 1 and 4
    people, 3 rows per voice."""
    rows = []
    fams = {"piper": ["p0"], "vits": ["v0", "v1"], "kokoro": [f"k{i}" for i in range(5)]}
    groups = {"lone": ["h0"], "meet": [f"m{i}" for i in range(4)]}
    for fam, voices in fams.items():
        for v in voices:
            rows += [{"label": "machine", "family": fam, "group": fam, "speaker": v}] * 3
    for g, people in groups.items():
        for v in people:
            rows += [{"label": "human", "family": g, "group": g, "speaker": v}] * 3
    return rows


def _parts(meta, train, cal):
    fit_v = {(meta[i]["label"], meta[i]["speaker"]) for i, c in zip(train, cal) if not c}
    cal_v = {(meta[i]["label"], meta[i]["speaker"]) for i, c in zip(train, cal) if c}
    return fit_v, cal_v


def test_voice_split_can_take_a_single_voice_family_out_of_the_fit(jl):
    """The flaw, shown on this corpus: some seed draws piper's only voice into calibration."""
    meta = _meta()
    train = np.arange(len(meta))
    lost = [s for s in range(40)
            if ("machine", "p0") in _parts(meta, train, jl.calib_split(meta, train, s))[1]]
    assert lost, "expected some seed to draw the single piper voice into calibration"


@pytest.mark.parametrize("by", ["voice", "family", "family-keep-small", "family-out"])
def test_calibration_reads_only_training_rows_and_keeps_voices_whole(jl, by):
    meta = _meta()
    test = np.array([i for i, m in enumerate(meta) if m["family"] == "kokoro" and m["speaker"] == "k4"])
    train = np.array([i for i in range(len(meta)) if i not in set(test.tolist())])
    for seed in range(20):
        cal = jl.calib_split(meta, train, seed, by)
        assert cal.dtype == bool and cal.shape == train.shape
        fit_v, cal_v = _parts(meta, train, cal)
        assert fit_v and cal_v and not fit_v & cal_v  # whole voices, both parts non-empty
        assert ("machine", "k4") not in fit_v | cal_v  # the fold's test voice is in neither part
        for lab in ("human", "machine"):  # each class has a calibration voice and a fitted voice
            assert any(v[0] == lab for v in cal_v) and any(v[0] == lab for v in fit_v)


def test_family_split_keeps_every_family_and_group_in_the_fit(jl):
    meta = _meta()
    train = np.arange(len(meta))
    for seed in range(40):
        fit_v, cal_v = _parts(meta, train, jl.calib_split(meta, train, seed, "family"))
        for key in ("piper", "vits", "kokoro", "lone", "meet"):
            voices = {(m["label"], m["speaker"]) for m in meta if m["family"] == key}
            assert voices & fit_v, (seed, key)  # every family and group is fitted on
            if len(voices) >= 2:
                assert voices & cal_v, (seed, key)  # and, with 2+ voices, calibrated on
            else:
                assert not voices & cal_v, (seed, key)  # its only voice is never taken
        # 25 % of each family's voices, rounded, at least one: kokoro 1 of 5, meet 1 of 4, vits 1 of 2
        assert len(cal_v) == 3


def test_keep_small_split_takes_nothing_from_families_of_under_four_voices(jl):
    """``family-keep-small``: piper (1 voice), vits (2) and the lone group (1) stay whole in the fit;
    kokoro (5) and meet (4) each give 25 %, rounded, one voice."""
    meta = _meta()
    train = np.arange(len(meta))
    draws = set()
    for seed in range(40):
        fit_v, cal_v = _parts(meta, train, jl.calib_split(meta, train, seed, "family-keep-small"))
        for key in ("piper", "vits", "lone"):
            voices = {(m["label"], m["speaker"]) for m in meta if m["family"] == key}
            assert voices <= fit_v and not voices & cal_v, (seed, key)
        assert sorted(v[1][0] for v in cal_v) == ["k", "m"], (seed, cal_v)
        draws.add(frozenset(cal_v))
    assert len(draws) > 1  # the seed still picks which voice


def test_family_out_split_holds_whole_machine_families_for_calibration(jl):
    """``family-out`` (v16): of 3 machine families, 25 % rounded = one, whole, goes to calibration
    and the other two wholly to the fit; the people are drawn as ``family`` (meet gives 1 of 4, the
    lone group's only person stays in the fit); one machine family alone is never taken whole."""
    meta = _meta()
    train = np.arange(len(meta))
    held = set()
    for seed in range(40):
        fit_v, cal_v = _parts(meta, train, jl.calib_split(meta, train, seed, "family-out"))
        whole = [f for f in ("piper", "vits", "kokoro")
                 if {(m["label"], m["speaker"]) for m in meta if m["family"] == f} <= cal_v]
        fitted = [f for f in ("piper", "vits", "kokoro")
                  if {(m["label"], m["speaker"]) for m in meta if m["family"] == f} <= fit_v]
        assert len(whole) == 1 and len(fitted) == 2, (seed, cal_v)
        held.add(whole[0])
        people = {v for v in cal_v if v[0] == "human"}
        assert len(people) == 1 and next(iter(people))[1].startswith("m"), (seed, people)
    assert held == {"piper", "vits", "kokoro"}  # the seed picks which family
    one = [i for i, m in enumerate(meta) if m["label"] == "human" or m["family"] == "kokoro"]
    fit_v, cal_v = _parts(meta, one, jl.calib_split(meta, np.array(one), 0, "family-out"))
    assert {v for v in cal_v if v[0] == "machine"} and {v for v in fit_v if v[0] == "machine"}


def test_the_split_reaches_every_fit_of_a_fold(jl, monkeypatch):
    """``fold_predict(..., split_by=)`` hands the split to the outer fit and every inner fit (the
    nested Platt step's heads), and ``--calib-split`` is a choice of the CLI."""
    seen = []

    def fake_fit_predict(X, G, y, meta, train_idx, test_idx, seed, l2, split_by="voice"):
        seen.append(split_by)
        return np.full(len(test_idx), 0.5), None

    monkeypatch.setattr(jl, "fit_predict", fake_fit_predict)
    monkeypatch.setattr("livejudge.judge.training.protocol.inner_folds",
                        lambda meta, fold, never, chunks: [type("F", (), {"train": np.r_[0:6, 30:36], "test": np.r_[6:8, 36:38]})()])
    monkeypatch.setattr("livejudge.judge.training.protocol.check_nested", lambda *a: None)
    meta = _meta()
    y = np.array([1 if m["label"] == "human" else 0 for m in meta])
    fold = type("Fold", (), {"train": np.r_[0:20, 27:39], "test": np.r_[20:27]})()
    assert set(y[fold.train].tolist()) == {0, 1}
    jl.fold_predict(None, None, y, meta, fold, None, 0, 0.3, True, split_by="family")
    assert seen and set(seen) == {"family"} and len(seen) == 2
    with pytest.raises(ValueError, match="calibration split 'speaker'"):
        jl.calib_split(meta, np.arange(len(meta)), 0, "speaker")
    assert jl.CALIB_SPLITS == ("voice", "family", "family-keep-small", "family-out")
