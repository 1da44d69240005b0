"""Offline stand-ins for a LiveKit Agents ``AgentSession``: a scripted caller made of real
clips, a scripted VAD/STT/LLM, a TTS that speaks real clips, and an audio output that plays
on a real-time playout clock. No server, no network, no model.

Patterned on LiveKit's own test suite (``livekit/agents`` ``tests/fake_{vad,stt,llm,tts,io}.py``),
which drives an ``AgentSession`` the same way. Used by ``examples/livekit_embed.py``, the tests
(``tests/test_livekit_embed.py``) and ``benchmarks/livekit_overhead.py``.

Truth: the caller knows when each of its samples was pushed (``CallerInput.t0_wall``, clips
trimmed to their speech so onsets/offsets are exact), and the playout output knows when each
reply started playing and where it was cut (``PlayoutOutput.segments``, ``time.time()``).

Needs ``livekit-agents`` (``pip install -e '.[livekit]'``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass

import numpy as np

from livekit import rtc
from livekit.agents import Agent, AgentSession, EndpointingOptions, InterruptionOptions, utils
from livekit.agents.llm import LLM, ChatChunk, ChoiceDelta, LLMStream
from livekit.agents.stt import STT, RecognizeStream, SpeechData, SpeechEvent, SpeechEventType, STTCapabilities
from livekit.agents.tts import TTS, SynthesizeStream, TTSCapabilities
from livekit.agents.types import DEFAULT_API_CONNECT_OPTIONS, APIConnectOptions
from livekit.agents.vad import VAD, VADCapabilities, VADEvent, VADEventType, VADStream
from livekit.agents.voice.io import AudioInput, AudioOutput, AudioOutputCapabilities

from livejudge.audio import SAMPLE_RATE
from livejudge.testing.dialogues import load_clip, trim

FRAME_S = 0.01
"""The caller pushes 10 ms frames."""


def clip_pcm16(clip: str | np.ndarray) -> np.ndarray:
    """A shipped clip (by stem) or float32 array, trimmed to its speech, as int16 (n,) at 16 kHz."""
    x = trim(load_clip(clip) if isinstance(clip, str) else np.asarray(clip, dtype=np.float32))
    return (np.clip(x, -1.0, 32767 / 32768) * 32768.0).astype(np.int16)


# ------------------------------------------------------------------ the script
@dataclass(frozen=True)
class CallerTurn:
    """One thing the caller says: a real clip pushed at ``at_s`` (caller clock, seconds)."""

    at_s: float
    clip: str
    transcript: str
    stt_delay_s: float = 0.2


@dataclass(frozen=True)
class Reply:
    """What the agent answers to ``heard``: ``text`` from the LLM after ``llm_ttft_s``, spoken
    as the real clip ``clip`` after ``tts_ttfb_s``."""

    heard: str
    text: str
    clip: str
    llm_ttft_s: float = 0.25
    tts_ttfb_s: float = 0.15


@dataclass
class Script:
    caller: list[CallerTurn]
    replies: list[Reply]

    def speeches_s(self) -> list[tuple[float, float, str, float]]:
        """(start_s, end_s, transcript, stt_delay_s) of each caller turn on the caller clock."""
        out = []
        for t in self.caller:
            n = clip_pcm16(t.clip).size
            out.append((t.at_s, t.at_s + n / SAMPLE_RATE, t.transcript, t.stt_delay_s))
        return out


# ------------------------------------------------------------------ caller (audio input)
class CallerInput(AudioInput):
    """The session's audio input: a caller who plays real clips in real time (10 ms frames,
    digital silence between them), paced on the event loop like a capture device: sample k of
    the call is captured at ``t0_wall + k / 16000`` and its frame is delivered once the frame's
    last sample is captured (a microphone cannot hand over a frame before its end), which is
    the convention the tap stamps frames by. ``t0_wall``: ``time.time()`` of sample 0."""

    def __init__(self, script: Script) -> None:
        super().__init__(label="ScriptedCaller")
        self._ch = utils.aio.Chan[rtc.AudioFrame]()
        self.script = script
        self.t0_wall: float | None = None
        self.truth_s: list[tuple[float, float]] = []  # (onset, offset) on the caller clock

    async def __anext__(self) -> rtc.AudioFrame:
        return await self._ch.__anext__()

    async def play(self, tail_s: float = 7.0) -> None:
        """Push the whole script, then ``tail_s`` of silence, in real time."""
        n = int(round(FRAME_S * SAMPLE_RATE))
        spans = []
        for t in self.script.caller:
            pcm = clip_pcm16(t.clip)
            a = int(round(t.at_s * SAMPLE_RATE))
            spans.append((a, pcm))
            self.truth_s.append((a / SAMPLE_RATE, (a + pcm.size) / SAMPLE_RATE))
        total = max(a + p.size for a, p in spans) + int(tail_s * SAMPLE_RATE)
        track = np.zeros(total, dtype=np.int16)
        for a, p in spans:
            track[a:a + p.size] = p
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        self.t0_wall = time.time()
        for k in range(0, total - n + 1, n):
            due = t0 + (k + n) / SAMPLE_RATE  # delivered when its last sample is captured
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            self._ch.send_nowait(rtc.AudioFrame(track[k:k + n].tobytes(), SAMPLE_RATE, 1, n))


# ------------------------------------------------------------------ VAD / STT / LLM / TTS
class ScriptedVAD(VAD):
    """Fires start/end of speech on the script's timeline (as LiveKit's FakeVAD), relative to
    the first frame it receives; ``min_speech_s`` after onset, ``min_silence_s`` after offset."""

    def __init__(self, speeches_s: list[tuple[float, float, str, float]], *, min_speech_s: float = 0.05,
                 min_silence_s: float = 0.3) -> None:
        super().__init__(capabilities=VADCapabilities(update_interval=0.05))
        self.speeches_s = speeches_s
        self.min_speech_s = min_speech_s
        self.min_silence_s = min_silence_s

    def stream(self) -> VADStream:
        return _VADStream(self)


class _VADStream(VADStream):
    async def _main_task(self) -> None:
        vad: ScriptedVAD = self._vad  # type: ignore[assignment]
        async for f in self._input_ch:
            if isinstance(f, rtc.AudioFrame):
                break
        else:
            return
        start = time.perf_counter()

        def now() -> float:
            return time.perf_counter() - start

        def send(kind: VADEventType, a: float, b: float) -> None:
            t = now()
            self._event_ch.send_nowait(VADEvent(
                type=kind, samples_index=0, timestamp=t, speech_duration=min(t, b) - a,
                silence_duration=max(0.0, t - b), raw_accumulated_speech=max(0.0, min(t, b) - a),
                raw_accumulated_silence=max(0.0, t - b), speaking=kind != VADEventType.END_OF_SPEECH))

        for a, b, _, _ in vad.speeches_s:
            if now() < a + vad.min_speech_s:
                await asyncio.sleep(a + vad.min_speech_s - now())
            send(VADEventType.START_OF_SPEECH, a, b)
            while now() < b + vad.min_silence_s - 0.1:
                await asyncio.sleep(0.05)
                send(VADEventType.INFERENCE_DONE, a, b)
            await asyncio.sleep(max(0.0, b + vad.min_silence_s - now()))
            send(VADEventType.END_OF_SPEECH, a, b)
        async for _ in self._input_ch:
            pass


class ScriptedSTT(STT):
    """Streams each caller turn's transcript ``stt_delay_s`` after its end (interim at half)."""

    def __init__(self, speeches_s: list[tuple[float, float, str, float]]) -> None:
        super().__init__(capabilities=STTCapabilities(streaming=True, interim_results=True))
        self.speeches_s = speeches_s

    async def _recognize_impl(self, buffer, *, language=None, conn_options=None) -> SpeechEvent:
        return SpeechEvent(type=SpeechEventType.FINAL_TRANSCRIPT, alternatives=[SpeechData(text="", language="")])

    def stream(self, *, language=None, conn_options: APIConnectOptions = DEFAULT_API_CONNECT_OPTIONS) -> RecognizeStream:
        return _STTStream(stt=self, conn_options=conn_options)


