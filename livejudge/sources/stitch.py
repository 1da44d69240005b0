"""Laying an embedded tap's audio chunks end to end on the session clock (Pipecat and LiveKit).

A framework hands a tap one chunk of a channel at a time, stamped when it was pushed or read.
Stamps jitter, and frames off a network arrive in bunches, so a tap cannot place each chunk at
its own stamp: the chunks of a bunch would overlap and overwrite each other. ``Stitcher`` lays a
chunk that continues its channel within a tolerance right after the one before, re-anchors on a
real gap, and reopens a short gap it had collapsed. ``StallLine`` is the one line a tap says when
a stall longer than the tolerance cost audio, rewritten with the total when the call ends.
"""

from __future__ import annotations

from typing import Any

REANCHOR_SAY_S = 0.3
"""Once re-anchors have dropped this much of a channel's audio (a stall past the stitch tolerance:
each frame of its backlog re-anchors), it is said once per channel, in the result's ``errors`` and
on stderr, seconds (HEURISTIC: above the first bunch of a call, at most the tolerance)."""


STALL_APART_S = 1.0
"""Re-anchors that drop audio less than this apart are one stall's bunch (its frames re-anchor one
by one), seconds (HEURISTIC); farther apart, ``StallLine`` counts another stall."""


class Stitcher:
    """Places consecutive chunks of one channel end to end: ``place(t_s, duration_s)`` takes a
    chunk's first sample's time by its stamp (s) and its length (s) and returns where it goes on
    the session clock (s) and how much of its start overlaps audio already placed (s).
    ``stretches`` counts new anchors, ``heals`` the collapsed gaps reopened
    (``heal_window_s``/``heal_min_s``; 0 window: no healing).

    Args:
        tolerance_s: a chunk stamped at most this much after the channel's end continues it.
        max_ahead_s: one stamped up to this much before the channel's end continues it too (stamps
            are late, never early: an earlier one means the stretch was anchored on a late stamp,
            so the channel re-anchors to it and the overlap is the caller's to drop).
        heal_window_s, heal_min_s: when every stamp over ``heal_window_s`` of a stretch's audio
            came at least ``heal_min_s`` later than where its chunk was placed, a gap with no
            frames was collapsed: the stretch resumes that much later.
    """

    def __init__(self, tolerance_s: float, max_ahead_s: float, heal_window_s: float = 0.0,
                 heal_min_s: float = 0.02) -> None:
        self.tol = tolerance_s
        self.ahead = max_ahead_s
        self.heal_window_s = heal_window_s
        self.heal_min_s = heal_min_s
        self.end_s: float | None = None
        self.stretches = 0
        self.heals = 0
        self._late_min = float("inf")
        self._late_span = 0.0

    def place(self, t_s: float, duration_s: float) -> tuple[float, float]:
        """(where the chunk starts on the session clock, s; how much of its start lies before where
        the channel had got to, s: a re-anchor to an earlier stamp, the first frames of a bunch
        having anchored the stretch late; the caller drops that much)."""
        e = self.end_s
        overlap_s = 0.0
        if e is not None and -self.ahead <= t_s - e <= self.tol:
            late = t_s - e  # how much later its stamp says it starts than where it goes
            self._late_min = min(self._late_min, late)
            self._late_span += duration_s
            placed = e
            if self.heal_window_s and self._late_span >= self.heal_window_s:
                if self._late_min >= self.heal_min_s:  # every stamp a second long was late: a gap was collapsed
                    placed = e + self._late_min
                    self.heals += 1
                self._late_min, self._late_span = float("inf"), 0.0
        else:
            self.stretches += 1
            placed = t_s
            self._late_min, self._late_span = float("inf"), 0.0
            if e is not None and t_s < e:  # re-anchored earlier: its first e − t_s seconds are already placed
                overlap_s = min(e - t_s, duration_s)
        self.end_s = placed + duration_s
        return placed, overlap_s


class StallLine:
    """What re-anchors dropped per channel, said once when it passes ``REANCHOR_SAY_S`` (in the
    session's ``errors`` and on stderr) and rewritten with the total at the end of the call (a
    trial read "0.32 s" of a 1.0 s loss; another's only word of 16 s of lost caller audio blamed
    ``max_lag_s``).

    Args:
        session: the tap's ``Session`` (its ``errors`` and ``_on_error``).
        label: the tap's name in the line ("pipecat tap").
        key: where the counts are in the result ("pipecat": ``result["pipecat"]["reanchor_dropped_s"]``).
        knobs: per channel, the setting to raise and its value ("TapConfig.user_stitch_tolerance_s", 0.25).
    """

    def __init__(self, session: Any, label: str, key: str, knobs: dict[str, tuple[str, float]]) -> None:
        self.session = session
        self.label = label
        self.key = key
        self.knobs = knobs
        self.dropped_s: dict[str, float] = {c: 0.0 for c in knobs}
        self.stalls: dict[str, int] = {c: 0 for c in knobs}  # bunches that dropped audio (re-anchors ≥ 1 s apart)
        self._at_s: dict[str, float] = {}
        self._first_s: dict[str, float] = {}
        self._last_s: dict[str, float] = {}
        self._line: dict[str, int] = {}

    def add(self, channel: str, dropped_s: float, at_s: float) -> None:
        """Count ``dropped_s`` seconds of ``channel`` dropped by a re-anchor near ``at_s`` (session
        clock, s); say the line once the channel's total passes ``REANCHOR_SAY_S``. Re-anchors less
        than ``STALL_APART_S`` after the last are one stall's bunch."""
        self.dropped_s[channel] += dropped_s
        if channel not in self._last_s or at_s - self._last_s[channel] >= STALL_APART_S:
            self.stalls[channel] += 1
        self._first_s.setdefault(channel, at_s)
        self._last_s[channel] = at_s
        if self.dropped_s[channel] >= REANCHOR_SAY_S and channel not in self._at_s:
            self._at_s[channel] = at_s
            errors = self.session.errors
            n = len(errors)
            line = self.text(channel, so_far=True)
            self.session._on_error(line)
            if len(errors) == n + 1 and errors[n] == line:  # kept (the list is bounded: MAX_ERRORS)
                self._line[channel] = n

    def text(self, channel: str, so_far: bool) -> str:
        knob, tol = self.knobs[channel]
        n, first, last = self.stalls[channel], self._first_s[channel], self._last_s[channel]
        # the whole span at the end: steady 300 ms bursts dropped audio all through a call whose
        # line named only the first stall (a trial)
        where = (f"in one bunch near {self._at_s[channel]:.2f} s" if so_far or (n < 2 and last - first < STALL_APART_S)
                 else f"in bunches from {first:.2f} s to {last:.2f} s" + (f" ({n} stalls)" if n > 1 else ""))
        return (f"{self.label}: {channel} audio stalled and then arrived {where}; "
                f"{self.dropped_s[channel]:.2f} s of it "
                + ("so far " if so_far else "in all ")
                + "overlapped audio already placed and was dropped, so the turns and the latencies around it are "
                f"not reliable (result[\"{self.key}\"][\"reanchor_dropped_s\"]): raise {knob} ({tol:g} s) "
                "to the transport's longest stall to keep such audio")

    def finish(self) -> None:
        """At the end of the call: each line said now gives the total, not its first 0.3 s."""
        for c, i in self._line.items():
            self.session.errors[i] = self.text(c, so_far=False)
