"""Embed livejudge in a Pipecat agent with one line — offline, key-free, in real time.

The agent is a minimal Pipecat bot::

    caller (input transport) → VADProcessor(Silero) → ReplyBot → output transport (paced)

* the caller is a scripted person (shipped human clips) who *reacts* to what it hears: it
  answers a moment after the bot goes quiet, and once barges in on purpose while the bot is
  talking. Going by silence alone, as a person does, it can also take a pause inside a reply for
  its end and start speaking while the bot goes on: livejudge then counts that as a barge-in too
  (the run a new user tried showed 2 barge-ins, at about 12 s and 21 s);
* ``ReplyBot`` answers ``--think-s`` after Pipecat's ``VADUserStoppedSpeakingFrame`` with a
  shipped espeak clip as ``TTSAudioRawFrame``s (untrimmed, like real TTS output, leading
  silence included), and yields to a barge-in with ``broadcast_interruption()``;
* the output transport paces playout like Pipecat's websocket transports.

The one line that adds livejudge::

    worker = PipelineWorker(pipeline, observers=[LiveJudgeObserver(display=True, result_path=...)])

At the end it prints the latencies livejudge measured from the audio next to what Pipecat's
own events say (``UserBotLatencyObserver`` arithmetic: BotStartedSpeaking − (VAD stop −
stop_secs)).

Run::

    HF_HUB_OFFLINE=1 python examples/pipecat_embed.py                 # live meter in this terminal
    HF_HUB_OFFLINE=1 python examples/pipecat_embed.py --display plain --result call.json

Ctrl-C ends the call early (Pipecat's runner cancels the pipeline): the result and event log
cover what was measured (``source.ended``: "interrupted (Ctrl-C)"), exit code 130.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from loguru import logger  # noqa: E402
from pipecat.audio.vad.silero import SileroVADAnalyzer  # noqa: E402
from pipecat.audio.vad.vad_analyzer import VADParams  # noqa: E402
from pipecat.frames.frames import (  # noqa: E402
    BotStartedSpeakingFrame,
    BotStoppedSpeakingFrame,
    EndFrame,
    TTSAudioRawFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
    VADUserStartedSpeakingFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline  # noqa: E402
from pipecat.pipeline.worker import PipelineParams, PipelineWorker  # noqa: E402
from pipecat.processors.audio.vad_processor import VADProcessor  # noqa: E402
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor  # noqa: E402
from pipecat.workers.runner import WorkerRunner  # noqa: E402

from livejudge.audio import SAMPLE_RATE, float32_to_pcm16, resample  # noqa: E402
from livejudge.pipecat import LiveJudgeObserver  # noqa: E402
from livejudge.testing.pipecat import PacedOutputTransport, RealClock, ScriptedInputTransport  # noqa: E402
from livejudge.session import SessionConfig  # noqa: E402
from livejudge.testing.dialogues import load_clip, trim  # noqa: E402

REPLIES = [f"espeak_reply_0{i}" for i in range(1, 6)]
# (clip, when): ("after", s) = s after the bot goes quiet; ("barge", s) = s into the bot's turn
CALLER = [("cmu_cards_005", ("at", 0.5)), ("cmu_cards_002", ("after", 0.4)), ("cmu_cards_003", ("barge", 1.2)),
          ("cmu_something", ("after", 0.7)), ("librivox_austen_0930", ("after", 0.3))]


class ReplyBot(FrameProcessor):
    """Answers ``think_s`` after the user's VAD stop with the next reply clip; yields to barge-ins."""

    def __init__(self, rate: int, think_s: float, max_reply_s: float) -> None:
        super().__init__()
        self.rate, self.think_s = rate, think_s
        self.replies = []
        for name in REPLIES:
            x = load_clip(name)[: int(max_reply_s * SAMPLE_RATE)].copy()  # untrimmed: real leading silence
            fade = int(0.02 * SAMPLE_RATE)
            x[-fade:] *= np.linspace(1, 0, fade, dtype=np.float32)
            self.replies.append(float32_to_pcm16(resample(x, SAMPLE_RATE, rate)))
        self._reply_i = 0
        self._task: asyncio.Task | None = None
        self._bot_speaking = False

    async def process_frame(self, frame, direction) -> None:
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)
        if isinstance(frame, BotStartedSpeakingFrame) and direction == FrameDirection.UPSTREAM:
            self._bot_speaking = True
        elif isinstance(frame, BotStoppedSpeakingFrame) and direction == FrameDirection.UPSTREAM:
            self._bot_speaking = False
        elif isinstance(frame, VADUserStartedSpeakingFrame) and direction == FrameDirection.DOWNSTREAM:
            if self._task is not None:
                await self.cancel_task(self._task)
                self._task = None
            if self._bot_speaking:
                await self.broadcast_interruption()  # the output transport drops what it has not played
        elif isinstance(frame, VADUserStoppedSpeakingFrame) and direction == FrameDirection.DOWNSTREAM:
            self._task = self.create_task(self._reply())

    async def _reply(self) -> None:
        await asyncio.sleep(self.think_s)
        audio = self.replies[self._reply_i % len(self.replies)]
        self._reply_i += 1
        await self.push_frame(TTSStartedFrame())
        step = self.rate // 10 * 2  # 100 ms pieces, as a streaming TTS would send them
        for i in range(0, len(audio), step):
            await self.push_frame(TTSAudioRawFrame(audio=audio[i:i + step], sample_rate=self.rate, num_channels=1))
        await self.push_frame(TTSStoppedFrame())