class _STTStream(RecognizeStream):
    def _send(self, text: str, final: bool) -> None:
        self._event_ch.send_nowait(SpeechEvent(
            type=SpeechEventType.FINAL_TRANSCRIPT if final else SpeechEventType.INTERIM_TRANSCRIPT,
            alternatives=[SpeechData(text=text, language="en")]))

    async def _run(self) -> None:
        stt: ScriptedSTT = self._stt  # type: ignore[assignment]
        await self._input_ch.recv()
        start = time.perf_counter()
        for a, b, text, delay in stt.speeches_s:
            for frac, final in ((0.5, False), (1.0, True)):
                due = b + delay * frac - (time.perf_counter() - start)
                if due > 0:
                    await asyncio.sleep(due)
                self._send(text if final else " ".join(text.split()[:2]), final)
        async for _ in self._input_ch:
            pass


class ScriptedLLM(LLM):
    """Answers the last user message with the script's reply text after ``llm_ttft_s``."""

    def __init__(self, replies: list[Reply]) -> None:
        super().__init__()
        self.replies = {r.heard: r for r in replies}

    def chat(self, *, chat_ctx, tools=None, conn_options: APIConnectOptions = DEFAULT_API_CONNECT_OPTIONS,
             **_kw) -> LLMStream:
        return _LLMStream(self, chat_ctx=chat_ctx, tools=tools or [], conn_options=conn_options)


