"""Embed livejudge in a Pipecat agent: ``LiveJudgeObserver`` (a Pipecat ``BaseObserver``).

Add it in one line; the agent's pipeline is not touched::

    observer = LiveJudgeObserver(display=True, result_path="call.json")
    worker = PipelineWorker(pipeline, observers=[observer])

What it taps (Pipecat 1.14 ``FramePushed``):

* **user audio** — ``InputAudioRawFrame`` on its *first* push (the input transport, or
  whoever injected it): each frame is counted once.
* **agent audio** — ``OutputAudioRawFrame`` (incl. ``TTSAudioRawFrame``,
  ``SpeechOutputAudioRawFrame``) pushed *downstream by the output transport*. The output
  transport only pushes a chunk on after writing it to the client, so this is what was really
  played, cut at interruptions; audio generated but dropped by an interruption never counts.
  Continuous full-duplex streams that include silence work too: livejudge's own VAD decides
  what is speech. A pipeline with **no output transport** (a processor pushes the agent's
  ``OutputAudioRawFrame`` to its own sink) is told apart within ``AGENT_DECIDE_S`` of its first
  agent frame (by the pipeline clock of any frame pushed): then the frames as the processor first
  pushed them are the agent's audio, laid end to end and held until the pipeline clock reaches
  them (``PACE_MARGIN_S``), so a reply generated as one burst does not run ahead of the caller;
  an ``InterruptionFrame`` drops what was held past it, as a transport drops what it had not
  played (``result["pipecat"]["agent_unplayed_s"]``). One warning and
  ``result["pipecat"]["agent_audio"]`` say so.
* **framework events** (for comparison only, never for timing) — ``VADUserStarted/Stopped
  SpeakingFrame`` (with ``start_secs``/``stop_secs``), ``UserStarted/StoppedSpeakingFrame``,
  ``BotStarted/StoppedSpeakingFrame``, ``InterruptionFrame`` and ``MetricsFrame`` values
  (TTFB, processing, TTFA, turn). They go into the result's ``framework_events`` and a
  ``framework_comparison`` block ("framework says 212 ms; audio says 258 ms").

Clock: the push's own ``FramePushed.timestamp`` (ns on the pipeline clock, 0 = pipeline
start) is the session clock, in seconds. Which sample the timestamp belongs to:

* user chunks: the input transport pushes a chunk when it has *arrived*, so the timestamp is
  the time of the chunk's **last** sample (first sample = T − duration).
* agent chunks: Pipecat's output transport (``base_output.py``, ``_audio_task_handler``)
  pushes a chunk downstream after ``write_audio_frame`` returns. The websocket transports
  send the chunk and then sleep until their playout clock (``_write_audio_sleep``): chunk k of
  a burst is sent at T0 + (k−1)·d and pushed at T0 + k·d, exactly when a client playing on
  arrival starts playing it. So the timestamp is the time of the chunk's **first** sample.
  A transport that pushes after playout has *finished* (a blocking sound-card write) can
  say so with ``TapConfig(agent_push_marks="end")``.

Consecutive chunks of one channel are laid end to end (``stitch_tolerance_s``; the user
channel's frames, off a network, arrive in bunches: ``user_stitch_tolerance_s``) so event-loop
jitter and network bunching neither insert silence nor drop samples; a push later than that
starts a new stretch at its own timestamp (the silence in between is filled). Pushes can be
late but never early, so a chunk whose timestamp lies before the channel's end shows that
the stretch was anchored on a late push (a stall, the first packet of a bunch): the channel
re-anchors to it and the overlap is dropped, so one stall never shifts the rest of the call
(``TapConfig.max_ahead_s``; tested with bunching, push jitter and a 150 ms stall).

Never slows the agent: ``on_push_frame`` does a few ``isinstance`` checks and appends a
reference to the frame's bytes and the timestamp to a bounded deque (a full deque drops the
item and counts it); conversion, resampling, VAD and turn analysis run in one worker thread,
and judging runs in the Session's own judge thread. See ``benchmarks/observer_overhead.py``.

Why the call ended (the result's ``source.ended``): the first ``EndFrame`` or ``CancelFrame``
pushed says it (``ended_by_frame``): "end of pipeline", "interrupted (Ctrl-C)" (Pipecat's
runner cancels with reason "interrupt signal"), "failed: <error>" (a fatal ``ErrorFrame``),
"cancelled (<reason>)"; "interrupted (SIGTERM)" where livejudge's own SIGTERM handler finished
the call, "closed" for an ``await observer.close()`` with neither frame seen.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal

import numpy as np

from loguru import logger
from pipecat.frames.frames import (
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    CancelFrame,
    EndFrame,
    InputAudioRawFrame,
    InterruptionFrame,
    MetricsFrame,
    OutputAudioRawFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.observers.base_observer import BaseObserver, FramePushed
from pipecat.processors.frame_processor import FrameDirection
from pipecat.transports.base_output import BaseOutputTransport

from livejudge.audio import pcm16_chunk_to_mono
from livejudge.outputs.embedded import EmbeddedOutputs, interrupted, sigterm_handled_by_app
from livejudge.events import Backchannel, BargeIn, JudgeResult, Transition, Turn
from livejudge.session import Session, SessionConfig
from livejudge.sources.stitch import REANCHOR_SAY_S, StallLine, Stitcher  # noqa: F401  (REANCHOR_SAY_S re-exported)

_Stitcher = Stitcher  # the name this module used before the stitcher was shared with the LiveKit tap

_NS = 1e-9
_DOWN = FrameDirection.DOWNSTREAM

HOLD_AHEAD_S = 0.01
"""An agent chunk placed more than this ahead of the pipeline clock (the latest push seen) is held
(``LiveJudgeCore._held``), seconds: a paced transport's chunk is placed at its own push."""

