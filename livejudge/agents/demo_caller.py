"""The scripted human caller of ``livejudge demo``: real recorded speech that behaves like a caller.

A caller who only ever speaks whole sentences and then waits in silence gives a rude agent
nothing to cut into (a new user's trial: the rude agent looked better than the polite one,
faster and with fewer flags). People pause to think in the middle of a turn and say "mm" while
the agent talks, so this caller does too:

1. "opening": a plain request (CMU ARCTIC cards).
2. "mm": a short backchannel 1.5 s into the agent's reply (asks for no reply).
3. "thinking pause": one sentence of the book with a 0.8 s pause in the middle (LibriVox).
4. "interruption": a command 1.5 s into the agent's reply (a real barge-in).
5. "self-correction": "four queen of clubs … seven of clubs", a 0.6 s pause between.
6. "mm": a backchannel 2.0 s into the agent's reply.
7. "closing": digits, a 0.7 s pause, then a last short command.

What each ``--behaviour`` of the example agent (``livejudge.agents.demo``) should show against it:
``polite`` waits out the pauses, holds through the "mm"s and yields to the interruption, but
answers 1.0–1.3 s after the caller ends (its VAD waits out a 1 s silence): the latency verdicts
flag "above the human mean 0.74 s, S2S range". ``rude`` answers 0.3 s after any silence: it cuts into the
pauses (then talks over the caller, who goes on), stops for the "mm"s (false yields) and talks
through the interruption: quick replies, and the verdicts flag the rudeness.

The pauses (``DEMO_PAUSES_S``) sit inside 0.5–0.9 s: long enough for the ``pause`` verdicts
(``VerdictConfig.pause_min_s`` 0.5 s) and for a 0.2 s VAD plus 0.1 s think time to answer into,
short of the polite agent's 1.0 s VAD stop. The clips are trimmed to their speech bounds, so
each pause is exact digital silence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BACKCHANNEL_S = 0.4
"""Length of the caller's "mm" (the first syllable of "five five", CMU ARCTIC), seconds."""
FADE_S = 0.01
"""Fade at each end of a cut piece (no click), seconds."""


@dataclass(frozen=True)
class DemoTurn:
    """One turn of the demo caller.

    Attributes:
        label: what the turn is ("thinking pause", "mm", ...).
        clips: shipped human clips (``livejudge/data/audio/human``), trimmed and joined.
        pauses_s: the silence between consecutive clips, seconds (len(clips) - 1 values).
        barge_in_after_s: start this long after the agent's reply starts; None = after the reply.
        floor: False for a backchannel (it asks for no reply).
        max_s: keep only the first ``max_s`` seconds (the "mm" out of "five five"), or None.
    """

    label: str
    clips: tuple[str, ...]
    pauses_s: tuple[float, ...] = ()
    barge_in_after_s: float | None = None
    floor: bool = True
    max_s: float | None = None


DEMO_SCRIPT: tuple[DemoTurn, ...] = (
    DemoTurn("opening", ("cmu_cards_005",)),
    DemoTurn("mm", ("cmu_cards_004",), barge_in_after_s=1.5, floor=False, max_s=BACKCHANNEL_S),
    DemoTurn("thinking pause", ("librivox_austen_0880", "librivox_austen_0890"), (0.8,)),  # one sentence
    DemoTurn("interruption", ("cmu_goforward",), barge_in_after_s=1.5),
    DemoTurn("self-correction", ("cmu_cards_002", "cmu_cards_003"), (0.6,)),
    DemoTurn("mm", ("cmu_cards_004",), barge_in_after_s=2.0, floor=False, max_s=BACKCHANNEL_S),
    DemoTurn("closing", ("cmu_numbers", "cmu_something"), (0.7,)),
)
"""The demo caller, in order (the module docstring says what each turn is for)."""

DEMO_PAUSES_S = tuple(p for t in DEMO_SCRIPT for p in t.pauses_s)
"""The caller's pauses inside a turn, seconds."""


def turn_audio(turn: DemoTurn) -> np.ndarray:
    """A demo turn's audio: its clips trimmed to their speech bounds (0.9 × level), joined by
    exact digital silences of ``pauses_s``. float32 mono 16 kHz, shape (n_samples,).

    Raises:
        ValueError: ``pauses_s`` does not have one value fewer than ``clips``, or a negative pause.
    """
    from livejudge.audio import SAMPLE_RATE, fade_edges
    from livejudge.testing.dialogues import load_clip, trim

    if len(turn.pauses_s) != len(turn.clips) - 1 or any(p < 0 for p in turn.pauses_s):
        raise ValueError(f"demo turn {turn.label!r}: needs {len(turn.clips) - 1} pause(s) ≥ 0, got {turn.pauses_s}")
    parts = []
    for i, name in enumerate(turn.clips):
        if i:
            parts.append(np.zeros(int(round(turn.pauses_s[i - 1] * SAMPLE_RATE)), np.float32))
        parts.append(0.9 * trim(load_clip(name)))
    x = np.concatenate(parts).astype(np.float32)
    if turn.max_s is not None:
        x = fade_edges(x[: int(round(turn.max_s * SAMPLE_RATE))], FADE_S)
    return x


def demo_turns(barge_in: dict[int, float] | None = None, script: tuple[DemoTurn, ...] = DEMO_SCRIPT):
    """The demo caller's turns as ``livejudge.sources.ws.CallerTurn`` (named "N label").

    Args:
        barge_in: ``--barge-in``: floor turn number (1-based; the "mm"s are not counted) →
            seconds after the agent's reply starts. Given, it replaces the script's barge-ins of
            floor turns (the "mm"s keep theirs).
    Raises:
        ValueError: a ``barge_in`` turn number beyond the script's floor turns.
    """
    from livejudge.sources.ws import CallerTurn

    n_floor = sum(t.floor for t in script)
    bad = [k for k in (barge_in or {}) if not 1 <= k <= n_floor]
    if bad:
        raise ValueError(f"--barge-in names turn {bad[0]} but the demo caller has {n_floor} turns "
                         "(the backchannels not counted)")
    out, k = [], 0
    for i, t in enumerate(script, 1):
        after = t.barge_in_after_s
        if t.floor:
            k += 1
            if barge_in is not None:
                after = barge_in.get(k)
        out.append(CallerTurn(turn_audio(t), f"{i} {t.label}", after, floor=t.floor))
    return out


__all__ = ["BACKCHANNEL_S", "DEMO_PAUSES_S", "DEMO_SCRIPT", "DemoTurn", "demo_turns", "turn_audio"]
