"""Embed livejudge in a LiveKit Agents app: ``attach(session)`` taps an ``AgentSession``.

What it taps (LiveKit Agents 1.8):

* **caller audio** — ``session.input.audio`` is wrapped by an ``AudioInput`` whose source is
  the original input: every frame the session reads is copied and stamped ``time.time()`` when
  it arrives (the stamp marks the frame's *last* sample), then returned unchanged.
* **agent audio** — ``session.output.audio`` is wrapped by an ``AudioOutput`` whose next in
  chain is the original output (room, console, avatar...). Frames are copied as the session
  hands them on, but they are placed on the clock by what the sink *reports it played*: each
  segment starts at the sink's ``playback_started.created_at`` and runs on, end to end, until
  ``playback_finished.playback_position`` (the point where an interruption cut it). A frame that
  reaches the sink after its place in an unbroken reply found the sink run dry (a TTS slower
  than real time) and plays from when it arrived (``DRY_TOL_S``); the runs a sink reports
  (``playback_progressed``, LiveKit's room output) place what is not yet fed and check the rest
  (``result["livekit"]["agent_playback"]``). Audio generated but never played counts for
  nothing; pause/resume moves the rest of the segment.
  The agent channel is fed live, ``TapOptions.hold_s`` behind the clock, so a cut is known
  before the cut-off audio would be fed.
* **the session's own events** — ``user_state_changed``, ``agent_state_changed``,
  ``metrics_collected``, ``conversation_item_added``, ``user_input_transcribed``,
  ``agent_false_interruption``, and the sink's playback events, as framework notes
  (``livekit.<event>``) for comparison only, never for timing.

Why the call ended (the result's ``source.ended``): "session closed (<CloseReason>)" when the
AgentSession closes ("session closed (user_initiated)", "(job_shutdown)"...), "failed: <error
type>" when it closed on an error, "interrupted (SIGTERM)" where livejudge's own SIGTERM handler
finished the call, "closed" for an ``aclose()`` before the session closed; an app that stops on
Ctrl-C says so first with ``handle.mark_ended(interrupted(signal.SIGINT))`` (see
``examples/livekit_embed.py``).

Clock: ``time.time()`` (the clock LiveKit stamps its events and playback with) minus the
moment of ``attach``, in seconds.

Never blocks the agent: a tap copies the frame's bytes into a bounded deque and returns (a
full deque drops the item and counts it); conversion, resampling, VAD, turn analysis and the
result run in one worker thread, judging in the Session's judge thread. See
``benchmarks/livekit_overhead.py``.
"""

from __future__ import annotations

import asyncio
import collections
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from livekit import rtc
from livekit.agents.voice.io import AudioInput, AudioOutput, AudioOutputCapabilities

from livejudge.audio import pcm16_chunk_to_mono
from livejudge.outputs.embedded import EmbeddedOutputs
from livejudge.livekit.compare import livekit_comparison
from livejudge.session import Session, SessionConfig
from livejudge.sources.stitch import StallLine, Stitcher

NOTE_EVENTS: tuple[str, ...] = (
    "user_state_changed", "agent_state_changed", "metrics_collected", "conversation_item_added",
    "user_input_transcribed", "agent_false_interruption",
)
"""AgentSession events recorded as framework notes (kind ``livekit.<event>``)."""

_METRIC_FIELDS = ("speech_id", "label", "request_id", "end_of_utterance_delay", "transcription_delay",
                  "on_user_turn_completed_delay", "ttft", "ttfb", "duration", "audio_duration",
                  "tokens_per_second", "idle_time", "inference_duration_total", "playback_latency")
_ITEM_METRICS = ("e2e_latency", "end_of_turn_delay", "transcription_delay", "llm_node_ttft",
                 "tts_node_ttfb", "playback_latency", "on_user_turn_completed_delay")


