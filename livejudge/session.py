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
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Literal, Protocol

import numpy as np

from .audio import SAMPLE_RATE, StreamResampler, TwoChannelAudio
from .events import (
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
from .metrics import Summary, summarize
from .turns import Timeline, TurnConfig, analyze
from .frontend import StreamingHighPass
from .vad import StreamingVAD, VADConfig
from .window import RollingWindow, WindowSnapshot


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
        max_lag_s: how far one channel may trail the other before silence is filled in.
    """

    window_s: float = 30.0
    interval_s: float = 2.0
    vad: VADConfig = field(default_factory=VADConfig)
    turns: TurnConfig = field(default_factory=TurnConfig)
    judge_mode: Literal["live", "every"] = "live"
    max_lag_s: float = 0.5

    def validate(self) -> "SessionConfig":
        if self.window_s <= 0:
            raise ValueError(f"--window-s must be positive, got {self.window_s}")
        if self.interval_s <= 0:
            raise ValueError(f"--interval-s must be positive, got {self.interval_s}")
        self.vad.validate()
        return self


class Session:
    """One judged conversation. Thread-safe: sources may push from different threads.

    Args:
        config: SessionConfig (defaults: 30 s window judged every 2 s).
        judge: a Judge (``livejudge.judge.judge.Judge``) or None to measure timing only.
        sinks: receivers of events and of the final result.
        info: JSON-ready facts about the source for the result document
            (e.g. ``{"sample_rate_in": 48000, "channels": {"user": 0, "agent": 1}}``).
        transcriber: optional ASR; each settled turn of ``transcribe_channels`` is transcribed
            once, in the transcriber's own worker, and the text joins later judge windows.
        transcribe_channels: whose turns to transcribe (default: the agent's).
        scheduler: a ``JudgeScheduler`` shared with other sessions, so windows due together
            are judged in one batch (default: a scheduler of this session's own, for ``judge``).
    """

    def __init__(self, config: SessionConfig | None = None, judge: Any = None,
                 sinks: list[Sink] | tuple = (), info: dict | None = None,
                 transcriber: Transcriber | None = None,
                 transcribe_channels: tuple[Channel, ...] = ("agent",),
                 scheduler: Any = None) -> None:
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
        self._window = RollingWindow(self.config.window_s)
        self._segments: list[SpeechSegment] = []
        self._published: set = set()
        self._notes: list[Note] = []
        self._results: list[JudgeResult] = []
        self._resamplers: dict[tuple[Channel, int], StreamResampler] = {}
        self._next_judge_s = self.config.interval_s
        self._last_submitted_s = 0.0  # end of the newest window handed to the judge
        self._timeline_cache: tuple[Any, Timeline] | None = None
        self._closed_result: dict | None = None
        self._scheduler = None
        self.errors: list[str] = []
        self.transcriber = transcriber
        self.transcribe_channels = tuple(transcribe_channels)
        self._transcripts: list[TurnTranscript] = []
        self._key = id(self)
        if scheduler is not None:
            self._scheduler = scheduler
            self.judge = judge if judge is not None else scheduler.judge
            scheduler.start()
        elif judge is not None:
            from .judge.scheduler import JudgeScheduler

            self._scheduler = JudgeScheduler(judge, None, self.config.judge_mode, on_error=self._on_error)
            self._scheduler.start()

    # ------------------------------------------------------------------ input
    def push(self, channel: Channel, samples: np.ndarray, t_s: float) -> None:
        """Feed audio of one channel.

        Args:
            channel: "user" or "agent".
            samples: float32 mono, shape (n_samples,), 16 kHz, in [-1, 1].
            t_s: session time of the first sample, seconds. A gap since the channel's last
                sample is filled with silence; samples before it (late or repeated) are dropped.
        Raises:
            ValueError: unknown channel, or the session is closed.
        """
        if channel not in CHANNELS:
            raise ValueError(f"channel must be 'user' or 'agent', got {channel!r}")
        x = np.asarray(samples, dtype=np.float32).reshape(-1)
        with self._lock:
            if self._closed_result is not None:
                raise ValueError("session is closed; start a new Session")
            start = int(round(t_s * SAMPLE_RATE))
            end = self._end[channel]
            if start > end:
                self._feed(channel, np.zeros(start - end, dtype=np.float32))
            elif start < end:
                x = x[end - start:]
            if x.size:
                self._feed(channel, x)
            self._fill_lagging()
            due = self._due_windows()
        self._submit(due)

    def push_audio(self, channel: Channel, samples: np.ndarray, sample_rate: int, t_s: float) -> None:
        """``push`` for audio at any sample rate (float32 mono); resampled to 16 kHz per stream."""
        if sample_rate != SAMPLE_RATE:
            key = (channel, int(sample_rate))
            rs = self._resamplers.get(key)
            if rs is None:
                rs = self._resamplers[key] = StreamResampler(int(sample_rate))
            samples = rs(samples)
        self.push(channel, samples, t_s)

    def advance(self, now_s: float) -> None:
        """Tell the session the clock reached ``now_s`` (fills silent channels, runs the judge)."""
        with self._lock:
            if self._closed_result is not None:
                return
            target = int(round((now_s - self.config.max_lag_s) * SAMPLE_RATE))
            for c in CHANNELS:
                if target > self._end[c]:
                    self._feed(c, np.zeros(target - self._end[c], dtype=np.float32))
            due = self._due_windows()
        self._submit(due)

    def note(self, kind: str, t_s: float | None = None, **data: Any) -> Note:
        """Record a framework/protocol event next to the acoustic timing (never used for it)."""
        n = Note(kind, self.now_s if t_s is None else float(t_s), data)
        with self._lock:
            self._notes.append(n)
        self._publish(n)
        return n

    def add_sink(self, sink: Sink) -> None:
        self.sinks.append(sink)

    # ------------------------------------------------------------------ internals
    def _feed(self, channel: Channel, x: np.ndarray) -> None:
        t_s = self._end[channel] / SAMPLE_RATE
        if self._highpass is not None:
            x = self._highpass[channel](x)
        self._window.write(channel, x, t_s)
        self._end[channel] += len(x)
        new = self._vads[channel].push(x)
        if new:
            self._segments.extend(new)
            for s in new:
                self._publish(s)
            self._publish_settled(final=False)

    def _fill_lagging(self) -> None:
        lead = max(self._end.values())
        lag = int(self.config.max_lag_s * SAMPLE_RATE)
        for c in CHANNELS:
            if lead - self._end[c] > lag:
                self._feed(c, np.zeros(lead - lag - self._end[c], dtype=np.float32))

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
        self.errors.append(message)
        if len(self.errors) <= 3:
            print(f"livejudge: {message}", file=sys.stderr)

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

    @property
    def timeline(self) -> Timeline:
        """Turn-taking analysis of everything so far, including speech still in progress."""
        with self._lock:
            open_segs = self._open_segments()
            key = (len(self._segments), tuple(open_segs))
            if self._timeline_cache is None or self._timeline_cache[0] != key:
                self._timeline_cache = (key, analyze(self._segments + open_segs, self.config.turns))
            return self._timeline_cache[1]

    @property
    def summary(self) -> Summary:
        return summarize(self.timeline)

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
        """Publish turn-level events that later audio can no longer change."""
        tl = analyze(self._segments, self.config.turns)
        if final:
            horizon = float("inf")
        else:
            edges = []
            for c in CHANNELS:
                v = self._vads[c]
                edges.append(v.open_onset_s if v.open_onset_s is not None else v.time_s)
            horizon = min(edges) - self.config.turns.merge_pause_s - self.config.turns.backchannel_max_s
        turn_end = {(t.channel, t.onset_s): t.offset_s for t in tl.turns}
        items: list[tuple[float, object]] = []
        items += [(t.offset_s, t) for t in tl.turns]
        items += [(b.offset_s, b) for b in tl.backchannels]
        items += [(turn_end.get((t.to_channel, t.to_onset_s), t.to_onset_s), t) for t in tl.transitions]
        items += [(turn_end.get((b.by, b.onset_s), b.onset_s), b) for b in tl.barge_ins]
        for settle_t, ev in sorted(items, key=lambda x: x[0]):
            if settle_t <= horizon and ev not in self._published:
                self._published.add(ev)
                self._publish(ev)
                if (self.transcriber is not None and isinstance(ev, Turn)
                        and ev.channel in self.transcribe_channels):
                    audio = self._window.read_channel(ev.channel, ev.onset_s, ev.offset_s)
                    self.transcriber.submit(ev, audio, self._on_transcript)

    def _on_transcript(self, tr: TurnTranscript) -> None:
        # runs in the transcriber's thread
        with self._results_lock:
            self._transcripts.append(tr)
        self._publish(tr)

    @property
    def transcripts(self) -> list[TurnTranscript]:
        with self._results_lock:
            return sorted(self._transcripts, key=lambda t: t.onset_s)

    # ------------------------------------------------------------------ judge input
    def snapshot(self, end_s: float | None = None) -> WindowSnapshot:
        """Both channels' last ``window_s`` before ``end_s`` (default: now) and their events."""
        end = self.covered_s if end_s is None else end_s
        start, user, agent = self._window.read(end, self.config.window_s)
        return window_from_timeline(self.timeline, start, end, user, agent, self.transcripts)

    # ------------------------------------------------------------------ output
    def result(self) -> dict:
        """The result document (see ``livejudge.report``) of everything measured so far."""
        from .report import build_result

        with self._lock:
            if self._closed_result is not None:
                return self._closed_result
            return build_result(self)

    def close(self, drain_judge: bool = True) -> dict:
        """End the stream: flush the VADs, judge the final window, return the result.

        Safe to call more than once and after an error; sinks get ``on_close`` once.
        """
        with self._lock:
            if self._closed_result is not None:
                return self._closed_result
            for c in CHANNELS:
                tail = self._vads[c].flush()
                self._segments.extend(tail)
                for s in tail:
                    self._publish(s)
            self._timeline_cache = None
            self._publish_settled(final=True)
        if self.transcriber is not None:
            self.transcriber.close(wait=drain_judge)  # the last turns' text joins the final window
        if self._scheduler is not None:
            if drain_judge and self.covered_s > self._last_submitted_s + 1e-6:
                self._submit([self.snapshot(self.covered_s)])
            self._scheduler.release(self._key, drain=drain_judge)
        with self._results_lock:
            self._results.sort(key=lambda r: r.t_s)
        with self._lock:
            from .report import build_result

            self._closed_result = build_result(self)
        for s in self.sinks:
            try:
                s.on_close(self._closed_result)
            except Exception as exc:
                self._on_error(f"sink {type(s).__name__} failed on close: {exc}")
        return self._closed_result


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
                     transcribe_channels: tuple[Channel, ...] = ("agent",)) -> WindowSnapshot:
    """VAD and turn-taking over a whole recorded call, as one WindowSnapshot covering it.

    Used to embed whole calls for training and evaluation. Audio: float32 16 kHz per channel.
    With a transcriber, each turn of ``transcribe_channels`` is transcribed (blocking).
    """
    from .frontend import highpass
    from .vad import detect_segments

    cfg = (config or SessionConfig()).validate()
    if cfg.vad.highpass_hz is not None:  # the same front end as a live Session's
        call = TwoChannelAudio(highpass(call.user, cfg.vad.highpass_hz), highpass(call.agent, cfg.vad.highpass_hz),
                               call.sample_rate_in, call.channels)
        cfg = replace(cfg, vad=replace(cfg.vad, highpass_hz=None))
    segs = detect_segments(call.user, "user", cfg.vad) + detect_segments(call.agent, "agent", cfg.vad)
    tl = analyze(segs, cfg.turns)
    transcripts = []
    if transcriber is not None:
        for t in tl.turns:
            if t.channel in transcribe_channels:
                a, b = int(t.onset_s * SAMPLE_RATE), int(t.offset_s * SAMPLE_RATE)
                transcripts.append(transcriber.transcribe(t, (call.user if t.channel == "user" else call.agent)[a:b]))
    return window_from_timeline(tl, 0.0, call.duration_s, call.user, call.agent, transcripts)


def stream_call(session: Session, call: TwoChannelAudio, *, chunk_s: float = 0.02,
                speed: float | None = None, on_progress: Callable[[float], None] | None = None,
                stop: threading.Event | None = None) -> None:
    """Push a recorded call into a session chunk by chunk, like a live source would.

    Args:
        chunk_s: chunk length, seconds (20 ms, like a transport frame).
        speed: 1.0 = real time, 2.0 = twice as fast, None = as fast as possible.
        on_progress: called with the session time reached, at most ~10 times a second.
        stop: set it to end early (the session is left open for the caller to close).
    """
    n = len(call.user)
    step = max(1, int(round(chunk_s * SAMPLE_RATE)))
    t0 = time.perf_counter()
    last_progress = 0.0
    for i in range(0, n, step):
        if stop is not None and stop.is_set():
            return
        t_s = i / SAMPLE_RATE
        if speed is not None:
            due = t0 + t_s / speed
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
        session.push("user", call.user[i:i + step], t_s)
        session.push("agent", call.agent[i:i + step], t_s)
        if on_progress is not None:
            now = time.perf_counter()
            if now - last_progress > 0.1:
                last_progress = now
                on_progress((i + step) / SAMPLE_RATE)
    if on_progress is not None:
        on_progress(n / SAMPLE_RATE)


__all__ = [
    "Backchannel", "BargeIn", "Note", "Session", "SessionConfig", "Sink", "Transition", "Turn",
    "snapshot_of_call", "stream_call", "window_from_timeline",
]