async def caller(inp: ScriptedInputTransport, out: PacedOutputTransport, clock: RealClock, rate: int,
                 worker: PipelineWorker, chunk_s: float = 0.02, max_s: float = 90.0) -> None:
    """A scripted person: streams 20 ms chunks in real time (noise floor between lines) and
    decides when to speak from the bot audio it has heard so far."""
    await inp.ready.wait()
    rng = np.random.default_rng(0)
    n = int(chunk_s * SAMPLE_RATE)
    lines = [(trim(load_clip(c)), when) for c, when in CALLER]
    line_i, pos, current = 0, 0, None
    heard = 0
    bot_onset_s = bot_last_loud_s = None
    last_line_end_s = 0.0
    t0 = time.perf_counter()
    k = 0
    while True:
        k += 1
        await clock.sleep_until(int(k * chunk_s * 1e9))
        now = k * chunk_s
        for t_ns, audio in out.played[heard:]:  # what the bot played since the last chunk
            loud = np.sqrt(np.mean((np.frombuffer(audio, "<i2") / 32768.0) ** 2)) > 0.01
            if loud:
                t = t_ns / 1e9
                if bot_last_loud_s is None or t - bot_last_loud_s > 0.3:
                    bot_onset_s = t
                bot_last_loud_s = t
        heard = len(out.played)
        if current is None and line_i < len(lines):
            kind, s = lines[line_i][1]
            bot_talking = bot_last_loud_s is not None and now - bot_last_loud_s < 0.1
            replied = bot_last_loud_s is not None and bot_last_loud_s > last_line_end_s
            go = ((kind == "at" and now >= s)
                  or (kind == "after" and replied and not bot_talking and now - bot_last_loud_s >= s)
                  or (kind == "barge" and bot_talking and bot_onset_s > last_line_end_s and now - bot_onset_s >= s)
                  or (now - last_line_end_s > 12.0))  # the bot never answered: go on anyway
            if go:
                current, pos = lines[line_i][0], 0
                line_i += 1
        x = (rng.standard_normal(n) * 10 ** (-65 / 20)).astype(np.float32)
        if current is not None:
            seg = current[pos:pos + n]
            x[:len(seg)] += seg
            pos += n
            if pos >= len(current):
                current, last_line_end_s = None, now
        await inp.feed(float32_to_pcm16(resample(x, SAMPLE_RATE, rate)))
        if line_i == len(lines) and current is None and (bot_last_loud_s or 0.0) > last_line_end_s \
                and now - bot_last_loud_s > 1.5:
            break
        if now > max_s:
            print(f"caller: stopping at the {max_s:.0f} s cap", file=sys.stderr)
            break
    await worker.queue_frame(EndFrame())
    print(f"caller done after {time.perf_counter() - t0:.1f} s", file=sys.stderr)


