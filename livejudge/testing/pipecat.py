"""A scripted Pipecat conversation with a known timeline, for tests, the benchmark and the example.

Pieces (all real Pipecat processors, run by a real ``PipelineWorker``):

* ``ScriptedInputTransport`` — a ``BaseInputTransport`` whose "client" is a
  ``DialogueBuilder`` user channel, delivered in ``chunk_s`` chunks at the sample rate of
  the transport: chunk k (samples [k·d, (k+1)·d)) arrives at (k+1)·d.
* ``ScriptedAgent`` — a speech-to-speech-like service that plays the dialogue's agent part at
  its scripted times (its known answer delays): ``mode="tts"`` bursts each reply as
  ``TTSAudioRawFrame``s between ``TTSStarted/StoppedFrame`` (faster than real time, like TTS
  services) and pushes an ``InterruptionFrame`` at each scripted yield, so the output
  transport really cuts the reply; ``mode="continuous"`` streams the whole agent channel,
  silence included, as real-time ``SpeechOutputAudioRawFrame``s and never interrupts
  (full-duplex services).
* ``PacedOutputTransport`` — a ``BaseOutputTransport`` that paces playout exactly like
  Pipecat's websocket transports (send, then sleep until the next chunk's playout time) and
  records what it played.
* ``VirtualClock`` / ``RealClock`` — the pipeline clock. With the virtual clock a driver
  advances time in ``tick_s`` steps and lets the event loop settle in between, so a 15 s
  conversation runs in about a second and every push timestamp is exact and deterministic.
  Pipecat parts that read wall time (``time.time()``: bot-speaking frame periods, VAD frame
  ``timestamp`` fields) still see real time; livejudge only uses push timestamps. Work that
  Pipecat sends to a thread pool (Silero's analyzer) must run inline (``InlineExecutor``)
  or virtual time runs on without it.
* ``run_scripted`` wires them into a ``PipelineWorker`` and can add bunching, push jitter
  and a stall, to test robustness.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import heapq
import itertools
import time
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from pipecat.clocks.base_clock import BaseClock
from pipecat.frames.frames import (
    EndFrame,
    Frame,
    InputAudioRawFrame,
    InterruptionFrame,
    OutputAudioRawFrame,
    SpeechOutputAudioRawFrame,
    StartFrame,
    TTSAudioRawFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.transports.base_input import BaseInputTransport
from pipecat.transports.base_output import BaseOutputTransport
from pipecat.transports.base_transport import TransportParams

from livejudge.audio import SAMPLE_RATE, float32_to_pcm16, resample
from livejudge.testing.dialogues import Dialogue, load_clip, trim

NS = 1_000_000_000


class VirtualClock(BaseClock):
    """Pipeline clock under test control: ``advance_to`` moves time and wakes sleepers."""

    def __init__(self) -> None:
        self.now_ns = 0
        self._heap: list = []
        self._seq = itertools.count()

    def get_time(self) -> int:
        return self.now_ns

    def start(self) -> None:
        pass

    async def sleep_until(self, t_ns: int) -> None:
        if t_ns <= self.now_ns:
            return
        fut = asyncio.get_running_loop().create_future()
        heapq.heappush(self._heap, (t_ns, next(self._seq), fut))
        await fut

    def advance_to(self, t_ns: int) -> None:
        self.now_ns = max(self.now_ns, t_ns)
        while self._heap and self._heap[0][0] <= self.now_ns:
            _, _, fut = heapq.heappop(self._heap)
            if not fut.done():
                fut.set_result(None)


class RealClock(BaseClock):
    """Monotonic pipeline clock (like Pipecat's SystemClock) with ``sleep_until``."""

    def __init__(self) -> None:
        self._t0 = 0

    def get_time(self) -> int:
        return time.monotonic_ns() - self._t0 if self._t0 else 0

    def start(self) -> None:
        self._t0 = time.monotonic_ns()

    async def sleep_until(self, t_ns: int) -> None:
        d = (t_ns - self.get_time()) / NS
        if d > 0:
            await asyncio.sleep(d)


def pcm(x: np.ndarray, rate: int) -> bytes:
    """float32 16 kHz → s16le bytes at ``rate``."""
    return float32_to_pcm16(resample(x, SAMPLE_RATE, rate))


class ScriptedInputTransport(BaseInputTransport):
    """Input transport fed by ``feed(samples_bytes)`` (see module docstring)."""

    def __init__(self, sample_rate: int, **kwargs) -> None:
        super().__init__(TransportParams(audio_in_enabled=True, audio_in_sample_rate=sample_rate,
                                         audio_in_passthrough=True), **kwargs)
        self.rate = sample_rate
        self.ready = asyncio.Event()

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)
        self.ready.set()

    async def feed(self, audio: bytes) -> None:
        await self.push_audio_frame(InputAudioRawFrame(audio=audio, sample_rate=self.rate, num_channels=1))


