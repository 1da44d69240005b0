"""A recorded call made ready to stream: the steps every recorded call takes, in one place.

``livejudge score``, ``replay``, ``check`` and each call of a batch open a recording with
``livejudge.audio.open_call`` (read block by block), then:

1. check the input's health from its first seconds (``timing.health.check_recording``: swapped,
   silent or identical channels, clipping, DC offset, a noisy line; a telephone band as a note);
2. refuse a recording in which nothing can be measured (``timing.health.unmeasurable``);
3. apply the echo gate (``timing.echo.gate_source``, ``--echo-gate``; with ``off``, echo it finds
   is warned, ``echo_ungated``);
3b. scale a quiet channel (``quiet_channel``: speech under ``QUIET_SPEECH_DBFS``) up to
   ``timing.health.QUIET_TARGET_DBFS`` (``quiet_gain_db``; step 1 checked its noise floor at that
   level), so the VAD's fixed −50 dBFS gate does not cut its speech (the warning says by how
   much; ``source.gain_db`` in the result);
4. after streaming, add what the reader found on the way (a file cut short, clipped or NaN
   samples: ``timing.health.reader_warnings``).

``prepare_recording`` does 1–3 and returns a ``PreparedRecording``; its ``start`` and ``finish``
put the findings on the ``Session`` before and after ``stream_call``. One path, so every command
gives the same warnings for the same file (``check`` had given no warning for a truncated file).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np


class UnmeasurableRecording(ValueError):
    """Nothing can be measured in the recording (both channels silent, one signal on both); the
    message is the one-line reason, without the file name."""


@dataclass(frozen=True)
class PreparedRecording:
    """A recorded call ready for ``livejudge.session.stream_call``.

    Attributes:
        call: what to stream: the reader itself, or the call in memory with its user channel gated.
        reader: the ``livejudge.audio.CallReader`` it was read from (close it when done).
        gate_info: the echo gate's record, the result's ``source.echo_gate``.
        health: the input-health warnings found before streaming (``HealthWarning``s).
        line: the narrowband-line note (``timing.health.check_line``), or None.
        gain_db: the gain applied to a quiet channel, {"user": dB, ...} (empty when none was).
    """

    call: Any
    reader: Any
    gate_info: dict
    health: tuple
    line: dict | None
    gain_db: dict = field(default_factory=dict)

    def start(self, session: Any, say: bool = True) -> None:
        """Put the warnings and the line note on ``session`` before streaming (``say``: one line each
        on stderr now; a batch says them per call in its summary instead), and start its VADs' noise
        floors from the call's first seconds (``Session.prime_noise_floor``: a recording can be read
        ahead; one that starts inside a phrase had that phrase read as noise)."""
        u, a = head_of(self.call, session.config.vad.noise_history_s)
        session.prime_noise_floor(u, a)
        session.set_input_health(list(self.health), say=say)
        if self.gain_db:
            session.info["gain_db"] = dict(self.gain_db)
        if self.line is not None:  # a telephone band: a note, not a warning
            session.set_line(self.line, say=say)

    def finish(self, session: Any, say: bool = True) -> None:
        """After streaming: a file cut short, samples clipped or NaN become input-health warnings
        (a gate on their count had passed a file cut to a third: a trial); the result stays valid."""
        from livejudge.timing.health import reader_warnings

        if getattr(self.reader, "truncated", ()):
            session.info["truncated"] = True
        session.add_input_health(reader_warnings(self.reader), say=say)


def prepare_recording(reader: Any, echo_gate: str, *, log: bool = True) -> PreparedRecording:
    """Steps 1–3 of the module docstring on an open recording.

    Args:
        reader: a ``livejudge.audio.CallReader`` (``open_call``), 16 kHz float32 blocks of two channels.
        echo_gate: ``--echo-gate``: "auto", "on" or "off".
        log: say on stderr when the echo gate is applied (a batch says it per call instead).
    Returns:
        the ``PreparedRecording``.
    Raises:
        UnmeasurableRecording: nothing can be measured (the reason in one line).
        livejudge.audio.AudioFormatError: the file cannot be decoded while it is read.
    """
    from livejudge.timing.echo import gate_source
    from livejudge.timing.health import (
        check_recording, echo_residual_warnings, echo_ungated_warnings, quiet_gain_db, unmeasurable,
    )

    health, line = check_recording(reader)  # issue 20's input-health check, from the first seconds
    refuse = unmeasurable(health, truncated=getattr(reader, "truncated", ()),
                          not_numbers=getattr(reader, "not_numbers", ()))
    if refuse:  # one line, no result that would pretend otherwise
        raise UnmeasurableRecording(refuse)
    call, gate_info = gate_source(reader, echo_gate, log=log)
    # the gate on and its room tail still there, or echo left in with the gate off
    health = [*health, *echo_residual_warnings(gate_info), *echo_ungated_warnings(gate_info)]
    gains = {w.channel: quiet_gain_db(w.value) for w in health  # the gain check_recording checked the floor at
             if w.code == "quiet_channel" and w.channel in ("user", "agent") and w.value is not None}
    if gains:
        call = _scaled(call, gains)
        health = [replace(w, message=f"{w.message} (scaled up by {gains[w.channel]:.1f} dB for this run: "
                          "timing and judge read the scaled audio; source.gain_db)")
                  if w.code == "quiet_channel" and w.channel in gains else w for w in health]
    return PreparedRecording(call=call, reader=reader, gate_info=gate_info, health=tuple(health), line=line,
                             gain_db=gains)


def head_of(call: Any, seconds: float) -> tuple[np.ndarray, np.ndarray]:
    """The first ``seconds`` of what ``stream_call`` will stream from ``call`` (a TwoChannelAudio,
    a ``CallReader`` or a ``ScaledReader``): (user, agent), float32 16 kHz, as its ``blocks``
    give them (gain and echo gate applied). Reads only the first block of a reader."""
    from livejudge.audio import SAMPLE_RATE

    n = int(round(seconds * SAMPLE_RATE))
    if hasattr(call, "user") and hasattr(call, "agent"):
        return call.user[:n], call.agent[:n]
    for u, a in call.blocks(seconds):
        return u[:n], a[:n]
    return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float32)


def _scaled(call: Any, gains_db: dict) -> Any:
    """``call`` with each channel of ``gains_db`` scaled by that many dB (clipped to ±1)."""
    from livejudge.audio import TwoChannelAudio

    g = (float(10 ** (gains_db.get("user", 0.0) / 20)), float(10 ** (gains_db.get("agent", 0.0) / 20)))
    if isinstance(call, TwoChannelAudio):
        return replace(call, user=_gain(call.user, g[0]), agent=_gain(call.agent, g[1]))
    return ScaledReader(call, g)


def _gain(x: np.ndarray, g: float) -> np.ndarray:
    return x if g == 1.0 else np.clip(x * np.float32(g), -1.0, 1.0).astype(np.float32, copy=False)


class ScaledReader:
    """A ``CallReader`` whose ``blocks()`` come scaled by a gain per channel (user, agent: linear);
    every other attribute is the reader's."""

    def __init__(self, reader: Any, gains: tuple[float, float]) -> None:
        self._reader = reader
        self._gains = gains

    def blocks(self, block_s: float = 10.0):
        for u, a in self._reader.blocks(block_s):
            yield _gain(u, self._gains[0]), _gain(a, self._gains[1])

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)
