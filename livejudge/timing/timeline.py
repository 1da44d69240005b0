"""Turn-taking analysis of a growing call at flat cost per segment (``IncrementalTimeline``).

``turns.analyze`` is a pure function of *all* segments. Re-running it whenever a segment
closes costs O(n) per segment, so a call of n segments costs O(n²) (more, with the pairwise
scans inside ``analyze``). ``IncrementalTimeline`` gives exactly ``analyze(all segments)`` while
running ``analyze`` only over the last few turns:

* A **settled prefix**: every event whose key (onset; ``to_onset_s`` for transitions) lies
  before the cut time ``cut_s``, in append-only lists, never rescanned. Window queries bisect
  them (``window``).
* A **tail**: the closed segments from ``cut_s`` on, re-analysed with ``analyze`` together
  with a small *context*: the segments of the turn that holds the floor at ``cut_s``.

Cut rule. ``cut_s`` moves to a time X when, on *each* channel, the silence that contains X
(from the channel's last segment offset before X to its next segment onset, or to the
earliest onset a future segment can have, ``frontier``) lasts at least
``merge_pause_s + backchannel_max_s``. Why that is exact (for ``analyze`` as documented in
``turns.py``):

1. ``analyze`` merges a channel's segments into (rough) turns only across pauses shorter
   than ``merge_pause_s``; no turn, rough turn or backchannel host crosses X.
2. A backchannel lies strictly inside a rough turn of the other channel, so its class depends
   only on segments on its own side of X; the same holds for merge breaks and barge-ins
   (a barge-in starts strictly inside a turn of the other speaker). The utterances it is
   decided on, and the resume and talking-on rules, look at the same channel's speech less
   than ``merge_pause_s`` away, which is on the same side of X too.
3. Overlaps need speech on both channels at once: none crosses X.
4. The only state that crosses X is the floor: the turn with the latest offset so far (the
   first such in onset order). The first turn after X is compared with its channel and
   offset only, so re-analysing the tail with that turn's own segments in front gives the
   same transitions as the whole call.

The extra ``backchannel_max_s`` of silence is a margin for backchannel rules that look a
little beyond the other speaker's turn. ``tests/test_incremental_timeline.py`` checks
``IncrementalTimeline`` against ``analyze(all segments)`` event for event.

HEURISTIC fallback: when the tail spans more than ``max_tail_s`` (default 60 s) without such
a silence on both channels (a channel that never pauses long: noise, echo of the other
side), the tail is cut at the time whose shorter per-channel silence is longest, so the cost
stays bounded. Events across such a *forced cut* may differ from a whole-call analysis
(e.g. a turn split in two at a short pause); ``forced_cuts`` counts them.
"""

from __future__ import annotations

import bisect
import math
import sys
from dataclasses import dataclass, field
from typing import Iterable

from livejudge.events import CHANNELS, Channel, Overlap, SpeechSegment, Transition
from livejudge.timing.turns import Timeline, TurnConfig, analyze

_NEUMAIER = sys.version_info >= (3, 12)  # builtin sum() of floats is compensated from 3.12 on


class FloatSum:
    """A running float sum that equals builtin ``sum()`` over the same values in the same order.

    CPython's ``sum`` adds floats left to right before 3.12 and with Neumaier's compensated
    summation from 3.12 on (Neumaier 1974, ZAMM 54:39–51); both are mirrored here so that a
    sum carried across the settled prefix equals ``analyze``'s ``sum`` over all segments.
    ``value`` is ``0`` (an int, like ``sum([])``) until a value is added.
    """

    __slots__ = ("_s", "_c", "_n")

    def __init__(self) -> None:
        self._s, self._c, self._n = 0.0, 0.0, 0

    def add(self, x: float) -> None:
        if self._n == 0:
            self._s = 0 + x
        elif _NEUMAIER:
            s = self._s
            t = s + x
            if abs(s) >= abs(x):
                self._c += (s - t) + x
            else:
                self._c += (x - t) + s
            self._s = t
        else:
            self._s += x
        self._n += 1

    def copy(self) -> "FloatSum":
        out = FloatSum()
        out._s, out._c, out._n = self._s, self._c, self._n
        return out

    @property
    def value(self) -> float:
        if self._n == 0:
            return 0
        if _NEUMAIER and self._c and math.isfinite(self._c):
            return self._s + self._c
        return self._s


def event_key_s(event: object) -> float:
    """Time that orders an event in its Timeline list: ``to_onset_s`` of a transition, else onset."""
    return event.to_onset_s if isinstance(event, Transition) else event.onset_s  # type: ignore[attr-defined]


