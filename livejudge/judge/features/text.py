"""Text features of the agent's transcribed turns (optional extra ``livejudge[asr]``).

Pure, deterministic functions of a list of ``TurnTranscript`` (what ``livejudge.judge.features.asr``
produces per finished turn). They give evidence for the transcript-based dimensions of
The Turing-test paper (App. D.1, Table 12):

==========================  ==========================================  =====================
dimension                   features (unit)                             evidence (unit, min)
==========================  ==========================================  =====================
use_of_fillers              ``filler_rate_per_100w`` (per 100 words)    words, 50
linguistic_imprecision      ``hedge_rate_per_100w``,                    words, 50
                            ``self_correction_rate_per_100w``
sycophant_behavior          ``sycophancy_per_turn`` (phrases per turn)  turns, 2
written_style_expression    ``list_markers_per_turn``,                  words, 40
                            ``mean_sentence_words`` (words),
                            ``formal_rate_per_100w`` (per 100 words)
textual_sentiment           ``sentiment_compound_mean``,                turns, 2
                            ``sentiment_compound_sd`` (VADER compound),
                            ``sentiment_mismatch_ratio`` (share of turns)
code_switching              ``language_switch_rate`` (switches per      turns, 2 — and only
                            identified sentence pair)                   when ≥ 2 languages
==========================  ==========================================  =====================

EVERY WORD LIST BELOW IS A HEURISTIC: a short, hand-made list of the most common English
forms, chosen by judgement and documented next to it; none is a trained classifier, and all
of them are English-only. They count surface forms, so they cannot tell a motivated "I'm
sorry" from a reflexive one; that judgement is left to a trained head.

Word counts come from ``words(text)``: lower-cased runs of letters/digits (apostrophes kept
inside words, "don't" is one word; "cold-hearted" is two). Fillers count as words. Sentences
are split at ``. ! ? …`` as punctuated by the recogniser (Whisper punctuates; an ASR without
punctuation makes every turn one sentence).

Caveat on fillers: Whisper was trained on transcripts that mostly omit "um"/"uh";
``livejudge.judge.features.asr`` prompts it with fillers so it keeps more of them, but filler rates
from ASR are a lower bound of what was said.

Dimensions that transcripts alone cannot judge honestly stay gated (``GATED_REASONS``):
memory consistency and logical coherence need the user's side and semantic reasoning across
turns (an LLM or the audio-LLM backbone), metaphor needs a figurative-language model, accent
is acoustic, and pronunciation accuracy needs a pronunciation model (ASR errors mix
recogniser errors with mispronunciations).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from livejudge.events import TurnTranscript
from livejudge.judge.features.backbones.base import Evidence
from livejudge.judge.features.acoustic import CLIP_SPREADS, FeatureSpec

# --------------------------------------------------------------------------- tokens

_TOKEN_RE = re.compile(r"\d+(?:[.,]\d+)*|[^\W_]+(?:'[^\W_]+)*|[,.!?;:…)]")
_SENTENCE_END = frozenset({".", "!", "?", "…"})
_PUNCT = frozenset({",", ".", "!", "?", ";", ":", "…", ")"})
_ABBREVIATIONS = frozenset({"mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "vs", "etc"})
"""Words after which "." does not end a sentence ("Mr. Dashwood")."""


def tokens(text: str) -> list[str]:
    """Lower-cased word and punctuation tokens of ``text``.

    Words: runs of letters/digits, inner apostrophes kept ("don't", "i'm"); numbers with
    decimal points stay one token ("3.5"). Punctuation tokens: , . ! ? ; : … )
    Curly apostrophes are read as straight ones.
    """
    return _TOKEN_RE.findall(text.replace("\u2019", "'").replace("\u2018", "'").lower())


def _is_word(tok: str) -> bool:
    return tok not in _PUNCT


def words(text: str) -> list[str]:
    """The words of ``text`` (``tokens`` without punctuation), lower case."""
    return [t for t in tokens(text) if _is_word(t)]


def count_words(text: str) -> int:
    """Number of words in ``text`` (the definition every per-100-word rate here uses)."""
    return len(words(text))


def sentences(text: str) -> list[list[str]]:
    """Split ``text`` into sentences (lists of word tokens) at . ! ? … (not after "Mr." etc.)."""
    out: list[list[str]] = []
    cur: list[str] = []
    toks = tokens(text)
    for i, t in enumerate(toks):
        if t in _SENTENCE_END:
            prev = toks[i - 1] if i else ""
            if t == "." and prev in _ABBREVIATIONS:
                continue
            if cur:
                out.append(cur)
            cur = []
        elif _is_word(t):
            cur.append(t)
    if cur:
        out.append(cur)
    return out


# --------------------------------------------------------------------------- phrase matching


def _phrases(*items: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(tokens(p)) for p in items)


@dataclass(frozen=True)
class Match:
    """One phrase found in a token list: tokens[start:end] == phrase; ``category`` its label."""

    start: int
    end: int
    phrase: tuple[str, ...]
    category: str


def find_phrases(toks: Sequence[str], lexicon: dict[str, tuple[tuple[str, ...], ...]],
                 exclude: Iterable[Match] = ()) -> list[Match]:
    """Non-overlapping matches of the lexicon's phrases in ``toks``, longest first at each position.

    Args:
        toks: tokens from ``tokens`` (punctuation included, so a phrase may contain ",").
        lexicon: category → phrases (each a tuple of tokens).
        exclude: matches (of another lexicon) whose tokens may not be reused.
    Returns:
        Matches left to right. "you're absolutely right" is one match, not also "absolutely".
    """
    blocked = set()
    for m in exclude:
        blocked.update(range(m.start, m.end))
    by_first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for cat, plist in lexicon.items():
        for p in plist:
            by_first.setdefault(p[0], []).append((p, cat))
    for v in by_first.values():
        v.sort(key=lambda pc: -len(pc[0]))
    out: list[Match] = []
    i = 0
    while i < len(toks):
        hit = None
        if i not in blocked:
            for p, cat in by_first.get(toks[i], ()):
                j = i + len(p)
                if tuple(toks[i:j]) == p and not blocked.intersection(range(i, j)):
                    hit = Match(i, j, p, cat)
                    break
        if hit is None:
            i += 1
        else:
            out.append(hit)
            i = hit.end
    return out


def _prev_word(toks: Sequence[str], i: int) -> str | None:
    """The token before position i ("" at the start of the text)."""
    return toks[i - 1] if i > 0 else ""


def _clause_start(toks: Sequence[str], i: int) -> bool:
    """True when toks[i] starts the text, a sentence or a comma-delimited clause."""
    p = _prev_word(toks, i)
    return p == "" or p in _PUNCT


# --------------------------------------------------------------------------- lexicons (HEURISTIC)

FILLED_PAUSES = frozenset({"um", "umm", "uh", "uhh", "uhm", "er", "erm", "hmm", "mm"})
"""HEURISTIC list: spellings of filled pauses ("um", "uh") as Whisper and human transcribers
write them (Clark & Fox Tree 2002, Cognition 84:73, on "uh" and "um")."""

FILLER_PHRASES = _phrases("you know", "i mean")
"""HEURISTIC: discourse-marker fillers. "you know" and "I mean" (Fox Tree & Schrock 2002,
J. Pragmatics 34:727). Not counted after do/did/don't/didn't/if/as ("do you know…",
"as you know")."""

_NOT_FILLER_BEFORE_YOU_KNOW = frozenset({"do", "did", "don't", "didn't", "if", "as", "would", "will", "to"})

HEDGE_PHRASES = _phrases(
    "probably", "maybe", "perhaps", "possibly", "i think", "i guess", "i suppose",
    "kind of", "sort of", "kinda", "sorta", "not sure", "more or less", "i believe",
)
"""HEURISTIC hedges (linguistic imprecision, the Turing-test paper, App. D.1: human-like speakers hedge with
"probably" and correct themselves). "kind of"/"sort of" are not hedges after a determiner
("what kind of music", ``_DETERMINERS``)."""

_DETERMINERS = frozenset({"what", "this", "that", "these", "those", "the", "a", "an", "any", "some",
                          "which", "every", "each", "no", "one", "same", "other", "different",
                          "whatever", "all", "another", "your", "my", "our", "their", "his", "her"})

SELF_CORRECTION_PHRASES = _phrases(
    "i mean", "i meant", "sorry, i meant", "sorry, i mean", "sorry i meant", "sorry i mean",
    "or rather", "let me rephrase", "what i meant", "no wait", "no, wait",
)
"""HEURISTIC repair markers (self-corrections; cf. the Voice Editing axis of Audio
MultiChallenge). "I mean" is counted both here and as a filler: it is ambiguous
between the two uses (Fox Tree & Schrock 2002)."""

SYCOPHANCY_LEXICON: dict[str, tuple[tuple[str, ...], ...]] = {
    "agreement": _phrases("absolutely", "exactly", "definitely", "certainly", "of course",
                          "you're right", "you're absolutely right", "you are right",
                          "you are absolutely right", "that's right", "i agree", "i completely agree",
                          "i totally agree", "i completely understand", "totally"),
    "thanks": _phrases("thank you", "thanks", "i appreciate", "much appreciated"),
    "apology": _phrases("sorry", "i'm sorry", "i am sorry", "i apologize", "i apologise",
                        "my apologies", "apologies", "so sorry", "i'm so sorry"),
    "praise": _phrases("great question", "good question", "excellent question", "great point",
                       "good point", "excellent point", "what a great", "that's a great idea",
                       "great idea", "wonderful"),
    "service": _phrases("happy to help", "glad to help", "i'd be happy to", "i'd be glad to",
                        "i'd be delighted", "my pleasure", "anything else i can help",
                        "how can i help", "how may i help", "how can i assist", "how may i assist"),
}
"""HEURISTIC lexicon of agreement / thanks / apology / praise / service phrases (sycophant
behavior, the Turing-test paper, App. D.1: the machine-like end agrees, thanks and apologises too much).
An apology inside a self-correction ("sorry, I meant") is not counted."""

ORDINAL_MARKERS = _phrases("first", "firstly", "first of all", "second", "secondly", "third",
                           "thirdly", "fourth", "fifth", "finally", "lastly", "last but not least")
"""HEURISTIC enumeration markers, counted only at the start of a sentence or clause (after
punctuation or "and"), so "the first time" is not a list."""

LIST_INTRO_PHRASES = _phrases("here are", "here is a list", "here's a list", "the following",
                              "a few options", "a couple of options")
"""HEURISTIC list introductions ("here are three options")."""

FORMAL_PHRASES = _phrases(
    "furthermore", "additionally", "moreover", "regarding", "assist", "assistance", "therefore",
    "thus", "hence", "consequently", "nevertheless", "nonetheless", "however", "utilize",
    "facilitate", "subsequently", "approximately", "in order to", "prior to", "please note",
    "to summarize", "in summary", "in conclusion", "feel free", "rest assured",
)
"""HEURISTIC written-register vocabulary (connectives and Latinate verbs typical of written or
scripted assistant prose rather than conversation)."""

_NUMBERS = frozenset({"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"})


# --------------------------------------------------------------------------- per-text counts


def count_fillers(text: str) -> int:
    """Fillers in ``text``: filled pauses, "you know"/"I mean", and "like" used as a filler.

    "like" counts as a filler (HEURISTIC) when it starts a sentence/clause, follows a filled
    pause, or is followed by a comma ("it was, like, huge"; "like, I don't know"), but not
    after "would"/"'d" ("I'd like, um, a coffee").
    """
    toks = tokens(text)
    n = sum(1 for t in toks if t in FILLED_PAUSES)
    for m in find_phrases(toks, {"filler": FILLER_PHRASES}):
        if m.phrase == ("you", "know") and _prev_word(toks, m.start) in _NOT_FILLER_BEFORE_YOU_KNOW:
            continue
        n += 1
    for i, t in enumerate(toks):
        if t != "like":
            continue
        prev = _prev_word(toks, i)
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        if prev in {"would", "i'd", "you'd", "we'd", "they'd", "he'd", "she'd"}:
            continue
        if _clause_start(toks, i) or prev in FILLED_PAUSES or nxt == ",":
            n += 1
    return n


def count_hedges(text: str) -> int:
    """Hedges in ``text`` (``HEDGE_PHRASES``; "kind of"/"sort of" not after a determiner)."""
    toks = tokens(text)
    n = 0
    for m in find_phrases(toks, {"hedge": HEDGE_PHRASES}):
        if m.phrase in {("kind", "of"), ("sort", "of")} and _prev_word(toks, m.start) in _DETERMINERS:
            continue
        n += 1
    return n


def _self_corrections(toks: Sequence[str]) -> list[Match]:
    return find_phrases(toks, {"self_correction": SELF_CORRECTION_PHRASES})


def count_self_corrections(text: str) -> int:
    """Self-correction markers in ``text`` (``SELF_CORRECTION_PHRASES``)."""
    return len(_self_corrections(tokens(text)))


def sycophancy_matches(text: str) -> list[Match]:
    """Agreement / thanks / apology / praise / service phrases in ``text`` (``SYCOPHANCY_LEXICON``)."""
    toks = tokens(text)
    return find_phrases(toks, SYCOPHANCY_LEXICON, exclude=_self_corrections(toks))


def count_list_markers(text: str) -> int:
    """Enumeration markers: clause-initial ordinals, list introductions, numbered items.

    Numbered items: a number ("1", "one") at the start of a sentence or clause followed by
    "." / ")" / "," and then a word (HEURISTIC; "1. Open the app, 2. ...").
    """
    toks = tokens(text)
    n = len(find_phrases(toks, {"intro": LIST_INTRO_PHRASES}))
    for m in find_phrases(toks, {"ordinal": ORDINAL_MARKERS}):
        if _clause_start(toks, m.start) or _prev_word(toks, m.start) == "and":
            n += 1
    for i, t in enumerate(toks[:-2]):
        if (t.isdigit() or t in _NUMBERS) and _clause_start(toks, i) and toks[i + 1] in {".", ")"} \
                and _is_word(toks[i + 2]):
            n += 1
    return n


def count_formal(text: str) -> int:
    """Formal-register words and phrases in ``text`` (``FORMAL_PHRASES``)."""
    return len(find_phrases(tokens(text), {"formal": FORMAL_PHRASES}))


# --------------------------------------------------------------------------- sentiment (VADER)

VADER_POSITIVE = 0.05
"""VADER compound ≥ +0.05 is positive, ≤ −0.05 negative (Hutto & Gilbert 2014, ICWSM; the
thresholds recommended in the vaderSentiment README)."""
STRONG_POSITIVE = 0.5
"""HEURISTIC: compound ≥ 0.5 counts as a strongly positive sentence for the mismatch feature."""

_VADER = None


def _vader():
    global _VADER
    if _VADER is None:
        try:
            from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
        except ImportError as exc:  # pragma: no cover - exercised only without the extra
            raise ImportError("textual sentiment needs vaderSentiment: pip install 'livejudge[asr]'") from exc
        _VADER = SentimentIntensityAnalyzer()
    return _VADER


def vader_available() -> bool:
    """Whether vaderSentiment (MIT, the optional sentiment lexicon) is installed. Without it,
    ``analyse_text`` leaves the sentiment features NaN and gates textual_sentiment with a reason
    (transcripts from another source must not make the judge fail)."""
    import importlib.util

    return importlib.util.find_spec("vaderSentiment") is not None


def sentiment_compound(text: str) -> float:
    """VADER compound valence of ``text`` in [−1, 1] (Hutto & Gilbert 2014; lexicon in the package)."""
    return float(_vader().polarity_scores(text)["compound"])


def sentiment_mismatch(text: str) -> bool:
    """HEURISTIC: a turn mixes an apology or a negative sentence with a strongly positive one
    ("I'm sorry for the confusion. I'd be happy to help!"), the cheerful-after-bad-news
    pattern of scripted assistants. Sentences scored separately with VADER."""
    sents = [" ".join(s) for s in sentences(text)]
    if not sents:
        return False
    scores = [sentiment_compound(s) for s in sents]
    apology = any(m.category == "apology" for m in sycophancy_matches(text))
    negative = apology or any(c <= -VADER_POSITIVE for c in scores)
    return negative and any(c >= STRONG_POSITIVE for c in scores)


# --------------------------------------------------------------------------- language identification

LID_MIN_WORDS = 4
"""Sentences shorter than this are not language-identified (character n-gram models are
unreliable on a few words: py3langid reads "No problem at all." as Danish at 8 %)."""
LID_MIN_CONFIDENCE = 0.9
"""Minimum normalised py3langid probability for a sentence's language to count (HEURISTIC)."""