PACE_MARGIN_S = 0.1
"""Agent audio a processor pushed with no output transport (``LiveJudgeCore.pace_agent``) is handed
on this long after the pipeline clock passes it, seconds: an ``InterruptionFrame`` is queued behind
user frames stamped up to tens of ms after it, and audio already handed on cannot be taken back
(HEURISTIC; a scripted barge-in read its yield 80 ms long without it)."""

AGENT_DECIDE_S = 0.5
"""How long agent frames pushed by a processor wait (pipeline seconds) for an output transport
to show up before they are taken as the agent's audio (a pipeline without one)."""

_log = logging.getLogger("livejudge.pipecat")

# framework frames recorded as notes (kind = "pipecat.<ClassName>")
NOTE_FRAMES: tuple[type, ...] = (
    VADUserStartedSpeakingFrame, VADUserStoppedSpeakingFrame,
    UserStartedSpeakingFrame, UserStoppedSpeakingFrame,
    BotStartedSpeakingFrame, BotStoppedSpeakingFrame,
    InterruptionFrame, MetricsFrame,
)

# Pipecat-style event names the observer and the processor fire, and the events behind them
EVENTS: dict[str, type] = {
    "on_judge_result": JudgeResult,
    "on_turn": Turn,
    "on_transition": Transition,
    "on_barge_in": BargeIn,
    "on_backchannel": Backchannel,
}


@dataclass(frozen=True)
class TapConfig:
    """How pushed frames become session audio.

    Attributes:
        user_push_marks: which sample of a user chunk the push timestamp is: "end" (default:
            input transports push a chunk when it has arrived) or "start".
        agent_push_marks: which sample of an agent chunk the push timestamp is: "start"
            (default: the output transport pushes a chunk when its playout starts, see the
            module docstring) or "end" (transports that push after playout finished).
        stitch_tolerance_s: a chunk pushed at most this much later than the end of the
            previous chunk of its channel continues it seamlessly (absorbs event-loop and
            network jitter); a later push starts a new stretch at its timestamp. Seconds.
        user_stitch_tolerance_s: the same for the user channel, whose frames come off a network
            and arrive in bunches (HEURISTIC: a websocket under jitter delivers five or ten 20 ms
            frames at once; with 60 ms, each frame of such a bunch re-anchored the channel and
            overwrote the one before, and a trial lost 15 of 19 s of caller audio with every user
            timing wrong). The larger of this and ``stitch_tolerance_s`` applies. Seconds.
        agent_max_ahead_s: ``max_ahead_s`` for the agent channel: an output transport with a
            client-side buffer returns from each write while the buffer has room, so a reply's
            chunks are pushed up to the buffer's length before they play (LiveKit's
            ``AudioSource``; Pipecat's ``LiveKitTransport`` keeps 1000 ms by default). Such
            chunks are laid end to end from the reply's first push and held until the pipeline
            clock reaches them; an ``InterruptionFrame`` drops what was held past it, as the
            transport clears its buffer (a trial's simulated 1 s buffer read a reply 1 s short
            and dropped 2.9 s of agent audio). Seconds (HEURISTIC: the longest buffer expected).
        heal_window_s, heal_min_s: a gap of no frames shorter than the tolerance (a transport
            that sends nothing in a short pause) is laid end to end, so the rest of the stretch
            sits that much early; when every push over ``heal_window_s`` of a stretch's audio
            came at least ``heal_min_s`` later than where its chunk was placed, the stretch
            resumes that much later (HEURISTIC: pushes are late, never early, so the smallest
            lateness over a second of audio is the placement's own error). Seconds.
        max_ahead_s: a chunk whose timestamp puts it more than this *before* the channel's
            end re-anchors the channel to its timestamp; the overlap is dropped. Pushes are
            never early, only late, so an earlier one means the stretch was anchored on a late
            push (a stall, a bunch of network packets): re-anchoring heals that at once
            instead of keeping the whole channel late. Seconds (5 ms: below that, rounding).
        max_queue: bounded queue between the event loop and the worker thread, items; when
            full, new items are dropped and counted (``pipecat.dropped_items``).
    """

    user_push_marks: Literal["start", "end"] = "end"
    agent_push_marks: Literal["start", "end"] = "start"
    stitch_tolerance_s: float = 0.06
    user_stitch_tolerance_s: float = 0.25
    agent_max_ahead_s: float = 1.5
    heal_window_s: float = 1.0
    heal_min_s: float = 0.02
    max_ahead_s: float = 0.005
    max_queue: int = 4000

    def validate(self) -> "TapConfig":
        for name in ("user_push_marks", "agent_push_marks"):
            if getattr(self, name) not in ("start", "end"):
                raise ValueError(f"TapConfig.{name} must be 'start' or 'end', got {getattr(self, name)!r}")
        if min(self.stitch_tolerance_s, self.user_stitch_tolerance_s, self.max_ahead_s, self.heal_min_s,
               self.agent_max_ahead_s) < 0:
            raise ValueError("TapConfig.stitch_tolerance_s, user_stitch_tolerance_s, max_ahead_s, agent_max_ahead_s "
                             "and heal_min_s must be ≥ 0 seconds")
        if not self.heal_window_s > 0:
            raise ValueError(f"TapConfig.heal_window_s must be > 0 seconds, got {self.heal_window_s!r}")
        if self.max_queue < 1:
            raise ValueError(f"TapConfig.max_queue must be ≥ 1, got {self.max_queue}")
        return self


# queue item kinds
_AUDIO, _NOTE, _END, _CLOSE = 0, 1, 2, 3

