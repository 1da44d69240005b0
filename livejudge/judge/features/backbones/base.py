"""The backbone interface: window audio → embedding(s) the ODL head reads.

A backbone turns a ``WindowSnapshot`` (both channels, 16 kHz float32, plus the window's timing
events) into one ``Embedding``. Two kinds exist:

* ``acoustic`` (CPU, no weights): an interpretable feature vector of the agent's speech,
  timing and (with ASR) words; readout ``"features"``.
* ``qwen-omni`` (GPU): Qwen2.5-Omni thinker hidden states; readouts ``"mean"`` (first-step
  mean over all positions) and ``"last"`` (last token), fused by the head (the Turing-test paper, App. E.3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from livejudge.timing.window import WindowSnapshot


@dataclass(frozen=True)
class Evidence:
    """How much evidence a window holds for one dimension.

    Attributes:
        amount: quantity in ``unit`` (seconds of agent speech, turns, words, events).
        unit: "s", "turns", "words", ... ("" when the backbone has no signal for the dimension).
        reason: shown when gated, e.g. "needs transcripts (livejudge[asr])".
    """

    amount: float
    unit: str
    reason: str = ""


@dataclass(frozen=True)
class Embedding:
    """A backbone's output for one window.

    Attributes:
        vectors: readout name → float32 array of shape (embedding_dim,). The acoustic backbone
            gives {"features": ...}; Qwen gives {"mean": ..., "last": ...}. The whisper backbone
            built for a head with a frame readout also gives "frame_stats", float64 (n_turns,
            members, 129): per settled turn the readout's sums (``FrameCNN.turn_stats``), which the
            Judge pools; no ODL readout reads it.
        evidence: dimension id → Evidence in this window (missing ids = no evidence).
        features: optional named scalar values for display/debugging (name → value in its unit).
    """

    vectors: dict[str, np.ndarray]
    evidence: dict[str, Evidence] = field(default_factory=dict)
    features: dict[str, float] = field(default_factory=dict)


@runtime_checkable
class Backbone(Protocol):
    """What the judge needs from a backbone."""

    name: str
    """Stable id stored in head checkpoints, e.g. "acoustic-v1" or "qwen2.5-omni-7b"."""
    embedding_dim: int
    """Length of each readout vector."""
    readouts: tuple[str, ...]
    """Readout names this backbone provides, e.g. ("features",) or ("mean", "last")."""

    def embed(self, windows: Sequence[WindowSnapshot]) -> list[Embedding]:
        """Embed a batch of windows (one Embedding per window, same order)."""
        ...
