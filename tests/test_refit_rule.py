"""benchmarks/experiments/refit_v6/rule.py refuses results it cannot compare (issue 19): a blend
candidate must have been blended with its declared weight and with the shipped head's weights, and
a blended LOFO run is never read as a plain refit; the stored v6/v7 results stay comparable."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RES = ROOT / "benchmarks" / "results"


def _rule():
    spec = importlib.util.spec_from_file_location("refit_rule", ROOT / "benchmarks/experiments/refit_v6/rule.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _stored(name: str) -> dict:
    return json.loads((RES / f"{name}.json").read_text())


@pytest.fixture()
def v7():
    return (_stored("judge_lofo_protocol_v7"), _stored("judge_wild_measure_only_batch2_shipped"),
            _stored("judge_wild_measure_only_batch4_v7"))


def test_the_stored_v7_results_are_comparable_and_read_as_not_met(v7):
    rule = _rule()
    assert rule.same_inputs(*v7) == []
    parts = dict((n, ok) for n, ok, _ in rule.evaluate(*v7, wideband_people=True))
    assert parts["R1 never-met families, people neither head met"] and not parts["R1w the same without narrowband people"]


def test_a_blend_is_checked_for_its_weight_and_its_member(v7):
    rule = _rule()
    lofo, shipped, cand = v7
    digest = rule.COMPARED_WITH  # whisper-fitted 0.1.0's weights, which every candidate here was compared with
    b = copy.deepcopy(lofo)
    b["blend_compare"] = {"weight": 0.5, "compare_head_weights_sha256_16": digest}
    assert rule.same_inputs(b, shipped, cand, blend=0.5) == []
    assert rule.same_inputs(b, shipped, cand) == ["the LOFO run is a blend, but this candidate was not declared one"]
    assert rule.same_inputs(lofo, shipped, cand, blend=0.5) == [
        "the LOFO run blended with weight None, not the declared 0.5", "the LOFO run's compare head weights are not the shipped head's"]
    b["blend_compare"] = {"weight": 0.3, "compare_head_weights_sha256_16": "0" * 16}
    assert len(rule.same_inputs(b, shipped, cand, blend=0.5)) == 2


def test_a_compare_head_whose_weights_are_not_the_shipped_heads_is_refused(v7):
    rule = _rule()
    lofo, shipped, cand = copy.deepcopy(v7)
    lofo["compare_head"]["weights_sha256_16"] = "f" * 16
    assert "the LOFO run's compare head weights are not the shipped head's (sha256 differs)" in rule.same_inputs(lofo, shipped, cand)


def test_r5_reads_the_fifth_batch_commercial_engines_against_the_people(v7):
    """R5 (declared for v9blend): the candidate's pooled ROC-AUC of the fifth batch's commercial
    engines against the people must reach the shipped head's in both conditions. On the stored runs
    (v7 as the candidate, the transfer diagnostic) it is met, and read the other way round it is not;
    a fifth-batch run of another head than the LOFO run shipped is refused."""
    rule = _rule()
    shipped5, v7_5 = _stored("judge_wild_measure_only_batch5_shipped"), _stored("judge_wild_measure_only_batch5_v7")
    aucs = {c: (rule.fifth_batch_auc(shipped5, c), rule.fifth_batch_auc(v7_5, c)) for c in rule.CONDITIONS}
    assert 0.69 <= aucs["wideband"][0] < 0.71 and 0.89 <= aucs["wideband"][1] < 0.91, aucs  # fig:commercial_transfer
    r5 = [(n, ok) for n, ok, _ in rule.evaluate(*v7, wideband_people=True, fifth=(shipped5, v7_5)) if n.startswith("R5")]
    assert [ok for _, ok in r5] == [True, True]
    r5 = [ok for n, ok, _ in rule.evaluate(*v7, wideband_people=True, fifth=(v7_5, shipped5)) if n.startswith("R5")]
    assert r5 == [False, False]
    lofo = v7[0]
    assert rule.same_fifth_batch_inputs(lofo, shipped5, v7_5) == []  # v7's LOFO run shipped /work/exp/v7/head
    other = copy.deepcopy(v7_5)
    other["command"] = other["command"].replace("/work/exp/v7/head", "/work/exp/other/head")
    assert any("not the LOFO run's --ship head" in b for b in rule.same_fifth_batch_inputs(lofo, shipped5, other))
