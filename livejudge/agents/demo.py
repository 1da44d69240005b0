"""An offline, key-free voice agent: a real Pipecat pipeline to attach livejudge to.

```
SingleClientWebsocketServerTransport.input() → VADProcessor(Silero) → ReplyBrain → .output()
```

* End of the user's turn: Silero VAD (the ONNX model ships inside pipecat-ai), Pipecat's
  ``VADUserStoppedSpeakingFrame``.
* After ``--think-s`` it answers with TTS audio: espeak-ng when installed (rendered once at
  start-up), else the replies shipped in ``livejudge/data/audio/machine/espeak_reply_*.wav``.
* Barge-in: when Silero reports the user started speaking while the agent talks, it
  broadcasts an ``InterruptionFrame`` (the output transport drops its queue and tells the
  client); ``--never-yield`` keeps talking instead, to show bad behaviour.
* ``--min-interrupt-s S`` (HEURISTIC): yield only when the caller is still talking S seconds
  after Silero's start (voice in the last ``VOICED_RECENT_S``), so a short "mm-hmm" does not
  stop it; a stop from the VAD while it talks then starts no new reply (it was a backchannel).
* ``--rude``: the opposite of a person, for ``livejudge probe`` and ``livejudge demo`` to catch:
  it talks through a real interruption, stops for a short utterance (under ``RUDE_SHORT_S``: a
  backchannel) once it has ended, and, with a short ``--vad-stop-s`` and ``--think-s`` (the
  ``rude`` preset: 0.2 s and 0.1 s), starts its reply about 0.3 s into any caller silence, so it
  cuts into pauses mid-sentence.
* ``--behaviour polite|stock|rude`` (``BEHAVIOURS``; default ``polite``, the good example
  agent): ``polite`` waits out pauses and holds through a "mm-hmm"; ``stock`` is Pipecat's stock
  turn-taking (``VADParams()``: Silero start 0.2 s, stop 0.2 s; yields as soon as Silero hears
  the caller start), which answers into a caller's pause of about 0.7 s or more; ``rude`` is
  the probe's target. ``BEHAVIOUR_SHOWS`` says what each shows against the demo's caller.
* ``--log FILE`` writes one JSON line per decision, stamped with ``in_pos_s`` (seconds of
  user audio received so far) and ``stream_t_s`` (the start of the last received input frame
  plus the time elapsed since it arrived: the position of the caller's real-time stream at
  the moment of the decision). A client that sends each frame when its first sample is due
  has the same axis as its session clock, so tests can measure the agent's end-of-turn
  detection delay and reply times independently of livejudge.

Run: ``python -m livejudge.agents.demo --port 8765`` (needs ``pip install 'livejudge[pipecat]'``).
Wire: ``--protocol pipecat`` (protobuf frames, default) or ``twilio`` (Twilio media-stream
JSON, μ-law 8 kHz, via Pipecat's ``TwilioFrameSerializer``).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPLY_TEXTS = [
    "That's a great question! I'd be happy to help you with that. Here are three options you might consider.",
    "Absolutely. I completely understand. Let me look into that for you right away.",
    "I'm sorry for the confusion. To summarize, the store opens at nine and closes at six.",
    "Sure. The weather tomorrow will be sunny, with a high of twenty two degrees.",
    "Thank you for your patience. Is there anything else I can help you with today?",
]
"""What the agent says, in turn (the same sentences as the shipped espeak_reply_0N clips)."""

VOICED_RECENT_S = 0.2
"""HEURISTIC: with ``min_interrupt_s``, the caller counts as still talking when a frame louder
than ``VOICED_DBFS`` arrived within this many seconds."""
VOICED_DBFS = -45.0
"""HEURISTIC: an input frame louder than this (RMS, dBFS) is voice, for ``min_interrupt_s``."""
RUDE_SHORT_S = 1.0
"""HEURISTIC: the rude agent stops for a caller utterance shorter than this (a backchannel)."""
RUDE_RESUME_S = 1.5
"""The rude agent starts its next reply this long (plus ``think_s``) after stopping for a
backchannel: longer than the timeline's merge pause (0.8 s), so the stop shows as one."""

