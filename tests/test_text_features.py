"""Text features on transcripts with known answers (counts written out by hand per phrase)."""

import math

import numpy as np
import pytest

from livejudge.events import TurnTranscript
from livejudge.judge.features import text as tf
from livejudge.judge.model.dimensions import DIMENSION_IDS


def T(text: str, i: int = 0, channel: str = "agent") -> TurnTranscript:
    return TurnTranscript(channel, 2.0 * i, 2.0 * i + 1.5, text, tf.count_words(text), "en")


# ---------------------------------------------------------------- tokens and words


def test_words_and_sentences():
    assert tf.words("I'm sorry, Mr. Dashwood — it's 3.5 miles.") == ["i'm", "sorry", "mr", "dashwood", "it's", "3.5", "miles"]
    assert tf.count_words("Don\u2019t   worry!") == 2  # curly apostrophe, one word
    assert tf.sentences("Hello there. Mr. Smith is here! Is he? yes") == [
        ["hello", "there"], ["mr", "smith", "is", "here"], ["is", "he"], ["yes"]]


# ---------------------------------------------------------------- fillers


def test_filler_counts_known_answers():
    assert tf.count_fillers("Um, so, uh, I think it's, like, nine. Erm, you know, I mean it.") == 6
    # "like" as a verb or preposition is not a filler; "do you know" is a question
    assert tf.count_fillers("I like it. It looks like rain. Do you know the way? I'd like, a coffee.") == 0
    assert tf.count_fillers("Like, I don't know. Um like whatever.") == 3  # clause-initial, after a filled pause, um
    assert tf.count_fillers("As you know, the store opens at nine.") == 0


def test_hedges_and_self_corrections_known_answers():
    text = "It's probably fine, maybe. I think it's kind of late. What kind of music? Sorry, I meant Tuesday."
    assert tf.count_hedges(text) == 4  # probably, maybe, I think, kind of (not "what kind of")
    assert tf.count_self_corrections(text) == 1
    assert tf.count_self_corrections("I mean, or rather, let me rephrase.") == 3
    assert tf.count_hedges("The store opens at nine and closes at six.") == 0


def test_sycophancy_categories_and_overlaps():
    ms = tf.sycophancy_matches("You're absolutely right! Thank you. Great question. I'm sorry. I'd be happy to help.")
    assert [m.category for m in ms] == ["agreement", "thanks", "praise", "apology", "service"]
    assert ms[0].phrase == ("you're", "absolutely", "right")  # one match, not also "absolutely"
    # the "sorry" of a self-correction is not an apology
    assert tf.sycophancy_matches("It's on Monday, sorry, I meant Tuesday.") == []


def test_list_markers_and_formal_words():
    assert tf.count_list_markers("Here are three options. First, call us. Second, email. And finally, visit.") == 4
    assert tf.count_list_markers("It was the first time. He came second in the race.") == 0
    assert tf.count_list_markers("1. Open the app. 2. Tap settings.") == 2
    assert tf.count_formal("Furthermore, regarding your order, I can assist you in order to fix it.") == 4
    assert tf.count_formal("So yeah, about your order, I can sort it out.") == 0


# ---------------------------------------------------------------- window analysis


KNOWN = [
    # 20 words, 3 sentences; fillers: um, like, uh, you know, I mean (5); hedges: probably, I think (2);
    # self-corrections: I mean (1)
    T("Um, the shop is, like, open till six. Uh, it is probably fine. I think, you know, I mean seven?", 0),
    # 20 words, 7 sentences; thanks, apology, praise, service (4); list: here are, first, second (3);
    # formal: furthermore (1)
    T("Thank you. I'm sorry. Great question. Happy to help. Here are two ways. First, call. "
      "Second, furthermore, email us now.", 1),
]


def test_analyse_text_exact_rates():
    a = tf.analyse_text(KNOWN)
    assert a.counts["words"] == 40 and a.counts["turns"] == 2
    assert a.values["filler_rate_per_100w"] == pytest.approx(100 * 5 / 40)
    assert a.values["hedge_rate_per_100w"] == pytest.approx(100 * 2 / 40)
    assert a.values["self_correction_rate_per_100w"] == pytest.approx(100 * 1 / 40)
    assert a.values["sycophancy_per_turn"] == pytest.approx(4 / 2)
    assert a.values["list_markers_per_turn"] == pytest.approx(3 / 2)
    assert a.values["formal_rate_per_100w"] == pytest.approx(100 * 1 / 40)
    assert a.counts["sentences"] == 10
    assert a.values["mean_sentence_words"] == pytest.approx(40 / 10)
    assert a.evidence["use_of_fillers"].amount == 40 and a.evidence["use_of_fillers"].unit == "words"
    assert a.evidence["sycophant_behavior"].amount == 2 and a.evidence["sycophant_behavior"].unit == "turns"


def test_other_channel_and_empty_turns_are_ignored():
    mixed = KNOWN + [T("Um uh um uh um.", 5, channel="user"), T("", 6)]
    a = tf.analyse_text(mixed)
    assert a.counts["words"] == 40 and a.counts["turns"] == 2
    assert tf.analyse_text(mixed, channel="user").values["filler_rate_per_100w"] == pytest.approx(100.0)


def test_no_transcripts_gives_nan_and_zero_evidence():
    a = tf.analyse_text([])
    assert all(math.isnan(v) for v in a.values.values())
    assert a.evidence["use_of_fillers"].amount == 0 and a.evidence["use_of_fillers"].reason
    names, v = tf.text_feature_vector([], impute=True)
    assert v.tolist() == pytest.approx([f.centre for f in tf.TEXT_FEATURES])