async def run(args, livejudge: bool = True, observers: tuple = ()) -> dict | None:
    """Run the bot with a caller; returns the livejudge result (None with ``livejudge=False``,
    which the overhead benchmark uses as its baseline; ``observers`` are added as well)."""
    clock = RealClock()
    inp = ScriptedInputTransport(args.in_rate)
    vad = VADProcessor(vad_analyzer=SileroVADAnalyzer(params=VADParams(stop_secs=args.vad_stop_s)))
    bot = ReplyBot(args.out_rate, args.think_s, args.max_reply_s)
    out = PacedOutputTransport(clock, args.out_rate)
    pipeline = Pipeline([inp, vad, bot, out])

    observers = list(observers)
    if livejudge:
        # ---- the one line that adds livejudge (to the worker's observers) ---------------
        observers.insert(0, LiveJudgeObserver(judge=args.judge, config=SessionConfig(interval_s=2.0),
                                              display=False if args.display == "none" else args.display,
                                              result_path=args.result, events_path=args.events))
        # ---------------------------------------------------------------------------------

        @observers[0].event_handler("on_transition")
        async def on_transition(obs, t):
            if t.is_response and args.display == "none":
                print(f"  response latency {t.gap_s * 1000:.0f} ms (audio)")

    worker = PipelineWorker(pipeline, observers=observers, clock=clock, enable_rtvi=False, idle_timeout_secs=None,
                            params=PipelineParams(audio_in_sample_rate=args.in_rate,
                                                  audio_out_sample_rate=args.out_rate))
    runner = WorkerRunner(handle_sigint=True)
    await runner.add_workers(worker)

    async def scripted_caller() -> None:
        try:
            await caller(inp, out, clock, args.in_rate, worker)
        except Exception:
            await runner.cancel(reason="the scripted caller failed")
            raise

    # the caller is part of the call: it ends with the runner (Ctrl-C cancels the runner; a
    # trial's caller went on alone to its 90 s cap)
    caller_task = asyncio.ensure_future(scripted_caller())
    try:
        await runner.run()
    finally:
        caller_task.cancel()
        await asyncio.gather(caller_task, return_exceptions=True)
    if not caller_task.cancelled() and caller_task.exception() is not None:
        raise caller_task.exception()
    return observers[0].result() if livejudge else None


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", default="auto", help="auto (default: the whisper head) | acoustic | none")
    ap.add_argument("--display", default="auto", help="auto | rich | plain | none (default auto)")
    ap.add_argument("--result", default=None, help="write the result document (JSON) here")
    ap.add_argument("--events", default=None, help="write the JSONL event log here")
    ap.add_argument("--in-rate", type=int, default=16000, help="input transport rate, Hz (Silero: 8000/16000)")
    ap.add_argument("--out-rate", type=int, default=24000, help="output transport rate, Hz (default 24000)")
    ap.add_argument("--think-s", type=float, default=0.3, help="bot think time after the VAD stop (default 0.3)")
    ap.add_argument("--vad-stop-s", type=float, default=0.4, help="Silero stop_secs (default 0.4)")
    ap.add_argument("--max-reply-s", type=float, default=3.0, help="reply clip length cap (default 3.0)")
    ap.add_argument("--verbose", action="store_true", help="keep Pipecat's debug log")
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if not args.verbose:
        logger.remove()
        logger.add(sys.stderr, level="WARNING")
    try:
        r = asyncio.run(run(args))
    except KeyboardInterrupt:  # Ctrl-C before the runner handles it (imports, loading the judge)
        print("interrupted (Ctrl-C) before the call began: nothing to write", file=sys.stderr)
        return 130
    c = r["framework_comparison"]
    print("\nresponse latency, per answer (framework = Pipecat's events; audio = livejudge):")
    for row in c["response_latency"]["rows"]:
        au = "—" if row["audio_latency_s"] is None else f"{row['audio_latency_s'] * 1000:.0f} ms"
        print(f"  framework {row['framework_latency_s'] * 1000:5.0f} ms   audio {au:>7}   "
              f"(user stop: VAD says {row['framework_user_stop_s']:.2f} s, audio {row.get('audio_user_offset_s', float('nan')):.2f} s;"
              f" bot start: frame {row['framework_bot_start_s']:.2f} s, audio {row.get('audio_agent_onset_s', float('nan')):.2f} s)")
    print(" ", c["response_latency"]["text"])
    v = c["vad_onsets"]
    if v["rows"]:
        print(f"  Silero onsets: claimed − audio {v['mean_onset_error_s'] * 1000:+.0f} ms on average; "
              f"decided {v['mean_decision_delay_s'] * 1000:.0f} ms after the audio onset")
    n_fw, n_audio = len(c["response_latency"]["rows"]), r["summary"]["latency_count"]
    if n_fw < n_audio:
        print(f"  ({n_audio - n_fw} of {n_audio} answers have no framework latency: Pipecat 1.14 re-fires "
              "BotStartedSpeaking after an interruption, so its own latency skips the next answer)")

    def ms(x):
        return "—" if x is None else f"{x * 1000:.0f} ms"

    cut = [x["onset_s"] for x in r.get("barge_ins") or () if x.get("cut_by_end")]
    for b in c["barge_ins"]:
        # one the call's end cut: "— later" for all three read as events that never happened (a trial)
        if any(abs(b["audio_onset_s"] - t) <= 0.05 for t in cut):
            print(f"  barge-in at {b['audio_onset_s']:.2f} s: the call ended before Pipecat's events and the bot's "
                  "yield could be seen (cut by its end)")
            continue
        print(f"  barge-in at {b['audio_onset_s']:.2f} s: InterruptionFrame {ms(b.get('interruption_after_s'))} later, "
              f"BotStoppedSpeaking {ms(b.get('bot_stopped_after_s'))} later; the bot's audio really ended "
              f"{ms(b.get('audio_yield_s'))} after the barge-in (livejudge's yield time)")
        if (b.get("audio_yield_s") is not None and b.get("interruption_after_s") is not None
                and b["audio_yield_s"] < b["interruption_after_s"]):
            print("    (the audio went quiet before Pipecat interrupted: the reply was in a pause, or its "
                  "last syllable faded, when the caller cut in)")
    s = r["summary"]
    mp = "—" if s["mean_p_human"] is None else f"{s['mean_p_human']:.2f}"
    print(f"  summary: {s['latency_count']} responses, mean {ms(s['latency_mean_s'])}; barge-ins "
          f"{s['barge_in_count']}, mean yield {ms(s['yield_mean_s'])}; mean P(human) {mp}")
    if args.result:
        print(f"  result written to {args.result}")
    ended = r["source"].get("ended") or ""
    if ended.startswith("interrupted"):  # Ctrl-C: Pipecat's runner cancelled the call
        print(f"{ended}: result written for what was measured so far", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