@dataclass(frozen=True)
class TapOptions:
    """How tapped frames become session audio.

    Attributes:
        hold_s: the agent channel is fed this far behind the clock, so that an interruption
            (``playback_finished`` with the cut position) arrives before the audio after the
            cut would have been fed. HEURISTIC: 0.15 s covers event-loop delays of a busy
            loop; it must stay below ``SessionConfig.max_lag_s`` (0.5 s). Seconds.
        stitch_tolerance_s: a caller frame arriving at most this much after the end of the
            previous one continues it seamlessly; a later one starts a new stretch at its own
            stamp. Seconds (HEURISTIC, 0.25 s, as the Pipecat tap's ``user_stitch_tolerance_s``:
            frames read off a network or after an event-loop stall come in bunches, and with
            0.06 s each frame of an 80 ms bunch re-anchored on the one before; a trial lost 16 of
            18 s of caller audio and every caller timing, the only word blaming ``max_lag_s``).
            A stall longer than this still loses the part of its backlog that overlaps: counted
            in ``result["livekit"]["reanchor_dropped_s"]`` and, past 0.3 s, said once.
        max_ahead_s: a caller frame whose stamp lies more than this before the channel's end
            re-anchors the channel to its stamp (the earlier stretch was anchored on a late
            read); the overlap is dropped and counted. Seconds.
        heal_window_s, heal_min_s: a pause with no caller frames shorter than the tolerance is
            laid end to end; when every frame over ``heal_window_s`` of a stretch's audio came
            at least ``heal_min_s`` later than where it was placed, the stretch resumes that much
            later (``livejudge.sources.stitch.Stitcher``). Seconds.
        tick_s: the worker's period when no frame arrives (feeds the agent channel, advances
            the clock, runs the judge). Seconds.
        max_queue: bound of the queue between the event loop and the worker, items.
    """

    hold_s: float = 0.15
    stitch_tolerance_s: float = 0.25
    max_ahead_s: float = 0.005
    heal_window_s: float = 1.0
    heal_min_s: float = 0.02
    tick_s: float = 0.02
    max_queue: int = 8000

    def validate(self, config: SessionConfig) -> "TapOptions":
        if not 0 <= self.hold_s < config.max_lag_s:
            raise ValueError(f"TapOptions.hold_s must be in [0, SessionConfig.max_lag_s={config.max_lag_s}) s, "
                             f"got {self.hold_s}")
        if min(self.stitch_tolerance_s, self.max_ahead_s, self.heal_min_s) < 0 or self.tick_s <= 0 \
                or not self.heal_window_s > 0:
            raise ValueError("TapOptions.stitch_tolerance_s, max_ahead_s and heal_min_s must be ≥ 0 s, "
                             "tick_s and heal_window_s > 0 s")
        if self.max_queue < 1:
            raise ValueError(f"TapOptions.max_queue must be ≥ 1, got {self.max_queue}")
        return self


_USER, _AGENT, _STARTED, _FINISHED, _PAUSE, _RESUME, _NOTE, _PROGRESS, _CLOSE = range(9)

DRY_TOL_S = 0.02
"""HEURISTIC: an agent frame that reaches the tap more than this after the moment it would play
were the reply continuous found the sink run dry (a TTS slower than real time, a stalled
pipeline): it plays from when it arrived, not from its place in an unbroken reply, seconds (above
the event loop's usual delay between the sink's capture and the tap's stamp)."""


class _Segment:
    """One played reply on the worker side: its audio, how much was fed, and where it plays:
    ``runs``, ``[(first sample, session time it plays, s), ...]`` in order, each run playing on
    without a break until the next one starts (a reply played straight through has one run, from
    ``playback_started``; a sink that ran dry, a pause, or a run the sink reported adds one)."""

    __slots__ = ("chunks", "n", "rate", "runs", "fed", "paused_at_s", "flat")

    def __init__(self) -> None:
        self.chunks: list[np.ndarray] = []
        self.n = 0
        self.rate: int | None = None
        self.runs: list[tuple[int, float]] = []
        self.fed = 0
        self.paused_at_s: float | None = None
        self.flat: np.ndarray | None = None

    @property
    def start_s(self) -> float | None:
        return self.runs[0][1] if self.runs else None

    def audio(self) -> np.ndarray:
        if self.flat is None or self.flat.size != self.n:
            self.flat = np.concatenate(self.chunks) if self.chunks else np.zeros(0, np.float32)
            self.chunks = [self.flat]
        return self.flat

    def time_of(self, i: int) -> float:
        """When sample ``i`` plays (session clock, s); needs ``runs`` and ``rate``."""
        k, t = next((r for r in reversed(self.runs) if r[0] <= i), self.runs[0])
        return t + (i - k) / self.rate  # type: ignore[operator]

    def played_by(self, t_s: float) -> int:
        """How many samples have played by ``t_s`` (session clock, s), at most ``n``."""
        out = 0
        for j, (k, start) in enumerate(self.runs):
            stop = self.runs[j + 1][0] if j + 1 < len(self.runs) else self.n
            if t_s <= start:
                break
            out = min(stop, k + int((t_s - start) * self.rate))  # type: ignore[operator]
        return min(out, self.n)

    def add_run(self, i: int, t_s: float, until: int | None = None) -> None:
        """Sample ``i`` plays at ``t_s``, and the samples after it run on from there up to ``until``
        (the runs that started in between are dropped; None: every run after ``i``)."""
        self.runs = sorted([r for r in self.runs if r[0] < i or (until is not None and r[0] >= until)] + [(i, t_s)])