BEHAVIOURS: dict[str, dict] = {
    # Pipecat 1.14's stock VADParams() (start_secs 0.2, stop_secs 0.2), yields at Silero's start,
    # answers think_s 0.5 s after the VAD's stop
    "stock": {"think_s": 0.5, "vad_stop_s": 0.2, "vad_start_s": 0.2, "min_interrupt_s": 0.0, "rude": False},
    # waits out 0.6–1.0 s pauses (Silero stop after 1.0 s of silence), holds through a short
    # "mm-hmm" (yields after 0.5 s of continuing speech), answers 0.2 s after the VAD's stop
    "polite": {"min_interrupt_s": 0.5, "vad_start_s": 0.1, "vad_stop_s": 1.0, "think_s": 0.2},
    # answers 0.1 s after a 0.2 s silence (cuts into pauses), stops for backchannels, talks
    # through interruptions
    "rude": {"rude": True, "vad_start_s": 0.2, "vad_stop_s": 0.2, "think_s": 0.1},
}
"""``--behaviour`` presets (fields of ``DemoAgentConfig``); ``polite`` is the default (the good example
agent), ``stock`` Pipecat's stock settings, ``rude`` the probe's target. Timings are HEURISTIC.

``rude`` is rude the way people notice: its reply starts about 0.3 s (0.2 s of silence for
Silero's stop, 0.1 s think) into *any* silence of the caller's, a thinking pause mid-sentence
included, and it does not stop when the caller goes on (it talks through a real interruption);
it stops only for a short utterance, once that has ended, so a caller's "mm" cuts its reply off
(a false yield). Its replies are quick, in the human band, because it never waits for the caller
to finish."""
DEFAULT_BEHAVIOUR = "polite"

BEHAVIOUR_SHOWS: dict[str, str] = {
    "polite": "slow but never cuts in (it answers 1.0–1.3 s after the caller stops, which the latency "
              "verdicts flag as above the human mean, the range of S2S systems; it waits out pauses, holds "
              "through an \"mm\" and yields to an interruption)",
    "stock": "Pipecat's stock turn-taking (it answers about 0.7 s after the caller stops, yields to any "
             "caller sound, an \"mm\" included, and answers into a pause longer than about 0.7 s)",
    "rude": "fast but rude (it answers 0.3 s into any silence, human-fast, so it cuts into the caller's "
            "pauses and talks over them, stops for an \"mm\" (a false yield) and talks through "
            "interruptions): the verdicts flag more moments than for polite",
}
"""What each ``--behaviour`` shows against the demo's caller (``livejudge demo`` says it at the start;
measured: ``tests/test_demo_call.py``)."""


def behaviour_settings(behaviour: str = DEFAULT_BEHAVIOUR, **given) -> dict:
    """think_s, vad_stop_s, vad_start_s, min_interrupt_s and rude for a ``--behaviour`` preset
    (``BEHAVIOURS``: "polite", "stock", "rude"), with the ``given`` values that are not None winning.
    Raises ValueError on an unknown preset."""
    if behaviour not in BEHAVIOURS:
        raise ValueError(f"--behaviour must be one of {', '.join(BEHAVIOURS)}, got {behaviour!r}")
    base = dict(BEHAVIOURS["stock"])
    return {**base, **BEHAVIOURS[behaviour], **{k: v for k, v in given.items() if v is not None and k in base}}


