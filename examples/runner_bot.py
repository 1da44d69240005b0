"""An offline, key-free Pipecat bot built the way Pipecat's own examples are, run by Pipecat's runner.

```
python examples/runner_bot.py --host 127.0.0.1 --port 7860     # as you run any Pipecat bot
livejudge attach --runner http://127.0.0.1:7860 --input-wav a.wav b.wav --no-playback
```

The bot is ``async def bot(runner_args)`` + ``create_transport`` with ``webrtc``, ``twilio``
and ``eval`` entries (no ``websocket`` entry, like Pipecat's examples), served by
``pipecat.runner.run.main``: SmallWebRTC on ``/api/offer`` (the browser client at
``/client``), telephony and Pipecat's eval harness on ``/ws``.

Pipeline: ``transport.input() → VADProcessor(Silero) → ReplyBrain → transport.output()``,
with RTVI on (the worker's default), so the eval wire and the WebRTC data channel carry
RTVI events. No keys, no network: replies are espeak-ng renderings of
``livejudge.agents.demo.REPLY_TEXTS`` (or the shipped clips with ``--tts clips``).

``--log FILE.jsonl`` writes the bot's own decisions, one JSON line each, stamped with
``t_mono`` (``time.monotonic()``, the host's shared monotonic clock): ``vad_start``,
``vad_stop`` (Silero's end of the user's turn), ``reply_start``, ``audio_out`` (the output
transport started playing the reply: Pipecat's ``BotStartedSpeakingFrame``), ``audio_written``
(the reply's first chunk written to the transport, seen right after ``transport.output()``; it
stands in when Pipecat sends no ``BotStartedSpeakingFrame`` because, after an interruption, its
output transport still counts the bot as speaking), ``bot_stopped``, ``yield``
(barge-in handled: interruption broadcast). A client on the same host maps these onto its
own session clock; livejudge's end-to-end tests use them as the truth.

Twilio route: Pipecat's runner builds ``TwilioFrameSerializer`` with auto hang-up, which
needs ``TWILIO_ACCOUNT_SID`` and ``TWILIO_AUTH_TOKEN`` in the bot's environment.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

import numpy as np

from livejudge.agents.demo import (
    BEHAVIOURS, DEFAULT_BEHAVIOUR, RUDE_RESUME_S, RUDE_SHORT_S, VOICED_DBFS, VOICED_RECENT_S, behaviour_settings,
    render_replies,
)

try:
    from loguru import logger
    from pipecat.audio.vad.silero import SileroVADAnalyzer
    from pipecat.audio.vad.vad_analyzer import VADParams
    from pipecat.evals.transport import EvalTransportParams
    from pipecat.frames.frames import (
        BotStartedSpeakingFrame, BotStoppedSpeakingFrame, Frame, InputAudioRawFrame, OutputAudioRawFrame,
        TTSAudioRawFrame, TTSStartedFrame, TTSStoppedFrame, VADUserStartedSpeakingFrame, VADUserStoppedSpeakingFrame,
    )
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.processors.audio.vad_processor import VADProcessor
    from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
    from pipecat.runner.types import RunnerArguments
    from pipecat.runner.utils import create_transport
    from pipecat.transports.base_transport import TransportParams
    from pipecat.transports.websocket.fastapi import FastAPIWebsocketParams
    from pipecat.workers.runner import WorkerRunner
except ImportError as exc:  # pragma: no cover - import guard with the install hint
    raise SystemExit(f"runner_bot needs pipecat-ai with its runner: pip install 'livejudge[runner]' ({exc})")

IN_RATE = 16000
OUT_RATE = 24000

transport_params = {
    "webrtc": lambda: TransportParams(audio_in_enabled=True, audio_out_enabled=True),
    "twilio": lambda: FastAPIWebsocketParams(audio_in_enabled=True, audio_out_enabled=True),
    "eval": lambda: EvalTransportParams(audio_in_enabled=True, audio_out_enabled=True),
}
"""What this bot can be reached by, as in Pipecat's examples (no ``websocket`` entry)."""


def _options(runner_args: RunnerArguments) -> argparse.Namespace:
    cli = getattr(runner_args, "cli_args", None)
    defaults = build_parser().parse_args([])
    if cli is None:
        return defaults
    for k in vars(defaults):
        if not hasattr(cli, k):
            setattr(cli, k, getattr(defaults, k))
    return cli


