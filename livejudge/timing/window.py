"""Per-channel ring buffers on the session clock, and snapshots of the last N seconds.

The audio path writes into ``RollingWindow`` (cheap: one numpy copy per chunk); the judge
worker reads an immutable ``WindowSnapshot`` copied out under a lock, so judging never holds
up the audio.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from livejudge.audio import SAMPLE_RATE
from livejudge.events import Backchannel, BargeIn, Channel, SpeechSegment, Transition, Turn, TurnTranscript


@dataclass(frozen=True)
class WindowSnapshot:
    """Both channels over ``[start_s, end_s)`` plus the timing events inside that span.

    Attributes:
        start_s, end_s: span on the session clock, seconds.
        user, agent: float32, shape (round((end_s − start_s) · 16000),), 16 kHz; zeros where no
            audio arrived.
        segments: VAD speech segments (both channels) that overlap the span, unclipped.
        turns: turns that overlap the span, unclipped.
        transitions: floor transitions whose ``to_onset_s`` lies in the span.
        barge_ins, backchannels: events whose onset lies in the span.
        transcripts: transcripts of finished turns that overlap the span (empty without ASR).
    """

    start_s: float
    end_s: float
    user: np.ndarray
    agent: np.ndarray
    segments: tuple[SpeechSegment, ...] = ()
    turns: tuple[Turn, ...] = ()
    transitions: tuple[Transition, ...] = ()
    barge_ins: tuple[BargeIn, ...] = ()
    backchannels: tuple[Backchannel, ...] = ()
    transcripts: tuple[TurnTranscript, ...] = ()
    sample_rate: int = field(default=SAMPLE_RATE)

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s

    def audio(self, channel: Channel) -> np.ndarray:
        return self.user if channel == "user" else self.agent

    def segments_of(self, channel: Channel) -> list[SpeechSegment]:
        return [s for s in self.segments if s.channel == channel]

    def turns_of(self, channel: Channel) -> list[Turn]:
        return [t for t in self.turns if t.channel == channel]

    def mono_mix(self) -> np.ndarray:
        """Both channels summed to one dialogue track (float32, clipped to [-1, 1])."""
        return np.clip(self.user + self.agent, -1.0, 1.0).astype(np.float32)


class ChannelBuffer:
    """Ring buffer of one channel's samples addressed by session time.

    Holds the last ``capacity_s`` seconds. Writing at time ``t_s`` places the chunk at sample
    index round(t_s · 16000); gaps stay zero, overlapping writes overwrite.
    """

    def __init__(self, capacity_s: float) -> None:
        self.capacity = int(round(capacity_s * SAMPLE_RATE))
        self._buf = np.zeros(self.capacity, dtype=np.float32)
        self._end = 0  # absolute sample index one past the newest written sample

    @property
    def end_s(self) -> float:
        return self._end / SAMPLE_RATE

    def write(self, samples: np.ndarray, t_s: float) -> None:
        start = int(round(t_s * SAMPLE_RATE))
        n = len(samples)
        if n == 0:
            return
        end = start + n
        if end <= self._end - self.capacity:
            return  # entirely older than the buffer holds
        # zero the part of the ring between the old end and the new start (silence gap)
        if start > self._end:
            self._zero(self._end, min(start, self._end + self.capacity))
        if n > self.capacity:
            samples = samples[-self.capacity:]
            start = end - self.capacity
            n = self.capacity
        self._put(start, samples)
        self._end = max(self._end, end)

    def _put(self, start: int, samples: np.ndarray) -> None:
        """Copy ``samples`` (at most ``capacity``) to absolute index ``start``: two slices at most."""
        i = start % self.capacity
        k = min(len(samples), self.capacity - i)
        self._buf[i:i + k] = samples[:k]
        if k < len(samples):
            self._buf[:len(samples) - k] = samples[k:]

    def _zero(self, a: int, b: int) -> None:
        if b > a:
            n = min(b - a, self.capacity)
            i = a % self.capacity
            k = min(n, self.capacity - i)
            self._buf[i:i + k] = 0.0
            self._buf[:n - k] = 0.0

    def read(self, start_s: float, end_s: float) -> np.ndarray:
        """Copy of the samples in [start_s, end_s); zeros outside what was written/retained."""
        a = int(round(start_s * SAMPLE_RATE))
        b = int(round(end_s * SAMPLE_RATE))
        out = np.zeros(max(0, b - a), dtype=np.float32)
        lo = max(a, self._end - self.capacity, 0)
        hi = min(b, self._end)
        if hi > lo:
            i = lo % self.capacity
            k = min(hi - lo, self.capacity - i)
            out[lo - a:lo - a + k] = self._buf[i:i + k]
            out[lo - a + k:hi - a] = self._buf[:hi - lo - k]
        return out


class RollingWindow:
    """Both channels' ring buffers, thread-safe; snapshots of the last ``window_s`` seconds."""

    def __init__(self, window_s: float = 30.0, margin_s: float = 5.0) -> None:
        if window_s <= 0:
            raise ValueError(f"window_s must be positive, got {window_s}")
        self.window_s = window_s
        self._lock = threading.Lock()
        self._bufs = {c: ChannelBuffer(window_s + margin_s) for c in ("user", "agent")}

    def write(self, channel: Channel, samples: np.ndarray, t_s: float) -> None:
        with self._lock:
            self._bufs[channel].write(samples, t_s)

    def read_channel(self, channel: Channel, start_s: float, end_s: float) -> np.ndarray:
        """One channel's samples in [start_s, end_s) (zeros for what is no longer held)."""
        with self._lock:
            return self._bufs[channel].read(start_s, end_s)

    def read(self, end_s: float, window_s: float | None = None) -> tuple[float, np.ndarray, np.ndarray]:
        """(start_s, user, agent) for the span [max(0, end_s − window_s), end_s)."""
        w = self.window_s if window_s is None else window_s
        start_s = max(0.0, end_s - w)
        with self._lock:
            return start_s, self._bufs["user"].read(start_s, end_s), self._bufs["agent"].read(start_s, end_s)