class _LLMStream(LLMStream):
    async def _run(self) -> None:
        llm: ScriptedLLM = self._llm  # type: ignore[assignment]
        item = self.chat_ctx.items[-1]
        r = llm.replies.get(getattr(item, "text_content", None) or "")
        if r is None:
            return
        await asyncio.sleep(r.llm_ttft_s)
        self._event_ch.send_nowait(ChatChunk(id=str(id(self)), delta=ChoiceDelta(role="assistant", content=r.text)))


class ClipTTS(TTS):
    """Streaming TTS that speaks each reply text as its real clip (16 kHz, ``chunk_s`` chunks)
    after ``tts_ttfb_s``; unknown text is not spoken. ``pace``: None pushes a reply's chunks at
    once (a TTS faster than real time); a factor x pushes one chunk every x·``chunk_s`` seconds
    (1.5: a TTS 1.5 times slower than real time, whose sink runs dry between chunks)."""

    def __init__(self, replies: list[Reply], *, pace: float | None = None, chunk_s: float = 0.01) -> None:
        super().__init__(capabilities=TTSCapabilities(streaming=True), sample_rate=SAMPLE_RATE, num_channels=1)
        self.replies = {r.text: r for r in replies}
        self.pace = pace
        self.chunk_s = chunk_s

    def synthesize(self, text: str, *, conn_options=DEFAULT_API_CONNECT_OPTIONS):
        raise NotImplementedError("ClipTTS streams only")

    def stream(self, *, conn_options: APIConnectOptions = DEFAULT_API_CONNECT_OPTIONS) -> SynthesizeStream:
        return _TTSStream(tts=self, conn_options=conn_options)