_LANGID = None


def langid_available() -> bool:
    """Whether py3langid (BSD-3-Clause, the optional language identifier) is installed."""
    import importlib.util

    return importlib.util.find_spec("py3langid") is not None


def _identifier():
    global _LANGID
    if _LANGID is None:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        _LANGID = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    return _LANGID


def identify_language(text: str) -> tuple[str, float]:
    """(ISO 639-1 code, probability) of ``text`` by py3langid (Lui & Baldwin 2012, langid.py;
    97 languages, naive Bayes over byte n-grams, model shipped in the package). Returns
    ("und", p) for texts under ``LID_MIN_WORDS`` words or below ``LID_MIN_CONFIDENCE``.

    Raises:
        ImportError: py3langid is not installed (pip install 'livejudge[asr]').
    """
    if count_words(text) < LID_MIN_WORDS:
        return "und", 0.0
    if not langid_available():
        raise ImportError("language identification needs py3langid: pip install 'livejudge[asr]'")
    lang, p = _identifier().classify(text)
    return (str(lang) if p >= LID_MIN_CONFIDENCE else "und"), float(p)


# --------------------------------------------------------------------------- feature table

TEXT_FEATURES: tuple[FeatureSpec, ...] = (
    FeatureSpec("filler_rate_per_100w", "per 100 words", "use_of_fillers", 1.0, 1.0, +1,
                "Fox Tree 1995 (J. Memory & Language 34:709): about 6 disfluencies per 100 words in "
                "conversation, filled pauses a large share; TTS scripts have none; ASR drops some, so "
                "the centre sits low (heuristic centre/spread)",
                "filled pauses + 'you know'/'I mean' + filler 'like' per 100 words (heuristic lists)"),
    FeatureSpec("hedge_rate_per_100w", "per 100 words", "linguistic_imprecision", 1.0, 1.0, +1,
                "seed 000 App. D.1 (humans hedge, 'probably'); heuristic centre/spread",
                "hedges ('probably', 'maybe', 'I think', 'kind of', ...) per 100 words"),
    FeatureSpec("self_correction_rate_per_100w", "per 100 words", "linguistic_imprecision", 0.3, 0.3, +1,
                "seed 000 App. D.1 (humans correct themselves); seed 001 Voice Editing axis; heuristic centre",
                "repair markers ('I mean', 'sorry, I meant', 'or rather') per 100 words"),
    FeatureSpec("sycophancy_per_turn", "phrases per turn", "sycophant_behavior", 0.5, 0.4, -1,
                "seed 000 App. D.1 (machines agree, thank and apologise too much); heuristic centre",
                "agreement/thanks/apology/praise/service phrases per agent turn"),
    FeatureSpec("list_markers_per_turn", "markers per turn", "written_style_expression", 0.2, 0.2, -1,
                "seed 000 App. D.1 (machine-like: structured, frequent lists); heuristic centre",
                "clause-initial ordinals, list introductions, numbered items per agent turn"),
    FeatureSpec("mean_sentence_words", "words", "written_style_expression", 12.0, 5.0, -1,
                "heuristic: conversational utterances are short; assistant prose runs to long "
                "sentences; depends on the recogniser's punctuation (weak)",
                "mean words per sentence (split at . ! ? as punctuated by the ASR)"),
    FeatureSpec("formal_rate_per_100w", "per 100 words", "written_style_expression", 0.5, 0.5, -1,
                "seed 000 App. D.1 (machine-like: formal); heuristic list and centre",
                "written-register words ('furthermore', 'regarding', 'assist', ...) per 100 words"),
    FeatureSpec("sentiment_compound_mean", "VADER compound", "", 0.2, 0.3, 0,
                "Hutto & Gilbert 2014 (VADER); descriptive: a positive mean is no cue by itself",
                "mean VADER compound valence over agent turns"),
    FeatureSpec("sentiment_compound_sd", "VADER compound", "textual_sentiment", 0.3, 0.2, +1,
                "Hutto & Gilbert 2014 (VADER); heuristic: uniformly upbeat replies vary little",
                "SD of VADER compound valence across agent turns"),
    FeatureSpec("sentiment_mismatch_ratio", "share of turns", "textual_sentiment", 0.15, 0.15, -1,
                "heuristic: cheerful phrasing next to an apology or bad news (seed 000 App. D.1: "
                "machine-like emotion in the words feels off)",
                "share of agent turns with an apology/negative sentence and a strongly positive one"),
    FeatureSpec("language_switch_rate", "switches per sentence pair", "code_switching", 0.0, 0.5, 0,
                "py3langid (Lui & Baldwin 2012); descriptive: whether a switch is motivated "
                "(human-like) or odd (machine-like) is not observable from language labels",
                "language changes between consecutive identified sentences (≥ 4 words, p ≥ 0.9)"),
)
"""The text features in vector order; ``FeatureSpec`` as in ``livejudge.judge.features.acoustic``
(centre/spread: documented prior normalisation; human_sign: +1 larger is more human-like,
−1 smaller is, 0 descriptive). All centres are HEURISTIC unless the source says otherwise."""