class ReplyBrain(FrameProcessor):
    """Answers each user turn ``think_s`` after Silero's end of turn; yields on barge-in.

    Args:
        replies: float32 mono reply audio at ``out_rate`` Hz, spoken in turn.
        log: ``log(event, **data)`` writes one decision line.
    """

    def __init__(self, replies: list[np.ndarray], out_rate: int, think_s: float, never_yield: bool,
                 log, tts_name: str, min_interrupt_s: float = 0.0, rude: bool = False,
                 vad_stop_s: float = 0.2) -> None:
        super().__init__(name="ReplyBrain")
        self.replies, self.out_rate, self.think_s = replies, out_rate, think_s
        self.never_yield, self.log, self.tts_name = never_yield, log, tts_name
        self.in_samples = 0
        self.in_rate = IN_RATE
        self.n_reply = 0
        self.pending: asyncio.Task | None = None
        self.speaking_until = 0.0
        self.awaiting_audio = False
        self.awaiting_written = False
        # --behaviour (livejudge.agents.demo's module docstring): polite holds through a short
        # "mm" (min_interrupt_s), rude talks through interruptions and stops for backchannels
        self.min_interrupt_s, self.rude, self.vad_stop_s = min_interrupt_s, rude, vad_stop_s
        self.last_voice_mono = -1e9
        self.user_start_mono = 0.0

    def pos(self) -> dict:
        return {"in_pos_s": round(self.in_samples / self.in_rate, 4)}

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame):
            self.in_rate = frame.sample_rate
            self.in_samples += len(frame.audio) // (2 * max(1, frame.num_channels))
            if self.min_interrupt_s > 0 and frame.audio:
                x = np.frombuffer(frame.audio, dtype="<i2").astype(np.float64) / 32768.0
                if 20 * np.log10(np.sqrt(np.mean(x * x)) + 1e-12) > VOICED_DBFS:
                    self.last_voice_mono = time.monotonic()
        elif isinstance(frame, VADUserStartedSpeakingFrame):
            speaking = time.monotonic() < self.speaking_until
            self.user_start_mono = time.monotonic()
            self.log("vad_start", **self.pos(), agent_speaking=speaking)
            if self.pending is not None and not self.pending.done():
                self.pending.cancel()
                self.log("reply_cancelled", **self.pos())
            if speaking and not self.never_yield and not self.rude:
                if self.min_interrupt_s > 0:
                    self.create_task(self._yield_if_still_talking())
                else:
                    await self._yield()
        elif isinstance(frame, VADUserStoppedSpeakingFrame):
            speaking = time.monotonic() < self.speaking_until
            self.log("vad_stop", **self.pos(), agent_speaking=speaking)
            said_s = time.monotonic() - self.user_start_mono - self.vad_stop_s
            extra_s = 0.0
            if speaking and self.rude and said_s < RUDE_SHORT_S:
                await self._yield()  # rude: stops for a backchannel, then starts over
                extra_s = RUDE_RESUME_S
            elif speaking and self.min_interrupt_s > 0 and not self.rude:
                await self.push_frame(frame, direction)  # a backchannel held through: no new reply
                return
            if self.pending is None or self.pending.done():
                self.pending = self.create_task(self._reply(extra_s))
        elif isinstance(frame, BotStoppedSpeakingFrame) and direction == FrameDirection.UPSTREAM:
            self.log("bot_stopped", **self.pos())
        elif isinstance(frame, BotStartedSpeakingFrame) and direction == FrameDirection.UPSTREAM:
            if self.awaiting_audio:
                self.awaiting_audio = False
                self.log("audio_out", **self.pos(), reply=self.n_reply)
        await self.push_frame(frame, direction)

    async def _yield(self) -> None:
        self.speaking_until = 0.0
        self.log("yield", **self.pos())
        await self.broadcast_interruption()

    async def _yield_if_still_talking(self) -> None:
        await asyncio.sleep(self.min_interrupt_s)
        now = time.monotonic()
        if now < self.speaking_until and now - self.last_voice_mono <= VOICED_RECENT_S:
            await self._yield()
        else:
            self.log("held", **self.pos())

    async def _reply(self, extra_s: float = 0.0) -> None:
        await asyncio.sleep(self.think_s + extra_s)
        idx = self.n_reply % len(self.replies)
        audio = self.replies[idx]
        self.n_reply += 1
        pcm = (np.clip(audio, -1, 32767 / 32768) * 32768).astype("<i2").tobytes()
        self.speaking_until = time.monotonic() + len(audio) / self.out_rate
        self.log("reply_start", **self.pos(), reply=idx + 1, duration_s=round(len(audio) / self.out_rate, 4),
                 tts=self.tts_name, out_rate=self.out_rate)
        self.awaiting_audio = True
        self.awaiting_written = True
        await self.push_frame(TTSStartedFrame())
        await self.push_frame(TTSAudioRawFrame(audio=pcm, sample_rate=self.out_rate, num_channels=1))
        await self.push_frame(TTSStoppedFrame())


