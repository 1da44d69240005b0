"""The validity protocol cannot leak (issue 19): the sealed split is isolated from every fold,
a fold's calibration never sees its test rows, a seal is never re-drawn silently, and every
final run is logged."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livejudge.judge.training.protocol import (
    ProtocolError,
    append_final_log,
    check_nested,
    corpus_key,
    extend_sealed,
    final_log_entry,
    inner_folds,
    load_or_seal,
    open_rows,
    outer_folds,
    seal,
)


def corpus(n_fam: int, n_grp: int, per: int = 3, copies: bool = True) -> list[dict]:
    meta = []
    for f in range(n_fam):
        for k in range(per):
            meta.append({"label": "machine", "family": f"tts{f}", "group": f"voice{f}-{k % 2}"})
    for g in range(n_grp):
        for k in range(per):
            meta.append({"label": "human", "family": f"corpus{g % 2}", "group": f"spk{g}"})
        if copies:  # copy-synthesis of a human speaker: a machine row whose group is the speaker
            meta.append({"label": "machine", "family": "copysyn", "group": f"spk{g}"})
    return meta


@settings(max_examples=40, deadline=None)
@given(n_fam=st.integers(4, 9), n_grp=st.integers(4, 8), seed=st.integers(0, 1000), chunks=st.sampled_from([None, 2, 3]))
def test_no_fold_and_no_nested_calibration_touches_test_or_sealed_rows(n_fam, n_grp, seed, chunks):
    meta = corpus(n_fam, n_grp)
    sealed = seal(meta, 1, 1, seed=seed, never=["copysyn"])
    open_ = set(open_rows(meta, sealed).tolist())
    sealed_rows = {i for i, m in enumerate(meta) if sealed.is_sealed(m)}
    assert sealed_rows and not (open_ & sealed_rows)
    # a copy-synthesis of a sealed speaker's voice is sealed with the speaker
    assert all(i in sealed_rows for i, m in enumerate(meta) if m["group"] in sealed.groups)
    folds = list(outer_folds(meta, sealed, never_held_out=["copysyn"], group_chunks=chunks))
    assert len(folds) == (n_fam - 1) * (min(chunks, n_grp - 1) if chunks else n_grp - 1)
    for fold in folds:
        assert set(fold.train.tolist()).isdisjoint(fold.test.tolist())
        assert not (set(fold.train.tolist()) | set(fold.test.tolist())) & sealed_rows
        # the calibration of this fold comes from its inner folds' held-out rows only
        calib = np.unique(np.concatenate([f.test for f in inner_folds(meta, fold, ["copysyn"], chunks)]))
        check_nested(meta, sealed, fold, calib)  # raises on any leak
        assert set(calib.tolist()) <= set(fold.train.tolist())
        # the held-out speaker's copy-synthesis never trains the fold that tests the speaker
        assert not any(meta[i]["group"] in fold.groups for i in fold.train)
        assert {meta[i]["group"] for i in fold.test if meta[i]["label"] == "human"} == set(fold.groups)


def test_check_nested_catches_each_kind_of_leak():
    meta = corpus(5, 5)
    sealed = seal(meta, 1, 1, seed=0, never=["copysyn"])
    fold = next(outer_folds(meta, sealed, ["copysyn"]))
    with pytest.raises(ProtocolError, match="is a test row"):
        check_nested(meta, sealed, fold, fold.test[:1])
    s_row = next(i for i, m in enumerate(meta) if sealed.is_sealed(m))
    with pytest.raises(ProtocolError, match="is sealed"):
        check_nested(meta, sealed, fold, np.array([s_row]))
    # (a row of the held-out family in calibration is also a test row; both are caught)


def test_a_seal_is_kept_and_never_redrawn_over_another_corpus(tmp_path):
    meta = corpus(6, 6)
    p = tmp_path / "sealed.json"
    a = load_or_seal(p, meta, 2, 1, seed=3, never=["copysyn"])
    b = load_or_seal(p, meta, 2, 1, seed=99, never=["copysyn"])  # a later run: the stored seal, not a new draw
    assert a == b and len(a.families) == 2 and "copysyn" not in a.families
    with pytest.raises(ProtocolError, match="sealed on another corpus.*extend_sealed"):
        load_or_seal(p, corpus(7, 6), 2, 1)
    with pytest.raises(ProtocolError, match="at least two"):
        seal(corpus(3, 6), 2, 1, never=["copysyn"])


def _known(meta):
    return (sorted({m["family"] for m in meta if m["label"] == "machine"}),
            sorted({m["group"] for m in meta if m["label"] == "human"}))


def test_a_grown_corpus_keeps_every_sealed_item_and_opens_only_the_new_ones(tmp_path):
    old = corpus(6, 6)
    p = tmp_path / "sealed.json"
    first = load_or_seal(p, old, 2, 1, seed=3, never=["copysyn"])
    kf, kg = _known(old)
    grown = old + [{"label": "machine", "family": f"new{i}", "group": f"nv{i}"} for i in range(5)] \
        + [{"label": "human", "family": "corpusX", "group": "spkX"}]
    with pytest.raises(ProtocolError, match="reason"):
        extend_sealed(p, grown, known_families=kf, known_groups=kg, reason=" ")
    ext = extend_sealed(p, grown, known_families=kf, known_groups=kg, reason="gathered 5 demo pages",
                        seal_new_families=1, seed=7, never=["copysyn"])
    assert set(first.families) < set(ext.families) and ext.groups == first.groups
    (e,) = ext.extensions
    assert e["added_families"] == [f"new{i}" for i in range(5)] and e["added_groups"] == ["spkX"]
    assert len(e["newly_sealed_families"]) == 1 and e["newly_sealed_families"][0].startswith("new")
    assert e["from_key"] == first.corpus_key and e["to_key"] == corpus_key(grown) == ext.corpus_key
    # stored: a later plain run on the grown corpus reads it back, and no fold sees a sealed row
    assert load_or_seal(p, grown, 2, 1) == ext
    for fold in outer_folds(grown, ext, never_held_out=["copysyn"]):
        assert not any(ext.is_sealed(grown[i]) for i in np.concatenate([fold.train, fold.test]))
    # the same grown corpus again: nothing changes, nothing is drawn
    assert extend_sealed(p, grown, known_families=kf, known_groups=kg, reason="again") == ext


def test_an_extension_may_only_add(tmp_path):
    old = corpus(6, 6)
    p = tmp_path / "sealed.json"
    s = load_or_seal(p, old, 2, 1, seed=3, never=["copysyn"])
    kf, kg = _known(old)
    extra = [{"label": "machine", "family": "new0", "group": "nv0"}]
    no_sealed = [m for m in old if m["family"] != s.families[0]] + extra
    with pytest.raises(ProtocolError, match="sealed items missing"):
        extend_sealed(p, no_sealed, known_families=kf, known_groups=kg, reason="r")
    open_fam = next(f for f in kf if f not in s.families and f != "copysyn")
    shrunk = [m for m in old if m["family"] != open_fam] + extra
    with pytest.raises(ProtocolError, match="gone"):
        extend_sealed(p, shrunk, known_families=kf, known_groups=kg, reason="r")
    with pytest.raises(ProtocolError, match="not the corpus it was sealed on"):
        extend_sealed(p, old + extra, known_families=kf[:-1], known_groups=kg, reason="r")
    with pytest.raises(ProtocolError, match="at least two of the NEW families must stay open"):
        extend_sealed(p, old + extra, known_families=kf, known_groups=kg, reason="r", seal_new_families=1)
    with pytest.raises(ProtocolError, match="≥ 0"):
        extend_sealed(p, old + extra, known_families=kf, known_groups=kg, reason="r", seal_new_families=-1)
    with pytest.raises(ProtocolError, match="reason"):
        extend_sealed(p, old + extra, known_families=kf, known_groups=kg, reason=None)
    with pytest.raises(ProtocolError, match="nothing to extend"):
        extend_sealed(p.with_name("none.json"), old + extra, known_families=kf, known_groups=kg, reason="r")
    assert load_sealed_unchanged(p, s)


def load_sealed_unchanged(p, s) -> bool:
    """A refused extension leaves the stored seal as it was."""
    from livejudge.judge.training.protocol import load_sealed
    return load_sealed(p) == s


def test_every_final_run_is_logged(tmp_path):
    meta = corpus(5, 5)
    sealed = seal(meta, 1, 1)
    head = tmp_path / "head"
    head.mkdir()
    (head / "config.json").write_text("{}")
    log = tmp_path / "final.jsonl"
    e = final_log_entry({"auc": 0.7}, head_dir=head, sealed=sealed, command="x --final")
    assert append_final_log(log, e) == 1
    (head / "config.json").write_text('{"changed": 1}')
    e2 = final_log_entry({"auc": 0.9}, head_dir=head, sealed=sealed, command="x --final")
    assert append_final_log(log, e2) == 2 and e2["head_sha256"] != e["head_sha256"]
    rows = [json.loads(x) for x in log.read_text().splitlines()]
    assert [r["figures"]["auc"] for r in rows] == [0.7, 0.9] and rows[0]["sealed"]["families"] == list(sealed.families)


def test_no_shipped_head_names_a_reserved_source():
    from pathlib import Path

    from livejudge.judge.training.protocol import reserved_in

    heads = sorted((Path(__file__).resolve().parents[1] / "livejudge" / "judge" / "heads").glob("*/config.json"))
    assert len(heads) >= 3
    for cfg in heads:
        assert reserved_in(cfg.read_text()) == [], cfg
    assert reserved_in('{"sources": ["x: github:MbBrainz/ttslab@abc (MIT)"]}') == ["MbBrainz/ttslab"]
    assert reserved_in('"pyannote: pypi:pyannote-audio (package data sample.wav)"') == []
    assert reserved_in('"pyannote: github:pyannote/pyannote-audio tests/data/dev00.wav"') == ["pyannote/pyannote-audio:tests"]