RUNNER_SIGNAL_REASON = "interrupt signal"
"""The reason Pipecat's ``WorkerRunner`` cancels with on SIGINT (and on SIGTERM with
``handle_sigterm=True``): ``_sig_cancel``, pipecat 1.14."""


def _runner_signal() -> str:
    """``source.ended`` for a runner cancelled by a signal: Ctrl-C, unless SIGTERM could have
    reached the runner too (``handle_sigterm=True`` or another handler of the app's own)."""
    return "interrupted (Ctrl-C or SIGTERM)" if sigterm_handled_by_app() else interrupted(signal.SIGINT)


def ended_by_frame(frame: Any) -> str:
    """``source.ended`` for the ``EndFrame``/``CancelFrame`` that ended a pipeline: "end of
    pipeline"; for a cancel, "interrupted (Ctrl-C)" (the runner's signal handler), "failed:
    <error>" (a fatal error), or "cancelled (<reason>)" ("cancelled" with no reason)."""
    if not isinstance(frame, CancelFrame):
        return "end of pipeline"
    reason = str(getattr(frame, "reason", None) or "")
    if reason == RUNNER_SIGNAL_REASON:
        return _runner_signal()
    if reason.startswith("fatal error: "):
        return "failed: " + reason[len("fatal error: "):][:200]
    return f"cancelled ({reason[:200]})" if reason else "cancelled"


pcm16_chunk_to_float32 = pcm16_chunk_to_mono  # the name this module exported before


def _metrics_data(frame: Any) -> list[dict]:
    out = []
    for m in getattr(frame, "data", []) or []:
        d: dict[str, Any] = {"metric": type(m).__name__}
        for k in ("processor", "model", "value", "ttfb", "ttfa", "ttfat", "leading_silence",
                  "thinking_time", "is_complete", "probability", "e2e_processing_time_ms"):
            v = getattr(m, k, None)
            if isinstance(v, (int, float, str, bool)):
                d[k] = v
        out.append(d)
    return out


def _note_data(frame: Any) -> dict:
    if isinstance(frame, VADUserStartedSpeakingFrame):
        return {"start_secs": float(frame.start_secs)}
    if isinstance(frame, VADUserStoppedSpeakingFrame):
        return {"stop_secs": float(frame.stop_secs)}
    if isinstance(frame, MetricsFrame):
        return {"metrics": _metrics_data(frame)}
    return {}


def _transcriber(asr: Any, judge: Any, report: bool = False):
    """The Transcriber for ``asr`` ("auto", "on", "off" or a Transcriber); None when off.
    "auto" transcribes only when a report is written (P(human) reads no text; see
    ``livejudge.commands.runner.transcriber_from_config``).

    Raises:
        ValueError: ``asr="on"`` and speech recognition cannot start (message names the fix).
    """
    if asr is None or asr == "off" or judge is None:
        return None
    if not isinstance(asr, str):
        return asr  # a Transcriber given by the caller
    if asr not in ("auto", "on"):
        raise ValueError(f"asr must be 'auto', 'on', 'off' or a Transcriber, got {asr!r}")
    from livejudge.commands.runner import transcriber_from_config
    from livejudge.config import JudgeConfig
    from livejudge.errors import CLIError

    try:
        # any judge but "none": the caller's judge is on (``judge`` checked above)
        return transcriber_from_config(JudgeConfig(kind="auto", asr=asr), report="report" if report else None,
                                       judge=judge)
    except CLIError as exc:
        raise ValueError(str(exc)) from None


