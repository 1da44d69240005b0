"""The acoustic-v1 backbone reads the agent's transcripts: text dimensions, gating, display."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from livejudge.events import TurnTranscript
from livejudge.judge.features.backbones.acoustic import CODE_SWITCHING_NOTE, TEXT_DIMENSIONS, AcousticBackbone
from livejudge.judge.features.acoustic import FEATURE_NAMES
from livejudge.judge.model.judge import DEFAULT_ACOUSTIC_HEAD, PRIOR_ACOUSTIC_HEAD, load_judge
from livejudge.judge.features.text import TEXT_EVIDENCE_MIN, count_words, langid_available
from livejudge.session import snapshot_of_call
from livejudge.testing.dialogues import DialogueBuilder
from livejudge.timing.window import WindowSnapshot

# Human-like: hedges, fillers, a self-correction, short plain sentences, no lists or flattery.
HEDGY = [
    "Um, I think the shop is, uh, probably still open. I mean, maybe not on Sundays.",
    "Uh, it was kind of far, I guess. You know, maybe twenty minutes? Sorry, I meant thirty.",
    "Hmm, I'm not sure. I suppose it depends, like, on the traffic. Probably fine though.",
    "Well, um, perhaps we could go earlier. I think that sort of works, I guess.",
]
# Machine-like: agreement, thanks, praise and apologies in every turn, lists, formal register.
SYCOPHANTIC = [
    "Great question! Absolutely, you're absolutely right. Thank you for asking. Here are three options: "
    "first, the downtown branch; second, the airport branch; finally, the online store.",
    "I'm so sorry for the inconvenience. Thank you for your patience. Furthermore, I'd be happy to assist "
    "you. Additionally, please note that the following steps are required in order to proceed.",
    "Certainly! That's a great idea. Firstly, regarding your account, I have verified the details. "
    "Secondly, I will facilitate the transfer. Lastly, feel free to contact us. Thank you so much!",
    "Of course, I completely understand. I apologize for any confusion. Here is a list of the options: "
    "1. Refund. 2. Exchange. 3. Store credit. Thank you, and rest assured we will help.",
]
TEXT_SCORED = ("linguistic_imprecision", "sycophant_behavior", "written_style_expression")


@pytest.fixture(scope="module")
def base_window() -> WindowSnapshot:
    """A 4-exchange call with an espeak agent (audio identical for every variant below)."""
    b = DialogueBuilder(seed=11)
    users = ["cmu_cards_005", "cmu_goforward", "cmu_numbers", "cmu_something"]
    agents = ["espeak_reply_01", "espeak_reply_02", "espeak_reply_03", "espeak_reply_04"]
    for i, (u, a) in enumerate(zip(users, agents)):
        b.user(u, gap_s=0.5 if i else None)
        b.agent(a, gap_s=0.6)
    return snapshot_of_call(b.build().call)


def with_text(w: WindowSnapshot, texts: list[str]) -> WindowSnapshot:
    """The same window with the given texts as transcripts of its agent turns (in order)."""
    turns = w.turns_of("agent")
    assert len(turns) >= len(texts)
    tr = tuple(TurnTranscript("agent", t.onset_s, t.offset_s, x, count_words(x), "en")
               for t, x in zip(turns, texts))
    return dataclasses.replace(w, transcripts=tr)


@pytest.fixture(scope="module", params=["fitted", "prior"])
def judge(request):
    return load_judge("acoustic", head=DEFAULT_ACOUSTIC_HEAD if request.param == "fitted" else PRIOR_ACOUSTIC_HEAD)


def test_the_texts_are_long_enough_to_count():
    for texts in (HEDGY, SYCOPHANTIC):
        n = sum(count_words(x) for x in texts)
        assert n >= TEXT_EVIDENCE_MIN["linguistic_imprecision"] and n >= TEXT_EVIDENCE_MIN["written_style_expression"]
        assert len(texts) >= TEXT_EVIDENCE_MIN["sycophant_behavior"]


def test_text_dimensions_open_with_transcripts_and_lean_the_right_way(judge, base_window):
    (rh,) = judge.judge([with_text(base_window, HEDGY)])
    (rs,) = judge.judge([with_text(base_window, SYCOPHANTIC)])
    for d in TEXT_SCORED + ("textual_sentiment",):
        for r in (rh, rs):
            ds = r.dimensions[d]
            assert not ds.gated, (d, ds.reason)
            assert ds.evidence_unit in ("words", "turns") and ds.evidence >= TEXT_EVIDENCE_MIN[d], d
    assert rh.dimensions["sycophant_behavior"].evidence == 4 and rh.dimensions["sycophant_behavior"].evidence_unit == "turns"
    assert rh.dimensions["linguistic_imprecision"].evidence == sum(count_words(x) for x in HEDGY)
    for d in TEXT_SCORED:
        assert rh.dimensions[d].score > 3.0 > rs.dimensions[d].score, (d, rh.dimensions[d].score, rs.dimensions[d].score)
        # contribution toward "machine": negative for human-like text, positive for sycophantic lists
        assert rh.dimensions[d].contribution < 0 < rs.dimensions[d].contribution, d
    # fillers: same acoustic evidence (seconds), the text filler rate moves z
    fh, fs = rh.dimensions["use_of_fillers"], rs.dimensions["use_of_fillers"]
    assert fh.evidence_unit == fs.evidence_unit == "s" and fh.evidence == fs.evidence
    assert fh.z > fs.z
    assert rh.p_human > rs.p_human


def test_without_transcripts_the_text_dimensions_stay_gated_with_the_reason(judge, base_window):
    """Each text dimension the head measures says it needs transcripts; one it does not measure
    (code_switching: no weight) says that instead, since transcripts would not make it count."""
    (r,) = judge.judge([base_window])
    off = judge.info()["dimensions"]["not_measured"]
    assert "code_switching" in off and any(d not in off for d in TEXT_DIMENSIONS)
    for d in TEXT_DIMENSIONS:
        ds = r.dimensions[d]
        assert ds.gated and ds.score == 3.0 and ds.contribution == 0.0, d
        want = f"not measured: {off[d]}" if d in off else "needs transcripts (livejudge[asr])"
        assert want in ds.reason, (d, ds.reason)


def test_transcripts_below_the_minimum_change_nothing(judge, base_window):
    short = with_text(base_window, ["Sure, happy to help."])  # 4 words, 1 turn: below every minimum
    (r0,) = judge.judge([base_window])
    (r1,) = judge.judge([short])
    assert r1.p_human == r0.p_human  # exactly: gated = contribution exactly 0, text vector at centres
    for d in TEXT_DIMENSIONS:
        assert r1.dimensions[d].gated and r1.dimensions[d].contribution == 0.0, d
    assert r1.dimensions["sycophant_behavior"].evidence_unit == "turns"
    assert "1 turns < 2 turns needed" in r1.dimensions["sycophant_behavior"].reason
    assert r1.dimensions["use_of_fillers"].z == r0.dimensions["use_of_fillers"].z


def test_vector_and_display_features(base_window):
    bb = AcousticBackbone()
    (e0,) = bb.embed([base_window])
    (e1,) = bb.embed([with_text(base_window, SYCOPHANTIC)])
    n = len(FEATURE_NAMES)
    v0, v1 = e0.vectors["features"], e1.vectors["features"]
    assert v1.shape == (36,) and v1.dtype == np.float32
    assert np.array_equal(v0[:n], v1[:n])  # the acoustic part does not depend on the words
    assert not np.array_equal(v0[n:], v1[n:])
    i = bb.feature_names.index("sycophancy_per_turn")
    assert v1[i] > 1.0
    # display: the measured value; vector: clipped to centre ± 3 spreads (0.5 + 3 · 0.4)
    assert e1.features["text_sycophancy_per_turn"] > float(v1[i]) == pytest.approx(1.7)
    assert e1.features["text_n_words"] == sum(count_words(x) for x in SYCOPHANTIC)
    assert e1.features["text_n_turns"] == 4 and e1.features["text_n_list_markers"] >= 6


@pytest.mark.skipif(not langid_available(), reason="needs py3langid (livejudge[asr])")
def test_code_switching_shows_evidence_but_stays_neutral(judge, base_window):
    texts = ["I can book the table for you tonight at eight o'clock.",
             "Claro que sí, podemos reservar la mesa para cuatro personas esta noche.",
             "The restaurant is near the station, about five minutes on foot.",
             "Muchas gracias por llamar, que tenga una buena noche con su familia."]
    (r,) = judge.judge([with_text(base_window, texts)])
    cs = r.dimensions["code_switching"]
    # no weight in the head: gated (score exactly 3, contribution exactly 0), evidence and note shown
    assert cs.gated and cs.evidence_unit == "turns" and cs.evidence >= 2
    assert cs.contribution == 0.0 and cs.score == 3.0
    assert cs.reason == CODE_SWITCHING_NOTE and "weight 0" in cs.reason


def test_without_vader_textual_sentiment_is_gated_not_an_error(monkeypatch, base_window):
    from livejudge.judge.features import text as tf

    monkeypatch.setattr(tf, "vader_available", lambda: False)
    (e,) = AcousticBackbone().embed([with_text(base_window, SYCOPHANTIC)])
    ev = e.evidence["textual_sentiment"]
    assert ev.unit == "" and "vaderSentiment" in ev.reason
    assert e.evidence["sycophant_behavior"].amount == 4  # the other text dimensions still count
