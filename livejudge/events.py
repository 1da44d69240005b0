"""Typed events of a judged conversation.

Every time is a float in seconds on the session clock (0 = start of the session, monotonic).
Channels are always the strings ``"user"`` and ``"agent"``. All events are frozen dataclasses
so they can be shared between the audio path and the judge worker without copying.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

Channel = Literal["user", "agent"]
CHANNELS: tuple[Channel, Channel] = ("user", "agent")


def other(channel: Channel) -> Channel:
    """The other role: ``other("user") == "agent"``."""
    return "agent" if channel == "user" else "user"


@dataclass(frozen=True, slots=True)
class AudioChunk:
    """A block of audio from one channel, already in the internal format.

    Attributes:
        channel: ``"user"`` or ``"agent"``.
        samples: float32 mono, shape (n_samples,), 16 kHz, values in [-1, 1].
        t_s: session time of the first sample, seconds.
    """

    channel: Channel
    samples: "object"  # numpy.ndarray; typed loosely so events.py needs no numpy import
    t_s: float


@dataclass(frozen=True, slots=True)
class SpeechSegment:
    """One stretch of speech found by the VAD on one channel.

    ``onset_s``/``offset_s`` are the acoustic bounds (first and last voiced VAD frame),
    not the time the VAD decided; the decision lags the offset by the hangover.
    """

    channel: Channel
    onset_s: float
    offset_s: float

    @property
    def duration_s(self) -> float:
        return self.offset_s - self.onset_s


@dataclass(frozen=True, slots=True)
class Turn:
    """Consecutive speech segments of one speaker merged across within-turn pauses.

    A turn holds the floor: segments classified as backchannels are not turns.
    ``n_segments`` counts the merged VAD segments (pauses inside the turn = n_segments − 1).
    """

    channel: Channel
    onset_s: float
    offset_s: float
    n_segments: int = 1

    @property
    def duration_s(self) -> float:
        return self.offset_s - self.onset_s


@dataclass(frozen=True, slots=True)
class Transition:
    """A change of floor between turns: ``gap_s = to_onset_s − from_offset_s``.

    Positive gap_s is a silent gap; negative is an overlap (the next speaker started before
    the previous one finished). For user→agent transitions ``gap_s`` is the agent's response
    latency (Full-Duplex-Bench: model onset − end of the user's turn).
    """

    from_channel: Channel
    to_channel: Channel
    from_offset_s: float
    to_onset_s: float

    @property
    def gap_s(self) -> float:
        return self.to_onset_s - self.from_offset_s

    @property
    def is_response(self) -> bool:
        """True for user→agent transitions (the agent's response latency)."""
        return self.from_channel == "user" and self.to_channel == "agent"


@dataclass(frozen=True, slots=True)
class BargeIn:
    """A speaker starting a turn while the other one is speaking.

    ``by`` is who barged in. ``yield_s`` is the other side's yield time: from the barge-in
    onset to the other's speech offset (Full-Duplex-Bench "stop latency"), or ``None`` when the
    other side kept talking to the end of its turn (did not yield). ``cut_by_end``: the call
    ended before it was decided (``turns.Timeline.cut_by_end``): neither a yield nor a
    talk-through, so ``yield_s`` is None, as the result's ``barge_ins`` says (a trial: the live
    event said 0.42 s where the result said None).
    """

    by: Channel
    onset_s: float
    yield_s: float | None
    cut_by_end: bool = False


@dataclass(frozen=True, slots=True)
class Backchannel:
    """A short utterance inside the other speaker's turn that does not take the floor.

    Full-Duplex-Bench: shorter than 1 s (and at most 2 words when words are known). An
    utterance is one speaker's segments joined across pauses under 0.3 s (``turns.TurnConfig``);
    onset/offset are its first onset and last offset, seconds. ``cut_by_end``: the call ended
    before the other side's answer to it, held or stopped, was decided
    (``turns.Timeline.backchannel_cut_by_end``), as the result's ``backchannels`` says.
    """

    channel: Channel
    onset_s: float
    offset_s: float
    cut_by_end: bool = False


@dataclass(frozen=True, slots=True)
class Overlap:
    """A stretch where both channels are in speech at once (from VAD segments)."""

    onset_s: float
    offset_s: float

    @property
    def duration_s(self) -> float:
        return self.offset_s - self.onset_s


@dataclass(frozen=True, slots=True)
class TurnTranscript:
    """What a speech recogniser heard in one finished turn (optional extra ``livejudge[asr]``).

    Attributes:
        channel: whose turn.
        onset_s, offset_s: the turn's acoustic bounds, session seconds.
        text: the recognised words (may include fillers if the recogniser keeps them).
        n_words: number of words in ``text``.
        language: language code if the recogniser reported one ("en"), else "".
    """

    channel: Channel
    onset_s: float
    offset_s: float
    text: str
    n_words: int
    language: str = ""


@dataclass(frozen=True, slots=True)
class DimensionScore:
    """The judge's reading of one of the 18 human-likeness dimensions for one window.

    Attributes:
        score: expected rating on the paper's 1–5 scale (1 machine-like, 5 human-like);
            exactly 3.0 when ``gated`` (no lean / not enough evidence, the Turing-test paper, App. D.2).
        evidence: how much evidence the window held for this dimension, in ``evidence_unit``
            (seconds of agent speech, turns, words); 0 when there is no signal at all.
        evidence_unit: unit of ``evidence`` ("s", "turns", "words", "" when no signal exists).
        gated: True when evidence was below the dimension's minimum, so the score is 3 and
            the dimension contributes nothing to P(human).
        z: latent ODL score z_k (after gating: the training-set mean, i.e. contribution 0).
        contribution: c_k = standardised z_k × classifier weight towards "machine"
            (the Turing-test paper, App. E.7: positive = machine-like evidence).
        reason: short text for the meter when gated ("no signal in the CPU backbone", ...).
    """

    score: float
    evidence: float
    evidence_unit: str
    gated: bool
    z: float = 0.0
    contribution: float = 0.0
    reason: str = ""


MIN_EVIDENCE_SHARE = 0.15
"""HEURISTIC: a window whose ungated dimensions carry less than this share of the head's classifier
weight has no evidence (P(human) null). Without it, the whisper head's first windows (no agent turn
settled yet, so its encoder dimensions were gated) showed the bias alone: P(human) 1.00 for a TTS agent."""


@dataclass(frozen=True, slots=True)
class JudgeResult:
    """One judged window.

    Attributes:
        t_s: session time at which the window was taken (= window_end_s).
        window_start_s, window_end_s: the judged span on the session clock, seconds.
        classifier_p_human: the linear classifier's raw output P(human) of the agent side, in
            [0, 1], whether or not the window had evidence (``p_human`` is the figure to show).
        dimensions: dimension id (see ``livejudge.judge.model.dimensions``) → DimensionScore,
            in the paper's order.
        compute_s: wall time the judge took for this window, seconds.
        evidence_share: share of the head's classifier weight (Σ|w_k| over the dimensions it can
            read) carried by the dimensions not gated in this window, in [0, 1]. Below
            ``MIN_EVIDENCE_SHARE`` P(human) is mostly the classifier's bias: no evidence.
        frame_p_human: a head with a frame readout (``livejudge.judge.model.frame_cnn``): that
            readout's own calibrated P(human) for this window, blended into ``classifier_p_human``
            (mean of log-odds); None when the head has none or the window too few frames.
        frame_contribution: its pull on the blended log-odds, machine-positive like a dimension's
            ``contribution`` (− w·logit(frame_p_human)); the dimensions' contributions are then
            scaled by (1 − w). 0 without a frame readout.
    """

    t_s: float
    window_start_s: float
    window_end_s: float
    classifier_p_human: float
    dimensions: dict[str, DimensionScore] = field(default_factory=dict)
    compute_s: float = 0.0
    evidence_share: float = 1.0
    frame_p_human: float | None = None
    frame_contribution: float = 0.0

    @property
    def p_human(self) -> float | None:
        """P(human) of the agent side in [0, 1], or None when the window has no evidence
        (``has_evidence``): a number there would be the classifier's bias, not a measurement."""
        return self.classifier_p_human if self.has_evidence else None

    @property
    def has_evidence(self) -> bool:
        """False when every dimension was gated, or the ungated ones carry less than
        ``MIN_EVIDENCE_SHARE`` of the classifier's weight: P(human) is then (mostly) the
        classifier's bias and says nothing about the agent (exported as null, left out of means)."""
        if self.evidence_share < MIN_EVIDENCE_SHARE:
            return False
        return not self.dimensions or any(not d.gated for d in self.dimensions.values())

    @property
    def no_evidence(self) -> bool:
        """``not has_evidence``: the name the result JSON uses (``no_evidence``), so Python code that
        follows the docs finds it on the object too (a trial reached for ``.no_evidence``)."""
        return not self.has_evidence

    def to_dict(self) -> dict:
        return {
            "t_s": round(self.t_s, 3),
            "window_start_s": round(self.window_start_s, 3),
            "window_end_s": round(self.window_end_s, 3),
            "p_human": round(self.classifier_p_human, 4) if self.has_evidence else None,
            "no_evidence": not self.has_evidence,  # always present: a reader need not guess a missing key
            "evidence_share": round(self.evidence_share, 3),
            "compute_ms": round(self.compute_s * 1000.0, 2),
            **({} if self.frame_p_human is None else {"frame_readout": {
                "p_human": round(self.frame_p_human, 4), "contribution": round(self.frame_contribution, 4)}}),
            "dimensions": {
                k: {
                    # gated: no measurement, so no number (the 3.0 "no lean" is a placeholder that
                    # read as a score in the JSON; a new user's trial)
                    "score": None if v.gated else round(v.score, 3),
                    "evidence": round(v.evidence, 3),
                    "evidence_unit": v.evidence_unit,
                    "gated": v.gated,
                    # gated: the latent score was not measured either (0.0 read as a measurement; a
                    # trial); its contribution to P(human) is exactly 0, which is what was used
                    "z": None if v.gated else round(v.z, 4),
                    "contribution": round(v.contribution, 4),
                    **({"reason": v.reason} if v.reason else {}),
                }
                for k, v in self.dimensions.items()
            },
        }


def event_to_dict(event: object) -> dict:
    """A JSON-ready dict of any event above, with a ``type`` key (the class name)."""
    if isinstance(event, JudgeResult) or callable(getattr(event, "to_dict", None)):
        d = event.to_dict()  # JudgeResult, timing.verdicts.Verdict
    elif isinstance(event, AudioChunk):
        raise TypeError("AudioChunk is not an exportable event")
    else:
        d = asdict(event)  # type: ignore[arg-type]
        if isinstance(event, Transition):
            d = {"from": event.from_channel, "to": event.to_channel,
                 "from_offset_s": event.from_offset_s, "to_onset_s": event.to_onset_s,
                 "gap_s": event.gap_s}
    d = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in d.items()}
    return {"type": type(event).__name__, **d}
