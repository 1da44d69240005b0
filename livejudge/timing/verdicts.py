"""Per-event verdicts: did the agent behave like a person at each moment of the call? (pure)

``verdicts(timeline, config)`` reads a settled ``turns.Timeline`` (segments, turns,
transitions, barge-ins, backchannels) and returns one ``Verdict`` per moment, sorted by the
moment's time. Every time is session seconds. The caller is the ``"user"`` channel.

Kinds, their outcomes (the first outcome of each list is the human-like one, ``ok``) and what
``value_s`` holds:

* ``barge_in`` (the caller starts a turn while the agent talks): ``yielded`` (the agent
  stopped within ``yield_max_s``), ``slow_yield`` (stopped later), ``talked_through`` (kept
  talking to the end of its turn). value_s = time to yield, caller onset → agent offset
  (Full-Duplex-Bench's stop latency); when talked through, the length of the caller's barge-in
  turn, onset → offset, which the agent talked on past (None when the caller's turn is unknown;
  the overlap itself is shorter by the agent's own pauses inside it).
* ``backchannel`` (a caller backchannel inside an agent turn): ``held`` (the agent talked on
  more than ``backchannel_yield_window_s`` after it ended) or ``yielded`` (stopped within
  that window: a false yield). value_s = agent offset − backchannel onset; threshold_s in the
  same units: the backchannel's length + ``backchannel_yield_window_s``. An agent that stops
  *during* a short caller utterance (under ``backchannel_max_s``) makes it a barge-in on the
  timeline; when the agent is then the next to speak (the caller had nothing more to say) it
  is judged a backchannel yielded to, not a barge-in (HEURISTIC: without words "mm-hmm" and
  "stop" look alike).
* ``pause`` (a silence inside the caller's speech, the caller then goes on): ``waited`` (no
  agent turn started in it; only pauses of ``pause_min_s``–``pause_max_s`` get a verdict) or
  ``cut_in`` (an agent turn started in the silence, at most ``RESPONSE_LATENCY_HUMAN.high_s``
  into it, and the caller resumed within ``resume_window_s`` of that start; a later start took a
  turn a person would have taken too, and its ``latency`` verdict judges it: HEURISTIC).
  value_s = how long the caller had paused: pause length (waited), agent onset − pause start (cut in).
* ``talk_over`` (an agent turn starts while the caller's speech is sounding):
  ``early_start`` (the caller's turn ends within ``talk_over_grace_s`` of the agent's start:
  an anticipated end, as humans do) or ``talk_over``. value_s = time both talked.
* ``dead_air`` (both channels silent longer than ``dead_air_s`` between speech):
  ``caller_silent`` (the agent spoke last: the caller owed the next word; not the agent's
  fault, ok) or ``agent_silent`` (the caller spoke last). value_s = the silence.
* ``restart`` (after the agent yielded to a barge-in): ``waited`` (its next turn starts after
  the caller's barge-in turn ended) or ``restarted`` (it started again while the caller was
  still in that turn). value_s = agent's silence before restarting (restarted), its latency
  after the caller's turn (waited), None when it never spoke again.
* ``latency`` (each user→agent transition): ``human`` (0 s to ``RESPONSE_LATENCY_HUMAN.high_s``,
  Stivers et al. 2009; SPEARBench Table III human row; that edge is the human MEAN answer
  latency, so a reply flagged above it is slower than the average person's answer, not slower
  than every person's), ``early`` (negative: the agent
  started less than ``talk_over_grace_s`` before the caller's turn ended; SPEARBench's human
  row starts 33.8 % of answers so, by 521 ms on average), ``s2s`` (up to
  ``S2S_LATENCY_RANGE.high_s``: above the human mean, as slow as S2S systems, SPEARBench Table
  III; its text says "S2S range" only from ``S2S_LATENCY_RANGE.low_s``), ``beyond_s2s``,
  ``overlapped`` (started more than ``talk_over_grace_s`` early). value_s = gap_s.

Overlaps between kinds are on purpose: an agent that cuts into a pause and is then talked over
gives a ``pause`` cut-in, a ``latency`` and a ``barge_in``; an agent restarting into a barge-in
gives a ``restart`` and a ``talk_over``. Limits: a yield followed by a restart within
``TurnConfig.merge_pause_s`` is one agent turn, so it reads as talked through (a barge-in) or
held (a backchannel) (issue 20, part 5); repetition of content after a restart is not judged (no words).

Moments: a reply after dead air gives a ``dead_air`` and a ``latency`` verdict of one silence,
an agent start over the caller's speech a ``latency`` (negative) and a ``talk_over`` verdict of
one start, a start in a caller's pause a ``pause`` (cut in) and a ``latency`` verdict of one
start, and a reply after yielding a ``restart`` (waited) and a ``latency`` verdict of one reply; ``moment_groups`` / ``moments`` join them into one moment (the rule is in
``moment_groups``), and the report, the meter, ``livejudge check`` and the summary's
``verdict_flagged_moment_count`` count flagged moments so; every other verdict is a moment of its
own (the barge-in that follows a cut-in stays a moment of its own: it is the caller's event,
not the agent's start).

Thresholds: the latency bands have published sources (``timing.metrics``); every other
threshold of ``VerdictConfig`` is HEURISTIC and settable (CLI flags ``--yield-max-s`` etc.).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Iterable, Protocol, Sequence, TypeVar

from livejudge.events import SpeechSegment, Turn
from livejudge.timing.metrics import (MEASURED_TIMING_ERROR, MEASURED_TIMING_ERROR_NARROWBAND, RESPONSE_LATENCY_HUMAN,
                                      S2S_LATENCY_RANGE, TimingError)
from livejudge.timing.turns import Timeline

OUTCOMES: dict[str, tuple[str, ...]] = {
    "barge_in": ("yielded", "slow_yield", "talked_through"),
    "backchannel": ("held", "yielded"),
    "pause": ("waited", "cut_in"),
    "talk_over": ("early_start", "talk_over"),
    "dead_air": ("caller_silent", "agent_silent"),
    "restart": ("waited", "restarted"),
    "latency": ("human", "early", "s2s", "beyond_s2s", "overlapped"),
}
"""Every verdict kind and its outcomes."""

OK_OUTCOMES: dict[str, frozenset[str]] = {
    "barge_in": frozenset({"yielded"}),
    "backchannel": frozenset({"held"}),
    "pause": frozenset({"waited"}),
    "talk_over": frozenset({"early_start"}),
    "dead_air": frozenset({"caller_silent"}),
    "restart": frozenset({"waited"}),
    "latency": frozenset({"human", "early"}),
}
"""The human-like outcomes (``Verdict.ok``); the others are flagged."""

EXPECTABLE = ("barge_in", "backchannel", "pause")
"""Kinds that are a caller moment the agent yields to or holds through (``livejudge check``)."""


@dataclass(frozen=True)
class VerdictConfig:
    """Thresholds of the verdicts, seconds. All HEURISTIC (no published human figure fixes
    them); the latency bands are sourced and live in ``timing.metrics``.

    Attributes:
        yield_max_s: HEURISTIC. A yield to a barge-in later than this is ``slow_yield``.
        backchannel_yield_window_s: HEURISTIC. An agent turn ending within this after a caller
            backchannel ended yielded to it (a false yield).
        pause_min_s: HEURISTIC. Shortest caller pause given a ``waited`` verdict (shorter ones
            tempt no endpointer).
        pause_max_s: HEURISTIC. Longest caller silence still a pause inside their speech
            (a longer one, with the agent silent, is a lapse: see dead air).
        resume_window_s: HEURISTIC. An agent turn starting in a caller silence cut in when the
            caller resumes within this after the agent's onset.
        talk_over_grace_s: HEURISTIC. An agent start inside caller speech that ends within this
            is an ``early_start`` (for scale: SPEARBench's human early answers overlap by 521 ms
            on average, Table III).
        dead_air_s: HEURISTIC. Mutual silence longer than this between speech is dead air.
        backchannel_max_s: a caller utterance shorter than this that the agent stopped for, and
            after which the agent spoke first, was a backchannel (a false yield) even though the
            agent stopped before it ended (Full-Duplex-Bench: backchannels last under 1 s).
    Raises:
        ValueError: a negative or non-finite value, or pause_min_s > pause_max_s.
    """

    yield_max_s: float = 1.0
    backchannel_yield_window_s: float = 0.5
    pause_min_s: float = 0.5
    pause_max_s: float = 2.0
    resume_window_s: float = 1.0
    talk_over_grace_s: float = 0.6
    dead_air_s: float = 2.0
    backchannel_max_s: float = 1.0

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"VerdictConfig.{f.name} must be a finite number ≥ 0 seconds, got {v!r}")
        if self.pause_min_s > self.pause_max_s:
            raise ValueError(f"VerdictConfig.pause_min_s ({self.pause_min_s}) must not exceed "
                             f"pause_max_s ({self.pause_max_s})")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Verdict:
    """One judged moment (see the module docstring for kinds, outcomes and ``value_s``).

    Attributes:
        kind: one of ``OUTCOMES``.
        outcome: one of ``OUTCOMES[kind]``.
        ok: the outcome is the human-like one (``OK_OUTCOMES``).
        t_s: the moment: caller onset (barge_in, backchannel, restart), pause or silence start
            (pause, dead_air), agent onset (talk_over, latency), session seconds.
        value_s: the measured time of the kind, seconds, or None.
        settle_s: session time from which later audio can no longer change the verdict; inf
            (null in the result) when later audio could still have changed it at the call's end.
        threshold_s: the threshold that decided the outcome, seconds (None when none did); for a
            flagged outcome, the bound the value crossed (an ``s2s`` latency: the human band's edge
            0.742 s, not the S2S range's end); a backchannel's, its length + the false-yield
            window (the value counts from its onset); ``threshold_text`` says what it bounds and which
            side is flagged.
        basis: where the threshold comes from: "HEURISTIC ..." or the source.
        line: "wideband", or "narrowband" on a call whose line ``timing.health.check_line`` finds
            narrowband (a telephone or 8 kHz line): which measured timing error
            ``within_timing_error`` uses (``timing.metrics.MEASURED_TIMING_ERROR`` or
            ``MEASURED_TIMING_ERROR_NARROWBAND``). A live call's line is found on its first 30 s,
            so verdicts published live before then carry "wideband"; the final result's carry the
            line. Not compared: the same moment's verdict is equal on either line.
        first_stop_s: the other reading of a barge-in the turn rules read as the agent going on
            (seconds after the caller's onset; None when there is none): for a ``slow_yield``, when
            the agent first went quiet for at least ``FIRST_STOP_PAUSE_S``, within
            ``yield_max_s``, and spoke again (a phrase break, ``TurnConfig.phrase_break_s``, which
            a quick yield followed by a short "mm" or "sorry" also looks like: read so, the outcome
            would be ``yielded``); for ``talked_through``, when the agent went quiet that long and
            the caller's turn ended inside that pause (read as going on, ``TurnConfig.yielded_s``,
            which a yield and then an answer also looks like). Said in ``text`` and in the result
            (``first_stop_s``, only when set). Not compared.
    """

    kind: str
    outcome: str
    ok: bool
    t_s: float
    value_s: float | None
    settle_s: float
    threshold_s: float | None = None
    basis: str = ""
    line: str = field(default="wideband", compare=False)  # the call's, not the moment's: equal verdicts of one
    # moment stay equal when a live call's line is found after some were published (first 30 s)
    first_stop_s: float | None = field(default=None, compare=False)  # a barge-in's other reading (above)

    @property
    def key(self) -> tuple[str, float]:
        """(kind, t_s rounded to 1 ms): identifies the moment across live and final analyses."""
        return (self.kind, round(self.t_s, 3))

    @property
    def expected(self) -> str | None:
        """For caller moments (``EXPECTABLE``): what a human-like agent does there, "yield" or
        "hold"; None for other kinds."""
        return {"barge_in": "yield", "backchannel": "hold", "pause": "yield"}.get(self.kind)

    @property
    def observed(self) -> str | None:
        """For caller moments: what the agent did, "yield" (stopped, or left the floor to the
        caller) or "hold" (talked on / took the floor); None for other kinds."""
        if self.kind == "barge_in":
            return "hold" if self.outcome == "talked_through" else "yield"
        if self.kind == "backchannel":
            return "yield" if self.outcome == "yielded" else "hold"
        if self.kind == "pause":
            return "yield" if self.outcome == "waited" else "hold"
        return None

    @property
    def timing_error_s(self) -> float | None:
        """The measured timing error of ``value_s`` on this call's line, seconds (p95 |measured −
        truth| on noisy built calls, ``benchmarks/vad_bounds.py``): a latency's
        ``latency_p95_abs_s`` (55 ms wideband, 298 ms narrowband), a yield time's
        ``yield_p95_abs_s`` (107 ms, 98 ms); None for kinds without a measured error."""
        return _TIMING_ERROR_S[self.line if self.line in _TIMING_ERROR_S else "wideband"].get((self.kind, self.outcome))

    @property
    def within_timing_error(self) -> bool:
        """The value lies within the measured timing error (``timing_error_s``) of the threshold
        that decided the outcome, so the true time may fall on the other side. The outcome is kept:
        the latency edge is itself a mean, not a sharp line, and ``yield_max_s`` is HEURISTIC; this
        says how close it was. False for kinds without a measured error."""
        err = self.timing_error_s
        if err is None or self.value_s is None or self.threshold_s is None:
            return False
        return abs(self.value_s - self.threshold_s) <= err

    def to_dict(self) -> dict:
        return {"kind": self.kind, "outcome": self.outcome, "ok": self.ok, "t_s": round(self.t_s, 4),
                "value_s": None if self.value_s is None else round(self.value_s, 4),
                # inf: a moment later audio could still change when the call ended (null in JSON)
                "settle_s": round(self.settle_s, 4) if math.isfinite(self.settle_s) else None,
                "threshold_s": None if self.threshold_s is None else round(self.threshold_s, 4),
                "within_timing_error": self.within_timing_error,
                **({"line": self.line} if self.line != "wideband" else {}),
                **({"first_stop_s": round(self.first_stop_s, 4)} if self.first_stop_s is not None else {}),
                "basis": self.basis, "text": verdict_text(self)}

    @staticmethod
    def from_dict(d: dict) -> "Verdict":
        """A Verdict from ``to_dict``'s output. Raises ValueError naming a missing or bad field."""
        try:
            kind, outcome = str(d["kind"]), str(d["outcome"])
            if kind not in OUTCOMES or outcome not in OUTCOMES[kind]:
                raise ValueError(f"unknown verdict {kind}/{outcome}")
            v = d.get("value_s")
            th = d.get("threshold_s")
            line = str(d.get("line", "wideband"))
            if line not in _TIMING_ERROR_S:
                raise ValueError(f"unknown line {line!r}")
            return Verdict(kind, outcome, outcome in OK_OUTCOMES[kind], float(d["t_s"]),
                           None if v is None else float(v),
                           math.inf if d.get("settle_s", d["t_s"]) is None else float(d.get("settle_s", d["t_s"])),
                           None if th is None else float(th), str(d.get("basis", "")), line,
                           None if d.get("first_stop_s") is None else float(d["first_stop_s"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"bad verdict record {d!r}: {exc}") from None


def _v(kind: str, outcome: str, t_s: float, value_s: float | None, settle_s: float,
       threshold_s: float | None, basis: str) -> Verdict:
    return Verdict(kind, outcome, outcome in OK_OUTCOMES[kind], t_s,
                   None if value_s is None else round(value_s, 6), settle_s, threshold_s, basis)


H = "HEURISTIC"
H_SHORT = ("HEURISTIC: a caller utterance under backchannel_max_s (Full-Duplex-Bench's backchannel length) "
           "after which the agent spoke first; words would tell 'mm-hmm' from 'stop'")
_LAT_BASIS = f"{RESPONSE_LATENCY_HUMAN.source}; {S2S_LATENCY_RANGE.source}"


FIRST_STOP_PAUSE_S = 0.3
"""HEURISTIC: the shortest pause of the agent, after a barge-in began, that ``Verdict.first_stop_s``
names as a stop it went on from, seconds (``TurnConfig.utterance_pause_s``: a shorter one lies
inside an inter-pausal unit, no stop at all)."""


def _first_stop_s(agent: list[SpeechSegment], offsets: list[float], onset_s: float, stop_s: float,
                  spans_s: float | None = None) -> float | None:
    """Seconds from ``onset_s`` (a barge-in) to the end of the first agent segment that ends after
    it and before ``stop_s`` (where the agent finally stopped, or the caller's turn ended) and is
    followed by a pause of at least ``FIRST_STOP_PAUSE_S`` (one that holds ``spans_s`` too, when
    given: the caller finished while the agent was quiet); None if there is none. ``agent``: its
    segments sorted by onset (one channel's never overlap), ``offsets`` theirs: the search starts
    by bisection, so a long call's verdicts stay linear."""
    for i in range(bisect.bisect_right(offsets, onset_s), len(agent) - 1):
        s, nxt = agent[i], agent[i + 1]
        if s.offset_s >= stop_s - 1e-9:
            break
        if nxt.onset_s - s.offset_s >= FIRST_STOP_PAUSE_S - 1e-9 and (
                spans_s is None or s.offset_s <= spans_s <= nxt.onset_s):
            return s.offset_s - onset_s
    return None


def _containing(turns: list[Turn], starts: list[float], t_s: float) -> Turn | None:
    """The turn of ``turns`` (one channel's, sorted by onset, ``starts`` their onsets; they never
    overlap) with onset < t_s < offset, or None. O(log n)."""
    i = bisect.bisect_left(starts, t_s) - 1
    if i >= 0 and turns[i].offset_s > t_s:
        return turns[i]
    return None


def verdicts(timeline: Timeline, config: VerdictConfig | None = None) -> list[Verdict]:
    """Every verdict of a timeline, sorted by (t_s, kind). Pure and O(n log n).

    Args:
        timeline: ``turns.analyze`` output (or a window of it: verdicts whose context lies
            outside the window are left out, never guessed).
        config: thresholds (default ``VerdictConfig()``).
    Returns:
        list of ``Verdict``.
    """
    cfg = config or VerdictConfig()
    out: list[Verdict] = []
    turns = {c: sorted((t for t in timeline.turns if t.channel == c), key=lambda t: t.onset_s)
             for c in ("user", "agent")}
    starts = {c: [t.onset_s for t in turns[c]] for c in turns}
    bcs = {c: sorted((b for b in timeline.backchannels if b.channel == c), key=lambda b: b.onset_s)
           for c in ("user", "agent")}

    bc_on = {c: [b.onset_s for b in bcs[c]] for c in bcs}

    def is_bc(s: SpeechSegment) -> bool:
        lst = bcs[s.channel]
        i = bisect.bisect_right(bc_on[s.channel], s.onset_s + 1e-9) - 1
        return i >= 0 and lst[i].onset_s <= s.onset_s + 1e-9 and s.offset_s <= lst[i].offset_s + 1e-9


    segs = sorted(timeline.segments, key=lambda s: (s.onset_s, s.channel))
    user_all = [s for s in segs if s.channel == "user"]
    user_floor = [s for s in user_all if not is_bc(s)]
    user_all_on = [s.onset_s for s in user_all]
    agent_all = [s for s in segs if s.channel == "agent"]
    agent_off = [s.offset_s for s in agent_all]

    # barge-ins by the caller, and what the agent did after yielding
    user_turn_at = {t.onset_s: t for t in turns["user"]}
    for b in timeline.barge_ins:
        if b.by != "user" or timeline.cut_by_end(b):
            continue  # cut by the call's end: neither a yield nor a talk-through (``Timeline.cut_by_end``)
        ut = user_turn_at.get(b.onset_s)  # the barge-in is the onset of the caller's turn
        settle = ut.offset_s if ut is not None else b.onset_s
        if b.yield_s is None:
            # the caller's turn the agent talked on past (its own pauses inside it are not subtracted)
            turn_s = ut.offset_s - b.onset_s if ut is not None else None
            v = _v("barge_in", "talked_through", b.onset_s, turn_s, settle, None, H)  # no threshold decided it
            first = None if ut is None else _first_stop_s(agent_all, agent_off, b.onset_s, ut.offset_s, spans_s=ut.offset_s)
            out.append(v if first is None else replace(v, first_stop_s=round(first, 6)))
            continue
        if ut is not None and ut.duration_s < cfg.backchannel_max_s:
            # a short caller utterance the agent stopped for: a backchannel if the agent speaks
            # next (the caller had nothing more to say), an interruption if the caller goes on
            i = bisect.bisect_left(starts["agent"], ut.offset_s)
            a_next = starts["agent"][i] if i < len(starts["agent"]) else math.inf
            k = bisect.bisect_right(user_all_on, ut.offset_s)
            u_next = user_all_on[k] if k < len(user_all_on) else math.inf
            if a_next < u_next:
                # the bound in the value's units (from the "mm"'s onset): its end + the window
                out.append(_v("backchannel", "yielded", b.onset_s, b.yield_s, a_next,
                              ut.duration_s + cfg.backchannel_yield_window_s, H_SHORT))
                continue
            settle = math.inf if u_next == math.inf else max(settle, u_next)  # undecided until then
        outcome = "yielded" if b.yield_s <= cfg.yield_max_s else "slow_yield"
        v = _v("barge_in", outcome, b.onset_s, b.yield_s, max(settle, b.onset_s + b.yield_s), cfg.yield_max_s, H)
        if outcome == "slow_yield":
            first = _first_stop_s(agent_all, agent_off, b.onset_s, b.onset_s + b.yield_s)
            if first is not None and first <= cfg.yield_max_s:
                v = replace(v, first_stop_s=round(first, 6))
        out.append(v)
        if ut is not None and ut.duration_s < cfg.backchannel_max_s:
            continue  # a short interruption: the caller went on, the restart rule needs a turn
        if ut is None:
            continue
        stop_s = b.onset_s + b.yield_s
        i = bisect.bisect_right(starts["agent"], stop_s + 1e-9)
        nxt = turns["agent"][i] if i < len(turns["agent"]) else None
        if nxt is not None and nxt.onset_s < ut.offset_s:
            out.append(_v("restart", "restarted", b.onset_s, nxt.onset_s - stop_s, nxt.onset_s, None, H))
        elif nxt is not None:
            out.append(_v("restart", "waited", b.onset_s, nxt.onset_s - ut.offset_s, nxt.onset_s, None, H))
        # no next agent turn yet: undecided until the call ends (left out)

    # caller backchannels inside agent turns: held or (false) yield
    for b in bcs["user"]:
        host = _containing(turns["agent"], starts["agent"], b.onset_s)
        if host is None or host.offset_s <= b.onset_s:
            continue
        if timeline.backchannel_cut_by_end(b, cfg.backchannel_yield_window_s):
            continue  # the agent's turn ended with the call: neither held nor a yield
        stop = host.offset_s - b.onset_s
        limit = b.offset_s + cfg.backchannel_yield_window_s
        # threshold_s in the value's units (from the backchannel's onset): its end + the window, so
        # "0.57 s after it began" is not shown beside a bare 0.50 that counts from its end
        bound = limit - b.onset_s
        if host.offset_s <= limit:
            out.append(_v("backchannel", "yielded", b.onset_s, stop, host.offset_s, bound, H))
        else:
            out.append(_v("backchannel", "held", b.onset_s, stop, limit, bound, H))

    # pauses inside the caller's speech
    agent_on = starts["agent"]
    for s in user_floor:
        k = bisect.bisect_right(user_all_on, s.onset_s + 1e-9)  # next user segment of any kind
        while k < len(user_all) and user_all[k].onset_s < s.offset_s:
            k += 1
        if k >= len(user_all):
            continue
        p0, p1 = s.offset_s, user_all[k].onset_s
        if p1 <= p0:
            continue
        if _containing(turns["agent"], starts["agent"], p0) is not None:
            continue  # the agent was talking: the caller stopped for it, not a pause
        j = bisect.bisect_right(agent_on, p0)
        a = agent_on[j] if j < len(agent_on) else math.inf
        if a < p1:
            # HEURISTIC: a start later into the silence than the human band's edge (the human mean
            # answer latency) took a turn a person would have taken too; its latency verdict flags
            # it as slow, and calling it a cut-in as well left no start that passes (a new user's
            # trial: "latency 1.83 s [FLAG] · cut into the caller's pause (1.83 s into it) [FLAG]")
            if p1 - a <= cfg.resume_window_s and a - p0 <= RESPONSE_LATENCY_HUMAN.high_s:
                out.append(_v("pause", "cut_in", p0, a - p0, p1, cfg.resume_window_s, H))
            continue  # else: the agent answered; the caller spoke later (a transition)
        if cfg.pause_min_s <= p1 - p0 <= cfg.pause_max_s:
            out.append(_v("pause", "waited", p0, p1 - p0, p1, cfg.pause_min_s, H))

    # agent starts while the caller's speech sounds
    uf_on = [s.onset_s for s in user_floor]
    for t in turns["agent"]:
        i = bisect.bisect_right(uf_on, t.onset_s) - 1
        if i < 0 or not (user_floor[i].onset_s < t.onset_s < user_floor[i].offset_s):
            continue
        ut = _containing(turns["user"], starts["user"], t.onset_s)
        u_end = ut.offset_s if ut is not None else user_floor[i].offset_s
        both = min(u_end, t.offset_s) - t.onset_s
        outcome = "early_start" if u_end - t.onset_s <= cfg.talk_over_grace_s else "talk_over"
        out.append(_v("talk_over", outcome, t.onset_s, both, max(u_end, t.onset_s), cfg.talk_over_grace_s, H))

    # dead air: mutual silence between speech
    end, last_ch = -math.inf, None
    for s in segs:
        if last_ch is not None and s.onset_s - end > cfg.dead_air_s:
            outcome = "agent_silent" if last_ch == "user" else "caller_silent"
            out.append(_v("dead_air", outcome, end, s.onset_s - end, s.onset_s, cfg.dead_air_s, H))
        if s.offset_s >= end:
            end, last_ch = s.offset_s, s.channel

    # response latency against the human bands
    turn_end = {(t.channel, t.onset_s): t.offset_s for t in timeline.turns}
    for tr in timeline.transitions:
        if not tr.is_response:
            continue
        g = tr.gap_s
        if g < -cfg.talk_over_grace_s:
            outcome, th = "overlapped", -cfg.talk_over_grace_s
        elif g < 0:
            outcome, th = "early", -cfg.talk_over_grace_s
        elif g <= RESPONSE_LATENCY_HUMAN.high_s:
            outcome, th = "human", RESPONSE_LATENCY_HUMAN.high_s
        elif g <= S2S_LATENCY_RANGE.high_s:
            # the bound it crossed to be flagged (a new user's trial: "1.26 s [FLAG], threshold 2.72")
            outcome, th = "s2s", RESPONSE_LATENCY_HUMAN.high_s
        else:
            outcome, th = "beyond_s2s", S2S_LATENCY_RANGE.high_s
        # the gap is known once the reply has lasted long enough not to be a backchannel and the
        # caller's turn has ended; the reply's own end changes nothing (a shorter reply: its end)
        end = turn_end.get(("agent", tr.to_onset_s), tr.to_onset_s)
        settle = min(end, max(tr.to_onset_s + cfg.backchannel_max_s, tr.to_onset_s - g))
        out.append(_v("latency", outcome, tr.to_onset_s, g, settle, th, _LAT_BASIS))

    out.sort(key=lambda v: (v.t_s, v.kind))
    return out


_THRESHOLD_RULES: dict[tuple[str, str], str] = {
    ("barge_in", "yielded"): "flag above {t} (yield max)",
    ("barge_in", "slow_yield"): "flag above {t} (yield max)",
    ("barge_in", "talked_through"): "the agent never stopped",
    ("backchannel", "held"): "flag at or below {t} (its end + false-yield window)",
    ("backchannel", "yielded"): "flag at or below {t} (its end + false-yield window)",
    ("pause", "cut_in"): "flag at or below {h} into it, the caller back within {t}",
    ("pause", "waited"): "judged from {t} (min pause)",
    ("talk_over", "early_start"): "flag above {t} (talk-over grace)",
    ("talk_over", "talk_over"): "flag above {t} (talk-over grace)",
    ("dead_air", "caller_silent"): "judged from {t} (min silence); flag when the caller spoke last",
    ("dead_air", "agent_silent"): "judged from {t} (min silence); flag when the caller spoke last",
    ("latency", "human"): "flag above {t} (human mean)",
    ("latency", "s2s"): "flag above {t} (human mean)",
    ("latency", "beyond_s2s"): "flag above {h} (human mean); beyond {t} (slowest S2S)",
    ("latency", "early"): "flag below {t} (−talk-over grace)",
    ("latency", "overlapped"): "flag below {t} (−talk-over grace)",
}
"""Per (kind, outcome): how the verdict's ``threshold_s`` ({t}) bounds its ``value_s``, and which side
is flagged; {h} is the human band's edge (``RESPONSE_LATENCY_HUMAN.high_s``)."""


def threshold_text(kind: str, outcome: str, threshold_s: float | None) -> str:
    """The threshold of a verdict beside its measured value, with the side that is flagged, e.g.
    "flag above 1.00 (yield max)", "judged from 0.50 (min pause)" (a bound that only decides whether
    a moment is judged), "the agent never stopped" (a talked-through barge-in: no threshold decided
    it). The report showed "0.57 | 0.90 its end + false-yield window" for a flagged false yield and
    "0.32 | 1.00 caller resumed within" for a flagged cut-in: a value below its threshold read
    flagged in one row and fine in the next (a new user's trial). "–" when there is none to show."""
    rule = _THRESHOLD_RULES.get((kind, outcome))
    if rule is None or ("{t}" in rule and threshold_s is None):
        return "–"
    return rule.format(t=f"{threshold_s:.2f}" if threshold_s is not None else "",
                       h=f"{RESPONSE_LATENCY_HUMAN.high_s:.2f}")


def _error_table(e: TimingError) -> dict[tuple[str, str], float]:
    return {**{("latency", o): e.latency_p95_abs_s for o in ("human", "s2s", "early", "overlapped")},
            **{("barge_in", o): e.yield_p95_abs_s for o in ("yielded", "slow_yield")}}


_TIMING_ERROR_S: dict[str, dict[tuple[str, str], float]] = {
    "wideband": _error_table(MEASURED_TIMING_ERROR),
    "narrowband": _error_table(MEASURED_TIMING_ERROR_NARROWBAND),
}
"""Per line, the measured timing error of the value each (kind, outcome) compares with its
threshold, seconds (``Verdict.within_timing_error``); a ``beyond_s2s`` latency is flagged from
the human edge far below its threshold, so it has none here."""


TIMED_FROM: dict[str, str] = {"latency": "user", "barge_in": "agent"}
"""The channel whose speech end a kind's measured value starts or ends at: a latency runs from the
caller's offset (a word-final sound lost on a narrowband line reads it long), a yield time to the
agent's offset. The other end is an onset, measured within milliseconds on either line."""


def on_line(found: list[Verdict], narrow: Iterable[str]) -> list[Verdict]:
    """``found`` with ``line`` "narrowband" on each verdict whose value is timed from a channel in
    ``narrow`` (``TIMED_FROM``: the channels ``timing.health.check_line`` found narrowband), so its
    ``within_timing_error`` uses that line's measured error; a caller recorded wideband keeps the
    wideband error on latencies even when the agent comes over a telephone line (a trial's attach
    over Twilio: every latency read "inside the 298 ms" error though the caller's end was wideband).
    Pure."""
    narrow = set(narrow)
    if not narrow:
        return found
    return [replace(v, line="narrowband") if TIMED_FROM.get(v.kind) in narrow else v for v in found]


def _above_human_mean(gap_s: float | None) -> str:
    """The words of an ``s2s`` latency: above the human band's edge, which is the human MEAN
    answer latency (SPEARBench Table III, 0.742 s), so "slower than human" would overclaim; "S2S
    range" only from the fastest S2S system's latency (``S2S_LATENCY_RANGE.low_s``, 0.959 s)."""
    words = f"above the human mean {RESPONSE_LATENCY_HUMAN.high_s:.2f} s"
    if gap_s is not None and gap_s >= S2S_LATENCY_RANGE.low_s:
        words += ", S2S range"
    return words


def verdict_text(v: Verdict) -> str:
    """One short line for the meter and logs, e.g. "barge-in: agent yielded in 0.45 s"."""
    val = "–" if v.value_s is None else f"{v.value_s:.2f} s"
    mark = "ok" if v.ok else "FLAG"
    words = {
        ("barge_in", "yielded"): f"barge-in: agent yielded in {val}",
        ("barge_in", "slow_yield"): f"barge-in: agent yielded late, {val}" + (
            "" if v.first_stop_s is None else
            f" (it went quiet {v.first_stop_s:.2f} s in and spoke again: read as a phrase break, "
            "not a yield; a short 'sorry' after a yield looks the same)"),
        ("barge_in", "talked_through"): ("barge-in: agent talked through" if v.value_s is None
                                          else f"barge-in: agent talked through the caller's {val} turn") + (
            "" if v.first_stop_s is None else
            f" (it went quiet {v.first_stop_s:.2f} s in, the caller finished in that pause, and it spoke again "
            "soon after: read as going on, not a yield then an answer)"),
        ("backchannel", "held"): "caller backchannel: agent held",
        ("backchannel", "yielded"): f"caller backchannel: agent stopped ({val} after it began), false yield",
        ("pause", "waited"): f"caller paused {val}: agent waited",
        ("pause", "cut_in"): f"caller paused: agent cut in {val} into the pause",
        ("talk_over", "early_start"): f"agent started {val} before the caller ended",
        ("talk_over", "talk_over"): f"agent talked over the caller for {val}",
        ("dead_air", "caller_silent"): f"dead air {val} (caller's turn)",
        ("dead_air", "agent_silent"): f"dead air {val} (agent's turn)",
        ("restart", "waited"): "after yielding: agent waited for the caller",
        ("restart", "restarted"): f"after yielding: agent restarted after {val} while the caller spoke",
        ("latency", "human"): f"latency {val}: human band",
        ("latency", "early"): f"latency {val}: early start",
        ("latency", "s2s"): f"latency {val}: {_above_human_mean(v.value_s)}",
        ("latency", "beyond_s2s"): f"latency {val}: slower than S2S systems",
        ("latency", "overlapped"): f"latency {val}: started well before the caller ended",
    }
    near = ""
    if v.within_timing_error and v.threshold_s is not None:  # a flag that noise could flip (a noted defect)
        err = v.timing_error_s
        # the distance itself, then the error it is inside ("within 47 ms … of the edge" read as
        # the distance; a trial)
        gap_ms = abs(float(v.value_s) - v.threshold_s) * 1000 if v.value_s is not None else 0.0
        near = (f" ({gap_ms:.0f} ms from the {v.threshold_s:.2f} s edge, inside the {err * 1000:.0f} ms p95 "
                + ("timing error of a narrowband line)" if v.line == "narrowband" else "timing error)"))
    return f"{v.t_s:6.1f} {words.get((v.kind, v.outcome), v.kind + ' ' + v.outcome)}{near} [{mark}]"


SAME_SILENCE_TOLERANCE_S = 1e-3
"""How closely a ``dead_air`` verdict's end and a ``latency`` verdict must agree to be one silence
(``moment_groups``), seconds: both are measured from the same segment edges, and a result document
rounds times to 0.1 ms, so the two agree to within a few tenths of a millisecond."""


class _Judged(Protocol):
    """What ``moment_groups`` reads of a verdict (a ``Verdict``, or a record of a result's
    ``verdicts`` adapted to these attributes): a time or value may be missing (None)."""

    @property
    def kind(self) -> str: ...
    @property
    def t_s(self) -> float | None: ...
    @property
    def value_s(self) -> float | None: ...


_V = TypeVar("_V", bound=_Judged)


JOINED_MOMENT_WORDS = ("one event judged twice (a reply after dead air or after yielding, a start in the "
                       "caller's pause or over their speech) is one moment")
"""How every output explains a moment of several verdicts (``moment_groups``), in one place: the
report's card said "a reply's dead air, or its talk-over", on a call whose joined verdicts were
cut-ins and restarts (a new user's trial)."""


def moment_groups(vs: Sequence[_Judged]) -> list[tuple[int, ...]]:
    """The verdicts of ``vs`` grouped into moments, as indices into ``vs`` (pure, O(n log n)).

    The rule: one event that two verdicts judge is one moment.
    * A reply after dead air gives two verdicts of one silence. A ``dead_air`` verdict (either
      outcome) and a ``latency`` verdict are joined when the latency's ``t_s`` (the agent's
      onset) lies within ``SAME_SILENCE_TOLERANCE_S`` (0.001 s) of the dead air's end (its
      ``t_s`` + ``value_s``) and their ``value_s`` (the silence; the gap) agree within the same
      0.001 s. A dead air joins the nearest such latency not joined to a dead air yet (dead airs
      taken in the order of ``vs``). A ``pause`` verdict joins the same way: a caller's pause the
      agent cut into ends at the agent's onset and lasts the gap (a pause it waited out ends when
      the caller resumes, where no latency starts, so it joins nothing).
    * An agent start over the caller's speech gives a ``latency`` (negative: ``early`` or
      ``overlapped``) and a ``talk_over`` verdict (either outcome) at the same onset. They are
      joined when their ``t_s`` agree within 0.001 s; a talk-over joins the nearest negative
      latency not joined yet (talk-overs taken in the order of ``vs``).
    * The agent's reply after yielding gives a ``restart`` verdict (at the barge-in; its
      ``value_s`` is the reply's latency when it ``waited``) and the reply's ``latency``. A
      restart joins the first latency at or after its ``t_s`` when that latency is not negative
      and their ``value_s`` agree within 0.001 s.
    A latency has at most one verdict of each of these kinds (and never both dead air or a pause
    and a talk-over: a positive gap, or a negative one). A verdict with a time or value it needs
    missing joins nothing. No other kinds pair: every other verdict is a moment of its own.

    Returns:
        one tuple per moment, in the order of ``vs`` by the moment's first index: a joined
        moment is ``(latency index, partner indices...)`` (dead air or talk-over first, then a
        restart), placed where the latency is (the reply), so a partner's own position starts no
        moment; every index of ``vs`` is in exactly one tuple.
    """
    lats = sorted((float(v.t_s), i) for i, v in enumerate(vs)
                  if v.kind == "latency" and v.t_s is not None and v.value_s is not None)
    lat_t = [t for t, _ in lats]
    tol = SAME_SILENCE_TOLERANCE_S
    joined: dict[int, list[int]] = {}  # latency index -> its partners' indices
    taken: dict[str, set[int]] = {}  # partner kind -> latencies that have one of that kind

    def near(t0: float) -> list[tuple[float, int]]:  # latencies within tol of t0
        return lats[bisect.bisect_left(lat_t, t0 - tol):bisect.bisect_right(lat_t, t0 + tol)]

    def value(j: int) -> float:
        return float(vs[j].value_s)  # type: ignore[arg-type]

    def join(j: int, i: int) -> None:
        joined.setdefault(j, []).append(i)
        taken.setdefault(vs[i].kind, set()).add(j)

    def free(j: int, kind: str) -> bool:
        return j not in taken.get(kind, ())

    # dead air, or a caller's pause the agent cut into: the silence before the agent's start, which
    # that start's latency measures too (its end is the agent's onset, its length the gap)
    for i, v in enumerate(vs):
        if v.kind not in ("dead_air", "pause") or v.t_s is None or v.value_s is None:
            continue
        end = float(v.t_s) + float(v.value_s)
        cands = [(abs(t - end), j) for t, j in near(end)
                 if free(j, v.kind) and abs(value(j) - float(v.value_s)) <= tol]
        if cands:
            join(min(cands)[1], i)
    # an agent start over the caller's speech: its latency (negative) and its talk_over verdict
    # share the agent's onset, one moment (a new user's trial counted rude's one talk-over twice)
    for i, v in enumerate(vs):
        if v.kind != "talk_over" or v.t_s is None:
            continue
        cands = [(abs(t - float(v.t_s)), j) for t, j in near(float(v.t_s)) if value(j) < 0 and free(j, v.kind)]
        if cands:
            join(min(cands)[1], i)
    # the agent's reply after yielding: its restart verdict (``waited``: value_s is that reply's
    # latency) and the reply's latency, the first at or after the barge-in (a new user's trial saw
    # one 1.77 s silence listed as "waited [ok]" and "above the human mean [FLAG]")
    for i, v in enumerate(vs):
        if v.kind != "restart" or v.t_s is None or v.value_s is None:
            continue
        k = bisect.bisect_left(lat_t, float(v.t_s))
        if k < len(lats):
            j = lats[k][1]
            if free(j, v.kind) and value(j) >= 0 and abs(value(j) - float(v.value_s)) <= tol:
                join(j, i)
    partners = {i for ps in joined.values() for i in ps}
    return [(i, *joined.get(i, ())) for i in range(len(vs)) if i not in partners]


def same_silence_text(threshold_s: float | None, ok: bool) -> str:
    """The words a moment's line adds for the dead air of the same silence (``moment_groups``):
    " · the same silence is dead air (over 2.00 s) [FLAG]"; the report and ``livejudge check`` both
    write it. ``threshold_s`` None: "–"."""
    th = "–" if threshold_s is None else f"{float(threshold_s):.2f}"
    return f" · the same silence is dead air (over {th} s) [{'ok' if ok else 'FLAG'}]"


def joined_text(kind: str, outcome: str, value_s: float | None, threshold_s: float | None, ok: bool) -> str:
    """The words a moment's line adds for a verdict joined to its latency (``moment_groups``):
    the dead air of the same silence (``same_silence_text``), the talk-over of the same start
    (" · the same start talks over the caller for 1.76 s [FLAG]"), or the restart the reply
    answers (" · after yielding, it waited for the caller to finish [ok]"). The report and
    ``livejudge check`` both write it."""
    if kind == "dead_air":
        return same_silence_text(threshold_s, ok)
    val = "–" if value_s is None else f"{float(value_s):.2f} s"
    words = {("talk_over", "talk_over"): f"the same start talks over the caller for {val}",
             ("talk_over", "early_start"): f"the caller's last {val} overlapped",
             ("restart", "waited"): "after yielding, it waited for the caller to finish",
             ("pause", "cut_in"): f"the same start cut into the caller's pause ({val} into it)"}
    return f" · {words.get((kind, outcome), kind.replace('_', ' ') + ' ' + outcome)} [{'ok' if ok else 'FLAG'}]"


def moments(vs: Sequence[_V]) -> list[tuple[_V, ...]]:
    """The verdicts of ``vs`` grouped into moments (``moment_groups``' rule and order): one tuple
    per moment, the latency before its dead air when a reply ended dead air."""
    return [tuple(vs[i] for i in g) for g in moment_groups(vs)]


def flagged_moments(vs: Sequence[Verdict]) -> list[tuple[Verdict, ...]]:
    """The moments of ``vs`` (``moments``) with at least one flagged verdict (``not ok``), in order:
    what the HTML report, the rich meter, ``livejudge check`` and the summary's
    ``verdict_flagged_moment_count`` count as flagged moments."""
    return [m for m in moments(vs) if any(not v.ok for v in m)]


def metric_names() -> list[str]:
    """The summary metrics ``summarize_verdicts`` gives (usable in ``--fail-if``)."""
    names = ["verdict_count", "verdict_flagged_count", "verdict_flagged_rate",
             "verdict_moment_count", "verdict_flagged_moment_count", "verdict_flagged_moment_beyond_error_count"]
    for kind, outs in OUTCOMES.items():
        names += [f"verdict_{kind}_{o}_count" for o in outs]
        names.append(f"verdict_{kind}_flagged_rate")
    names.append("verdict_dead_air_s")
    return names


def summarize_verdicts(vs: Iterable[Verdict]) -> dict[str, float | int | None]:
    """Counts per kind and outcome, and per kind the flagged rate (flagged / verdicts of the
    kind; None when the kind never occurred), plus the total dead air seconds. Flat, so every
    number is a ``--fail-if`` metric (e.g. ``verdict_barge_in_talked_through_count>0``).

    ``verdict_count`` / ``verdict_flagged_count`` / ``verdict_flagged_rate`` count verdicts;
    ``verdict_moment_count`` / ``verdict_flagged_moment_count`` count moments (``moments``: a
    reply after dead air or after yielding, or a start in the caller's pause or over their speech, is
    one moment), as the HTML report, the rich meter and ``livejudge check`` list them;
    ``verdict_flagged_moment_beyond_error_count`` counts the flagged moments with at least one flag
    that is not ``within_timing_error`` (a gate on it ignores flags that noise could have made)."""
    vs = list(vs)
    ms = moments(vs)
    out: dict[str, float | int | None] = {
        "verdict_count": len(vs),
        "verdict_flagged_count": sum(1 for v in vs if not v.ok),
        "verdict_flagged_rate": round(sum(1 for v in vs if not v.ok) / len(vs), 4) if vs else None,
        "verdict_moment_count": len(ms),
        "verdict_flagged_moment_count": sum(1 for m in ms if any(not v.ok for v in m)),
        "verdict_flagged_moment_beyond_error_count": sum(
            1 for m in ms if any(not v.ok and not v.within_timing_error for v in m)),
    }
    for kind, outs in OUTCOMES.items():
        mine = [v for v in vs if v.kind == kind]
        for o in outs:
            out[f"verdict_{kind}_{o}_count"] = sum(1 for v in mine if v.outcome == o)
        out[f"verdict_{kind}_flagged_rate"] = (round(sum(1 for v in mine if not v.ok) / len(mine), 4)
                                               if mine else None)
    out["verdict_dead_air_s"] = round(sum(v.value_s or 0.0 for v in vs if v.kind == "dead_air"), 4)
    return out


__all__ = ["EXPECTABLE", "OK_OUTCOMES", "OUTCOMES", "SAME_SILENCE_TOLERANCE_S", "Verdict", "VerdictConfig",
           "flagged_moments", "joined_text", "metric_names", "moment_groups", "moments", "summarize_verdicts", "verdict_text",
           "verdicts"]