TEXT_FEATURE_NAMES: tuple[str, ...] = tuple(f.name for f in TEXT_FEATURES)
"""Text feature names in vector order (fixed: a head's checkpoint depends on it)."""

TEXT_EVIDENCE_MIN: dict[str, float] = {
    "use_of_fillers": 50.0,  # words: one filler moves the rate by ≤ 2 per 100 words
    "linguistic_imprecision": 50.0,  # words
    "sycophant_behavior": 2.0,  # turns
    "written_style_expression": 40.0,  # words
    "textual_sentiment": 2.0,  # turns (an SD needs two)
    "code_switching": 2.0,  # turns with an identified language, only when ≥ 2 languages
}
"""Minimum evidence for each text dimension (unit in ``TEXT_EVIDENCE_UNIT``; HEURISTIC sizes)."""

TEXT_EVIDENCE_UNIT: dict[str, str] = {
    "use_of_fillers": "words", "linguistic_imprecision": "words", "sycophant_behavior": "turns",
    "written_style_expression": "words", "textual_sentiment": "turns", "code_switching": "turns",
}

GATE_DIMENSION: dict[str, str] = {f.name: f.dimension or "textual_sentiment" for f in TEXT_FEATURES}
"""Dimension whose evidence gates each feature in ``TextAnalysis.vector(gate=True)`` (the
descriptive sentiment mean goes with textual_sentiment)."""

