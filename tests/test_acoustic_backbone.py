"""The acoustic backbone (acoustic-v1) and its shipped heads (documented prior, fitted)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from livejudge.judge.features.backbones.acoustic import EVIDENCE_SOURCE, TEXT_DIMENSIONS, VECTOR_SPECS, AcousticBackbone
from livejudge.judge.features.backbones.base import Backbone, Embedding
from livejudge.judge.model.dimensions import DIMENSION_IDS
from livejudge.judge.features.acoustic import FEATURE_NAMES
from livejudge.judge.model.head import load_head
from livejudge.judge.model.judge import DEFAULT_ACOUSTIC_HEAD, PRIOR_ACOUSTIC_HEAD, load_judge
from livejudge.judge.training.prior import DIMENSION_WEIGHTS, TEXT_BEARING_DIMENSIONS, prior_head, write_prior
from livejudge.judge.features.text import TEXT_FEATURE_NAMES
from livejudge.session import snapshot_of_call
from livejudge.testing.dialogues import DialogueBuilder
from livejudge.timing.window import WindowSnapshot

USER = ["cmu_cards_005", "cmu_goforward", "cmu_numbers", "cmu_something", "cmu_cards_002"]
HUMAN_AGENT = [["librivox_austen_0870", "librivox_austen_0880", "librivox_austen_0890"],
               ["librivox_austen_0920", "librivox_austen_0930", "librivox_austen_0870"],
               ["cmu_numbers", "cmu_cards_005", "cmu_goforward"]]
MACHINE_AGENT = [["espeak_austen_0870", "espeak_austen_0880", "espeak_austen_0890"],
                 ["espeak_austen_0920", "espeak_austen_0930", "espeak_reply_01"],
                 ["espeak_reply_02", "espeak_reply_03", "espeak_reply_05"]]
GAPS = [0.3, 0.8, 0.5]  # identical timing for both kinds: only the agent's voice differs


def dialogue(agent_clips: list[str], seed: int) -> WindowSnapshot:
    b = DialogueBuilder(seed=seed)
    for i, a in enumerate(agent_clips):
        b.user(USER[(i + seed) % len(USER)], gap_s=0.4 if i else None)
        b.agent(a, gap_s=GAPS[i % len(GAPS)])
    return snapshot_of_call(b.build().call)


@pytest.fixture(scope="module")
def judged():
    j = load_judge("acoustic")
    out = {"human": [], "machine": []}
    for kind, sets in (("human", HUMAN_AGENT), ("machine", MACHINE_AGENT)):
        for s, clips in enumerate(sets):
            out[kind].append(j.judge([dialogue(clips, s)])[0])
    return out


def test_implements_the_backbone_protocol():
    bb = AcousticBackbone()
    assert isinstance(bb, Backbone)
    assert bb.name == "acoustic-v1"
    assert bb.readouts == ("features",)
    assert bb.embedding_dim == len(bb.feature_names) == len(FEATURE_NAMES) + len(TEXT_FEATURE_NAMES) == 36
    assert bb.feature_names == tuple(FEATURE_NAMES) + tuple(TEXT_FEATURE_NAMES)


def test_embedding_shape_evidence_and_reasons():
    bb = AcousticBackbone()
    w = dialogue(MACHINE_AGENT[0], 0)
    (e,) = bb.embed([w])
    assert isinstance(e, Embedding)
    v = e.vectors["features"]
    assert v.dtype == np.float32 and v.shape == (bb.embedding_dim,) and np.all(np.isfinite(v))
    assert set(e.evidence) == set(DIMENSION_IDS)
    for d, ev in e.evidence.items():
        if EVIDENCE_SOURCE[d][0] is None:
            assert ev.unit == "" and ev.amount == 0 and ev.reason, d
        else:
            assert ev.unit == "s" and ev.amount > 1.0, d
    # no transcripts: the text part of the vector is the text features' centres
    centres = np.array([f.centre for f in VECTOR_SPECS[len(FEATURE_NAMES):]], dtype=np.float32)
    assert np.array_equal(v[len(FEATURE_NAMES):], centres)
    assert not any(k.startswith("text_") for k in e.features)
    for d in TEXT_DIMENSIONS:
        assert "needs transcripts (livejudge[asr])" in e.evidence[d].reason, d
    # three agent turns of espeak speech, three responses from the ground-truth-free VAD path
    assert e.features["n_responses"] == 3
    assert 5.0 < e.features["speech_s"] < 20.0
    assert e.features["voiced_s"] <= e.features["speech_s"]


def test_silent_agent_has_no_evidence_and_the_judge_gates_everything():
    n = 10 * 16000
    rng = np.random.default_rng(0)
    w = WindowSnapshot(0.0, 10.0, user=(rng.standard_normal(n) * 1e-3).astype(np.float32),
                       agent=np.zeros(n, dtype=np.float32))
    j = load_judge("acoustic", head=PRIOR_ACOUSTIC_HEAD)
    (r,) = j.judge([w])
    assert all(d.gated and d.score == 3.0 and d.contribution == 0.0 for d in r.dimensions.values())
    assert r.classifier_p_human == pytest.approx(0.5)  # the prior's bias is 0
    assert r.p_human is None and r.to_dict()["p_human"] is None  # and it is not shown as a measurement
    # the fitted head: everything gated leaves only its fitted bias
    j = load_judge("acoustic")
    (r,) = j.judge([w])
    assert all(d.gated and d.contribution == 0.0 for d in r.dimensions.values())
    b = torch.from_numpy(j.head.classifier_bias)  # the judge runs a NumpyHead
    assert r.classifier_p_human == pytest.approx(float(torch.sigmoid(b[1] - b[0])), abs=1e-6)


def test_human_agents_get_higher_p_human_than_espeak(judged):
    ph = [r.p_human for r in judged["human"]]
    pm = [r.p_human for r in judged["machine"]]
    assert np.mean(ph) > np.mean(pm) + 0.2, (ph, pm)
    assert min(ph) > max(pm), (ph, pm)


@pytest.mark.parametrize("dim", ["intonation", "rhythm"])
def test_intonation_and_rhythm_scores_lean_the_right_way(judged, dim):
    sh = [r.dimensions[dim].score for r in judged["human"]]
    sm = [r.dimensions[dim].score for r in judged["machine"]]
    assert not any(r.dimensions[dim].gated for r in judged["human"] + judged["machine"])
    assert np.mean(sh) > 3.0
    assert np.mean(sh) > np.mean(sm) + 0.3


def test_prior_head_is_deterministic_and_documented(tmp_path):
    h1, c1 = prior_head()
    write_prior(tmp_path / "a")
    head, cfg = load_head(tmp_path / "a", expected_backbone="acoustic-v1", expected_dim=36)
    assert cfg.provenance == "prior" and cfg.feature_names == tuple(FEATURE_NAMES) + tuple(TEXT_FEATURE_NAMES)
    for k, v in h1.state_dict().items():
        assert torch.equal(v, head.state_dict()[k]), k
    # the shipped prior head is what prior.py writes, byte for byte (weights and config)
    shipped, scfg = load_head(PRIOR_ACOUSTIC_HEAD)
    for k, v in h1.state_dict().items():
        assert torch.equal(v, shipped.state_dict()[k]), k
    for f in ("config.json", "weights.safetensors"):
        assert (tmp_path / "a" / f).read_bytes() == (PRIOR_ACOUSTIC_HEAD / f).read_bytes(), f
    write_prior(tmp_path / "b")
    assert (tmp_path / "b" / "weights.safetensors").read_bytes() == (tmp_path / "a" / "weights.safetensors").read_bytes()
    doc = json.loads((PRIOR_ACOUSTIC_HEAD / "config.json").read_text())
    assert any("SPEARBench" in s for s in doc["sources"])
    assert any("HEURISTIC" in s and "word list" in s for s in doc["sources"])
    assert "prior" in doc["notes"].lower()
    assert doc["evidence_min"]["sycophant_behavior"] == 2.0 and doc["evidence_min"]["linguistic_imprecision"] == 50.0


def test_the_default_head_is_the_fitted_one_and_the_prior_stays_loadable():
    assert DEFAULT_ACOUSTIC_HEAD.name == "acoustic-fitted"
    assert load_judge("acoustic").config.name == "acoustic-fitted"
    assert load_judge("acoustic", head=PRIOR_ACOUSTIC_HEAD).config.provenance == "prior"


def test_prior_text_weights_are_the_documented_ones():
    head, _ = prior_head()
    W = head.odl.proj.weight.detach()
    names = [f.name for f in VECTOR_SPECS]

    def w(dim, feat):
        return float(W[DIMENSION_IDS.index(dim), names.index(feat)])

    # relative weights ("+" = more human), normalised to sum 1 per dimension
    assert w("use_of_fillers", "filler_rate_per_100w") == pytest.approx(0.5)
    assert w("use_of_fillers", "filled_pause_rate_per_min") == pytest.approx(0.5)
    assert w("linguistic_imprecision", "hedge_rate_per_100w") == pytest.approx(1 / 1.5)
    assert w("linguistic_imprecision", "self_correction_rate_per_100w") == pytest.approx(0.5 / 1.5)
    assert w("sycophant_behavior", "sycophancy_per_turn") == pytest.approx(-1.0)
    assert w("written_style_expression", "list_markers_per_turn") == pytest.approx(-0.6 / 1.5)
    assert w("written_style_expression", "formal_rate_per_100w") == pytest.approx(-0.6 / 1.5)
    assert w("written_style_expression", "mean_sentence_words") == pytest.approx(-0.3 / 1.5)
    assert w("textual_sentiment", "sentiment_compound_sd") == pytest.approx(0.5)
    assert w("textual_sentiment", "sentiment_mismatch_ratio") == pytest.approx(-0.5)
    assert float(W[DIMENSION_IDS.index("code_switching")].abs().sum()) == 0.0
    a = {d: float(head.classifier.weight.detach()[1, k]) * 2 for k, d in enumerate(DIMENSION_IDS)}
    assert a["use_of_fillers"] == pytest.approx(0.4) and a["linguistic_imprecision"] == pytest.approx(0.3)
    assert a["sycophant_behavior"] == pytest.approx(0.4) and a["written_style_expression"] == pytest.approx(0.4)
    assert a["textual_sentiment"] == pytest.approx(0.2) and a["code_switching"] == 0.0


def test_prior_weights_are_sparse_and_signed_by_human_direction():
    head, _ = prior_head()
    W = head.odl.proj.weight.detach()
    for k, d in enumerate(DIMENSION_IDS):
        for i, f in enumerate(VECTOR_SPECS):
            w = float(W[k, i])
            if f.dimension != d or f.human_sign == 0:
                assert w == 0.0, (d, f.name)
            elif w != 0.0:
                assert math.copysign(1, w) == f.human_sign
    wm = head.machine_weight().detach()
    signal = [d for d in DIMENSION_IDS if DIMENSION_WEIGHTS.get(d, 0.0) > 0]
    assert set(signal) >= {d for d in DIMENSION_IDS if EVIDENCE_SOURCE[d][0] is not None}
    for k, d in enumerate(DIMENSION_IDS):
        # human-like z pushes toward "human": weight toward machine is negative
        assert (float(wm[k]) < 0) if d in signal else (float(wm[k]) == 0.0)
    # symmetric classifier: W_machine + W_human = 0 (seed 000 §6.2.1 regulariser at its minimum)
    assert torch.allclose(head.classifier.weight.sum(0), torch.zeros(len(DIMENSION_IDS)))


FITTED = PRIOR_ACOUSTIC_HEAD.parent / "acoustic-fitted"


def test_fitted_head_keeps_the_prior_odl_and_fits_only_the_classifier():
    head, cfg = load_head(FITTED, expected_backbone="acoustic-v1", expected_dim=36)
    prior, _ = prior_head()
    assert cfg.provenance == "trained"
    assert "labels only" in cfg.training["method"] and "ODL" in cfg.training["method"]
    assert cfg.training["stage1"]["status"] == "kept" and cfg.training["stage2"]["status"] == "fitted"
    assert torch.equal(head.odl.proj.weight, prior.odl.proj.weight)
    for src in ("features",):
        m1, s1 = head.readout.normalisation(src)
        m0, s0 = prior.readout.normalisation(src)
        assert torch.equal(m1, m0) and torch.equal(s1, s0)
    wm = head.machine_weight().detach()
    for k, d in enumerate(DIMENSION_IDS):
        if d in cfg.training["unfitted_weights_zeroed"]:
            assert float(wm[k]) == 0.0, d
    # sign constraint: no human-like score counts as machine evidence
    assert torch.all(wm <= 0)
    # the text-bearing dimensions are not fitted: prior classifier weights and z statistics
    assert set(TEXT_BEARING_DIMENSIONS) == set(TEXT_DIMENSIONS) | {"use_of_fillers"}
    for d in TEXT_BEARING_DIMENSIONS:
        k = DIMENSION_IDS.index(d)
        assert torch.equal(head.classifier.weight[:, k], prior.classifier.weight[:, k]), d
        assert float(head.z_mean[k]) == 0.0 and float(head.z_std[k]) == 1.0, d
    assert "NOT fitted" in cfg.training["text_dimensions_kept_at_prior"]["why"]
    # the dimensions with published human-vs-machine gaps kept their direction after fitting
    for d in ("intonation", "rhythm", "pronunciation_instability"):
        assert float(wm[DIMENSION_IDS.index(d)]) < 0, d


def test_fitted_head_separates_the_test_dialogues():
    # sanity only: these agents are the clips the classifier was fitted on (validity on held-out
    # speakers and voices is benchmarks/judge_validity.py)
    j = load_judge("acoustic", head=FITTED)
    ph = [j.judge([dialogue(c, s)])[0].p_human for s, c in enumerate(HUMAN_AGENT)]
    pm = [j.judge([dialogue(c, s)])[0].p_human for s, c in enumerate(MACHINE_AGENT)]
    assert min(ph) > 0.5 > max(pm), (ph, pm)


def test_training_dialogues_use_only_seen_clips_and_balanced_labels():
    from livejudge.judge.training import prior as P

    windows, y = P.training_dialogues(n_per_class=2, seed=3)
    assert len(windows) == 4 and y.tolist() == [1, 1, 0, 0]
    assert not set(P.SEEN_HUMAN_CLIPS) & {"librivox_two_cities"}
    assert all(c.startswith("espeak_") for c in P.SEEN_MACHINE_CLIPS)


def test_per_turn_features_follow_each_agent_turn():
    b = DialogueBuilder(seed=4)
    gaps = [0.25, 1.4]
    b.user("cmu_cards_005")
    b.agent("librivox_austen_0870", gap_s=gaps[0])
    b.user("cmu_numbers", gap_s=0.5)
    b.agent("espeak_reply_02", gap_s=gaps[1])
    d = b.build()
    w = snapshot_of_call(d.call)
    per = AcousticBackbone().turn_features(w)
    assert len(per) == 2
    for (turn, res), gap, truth in zip(per, gaps, [p for p in d.truth.placed if p.channel == "agent"]):
        assert turn.onset_s == pytest.approx(truth.onset_s, abs=0.05)
        assert res.values["response_latency_mean_s"] == pytest.approx(gap, abs=0.05)
        assert res.voiced_s > 1.0
    # the human turn's pitch varies more than the espeak turn's
    assert per[0][1].values["f0_sd_st"] > per[1][1].values["f0_sd_st"]


def test_frame_cache_gives_identical_features_over_overlapping_windows():
    """Windows every 2 s over the last 30 s reuse each frame's analysis (FrameCache); every
    feature must be bit-identical to the uncached analysis, and a different call's audio at the
    same absolute frames must never be taken from the cache."""
    from livejudge.judge.features.acoustic import FrameCache, extract_features
    from livejudge.session import Session, SessionConfig, stream_call
    from livejudge.testing.dialogues import example_dialogue

    def windows(seed):
        s = Session(SessionConfig(judge_mode="every"))
        stream_call(s, example_dialogue(seed=seed).call)
        return [s.snapshot(t) for t in np.arange(12.0, s.now_s, 2.0)]

    cache = FrameCache()
    for seed in (0, 1):  # the second call reuses the cache: same absolute frames, other audio
        for w in windows(seed):
            args = dict(start_s=w.start_s, segments=w.segments_of("agent"), turns=w.turns_of("agent"),
                        transitions=w.transitions, barge_ins=w.barge_ins)
            a = extract_features(w.agent, **args)
            b = extract_features(w.agent, frame_cache=cache, **args)
            assert a.values.keys() == b.values.keys()
            for k in a.values:
                assert (a.values[k] == b.values[k]) or (np.isnan(a.values[k]) and np.isnan(b.values[k])), k
            assert (a.voiced_s, a.speech_s, a.n_units, a.n_periods) == (b.voiced_s, b.speech_s, b.n_units, b.n_periods)
    assert cache.hits > 5 * cache.misses  # most frames came from the cache
