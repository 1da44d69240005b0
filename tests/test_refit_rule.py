"""benchmarks/experiments/refit_v6/rule.py refuses results it cannot compare (issue 19): a blend
candidate must have been blended with its declared weight and with the shipped head's weights, and
a blended LOFO run is never read as a plain refit; the stored v6/v7 results stay comparable."""

from __future__ import annotations

import copy
import hashlib
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
    digest = hashlib.sha256((ROOT / "livejudge/judge/heads/whisper-fitted/weights.safetensors").read_bytes()).hexdigest()[:16]
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