GATED_REASONS: dict[str, str] = {
    "memory_consistency": "needs the user's turns and semantic tracking of facts across turns; "
                          "word lists cannot tell a forgotten fact (no honest text signal here)",
    "logical_coherence": "needs semantic reasoning across turns; lexical overlap measures topic, "
                         "not logic (no honest text signal here)",
    "metaphor_and_implied_meaning": "needs a figurative-language model; word lists would be noise "
                                    "(no honest text signal here)",
    "accent": "acoustic: needs a trained accent model; transcripts do not carry accent",
    "pronunciation_accuracy": "needs a pronunciation model (forced alignment); ASR errors mix "
                              "recogniser errors with mispronunciations",
}
"""Transcript-related dimensions this module leaves at 3 with evidence 0, and why."""


# --------------------------------------------------------------------------- analysis


@dataclass(frozen=True)
class TextAnalysis:
    """Text features of one window's agent transcripts.

    Attributes:
        values: feature name → value in its unit (``TEXT_FEATURES``); NaN when not measurable
            (no words, fewer than 2 turns for an SD, no language identifier, ...).
        evidence: dimension id → Evidence (words or turns; 0 with a reason when gated).
        counts: raw counts (words, turns, sentences, fillers, hedges, per-category sycophancy
            phrases, list markers, formal words, languages seen) for display.
        languages: identified language per identified sentence, in order ("en", "es", ...).
    """

    values: dict[str, float]
    evidence: dict[str, Evidence]
    counts: dict[str, float] = field(default_factory=dict)
    languages: tuple[str, ...] = ()

    def vector(self, impute: bool = False, gate: bool = False) -> np.ndarray:
        """float32, shape (len(TEXT_FEATURE_NAMES),), in ``TEXT_FEATURE_NAMES`` order.

        Args:
            impute: NaNs become the features' centres (neutral for a prior head) and values are
                clipped to centre ± ``CLIP_SPREADS`` spreads, as the acoustic features are
                (``livejudge.judge.features.acoustic.FeatureResult.vector``).
            gate: a feature whose dimension's evidence is below ``TEXT_EVIDENCE_MIN``
                (``GATE_DIMENSION``) becomes NaN first (so, with ``impute``, its centre): a
                rate from 12 words then adds nothing to a dimension that also has other evidence.
        """
        v = np.array([self.values[n] for n in TEXT_FEATURE_NAMES], dtype=np.float32)
        if gate:
            for i, n in enumerate(TEXT_FEATURE_NAMES):
                dim = GATE_DIMENSION[n]
                if gated(self.evidence[dim], dim):
                    v[i] = np.nan
        if impute:
            centres = np.array([f.centre for f in TEXT_FEATURES], dtype=np.float32)
            spreads = np.array([f.spread for f in TEXT_FEATURES], dtype=np.float32)
            v = np.where(np.isfinite(v), v, centres)
            v = np.clip(v, centres - CLIP_SPREADS * spreads, centres + CLIP_SPREADS * spreads).astype(np.float32)
        return v