def test_vector_has_fixed_order_and_dtype():
    names, v = tf.text_feature_vector(KNOWN)
    assert names == tf.TEXT_FEATURE_NAMES and v.dtype == np.float32 and v.shape == (len(names),)
    a = tf.analyse_text(KNOWN)
    assert v[names.index("hedge_rate_per_100w")] == pytest.approx(a.values["hedge_rate_per_100w"])
    assert len(set(names)) == len(names)
    for f in tf.TEXT_FEATURES:
        assert f.dimension in ("",) + DIMENSION_IDS and f.spread > 0 and f.source


def test_gate_imputes_features_of_dimensions_below_their_minimum():
    # KNOWN: 40 words (< 50 for fillers/hedges, ≥ 40 for written style), 2 turns (≥ 2)
    names, v = tf.text_feature_vector(KNOWN, impute=True, gate=True)
    _, raw = tf.text_feature_vector(KNOWN)
    spec = {f.name: f for f in tf.TEXT_FEATURES}
    for n, gated_now in (("filler_rate_per_100w", True), ("hedge_rate_per_100w", True),
                         ("self_correction_rate_per_100w", True), ("sycophancy_per_turn", False),
                         ("list_markers_per_turn", False), ("formal_rate_per_100w", False),
                         ("sentiment_compound_sd", False)):
        i, f = names.index(n), spec[n]
        lo, hi = f.centre - 3 * f.spread, f.centre + 3 * f.spread  # CLIP_SPREADS = 3
        assert v[i] == pytest.approx(f.centre if gated_now else min(max(raw[i], lo), hi), abs=1e-6), n
    # sycophancy 2.0 per turn lies beyond centre 0.5 + 3 × 0.4: clipped like the acoustic features
    assert v[names.index("sycophancy_per_turn")] == pytest.approx(0.5 + 3 * 0.4)


def test_without_a_language_identifier_code_switching_says_why(monkeypatch):
    monkeypatch.setattr(tf, "langid_available", lambda: False)
    a = tf.analyse_text(KNOWN)
    assert a.evidence["code_switching"].amount == 0 and "py3langid" in a.evidence["code_switching"].reason
    assert math.isnan(a.values["language_switch_rate"])
    assert a.values["hedge_rate_per_100w"] == pytest.approx(5.0)  # the rest is unaffected


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="TurnTranscript"):
        tf.analyse_text(["just a string"])


# ---------------------------------------------------------------- sentiment


def test_sentiment_direction():
    pos = tf.analyse_text([T("This is wonderful, I love it, great job!", 0), T("Fantastic, thanks so much!", 1)])
    neg = tf.analyse_text([T("This is awful, I hate it, terrible work.", 0), T("That is a horrible, sad mess.", 1)])
    assert pos.values["sentiment_compound_mean"] > 0.5
    assert neg.values["sentiment_compound_mean"] < -0.5
    one = tf.analyse_text([T("This is wonderful.", 0)])
    assert math.isnan(one.values["sentiment_compound_sd"])  # an SD needs two turns


def test_sentiment_mismatch_cheerful_apology():
    assert tf.sentiment_mismatch("I'm sorry for the confusion. I'd be absolutely delighted to help you today!")
    assert not tf.sentiment_mismatch("I'm sorry for the confusion. The store opens at nine.")
    assert not tf.sentiment_mismatch("Great, I love it!")
    a = tf.analyse_text([T("I'm sorry about that. I'd be happy to help, this is great!", 0), T("The store opens at nine.", 1)])
    assert a.values["sentiment_mismatch_ratio"] == pytest.approx(0.5)


# ---------------------------------------------------------------- language identification


def test_language_switch_english_spanish():
    pytest.importorskip("py3langid", reason="language identification needs py3langid (livejudge[asr])")
    tr = [T("Sure, I can help you with your booking today.", 0),
          T("Claro, te puedo ayudar con la reserva mañana por la tarde.", 1),
          T("Then we can confirm the time on the phone.", 2)]
    a = tf.analyse_text(tr)
    assert a.languages == ("en", "es", "en")
    assert a.values["language_switch_rate"] == pytest.approx(1.0)
    assert a.evidence["code_switching"].amount == 3 and a.evidence["code_switching"].unit == "turns"


def test_one_language_means_no_code_switching_evidence():
    pytest.importorskip("py3langid", reason="language identification needs py3langid (livejudge[asr])")
    tr = [T("He was not an ill disposed young man at all.", 0),
          T("Had he married a more amiable woman, he might have been made still more respectable.", 1),
          T("Ok.", 2)]  # too short to identify
    a = tf.analyse_text(tr)
    assert set(a.languages) == {"en"} and len(a.languages) == 2
    ev = a.evidence["code_switching"]
    assert ev.amount == 0 and "one language" in ev.reason
    assert a.values["language_switch_rate"] == pytest.approx(0.0)


def test_gated_dimensions_have_reasons_and_minimums_cover_the_rest():
    ev = tf.text_evidence(KNOWN)
    for dim in tf.GATED_REASONS:
        assert ev[dim].amount == 0 and ev[dim].reason
    for dim, unit in tf.TEXT_EVIDENCE_UNIT.items():
        assert dim in tf.TEXT_EVIDENCE_MIN and dim in ev
    assert tf.gated(ev["use_of_fillers"], "use_of_fillers")  # 40 words < 50
    assert not tf.gated(ev["sycophant_behavior"], "sycophant_behavior")  # 2 turns ≥ 2
    assert set(ev) <= set(DIMENSION_IDS)


def test_deterministic():
    a, b = tf.text_feature_vector(KNOWN)[1], tf.text_feature_vector(list(reversed(KNOWN)))[1]
    assert np.array_equal(a, b, equal_nan=True)
