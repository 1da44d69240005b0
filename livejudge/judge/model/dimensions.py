"""The 18 human-likeness dimensions of the judge, in five categories.

Source: the Turing-test paper ("Human or Machine? A Preliminary Turing Test for Speech-to-Speech
Interaction", arXiv 2602.24080), appendix D.1, Table 12. The descriptions below are
paraphrases of the machine-like and human-like ends of each dimension, not quotations.

Ratings are on the paper's 1–5 scale (appendix D.2): 1 = strongly machine-like,
5 = strongly human-like, 3 = no lean either way or not enough evidence to judge.
The order of ``DIMENSIONS`` is the paper's order and the order of the ODL outputs z_k.
"""

from __future__ import annotations

from dataclasses import dataclass

RATING_LEVELS = 5
"""Number of ordered rating levels r (1–5), the Turing-test paper, App. D.2."""

NEUTRAL_SCORE = 3.0
"""The "no lean / not enough evidence" rating (the Turing-test paper, App. D.2)."""

CATEGORIES: tuple[tuple[str, str], ...] = (
    ("I", "semantic features & pragmatic habits"),
    ("II", "non-physiological paralinguistic features"),
    ("III", "physiological paralinguistic features"),
    ("IV", "mechanical persona"),
    ("V", "emotional expression"),
)
"""(roman numeral, name) of the five categories, in the paper's order (App. D.1)."""

CATEGORY_NAMES: dict[str, str] = dict(CATEGORIES)


@dataclass(frozen=True, slots=True)
class Dimension:
    """One rated dimension.

    Attributes:
        id: stable identifier used in code, checkpoints and output (snake_case).
        name: display name.
        category: roman numeral of its category ("I" … "V"), see ``CATEGORIES``.
        low: paraphrase of the machine-like end (rating 1).
        high: paraphrase of the human-like end (rating 5).
    """

    id: str
    name: str
    category: str
    low: str
    high: str

    @property
    def category_name(self) -> str:
        return CATEGORY_NAMES[self.category]


DIMENSIONS: tuple[Dimension, ...] = (
    Dimension("memory_consistency", "memory consistency", "I",
              "forgets key facts and does not notice",
              "keeps facts straight in a short context, or asks to clarify"),
    Dimension("logical_coherence", "logical coherence", "I",
              "abrupt jumps or self-contradiction",
              "natural, coherent reasoning"),
    Dimension("pronunciation_accuracy", "pronunciation accuracy", "I",
              "mispronounces words, including heteronyms",
              "pronounces correctly, heteronyms included"),
    Dimension("code_switching", "code-switching", "I",
              "odd, unmotivated mixing of languages",
              "smooth mixing driven by context"),
    Dimension("linguistic_imprecision", "linguistic imprecision", "I",
              "always precise and assertive",
              "hedges (\"probably\") and corrects itself"),
    Dimension("use_of_fillers", "use of fillers", "I",
              "few fillers, or fillers used oddly",
              "\"um\", \"like\" while thinking"),
    Dimension("metaphor_and_implied_meaning", "metaphor & implied meaning", "I",
              "literal and surface-level only",
              "uses metaphor, euphemism and implication"),
    Dimension("rhythm", "rhythm", "II",
              "no pauses, or mechanical ones",
              "speaking rate varies with meaning, occasional hesitation"),
    Dimension("intonation", "intonation", "II",
              "flat or unnatural pitch",
              "natural rises and falls of pitch"),
    Dimension("stress", "stress", "II",
              "no emphasis, or emphasis in odd places",
              "stresses the key words"),
    Dimension("auxiliary_vocalizations", "auxiliary vocalizations", "II",
              "mechanical or misplaced non-verbal sounds",
              "fitting laughs, sighs and other non-verbal sounds"),
    Dimension("micro_physiological_noise", "micro-physiological noise", "III",
              "too clean, or unnatural noises",
              "breaths, mouth and saliva sounds"),
    Dimension("pronunciation_instability", "pronunciation instability", "III",
              "over-clear articulation",
              "some slurring, tremor or nasality"),
    Dimension("accent", "accent", "III",
              "stiff, unnatural accent",
              "natural regional accent and vocal traits"),
    Dimension("sycophant_behavior", "sycophant behavior", "IV",
              "agrees, thanks and apologises too much",
              "agrees only when the context warrants it"),
    Dimension("written_style_expression", "written-style expression", "IV",
              "formal, structured, frequent lists",
              "loose, varied spoken style"),
    Dimension("textual_sentiment", "textual sentiment", "V",
              "emotion in the words feels off",
              "emotion in the words feels authentic"),
    Dimension("acoustic_emotion", "acoustic emotion", "V",
              "prosody does not match the intended emotion",
              "voice carries emotion that fits the words"),
)
"""The 18 dimensions in the paper's order (the Turing-test paper, App. D.1, Table 12)."""

DIMENSION_IDS: tuple[str, ...] = tuple(d.id for d in DIMENSIONS)
"""Dimension ids in the paper's order."""

BY_ID: dict[str, Dimension] = {d.id: d for d in DIMENSIONS}


def get_dimension(dim_id: str) -> Dimension:
    """The Dimension with this id.

    Raises:
        KeyError: unknown id (the message lists the valid ids).
    """
    try:
        return BY_ID[dim_id]
    except KeyError:
        raise KeyError(f"unknown dimension {dim_id!r}; valid ids: {', '.join(DIMENSION_IDS)}") from None


def dimensions_in(category: str) -> tuple[Dimension, ...]:
    """The dimensions of one category ("I" … "V"), in the paper's order."""
    if category not in CATEGORY_NAMES:
        raise KeyError(f"unknown category {category!r}; valid: {', '.join(CATEGORY_NAMES)}")
    return tuple(d for d in DIMENSIONS if d.category == category)