class _TTSStream(SynthesizeStream):
    async def _run(self, output_emitter) -> None:
        tts: ClipTTS = self._tts  # type: ignore[assignment]
        output_emitter.initialize(request_id=utils.shortuuid("clip_tts_"), sample_rate=SAMPLE_RATE,
                                  num_channels=1, mime_type="audio/pcm", stream=True)
        text = ""
        async for data in self._input_ch:
            if isinstance(data, str):
                text += data
                continue
            if not text.strip():
                continue
            self._mark_started()
            r = tts.replies.get(text.strip())
            text = ""
            if r is None:
                continue
            await asyncio.sleep(r.tts_ttfb_s)
            output_emitter.start_segment(segment_id=utils.shortuuid("clip_seg_"))
            pcm = clip_pcm16(r.clip)
            n = max(1, int(round(tts.chunk_s * SAMPLE_RATE)))
            t0 = time.time()
            for j, k in enumerate(range(0, pcm.size, n)):
                if tts.pace is not None and j:
                    await asyncio.sleep(max(0.0, t0 + j * tts.chunk_s * tts.pace - time.time()))
                output_emitter.push(pcm[k:k + n].tobytes())
            output_emitter.flush()


# ------------------------------------------------------------------ playout (audio output)
@dataclass
class PlayedSegment:
    """One reply as the playout clock played it: ``started_wall`` (``time.time()``), how long
    it played, and whether it was cut by ``clear_buffer`` (at ``ended_wall``)."""

    started_wall: float
    played_s: float = 0.0
    interrupted: bool = False
    ended_wall: float | None = None


class PlayoutOutput(AudioOutput):
    """The session's audio output: plays what it is given on a real-time clock from the first
    frame of each segment (as a sound card would; LiveKit's FakeAudioOutput), reports
    ``playback_started``/``playback_finished``, and records each segment (``segments``)."""

    def __init__(self) -> None:
        super().__init__(label="PlayoutClock", capabilities=AudioOutputCapabilities(pause=False))
        self._pushed_s = 0.0
        self._started: float | None = None
        self._handle: asyncio.TimerHandle | None = None
        self.segments: list[PlayedSegment] = []

    async def capture_frame(self, frame: rtc.AudioFrame) -> None:
        await super().capture_frame(frame)
        self._pushed_s += frame.duration
        if self._started is None:
            self._started = time.time()
            self.segments.append(PlayedSegment(self._started))
            self.on_playback_started(created_at=self._started)

    def flush(self) -> None:
        super().flush()
        if not self._pushed_s or self._started is None:
            return
        pushed = self._pushed_s
        delay = max(0.0, pushed - (time.time() - self._started))

        def done() -> None:
            seg = self.segments[-1]
            seg.played_s, seg.ended_wall = pushed, seg.started_wall + pushed
            self._reset()
            self.on_playback_finished(playback_position=pushed, interrupted=False)

        if self._handle:
            self._handle.cancel()
        self._handle = asyncio.get_event_loop().call_later(delay, done)

    def _reset(self) -> None:
        self._pushed_s = 0.0
        self._started = None
        if self._handle:
            self._handle.cancel()
            self._handle = None

    def clear_buffer(self) -> None:
        if not self._pushed_s or self._started is None:
            return
        now = time.time()
        played = min(now - self._started, self._pushed_s)
        seg = self.segments[-1]
        seg.played_s, seg.interrupted, seg.ended_wall = played, True, self._started + played
        self._reset()
        self.on_playback_finished(playback_position=played, interrupted=True)


class NullOutput(AudioOutput):
    """An audio output that plays nothing and reports no playback: a sink for tests and benchmarks
    of the taps alone."""

    def __init__(self, label: str = "null") -> None:
        super().__init__(label=label, capabilities=AudioOutputCapabilities(pause=False))

    async def capture_frame(self, frame: rtc.AudioFrame) -> None:
        await super().capture_frame(frame)

    def flush(self) -> None:
        super().flush()

    def clear_buffer(self) -> None:
        pass