def _check(transcripts: Sequence[TurnTranscript]) -> None:
    for t in transcripts:
        if not isinstance(t, TurnTranscript):
            raise TypeError(f"expected TurnTranscript items, got {type(t).__name__}; "
                            "build them with livejudge.judge.features.asr or livejudge.events.TurnTranscript")


def analyse_text(transcripts: Sequence[TurnTranscript], channel: str = "agent",
                 identify_languages: bool = True) -> TextAnalysis:
    """All text features and evidence of the ``channel``'s transcripts (pure, deterministic).

    Args:
        transcripts: finished turns' transcripts (e.g. ``WindowSnapshot.transcripts``), any order;
            sorted by onset here. Turns of other channels are ignored.
        channel: whose turns to analyse ("agent" by default; "user" for the other side).
        identify_languages: run py3langid for code-switching (skipped, with a reason, when it is
            not installed or False).
    Returns:
        TextAnalysis (see its attributes). Turns with no words are not counted as turns.
    Raises:
        TypeError: an item is not a TurnTranscript.
    """
    _check(transcripts)
    turns = sorted((t for t in transcripts if t.channel == channel and count_words(t.text) > 0),
                   key=lambda t: t.onset_s)
    texts = [t.text for t in turns]
    n_turns = len(texts)
    n_words = sum(count_words(x) for x in texts)
    sents = [s for x in texts for s in sentences(x)]
    nan = float("nan")

    def per100(n: int) -> float:
        return 100.0 * n / n_words if n_words else nan

    def per_turn(n: int) -> float:
        return n / n_turns if n_turns else nan

    fillers = sum(count_fillers(x) for x in texts)
    hedges = sum(count_hedges(x) for x in texts)
    repairs = sum(count_self_corrections(x) for x in texts)
    syc = Counter(m.category for x in texts for m in sycophancy_matches(x))
    lists = sum(count_list_markers(x) for x in texts)
    formal = sum(count_formal(x) for x in texts)

    has_vader = vader_available()
    compounds = [sentiment_compound(x) for x in texts] if n_turns and has_vader else []
    mismatches = sum(1 for x in texts if sentiment_mismatch(x)) if has_vader else 0

    # language identification per sentence, in turn order
    lid_reason = ""
    langs: list[str] = []
    lang_turns = 0
    if not identify_languages:
        lid_reason = "language identification turned off"
    elif not langid_available():
        lid_reason = "needs py3langid for language identification (pip install 'livejudge[asr]')"
    else:
        for x in texts:
            got = [lab for lab, _ in (identify_language(" ".join(s)) for s in sentences(x)) if lab != "und"]
            langs += got
            lang_turns += bool(got)
    distinct = sorted(set(langs))
    switches = sum(1 for a, b in zip(langs, langs[1:]) if a != b)
    switch_rate = switches / (len(langs) - 1) if len(langs) >= 2 and not lid_reason else nan

    values = {
        "filler_rate_per_100w": per100(fillers),
        "hedge_rate_per_100w": per100(hedges),
        "self_correction_rate_per_100w": per100(repairs),
        "sycophancy_per_turn": per_turn(sum(syc.values())),
        "list_markers_per_turn": per_turn(lists),
        "mean_sentence_words": (sum(len(s) for s in sents) / len(sents)) if sents else nan,
        "formal_rate_per_100w": per100(formal),
        "sentiment_compound_mean": float(np.mean(compounds)) if compounds else nan,
        "sentiment_compound_sd": float(np.std(compounds)) if len(compounds) >= 2 else nan,
        "sentiment_mismatch_ratio": per_turn(mismatches) if has_vader else nan,
        "language_switch_rate": switch_rate,
    }

    evidence: dict[str, Evidence] = {}
    for dim in ("use_of_fillers", "linguistic_imprecision", "written_style_expression"):
        evidence[dim] = Evidence(float(n_words), "words", "" if n_words else "no transcribed agent words")
    for dim in ("sycophant_behavior", "textual_sentiment"):
        evidence[dim] = Evidence(float(n_turns), "turns", "" if n_turns else "no transcribed agent turns")
    if not has_vader:
        evidence["textual_sentiment"] = Evidence(0.0, "", "needs vaderSentiment for sentiment "
                                                          "(pip install 'livejudge[asr]')")
    if lid_reason:
        evidence["code_switching"] = Evidence(0.0, "", lid_reason)
    elif len(distinct) >= 2:
        evidence["code_switching"] = Evidence(float(lang_turns), "turns", "")
    elif distinct:
        evidence["code_switching"] = Evidence(
            0.0, "", f"one language identified ({distinct[0]}) in {lang_turns} turns: no code-switching to judge")
    else:
        evidence["code_switching"] = Evidence(
            0.0, "", f"no sentence of ≥ {LID_MIN_WORDS} words identified with p ≥ {LID_MIN_CONFIDENCE}")
    for dim, reason in GATED_REASONS.items():
        evidence[dim] = Evidence(0.0, "", reason)

    counts = {"words": float(n_words), "turns": float(n_turns), "sentences": float(len(sents)),
              "fillers": float(fillers), "hedges": float(hedges), "self_corrections": float(repairs),
              "list_markers": float(lists), "formal": float(formal),
              "sentiment_mismatch_turns": float(mismatches), "languages": float(len(distinct)),
              "language_switches": float(switches)}
    counts.update({f"sycophancy_{k}": float(syc.get(k, 0)) for k in SYCOPHANCY_LEXICON})
    return TextAnalysis(values=values, evidence=evidence, counts=counts, languages=tuple(langs))