class LiveJudgeCore(EmbeddedOutputs):
    """Pipecat-independent part of the observer and the processor: the bounded queue, the
    worker thread that feeds a Session, sinks, display, the result file and event fan-out.

    Args:
        judge: "auto" (default: the shipped Whisper-encoder head on the CPU; if its encoder cannot
            load, a warning and timing only), another ``load_judge`` kind, a Judge, or None /
            "none" (timing only).
        config: SessionConfig.
        display: True / "auto" (rich meter on a TTY, plain lines otherwise), "rich", "plain",
            or False.
        events_path: JSONL event log (one line per settled event), or None.
        result_path: where the result document is written on close, or None.
        report_path: where the HTML report (livejudge[report]) is written on close, or None.
        tap: TapConfig.
        sinks: extra Session sinks.
        title: shown on the meter.
        asr: transcripts of the agent's turns for the judge's text dimensions: "auto" (default:
            on when the judge is on, a report is written and livejudge[asr] is installed; P(human)
            reads no text), "on"
            (ValueError when it cannot start), "off", or a ``Transcriber``.
        judge_url: judge on a judge service (``livejudge serve-judge``; ``RemoteJudge``) instead of in
            this process, e.g. "http://127.0.0.1:8000/judge" (a ``judge`` string that is a URL does
            the same; with any ``judge`` but "auto" it is a ValueError: the service's judge is
            used). A slow (2 s) or absent service never holds up audio: unjudged windows are
            counted in the result's ``judge_info.judge_unavailable_windows``.
    Raises:
        ValueError: bad config, an output path that cannot be written (``OutputPathError``),
            ``judge_url`` beside a judge other than "auto" or where no judge service answers as one
            (a service that does not answer is a warning), ``asr="on"`` with ``judge="none"`` or
            without livejudge[asr]; JudgeError/HeadError from ``load_judge``; ReportError (with the
            install hint) when ``report_path`` is given and matplotlib is missing.
    """

    def __init__(self, judge: Any = "auto", config: SessionConfig | None = None,
                 display: bool | str = False, events_path: str | Path | None = None,
                 result_path: str | Path | None = None, tap: TapConfig | None = None,
                 sinks: list | tuple = (), title: str = "pipecat",
                 report_path: str | Path | None = None, asr: Any = "auto", judge_url: str | None = None) -> None:
        from livejudge.outputs.embedded import check_embed_options

        check_embed_options(where="livejudge.pipecat", display=display, config=config, config_type=SessionConfig,
                            options=tap, options_type=TapConfig, options_name="tap")
        self.tap = (tap or TapConfig()).validate()
        if isinstance(asr, str) and asr == "on" and (judge is None or (isinstance(judge, str) and judge == "none")):
            # it was ignored without a word, as the CLI's pair had been (runner.check_asr; a trial)
            raise ValueError('asr="on" transcribes the agent\'s turns for the judge (its text dimensions and the '
                             'report\'s transcripts), and judge="none" turns the judge off: drop one')
        unavailable: list = []  # why "auto" could not load, for the result (runner.judge_unavailable)
        if isinstance(judge, str) and judge.startswith(("http://", "https://")):
            judge_url, judge = judge, "auto"
        if judge_url and not (isinstance(judge, str) and judge == "auto"):
            # the service's judge would be used (or, with "none", never called) without a word; as the CLI
            raise ValueError(f"judge={judge!r} with judge_url={judge_url!r}: the windows are judged on the service "
                             "(its judge is set by `livejudge serve-judge --judge/--head`); pass one of them")
        if judge_url:
            from livejudge.distributed.remote import embedded_remote_judge

            # the judge service's windows, unjudged ones counted; a URL with no service there is refused
            judge = embedded_remote_judge(judge_url, "livejudge.pipecat", logger.warning)
        if isinstance(judge, str):
            if judge == "none":
                judge = None
            else:
                from livejudge.judge.model.judge import judge_for_embedding

                judge = judge_for_embedding(judge, logger.warning, unavailable)
        all_sinks = self._init_outputs(result_path=result_path, report_path=report_path, events_path=events_path,
                                       sinks=sinks, display=display, title=title)
        transcriber = _transcriber(asr, judge, report=self.report_path is not None)
        self.session = Session(config, judge=judge, sinks=all_sinks, transcriber=transcriber,
                               info={"source": "pipecat", "asr": transcriber is not None,
                                     "channels": {"user": "InputAudioRawFrame",
                                                  "agent": "OutputAudioRawFrame"}})
        if unavailable:  # the result records it, as a score's does (judge_for_embedding said it)
            self.session.set_judge_unavailable(unavailable[0])
        self.session.add_sink(self)
        self._q: collections.deque = collections.deque()
        self._wake = threading.Event()
        tol = {"user": max(self.tap.stitch_tolerance_s, self.tap.user_stitch_tolerance_s),
               "agent": self.tap.stitch_tolerance_s}
        ahead = {"user": self.tap.max_ahead_s, "agent": max(self.tap.max_ahead_s, self.tap.agent_max_ahead_s)}
        self._stitch = {c: Stitcher(tol[c], ahead[c], self.tap.heal_window_s, self.tap.heal_min_s)
                        for c in ("user", "agent")}
        self.dropped_items = 0
        self._stall = StallLine(self.session, "pipecat tap", "pipecat",
                                {"user": ("TapConfig.user_stitch_tolerance_s", tol["user"]),
                                 "agent": ("TapConfig.stitch_tolerance_s", tol["agent"])})
        self.reanchor_dropped_s = self._stall.dropped_s  # per channel, seconds
        self.pace_agent = False
        """True once agent audio is taken as a processor pushed it (no output transport): such chunks
        are held until the pipeline clock (``_clock_s``, the latest push seen) reaches them."""
        self._held: collections.deque = collections.deque()
        self._clock_s = 0.0
        self.in_pipeline = False
        """Set by the observer (its ``setup``, or its first frame when added to a running worker) and
        by the processor (its first frame): False at the close means it never joined a pipeline."""
        self.unplayed_s = 0.0
        """Seconds of held agent audio an interruption dropped (no output transport, or a client
        buffer the transport clears: ``agent_max_ahead_s``)."""
        self.frames = {"user": 0, "agent": 0}
        self.sample_rates: dict[str, set] = {"user": set(), "agent": set()}
        self._listeners: list[Callable[[str, object], None]] = []
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="livejudge-pipecat", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------ event loop side (cheap)
    def put_audio(self, channel: str, frame: Any, t_ns: int) -> None:
        """Queue one audio frame (a reference to its bytes) stamped ``t_ns``. O(1), never blocks."""
        if self._closing:
            return
        if len(self._q) >= self.tap.max_queue:
            self.dropped_items += 1
            return
        self._q.append((_AUDIO, channel, frame.audio, frame.sample_rate, frame.num_channels, t_ns))
        if not self._wake.is_set():
            self._wake.set()

    def put_note(self, frame: Any, t_ns: int) -> None:
        if self._closing:
            return
        if len(self._q) >= self.tap.max_queue:
            self.dropped_items += 1
            return
        self._q.append((_NOTE, "pipecat." + type(frame).__name__, _note_data(frame), t_ns))
        if not self._wake.is_set():
            self._wake.set()

    def put_end(self, t_ns: int) -> None:
        """Queue the time the pipeline ended (its first ``EndFrame``/``CancelFrame``): the call
        lasts until then, however long before it the last audio frame came."""
        if self._closing:
            return
        self._q.append((_END, t_ns))
        if not self._wake.is_set():
            self._wake.set()

    def add_listener(self, fn: Callable[[str, object], None]) -> None:
        """``fn(event_name, event)`` for each EVENTS event, called from livejudge's threads."""
        self._listeners.append(fn)

    # ------------------------------------------------------------ Session sink (worker/judge threads)
    def on_event(self, event: object) -> None:
        if not self._listeners:
            return
        for name, cls in EVENTS.items():
            if type(event) is cls:
                for fn in self._listeners:
                    fn(name, event)
                return

    def on_close(self, result: dict) -> None:
        pass

    # ------------------------------------------------------------ worker thread
    def _run(self) -> None:
        q = self._q
        while True:
            self._wake.wait(0.05)
            self._wake.clear()
            if self._drain(q, _CLOSE, "pipecat tap"):
                return

    def _handle(self, item: tuple) -> None:
        kind = item[0]
        if self._display_mode and self._display is None:
            self._start_display()
        if kind == _AUDIO:
            _, channel, audio, rate, nch, t_ns = item
            x = pcm16_chunk_to_float32(audio, nch)
            if x.size == 0:
                return
            d = x.size / rate
            t = t_ns * _NS
            marks = self.tap.user_push_marks if channel == "user" else self.tap.agent_push_marks
            if marks == "end":
                t -= d
            t, overlap_s = self._stitch[channel].place(max(t, 0.0), d)
            if overlap_s:  # the already placed part of a re-anchored chunk: dropped here, counted, not
                # handed on for the session to drop with a warning that blames its wait (max_lag_s); a
                # stall longer than the stitch tolerance (its backlog arrives in one bunch whose frames
                # each re-anchor) is said once (a trial: 1 s of caller speech went with only a count)
                self._stall.add(channel, overlap_s, t_ns * _NS)
                t += overlap_s
                x = x[int(round(overlap_s * rate)):]  # mono (downmixed above)
                if x.size == 0:
                    self.frames[channel] += 1
                    return
            self.frames[channel] += 1
            self.sample_rates[channel].add(int(rate))
            self._clock_s = max(self._clock_s, t_ns * _NS)  # this push is on the pipeline clock too
            # held agent audio due by now goes first: pushed after this chunk, it found the session had
            # filled its time with silence when the caller sends no frames in a pause (a trial)
            self._release_held(self._clock_s)
            if channel == "agent" and (self.pace_agent or self._held or t > self._clock_s + HOLD_AHEAD_S):
                # ahead of the pipeline clock (generated with no output transport, or queued in a
                # transport's client buffer): held until the clock gets there, so the agent channel
                # never runs seconds ahead of the user's (a trial's burst of a 3.8 s reply led by that
                # much; the session filled the user's side with silence and the first reply was
                # lost), and an interruption can still drop what was never played
                self._held.append((x, int(rate), t))
            else:
                self.session.push_audio(channel, x, int(rate), t)
        elif kind == _END:
            self._clock_s = max(self._clock_s, item[1] * _NS)
        elif kind == _NOTE:
            _, name, data, t_ns = item
            self._clock_s = max(self._clock_s, t_ns * _NS)
            self._release_held(self._clock_s)
            if name == "pipecat.InterruptionFrame" and self._held:
                self._cut_held_at(t_ns * _NS)
            self.session.note(name, t_ns * _NS, **data)
            self.session.advance(t_ns * _NS)

    def _release_held(self, upto_s: float, margin_s: float = PACE_MARGIN_S) -> None:
        """Hand the held agent chunks that start by ``upto_s`` − ``margin_s`` (the pipeline clock,
        s) to the session."""
        lim = upto_s - margin_s
        while self._held and self._held[0][2] <= lim:
            x, rate, t = self._held.popleft()
            self.session.push_audio("agent", x, rate, t)

    def _cut_held_at(self, t_s: float) -> None:
        """An interruption at ``t_s`` (pipeline clock, s): an output transport would have dropped
        what it had not yet played then, so the held chunks that ended by ``t_s`` go to the session,
        the one playing then goes up to ``t_s``, and the rest are dropped and counted in
        ``unplayed_s``; the agent's next reply starts where its push says."""
        while self._held:
            x, rate, t = self._held[0]
            if t + len(x) / rate > t_s:
                break
            self._held.popleft()
            self.session.push_audio("agent", x, rate, t)
        if self._held and self._held[0][2] < t_s:  # the chunk playing then: its head was played
            x, rate, t = self._held.popleft()
            k = int(round((t_s - t) * rate))
            self.session.push_audio("agent", x[:k], rate, t)
            self.unplayed_s += (len(x) - k) / rate
        self.unplayed_s += sum(len(h[0]) / h[1] for h in self._held)
        self._held.clear()
        st = self._stitch["agent"]
        if st.end_s is not None:
            st.end_s = min(st.end_s, t_s)

    def _finish(self) -> None:
        self.mark_ended("closed")  # no EndFrame/CancelFrame seen: closed by the app
        if not any(self.frames.values()):  # said, not a silent 0 s result (a trial: an observer never added)
            self.session._on_error(_no_frames_message(self._title, self.in_pipeline))
        self._release_held(float("inf"))
        try:  # nothing came for either side between its last frame and the pipeline's end: silence
            # (a caller who sends no frames at the end read as a call that ended at the last frame)
            self.session.advance(self._clock_s, final=True)
        except Exception as exc:
            self.session._on_error(f"pipecat tap: filling the call to its end failed: {exc}")
        self._stall.finish()  # the stall line says the total, not its first 0.3 s
        self._close_session()
        doc = None
        try:
            doc = self.result()
        finally:
            self._finish_outputs(doc)

    # ------------------------------------------------------------ output
    def info(self) -> dict:
        """The tap's own facts for the result document (``result["pipecat"]``)."""
        return {
            "frames": dict(self.frames),
            "sample_rates_hz": {c: sorted(v) for c, v in self.sample_rates.items()},
            "stretches": {c: s.stretches for c, s in self._stitch.items()},
            "heals": {c: s.heals for c, s in self._stitch.items()},
            # audio of a bunch's first frames, placed late by their push and overlapped when the channel
            # re-anchored (at a call's start, or after a pause with no frames): seconds, not timed
            "reanchor_dropped_s": {c: round(v, 3) for c, v in self.reanchor_dropped_s.items()},
            **({"agent_unplayed_s": round(self.unplayed_s, 3)} if self.pace_agent or self.unplayed_s else {}),
            "dropped_items": self.dropped_items,
            "agent_audio": getattr(self, "agent_audio", "output transport"),
            "user_push_marks": self.tap.user_push_marks,
            "agent_push_marks": self.tap.agent_push_marks,
            "stitch_tolerance_s": {c: s.tol for c, s in self._stitch.items()},
            "clock": "pipeline clock (FramePushed.timestamp), seconds since pipeline start",
        }

    def result(self) -> dict:
        """The result document (``livejudge.outputs.report``) plus ``pipecat`` and
        ``framework_comparison`` blocks. Safe to call at any time from any thread."""
        if self._final is not None:
            return self._final
        doc = dict(self.session.result())
        rates = sorted(self.sample_rates["user"])
        doc["sample_rate_in"] = rates[0] if len(rates) == 1 else None  # per channel: doc["pipecat"]
        doc["pipecat"] = self.info()
        doc["framework_comparison"] = framework_comparison(doc)
        return doc

    def close_blocking(self, timeout_s: float | None = 60.0) -> dict:
        """Finish: drain the queue, close the session (judging the last window), write
        ``result_path``, stop the display. Idempotent. Blocks: call it off the event loop."""
        if not self._closing:
            self._closing = True
            self._q.append((_CLOSE,))
            self._wake.set()
        return self._wait_closed(timeout_s)

    async def close(self) -> dict:
        """``close_blocking`` in a thread, so the event loop keeps running."""
        return await asyncio.to_thread(self.close_blocking)

    async def close_once(self) -> tuple[dict, bool]:
        """``close``, plus whether this call is the one that started closing (so a stage
        fires its ``on_closed`` handler exactly once)."""
        first = not self.closed and not self._closing
        return await self.close(), first