class PlayoutTap(FrameProcessor):
    """After ``transport.output()``: logs ``audio_written`` when the first chunk of a reply has
    been written to the transport (the output transport pushes audio on after writing it)."""

    def __init__(self, brain: ReplyBrain) -> None:
        super().__init__()
        self.brain = brain

    async def process_frame(self, frame: Frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if (isinstance(frame, OutputAudioRawFrame) and direction == FrameDirection.DOWNSTREAM
                and self.brain.awaiting_written):
            self.brain.awaiting_written = False
            self.brain.log("audio_written", **self.brain.pos(), reply=self.brain.n_reply)
        await self.push_frame(frame, direction)


async def run_bot(transport, runner_args: RunnerArguments) -> None:
    opts = _options(runner_args)
    replies, tts_name = render_replies(opts.tts, OUT_RATE)
    log_f = open(opts.log, "a", encoding="utf-8") if opts.log else None

    def log(event: str, **data) -> None:
        if log_f is not None:
            log_f.write(json.dumps({"event": event, "t_mono": round(time.monotonic(), 4),
                                    "transport": type(transport).__name__, **data}) + "\n")
            log_f.flush()

    b = behaviour_settings(opts.behaviour, think_s=opts.think_s, vad_stop_s=opts.vad_stop_s,
                           vad_start_s=opts.vad_start_s, min_interrupt_s=opts.min_interrupt_s,
                           rude=opts.rude or None)
    vad = SileroVADAnalyzer(params=VADParams(stop_secs=b["vad_stop_s"], start_secs=b["vad_start_s"]))
    brain = ReplyBrain(replies, OUT_RATE, b["think_s"], opts.never_yield, log, tts_name,
                       min_interrupt_s=b["min_interrupt_s"], rude=b["rude"], vad_stop_s=b["vad_stop_s"])
    pipeline = Pipeline([transport.input(), VADProcessor(vad_analyzer=vad), brain, transport.output(),
                         PlayoutTap(brain)])
    worker = PipelineWorker(pipeline, params=PipelineParams(audio_in_sample_rate=IN_RATE,
                                                            audio_out_sample_rate=OUT_RATE),
                            idle_timeout_secs=runner_args.pipeline_idle_timeout_secs)

    @transport.event_handler("on_client_connected")
    async def on_client_connected(_transport, _client):
        log("client_connected", tts=tts_name, never_yield=opts.never_yield, behaviour=opts.behaviour, **b)

    @transport.event_handler("on_client_disconnected")
    async def on_client_disconnected(_transport, _client):
        log("client_disconnected", **brain.pos())
        await worker.cancel()

    runner = WorkerRunner(handle_sigint=runner_args.handle_sigint)
    await runner.add_workers(worker)
    try:
        await runner.run()
    finally:
        if log_f is not None:
            log_f.close()


async def bot(runner_args: RunnerArguments):
    """Main bot entry point, called by Pipecat's development runner for each session."""
    transport = await create_transport(runner_args, transport_params)
    await run_bot(transport, runner_args)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The bot's own flags, added to the runner's parser (``--host``/``--port`` are the runner's)."""
    p = parser or argparse.ArgumentParser(add_help=False)
    p.add_argument("--think-s", type=float, default=None,
                   help="pause after the user's turn ends, seconds (None: the --behaviour preset's)")
    p.add_argument("--never-yield", action="store_true", help="keep talking when the user barges in")
    p.add_argument("--tts", default="auto", choices=("auto", "espeak", "clips"))
    p.add_argument("--vad-stop-s", type=float, default=None,
                   help="Silero silence before 'stopped speaking', s (None: the preset's)")
    p.add_argument("--vad-start-s", type=float, default=None,
                   help="Silero speech before 'started speaking', s (None: the preset's)")
    p.add_argument("--min-interrupt-s", type=float, default=None,
                   help="yield only after this much continuing caller speech, seconds (HEURISTIC)")
    p.add_argument("--rude", action="store_true", help="talk through interruptions, stop for backchannels")
    p.add_argument("--behaviour", default=DEFAULT_BEHAVIOUR, choices=tuple(BEHAVIOURS),
                   help="turn-taking preset (see livejudge.agents.demo): polite (the good example), stock "
                        "(Pipecat's VADParams()), rude (for livejudge probe to catch); explicit flags win")
    p.add_argument("--log", default=None, metavar="FILE.jsonl", help="write the bot's decisions here")
    p.add_argument("--quiet", action="store_true", help="only warnings from Pipecat's log")
    return p


if __name__ == "__main__":
    from pipecat.runner.run import main

    from livejudge.agents.child import exit_with_parent

    exit_with_parent()  # started by livejudge demo --runner: end with it, even if it is killed outright

    parser = build_parser(argparse.ArgumentParser(description="livejudge example bot (Pipecat runner)"))
    if "--quiet" in sys.argv:
        # the runner resets loguru to DEBUG when it starts; filter at the sink instead
        logger.remove()
        _add = logger.add
        logger.add = lambda sink, *a, **k: _add(sink, *a, **{**k, "level": "WARNING"})  # type: ignore[method-assign]
    main(parser)