class LiveKitTap(EmbeddedOutputs):
    """The handle ``attach`` returns: owns the Session, the worker thread and the outputs.

    Attributes:
        session: the livejudge ``Session`` (``session.timeline``, ``session.summary``...).
        t0_wall: ``time.time()`` at attach: session time = ``time.time() - t0_wall``.
        frames: frames tapped per channel; ``dropped_items``: items dropped by a full queue.
    """

    def __init__(self, agent_session: Any, *, judge: Any = "auto", config: SessionConfig | None = None,
                 display: bool | str = False, events_path: str | Path | None = None,
                 result_path: str | Path | None = None, report_path: str | Path | None = None,
                 fail_if: list[str] | tuple = (), junit_path: str | Path | None = None,
                 sinks: list | tuple = (), options: TapOptions | None = None, title: str = "livekit",
                 close_with_session: bool = True, judge_url: str | None = None) -> None:
        from livejudge.outputs.embedded import check_embed_options, gates_for_embedding

        if not all(hasattr(getattr(agent_session, side, None), "audio") for side in ("input", "output")):
            # attach(None) was "AttributeError: 'NoneType' object has no attribute 'input'" (a trial)
            raise ValueError("livejudge.livekit.attach needs the LiveKit AgentSession (livekit.agents.AgentSession, "
                             f"after await session.start(...)), got {type(agent_session).__name__}")
        if judge_url is not None:  # the Pipecat observer's name for it (a trial: TypeError here)
            if not (isinstance(judge, str) and judge == "auto"):
                raise ValueError(f"livejudge.livekit.attach: judge={judge!r} with judge_url={judge_url!r}: the "
                                 "windows are judged on the service; give one of them")
            judge = str(judge_url)

        check_embed_options(where="livejudge.livekit.attach", display=display, config=config,
                            config_type=SessionConfig, options=options, options_type=TapOptions, fail_if=fail_if)
        self.config = (config or SessionConfig()).validate()
        self.options = (options or TapOptions()).validate(self.config)
        self.gates = gates_for_embedding("livejudge.livekit.attach", fail_if)  # now, not at the end of the call
        self.junit_path = Path(junit_path) if junit_path is not None else None
        if self.junit_path is not None and not self.gates:
            print("livejudge: note: junit_path without fail_if: the JUnit file's gate suite will be empty; "
                  "give fail_if=['METRIC>X'] to gate", file=sys.stderr)
        unavailable: list = []  # why "auto" could not load, for the result
        if isinstance(judge, str) and judge.startswith(("http://", "https://")):
            import logging

            from livejudge.distributed.remote import embedded_remote_judge

            # a URL with no judge service there is refused now; one that does not answer is a warning
            judge = embedded_remote_judge(judge, "livejudge.livekit.attach", logging.getLogger("livejudge").warning)
        elif isinstance(judge, str):
            judge_off = judge == "none"
            if judge_off:
                judge = None
            else:
                import logging

                from livejudge.judge.model.judge import judge_for_embedding

                judge = judge_for_embedding(judge, logging.getLogger("livejudge").warning, unavailable)
            from livejudge.commands.gates import check_gates_measurable
            from livejudge.errors import CLIError

            try:  # a gate that could never pass, before the call (a re-check: it failed only at the close)
                check_gates_measurable(self.gates, judge, judge_off=judge_off)
            except CLIError as exc:
                raise ValueError("livejudge.livekit.attach: " + str(exc).replace("--fail-if", "fail_if gate")
                                 .replace("--judge none", "judge='none'")) from None
        all_sinks = self._init_outputs(result_path=result_path, report_path=report_path, events_path=events_path,
                                       sinks=sinks, display=display, title=title)
        self.session = Session(self.config, judge=judge, sinks=all_sinks, info={
            "source": "livekit", "channels": {"user": "AgentSession.input.audio",
                                              "agent": "AgentSession.output.audio (as played)"}})
        if unavailable:  # the result records it, as a score's does (judge_for_embedding said it)
            self.session.set_judge_unavailable(unavailable[0])
        self.agent_session = agent_session
        self.t0_wall = time.time()
        self._q: collections.deque = collections.deque()
        self._wake = threading.Event()
        self.dropped_items = 0
        self.frames = {"user": 0, "agent": 0}
        self.sample_rates: dict[str, set] = {"user": set(), "agent": set()}
        self.segments_played = 0
        self.segments_interrupted = 0
        o = self.options
        self._user_stitch = Stitcher(o.stitch_tolerance_s, o.max_ahead_s, o.heal_window_s, o.heal_min_s)
        self._stall = StallLine(self.session, "livekit tap", "livekit",
                                {"user": ("TapOptions.stitch_tolerance_s", o.stitch_tolerance_s)})
        self._segs: collections.deque[_Segment] = collections.deque()
        self.agent_gaps = 0  # replies' breaks where the sink ran dry (DRY_TOL_S)
        self.progress_runs = 0  # playback_progressed runs the sink reported
        self.placement_error_s = 0.0  # the largest gap between where a run was placed and where the sink said
        self._closing = False
        self._handlers: list[tuple[str, Any]] = []
        self._close_task: asyncio.Future | None = None
        self.gate_results: list = []
        self._input: _InputTap | None = None
        self._output: _OutputTap | None = None
        self._wrap_io()
        self._listen(close_with_session)
        self._thread = threading.Thread(target=self._run, name="livejudge-livekit", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------ wiring
    def _wrap_io(self) -> None:
        s = self.agent_session
        if s.input.audio is None or s.output.audio is None:
            raise ValueError("livejudge.livekit.attach needs the session's audio input and output: call it after "
                             "session.start(...) (room or console I/O), or set session.input.audio and "
                             "session.output.audio first")
        if isinstance(s.input.audio, _InputTap) or isinstance(s.output.audio, _OutputTap):
            raise ValueError("livejudge is already attached to this AgentSession (one attach per session)")
        self._input = _InputTap(self, s.input.audio)
        self._output = _OutputTap(self, s.output.audio)
        s.input.audio = self._input
        s.output.audio = self._output

    def _listen(self, close_with_session: bool) -> None:
        s = self.agent_session
        for name in NOTE_EVENTS:
            fn = self._note_handler(name)
            # EventEmitter.on directly: AgentSession.on warns that metrics_collected is deprecated,
            # but it is still what LiveKit's users read (and what livekit#3824 is about)
            rtc.EventEmitter.on(s, name, fn)
            self._handlers.append((name, fn))
        if close_with_session:
            def on_close(ev: Any) -> None:
                self.mark_ended(ended_by_close(ev))
                if self._close_task is None:
                    self._close_task = asyncio.ensure_future(self.aclose())

            rtc.EventEmitter.on(s, "close", on_close)
            self._handlers.append(("close", on_close))

    def _note_handler(self, name: str):
        def handler(ev: Any) -> None:
            try:
                t_wall, data = _event_data(name, ev)
                self.put_note(name, data, t_wall)
            except Exception as exc:  # never let a note break the agent
                self.session._on_error(f"livekit note {name}: {type(exc).__name__}: {exc}")
        return handler

    # ------------------------------------------------------------ event loop side (cheap)
    def _put(self, item: tuple) -> None:
        if self._closing:
            return
        if len(self._q) >= self.options.max_queue:
            self.dropped_items += 1
            return
        self._q.append(item)
        if not self._wake.is_set():
            self._wake.set()

    def put_user(self, frame: rtc.AudioFrame, t_wall: float) -> None:
        """Queue a copy of one caller frame that arrived at ``t_wall``. O(frame), never blocks."""
        self._put((_USER, bytes(frame.data), frame.sample_rate, frame.num_channels, t_wall))

    def put_agent(self, frame: rtc.AudioFrame, new_segment: bool, t_wall: float | None = None) -> None:
        """Queue a copy of one agent frame on its way to the sink at ``t_wall`` (``time.time()``)."""
        self._put((_AGENT, bytes(frame.data), frame.sample_rate, frame.num_channels, new_segment,
                   time.time() if t_wall is None else t_wall))

    def put_note(self, name: str, data: dict, t_wall: float) -> None:
        self._put((_NOTE, "livekit." + name, data, t_wall))

    # ------------------------------------------------------------ worker thread
    def _now_s(self) -> float:
        return time.time() - self.t0_wall

    def _run(self) -> None:
        q = self._q
        while True:
            self._wake.wait(self.options.tick_s)
            self._wake.clear()
            if self._display_mode and self._display is None:
                self._start_display()
            if self._drain(q, _CLOSE, "livekit tap"):
                return
            try:
                now = self._now_s()
                self._feed_agent(now - self.options.hold_s)
                self.session.advance(now)
            except Exception as exc:
                self.session._on_error(f"livekit tap: {type(exc).__name__}: {exc}")

    def _handle(self, item: tuple) -> None:
        kind = item[0]
        if kind == _USER:
            _, data, rate, nch, t_wall = item
            x = pcm16_chunk_to_mono(data, nch)
            if not x.size:
                return
            d = x.size / rate
            # the stamp marks the frame's last sample; frames of a bunch continue the channel
            t, overlap_s = self._user_stitch.place(max(t_wall - self.t0_wall - d, 0.0), d)
            self.frames["user"] += 1
            if overlap_s:  # a re-anchor's already placed part: dropped here and counted (not
                # handed on for the session to drop with a line that blames max_lag_s)
                self._stall.add("user", overlap_s, t_wall - self.t0_wall)
                t += overlap_s
                x = x[int(round(overlap_s * rate)):]
                if not x.size:
                    return
            self.sample_rates["user"].add(int(rate))
            self.session.push_audio("user", x, int(rate), t)
        elif kind == _AGENT:
            _, data, rate, nch, new_segment, t_wall = item
            if new_segment or not self._segs:
                self._segs.append(_Segment())
            seg = self._segs[-1]
            x = pcm16_chunk_to_mono(data, nch)
            if seg.rate is None:
                seg.rate = int(rate)
            elif int(rate) != seg.rate:
                self.session._on_error(f"livekit tap: agent sample rate changed mid-reply ({seg.rate} → {rate} Hz); "
                                       "the frame was dropped")
                return
            if seg.runs and seg.paused_at_s is None:
                # playing: a frame that arrives after the moment it would play found the sink run dry
                # (a trial's TTS 1.5x slower than real time: each reply placed as one unbroken run
                # ended seconds early, 1.85 s of agent audio was dropped and both barge-ins missed)
                arrived = t_wall - self.t0_wall
                if arrived > seg.time_of(seg.n) + DRY_TOL_S:
                    seg.add_run(seg.n, arrived)
                    self.agent_gaps += 1
            seg.chunks.append(x)
            seg.n += x.size
            self.frames["agent"] += 1
            self.sample_rates["agent"].add(int(rate))
        elif kind == _STARTED:
            seg = next((s for s in self._segs if not s.runs), None)
            if seg is not None:
                seg.runs = [(0, item[1] - self.t0_wall)]
        elif kind == _PROGRESS:
            # a run the sink reports it played (LiveKit's room output: once it can no longer be
            # discarded): where its audio is not fed yet, it is where it plays; where it is, a check
            _, started_at, offset_s, duration_s = item
            seg = self._current()
            if seg is None or seg.rate is None:
                return
            i, t = int(round(offset_s * seg.rate)), started_at - self.t0_wall
            self.progress_runs += 1
            if i >= seg.fed:
                seg.add_run(i, t, until=i + int(round(duration_s * seg.rate)))
            elif i < seg.n:
                self.placement_error_s = max(self.placement_error_s, abs(seg.time_of(i) - t))
        elif kind == _FINISHED:
            _, position_s, interrupted, _t = item
            seg = self._segs[0] if self._segs else None
            if seg is None:
                return
            self._segs.popleft()
            if seg.start_s is None or seg.rate is None:
                return  # never played
            end = min(seg.n, int(round(max(position_s, 0.0) * seg.rate)))
            self._feed_segment(seg, end)
            self.segments_played += 1
            self.segments_interrupted += bool(interrupted)
        elif kind == _PAUSE:
            seg = self._current()
            if seg is not None and seg.paused_at_s is None:
                self._feed_agent(item[1] - self.t0_wall)
                seg.paused_at_s = item[1] - self.t0_wall
        elif kind == _RESUME:
            seg = self._current()
            if seg is not None and seg.paused_at_s is not None and seg.runs:
                # the rest of the reply plays from the resume
                seg.add_run(seg.played_by(seg.paused_at_s), item[1] - self.t0_wall)
                seg.paused_at_s = None
        elif kind == _NOTE:
            _, name, data, t_wall = item
            t = max(t_wall - self.t0_wall, 0.0)
            if "started_speaking_at" in data:
                data = {**data, "started_speaking_s": round(data["started_speaking_at"] - self.t0_wall, 4)}
            self.session.note(name, t, **data)

    def _current(self) -> _Segment | None:
        return next((s for s in self._segs if s.runs), None)

    def _feed_segment(self, seg: _Segment, end: int) -> None:
        """Hand the session ``seg``'s samples from ``fed`` to ``end``, each run where it plays."""
        if end <= seg.fed or seg.rate is None or not seg.runs:
            return
        audio = seg.audio()
        cuts = [k for k, _ in seg.runs if seg.fed < k < end] + [end]
        for stop in cuts:
            self.session.push_audio("agent", audio[seg.fed:stop], seg.rate, seg.time_of(seg.fed))
            seg.fed = stop

    def _feed_agent(self, upto_s: float) -> None:
        """Feed the playing segment's audio that has played by ``upto_s`` (session clock)."""
        seg = self._current()
        if seg is None or seg.rate is None or not seg.runs:
            return
        t = upto_s if seg.paused_at_s is None else min(upto_s, seg.paused_at_s)
        self._feed_segment(seg, seg.played_by(t))

    def _catch_up(self) -> None:
        """At close: feed what the playing segment has played so far, and advance the clock to
        now (``final``: the call lasts until its close, not ``max_lag_s`` less)."""
        now = self._now_s()
        if self._current() is not None:
            self._feed_agent(now)
        self.session.advance(now, final=True)

    def _finish(self) -> None:
        self.mark_ended("closed")  # closed by the app (aclose) before the session closed
        self._stall.finish()  # the stall line says the total
        self._close_session(self._catch_up)
        doc = None
        try:
            doc = self.result()
            if self.gates or self.junit_path is not None:
                from livejudge.commands.gates import cut_short, format_failures, gate_call, gate_dicts, write_junit

                self.gate_results = gate_call(self.gates, doc)
                doc["gates"] = gate_dicts(self.gate_results)
                msg = format_failures(self.gate_results, "livekit session")
                if msg:
                    print(msg, file=sys.stderr)
                if self.junit_path is not None:
                    write_junit(self.junit_path, self.gate_results, suite="livejudge livekit", cut=cut_short(doc))
        finally:
            self._finish_outputs(doc)

    # ------------------------------------------------------------ output
    @property
    def gates_failed(self) -> bool:
        """True when a ``fail_if`` gate failed (after close)."""
        return any(r.failed for r in self.gate_results)

    def info(self) -> dict:
        """The tap's own facts (``result["livekit"]``)."""
        return {
            "frames": dict(self.frames),
            "sample_rates_hz": {c: sorted(v) for c, v in self.sample_rates.items()},
            "user_stretches": self._user_stitch.stretches,
            "user_heals": self._user_stitch.heals,
            # caller audio of a bunch placed late by its stamp and overlapped when the channel
            # re-anchored (a stall longer than the stitch tolerance), seconds, not timed
            "reanchor_dropped_s": {"user": round(self._stall.dropped_s["user"], 3)},
            "stitch_tolerance_s": self.options.stitch_tolerance_s,
            # the agent's playback: breaks where the sink ran dry (placed from when the audio
            # arrived), the runs the sink reported, and the largest difference between a reported
            # run and where the tap had already placed it, seconds
            "agent_playback": {"dry_gaps": self.agent_gaps, "reported_runs": self.progress_runs,
                               "placement_error_max_s": round(self.placement_error_s, 3)},
            "segments_played": self.segments_played,
            "segments_interrupted": self.segments_interrupted,
            "dropped_items": self.dropped_items,
            "hold_s": self.options.hold_s,
            "clock": "time.time() - t0_wall, seconds (t0_wall = attach)",
            "t0_wall": self.t0_wall,
        }

    def result(self) -> dict:
        """The result document plus ``livekit`` and ``framework_comparison`` (LiveKit's metrics
        beside the audio-true latency per reply). Any time, any thread; final after close."""
        if self._final is not None:
            return self._final
        doc = dict(self.session.result())
        rates = sorted(self.sample_rates["user"])
        doc["sample_rate_in"] = rates[0] if len(rates) == 1 else None
        doc["livekit"] = self.info()
        doc["framework_comparison"] = livekit_comparison(doc)
        return doc

    def close_blocking(self, timeout_s: float | None = 60.0) -> dict:
        """Finish: drain the queue, judge the last window, write the outputs, stop the display,
        and unhook from the AgentSession's events. Idempotent. Blocks: call it off the loop."""
        if not self._closing:
            self._closing = True
            for name, fn in self._handlers:
                try:
                    rtc.EventEmitter.off(self.agent_session, name, fn)
                except Exception:
                    pass
            self._q.append((_CLOSE,))
            self._wake.set()
        return self._wait_closed(timeout_s)

    async def aclose(self) -> dict:
        """``close_blocking`` in a thread, so the event loop keeps running."""
        return await asyncio.to_thread(self.close_blocking)


def ended_by_close(ev: Any) -> str:
    """``source.ended`` for the AgentSession's ``close`` event (``CloseEvent``): "session closed
    (<reason>)" ("user_initiated", "job_shutdown", "participant_disconnected",
    "task_completed"), or "failed: <error type>" when it closed on an error (an ``llm_error``,
    ``stt_error``...)."""
    reason = getattr(ev, "reason", None)
    reason = str(getattr(reason, "value", reason) or "")
    err = getattr(ev, "error", None)
    if err is not None or reason == "error":
        kind = getattr(err, "type", None) or (type(err).__name__ if err is not None else "error")
        inner = getattr(err, "error", None)
        return f"failed: {kind}" + (f" ({type(inner).__name__}: {str(inner)[:160]})" if inner is not None else "")
    return f"session closed ({reason})" if reason else "session closed"


def _scalars(d: dict, keys: tuple[str, ...]) -> dict:
    return {k: d[k] for k in keys if isinstance(d.get(k), (int, float, str, bool)) and d.get(k) is not None}


def _event_data(name: str, ev: Any) -> tuple[float, dict]:
    """(time.time() of the event, JSON-ready data) for one AgentSession event."""
    t = float(getattr(ev, "created_at", None) or time.time())
    if name in ("user_state_changed", "agent_state_changed"):
        return t, {"old_state": str(ev.old_state), "new_state": str(ev.new_state)}
    if name == "metrics_collected":
        m = ev.metrics
        d = m.model_dump() if hasattr(m, "model_dump") else dict(vars(m))
        data = {"type": str(d.get("type", type(m).__name__)), **_scalars(d, _METRIC_FIELDS)}
        if d.get("type") == "eou_metrics" and isinstance(d.get("timestamp"), (int, float)):
            t = float(d["timestamp"])  # when the turn's EOU was reported
        return t, data
    if name == "conversation_item_added":
        item = ev.item
        data = {"role": str(getattr(item, "role", "")), "item_type": str(getattr(item, "type", "")),
                "interrupted": bool(getattr(item, "interrupted", False))}
        text = getattr(item, "text_content", None)
        if text:
            data["text"] = text[:200]
        metrics = getattr(item, "metrics", None) or {}
        data.update(_scalars(dict(metrics), _ITEM_METRICS + ("started_speaking_at", "stopped_speaking_at")))
        return t, data
    if name == "user_input_transcribed":
        return t, {"transcript": str(ev.transcript)[:200], "is_final": bool(ev.is_final)}
    return t, {}


class _InputTap(AudioInput):
    """Wraps the session's audio input: copies each frame the session reads, returns it."""

    def __init__(self, tap: LiveKitTap, source: AudioInput) -> None:
        super().__init__(label=f"livejudge({source.label})", source=source)
        self._tap = tap

    async def __anext__(self) -> rtc.AudioFrame:
        frame = await self.source.__anext__()  # type: ignore[union-attr]
        self._tap.put_user(frame, time.time())
        return frame


class _OutputTap(AudioOutput):
    """Wraps the session's audio output: copies each frame on its way to the sink, and learns
    from the sink's playback events what was played when."""

    def __init__(self, tap: LiveKitTap, sink: AudioOutput) -> None:
        super().__init__(label=f"livejudge({sink.label})", capabilities=AudioOutputCapabilities(pause=True),
                         next_in_chain=sink, sample_rate=sink.sample_rate)
        self._tap = tap
        self._capturing = False

    async def capture_frame(self, frame: rtc.AudioFrame) -> None:
        await super().capture_frame(frame)
        new = not self._capturing
        self._capturing = True
        self._tap.put_agent(frame, new)
        await self.next_in_chain.capture_frame(frame)  # type: ignore[union-attr]

    def flush(self) -> None:
        super().flush()
        self._capturing = False
        self.next_in_chain.flush()  # type: ignore[union-attr]

    def clear_buffer(self) -> None:
        self._capturing = False
        self.next_in_chain.clear_buffer()  # type: ignore[union-attr]

    def pause(self) -> None:
        self._tap._put((_PAUSE, time.time()))
        super().pause()

    def resume(self) -> None:
        self._tap._put((_RESUME, time.time()))
        super().resume()

    def on_playback_progressed(self, *, started_at: float, offset: float, duration: float) -> None:
        self._tap._put((_PROGRESS, float(started_at), float(offset), float(duration)))
        super().on_playback_progressed(started_at=started_at, offset=offset, duration=duration)

    def on_playback_started(self, *, created_at: float) -> None:
        self._tap._put((_STARTED, float(created_at)))
        self._tap.put_note("playback_started", {}, float(created_at))
        super().on_playback_started(created_at=created_at)

    def on_playback_finished(self, *, playback_position: float, interrupted: bool,
                             synchronized_transcript: str | None = None) -> None:
        now = time.time()
        self._tap._put((_FINISHED, float(playback_position), bool(interrupted), now))
        self._tap.put_note("playback_finished", {"playback_position_s": round(float(playback_position), 4),
                                                 "interrupted": bool(interrupted)}, now)
        super().on_playback_finished(playback_position=playback_position, interrupted=interrupted,
                                     synchronized_transcript=synchronized_transcript)


def attach(session: Any, **options: Any) -> LiveKitTap:
    """Judge a LiveKit ``AgentSession`` live: one line in an existing app.

    Call it after ``await session.start(...)`` (room or console I/O), or after setting
    ``session.input.audio``/``session.output.audio`` yourself::

        await session.start(agent=MyAgent(), room=ctx.room)
        judge = livejudge.livekit.attach(session, display=True, result_path="call.json")

    Options (all keyword): ``judge`` ("auto" default: the whisper head, or timing only with a
    warning when it cannot load; "none" for timing only; a Judge; or a judge service URL, which
    ``judge_url`` also takes, as the Pipecat observer names it), ``config`` (SessionConfig),
    ``display`` (True/"rich"/"plain": the meter
    in this terminal, e.g. in console mode), ``events_path`` (JSONL event log), ``result_path``,
    ``report_path`` (HTML, livejudge[report]), ``fail_if`` (gates such as
    ``["latency_p90_s>1.2"]``; ``handle.gates_failed`` after close), ``junit_path``, ``sinks``,
    ``options`` (TapOptions), ``close_with_session`` (default True: finish when the
    AgentSession closes; otherwise ``await handle.aclose()``).

    Returns:
        LiveKitTap: ``.session`` (livejudge Session), ``.result()``, ``await .aclose()``.
    Raises:
        ValueError: not an AgentSession, the session has no audio input/output yet, livejudge is
            already attached, ``judge`` other than "auto" beside ``judge_url``, a judge URL where
            no judge service answers as one,
            a bad gate or option, an output path that cannot be written (the message names the fix).
    """
    return LiveKitTap(session, **options)