def _no_frames_message(title: str, in_pipeline: bool) -> str:
    """The error line of a tap that saw no audio frame in the whole call: one never added to a
    pipeline (a trial's observer, built and forgotten, wrote a 0 s result without a word), or one
    whose pipeline carried none."""
    if not in_pipeline:
        fix = ("pass it to the task: PipelineWorker(pipeline, observers=[observer]) (or PipelineTask)"
               if "observer" in title else
               "place it in the pipeline after transport.output()")
        return f"{title}: it was never part of a running pipeline, so nothing was measured; {fix}"
    return (f"{title}: the pipeline carried no audio frames (InputAudioRawFrame, OutputAudioRawFrame), so "
            "nothing was measured; do its transports have audio_in_enabled / audio_out_enabled set?")


# ---------------------------------------------------------------- framework vs audio
def _nearest(items: list, key: Callable[[Any], float], t: float, max_s: float):
    best, best_d = None, max_s
    for it in items:
        d = abs(key(it) - t)
        if d <= best_d:
            best, best_d = it, d
    return best


def _mean(xs: list[float]) -> float | None:
    return round(sum(xs) / len(xs), 4) if xs else None


def framework_comparison(result: dict, match_s: float = 1.0) -> dict:
    """Compare what Pipecat's own events say with livejudge's acoustic timing.

    Pure function of a result document (``framework_events`` + acoustic ``transitions``,
    ``segments``, ``barge_ins``). Definitions (all seconds on the session clock):

    * framework response latency: ``BotStartedSpeakingFrame`` time − (last
      ``VADUserStoppedSpeakingFrame`` time − its ``stop_secs``), with no VAD start in
      between: the same arithmetic as Pipecat's ``UserBotLatencyObserver``.
      Paired with the acoustic user→agent transition whose agent onset is nearest to the
      bot-started time (within ``match_s``). ``difference_s`` = framework − audio.
    * VAD onsets: (``VADUserStartedSpeakingFrame`` time − ``start_secs``) − the nearest
      acoustic user speech onset (only when within ``match_s``/2: a framework VAD that splits
      one acoustic utterance in two gets no row for the second half), and the decision delay
      (frame time − acoustic onset).
    * barge-ins (user): the first ``InterruptionFrame`` and ``BotStoppedSpeakingFrame`` after
      the acoustic barge-in onset, as delays from it, next to the acoustic yield time.
    * MetricsFrame values: mean TTFB/processing/TTFA per metric and processor.
    Returns:
        dict with ``response_latency`` (rows + means + a one-line ``text``), ``vad_onsets``,
        ``barge_ins`` and ``metrics``.
    """
    notes = result.get("framework_events", [])
    trans = [t for t in result.get("transitions", []) if t["from"] == "user" and t["to"] == "agent"]
    rows = []
    last_stop = None
    for n in notes:
        k = n["kind"]
        if k == "pipecat.VADUserStartedSpeakingFrame":
            last_stop = None
        elif k == "pipecat.VADUserStoppedSpeakingFrame":
            last_stop = n
        elif k == "pipecat.BotStartedSpeakingFrame" and last_stop is not None:
            user_stop = last_stop["t_s"] - float(last_stop.get("stop_secs", 0.0))
            fw = n["t_s"] - user_stop
            tr = _nearest(trans, lambda t: t["to_onset_s"], n["t_s"], match_s)
            row = {"framework_user_stop_s": round(user_stop, 4), "framework_bot_start_s": n["t_s"],
                   "framework_latency_s": round(fw, 4), "audio_latency_s": None, "difference_s": None}
            if tr is not None:
                row.update(audio_user_offset_s=tr["from_offset_s"], audio_agent_onset_s=tr["to_onset_s"],
                           audio_latency_s=tr["gap_s"], difference_s=round(fw - tr["gap_s"], 4))
            rows.append(row)
            last_stop = None
    paired = [r for r in rows if r["difference_s"] is not None]
    fw_mean = _mean([r["framework_latency_s"] for r in paired])
    au_mean = _mean([r["audio_latency_s"] for r in paired])
    text = (f"framework says {fw_mean * 1000:.0f} ms; audio says {au_mean * 1000:.0f} ms "
            f"(mean of {len(paired)} responses)") if paired else "no framework latency to compare"

    user_onsets = [s["onset_s"] for s in result.get("segments", []) if s["channel"] == "user"]
    vad = []
    for n in notes:
        if n["kind"] == "pipecat.VADUserStartedSpeakingFrame" and user_onsets:
            claimed = n["t_s"] - float(n.get("start_secs", 0.0))
            on = min(user_onsets, key=lambda o: abs(o - claimed))
            if abs(on - claimed) <= match_s / 2:
                vad.append({"audio_onset_s": on, "framework_onset_s": round(claimed, 4),
                            "onset_error_s": round(claimed - on, 4), "decision_delay_s": round(n["t_s"] - on, 4)})

    barges = []
    for b in result.get("barge_ins", []):
        if b["by"] != "user":
            continue
        row = {"audio_onset_s": b["onset_s"], "audio_yield_s": b["yield_s"]}
        for kind, key in (("pipecat.InterruptionFrame", "interruption_after_s"),
                          ("pipecat.BotStoppedSpeakingFrame", "bot_stopped_after_s")):
            nxt = next((n for n in notes if n["kind"] == kind and b["onset_s"] <= n["t_s"] <= b["onset_s"] + 5.0), None)
            row[key] = round(nxt["t_s"] - b["onset_s"], 4) if nxt else None
        barges.append(row)

    metrics: dict[str, list[float]] = {}
    for n in notes:
        for m in n.get("metrics", []) if n["kind"] == "pipecat.MetricsFrame" else []:
            for field in ("value", "ttfa", "ttfb"):
                if isinstance(m.get(field), (int, float)) and not isinstance(m.get(field), bool):
                    metrics.setdefault(f"{m['metric']}.{field} [{m.get('processor', '')}]", []).append(float(m[field]))
                    break
    return {
        "response_latency": {"rows": rows, "framework_mean_s": fw_mean, "audio_mean_s": au_mean,
                             "mean_difference_s": _mean([r["difference_s"] for r in paired]), "text": text},
        "vad_onsets": {"rows": vad, "mean_onset_error_s": _mean([v["onset_error_s"] for v in vad]),
                       "mean_decision_delay_s": _mean([v["decision_delay_s"] for v in vad])},
        "barge_ins": barges,
        "metrics": {k: {"count": len(v), "mean_s": _mean(v)} for k, v in metrics.items()},
        "note": "framework events are Pipecat's own decisions, stamped when pushed; audio times are "
                "livejudge's VAD bounds of what was pushed (user) and played (agent)",
    }


