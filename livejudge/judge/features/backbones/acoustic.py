"""The CPU backbone: interpretable paralinguistic, timing and (when transcribed) text features.

``AcousticBackbone.embed`` reads the AGENT channel of each ``WindowSnapshot``, restricted to the
agent's VAD speech segments and turns that the snapshot carries, plus the snapshot's
transitions (response latency) and barge-ins (yield), and the agent's turn transcripts
(``WindowSnapshot.transcripts``, from ``livejudge.judge.features.asr``; optional extra livejudge[asr]),
and returns one ``Embedding`` per window:

* ``vectors["features"]``: float32, shape (36,) = len(FEATURE_NAMES) + len(TEXT_FEATURE_NAMES),
  in ``VECTOR_NAMES`` order: the 25 acoustic/timing features (``livejudge.judge.features.acoustic``),
  then the 11 text features (``livejudge.judge.features.text``), each in its unit. Features
  the window cannot measure are set to their reference centre (neutral for the prior head);
  a text feature whose dimension has less text than ``TEXT_EVIDENCE_MIN`` (words or turns)
  is also set to its centre (``TextAnalysis.vector(impute=True, gate=True)``), so no
  transcripts at all gives the same vector as the old 25 features plus 11 centres.
* ``evidence``: one ``Evidence`` per dimension, for all 18: seconds of voiced agent speech for
  the prosodic and voice-quality dimensions, seconds of agent speech for fillers (whose vector
  row also reads the text filler rate when transcripts exist) and vocalisations, seconds of
  agent turn time for the noise floor. With transcripts, linguistic_imprecision,
  sycophant_behavior, written_style_expression, textual_sentiment and code_switching get the
  text's words or turns (``analyse_text(...).evidence``); without, ``Evidence(0, "",
  "needs transcripts (livejudge[asr]) ...")``. Dimensions no feature here measures honestly
  (memory, logic, metaphor, pronunciation accuracy, accent) get ``Evidence(0, "", reason)``.
* ``features``: every measured value by name (NaN dropped), plus counts (turns, responses,
  nuclei, pauses, detected breaths/fillers/laughs) for display; text values and counts
  prefixed ``text_`` when transcripts exist.

``turn_features(window)`` gives the same features per agent turn (for reports; the judge reads
the window vector).

No weights; runs on one core (target ≤ 100 ms per 30 s window: benchmarks/judge_features_speed.py).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from livejudge.events import Turn
from livejudge.timing.window import WindowSnapshot
from livejudge.judge.features.acoustic import FEATURE_NAMES, FEATURES, FeatureResult, FrameCache, extract_features
from livejudge.judge.features.text import GATED_REASONS, TEXT_EVIDENCE_MIN, TEXT_FEATURE_NAMES, TEXT_FEATURES, analyse_text
from livejudge.judge.features.backbones.base import Embedding, Evidence

VECTOR_NAMES: tuple[str, ...] = tuple(FEATURE_NAMES) + tuple(TEXT_FEATURE_NAMES)
"""Names of the embedding components, in order: acoustic/timing features, then text features."""
VECTOR_SPECS = tuple(FEATURES) + tuple(TEXT_FEATURES)
"""``FeatureSpec`` of each embedding component, in ``VECTOR_NAMES`` order."""

NEEDS_TRANSCRIPTS = "needs transcripts (livejudge[asr]); no acoustic signal"
NO_ACOUSTIC_SIGNAL = "no honest acoustic signal in the CPU backbone"

# dimension id → (evidence quantity, unit, reason when it has no signal)
# quantity: "voiced_s" (seconds of voiced agent speech), "speech_s" (seconds inside agent VAD
# segments), "turn_s" (seconds of agent turns, pauses included), or None (no signal).
EVIDENCE_SOURCE: dict[str, tuple[str | None, str, str]] = {
    "memory_consistency": (None, "", NEEDS_TRANSCRIPTS),
    "logical_coherence": (None, "", NEEDS_TRANSCRIPTS),
    "pronunciation_accuracy": (None, "", "needs transcripts and a pronunciation model; no acoustic signal"),
    "code_switching": (None, "", "needs transcripts (livejudge[asr]) and language identification; no acoustic signal"),
    "linguistic_imprecision": (None, "", NEEDS_TRANSCRIPTS),
    "use_of_fillers": ("speech_s", "s", ""),
    "metaphor_and_implied_meaning": (None, "", NEEDS_TRANSCRIPTS),
    "rhythm": ("voiced_s", "s", ""),
    "intonation": ("voiced_s", "s", ""),
    "stress": ("voiced_s", "s", ""),
    "auxiliary_vocalizations": ("speech_s", "s", ""),
    "micro_physiological_noise": ("turn_s", "s", ""),
    "pronunciation_instability": ("voiced_s", "s", ""),
    "accent": (None, "", NO_ACOUSTIC_SIGNAL + " (accent needs a trained accent model)"),
    "sycophant_behavior": (None, "", NEEDS_TRANSCRIPTS),
    "written_style_expression": (None, "", NEEDS_TRANSCRIPTS),
    "textual_sentiment": (None, "", NEEDS_TRANSCRIPTS),
    "acoustic_emotion": ("voiced_s", "s", ""),
}
"""Where each dimension's evidence comes from WITHOUT transcripts (all 18 dimensions)."""