def room_sink() -> AudioOutput:
    """LiveKit's own room audio output (``room_io._output._ParticipantAudioOutput``, livekit-agents
    1.8: a real ``rtc.AudioSource`` with its 200 ms queue, drained in real time by the native
    side, reporting ``playback_progressed`` runs) without a room: nothing is published. A private
    class, used here because it is what a LiveKit app's replies play through. Its ``runs``:
    ``[(segment index, started_at, offset_s, duration_s), ...]``, LiveKit's account of what
    played when (``time.time()``)."""
    from livekit.agents.voice.room_io._output import _ParticipantAudioOutput

    class _RoomSink(_ParticipantAudioOutput):
        def __init__(self) -> None:
            super().__init__(None, sample_rate=SAMPLE_RATE, num_channels=1,
                             track_publish_options=rtc.TrackPublishOptions())
            self._subscribed_fut.set_result(None)
            self.runs: list[tuple[int, float, float, float]] = []
            self._segment = -1
            self.on("playback_started", lambda ev: setattr(self, "_segment", self._segment + 1))
            self.on("playback_progressed",
                    lambda ev: self.runs.append((self._segment, ev.started_at, ev.offset, ev.duration)))
            self._forwarding_task = asyncio.create_task(self._forward_audio())

    return _RoomSink()


# ------------------------------------------------------------------ the app
def build_session(script: Script, *, min_silence_s: float = 0.3, endpointing_delay_s: float = 0.2,
                  min_interruption_s: float = 0.3, tts_pace: float | None = None, tts_chunk_s: float = 0.01,
                  output: AudioOutput | None = None) -> tuple[AgentSession, CallerInput, AudioOutput]:
    """An ``AgentSession`` with the scripted VAD/STT/LLM, the clip TTS (``tts_pace``,
    ``tts_chunk_s``: ``ClipTTS``), the caller as its audio input and the playout clock (or
    ``output``, e.g. ``room_sink()``) as its audio output (set before ``session.start``)."""
    speeches = script.speeches_s()
    session = AgentSession(
        vad=ScriptedVAD(speeches, min_silence_s=min_silence_s),
        stt=ScriptedSTT(speeches),
        llm=ScriptedLLM(script.replies),
        tts=ClipTTS(script.replies, pace=tts_pace, chunk_s=tts_chunk_s),
        turn_handling={
            "turn_detection": None,  # VAD endpointing: the shipped EOU model needs real speech features
            "endpointing": EndpointingOptions(min_delay=endpointing_delay_s, max_delay=3.0),
            "interruption": InterruptionOptions(min_duration=min_interruption_s, false_interruption_timeout=None,
                                                resume_false_interruption=False),
        },
        aec_warmup_duration=None,
    )
    caller = CallerInput(script)
    out = output if output is not None else PlayoutOutput()
    session.input.audio = caller
    session.output.audio = out
    return session, caller, out


class ScriptedAgent(Agent):
    def __init__(self) -> None:
        super().__init__(instructions="You are a helpful voice assistant. Answer briefly.")


async def run_call(session: AgentSession, caller: CallerInput, *, drain_s: float = 1.0,
                   before_play=None) -> None:
    """Start the session, play the caller's script in real time, drain, close."""
    await session.start(ScriptedAgent())
    if before_play is not None:
        before_play()
    await caller.play()
    await asyncio.sleep(drain_s)
    with contextlib.suppress(RuntimeError):
        await session.drain()
    await session.aclose()


def demo_script() -> Script:
    """Three caller turns from real human clips; the second interrupts the agent's reply."""
    return Script(
        caller=[
            CallerTurn(0.5, "cmu_cards_005", "can you help me with my card"),
            CallerTurn(5.2, "cmu_cards_002", "go forward please"),
            CallerTurn(13.3, "cmu_cards_001", "thank you that is all"),
        ],
        replies=[
            Reply("can you help me with my card", "Sure, I can help with your card.", "espeak_reply_01"),
            Reply("go forward please", "Going forward now.", "espeak_reply_02"),
            Reply("thank you that is all", "You are welcome, goodbye.", "espeak_reply_03"),
        ],
    )


__all__ = ["CallerInput", "CallerTurn", "ClipTTS", "NullOutput", "PlayedSegment", "PlayoutOutput", "Reply", "Script",
           "ScriptedAgent", "ScriptedLLM", "ScriptedSTT", "ScriptedVAD", "build_session", "clip_pcm16",
           "demo_script", "room_sink", "run_call"]