# ---------------------------------------------------------------- the observer
class _LoopBridge:
    """Runs a BaseObject's Pipecat event handlers on its event loop for events fired
    from livejudge's threads."""

    def __init__(self, owner: Any) -> None:
        self.owner = owner
        self.loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set = set()

    def bind(self) -> None:
        if self.loop is None:
            try:
                self.loop = asyncio.get_running_loop()
            except RuntimeError:
                pass

    def __call__(self, name: str, event: object) -> None:
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        handlers = self.owner._event_handlers.get(name)
        if handlers is None or not handlers.handlers:
            return
        try:
            loop.call_soon_threadsafe(self._spawn, name, event)
        except RuntimeError:  # loop closed meanwhile
            pass

    def _spawn(self, name: str, event: object) -> None:
        t = asyncio.ensure_future(self.owner._call_event_handler(name, event))
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)


class LiveJudgeObserver(BaseObserver):
    """A Pipecat observer that judges the conversation live (see module docstring).

    Args:
        judge: "auto" (default: the shipped Whisper-encoder head on the CPU), a kind, a ``Judge``, or None for
            timing only.
        config: SessionConfig (window, interval, VAD, turn thresholds).
        display: True for the live meter in this terminal (rich on a TTY, plain lines
            otherwise), or "rich" / "plain"; False for none.
        events_path: write a JSONL event log here.
        result_path: write the result document here when the pipeline ends (an
            ``EndFrame`` pushed by the output transport, or cleanup after a ``CancelFrame``),
            or on ``await observer.close()``.
        report_path: write the HTML report here at the same moment (needs livejudge[report]).
        tap: TapConfig (timestamp meaning, stitching, queue bound).
        sinks: extra Session sinks.
        asr: "auto" (default), "on", "off" or a Transcriber: transcripts of the agent's turns
            for the text dimensions (see ``LiveJudgeCore``).
        judge_url: judge on a judge service (``livejudge serve-judge``) instead of in this
            process (see ``LiveJudgeCore``).

    Event handlers (Pipecat style, run on the event loop)::

        @observer.event_handler("on_judge_result")
        async def on_judge_result(observer, result: JudgeResult): ...

    Events: ``on_judge_result`` (JudgeResult), ``on_turn`` (Turn), ``on_transition``
    (Transition: ``gap_s`` of user→agent is the response latency), ``on_barge_in``
    (BargeIn), ``on_backchannel`` (Backchannel), ``on_closed`` (the result dict).
    Raises:
        ValueError: bad config.
    """

    def __init__(self, judge: Any = "auto", config: SessionConfig | None = None,
                 display: bool | str = False, events_path: str | Path | None = None,
                 result_path: str | Path | None = None, *, tap: TapConfig | None = None,
                 sinks: list | tuple = (), report_path: str | Path | None = None, asr: Any = "auto",
                 judge_url: str | None = None, **kwargs: Any) -> None:
        super().__init__(observe_every_push=True, **kwargs)
        self.core = LiveJudgeCore(judge, config, display, events_path, result_path, tap, sinks,
                                  title="pipecat observer", report_path=report_path, asr=asr, judge_url=judge_url)
        self._bridge = _LoopBridge(self)
        self.core.add_listener(self._bridge)
        for name in (*EVENTS, "on_closed"):
            self._register_event_handler(name)
        self._close_task: asyncio.Future | None = None
        self._agent_from: str | None = None  # "transport", "pushed", or None = not known yet
        self._pending_agent: list[tuple[Any, int]] = []
        self._pending_source: Any = None
        self.core.agent_audio = "output transport"

    @property
    def session(self) -> Session:
        return self.core.session

    def _saw_transport(self) -> None:
        self._agent_from = "transport"
        self._pending_agent.clear()  # the transport will push those frames again, when played

    def _agent_pushed(self, frame: Any, source: Any, t_ns: int) -> None:
        """An agent frame first pushed by a processor while no output transport has been seen."""
        self._pending_agent.append((frame, t_ns))
        self._pending_source = source
        if t_ns - self._pending_agent[0][1] >= AGENT_DECIDE_S / _NS or len(self._pending_agent) > 500:
            self._take_pushed(type(source).__name__)

    def _take_pushed(self, who: str) -> None:
        self._agent_from = "pushed"
        why = (f"agent audio as pushed by {who} (no output transport in the pipeline: generated, not played; "
               "chunks laid end to end, paced by the pipeline clock, cut at interruptions)")
        self.core.agent_audio = why
        _log.warning("livejudge: no output transport (BaseOutputTransport) in this pipeline; taking the %s", why)
        # generated audio comes in bursts ahead of time: lay chunks end to end, never re-anchor back,
        # and hold each until the pipeline clock reaches it (LiveJudgeCore.pace_agent)
        self.core._stitch["agent"] = Stitcher(self.core.tap.stitch_tolerance_s, float("inf"))
        self.core.pace_agent = True
        for frame, t_ns in self._pending_agent:
            self.core.put_audio("agent", frame, t_ns)
        self._pending_agent.clear()

    async def on_push_frame(self, data: FramePushed) -> None:
        """Cheap: classify the frame and queue a reference; all work happens off the loop."""
        frame = data.frame
        if self._bridge.loop is None:  # added with worker.add_observer after setup
            self._bridge.bind()
            self.core.in_pipeline = True
        if (self._agent_from is None and self._pending_agent
                and data.timestamp - self._pending_agent[0][1] >= AGENT_DECIDE_S / _NS):
            # decided by the pipeline clock, whatever frame shows it: a reply pushed as one burst
            # waited for the next reply's frames, and was lost (a trial)
            self._take_pushed(type(self._pending_source).__name__)
        if isinstance(frame, InputAudioRawFrame):
            if data.first_push:
                self.core.put_audio("user", frame, data.timestamp)
        elif isinstance(frame, OutputAudioRawFrame):
            if data.direction is _DOWN and isinstance(data.source, BaseOutputTransport):
                if self._agent_from is None:
                    self._saw_transport()
                self.core.put_audio("agent", frame, data.timestamp)
            elif self._agent_from != "transport" and data.first_push and data.direction is _DOWN:
                if isinstance(data.destination, BaseOutputTransport):
                    self._saw_transport()
                elif self._agent_from == "pushed":
                    self.core.put_audio("agent", frame, data.timestamp)
                else:
                    self._agent_pushed(frame, data.source, data.timestamp)
        elif isinstance(frame, NOTE_FRAMES):
            if data.first_push and (frame.broadcast_sibling_id is None or data.direction is _DOWN):
                self.core.put_note(frame, data.timestamp)
        elif isinstance(frame, (EndFrame, CancelFrame)):
            if data.first_push:
                self.core.mark_ended(ended_by_frame(frame))  # the first one says why
                self.core.put_end(data.timestamp)
            if isinstance(data.source, BaseOutputTransport) and data.direction is _DOWN:
                self._schedule_close()
        if self._agent_from is None and (isinstance(data.destination, BaseOutputTransport)
                                         or isinstance(data.source, BaseOutputTransport)):
            self._saw_transport()  # e.g. the StartFrame reaching it: agent audio comes from it

    async def setup(self, task_manager) -> None:
        await super().setup(task_manager)
        self._bridge.bind()
        self.core.in_pipeline = True

    async def on_pipeline_started(self) -> None:
        self._bridge.bind()

    def _schedule_close(self) -> None:
        if self._close_task is None:
            self._close_task = asyncio.ensure_future(self.close())

    async def close(self) -> dict:
        """Finish: judge the last window, write ``result_path``, fire ``on_closed``. Idempotent."""
        if self._agent_from is None and self._pending_agent:  # ended before the decision: no transport
            self._take_pushed("a processor")
        doc, first = await self.core.close_once()
        if first:
            await self._call_event_handler("on_closed", doc)
        return doc

    async def cleanup(self) -> None:
        await super().cleanup()
        if self._close_task is not None:
            await self._close_task
        else:
            self.core.mark_ended("end of pipeline")  # the worker is done (no End/Cancel seen)
            await self.close()

    def result(self) -> dict:
        """The result document so far (final after close), with ``pipecat`` and
        ``framework_comparison`` blocks. Any time, any thread."""
        return self.core.result()