def text_evidence(transcripts: Sequence[TurnTranscript], channel: str = "agent") -> dict[str, Evidence]:
    """Evidence per transcript dimension: words or turns of ``channel`` speech.

    Covers the six text dimensions (amounts; compare with ``TEXT_EVIDENCE_MIN``) and the five
    ``GATED_REASONS`` dimensions (always Evidence(0, "", reason)). code_switching has evidence
    only when at least two languages were identified; otherwise 0 with the reason.
    """
    return analyse_text(transcripts, channel).evidence


def text_feature_vector(transcripts: Sequence[TurnTranscript], channel: str = "agent",
                        impute: bool = False, gate: bool = False) -> tuple[tuple[str, ...], np.ndarray]:
    """The text features as a fixed-order vector a head can consume.

    Returns:
        (``TEXT_FEATURE_NAMES``, float32 array of shape (11,)) with values in each feature's
        unit; NaN where not measurable (or below its dimension's evidence minimum when
        ``gate``), replaced by the feature's centre when ``impute``. See ``TextAnalysis.vector``.
    """
    return TEXT_FEATURE_NAMES, analyse_text(transcripts, channel).vector(impute=impute, gate=gate)


def warm_up() -> None:
    """Load VADER's lexicon and py3langid's model now (about 1 s once) rather than on the first
    judged window. Missing optional packages are skipped."""
    try:
        _vader()
    except ImportError:
        pass
    if langid_available():
        _identifier()


def gated(evidence: Evidence, dimension: str) -> bool:
    """True when ``evidence`` is below ``TEXT_EVIDENCE_MIN[dimension]`` (or the dimension has none)."""
    need = TEXT_EVIDENCE_MIN.get(dimension)
    return need is None or evidence.amount < need or not math.isfinite(evidence.amount)


__all__ = [
    "GATE_DIMENSION", "GATED_REASONS", "TEXT_EVIDENCE_MIN", "TEXT_EVIDENCE_UNIT", "TEXT_FEATURES", "TEXT_FEATURE_NAMES",
    "TextAnalysis", "analyse_text", "count_fillers", "count_formal", "count_hedges", "count_list_markers",
    "count_self_corrections", "count_words", "identify_language", "sentences", "sentiment_compound",
    "sentiment_mismatch", "sycophancy_matches", "text_evidence", "text_feature_vector", "tokens", "warm_up",
    "words",
]
