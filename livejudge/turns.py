"""Turn taking from the speech segments of both channels (pure functions).

``analyze(segments)`` turns VAD segments into turns, floor transitions (gaps, overlaps and the
agent's response latency), barge-ins with the other side's yield time, backchannels and
overlap stretches. It is pure and cheap (O(n log n) in the number of segments), so the live
session simply re-runs it whenever a segment opens or closes.

Definitions (Full-Duplex-Bench v1/v1.5, summarised in reference.md):

* backchannel: a segment shorter than ``backchannel_max_s`` (1 s) that starts inside the
  other speaker's turn while that turn goes on past it. It does not take the floor and is not
  a barge-in. A segment that resumes the speaker's own turn is never a backchannel: it
  starts less than ``merge_pause_s`` after the end of their previous non-backchannel segment,
  and the other speaker's turn around it began inside that pause (a user who pauses, the
  agent starts, and the user goes on: a barge-in). If the other speaker was already talking
  when the speaker stopped, the speaker had yielded, and a short segment is a backchannel.
* turn: the remaining segments of one speaker merged across pauses shorter than
  ``merge_pause_s`` unless the other speaker started a turn in between.
* transition: a change of floor from turn A to turn B of the other speaker (B ends after A);
  gap_s = B.onset − A.offset (negative = overlap). user→agent gaps are response latencies.
* barge-in: a turn that starts while the other speaker's turn is in progress.
  yield_s = other.offset − barge-in onset when the other stopped first, else None (kept talking).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from .events import Backchannel, BargeIn, Channel, Overlap, SpeechSegment, Transition, Turn, other


@dataclass(frozen=True)
class TurnConfig:
    """Turn-taking settings.

    Attributes:
        merge_pause_s: pauses shorter than this inside one speaker's speech stay in the turn.
        backchannel_max_s: longest backchannel, seconds (Full-Duplex-Bench: under 1 s).
    """

    merge_pause_s: float = 0.8
    backchannel_max_s: float = 1.0


@dataclass(frozen=True)
class Timeline:
    """Everything ``analyze`` finds, each list sorted by onset."""

    segments: tuple[SpeechSegment, ...] = ()
    turns: tuple[Turn, ...] = ()
    transitions: tuple[Transition, ...] = ()
    barge_ins: tuple[BargeIn, ...] = ()
    backchannels: tuple[Backchannel, ...] = ()
    overlaps: tuple[Overlap, ...] = ()
    talk_s: dict = field(default_factory=lambda: {"user": 0.0, "agent": 0.0})

    @property
    def response_latencies_s(self) -> list[float]:
        """Agent response latencies: gap_s of user→agent transitions, seconds."""
        return [t.gap_s for t in self.transitions if t.is_response]


def _merge(segs: list[SpeechSegment], channel: Channel, pause_s: float,
           breaks: list[float]) -> list[Turn]:
    """Merge one channel's segments into turns; ``breaks`` are other-turn onsets that split."""
    turns: list[Turn] = []
    for s in segs:
        if turns:
            last = turns[-1]
            split = any(last.offset_s <= b < s.onset_s for b in breaks)
            if s.onset_s - last.offset_s < pause_s and not split:
                turns[-1] = Turn(channel, last.onset_s, max(last.offset_s, s.offset_s), last.n_segments + 1)
                continue
        turns.append(Turn(channel, s.onset_s, s.offset_s, 1))
    return turns


