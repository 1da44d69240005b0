"""livejudge inside a LiveKit Agents app, offline: one line, ``livejudge.livekit.attach(session)``.

    pip install -e '.[livekit]'
    python examples/livekit_embed.py [--result call.json] [--events events.jsonl] [--plain]

The app is built as LiveKit's examples are (an ``Agent`` with instructions, an ``AgentSession``
with STT, LLM, TTS and VAD, ``session.start``), with offline stand-ins from
``livejudge.testing.livekit``: a scripted caller speaking real human clips (it interrupts the
first reply), a scripted VAD/STT/LLM, a TTS that speaks real clips, and a real-time playout
clock in place of the room or the speakers. No server, no keys, no network; about 22 s.
Ctrl-C ends the call early: the result, report and event log cover what was measured
(``source.ended``: "interrupted (Ctrl-C)"), exit code 130.

In your own app, the line goes after ``await session.start(agent=..., room=ctx.room)`` (or in
console mode, ``python my_agent.py console``, where ``display=True`` shows the meter in the
same terminal)::

    judge = livejudge.livekit.attach(session, display=True, result_path="call.json")

Every result carries ``framework_comparison``: per reply, the audio-true response latency next
to LiveKit's own metrics (end_of_utterance_delay + LLM ttft + TTS ttfb) and the difference.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys

try:
    from livekit.agents import Agent, AgentSession, EndpointingOptions, InterruptionOptions
except ImportError:
    sys.exit("this example needs LiveKit Agents: pip install -e '.[livekit]'")

import livejudge.livekit
from livejudge.testing.livekit import (
    CallerInput, ClipTTS, PlayoutOutput, ScriptedLLM, ScriptedSTT, ScriptedVAD, demo_script,
)


class Assistant(Agent):
    def __init__(self) -> None:
        super().__init__(instructions="You are a helpful voice assistant. Answer in one sentence.")


async def entrypoint(args: argparse.Namespace) -> dict:
    script = demo_script()
    speeches = script.speeches_s()
    session = AgentSession(
        stt=ScriptedSTT(speeches),          # e.g. deepgram.STT()
        llm=ScriptedLLM(script.replies),    # e.g. openai.LLM(model="gpt-4o-mini")
        tts=ClipTTS(script.replies),        # e.g. cartesia.TTS()
        vad=ScriptedVAD(speeches),          # e.g. silero.VAD.load()
        turn_handling={"turn_detection": None,
                       "endpointing": EndpointingOptions(min_delay=0.2, max_delay=3.0),
                       "interruption": InterruptionOptions(min_duration=0.3, resume_false_interruption=False,
                                                           false_interruption_timeout=None)},
        aec_warmup_duration=None,
    )
    # offline stand-ins for the room (or the console's microphone and speakers)
    caller = CallerInput(script)
    session.input.audio = caller
    session.output.audio = PlayoutOutput()

    # Ctrl-C ends the call as a LiveKit worker's shutdown does: livejudge is told why, the call
    # stops and the session closes, so the result, report and event log cover what was measured
    # (without this, asyncio.run's KeyboardInterrupt would end the process mid-call). Installed
    # before the session starts: a Ctrl-C while the judge loads was taken by asyncio.run, its
    # cancellation swallowed, and the call exited 0 as if it had ended normally (a trial).
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    judge = None

    def on_ctrl_c() -> None:
        if judge is not None:
            judge.mark_ended(livejudge.livekit.interrupted(signal.SIGINT))  # the first reason wins
        stop.set()  # a second Ctrl-C, or one while the result is written, waits for the write

    loop.add_signal_handler(signal.SIGINT, on_ctrl_c)
    try:
        await session.start(agent=Assistant())

        # the one line
        judge = livejudge.livekit.attach(session, judge=args.judge, display="plain" if args.plain else True,
                                         result_path=args.result, events_path=args.events, report_path=args.report,
                                         fail_if=args.fail_if)
        if stop.is_set():  # Ctrl-C while the session started or the judge loaded
            judge.mark_ended(livejudge.livekit.interrupted(signal.SIGINT))

        async def call() -> None:
            await caller.play()  # the scripted caller speaks in real time
            await asyncio.sleep(1.0)
            with contextlib.suppress(RuntimeError):
                await session.drain()

        task = asyncio.ensure_future(call())
        stopped = asyncio.ensure_future(stop.wait())
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
        for t in (task, stopped):
            t.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task  # the call's own cancellation only
        await session.aclose()  # livejudge finishes with the session
        doc = await judge.aclose()
    finally:
        loop.remove_signal_handler(signal.SIGINT)
    return doc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", default="auto", help="auto (default: the whisper head), or none (timing only)")
    ap.add_argument("--result", default=None, help="write the result document (JSON) here")
    ap.add_argument("--events", default=None, help="write the event log (JSONL) here")
    ap.add_argument("--report", default=None, help="write the HTML report here (livejudge[report])")
    ap.add_argument("--fail-if", action="append", default=[], help="gate, e.g. 'latency_p90_s>1.2' (exit 3)")
    ap.add_argument("--plain", action="store_true", help="plain lines instead of the live meter")
    args = ap.parse_args()
    try:
        doc = asyncio.run(entrypoint(args))
    except KeyboardInterrupt:  # Ctrl-C before the call began (starting the session, loading the judge)
        print("interrupted (Ctrl-C) before the call began: nothing to write", file=sys.stderr)
        return 130
    fc = doc["framework_comparison"]["response_latency"]
    def ms(x):  # one unit and precision throughout ("eou 0.3008 s … e2e_latency 619 ms" mixed them; a trial)
        return "n/a" if x is None else f"{x * 1000:.0f} ms"

    print("\nLiveKit metrics vs audio-true response latency, per reply:")
    for r in fc["rows"]:
        lk = "n/a" if r["livekit_latency_s"] is None else f"{r['livekit_latency_s'] * 1000:.0f} ms"
        au = "n/a" if r["audio_latency_s"] is None else f"{r['audio_latency_s'] * 1000:.0f} ms"
        diff = "" if r["difference_s"] is None else f"  difference {r['difference_s'] * 1000:+.0f} ms"
        e2e = "" if r["livekit_e2e_latency_s"] is None else f", e2e_latency {r['livekit_e2e_latency_s'] * 1000:.0f} ms"
        print(f"  LiveKit {lk} (eou {ms(r['end_of_utterance_delay_s'])} + ttft {ms(r['llm_ttft_s'])} + "
              f"ttfb {ms(r['tts_ttfb_s'])}{e2e})   audio {au}{diff}")
    print(fc["text"])
    for b in doc["framework_comparison"]["barge_ins"]:
        if b.get("talked_through"):
            print(f"barge-in at {b['audio_onset_s']:.2f} s: the agent talked on through it")
            continue
        print(f"barge-in at {b['audio_onset_s']:.2f} s: the agent's speech stopped {ms(b['audio_yield_s'])} later "
              f"(LiveKit's playback cut {ms(b['playback_interrupted_after_s'])} after onset; the speech can stop "
              "sooner, at a pause)")
    ended = doc["source"].get("ended") or ""
    if ended.startswith("interrupted"):
        print(f"{ended}: result written for what was measured so far", file=sys.stderr)
        return 130
    return 3 if any(g["failed"] for g in doc.get("gates", [])) else 0


if __name__ == "__main__":
    sys.exit(main())