TEXT_DIMENSIONS: tuple[str, ...] = ("linguistic_imprecision", "sycophant_behavior", "written_style_expression",
                                    "textual_sentiment", "code_switching")
"""Dimensions whose evidence is the transcripts' words or turns when ``w.transcripts`` is non-empty
(``analyse_text(...).evidence``; units "words"/"turns"). use_of_fillers keeps its acoustic
seconds evidence; its vector row adds the text filler rate (gated at its own word minimum)."""

CODE_SWITCHING_NOTE = ("shown for information; weight 0 in the shipped heads: language labels cannot tell "
                       "a motivated switch (human-like) from an odd one (machine-like)")
"""Reason attached to code_switching evidence when two or more languages were identified."""

EVIDENCE_MIN: dict[str, float] = {
    "rhythm": 3.0,
    "intonation": 2.0,
    "stress": 2.0,
    "pronunciation_instability": 1.0,
    "acoustic_emotion": 4.0,
    "micro_physiological_noise": 4.0,
    "use_of_fillers": 8.0,
    "auxiliary_vocalizations": 8.0,
}
EVIDENCE_MIN.update({d: TEXT_EVIDENCE_MIN[d] for d in TEXT_DIMENSIONS})
"""Default minimum evidence per dimension (acoustic ones in seconds; heuristic: enough speech for
several syllables / phrases / glottal periods; text ones in words or turns, from
``livejudge.judge.features.text.TEXT_EVIDENCE_MIN``, heuristic). A head's ``evidence_min``
overrides these."""