def analyze(segments: Iterable[SpeechSegment], config: TurnConfig | None = None) -> Timeline:
    """Derive turns, transitions, barge-ins, backchannels and overlaps from VAD segments.

    Args:
        segments: speech segments of both channels (any order), times in session seconds.
        config: thresholds (defaults: merge pauses < 0.8 s, backchannels < 1 s).
    Returns:
        A Timeline. Pure: the same segments always give the same Timeline.
    """
    cfg = config or TurnConfig()
    segs = sorted(segments, key=lambda s: (s.onset_s, s.channel))
    by_ch: dict[Channel, list[SpeechSegment]] = {
        "user": [s for s in segs if s.channel == "user"],
        "agent": [s for s in segs if s.channel == "agent"],
    }

    # 1. backchannels: short segments inside the other's (pause-merged) speech that goes on.
    rough = {c: _merge(by_ch[c], c, cfg.merge_pause_s, []) for c in ("user", "agent")}
    backchannels: list[Backchannel] = []
    floor_segs: dict[Channel, list[SpeechSegment]] = {"user": [], "agent": []}
    for c in ("user", "agent"):
        others = rough[other(c)]
        last_floor_end: float | None = None  # offset of this speaker's last floor segment
        for s in by_ch[c]:
            host = [t for t in others if t.onset_s < s.onset_s and t.offset_s > s.offset_s]
            # resuming one's own turn: back within merge_pause_s, and the other speaker only
            # started in that pause (had they been talking already, the speaker had yielded)
            resumes = (last_floor_end is not None and s.onset_s - last_floor_end < cfg.merge_pause_s
                       and all(t.onset_s >= last_floor_end for t in host))
            inside = not resumes and s.duration_s < cfg.backchannel_max_s and bool(host)
            if not inside:
                last_floor_end = s.offset_s if last_floor_end is None else max(last_floor_end, s.offset_s)
            if inside:
                backchannels.append(Backchannel(c, s.onset_s, s.offset_s))
            else:
                floor_segs[c].append(s)

    # 2. turns: merge pauses, but a turn onset of the other speaker in the pause splits.
    first = {c: _merge(floor_segs[c], c, cfg.merge_pause_s, []) for c in ("user", "agent")}
    turns_by = {
        c: _merge(floor_segs[c], c, cfg.merge_pause_s, [t.onset_s for t in first[other(c)]])
        for c in ("user", "agent")
    }
    turns = sorted(turns_by["user"] + turns_by["agent"], key=lambda t: (t.onset_s, t.channel))

    # 3. transitions and barge-ins
    transitions: list[Transition] = []
    barge_ins: list[BargeIn] = []
    floor: Turn | None = None
    for t in turns:
        # barge-in: starts while a turn of the other speaker is in progress
        for o in turns_by[other(t.channel)]:
            if o.onset_s < t.onset_s < o.offset_s:
                yield_s = o.offset_s - t.onset_s if o.offset_s < t.offset_s else None
                barge_ins.append(BargeIn(t.channel, t.onset_s, None if yield_s is None else round(yield_s, 6)))
                break
        if floor is None:
            floor = t
            continue
        if t.channel == floor.channel:
            if t.offset_s > floor.offset_s:
                floor = t
            continue
        if t.offset_s <= floor.offset_s:
            continue  # nested inside the floor holder's turn: the floor did not change
        transitions.append(Transition(floor.channel, t.channel, floor.offset_s, t.onset_s))
        floor = t

    # 4. overlaps of raw speech on both channels (two-pointer sweep)
    overlaps: list[Overlap] = []
    i = j = 0
    u, a = by_ch["user"], by_ch["agent"]
    while i < len(u) and j < len(a):
        lo = max(u[i].onset_s, a[j].onset_s)
        hi = min(u[i].offset_s, a[j].offset_s)
        if hi > lo:
            overlaps.append(Overlap(lo, hi))
        if u[i].offset_s < a[j].offset_s:
            i += 1
        else:
            j += 1

    talk = {c: sum(s.duration_s for s in by_ch[c]) for c in ("user", "agent")}
    return Timeline(
        segments=tuple(segs),
        turns=tuple(turns),
        transitions=tuple(transitions),
        barge_ins=tuple(barge_ins),
        backchannels=tuple(sorted(backchannels, key=lambda b: b.onset_s)),
        overlaps=tuple(overlaps),
        talk_s=talk,
    )