def render_replies(tts: str, out_rate: int) -> tuple[list[np.ndarray], str]:
    """The reply audio, float32 mono at ``out_rate`` Hz, and which TTS made it.

    Args:
        tts: "espeak" (espeak-ng, required), "clips" (shipped WAVs) or "auto" (espeak-ng if found).
    Raises:
        RuntimeError: tts="espeak" without espeak-ng on PATH.
    """
    from livejudge.audio import load_audio, resample, to_mono
    from livejudge.testing.dialogues import clips_dir

    use_espeak = tts == "espeak" or (tts == "auto" and shutil.which("espeak-ng"))
    if tts == "espeak" and not shutil.which("espeak-ng"):
        raise RuntimeError("--tts espeak needs espeak-ng on PATH (apt install espeak-ng), or use --tts clips")
    out = []
    if use_espeak:
        with tempfile.TemporaryDirectory() as d:
            for i, text in enumerate(REPLY_TEXTS):
                p = Path(d) / f"r{i}.wav"
                subprocess.run(["espeak-ng", "-v", "en-us", "-s", "170", "-w", str(p), text], check=True,
                               capture_output=True)
                data, rate = load_audio(p)
                out.append(resample(to_mono(data), rate, out_rate))
        return out, "espeak-ng"
    for i in range(1, len(REPLY_TEXTS) + 1):
        data, rate = load_audio(clips_dir() / "machine" / f"espeak_reply_{i:02d}.wav")
        out.append(resample(to_mono(data), rate, out_rate))
    return out, "clips"


@dataclass(frozen=True)
class DemoAgentConfig:
    """The demo agent's settings (``python -m livejudge.agents.demo --help`` names each flag);
    the defaults are the ``polite`` preset (``BEHAVIOURS``).

    Attributes:
        host, port: where the websocket server listens.
        protocol: "pipecat" (protobuf frames) or "twilio" (media-stream JSON, μ-law 8 kHz).
        think_s: pause after the user's turn ends before answering, seconds.
        never_yield: keep talking when the user barges in.
        tts: "auto", "espeak" or "clips" (``render_replies``).
        in_rate: pipeline input rate, Hz (Silero: 8000 or 16000).
        out_rate: agent audio rate on the wire, Hz (pipecat; twilio is always 8000).
        vad_stop_s, vad_start_s: Silero silence/speech before stopped/started speaking, seconds.
        allowed_origin: accept only websocket clients with these Origins (() = any).
        once: exit when the first client disconnects.
        log: decision log path (JSON lines), or None.
        verbose: Pipecat's own debug log on stderr.
        min_interrupt_s: yield to the caller only after this much continuing speech, seconds
            (0 = at Silero's start, Pipecat's default behaviour).
        rude: talk through interruptions, stop for backchannels (see the module docstring).
    """

    host: str = "127.0.0.1"
    port: int = 8765
    protocol: str = "pipecat"
    think_s: float = BEHAVIOURS[DEFAULT_BEHAVIOUR]["think_s"]
    never_yield: bool = False
    tts: str = "auto"
    in_rate: int = 16000
    out_rate: int = 24000
    vad_stop_s: float = BEHAVIOURS[DEFAULT_BEHAVIOUR]["vad_stop_s"]
    vad_start_s: float = BEHAVIOURS[DEFAULT_BEHAVIOUR]["vad_start_s"]
    allowed_origin: tuple[str, ...] = ()
    once: bool = False
    log: str | None = None
    verbose: bool = False
    min_interrupt_s: float = BEHAVIOURS[DEFAULT_BEHAVIOUR]["min_interrupt_s"]
    rude: bool = BEHAVIOURS[DEFAULT_BEHAVIOUR].get("rude", False)