class PacedOutputTransport(BaseOutputTransport):
    """Output transport paced like Pipecat's websocket transports; ``played`` lists
    (push time ns, s16le bytes) of every chunk it let through.

    ``buffer_s`` > 0 models a transport with a client-side buffer instead (LiveKit's
    ``AudioSource``: ``capture_frame`` returns while its queue, ``audio_out_queue_size_ms``, default
    1000 ms in Pipecat's ``LiveKitTransport``, has room; an ``InterruptionFrame`` clears the queue):
    ``write_audio_frame`` returns once the chunk is queued, and ``played`` lists when each chunk
    starts playing, without what an interruption cleared."""

    def __init__(self, clock, sample_rate: int, chunk_10ms: int = 2, jitter_s: float = 0.0,
                 stall: tuple[float, float] | None = None, seed: int = 0, buffer_s: float = 0.0,
                 **kwargs) -> None:
        super().__init__(TransportParams(audio_out_enabled=True, audio_out_sample_rate=sample_rate,
                                         audio_out_10ms_chunks=chunk_10ms, audio_out_end_silence_secs=0),
                         **kwargs)
        self.clock = clock
        self.rate = sample_rate
        self._next_ns = 0
        self.played: list[tuple[int, bytes]] = []
        self.jitter_ns = int(jitter_s * NS)
        self.stall = stall  # (at_s, for_s): one late push, then the pacing catches up
        self._rng = np.random.default_rng(seed)
        self.buffer_ns = int(buffer_s * NS)
        self._play_end_ns = 0

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)

    async def process_frame(self, frame, direction) -> None:
        if self.buffer_ns and isinstance(frame, InterruptionFrame):  # the client's queue is cleared
            now = self.clock.get_time()
            self.played = [p for p in self.played if p[0] < now]
            if self.played and self.played[-1][0] + len(self.played[-1][1]) // 2 * NS // self.rate > now:
                t0, audio = self.played[-1]  # the chunk playing now: its head was played
                self.played[-1] = (t0, audio[: 2 * int((now - t0) * self.rate // NS)])
            self._play_end_ns = min(self._play_end_ns, now)
        await super().process_frame(frame, direction)

    async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
        interval = int(len(frame.audio) // 2 * NS // self.rate)
        now = self.clock.get_time()
        if self.buffer_ns:  # queued on the client: plays when the queue before it has played
            start = max(now, self._play_end_ns)
            self._play_end_ns = start + interval
            self.played.append((start, frame.audio))
            if self._play_end_ns - self.buffer_ns > now:
                await self.clock.sleep_until(self._play_end_ns - self.buffer_ns)
            return True
        late = int(self._rng.integers(0, self.jitter_ns + 1)) if self.jitter_ns else 0
        if self.stall and now >= self.stall[0] * NS:
            late, self.stall = late + int(self.stall[1] * NS), None
        if self._next_ns > now:
            await self.clock.sleep_until(self._next_ns + late)  # late push; the schedule stays
            self._next_ns += interval
        else:
            await self.clock.sleep_until(now + late)
            self._next_ns = now + interval
        self.played.append((self.clock.get_time(), frame.audio))
        return True


@dataclass
class AgentUtterance:
    """One scripted agent reply: audio from ``start_s`` (16 kHz float32) and an optional
    interruption time (the scripted yield)."""

    start_s: float
    audio: np.ndarray
    interrupt_s: float | None = None


def agent_script(d: Dialogue, tick_s: float = 0.01) -> list[AgentUtterance]:
    """The agent part of a built dialogue as replies. Each starts on the tick at or before the
    scripted onset (the lead-in is the channel's own noise floor); a reply the user cut off
    is scripted in full with an interruption at the cut, so the transport does the cutting."""
    out = []
    x = d.call.agent
    for p in d.truth.placed:
        if p.channel != "agent":
            continue
        t0 = np.floor(p.onset_s / tick_s) * tick_s
        a, on = int(round(t0 * SAMPLE_RATE)), int(round(p.onset_s * SAMPLE_RATE))
        full = trim(load_clip(p.clip)) if p.clip != "<array>" else None
        cut_at = next((b.onset_s + b.yield_s for b in d.truth.barge_ins
                       if b.by == "user" and b.yield_s is not None and p.onset_s < b.onset_s < p.offset_s), None)
        if full is not None and cut_at is not None:
            audio = np.concatenate([x[a:on], full])
            out.append(AgentUtterance(t0, audio, cut_at))
        else:
            b = int(round((p.offset_s + 0.02) * SAMPLE_RATE))
            out.append(AgentUtterance(t0, x[a:b].copy()))
    return out


class ScriptedAgent(FrameProcessor):
    """S2S-like service that answers at scripted times (see module docstring)."""

    def __init__(self, clock, dialogue: Dialogue, sample_rate: int,
                 mode: Literal["tts", "continuous"] = "tts", chunk_s: float = 0.02,
                 tts_piece_s: float = 0.1, tick_s: float = 0.01, consume_user_audio: bool = True,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.consume_user_audio = consume_user_audio
        self.clock = clock
        self.dialogue = dialogue
        self.rate = sample_rate
        self.mode = mode
        self.chunk_s = chunk_s
        self.tts_piece_s = tts_piece_s
        self.tick_s = tick_s
        self._task: asyncio.Task | None = None
        self.emitted_s: list[float] = []  # when each reply / stream began, pipeline seconds

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame) and self.consume_user_audio:
            return  # speech-to-speech services consume the user's audio
        await self.push_frame(frame, direction)
        if isinstance(frame, StartFrame) and self._task is None:
            self._task = self.create_task(self._play())

    async def cleanup(self) -> None:
        if self._task is not None:
            await self.cancel_task(self._task)
            self._task = None
        await super().cleanup()

    async def _play(self) -> None:
        if self.mode == "continuous":
            x = self.dialogue.call.agent
            n = int(round(self.chunk_s * SAMPLE_RATE))
            self.emitted_s.append(0.0)
            for k in range(0, len(x) // n):
                await self.clock.sleep_until(int(round(k * self.chunk_s * NS)))
                await self.push_frame(SpeechOutputAudioRawFrame(audio=pcm(x[k * n:(k + 1) * n], self.rate),
                                                                sample_rate=self.rate, num_channels=1))
            return
        piece = int(round(self.tts_piece_s * SAMPLE_RATE))
        for u in agent_script(self.dialogue, self.tick_s):
            await self.clock.sleep_until(int(round(u.start_s * NS)))
            self.emitted_s.append(self.clock.get_time() / NS)
            await self.push_frame(TTSStartedFrame())
            for i in range(0, len(u.audio), piece):
                await self.push_frame(TTSAudioRawFrame(audio=pcm(u.audio[i:i + piece], self.rate),
                                                       sample_rate=self.rate, num_channels=1))
            await self.push_frame(TTSStoppedFrame())
            if u.interrupt_s is not None:
                await self.clock.sleep_until(int(round(np.ceil(u.interrupt_s / self.tick_s) * self.tick_s * NS)))
                await self.push_frame(InterruptionFrame())


@dataclass
class RunStats:
    """What happened in a scripted run."""

    ticks: int = 0
    wall_s: float = 0.0
    played: list = field(default_factory=list)


class InlineExecutor(concurrent.futures.Executor):
    """Runs ``run_in_executor`` work at once on the loop's thread, so virtual-time runs stay
    deterministic (assign it to e.g. ``SileroVADAnalyzer._executor`` in virtual-clock tests)."""

    def submit(self, fn, /, *args, **kwargs):
        f: concurrent.futures.Future = concurrent.futures.Future()
        try:
            f.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # delivered to the awaiting coroutine
            f.set_exception(exc)
        return f


async def settle(n: int = 40) -> None:
    """Let every ready task run (frames move through Pipecat's queues one hop per step)."""
    for _ in range(n):
        await asyncio.sleep(0)


async def run_scripted(dialogue: Dialogue, *, sample_rate: int = 16000, mode: str = "tts",
                       observers: list | None = None, processors_after_output: list | None = None,
                       virtual: bool = True, chunk_s: float = 0.02, tick_s: float = 0.01,
                       tail_s: float = 0.6, extra: list | None = None,
                       consume_user_audio: bool = True, before_output: list | None = None,
                       bunch: int = 1, stall: tuple[float, float] | None = None,
                       out_jitter_s: float = 0.0, output: bool = True, out_buffer_s: float = 0.0,
                       user_gaps: bool = False) -> RunStats:
    """Run ``dialogue`` through a real ``PipelineWorker``: scripted input → ScriptedAgent →
    PacedOutputTransport (→ ``processors_after_output``), with ``observers`` attached.

    ``virtual=True`` drives a VirtualClock (fast, exact); False runs in real time.
    ``extra``: processors inserted between the input transport and the agent;
    ``before_output``: between the agent and the output transport.
    ``consume_user_audio``: False passes the user's audio on past the agent (like an
    STT-based pipeline) so a stage after the output transport sees it.
    Network and event-loop trouble, to test robustness: ``bunch`` user chunks arrive together
    (each pushed up to (bunch−1)·chunk late); ``stall=(at_s, for_s)`` holds both the user's
    chunks and one output push that long, after which both catch up; ``out_jitter_s`` makes
    every output push up to that much late (uniform); ``out_buffer_s`` gives the output transport
    a client-side buffer that long (``PacedOutputTransport``); ``user_gaps`` sends no user
    chunk while the caller is silent (more than 0.1 s from the caller's scripted speech: a muted
    microphone, push-to-talk, a client that sends no silence). ``output=False`` leaves the output
    transport out: the agent's frames end at the pipeline's sink (as in a pipeline whose last
    processor consumes the audio itself).
    """
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.workers.runner import WorkerRunner

    clock = VirtualClock() if virtual else RealClock()
    inp = ScriptedInputTransport(sample_rate)
    agent = ScriptedAgent(clock, dialogue, sample_rate, mode=mode, chunk_s=chunk_s, tick_s=tick_s,
                          consume_user_audio=consume_user_audio)
    out = PacedOutputTransport(clock, sample_rate, jitter_s=out_jitter_s, stall=stall, buffer_s=out_buffer_s)
    pipeline = Pipeline([inp, *(extra or []), agent, *(before_output or []), *([out] if output else []),
                         *(processors_after_output or [])])
    worker = PipelineWorker(pipeline, clock=clock, observers=list(observers or []), enable_rtvi=False,
                            cancel_on_idle_timeout=False, idle_timeout_secs=None, enable_turn_tracking=False,
                            params=PipelineParams(audio_in_sample_rate=sample_rate, audio_out_sample_rate=sample_rate))
    stats = RunStats()
    done = asyncio.Event()
    user = dialogue.call.user
    n = int(round(chunk_s * SAMPLE_RATE))
    n_chunks = len(user) // n
    end_s = len(user) / SAMPLE_RATE + tail_s
    spoken = [(p.onset_s - 0.1, p.offset_s + 0.1) for p in dialogue.truth.placed if p.channel == "user"]

    def sends(i: int) -> bool:  # user_gaps: only chunks near the caller's speech are sent
        return not user_gaps or any(lo < (i + 1) * chunk_s and i * chunk_s < hi for lo, hi in spoken)
    per_chunk = max(1, int(round(chunk_s / tick_s)))
    sent = [0]

    async def drive() -> None:
        t_wall = time.perf_counter()
        await inp.ready.wait()
        if virtual:
            await settle()
        ended = False
        for k in itertools.count():
            if done.is_set():
                break
            t_ns = int(round(k * tick_s * NS))
            if virtual:
                clock.advance_to(t_ns)
                await settle()
            else:
                await clock.sleep_until(t_ns)
            j = k // per_chunk - 1  # chunk j (samples [j·d, (j+1)·d)) is due at (j+1)·d
            if k % per_chunk == 0 and 0 <= j < n_chunks:
                held = stall is not None and stall[0] <= (j + 1) * chunk_s < stall[0] + stall[1]
                if (j + 1) % bunch == 0 and not held or j == n_chunks - 1:
                    while sent[0] <= j:  # deliver everything due so far
                        i = sent[0]
                        if sends(i):
                            await inp.feed(pcm(user[i * n:(i + 1) * n], sample_rate))
                        sent[0] += 1
                    if virtual:
                        await settle()
            if not ended and k * tick_s >= end_s:
                ended = True
                t_end_wall = time.perf_counter()
                await worker.queue_frame(EndFrame())
            if ended and virtual and k * tick_s > end_s + 1.0:
                # closing work runs in real threads (judge drain, transcriber, report): give it
                # real time instead of racing the virtual clock past the deadline
                await asyncio.sleep(0.01)
            if k * tick_s > end_s + 30 and time.perf_counter() - t_end_wall > 60.0:
                raise RuntimeError("scripted pipeline did not end")
            stats.ticks = k
        stats.wall_s = time.perf_counter() - t_wall

    async def run() -> None:
        try:
            runner = WorkerRunner(handle_sigint=False)
            await runner.add_workers(worker)
            await runner.run()
        finally:
            done.set()
            if virtual:
                clock.advance_to(clock.now_ns + 10 * NS)  # release any sleeper

    await asyncio.gather(run(), drive())
    stats.played = out.played
    return stats