SettleKey = tuple[float, int, float, str]


def settle_items(tl: Timeline) -> list[tuple[SettleKey, object]]:
    """(settle key, event) for the turn-level events of ``tl``, sorted by key.

    The key's first element is the session time from which later audio can no longer change
    the event: a turn's or backchannel's offset, the offset of the turn that a transition or
    barge-in leads to. Ties keep the order turns, backchannels, transitions, barge-ins.
    """
    turn_end = {(t.channel, t.onset_s): t.offset_s for t in tl.turns}
    items: list[tuple[SettleKey, object]] = []
    items += [((t.offset_s, 0, t.onset_s, t.channel), t) for t in tl.turns]
    items += [((b.offset_s, 1, b.onset_s, b.channel), b) for b in tl.backchannels]
    items += [((turn_end.get((t.to_channel, t.to_onset_s), t.to_onset_s), 2, t.to_onset_s, t.to_channel), t)
              for t in tl.transitions]
    items += [((turn_end.get((b.by, b.onset_s), b.onset_s), 3, b.onset_s, b.by), b) for b in tl.barge_ins]
    items.sort(key=lambda kv: kv[0])
    return items


class _Points:
    """Append-only list of events sorted by ``event_key_s``, queried by key range."""

    __slots__ = ("items", "keys")

    def __init__(self) -> None:
        self.items: list = []
        self.keys: list[float] = []

    def extend(self, events: Iterable) -> None:
        for e in events:
            self.items.append(e)
            self.keys.append(event_key_s(e))

    def between(self, start_s: float, end_s: float) -> list:
        """Events with start_s ≤ key < end_s, in order."""
        return self.items[bisect.bisect_left(self.keys, start_s):bisect.bisect_left(self.keys, end_s)]


class _Spans(_Points):
    """``_Points`` of spans (onset/offset) with running maximum offsets, for overlap queries."""

    __slots__ = ("max_off",)

    def __init__(self) -> None:
        super().__init__()
        self.max_off: list[float] = []

    def extend(self, events: Iterable) -> None:
        for e in events:
            self.items.append(e)
            self.keys.append(e.onset_s)
            self.max_off.append(max(self.max_off[-1], e.offset_s) if self.max_off else e.offset_s)

    def overlapping(self, start_s: float, end_s: float) -> list:
        """Spans with offset > start_s and onset < end_s, in order (O(log n + hits))."""
        lo = bisect.bisect_right(self.max_off, start_s)  # all before lo end at or before start_s
        hi = bisect.bisect_left(self.keys, end_s)
        return [e for e in self.items[lo:hi] if e.offset_s > start_s]


@dataclass(frozen=True)
class _Tail:
    """The tail's share of the timeline (events with key ≥ cut_s) and the call's talk totals."""

    timeline: Timeline
    talk_s: dict = field(default_factory=dict)


