"""Turn taking from the speech segments of both channels (pure functions).

``analyze(segments)`` turns VAD segments into turns, floor transitions (gaps, overlaps and the
agent's response latency), barge-ins with the other side's yield time, backchannels and
overlap stretches. It is pure and cheap (O(n log n) in the number of segments), so the live
session simply re-runs it whenever a segment opens or closes.

Definitions (Full-Duplex-Bench v1/v1.5, summarised in reference.md):

* utterance: one speaker's segments joined across pauses shorter than ``utterance_pause_s``
  (0.3 s, an inter-pausal unit; HEURISTIC value: a hesitation inside a phrase, or a quiet
  stretch of speech lost under a noise floor, does not split what was said into pieces).
* backchannel: an utterance shorter than ``backchannel_max_s`` (1 s) that starts inside the
  other speaker's turn while that turn goes on past it. It does not take the floor and is not
  a barge-in. An utterance that resumes the speaker's own turn is never a backchannel: it
  starts less than ``merge_pause_s`` after the end of their previous non-backchannel segment,
  and the other speaker's turn around it began inside that pause, or less than ``reaction_s``
  before it (a user who pauses, the agent starts, and the user goes on: a barge-in; a stop that
  soon after the other's onset is no reaction to it). If the other speaker was already talking
  when the speaker stopped, the speaker had yielded, and a short utterance is a backchannel,
  unless the speaker never stopped long enough to yield: they speak again less than
  ``phrase_break_s`` after they stopped (a phrase break: a TTS agent talking on through a
  barge-in pauses at its commas), or they spoke less than ``merge_pause_s`` before it, and less
  than ``merge_pause_s`` after it they go on with an utterance of ``backchannel_max_s`` or
  longer (an agent talking on through a barge-in attempt with short phrase breaks).
* turn: the remaining segments of one speaker merged across pauses shorter than
  ``merge_pause_s`` unless the other speaker started a turn in between, at least ``reaction_s``
  into the pause (sooner, the other was not reacting to it), and the speaker did not resume
  within ``reaction_s`` of its onset (either way a phrase break the other barged into), or a
  turn of the other speaker ended in between, ≥ ``yielded_s`` after the speaker stopped (the
  speaker yielded and then answered: two turns, a yield and a transition, not one turn).
* transition: a change of floor from turn A to turn B of the other speaker (B ends after A);
  gap_s = B.onset − A.offset (negative = overlap). user→agent gaps are response latencies.
* barge-in: a turn that starts while the other speaker's turn is in progress.
  yield_s = other.offset − barge-in onset when the other stopped first, else None (kept talking).
  A turn whose onset comes less than ``reaction_s`` before the other's offset, the other
  stopping first, is not a barge-in: the other could not have been reacting to it, so it was
  ending on its own (a terminal overlap: a transition with a negative gap).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field, replace
from itertools import accumulate
from typing import Iterable

from livejudge.events import Backchannel, BargeIn, Channel, Overlap, SpeechSegment, Transition, Turn, other


@dataclass(frozen=True)
class TurnConfig:
    """Turn-taking settings.

    Attributes:
        merge_pause_s: pauses shorter than this inside one speaker's speech stay in the turn.
        backchannel_max_s: longest backchannel, seconds (Full-Duplex-Bench: under 1 s).
        utterance_pause_s: pauses shorter than this join segments into one utterance before
            the backchannel test, seconds (HEURISTIC: the VAD's hangover, 0.3 s); capped at
            ``merge_pause_s`` (an utterance never spans a pause that ends a turn).
        reaction_s: a speaker who resumes less than this after the other's onset inside their
            pause was not reacting to it: their turn goes on and the other barged in, seconds
            (HEURISTIC: 200 ms, about the fastest vocal reaction to a heard onset; the modal
            gap between turns is 200 ms, Stivers et al. 2009, PNAS 106:10587, and planning a
            reply takes longer, Levinson & Torreira 2015, Front. Psychol. 6:731). The VAD
            split an agent's phrase break right at a caller's onset and the barge-in was
            attributed to the agent.
        yielded_s: a speaker who stopped while the other spoke, and whose pause held at least
            this much of the other speaking alone up to the end of the other's turn, had
            yielded: what they say next is a new turn (a transition), even within
            ``merge_pause_s``, seconds (HEURISTIC, 0.3 s: shorter, it is the end of a barge-in
            the speaker talked through with a phrase break). Merged, the yield read as none
            and the transition after it was lost.
        phrase_break_s: a speaker who stops while the other is talking and speaks again less
            than this after stopping (between VAD segments, whose offsets carry the hangover) was
            at a phrase break, not yielding: what follows continues their turn, and a yield is
            timed from where they finally stop, seconds (HEURISTIC, 0.5 s: the pauses inside one
            clip of seven neural systems, TTS and one voice conversion, read median 0.43 s between
            segments, 65 % under 0.5 s, espeak's 0.34 s, ``benchmarks/results/tts_pauses_batch10.json``; a trial's
            agents that stopped 1.1–1.6 s into a barge-in, with a 0.35 s phrase break 0.58 s in,
            read as yielding in 0.58 s and then backchanneling). The other reading, a yield and
            then an "mm" within that pause, is timed as the longer yield; a phrase pause of
            0.5 s or more still reads as a yield and a backchannel (docs/verdicts.md).
        pop_max_s: a segment shorter than this with no other speech of its channel within
            ``utterance_pause_s``, and none of the other channel over it, is a pop, click or
            burst, never a turn (nor a transition, latency or overlap), seconds (HEURISTIC,
            0.12 s: a full-duplex model's 20–80 ms tonal bursts are voiced-looking and
            measured ≤ 0.1 s; the shortest words said alone,
            "mm", "no", last ≥ 0.15 s). 0 keeps every segment. A 50 ms burst 1.6 s before an
            agent's answer used to open its reply (latency 2.6 s read for 4.2 s).
    Raises:
        ValueError: a negative value.
    """

    merge_pause_s: float = 0.8
    backchannel_max_s: float = 1.0
    utterance_pause_s: float = 0.3
    reaction_s: float = 0.2
    yielded_s: float = 0.3
    phrase_break_s: float = 0.5
    pop_max_s: float = 0.12

    def __post_init__(self) -> None:
        for name in ("merge_pause_s", "backchannel_max_s", "utterance_pause_s", "reaction_s", "yielded_s",
                     "phrase_break_s", "pop_max_s"):
            v = getattr(self, name)
            if not v >= 0:
                raise ValueError(f"TurnConfig.{name} must be ≥ 0 seconds, got {v}")


END_GRACE_S = 0.3
"""HEURISTIC: speech that stops less than this before the call's end was still going when the
call ended (the VAD's offset lags speech by up to its hangover, 0.2 s, plus a frame), seconds."""


@dataclass(frozen=True)
class Timeline:
    """Everything ``analyze`` finds, each list sorted by onset. ``end_s``: the call's end (seconds,
    the session clock) once the call has ended, None while it goes on or when unknown;
    ``end_decide_s``: how long after a barge-in the other side must have had to yield for a call
    that ended in the overlap to have decided it (``cut_by_end``; a Session sets it to
    ``VerdictConfig.yield_max_s``), seconds."""

    segments: tuple[SpeechSegment, ...] = ()
    turns: tuple[Turn, ...] = ()
    transitions: tuple[Transition, ...] = ()
    barge_ins: tuple[BargeIn, ...] = ()
    backchannels: tuple[Backchannel, ...] = ()
    overlaps: tuple[Overlap, ...] = ()
    talk_s: dict = field(default_factory=lambda: {"user": 0.0, "agent": 0.0})
    end_s: float | None = None
    end_decide_s: float = math.inf

    def cut_by_end(self, b: BargeIn, grace_s: float = END_GRACE_S) -> bool:
        """Whether the call ended before barge-in ``b`` was decided: the barge-in's turn and the
        other side's speech both ran to within ``grace_s`` of ``end_s`` (a caller who says "bye"
        over the agent and hangs up; an agent that hangs up mid-reply while the caller talks).
        Whether the other side would have yielded or talked on is then unknown: a hang-up's
        silence is not a yield, and ending together is not talking through. Only while the call
        ended within ``end_decide_s`` of the barge-in: an agent still talking that long after it
        had not yielded in time, which the end does not change. False when ``end_s`` is None.
        Only the speaker's last turn can reach the end: found from the end of ``turns`` (a few
        steps)."""
        if self.end_s is None or self.end_s - b.onset_s > self.end_decide_s:
            return False
        last = self._last_turn(b.by)
        if last is None or not self.reaches_end(last.offset_s, grace_s) \
                or not last.onset_s - 1e-9 <= b.onset_s <= last.offset_s:
            return False
        return b.yield_s is None or self.reaches_end(b.onset_s + b.yield_s, grace_s)

    def backchannel_cut_by_end(self, b: Backchannel, window_s: float, grace_s: float = END_GRACE_S) -> bool:
        """Whether the call ended before backchannel ``b`` was decided: the other side's turn around
        it ran to within ``grace_s`` of ``end_s``, and the call ended within ``window_s`` (the
        false-yield window, ``VerdictConfig.backchannel_yield_window_s``) of the backchannel's end,
        so whether the other side would have held or stopped is unknown (a trial: a caller's 0.6 s
        over the agent, then the recording's end, read "agent yielded to a backchannel"). False
        when ``end_s`` is None."""
        if self.end_s is None or self.end_s > b.offset_s + window_s + grace_s:
            return False
        host = self._last_turn(other(b.channel))
        return host is not None and host.onset_s <= b.onset_s < host.offset_s and self.reaches_end(host.offset_s, grace_s)

    def marked_by_end(self, ev: BargeIn | Backchannel, backchannel_window_s: float) -> BargeIn | Backchannel:
        """``ev`` as the result document, the event log and the final events give it: a caller's
        barge-in the call's end cut before it was decided (``cut_by_end``) carries ``cut_by_end``
        and no yield time; a caller's backchannel the end cut (``backchannel_cut_by_end`` with
        ``backchannel_window_s``, ``VerdictConfig.backchannel_yield_window_s``, seconds) carries
        ``cut_by_end``; anything else is returned unchanged. The one rule the Session's events, its
        closing notes and the result all read (a trial saw "yield 0.42 s" in the events where the
        result said undecided)."""
        if isinstance(ev, BargeIn):
            return replace(ev, yield_s=None, cut_by_end=True) if ev.by == "user" and self.cut_by_end(ev) else ev
        if ev.channel == "user" and self.backchannel_cut_by_end(ev, backchannel_window_s):
            return replace(ev, cut_by_end=True)
        return ev

    def reaches_end(self, t_s: float, grace_s: float = END_GRACE_S) -> bool:
        """Whether speech that stopped at ``t_s`` was still going when the call ended (within
        ``grace_s`` of ``end_s``); False when ``end_s`` is None."""
        return self.end_s is not None and t_s >= self.end_s - grace_s

    def _last_turn(self, channel: Channel) -> Turn | None:
        """The channel's last turn (only it can reach the call's end): a few steps from the end."""
        return next((t for t in reversed(self.turns) if t.channel == channel), None)

    @property
    def response_latencies_s(self) -> list[float]:
        """Agent response latencies: gap_s of user→agent transitions, seconds."""
        return [t.gap_s for t in self.transitions if t.is_response]


def _merge(segs: list[SpeechSegment], channel: Channel, pause_s: float,
           others: list[Turn], reaction_s: float = 0.0, yielded_s: float = 0.0) -> list[Turn]:
    """Merge one channel's segments into turns across pauses shorter than ``pause_s``.

    ``others`` (the other speaker's turns) split a pause: one that starts in it, unless it starts
    less than ``reaction_s`` into the pause or this speaker resumes less than ``reaction_s`` after
    its onset (too soon to be a reaction to the pause, or to the other: this speaker's turn was in
    progress, with a phrase break, and the other barged in; a trial's caller who started 0.10 s
    into the agent's 0.34 s pause read as the agent talking over the caller), or one that
    ends in it at least ``yielded_s`` after this speaker stopped (this speaker yielded, the
    other held the floor alone and finished: what follows is an answer, not the yielded turn
    going on; a shorter stretch alone is the end of a barge-in the speaker talked through)."""
    ons, ends = _index(others)
    turns: list[Turn] = []
    for s in segs:
        if turns:
            last = turns[-1]
            # only the other's turns with onset < s.onset and offset ≥ last.offset can split
            near = others[bisect_left(ends, last.offset_s):bisect_left(ons, s.onset_s)]
            split = any((last.offset_s + reaction_s <= o.onset_s < s.onset_s and s.onset_s - o.onset_s >= reaction_s)
                        or (last.offset_s + yielded_s <= o.offset_s <= s.onset_s)
                        for o in near)
            if s.onset_s - last.offset_s < pause_s and not split:
                turns[-1] = Turn(channel, last.onset_s, max(last.offset_s, s.offset_s), last.n_segments + 1)
                continue
        turns.append(Turn(channel, s.onset_s, s.offset_s, 1))
    return turns


def _without_pops(segs: list[SpeechSegment], others: list[SpeechSegment], cfg: TurnConfig) -> list[SpeechSegment]:
    """One channel's segments (sorted by onset) less the isolated bursts that would open a
    turn: a segment shorter than ``cfg.pop_max_s`` with no other segment of the channel within
    ``utterance_pause_s`` on either side, and none of the other channel (``others``) over it,
    is a pop, click or burst, not speech, whatever its voicing. Over the other's speech it
    stays (a backchannel an echo canceller cut to 70 ms is still one)."""
    if cfg.pop_max_s <= 0:
        return segs
    gap = min(cfg.utterance_pause_s, cfg.merge_pause_s)
    ons, ends = _index(others)
    out = []
    end = -math.inf  # latest offset of the segments before s
    for k, s in enumerate(segs):
        if s.offset_s - s.onset_s < cfg.pop_max_s and not any(
                o.offset_s > s.onset_s for o in others[bisect_right(ends, s.onset_s):bisect_left(ons, s.offset_s)]):
            before = s.onset_s - end < gap
            after = k + 1 < len(segs) and segs[k + 1].onset_s - s.offset_s < gap
            if not before and not after:
                end = max(end, s.offset_s)
                continue
        end = max(end, s.offset_s)
        out.append(s)
    return out


def _index(items: list) -> tuple[list[float], list[float]]:
    """Onsets and running-maximum offsets of ``items`` (sorted by onset), for bisection: the
    items with offset ≥ t start at ``bisect_left(ends, t)``, those with onset < t end before
    ``bisect_left(ons, t)``."""
    ons = [x.onset_s for x in items]
    ends = list(accumulate((x.offset_s for x in items), max))
    return ons, ends


def _utterances(segs: list[SpeechSegment], pause_s: float) -> list[list[SpeechSegment]]:
    """One channel's segments (sorted by onset) grouped across pauses shorter than ``pause_s``."""
    out: list[list[SpeechSegment]] = []
    end = -math.inf
    for s in segs:
        if out and s.onset_s - end < pause_s:
            out[-1].append(s)
        else:
            out.append([s])
        end = max(end, s.offset_s) if len(out[-1]) > 1 else s.offset_s
    return out


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
        c: [s for s in segs if s.channel == c] for c in ("user", "agent")}
    by_ch = {c: _without_pops(by_ch[c], by_ch[other(c)], cfg) for c in ("user", "agent")}

    # 1. backchannels: short utterances inside the other's (pause-merged) speech that goes on.
    rough = {c: _merge(by_ch[c], c, cfg.merge_pause_s, []) for c in ("user", "agent")}
    backchannels: list[Backchannel] = []
    floor_segs: dict[Channel, list[SpeechSegment]] = {"user": [], "agent": []}
    for c in ("user", "agent"):
        others = rough[other(c)]
        last_floor_end: float | None = None  # offset of this speaker's last floor segment
        utts = _utterances(by_ch[c], min(cfg.utterance_pause_s, cfg.merge_pause_s))
        for k, utt in enumerate(utts):
            on, off = utt[0].onset_s, max(s.offset_s for s in utt)
            host = [t for t in others if t.onset_s < on and t.offset_s > off]
            near_before = last_floor_end is not None and on - last_floor_end < cfg.merge_pause_s
            # resuming one's own turn: back within merge_pause_s, and the other speaker only
            # started in that pause (had they been talking already, the speaker had yielded), or
            # less than reaction_s before it: a stop that soon after the other's onset cannot be
            # a reaction to it, so it is a phrase break, not a yield (a trial: an agent's phrase
            # break 0.18 s into a barge-in made the rest of its phrase a "backchannel" and the
            # barge-in vanish; the agent was cut 0.9 s in)
            # or back within phrase_break_s: a phrase break, whoever was talking (a trial: agents
            # that stopped 1.1–1.6 s into a barge-in, a 0.35 s comma pause 0.58 s in, read as a
            # 0.58 s yield and an agent backchannel; the slow-yield gate caught none of them)
            resumes = near_before and (all(t.onset_s > last_floor_end - cfg.reaction_s for t in host)
                                       or on - last_floor_end < min(cfg.phrase_break_s, cfg.merge_pause_s))
            # talking on: short pauses on both sides, and a long utterance follows
            nxt = utts[k + 1] if k + 1 < len(utts) else None
            goes_on = (near_before and nxt is not None and nxt[0].onset_s - off < cfg.merge_pause_s
                       and max(s.offset_s for s in nxt) - nxt[0].onset_s >= cfg.backchannel_max_s)
            inside = not resumes and not goes_on and off - on < cfg.backchannel_max_s and bool(host)
            if inside:
                backchannels.append(Backchannel(c, on, off))
            else:
                last_floor_end = off if last_floor_end is None else max(last_floor_end, off)
                floor_segs[c].extend(utt)

    # 2. turns: merge pauses, but a turn onset of the other speaker in the pause splits.
    first = {c: _merge(floor_segs[c], c, cfg.merge_pause_s, []) for c in ("user", "agent")}
    turns_by = {
        c: _merge(floor_segs[c], c, cfg.merge_pause_s, first[other(c)], cfg.reaction_s, cfg.yielded_s)
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
                if yield_s is not None and yield_s < cfg.reaction_s:
                    # the other ended too soon after this onset to have reacted to it: it was
                    # ending on its own (a terminal overlap, a transition with a negative gap),
                    # and as a "yield" it pulled the mean yield time down (a trial: a 0.10 s
                    # "yield" hid a yield of 0.88 s)
                    break
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

    # talk time sums every segment, pops too (``IncrementalTimeline`` carries it per segment)
    talk = {c: sum(s.duration_s for s in segs if s.channel == c) for c in ("user", "agent")}
    return Timeline(
        segments=tuple(segs),
        turns=tuple(turns),
        transitions=tuple(transitions),
        barge_ins=tuple(barge_ins),
        backchannels=tuple(sorted(backchannels, key=lambda b: b.onset_s)),
        overlaps=tuple(overlaps),
        talk_s=talk,
    )
