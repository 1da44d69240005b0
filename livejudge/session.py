"""The Session: where every way in (file replay, websocket attach, Pipecat) meets one pipeline.

```
source ──push(channel, samples, t_s)──▶ StreamingVAD per channel ──▶ turns.analyze ──▶ sinks
                       │                                                   (events, result)
                       └──▶ RollingWindow ──snapshot every interval_s──▶ JudgeScheduler ──▶ Judge
```

* Audio enters as float32 mono 16 kHz with the session time of its first sample
  (``push``), or at any rate (``push_audio`` converts). Channels are "user" and "agent".
* A channel that goes quiet at the source (an agent that sends no audio between replies)
  is filled with silence once the other channel is ``max_lag_s`` ahead, so its VAD can close
  segments on time.
* Every ``interval_s`` of session time the last ``window_s`` of both channels, with the
  timing events inside, is handed to the judge worker; judging never blocks ``push`` in
  live mode.
* Sinks get events as they settle; ``result()`` gives the result document at any time and
  ``close()`` finishes the stream and returns the final one.
* Long calls cost the same per minute at their end as at their start: ``turns.analyze`` runs
  only over the turns that can still change (``livejudge.timing.timeline.IncrementalTimeline``, equal
  to analysing every segment), and judged windows take their events by bisection.
"""

from __future__ import annotations

import bisect
import heapq
import math
import numbers
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Literal, Protocol

import numpy as np

from livejudge.audio import MAX_SAMPLE_ABS, SAMPLE_RATE, StreamResampler, TwoChannelAudio, check_rate
from livejudge.events import (
    CHANNELS,
    Backchannel,
    BargeIn,
    Channel,
    JudgeResult,
    SpeechSegment,
    Transition,
    Turn,
    TurnTranscript,
)
from livejudge.timing.metrics import Summary, summarize
from livejudge.timing.timeline import IncrementalTimeline, event_key_s, settle_items
from livejudge.timing.turns import Timeline, TurnConfig, analyze
from livejudge.timing.verdicts import Verdict, VerdictConfig, on_line, verdicts as find_verdicts
from livejudge.timing.frontend import StreamingHighPass
from livejudge.timing.vad import StreamingVAD, VADConfig
from livejudge.timing.window import RollingWindow, WindowSnapshot


_MISSING = object()


@dataclass(frozen=True, slots=True)
class Note:
    """Something a framework or protocol reported (not used for timing; kept to compare).

    Attributes:
        kind: e.g. "pipecat.UserStartedSpeakingFrame", "ws.interruption", "ws.closed".
        t_s: session time when livejudge saw it, seconds.
        data: extra JSON-ready fields.
    """

    kind: str
    t_s: float
    data: dict = field(default_factory=dict)


class Transcriber(Protocol):
    """Turns the audio of one finished turn into text (see ``livejudge[asr]``).

    ``submit`` must not block: it queues the turn and calls ``callback`` from a worker thread
    when the transcript is ready. ``transcribe`` is the blocking form (offline scoring).
    """

    def submit(self, turn: Turn, audio: np.ndarray,
               callback: Callable[[TurnTranscript], None]) -> None: ...

    def transcribe(self, turn: Turn, audio: np.ndarray) -> TurnTranscript: ...

    def close(self, wait: bool = True) -> None: ...


class Sink(Protocol):
    """Receives session events. Called from the audio path or the judge thread: be quick."""

    def on_event(self, event: object) -> None: ...

    def on_close(self, result: dict) -> None: ...


@dataclass(frozen=True)
class SessionConfig:
    """Settings of one judged conversation.

    Attributes:
        window_s: length of the judged rolling window, seconds (default 30).
        interval_s: session time between judged windows, seconds (default 2).
        vad: per-channel VAD settings.
        turns: turn-taking thresholds.
        judge_mode: "live" (drop stale windows, never block audio) or "every" (offline
            scoring: judge every window, waiting for the judge).
        judge_depth: "every" mode: windows queued ahead of the judge before the audio path waits
            (``JudgeScheduler``'s ``depth``; default 1, each window judged before the next is
            submitted; the CLI uses ``scheduler.EVERY_DEPTH`` for recorded calls). Results and
            their order do not depend on it.
        max_lag_s: how far one channel may trail the other before silence is filled in, seconds.
            Audio that arrives later for time already filled is dropped (counted in the result's
            ``source.dropped_audio_s``, said once in ``errors``) and the wait is raised to cover the
            lateness seen, up to ``MAX_LAG_CAP_S`` (``source.max_lag_s``).
        max_jump_s: largest step ahead of the session clock one ``push`` may take, seconds
            (the gap is filled with silence; a larger jump is refused with ValueError, since
            a wrong timestamp would otherwise fill hours of silence: 10 h is 2.3 GB). Default
            600 s: long enough for a paused pipeline, short enough to cost < 40 MB. None = no limit.
        verdicts: thresholds of the per-event verdicts (``livejudge.timing.verdicts``).
    """

    window_s: float = 30.0
    interval_s: float = 2.0
    vad: VADConfig = field(default_factory=VADConfig)
    turns: TurnConfig = field(default_factory=TurnConfig)
    judge_mode: Literal["live", "every"] = "live"
    judge_depth: int = 1
    max_lag_s: float = 0.5
    max_jump_s: float | None = 600.0
    verdicts: VerdictConfig = field(default_factory=VerdictConfig)

    def validate(self) -> "SessionConfig":
        for name, value in (("window_s", self.window_s), ("interval_s", self.interval_s)):
            # NaN passed "<= 0" and made the whole call one window; "2" was a bare TypeError (a re-check)
            ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and 0 < value < math.inf
            if not ok:
                raise ValueError(f"{name} (--{name.replace('_', '-')}) must be a positive number of seconds, "
                                 f"got {value!r}")
        if self.max_jump_s is not None and not self.max_jump_s > 0:
            raise ValueError(f"max_jump_s must be positive or None, got {self.max_jump_s}")
        if int(self.judge_depth) < 1:
            raise ValueError(f"judge_depth must be at least 1, got {self.judge_depth}")
        self.vad.validate()
        return self


MAX_ERRORS = 100
"""Most entries ``Session.errors`` (the result's ``errors``) holds; the last one counts the rest."""

MAX_NOTES = 10_000
"""Most framework/protocol notes a session keeps (the result's ``framework_events``) and publishes
(the event log); the rest are counted per kind in one ``notes_dropped`` note at close. HEURISTIC
bound: a real call sends a few per turn; a trial's agent sent 200,000 text frames and the result
grew to 38 MB, the event log to 35 MB, memory to 474 MB."""