class IncrementalTimeline:
    """``turns.analyze`` of a growing set of segments, kept as a settled prefix plus a tail.

    Feed closed segments with ``add`` (each channel's segments in order, none before
    ``cut_s``), call ``settle(frontier)`` to move what can no longer change into the prefix,
    and read ``timeline(open)`` (the whole call, equal to ``analyze`` of every segment plus the
    open ones) or ``window(start_s, end_s, open)`` (the events of one span, without
    scanning the call). Not thread-safe: the Session calls it under its lock.

    Args:
        config: turn-taking thresholds (the same as given to ``analyze``).
        max_tail_s: span of tail after which a forced (HEURISTIC) cut bounds the cost, seconds.
    """

    def __init__(self, config: TurnConfig | None = None, max_tail_s: float = 60.0) -> None:
        self.config = config or TurnConfig()
        self.quiet_s = self.config.merge_pause_s + self.config.backchannel_max_s
        self.max_tail_s = max_tail_s
        self.cut_s = -math.inf
        self.forced_cuts = 0
        self._tail: list[SpeechSegment] = []  # closed segments with onset ≥ cut_s, sorted
        self._context: list[SpeechSegment] = []  # segments of the floor turn at cut_s
        self._last_off: dict[Channel, float] = {c: -math.inf for c in CHANNELS}
        self._talk = {c: FloatSum() for c in CHANNELS}
        self._segments = _Spans()
        self._turns = _Spans()
        self._transitions = _Points()
        self._barge_ins = _Points()
        self._backchannels = _Points()
        self._overlaps: list[Overlap] = []
        self._version = 0
        self._tail_cache: tuple[tuple, _Tail] | None = None
        self._full_cache: tuple[tuple, Timeline] | None = None

    # ------------------------------------------------------------------ input
    def add(self, segments: Iterable[SpeechSegment]) -> None:
        """Add closed segments (any channel). Raises ValueError for one before ``cut_s``."""
        for s in segments:
            if s.onset_s < self.cut_s:
                raise ValueError(f"segment {s} starts before the settled cut at {self.cut_s:.3f} s "
                                 "(its channel's frontier was reported too late)")
            bisect.insort(self._tail, s, key=_sort_key)
            self._version += 1

    @property
    def tail_size(self) -> int:
        """Closed segments not yet settled (the work each update repeats)."""
        return len(self._tail)

    @property
    def n_settled_segments(self) -> int:
        return len(self._segments.items)

    # ------------------------------------------------------------------ settling
    def settle(self, frontier: dict[Channel, float]) -> list[tuple[SettleKey, object]]:
        """Move the events that later segments can no longer change into the settled prefix.

        Args:
            frontier: per channel, the earliest onset any future segment can have, seconds
                (the onset of an open segment, else where the VAD has read up to); ``inf``
                on both channels at the end of the stream settles everything.
        Returns:
            (settle key, event) of the turn-level events that just settled (see ``settle_items``).
        """
        cut = self._find_cut(frontier)
        if cut is None:
            return []
        x, forced = cut
        n = bisect.bisect_left([s.onset_s for s in self._tail], x)
        before, rest = self._tail[:n], self._tail[n:]
        old = self.cut_s
        tl = analyze(self._context + before, self.config)
        turns = [t for t in tl.turns if t.onset_s >= old]
        transitions = [t for t in tl.transitions if t.to_onset_s >= old]
        barge_ins = [b for b in tl.barge_ins if b.onset_s >= old]
        backchannels = [b for b in tl.backchannels if b.onset_s >= old]
        overlaps = [o for o in tl.overlaps if o.onset_s >= old]
        if tl.turns:  # the floor at x: the first turn with the latest offset (see module doc)
            floor = tl.turns[0]
            for t in tl.turns:
                if t.offset_s > floor.offset_s:
                    floor = t
            bcs = {(b.channel, b.onset_s, b.offset_s) for b in tl.backchannels}
            self._context = [s for s in self._context + before
                             if s.channel == floor.channel and floor.onset_s <= s.onset_s
                             and s.offset_s <= floor.offset_s and (s.channel, s.onset_s, s.offset_s) not in bcs]
        for s in before:
            self._talk[s.channel].add(s.duration_s)
            self._last_off[s.channel] = max(self._last_off[s.channel], s.offset_s)
        self._segments.extend(before)
        self._turns.extend(turns)
        self._transitions.extend(transitions)
        self._barge_ins.extend(barge_ins)
        self._backchannels.extend(backchannels)
        self._overlaps.extend(overlaps)
        self._tail = rest
        self.cut_s = x
        self.forced_cuts += int(forced)
        self._version += 1
        return settle_items(Timeline(turns=tuple(turns), transitions=tuple(transitions),
                                     barge_ins=tuple(barge_ins), backchannels=tuple(backchannels)))

    def _gaps(self, channel: Channel, frontier_s: float) -> list[tuple[float, float]]:
        """The channel's silences in the tail: (previous offset, next onset or frontier)."""
        prev = self._last_off[channel]
        out = []
        for s in self._tail:
            if s.channel == channel:
                out.append((prev, s.onset_s))
                prev = max(prev, s.offset_s)
        out.append((prev, frontier_s))
        return out

    def _find_cut(self, frontier: dict[Channel, float]) -> tuple[float, bool] | None:
        """(cut time, forced) or None. See the module docstring for the rule."""
        if min(frontier[c] for c in CHANNELS) <= self.cut_s:
            return None
        gu, ga = self._gaps("user", frontier["user"]), self._gaps("agent", frontier["agent"])
        best: float | None = None
        forced: tuple[float, float] | None = None  # (shorter silence, x)
        tail_start = self._tail[0].onset_s if self._tail else math.inf
        may_force = self._tail and min(frontier.values()) - tail_start > self.max_tail_s
        i = j = 0
        while i < len(gu) and j < len(ga):  # intersections of the two sorted interval lists
            (ua, ub), (aa, ab) = gu[i], ga[j]
            lo, hi = max(ua, aa), min(ub, ab)
            if lo <= hi and hi > self.cut_s:
                quiet = min(ub - ua, ab - aa)
                if quiet >= self.quiet_s:
                    best = hi  # intersections come in time order: the last one wins
                elif may_force and hi > tail_start and (forced is None or quiet >= forced[0]):
                    forced = (quiet, hi)
            if ub < ab:
                i += 1
            else:
                j += 1
        if best is not None:
            return best, False
        if forced is not None:
            return forced[1], True
        return None

    # ------------------------------------------------------------------ reading
    def _tail_view(self, open_segments: tuple[SpeechSegment, ...]) -> _Tail:
        key = (self._version, open_segments)
        if self._tail_cache is not None and self._tail_cache[0] == key:
            return self._tail_cache[1]
        for s in open_segments:
            if s.onset_s < self.cut_s:
                raise ValueError(f"open segment {s} starts before the settled cut at {self.cut_s:.3f} s")
        x = self.cut_s
        tl = analyze(self._context + self._tail + list(open_segments), self.config)
        segments = tuple(s for s in tl.segments if s.onset_s >= x)
        talk = {c: self._talk[c].copy() for c in CHANNELS}
        for s in segments:
            talk[s.channel].add(s.duration_s)
        view = _Tail(
            Timeline(
                segments=segments,
                turns=tuple(t for t in tl.turns if t.onset_s >= x),
                transitions=tuple(t for t in tl.transitions if t.to_onset_s >= x),
                barge_ins=tuple(b for b in tl.barge_ins if b.onset_s >= x),
                backchannels=tuple(b for b in tl.backchannels if b.onset_s >= x),
                overlaps=tuple(o for o in tl.overlaps if o.onset_s >= x),
            ),
            {c: talk[c].value for c in CHANNELS},
        )
        self._tail_cache = (key, view)
        return view

    def tail_timeline(self, open_segments: Iterable[SpeechSegment] = ()) -> Timeline:
        """The events with key ≥ ``cut_s`` (not settled yet); its ``talk_s`` is left at zero."""
        return self._tail_view(tuple(open_segments)).timeline

    def timeline(self, open_segments: Iterable[SpeechSegment] = ()) -> Timeline:
        """The whole call: equal to ``analyze(every segment added + open_segments)``.

        O(n) to assemble (cached until a segment is added or settled): for the result document
        and displays, not for per-chunk work (use ``window``).
        """
        open_segments = tuple(open_segments)
        key = (self._version, open_segments)
        if self._full_cache is not None and self._full_cache[0] == key:
            return self._full_cache[1]
        tail = self._tail_view(open_segments)
        t = tail.timeline
        full = Timeline(
            segments=tuple(self._segments.items) + t.segments,
            turns=tuple(self._turns.items) + t.turns,
            transitions=tuple(self._transitions.items) + t.transitions,
            barge_ins=tuple(self._barge_ins.items) + t.barge_ins,
            backchannels=tuple(self._backchannels.items) + t.backchannels,
            overlaps=tuple(self._overlaps) + t.overlaps,
            talk_s=dict(tail.talk_s),
        )
        self._full_cache = (key, full)
        return full

    def window(self, start_s: float, end_s: float,
               open_segments: Iterable[SpeechSegment] = ()) -> dict[str, tuple]:
        """The events of [start_s, end_s), as ``session.window_from_timeline`` selects them.

        Returns a dict with ``segments`` and ``turns`` (those overlapping the span, unclipped),
        ``transitions`` (``to_onset_s`` in the span), ``barge_ins`` and ``backchannels`` (onset in
        the span), each a tuple in timeline order. Cost: O(log n) plus the events returned and
        the tail's analysis (cached), whatever the length of the call.
        """
        t = self._tail_view(tuple(open_segments)).timeline

        def inside(a: float, b: float) -> bool:
            return b > start_s and a < end_s

        return {
            "segments": tuple(self._segments.overlapping(start_s, end_s))
            + tuple(s for s in t.segments if inside(s.onset_s, s.offset_s)),
            "turns": tuple(self._turns.overlapping(start_s, end_s))
            + tuple(x for x in t.turns if inside(x.onset_s, x.offset_s)),
            "transitions": tuple(self._transitions.between(start_s, end_s))
            + tuple(x for x in t.transitions if start_s <= x.to_onset_s < end_s),
            "barge_ins": tuple(self._barge_ins.between(start_s, end_s))
            + tuple(b for b in t.barge_ins if start_s <= b.onset_s < end_s),
            "backchannels": tuple(self._backchannels.between(start_s, end_s))
            + tuple(b for b in t.backchannels if start_s <= b.onset_s < end_s),
        }


def _sort_key(s: SpeechSegment) -> tuple[float, str]:
    return (s.onset_s, s.channel)  # analyze's order


__all__ = ["FloatSum", "IncrementalTimeline", "event_key_s", "settle_items"]