async def serve(cfg: DemoAgentConfig) -> None:
    """Run the agent until stopped (or, with ``cfg.once``, until its first client leaves)."""
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="DEBUG" if cfg.verbose else "WARNING")
    try:
        from pipecat.audio.vad.silero import SileroVADAnalyzer
        from pipecat.audio.vad.vad_analyzer import VADParams
        from pipecat.frames.frames import (
            Frame, InputAudioRawFrame, TTSAudioRawFrame, TTSStartedFrame, TTSStoppedFrame,
            VADUserStartedSpeakingFrame, VADUserStoppedSpeakingFrame,
        )
        from pipecat.pipeline.pipeline import Pipeline
        from pipecat.pipeline.worker import PipelineParams, PipelineWorker
        from pipecat.processors.audio.vad_processor import VADProcessor
        from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
        from pipecat.transports.websocket.server import (
            SingleClientWebsocketServerParams, SingleClientWebsocketServerTransport,
        )
        from pipecat.workers.runner import WorkerRunner
    except ImportError as exc:
        raise SystemExit(f"demo agent: needs pipecat-ai: pip install 'livejudge[pipecat]' ({exc})") from None

    out_rate = 8000 if cfg.protocol == "twilio" else cfg.out_rate
    replies, tts_name = render_replies(cfg.tts, out_rate)
    log_f = open(cfg.log, "a", encoding="utf-8") if cfg.log else None

    def log(event: str, **data) -> None:
        if log_f is not None:
            log_f.write(json.dumps({"event": event, "t_mono": round(time.monotonic(), 4), **data}) + "\n")
            log_f.flush()

    class ReplyBrain(FrameProcessor):
        """Answers each user turn after think_s with the next reply; yields on barge-in."""

        def __init__(self) -> None:
            super().__init__(name="ReplyBrain")
            self.reset()

        def reset(self) -> None:
            self.in_samples = 0
            self.last_frame_samples = 0
            self.last_frame_mono = time.monotonic()
            self.n_reply = 0
            self.pending: asyncio.Task | None = None
            self.speaking_until = 0.0  # monotonic time the current reply ends (if not cut)
            self.awaiting_audio = False
            self.last_voice_mono = -1e9  # monotonic time of the last voiced input frame
            self.user_start_mono = 0.0  # monotonic time of the last VAD start
            self.yield_task: asyncio.Task | None = None

        @property
        def in_pos_s(self) -> float:
            return round(self.in_samples / cfg.in_rate, 4)

        def pos(self) -> dict:
            start = (self.in_samples - self.last_frame_samples) / cfg.in_rate
            return {"in_pos_s": self.in_pos_s,
                    "stream_t_s": round(start + time.monotonic() - self.last_frame_mono, 4)}

        async def process_frame(self, frame: Frame, direction: FrameDirection):
            await super().process_frame(frame, direction)
            if isinstance(frame, InputAudioRawFrame):
                n = len(frame.audio) // (2 * max(1, frame.num_channels))
                self.in_samples += n
                self.last_frame_samples = n
                self.last_frame_mono = time.monotonic()
                if n and cfg.min_interrupt_s > 0:
                    x = np.frombuffer(frame.audio, dtype="<i2").astype(np.float64) / 32768.0
                    if 20 * np.log10(np.sqrt(np.mean(x * x)) + 1e-12) > VOICED_DBFS:
                        self.last_voice_mono = self.last_frame_mono
            elif isinstance(frame, VADUserStartedSpeakingFrame):
                speaking = time.monotonic() < self.speaking_until
                self.user_start_mono = time.monotonic()
                log("vad_start", **self.pos(), agent_speaking=speaking)
                if self.pending is not None and not self.pending.done():
                    self.pending.cancel()  # the user went on talking: forget the planned reply
                    log("reply_cancelled", **self.pos())
                if speaking and not cfg.never_yield and not cfg.rude:
                    if cfg.min_interrupt_s > 0:
                        self.yield_task = self.create_task(self._yield_if_still_talking())
                    else:
                        await self._yield()
            elif isinstance(frame, VADUserStoppedSpeakingFrame):
                speaking = time.monotonic() < self.speaking_until
                log("vad_stop", **self.pos(), agent_speaking=speaking)
                said_s = time.monotonic() - self.user_start_mono - cfg.vad_stop_s
                if speaking and cfg.rude and said_s < RUDE_SHORT_S:
                    await self._yield()  # rude: stops for a backchannel, then starts over
                    if self.pending is None or self.pending.done():
                        self.pending = self.create_task(self._reply(RUDE_RESUME_S))
                    await self.push_frame(frame, direction)
                    return
                elif speaking and cfg.min_interrupt_s > 0 and not cfg.rude:
                    await self.push_frame(frame, direction)  # a backchannel held through: no new reply
                    return
                if self.pending is None or self.pending.done():
                    self.pending = self.create_task(self._reply())
            await self.push_frame(frame, direction)

        async def _yield(self) -> None:
            self.speaking_until = 0.0
            log("yield", **self.pos())
            await self.broadcast_interruption()

        async def _yield_if_still_talking(self) -> None:
            await asyncio.sleep(cfg.min_interrupt_s)
            now = time.monotonic()
            if now < self.speaking_until and now - self.last_voice_mono <= VOICED_RECENT_S:
                await self._yield()
            else:
                log("held", **self.pos())

        async def _reply(self, extra_s: float = 0.0) -> None:
            await asyncio.sleep(cfg.think_s + extra_s)
            audio = replies[self.n_reply % len(replies)]
            idx = self.n_reply % len(replies)
            self.n_reply += 1
            pcm = (np.clip(audio, -1, 32767 / 32768) * 32768).astype("<i2").tobytes()
            self.speaking_until = time.monotonic() + len(audio) / out_rate
            log("reply_start", **self.pos(), reply=idx + 1, duration_s=round(len(audio) / out_rate, 4),
                tts=tts_name, out_rate=out_rate)
            self.awaiting_audio = True
            await self.push_frame(TTSStartedFrame())
            await self.push_frame(TTSAudioRawFrame(audio=pcm, sample_rate=out_rate, num_channels=1))
            await self.push_frame(TTSStoppedFrame())

    from pipecat.frames.frames import OutputAudioRawFrame

    if cfg.protocol == "twilio":
        from pipecat.serializers.twilio import TwilioFrameSerializer as Base

        base_kwargs = {"stream_sid": "livejudge-demo", "params": Base.InputParams(auto_hang_up=False)}
    else:
        from pipecat.serializers.protobuf import ProtobufFrameSerializer as Base

        base_kwargs = {}

    class LoggingSerializer(Base):  # type: ignore[misc, valid-type]
        """Pipecat's serializer, plus a log line when a reply's first audio goes on the wire."""

        async def serialize(self, frame):
            data = await super().serialize(frame)
            if brain.awaiting_audio and isinstance(frame, OutputAudioRawFrame) and data:
                brain.awaiting_audio = False
                log("audio_out", **brain.pos(), reply=brain.n_reply)
            return data

    serializer = LoggingSerializer(**base_kwargs)

    transport = SingleClientWebsocketServerTransport(
        params=SingleClientWebsocketServerParams(
            serializer=serializer, audio_in_enabled=True, audio_out_enabled=True,
            audio_in_sample_rate=cfg.in_rate, audio_out_sample_rate=out_rate,
            allowed_origins=list(cfg.allowed_origin),
        ),
        host=cfg.host, port=cfg.port,
    )
    vad = SileroVADAnalyzer(params=VADParams(stop_secs=cfg.vad_stop_s, start_secs=cfg.vad_start_s))
    brain = ReplyBrain()
    pipeline = Pipeline([transport.input(), VADProcessor(vad_analyzer=vad), brain, transport.output()])
    worker = PipelineWorker(pipeline, params=PipelineParams(audio_in_sample_rate=cfg.in_rate,
                                                            audio_out_sample_rate=out_rate),
                            idle_timeout_secs=None, enable_rtvi=False)
    runner = WorkerRunner(handle_sigint=True)

    @transport.event_handler("on_websocket_ready")
    async def on_ready(_transport):
        print(f"LIVEJUDGE_AGENT_READY ws://{cfg.host}:{cfg.port} protocol={cfg.protocol} tts={tts_name}",
              flush=True)
        log("ready", port=cfg.port, protocol=cfg.protocol, tts=tts_name, think_s=cfg.think_s,
            never_yield=cfg.never_yield, min_interrupt_s=cfg.min_interrupt_s, rude=cfg.rude,
            vad_start_s=cfg.vad_start_s, vad_stop_s=cfg.vad_stop_s, in_rate=cfg.in_rate, out_rate=out_rate)

    @transport.event_handler("on_client_connected")
    async def on_connected(_transport, _ws):
        brain.reset()
        log("client_connected")

    @transport.event_handler("on_client_disconnected")
    async def on_disconnected(_transport, _ws):
        log("client_disconnected", in_pos_s=brain.in_pos_s)
        if brain.pending is not None:
            brain.pending.cancel()
        if cfg.once:
            await worker.cancel()

    await runner.add_workers(worker)
    await runner.run()


if __name__ == "__main__":  # the flags are parsed in the commands room (issue 21)
    from livejudge.commands.demo_agent import main

    sys.exit(main())