class AcousticBackbone:
    """CPU backbone "acoustic-v1": named paralinguistic + timing features of the agent channel,
    plus text features of the agent's transcripts (v0 had the 25 acoustic features only).

    Attributes:
        name: "acoustic-v1". readouts: ("features",). feature_names: ``VECTOR_NAMES``.
        embedding_dim: len(feature_names) (36). evidence_min: ``EVIDENCE_MIN``.
    """

    name = "acoustic-v1"
    readouts = ("features",)
    feature_names = VECTOR_NAMES
    embedding_dim = len(VECTOR_NAMES)
    evidence_min = EVIDENCE_MIN

    @property
    def frame_cache(self) -> FrameCache:
        """Per-frame analysis shared by this backbone's overlapping windows (``FrameCache``)."""
        cache = self.__dict__.get("_frame_cache")
        if cache is None:
            cache = self.__dict__["_frame_cache"] = FrameCache()
        return cache

    def embed_one(self, w: WindowSnapshot) -> tuple[Embedding, FeatureResult]:
        """One window → (Embedding, the FeatureResult it was built from)."""
        if w.sample_rate != 16000:
            raise ValueError(f"window sample rate is {w.sample_rate} Hz; the acoustic backbone needs 16000 Hz "
                             f"(resample with livejudge.audio.resample)")
        # No VAD information at all in the snapshot → energy fallback; user-only segments → agent silent.
        segments = None if not w.segments else w.segments_of("agent")
        res = extract_features(
            w.agent, start_s=w.start_s, segments=segments, turns=w.turns_of("agent"),
            transitions=w.transitions, barge_ins=w.barge_ins, frame_cache=self.frame_cache,
        )
        ta = analyse_text(w.transcripts)
        amounts = {"voiced_s": res.voiced_s, "speech_s": res.speech_s, "turn_s": res.turn_s}
        evidence = {}
        for dim, (q, unit, reason) in EVIDENCE_SOURCE.items():
            if q is None:
                evidence[dim] = Evidence(0.0, "", reason)
            else:
                evidence[dim] = Evidence(round(float(amounts[q]), 3), unit, "")
        has_text = bool(w.transcripts)
        if has_text:
            for dim in TEXT_DIMENSIONS:
                ev = ta.evidence[dim]
                if dim == "code_switching" and ev.unit:
                    ev = Evidence(ev.amount, ev.unit, CODE_SWITCHING_NOTE)
                evidence[dim] = ev
            # transcripts exist but cannot judge these honestly: say why (not "needs transcripts")
            for dim, why in GATED_REASONS.items():
                evidence[dim] = Evidence(0.0, "", why)
        named = {k: float(v) for k, v in res.values.items() if math.isfinite(v)}
        named.update({k: float(v) for k, v in res.extra.items() if math.isfinite(v)})
        named.update({"voiced_s": res.voiced_s, "speech_s": res.speech_s, "turn_s": res.turn_s,
                      "n_agent_turns": float(res.n_agent_turns), "n_responses": float(res.n_responses),
                      "n_barge_ins": float(res.n_barge_ins), "n_units": float(res.n_units),
                      "n_period_pairs": float(res.n_periods)})
        if has_text:
            named.update({f"text_{k}": float(v) for k, v in ta.values.items() if math.isfinite(v)})
            named.update({f"text_n_{k}": float(v) for k, v in ta.counts.items()})
        vec = np.concatenate([res.vector(impute=True), ta.vector(impute=True, gate=True)]).astype(np.float32)
        return Embedding(vectors={"features": vec}, evidence=evidence, features=named), res

    def turn_features(self, w: WindowSnapshot, margin_s: float = 0.3) -> list[tuple[Turn, FeatureResult]]:
        """Per-turn features: each agent turn lying wholly inside the window, analysed on its own.

        The turn's audio (plus ``margin_s`` either side, for breaths at its edges), its VAD
        segments, the response transition that opened it and the user barge-ins during it.

        Returns:
            [(turn, FeatureResult), ...] in time order.
        """
        out = []
        sr = w.sample_rate
        for t in w.turns_of("agent"):
            if t.onset_s < w.start_s or t.offset_s > w.end_s:
                continue
            a_s = max(w.start_s, t.onset_s - margin_s)
            b_s = min(w.end_s, t.offset_s + margin_s)
            x = w.agent[int(round((a_s - w.start_s) * sr)):int(round((b_s - w.start_s) * sr))]
            segs = [s for s in w.segments_of("agent") if s.offset_s > t.onset_s and s.onset_s < t.offset_s]
            trans = [tr for tr in w.transitions if tr.to_channel == "agent" and abs(tr.to_onset_s - t.onset_s) < 1e-6]
            bis = [b for b in w.barge_ins if t.onset_s <= b.onset_s <= t.offset_s]
            out.append((t, extract_features(x, start_s=a_s, segments=segs, turns=[t], transitions=trans,
                                            barge_ins=bis)))
        return out

    def embed(self, windows: Sequence[WindowSnapshot]) -> list[Embedding]:
        """Embed a batch of windows, one Embedding each, same order (see module docstring)."""
        return [self.embed_one(w)[0] for w in windows]


def feature_table() -> list[dict]:
    """The vector's components as dicts (name, unit, dimension, centre, spread, human_sign, source)
    for docs, in ``VECTOR_NAMES`` order (acoustic, then text)."""
    return [dict(name=f.name, unit=f.unit, dimension=f.dimension, centre=f.centre, spread=f.spread,
                 human_sign=f.human_sign, source=f.source, description=f.description) for f in VECTOR_SPECS]