class Session:
    """One judged conversation. Thread-safe: sources may push from different threads.

    Args:
        config: SessionConfig (defaults: 30 s window judged every 2 s).
        judge: a Judge (``livejudge.judge.model.judge.Judge``) or None to measure timing only.
        sinks: receivers of events and of the final result.
        info: JSON-ready facts about the source for the result document
            (e.g. ``{"sample_rate_in": 48000, "channels": {"user": 0, "agent": 1}}``).
        transcriber: optional ASR; each settled turn of ``transcribe_channels`` is transcribed
            once, in the transcriber's own worker ("live"; blocking in "every" mode, so offline
            scoring sees the same text as a live replay), and the text joins later judge windows.
        transcribe_channels: whose turns to transcribe (default: the agent's).
        scheduler: a ``JudgeScheduler`` shared with other sessions, so windows due together
            are judged in one batch (default: a scheduler of this session's own, for ``judge``).
        input_health: check the stream's input health live (``livejudge.timing.health.HealthProbe``:
            silent, identical or swapped channels, clipping, DC; once at ``LIVE_CHECK_S`` of both
            channels, on a worker thread, and again at ``close``). Routes that check a recording
            before streaming it say so with ``set_input_health`` instead.
    """

    def __init__(self, config: SessionConfig | None = None, judge: Any = None,
                 sinks: list[Sink] | tuple = (), info: dict | None = None,
                 transcriber: Transcriber | None = None,
                 transcribe_channels: tuple[Channel, ...] = ("agent",),
                 scheduler: Any = None, input_health: bool = True) -> None:
        from livejudge.timing.health import HealthProbe

        self.config = (config or SessionConfig()).validate()
        self.judge = judge
        self.sinks: list[Sink] = list(sinks)
        self.info: dict = dict(info or {})
        self._lock = threading.RLock()  # audio path: VADs, buffers, segments
        self._results_lock = threading.Lock()  # judge results (written by the judge thread)
        self._vads = {c: StreamingVAD(c, self.config.vad) for c in CHANNELS}
        hp = self.config.vad.highpass_hz  # front end: DC and rumble out before VAD and window
        self._highpass = {c: StreamingHighPass(hp) for c in CHANNELS} if hp is not None else None
        self._end = {c: 0 for c in CHANNELS}  # samples received per channel (absolute index)
        # a channel's audio that arrived after the session had filled its time with silence
        # (``max_lag_s``) is dropped: counted, said once, and the wait raised to cover it
        self._max_lag_s = float(self.config.max_lag_s)
        self._fill_start: dict[str, int | None] = {c: None for c in CHANNELS}  # current run of filled silence
        self._dropped_s = {c: 0.0 for c in CHANNELS}
        self._late_said: dict[str, int | None] = {c: None for c in CHANNELS}  # said: its index in errors
        self._window = RollingWindow(self.config.window_s)
        self._segments: list[SpeechSegment] = []  # closed, not yet handed to self._timeline
        self._spoke: set[str] = set()  # channels with a closed speech segment (the no-speech check)
        self._last_speech_end_s: float | None = None  # the latest segment offset seen (the silent-tail check)
        # turn-taking analysis at flat cost per segment: settled prefix + re-analysed tail
        self._timeline = IncrementalTimeline(self.config.turns)
        self._published: set = set()  # published events of the tail (settled ones leave it)
        self._pending: list = []  # heap of settled events not yet published: (key, seq, event)
        self._pending_seq = 0
        self._summary_cache: tuple[Any, Summary] | None = None
        self._end_s: float | None = None  # the call's end, set at close (``_ended``)
        self._ended_cache: tuple[Timeline, Timeline] | None = None
        self._verdict_keys: set = set()  # keys of the verdicts published (live or at close)
        self._verdicts_settled: list[Verdict] = []  # those verdicts, in the order published
        self._verdict_lo_s = -float("inf")  # verdicts of moments before this are not looked for live
        self._verdict_cache: tuple[Any, list[Verdict]] | None = None
        self._notes: list[Note] = []
        self._notes_dropped: dict[str, int] = {}  # kind → notes beyond MAX_NOTES
        self._results: list[JudgeResult] = []
        self._resamplers: dict[tuple[Channel, int], StreamResampler] = {}
        self._next_judge_s = self.config.interval_s
        self._last_submitted_s = 0.0  # end of the newest window handed to the judge
        self._closed_result: dict | None = None
        self._scheduler = None
        self.errors: list[str] = []  # at most MAX_ERRORS entries (the last counts the rest)
        self.say_health = True  # input-health warnings found at the close go to stderr (set_input_health)
        self._errors_dropped = 0
        self._nonfinite: dict[Channel, int] = {}  # NaN/inf samples replaced per channel
        self._nonfinite_idx: dict[Channel, int] = {}  # their entry in errors
        self.transcriber = transcriber
        self.transcribe_channels = tuple(transcribe_channels)
        self._transcripts: list[TurnTranscript] = []  # sorted by onset
        self._transcript_max_s = 0.0  # longest transcribed turn, seconds (window queries)
        self._key = id(self)
        # a Session built in Python (docs/python.md) gets hints in its own terms, not attach's flags (a
        # trial read "--input-wav silent?" from a Session it fed itself); attach names itself by kind
        src = str((info or {}).get("source") or ("attach" if (info or {}).get("kind") == "attach" else "python"))
        self._health: HealthProbe | None = HealthProbe(source=src) if input_health else None
        self._health_early: list = []  # warnings of the live check (said when found)
        from livejudge.timing.health import FloorTrack

        self._floors = {c: FloorTrack() for c in CHANNELS}  # the noise floor over the whole call
        self._health_thread: threading.Thread | None = None
        if scheduler is not None:
            self._scheduler = scheduler
            self.judge = judge if judge is not None else scheduler.judge
            scheduler.start()
        elif judge is not None:
            from livejudge.judge.model.scheduler import JudgeScheduler

            self._scheduler = JudgeScheduler(judge, None, self.config.judge_mode, on_error=self._on_error,
                                             depth=self.config.judge_depth)
            self._scheduler.start()

    # ------------------------------------------------------------------ input
    def push(self, channel: Channel, samples: np.ndarray, t_s: float) -> None:
        """Feed audio of one channel.

        Args:
            channel: "user" or "agent".
            samples: mono, shape (n_samples,), 16 kHz: float32/float64 in [-1, 1], or int16
                PCM (scaled by 1/32768 to [-1, 1)). Other shapes (stereo (n, 2), 3-D) are
                refused: downmix first with ``livejudge.audio.to_mono``. NaN/inf samples are
                replaced by 0, samples beyond ±``MAX_SAMPLE_ABS`` (4) clipped, each counted in
                ``errors`` (one entry per channel and kind, with the count).
            t_s: session time of the first sample, seconds (finite). A gap since the channel's
                last sample is filled with silence; samples before it (late or repeated) are
                dropped. A step more than ``config.max_jump_s`` ahead of the session clock is
                refused.
        Raises:
            ValueError: unknown channel, a closed session, samples of another dtype (other
                integers, complex, objects) or shape, a NaN/inf or non-numeric ``t_s``, or a
                jump ahead beyond ``max_jump_s``. Nothing is fed when it raises.
        """
        if channel not in CHANNELS:
            raise ValueError(f"channel must be 'user' or 'agent', got {channel!r}")
        x = self._checked_samples(channel, samples)
        t_s = _checked_time(t_s)
        with self._lock:
            if self._closed_result is not None:
                raise ValueError("session is closed; start a new Session")
            start = int(round(t_s * SAMPLE_RATE))
            end = self._end[channel]
            jump_s = start / SAMPLE_RATE - self.now_s
            if self.config.max_jump_s is not None and jump_s > self.config.max_jump_s:
                raise ValueError(
                    f"{channel} audio at t_s={t_s:.3f} s jumps {jump_s:.1f} s ahead of the session clock "
                    f"({self.now_s:.3f} s); the limit is SessionConfig.max_jump_s={self.config.max_jump_s} s "
                    "(stamp chunks with session time in seconds, or raise the limit)")
            if start > end:  # a gap: silence, block by block (bounded memory)
                while start > self._end[channel]:
                    self._feed(channel, _silence(min(int(SILENCE_BLOCK_S * SAMPLE_RATE), start - self._end[channel])))
            elif start < end:
                self._count_late(channel, start, end, len(x))
                x = x[end - start:]
            if x.size:
                self._fill_start[channel] = None
                self._feed(channel, x)
            self._fill_lagging()
            due = self._due_windows()
        self._submit(due)

    def _checked_samples(self, channel: Channel, samples: Any) -> np.ndarray:
        """``samples`` as float32 (n,), or ValueError (see ``push``); counts non-finite values."""
        if type(samples) is np.ndarray and samples.dtype == np.float32 and samples.ndim == 1:
            arr = samples  # the common case, checked in one pass below
        elif isinstance(samples, (bytes, bytearray, memoryview)):  # a transport's frame, as it comes
            # (a trial's bytes read "must be mono, got shape ()")
            raise ValueError(f"{channel} samples are raw bytes: decode them first, e.g. 16-bit PCM with "
                             "np.frombuffer(data, np.int16) (int16 is accepted as it is)")
        else:
            try:
                arr = np.asarray(samples)
            except Exception as exc:  # ragged sequences and the like
                raise ValueError(f"{channel} samples are not an array of numbers ({exc})") from None
        if arr.ndim != 1:
            hint = (" (stereo or multichannel: downmix with livejudge.audio.to_mono, or push each "
                    "channel on its own)" if arr.ndim == 2 else "")
            raise ValueError(f"{channel} samples must be mono, shape (n_samples,), got shape "
                             f"{arr.shape}{hint}")
        if arr.dtype == np.int16:
            return arr.astype(np.float32) / 32768.0
        if arr.dtype.kind not in "f" and not (arr.dtype.kind in "iu" and arr.size == 0):
            raise ValueError(f"{channel} samples must be float32 in [-1, 1] (or int16 PCM), got dtype "
                             f"{arr.dtype}; convert with livejudge.audio.pcm16_to_float32 or scale to [-1, 1]")
        if arr.dtype == np.float32:
            x = arr
        else:
            with np.errstate(over="ignore", invalid="ignore"):  # beyond float32 → inf → counted below
                x = arr.astype(np.float32)
        if x.size and not np.max(np.abs(x)) <= MAX_SAMPLE_ABS:  # one pass; NaN fails the test too
            bad = ~np.isfinite(x)
            if bad.any():
                x = np.where(bad, np.float32(0.0), x)
                self._count_nonfinite(channel, int(bad.sum()))
            big = np.abs(x) > MAX_SAMPLE_ABS
            if big.any():  # 1e30 squared is inf: features, then the result, would hold NaN
                x = np.clip(x, -MAX_SAMPLE_ABS, MAX_SAMPLE_ABS)
                self._count_nonfinite(channel, int(big.sum()), kind="huge")
        return x

    def _count_nonfinite(self, channel: Channel, n: int, kind: str = "nonfinite") -> None:
        key = channel if kind == "nonfinite" else f"{channel}:{kind}"
        with self._results_lock:
            self._nonfinite[key] = self._nonfinite.get(key, 0) + n  # type: ignore[index]
            total = self._nonfinite[key]  # type: ignore[index]
            msg = (f"{channel} audio had {total} NaN/inf samples, replaced by 0 (check the source's conversion)"
                   if kind == "nonfinite" else
                   f"{channel} audio had {total} samples beyond ±{MAX_SAMPLE_ABS:g} (full scale is ±1), clipped "
                   "(check the source's scaling: float audio belongs in [-1, 1])")
            idx = self._nonfinite_idx.get(key)  # type: ignore[arg-type]
            if idx is not None and idx < len(self.errors):
                self.errors[idx] = msg  # one entry per channel and kind, its count kept current
                return
            self._nonfinite_idx[key] = len(self.errors)  # type: ignore[index]
        self._on_error(msg)

    def push_audio(self, channel: Channel, samples: np.ndarray, sample_rate: int, t_s: float) -> None:
        """``push`` for mono audio at any rate in 8–192 kHz; resampled to 16 kHz per stream.

        Raises:
            ValueError: as ``push``, or a ``sample_rate`` outside ``livejudge.audio.MIN_RATE``–
                ``MAX_RATE`` or not an integer (``AudioFormatError``, a ValueError).
        """
        if channel not in CHANNELS:
            raise ValueError(f"channel must be 'user' or 'agent', got {channel!r}")
        rate = check_rate(sample_rate, "sample_rate")
        if rate != SAMPLE_RATE:
            x = self._checked_samples(channel, samples)
            key = (channel, rate)
            rs = self._resamplers.get(key)
            if rs is None:
                rs = self._resamplers[key] = StreamResampler(rate)
            samples = rs(x)
        self.push(channel, samples, t_s)

    def advance(self, now_s: float, *, final: bool = False) -> None:
        """Tell the session the clock reached ``now_s`` (fills silent channels, runs the judge).

        A channel is filled with silence up to ``now_s`` − ``max_lag_s`` (its audio may still be
        on its way); ``final=True``, at the end of a stream when nothing more will arrive for the
        time before ``now_s`` (a pipeline's ``EndFrame``), fills both channels to ``now_s`` itself,
        so the call lasts until then (a pipeline whose caller sent no frames at the end read as
        ending at its last frame, seconds early).

        The silence is fed in blocks of ``SILENCE_BLOCK_S`` (windows judged block by block), so
        memory stays bounded however far the clock jumps (``advance(36000)`` once took 4 GB).
        Raises ValueError for a NaN/inf or non-numeric ``now_s``."""
        now_s = _checked_time(now_s)
        step = int(SILENCE_BLOCK_S * SAMPLE_RATE)
        lag_s = 0.0 if final else self._max_lag_s
        while True:
            with self._lock:
                if self._closed_result is not None:
                    return
                target = int(round((now_s - lag_s) * SAMPLE_RATE))
                behind = [c for c in CHANNELS if target > self._end[c]]
                for c in behind:
                    self._fill(c, min(step, target - self._end[c]))
                due = self._due_windows()
            self._submit(due)
            if not behind:
                return

    def note(self, kind: str, t_s: float | None = None, **data: Any) -> Note:
        """Record a framework/protocol event next to the acoustic timing (never used for it).

        Raises:
            ValueError: the session is closed (as ``push``), or a NaN/inf/non-numeric ``t_s``.
        """
        n = Note(kind, self.now_s if t_s is None else _checked_time(t_s), data)
        with self._lock:
            if self._closed_result is not None:
                raise ValueError(f"session is closed; note {kind!r} was not recorded (start a new Session)")
            if len(self._notes) >= MAX_NOTES:  # bounded: counted, said once at close
                self._notes_dropped[kind] = self._notes_dropped.get(kind, 0) + 1
                return n
            self._notes.append(n)
        self._publish(n)
        return n

    def add_sink(self, sink: Sink) -> None:
        self.sinks.append(sink)

    def prime_noise_floor(self, user: np.ndarray, agent: np.ndarray) -> None:
        """Start each channel's VAD noise floor from its first seconds, read ahead
        (``StreamingVAD.prime_noise``): a recording's (``sources.recording.PreparedRecording.start``),
        which can be read before it is streamed. A recording that starts inside a phrase had that
        phrase read as noise (its first turn short, split or lost). Call before the first ``push``.

        Args:
            user, agent: float32, shape (n,), 16 kHz: the first ``config.vad.noise_history_s`` (or
                less) of each channel, as it will be streamed (the front end is applied here).
        Raises:
            RuntimeError: after audio was pushed.
        """
        from livejudge.timing.frontend import StreamingHighPass

        hp = self.config.vad.highpass_hz
        with self._lock:
            for c, x in (("user", user), ("agent", agent)):
                x = np.asarray(x, dtype=np.float32).reshape(-1)
                if hp is not None:  # a fresh filter: the stream's own starts the same way on the same samples
                    x = StreamingHighPass(hp)(x)
                self._vads[c].prime_noise(x)

    def set_input_health(self, warnings: list, *, say: bool = True) -> list[dict]:
        """Record the input health of a recording checked before it was streamed
        (``livejudge.timing.health.check_call``): said (stderr unless ``say`` is False, and a
        note each) and kept as the result's ``source.input_health``; the live probe is off. ``say``
        holds for the warnings found at the close too (``say_health``): a batch says them per call, and
        they had been printed twice, once without the call's name (a re-check)."""
        from livejudge.timing.health import report_warnings

        self._health = None
        self.say_health = say
        self.info["input_health"] = report_warnings(list(warnings), self, say=say)
        return self.info["input_health"]

    def add_input_health(self, warnings: list, *, say: bool = True) -> list[dict]:
        """Add input-health warnings found after the check before streaming (a file that turned out
        truncated, samples clipped or zeroed: ``livejudge.timing.health.reader_warnings``): said as
        ``set_input_health`` says them and appended to the result's ``source.input_health``."""
        from livejudge.timing.health import report_warnings

        said = self.info.get("input_health")
        said = said if isinstance(said, list) else []
        self.info["input_health"] = said + report_warnings(list(warnings), self, say=say)
        return self.info["input_health"]

    def set_judge_unavailable(self, reason: str) -> None:
        """Record why the default judge (``"auto"``) could not load here, so no P(human) is measured:
        ``source.judge_unavailable`` and one line in ``errors`` (not said again on stderr: the loader
        said it). A result then tells a judge that could not load from one turned off (``judge:
        none``), whose ``errors`` are empty (a re-check of ``livejudge score``)."""
        self.info["judge_unavailable"] = reason
        self.errors.append(f"no P(human): the judge could not load ({reason}); timing is measured")

    def set_line(self, line: dict, *, say: bool = True) -> None:
        """Record that a recording came over a narrowband line (``livejudge.timing.health.check_line``):
        said on stderr as a note (unless ``say`` is False), kept as the result's ``source.line`` and
        as a ``line`` note in the event log. Verdicts found after it (and every verdict of the final
        result) use the narrowband timing error (``Verdict.line``)."""
        with self._lock:
            self.info["line"] = line
            self._verdict_cache = self._summary_cache = None  # verdicts from here on use the line's timing error
        if say:
            try:
                from livejudge.outputs.guard import clean

                print(f"livejudge: note: {clean(line['note'])}", file=sys.stderr)
            except (OSError, ValueError):
                pass
        self.note("line", band=line.get("band"), channels=line.get("channels"), message=line.get("note"))

    def _check_health_live(self, user: np.ndarray, agent: np.ndarray) -> None:
        """Worker: the live input-health check (off the audio path), said as soon as found."""
        from livejudge.timing.health import check_input, report_warnings

        try:
            ws = check_input(user, agent, live=True)
        except Exception as exc:  # a fault in a check must not end the call
            self._on_error(f"input-health check failed: {type(exc).__name__}: {exc}")
            return
        self._health_early = ws
        report_warnings(ws, self)
        self._say_line_live(user, agent)

    def _say_line_live(self, user: np.ndarray, agent: np.ndarray) -> None:
        """A narrowband line found in a live stream (``health.check_line_live``): said once, as
        ``set_line`` says a recording's (a trial: attach over a μ-law line gave no word of it)."""
        from livejudge.timing.health import check_line_live

        if self.info.get("line") is not None:
            return
        try:
            rate = self.info.get("sample_rate_in")
            line = check_line_live(user, agent, rate if isinstance(rate, int) else None)
        except Exception as exc:  # a fault in a check must not end the call
            self._on_error(f"line check failed: {type(exc).__name__}: {exc}")
            return
        self.info["line_checked"] = True  # summary.narrowband_channel_count: 0, not null, when wideband
        if line is not None:
            try:
                self.set_line(line)
            except ValueError:  # the session closed meanwhile (the live check racing the end of the call)
                pass

    def _warn_no_speech(self) -> None:
        """At close, under the lock: a channel with sound but no speech found says so
        (``health.no_speech_warnings``), said and kept with the input-health warnings."""
        from livejudge.timing.health import no_speech_warnings, report_warnings, silent_tail_warning

        said = self.info.get("input_health")
        said = said if isinstance(said, list) else []
        try:
            ws = no_speech_warnings(self._spoke | {g.channel for g in self._segments}, self.covered_s, said)
            from livejudge.outputs.report import RECORDED_KINDS

            if self.info.get("kind") in RECORDED_KINDS:  # a live call ends when it is hung up
                last = max([g.offset_s for g in self._segments] + ([self._last_speech_end_s]
                                                                   if self._last_speech_end_s is not None else []),
                           default=None)
                ws += silent_tail_warning(last, self.covered_s)
        except Exception as exc:  # a fault in a check must not lose the result
            self._on_error(f"no-speech check failed: {type(exc).__name__}: {exc}")
            return
        if ws:
            self.info["input_health"] = said + report_warnings(ws, self, say=self.say_health)

    def _warn_changing_floor(self) -> None:
        """At close, under the lock: a noise floor too loud in part of the call, or after the part
        the check before streaming read (``health.changing_floor_warnings``), and phrase ends that
        decay like a reverberant room (``health.reverberant_room_warnings``), said and kept with the
        input-health warnings."""
        from livejudge.timing.health import changing_floor_warnings, report_warnings, reverberant_room_warnings

        said = self.info.get("input_health")
        said = said if isinstance(said, list) else []
        try:
            levels = {c: t.rms() for c, t in self._floors.items()}
            ws = changing_floor_warnings(levels, said)
            segs = [*self._timeline.timeline([]).segments, *self._segments]  # after the VADs' flush
            ws += reverberant_room_warnings(levels, {c: sorted(g.offset_s for g in segs if g.channel == c)
                                                     for c in CHANNELS}, said)
        except Exception as exc:  # a fault in a check must not lose the result
            self._on_error(f"noise-floor and room check failed: {type(exc).__name__}: {exc}")
            return
        if ws:
            self.info["input_health"] = said + report_warnings(ws, self, say=self.say_health)

    def _finish_health(self) -> None:
        """At close: the input-health check over everything the probe holds; a warning the live check
        said and this one does not find stays in the result, marked as seen early only."""
        from dataclasses import replace as _replace

        from livejudge.timing.health import report_warnings

        probe, self._health = self._health, None
        if probe is None:
            return
        try:
            ws = probe.check()
        except Exception as exc:
            self._on_error(f"input-health check failed: {type(exc).__name__}: {exc}")
            ws = []
        if probe.held_s >= 1.0:  # a line the live check had too little speech for (or a short call)
            self._say_line_live(*probe.audio())
        if str(self.info.get("ended", "")).startswith("interrupted") and probe.held_s < probe.early_s:
            # stopped by hand before the live check was due: a silent agent may not have had its
            # turn yet (a trial's demo stopped at 4.5 s read "is the agent sending audio (--protocol)?")
            ws = [_replace(w, message=f"the {w.channel} channel was silent in the {probe.held_s:.0f} s before the call "
                                      "was stopped: it may not have had its turn yet")
                  if w.code == "silent_channel" and w.channel == "agent" else w for w in ws]
        said = {(w.code, w.channel) for w in self._health_early}
        found = {(w.code, w.channel) for w in ws}
        new = [w for w in ws if (w.code, w.channel) not in said]
        report_warnings(new, self)
        early_only = [_replace(w, message=f"{w.message} (in the first {probe.early_s:.0f} s; not over the "
                                          f"first {probe.held_s:.0f} s)")
                      for w in self._health_early if (w.code, w.channel) not in found]
        self.info["input_health"] = [w.to_dict() for w in ws + early_only]

    # ------------------------------------------------------------------ internals
    def _feed(self, channel: Channel, x: np.ndarray) -> None:
        t_s = self._end[channel] / SAMPLE_RATE
        self._floors[channel].feed(x)
        if self._health is not None:
            self._health.feed(channel, x)
            if self._health.due():  # both channels hold LIVE_CHECK_S: check on a worker, never here
                u, a = self._health.audio()
                self._health_thread = threading.Thread(target=self._check_health_live, args=(u, a),
                                                       name="livejudge-health", daemon=True)
                self._health_thread.start()
        if self._highpass is not None:
            x = self._highpass[channel](x)
        self._window.write(channel, x, t_s)
        self._end[channel] += len(x)
        new = self._vads[channel].push(x)
        if new:
            self._segments.extend(new)
            self._spoke.add(channel)
            self._last_speech_end_s = max(self._last_speech_end_s or 0.0, max(g.offset_s for g in new))
            for s in new:
                self._publish(s)
            self._publish_settled(final=False)

    def _fill_lagging(self) -> None:
        lead = max(self._end.values())
        lag = int(self._max_lag_s * SAMPLE_RATE)
        step = int(SILENCE_BLOCK_S * SAMPLE_RATE)
        for c in CHANNELS:
            while lead - self._end[c] > lag:
                self._fill(c, min(step, lead - lag - self._end[c]))

    def _fill(self, channel: Channel, n: int) -> None:
        """Feed ``n`` samples of silence the source did not send (a channel trailing the other by
        more than the lag allowed, or the clock moved on), remembering where the run began."""
        if self._fill_start[channel] is None:
            self._fill_start[channel] = self._end[channel]
        self._feed(channel, _silence(n))

    def _say_late_total(self) -> None:
        """At close, under the lock: the late-audio line of each channel says the call's total
        (a trial read "0.10 s of it dropped so far" beside source.dropped_audio_s 0.52)."""
        for c in CHANNELS:
            i = self._late_said[c]
            # its own line (a full errors list may have cut it: MAX_ERRORS)
            if i is not None and i < len(self.errors) and self.errors[i].startswith(f"{c} audio arrived after"):
                self.errors[i] = self._late_message(c, "in all")

    def _late_message(self, channel: Channel, how: str) -> str:
        """The one line that says a channel's late audio was dropped: how much (``how``: "so far"
        while the call runs, "in all" at its end), and the wait now."""
        other = "agent" if channel == "user" else "user"
        return (f"{channel} audio arrived after the session had filled its time with silence (it trails the "
                f"{other} channel by more than the wait, SessionConfig.max_lag_s {self.config.max_lag_s:g} s): "
                f"{self._dropped_s[channel]:.2f} s of it dropped {how}; the wait is now {self._max_lag_s:g} s "
                f"(at most {MAX_LAG_CAP_S:g} s): set max_lag_s to your transport's buffering to lose none; the "
                "total is in source.dropped_audio_s")

    def _count_late(self, channel: Channel, start: int, end: int, n: int) -> None:
        """A push whose first ``end - start`` samples the channel already holds: count them as
        dropped; audio that lands on silence the session filled in came late (the channel trails the
        other by more than the wait, ``max_lag_s``): say it once, and wait longer from now on, up
        to ``MAX_LAG_CAP_S`` (a trial's own transport fed the user 0.5 s behind the agent: the whole
        user turn was lost with ``errors`` empty). Under the lock."""
        dropped = min(n, end - start)
        self._dropped_s[channel] += dropped / SAMPLE_RATE
        if self._dropped_s[channel] * SAMPLE_RATE > LATE_TOLERANCE_SAMPLES:  # not a rounded timestamp's sample
            self.info["dropped_audio_s"] = {c: round(v, 3) for c, v in self._dropped_s.items() if v}
        fill = self._fill_start[channel]
        late = fill is not None and start >= fill - LATE_TOLERANCE_SAMPLES
        if late and (end - start) > LATE_TOLERANCE_SAMPLES:
            trail_s = (max(self._end.values()) - (start + n)) / SAMPLE_RATE  # behind the leading channel
            raised = min(MAX_LAG_CAP_S, trail_s + LATE_MARGIN_S)
            if raised > self._max_lag_s:
                self._max_lag_s = raised
                self.info["max_lag_s"] = round(raised, 3)
        if self._late_said[channel] is None and self._dropped_s[channel] >= LATE_SAY_S:
            self._late_said[channel] = len(self.errors)  # its index: the total replaces "so far" at close
            self._on_error(self._late_message(channel, "so far"))

    @property
    def now_s(self) -> float:
        """Latest session time any channel has reached, seconds."""
        return max(self._end.values()) / SAMPLE_RATE

    @property
    def covered_s(self) -> float:
        """Session time both channels have reached, seconds."""
        return min(self._end.values()) / SAMPLE_RATE

    def _due_windows(self) -> list[WindowSnapshot]:
        """Snapshots whose judge time has come (called under the lock; submitted outside it,
        because in "every" mode submitting waits for the judge thread)."""
        if self._scheduler is None:
            return []
        covered = self.covered_s
        if covered < self._next_judge_s:
            return []
        if self.config.judge_mode == "every":
            due = []
            while covered >= self._next_judge_s:
                due.append(self.snapshot(self._next_judge_s))
                self._next_judge_s += self.config.interval_s
            return due
        # live: only the newest window; skipped grid points were late anyway
        k = int((covered - self._next_judge_s) // self.config.interval_s) + 1
        self._next_judge_s += k * self.config.interval_s
        return [self.snapshot(covered)]

    def _submit(self, due: list[WindowSnapshot]) -> None:
        for snap in due:
            self._last_submitted_s = max(self._last_submitted_s, snap.end_s)
            self._scheduler.submit(snap, self._on_judge_result, self._key)  # type: ignore[union-attr]

    def _on_judge_result(self, result: JudgeResult) -> None:
        # runs in the judge thread: never take the audio-path lock here
        with self._results_lock:
            self._results.append(result)
        self._publish(result)

    def _on_error(self, message: str) -> None:
        # bounded: a sink or tap that fails on every chunk must not grow the result without end
        if len(self.errors) < MAX_ERRORS - 1:
            self.errors.append(message)
        else:
            self._errors_dropped += 1
            summary = (f"... and {self._errors_dropped} more error(s); only the first {MAX_ERRORS - 1} "
                       "are kept")
            if len(self.errors) == MAX_ERRORS:
                self.errors[-1] = summary
            else:
                self.errors.append(summary)
        if len(self.errors) <= 3:
            try:
                from livejudge.outputs.guard import clean  # messages quote file names, agents' words

                print(f"livejudge: {clean(message)}", file=sys.stderr)
            except (OSError, ValueError):  # stderr closed or a broken pipe (`| head`): the error is kept
                pass

    def _publish(self, event: object) -> None:
        for s in self.sinks:
            try:
                s.on_event(event)
            except Exception as exc:  # a broken sink must not stop the call
                self._on_error(f"sink {type(s).__name__} failed: {exc}")

    # ------------------------------------------------------------------ timeline
    def _open_segments(self) -> list[SpeechSegment]:
        out = []
        for c in CHANNELS:
            v = self._vads[c]
            if v.open_onset_s is not None and v.last_voiced_s is not None:
                out.append(SpeechSegment(c, v.open_onset_s, v.last_voiced_s))
        return out

    def _absorb(self) -> None:
        """Hand newly closed segments to the incremental timeline (under the lock)."""
        if self._segments:
            self._timeline.add(self._segments)
            self._segments.clear()

    def _frontiers(self) -> dict[Channel, float]:
        """Per channel, the earliest onset a segment not yet closed can have, seconds."""
        out: dict[Channel, float] = {}
        for c in CHANNELS:
            v = self._vads[c]
            floor = getattr(v, "onset_floor_s", None)  # StreamingVAD: includes its refinement's reach
            if floor is not None:
                out[c] = min(float(floor), v.time_s)
                continue
            if v.open_onset_s is not None:
                out[c] = v.open_onset_s
                continue
            run = getattr(v, "_run_start", _MISSING)  # a voiced run too short to open a segment yet
            if run is None:
                out[c] = v.time_s
            elif run is not _MISSING and hasattr(v, "_start_s"):
                out[c] = min(v.time_s, v._start_s + run * v.frame_s)
            else:  # unknown VAD internals: the longest a candidate run can reach back
                cfg = self.config.vad
                hang = round(cfg.hangover_s / v.frame_s)
                need = max(1, round(cfg.min_speech_s / v.frame_s))
                out[c] = v.time_s - (need * (hang + 1) + 1) * v.frame_s
        return out

    @property
    def timeline(self) -> Timeline:
        """Turn-taking analysis of everything so far, including speech still in progress.

        Equal to ``turns.analyze`` of every segment (``livejudge.timing.timeline``); assembling it is
        O(number of events), cached until the analysis changes.
        """
        with self._lock:
            self._absorb()
            return self._ended(self._timeline.timeline(self._open_segments()))

    def _marked_cut(self, ev: object, tl: Timeline) -> object:
        """``ev`` as the result document gives it once the call has ended (``tl`` holds ``end_s``):
        ``Timeline.marked_by_end`` for a barge-in or backchannel, anything else unchanged."""
        if isinstance(ev, (BargeIn, Backchannel)):
            return tl.marked_by_end(ev, self.config.verdicts.backchannel_yield_window_s)
        return ev

    def _ended(self, tl: Timeline) -> Timeline:
        """``tl`` with the call's end (``Timeline.end_s``) once the session is closing: a barge-in
        the end cut within ``yield_max_s`` of its onset is then neither a yield nor a talk-through. The same object for the same ``tl``
        (the summary and verdict caches key on it)."""
        if self._end_s is None:
            return tl
        if self._ended_cache is None or self._ended_cache[0] is not tl:
            self._ended_cache = (tl, replace(tl, end_s=self._end_s, end_decide_s=self.config.verdicts.yield_max_s))
        return self._ended_cache[1]

    @property
    def summary(self) -> Summary:
        with self._lock:
            tl = self.timeline
            if self._summary_cache is None or self._summary_cache[0] is not tl:
                # the talk-over counts are the verdicts' (same thresholds): one rule, not two
                self._summary_cache = (tl, summarize(tl, self._verdicts_of(tl)))
            return self._summary_cache[1]

    def _verdicts_of(self, tl: Timeline) -> list[Verdict]:
        """The verdicts of timeline ``tl`` (the session's config), cached per timeline; call under the lock."""
        if self._verdict_cache is None or self._verdict_cache[0] is not tl:
            self._verdict_cache = (tl, self._find_verdicts(tl))
        return self._verdict_cache[1]

    def _find_verdicts(self, tl: Timeline) -> list[Verdict]:
        """``timing.verdicts.verdicts`` of ``tl`` with the session's thresholds, on the call's line:
        a verdict timed from a narrowband channel (``set_line``; ``verdicts.TIMED_FROM``) gets the
        timing error measured on such lines."""
        line = self.info.get("line")
        narrow = line.get("channels") or () if isinstance(line, dict) and line.get("band") == "narrowband" else ()
        return on_line(find_verdicts(tl, self.config.verdicts), narrow)

    @property
    def verdicts(self) -> list[Verdict]:
        """Per-event verdicts of everything so far (``livejudge.timing.verdicts``), by moment."""
        with self._lock:
            return list(self._verdicts_of(self.timeline))

    @property
    def settled_verdicts(self) -> list[Verdict]:
        """The verdicts published so far: those later audio can no longer change (each once its
        ``settle_s`` is behind the settled horizon; see ``_publish_settled``), in publishing order.
        ``verdicts`` also holds the provisional ones (a barge-in still in progress reads
        "talked_through" until the agent's yield is heard)."""
        with self._lock:
            return list(self._verdicts_settled)

    @property
    def speaking(self) -> dict[Channel, bool]:
        """Whether each channel is in speech right now (VAD state)."""
        return {c: self._vads[c].open_onset_s is not None for c in CHANNELS}

    @property
    def judge_results(self) -> list[JudgeResult]:
        with self._results_lock:
            return list(self._results)

    @property
    def notes(self) -> list[Note]:
        with self._lock:
            return list(self._notes)

    @property
    def dropped_windows(self) -> int:
        return self._scheduler.dropped_for(self._key) if self._scheduler else 0

    def _publish_settled(self, final: bool) -> None:
        """Publish turn-level events that later audio can no longer change.

        An event is published once its settle time (``timeline.settle_items``) is at least
        ``merge_pause_s + backchannel_max_s`` before where every channel's VAD has read to (or
        before an open segment's onset). Work per call is bounded by the unsettled tail: events
        of the settled prefix are handed over once (``IncrementalTimeline.settle``), never
        rescanned.
        """
        self._absorb()
        if final:
            horizon = float("inf")
            frontier = {c: float("inf") for c in CHANNELS}
        else:
            edges = []
            for c in CHANNELS:
                v = self._vads[c]
                floor = getattr(v, "onset_floor_s", None)  # reach of the VAD's onset refinement
                edges.append(float(floor) if floor is not None else
                             (v.open_onset_s if v.open_onset_s is not None else v.time_s))
            horizon = min(edges) - self.config.turns.merge_pause_s - self.config.turns.backchannel_max_s
            frontier = self._frontiers()
        for key, ev in self._timeline.settle(frontier):
            if ev in self._published:
                self._published.discard(ev)  # published while in the tail; final now
            else:
                self._pending_seq += 1
                heapq.heappush(self._pending, (key, self._pending_seq, ev))
        due = [kv for kv in settle_items(self._timeline.tail_timeline())
               if kv[0][0] <= horizon and kv[1] not in self._published]
        while self._pending and self._pending[0][0][0] <= horizon:
            key, _, ev = heapq.heappop(self._pending)
            due.append((key, ev))
        due.sort(key=lambda kv: kv[0])
        ended = self._ended(self._timeline.timeline(self._open_segments())) if final and due else None
        for _, ev in due:
            if event_key_s(ev) >= self._timeline.cut_s:
                self._published.add(ev)  # still in the tail: remembered until it settles
            self._publish(ev if ended is None else self._marked_cut(ev, ended))
            if (self.transcriber is not None and isinstance(ev, Turn)
                    and ev.channel in self.transcribe_channels):
                audio = self._window.read_channel(ev.channel, ev.onset_s, ev.offset_s)
                if self.config.judge_mode == "every":
                    # offline scoring runs faster than the ASR worker: transcribe now, so every later
                    # window holds the text, as in a live replay (where the text arrives in time)
                    self._on_transcript(self.transcriber.transcribe(ev, audio))
                else:
                    self.transcriber.submit(ev, audio, self._on_transcript)
        self._publish_verdicts(horizon, final)

    VERDICT_CONTEXT_S = 30.0
    """Live verdicts look back this far for context, and give up on moments that stay unsettled
    longer (those are published at ``close``), so their cost per update stays flat, seconds."""

    def _publish_verdicts(self, horizon: float, final: bool) -> None:
        """Publish each verdict once, when its ``settle_s`` is behind ``horizon`` (under the lock)."""
        if final:
            found = self._find_verdicts(self._ended(self._timeline.timeline()))
        else:
            lo = self._verdict_lo_s
            if horizon <= lo or horizon == -float("inf"):
                return
            start = max(lo, horizon - 2 * self.VERDICT_CONTEXT_S)  # the earliest moment looked for
            w = self._timeline.window(start - self.VERDICT_CONTEXT_S, horizon, self._open_segments())
            found = [v for v in self._find_verdicts(Timeline(**w))
                     if v.settle_s <= horizon and v.t_s >= start]
            self._verdict_lo_s = max(lo, horizon - self.VERDICT_CONTEXT_S)
        for v in found:
            if v.key not in self._verdict_keys:
                self._verdict_keys.add(v.key)
                self._verdicts_settled.append(v)
                self._publish(v)

    def _on_transcript(self, tr: TurnTranscript) -> None:
        # runs in the transcriber's thread
        with self._results_lock:
            bisect.insort(self._transcripts, tr, key=lambda t: t.onset_s)
            self._transcript_max_s = max(self._transcript_max_s, tr.offset_s - tr.onset_s)
        self._publish(tr)

    @property
    def transcripts(self) -> list[TurnTranscript]:
        with self._results_lock:
            return list(self._transcripts)

    def _transcripts_in(self, start_s: float, end_s: float) -> tuple[TurnTranscript, ...]:
        """Transcripts overlapping [start_s, end_s), by bisection (no scan of the call)."""
        with self._results_lock:
            trs = self._transcripts
            lo = bisect.bisect_right(trs, start_s - self._transcript_max_s - 1e-6, key=lambda t: t.onset_s)
            hi = bisect.bisect_left(trs, end_s, key=lambda t: t.onset_s)
            return tuple(t for t in trs[lo:hi] if t.offset_s > start_s and t.onset_s < end_s)

    # ------------------------------------------------------------------ judge input
    def snapshot(self, end_s: float | None = None) -> WindowSnapshot:
        """Both channels' last ``window_s`` before ``end_s`` (default: now) and their events."""
        with self._lock:
            end = self.covered_s if end_s is None else end_s
            start, user, agent = self._window.read(end, self.config.window_s)
            self._absorb()
            events = self._timeline.window(start, end, self._open_segments())
        return WindowSnapshot(start_s=start, end_s=end, user=user, agent=agent,
                              transcripts=self._transcripts_in(start, end), **events)

    # ------------------------------------------------------------------ output
    def result(self) -> dict:
        """The result document (see ``livejudge.outputs.report``) of everything measured so far."""
        from livejudge.outputs.report import build_result

        with self._lock:
            if self._closed_result is not None:
                return self._closed_result
            return build_result(self)

    def close(self, drain_judge: bool = True) -> dict:
        """End the stream: flush the VADs, judge the final window, return the result.

        Safe to call more than once and after an error; sinks get ``on_close`` once.
        """
        worker = self._health_thread
        if worker is not None:  # the live health check says its warnings (it takes the lock) first
            worker.join(timeout=10.0)
        with self._lock:
            if self._closed_result is not None:
                return self._closed_result
            self._finish_health()
            self._say_late_total()
            for c in CHANNELS:
                tail = self._vads[c].flush()
                self._segments.extend(tail)
                for s in tail:
                    self._publish(s)
            self._warn_no_speech()
            self._warn_changing_floor()
            self._end_s = self.now_s
            self._publish_settled(final=True)
            tl = self.timeline
            cut = ([("barge_in", b.onset_s, "barge-in", "yield or talk-through") for b in tl.barge_ins
                    if self._marked_cut(b, tl).cut_by_end]
                   + [("backchannel", b.onset_s, "backchannel", "held or stopped for") for b in tl.backchannels
                      if self._marked_cut(b, tl).cut_by_end])
            for kind, t, name, what in sorted(cut, key=lambda c: c[1]):  # said, not silently left out
                n = Note(f"{kind}_cut_by_end", t, {
                    "message": f"the call ended during the caller's {name} at {t:.2f} s: the agent's answer to it "
                               f"({what}) is not judged"})
                self._notes.append(n)
                self._publish(n)
            if self._notes_dropped:  # one line for what the bound left out (never silently)
                n = Note("notes_dropped", self.now_s, {"max_notes": MAX_NOTES, "by_kind": dict(self._notes_dropped)})
                self._notes.append(n)
                self._publish(n)
        if self.transcriber is not None:
            self.transcriber.close(wait=drain_judge)  # the last turns' text joins the final window
        if self._scheduler is not None:
            if drain_judge and self.covered_s > self._last_submitted_s + 1e-6:
                self._submit([self.snapshot(self.covered_s)])
            self._scheduler.release(self._key, drain=drain_judge)
        with self._results_lock:
            self._results.sort(key=lambda r: r.t_s)
        with self._lock:
            from livejudge.outputs.report import build_result

            self._closed_result = build_result(self)
        for s in self.sinks:
            try:
                s.on_close(self._closed_result)
            except Exception as exc:
                self._on_error(f"sink {type(s).__name__} failed on close: {exc}")
        return self._closed_result


LATE_TOLERANCE_SAMPLES = int(0.005 * SAMPLE_RATE)
"""A push overlapping what a channel holds by up to this many samples (5 ms: timestamps rounded or
jittering) is not read as late audio; its overlap is still dropped and counted."""
LATE_SAY_S = 0.1
"""Dropped audio of a channel, seconds, past which the session says so once (in ``errors``)."""
LATE_MARGIN_S = 0.1
"""Added to the lateness seen when the wait (``max_lag_s``) is raised to cover it, seconds."""
MAX_LAG_CAP_S = 5.0
"""HEURISTIC: the longest the session waits for a trailing channel, seconds; segments, verdicts and
the meter run that much behind the leading channel at most."""

SILENCE_BLOCK_S = 10.0
"""Longest block of silence fed at once when a channel's clock jumps, seconds (bounds memory)."""


def _silence(n: int) -> np.ndarray:
    """``n`` samples of float32 silence (``n`` ≤ SILENCE_BLOCK_S · 16 kHz: one shared, read-only buffer)."""
    global _SILENCE
    if len(_SILENCE) < n:
        _SILENCE = np.zeros(int(SILENCE_BLOCK_S * SAMPLE_RATE), dtype=np.float32)
        _SILENCE.flags.writeable = False
    return _SILENCE[:n]


_SILENCE = np.zeros(0, dtype=np.float32)

MAX_ABS_TIME_S = 1e9
"""Largest session time accepted, seconds (~32 years; larger ones overflow sample indices)."""


def _checked_time(t_s: Any) -> float:
    """A finite session time in seconds, or ValueError naming the value."""
    if type(t_s) is float and -MAX_ABS_TIME_S <= t_s <= MAX_ABS_TIME_S:  # common case (NaN fails the test)
        return t_s
    if isinstance(t_s, (bool, str, bytes)) or not isinstance(t_s, (numbers.Real, np.generic)):
        # a string "0.02" was read as 0.02 (a trial): docs/python.md says non-numeric times are refused
        raise ValueError(f"t_s must be a number of seconds, got {t_s!r}")
    try:
        t = float(t_s)
    except (TypeError, ValueError):
        raise ValueError(f"t_s must be a number of seconds, got {t_s!r}") from None
    if not np.isfinite(t):
        raise ValueError(f"t_s must be finite, got {t}")
    if abs(t) > MAX_ABS_TIME_S:
        raise ValueError(f"t_s must be within ±{MAX_ABS_TIME_S:.0e} s of the session start, got {t:.3g}")
    return t


def window_from_timeline(tl: Timeline, start_s: float, end_s: float, user: np.ndarray,
                         agent: np.ndarray, transcripts: list[TurnTranscript] | tuple = ()) -> WindowSnapshot:
    """Build a WindowSnapshot: audio plus the timeline's events that fall in [start_s, end_s]."""

    def inside(a: float, b: float) -> bool:
        return b > start_s and a < end_s

    return WindowSnapshot(
        start_s=start_s,
        end_s=end_s,
        user=user,
        agent=agent,
        segments=tuple(s for s in tl.segments if inside(s.onset_s, s.offset_s)),
        turns=tuple(t for t in tl.turns if inside(t.onset_s, t.offset_s)),
        transitions=tuple(t for t in tl.transitions if start_s <= t.to_onset_s < end_s),
        barge_ins=tuple(b for b in tl.barge_ins if start_s <= b.onset_s < end_s),
        backchannels=tuple(b for b in tl.backchannels if start_s <= b.onset_s < end_s),
        transcripts=tuple(t for t in transcripts if inside(t.onset_s, t.offset_s)),
    )


def snapshot_of_call(call: TwoChannelAudio, config: SessionConfig | None = None,
                     transcriber: Transcriber | None = None,
                     transcribe_channels: tuple[Channel, ...] = ("agent",),
                     read_ahead: bool = False) -> WindowSnapshot:
    """VAD and turn-taking over a whole recorded call, as one WindowSnapshot covering it.

    Used to embed whole calls for training and evaluation. Audio: float32 16 kHz per channel.
    With a transcriber, each turn of ``transcribe_channels`` is transcribed (blocking).
    """
    from livejudge.timing.frontend import highpass
    from livejudge.timing.vad import detect_segments

    cfg = (config or SessionConfig()).validate()
    if cfg.vad.highpass_hz is not None:  # the same front end as a live Session's
        call = TwoChannelAudio(highpass(call.user, cfg.vad.highpass_hz), highpass(call.agent, cfg.vad.highpass_hz),
                               call.sample_rate_in, call.channels)
        cfg = replace(cfg, vad=replace(cfg.vad, highpass_hz=None))
    # read_ahead: the noise floor read from the call's first seconds, as score reads a recording
    # (Session.prime_noise_floor); the judge's training and evaluation keep it off (as computed)
    segs = (detect_segments(call.user, "user", cfg.vad, read_ahead=read_ahead)
            + detect_segments(call.agent, "agent", cfg.vad, read_ahead=read_ahead))
    tl = analyze(segs, cfg.turns)
    transcripts = []
    if transcriber is not None:
        for t in tl.turns:
            if t.channel in transcribe_channels:
                a, b = int(t.onset_s * SAMPLE_RATE), int(t.offset_s * SAMPLE_RATE)
                transcripts.append(transcriber.transcribe(t, (call.user if t.channel == "user" else call.agent)[a:b]))
    return window_from_timeline(tl, 0.0, call.duration_s, call.user, call.agent, transcripts)


def _chunks(call: Any, step: int):
    """(first sample index, user chunk, agent chunk) of ``step`` samples from a TwoChannelAudio or,
    block by block, from a ``CallReader``; the same chunks either way."""
    if isinstance(call, TwoChannelAudio):
        for i in range(0, len(call.user), step):
            yield i, call.user[i:i + step], call.agent[i:i + step]
        return
    i = 0
    cu = ca = np.zeros(0, dtype=np.float32)
    for u, a in call.blocks():
        if cu.size:
            u, a = np.concatenate([cu, u]), np.concatenate([ca, a])
        m = len(u) - len(u) % step
        for k in range(0, m, step):
            yield i, u[k:k + step], a[k:k + step]
            i += step
        cu, ca = u[m:], a[m:]
    if cu.size:
        yield i, cu, ca


def stream_call(session: Session, call: Any, *, chunk_s: float = 0.02,
                speed: float | None = None, on_progress: Callable[[float], None] | None = None,
                stop: threading.Event | None = None) -> None:
    """Push a recorded call into a session chunk by chunk, like a live source would.

    Args:
        call: a ``TwoChannelAudio`` (in memory) or a ``livejudge.audio.CallReader`` (read block
            by block: memory stays flat however long the file).
        chunk_s: chunk length, seconds (20 ms, like a transport frame).
        speed: 1.0 = real time, 2.0 = twice as fast, None = as fast as possible.
        on_progress: called with the session time reached, at most ~10 times a second.
        stop: set it to end early (the session is left open for the caller to close).
    """
    n = len(call.user) if isinstance(call, TwoChannelAudio) else call.n_samples
    step = max(1, int(round(chunk_s * SAMPLE_RATE)))
    t0 = time.perf_counter()
    last_progress = 0.0
    for i, u, a in _chunks(call, step):
        if stop is not None and stop.is_set():
            return
        t_s = i / SAMPLE_RATE
        if speed is not None:
            due = t0 + t_s / speed
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
        session.push("user", u, t_s)
        session.push("agent", a, t_s)
        if on_progress is not None:
            now = time.perf_counter()
            if now - last_progress > 0.1:
                last_progress = now
                on_progress((i + len(u)) / SAMPLE_RATE)
    if on_progress is not None:
        on_progress(n / SAMPLE_RATE)


__all__ = [
    "Backchannel", "BargeIn", "Note", "Session", "SessionConfig", "Sink", "Transition", "Turn",
    "snapshot_of_call", "stream_call", "window_from_timeline",
]
