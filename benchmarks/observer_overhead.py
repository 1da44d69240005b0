"""What LiveJudgeObserver costs a running Pipecat agent.

1. Added time per frame on the event loop: ``on_push_frame`` over a realistic mix of pushes
   (user audio first pushes, re-pushes of the same frame by later processors, the output
   transport's played chunks, framework events, other frames), timed call by call with
   ``perf_counter_ns``, next to a do-nothing ``BaseObserver``. Target: < 0.1 ms p50.
2. Off-loop cost: the worker thread's time per 20 ms audio chunk (conversion, resampling,
   VAD, turn analysis), for reference (it runs beside the agent, not in its path).
3. Effect on the agent's own latency, in real time: the scripted conversation of the tests
   (~15 s) through a real PipelineWorker — without an observer, with the observer timing
   only, and with the observer plus the acoustic judge — measuring
   * transit: input transport push → the agent stage receiving the frame, per user chunk;
   * reply onset: the output transport's first played chunk − the agent's scheduled reply
     time (the agent's response latency as its own code would measure it);
   * loop lag: overshoot of a 10 ms ``asyncio.sleep`` probe.
   Printed as p50/p99 and as differences to the no-observer run.
4. The agent stamp against a real client: Pipecat's SingleClientWebsocketServerTransport and
   a websocket client in this process; the output transport's push time of each chunk vs
   the time a client that plays on arrival starts playing it.
5. The example agent's own latency, as Pipecat's UserBotLatencyObserver reports it, without
   and with LiveJudgeObserver (examples/pipecat_embed.py, real time, ~30 s a run).

Run:  HF_HUB_OFFLINE=1 python benchmarks/observer_overhead.py [--quick] [--repeats N] [--example-runs N]
(about 4 minutes with the defaults; --quick: sections 1–2 only, seconds)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def pct(xs, q):
    return float(np.percentile(np.asarray(xs, dtype=np.float64), q)) if len(xs) else float("nan")


def quiet_logs():
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")


# ------------------------------------------------------------------ 1. on_push_frame cost
async def per_frame_cost(n_chunks: int) -> dict:
    from pipecat.frames.frames import (BotSpeakingFrame, InputAudioRawFrame, TTSAudioRawFrame,
                                       VADUserStartedSpeakingFrame)
    from pipecat.observers.base_observer import BaseObserver, FramePushed
    from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

    from livejudge.pipecat import LiveJudgeObserver
    from livejudge.testing.pipecat import PacedOutputTransport, RealClock

    out = PacedOutputTransport(RealClock(), 24000)
    other = FrameProcessor(name="stt")
    down = FrameDirection.DOWNSTREAM
    rng = np.random.default_rng(0)
    user = [InputAudioRawFrame(audio=(rng.standard_normal(320) * 3000).astype("<i2").tobytes(), sample_rate=16000,
                               num_channels=1) for _ in range(50)]
    agent = [TTSAudioRawFrame(audio=(rng.standard_normal(480) * 3000).astype("<i2").tobytes(), sample_rate=24000,
                              num_channels=1) for _ in range(50)]
    pushes = []
    for k in range(n_chunks):
        t = k * 20_000_000
        pushes.append(FramePushed(other, other, user[k % 50], down, t, True))     # input transport's push
        pushes.append(FramePushed(other, other, user[k % 50], down, t, False))    # re-push by a later stage
        pushes.append(FramePushed(other, out, agent[k % 50], down, t, True))      # TTS → output (not played yet)
        pushes.append(FramePushed(out, other, agent[k % 50], down, t, False))     # played: output → next
        if k % 10 == 0:
            pushes.append(FramePushed(out, other, BotSpeakingFrame(), down, t, True))
        if k % 100 == 0:
            pushes.append(FramePushed(other, other, VADUserStartedSpeakingFrame(start_secs=0.2), down, t, True))

    async def timed(obs) -> list[int]:
        # paced at 10× real time (2 ms per 20 ms chunk) so the worker thread runs alongside,
        # as it does in a live call (GIL contention included)
        ns = []
        t_start = time.perf_counter()
        for p in pushes:
            if p.first_push and p.destination is other and type(p.frame).__name__ == "InputAudioRawFrame":
                due = t_start + p.timestamp / 1e9 / 10
                delay = due - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
            t0 = time.perf_counter_ns()
            await obs.on_push_frame(p)
            ns.append(time.perf_counter_ns() - t0)
        return ns

    base = await timed(BaseObserver())
    obs = LiveJudgeObserver(judge=None)
    ours = await timed(obs)
    t0 = time.perf_counter()
    res = await obs.close()
    drain_s = time.perf_counter() - t0
    audio_s = n_chunks * 0.02
    return {"pushes": len(pushes), "ours_us": ours, "base_us": base, "drain_s": drain_s, "audio_s": audio_s,
            "frames": res["pipecat"]["frames"], "dropped": res["pipecat"]["dropped_items"]}


def worker_cost(n_chunks: int) -> list[float]:
    """Per-chunk time of the worker's handling (user 16 kHz + agent 24 kHz), microseconds."""
    from livejudge.pipecat.observer import _AUDIO, LiveJudgeCore
    from livejudge.testing.dialogues import example_dialogue

    d = example_dialogue()
    core = LiveJudgeCore(judge=None)
    from livejudge.audio import float32_to_pcm16, resample

    u = float32_to_pcm16(d.call.user)
    a = float32_to_pcm16(resample(d.call.agent, 16000, 24000))
    out = []
    for k in range(min(n_chunks, len(u) // 640)):
        t_ns = (k + 1) * 20_000_000
        t0 = time.perf_counter_ns()
        core._handle((_AUDIO, "user", u[k * 640:(k + 1) * 640], 16000, 1, t_ns))
        core._handle((_AUDIO, "agent", a[k * 960:(k + 1) * 960], 24000, 1, t_ns - 20_000_000))
        out.append((time.perf_counter_ns() - t0) / 1000 / 2)
    core.close_blocking()
    return out


# ------------------------------------------------------------------ 3. real-time pipeline
def make_dialogue():
    """The conversation of tests/test_pipecat_observer.py (three answers, one yielded barge-in)."""
    from livejudge.testing.dialogues import DialogueBuilder

    b = DialogueBuilder(seed=3)
    b.user("cmu_cards_001")
    b.agent("espeak_reply_02", gap_s=0.6)
    b.user("cmu_cards_004", barge_in_after_s=1.2, agent_yield_s=0.35)
    b.agent("espeak_reply_05", gap_s=0.9)
    b.user("cmu_cards_002", gap_s=0.3)
    b.agent("espeak_reply_03", gap_s=1.4, max_s=1.5)
    return b.build()


async def realtime_run(dialogue, observer_kind: str | None) -> dict:
    from pipecat.frames.frames import InputAudioRawFrame
    from pipecat.processors.frame_processor import FrameProcessor

    from livejudge.pipecat import LiveJudgeObserver
    from livejudge.pipecat import testing as T

    feed_ns: dict[int, int] = {}
    transit_ms: list[float] = []

    class Probe(FrameProcessor):
        async def process_frame(self, frame, direction):
            await super().process_frame(frame, direction)
            if isinstance(frame, InputAudioRawFrame) and frame.id in feed_ns:
                transit_ms.append((time.perf_counter_ns() - feed_ns.pop(frame.id)) / 1e6)
            await self.push_frame(frame, direction)

    orig_feed = T.ScriptedInputTransport.feed

    async def feed(self, audio: bytes) -> None:
        f = InputAudioRawFrame(audio=audio, sample_rate=self.rate, num_channels=1)
        feed_ns[f.id] = time.perf_counter_ns()
        await self.push_audio_frame(f)

    T.ScriptedInputTransport.feed = feed
    lag_ms: list[float] = []
    stop = asyncio.Event()

    async def lag_probe():
        while not stop.is_set():
            t0 = time.perf_counter()
            await asyncio.sleep(0.01)
            lag_ms.append((time.perf_counter() - t0 - 0.01) * 1000)

    observers = []
    obs = None
    if observer_kind == "noop":
        from pipecat.observers.base_observer import BaseObserver

        observers = [BaseObserver()]
    elif observer_kind is not None:
        obs = LiveJudgeObserver(judge=observer_kind if observer_kind != "timing" else None)
        observers = [obs]
    probe_task = asyncio.ensure_future(lag_probe())
    cpu0 = time.process_time()
    try:
        stats = await T.run_scripted(dialogue, sample_rate=24000, mode="tts", observers=observers,
                                     virtual=False, extra=[Probe()])
    finally:
        T.ScriptedInputTransport.feed = orig_feed
        stop.set()
        await probe_task
    cpu = time.process_time() - cpu0
    # reply onset delay: first played chunk of each reply − its scheduled start
    script = T.agent_script(dialogue)
    played_s = [t / 1e9 for t, _ in stats.played]
    onset_ms = []
    for u in script:
        after = [p for p in played_s if p >= u.start_s - 1e-9]
        if after:
            onset_ms.append((after[0] - u.start_s) * 1000)
    res = {"transit_ms": transit_ms, "onset_ms": onset_ms, "lag_ms": lag_ms, "cpu_s": cpu}
    if obs is not None:
        r = obs.result()
        res["latencies_s"] = [t["gap_s"] for t in r["transitions"] if t["from"] == "user"]
        res["dropped"] = r["pipecat"]["dropped_items"]
        res["judged"] = len(r["judge"])
    return res


# ------------------------------------------------------------------ 4. stamp check, real websocket
async def websocket_stamp_check() -> dict:
    """Pipecat's real SingleClientWebsocketServerTransport and a websocket client in this
    process: is the output transport's push time of a chunk (the observer's agent stamp) the
    time a client that plays on arrival starts playing it?"""
    import socket

    import websockets
    from pipecat.frames.frames import (EndFrame, InputAudioRawFrame, OutputAudioRawFrame, TTSAudioRawFrame,
                                       TTSStartedFrame, TTSStoppedFrame)
    from pipecat.observers.base_observer import BaseObserver
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
    from pipecat.serializers.protobuf import ProtobufFrameSerializer
    from pipecat.transports.base_output import BaseOutputTransport
    from pipecat.transports.websocket.server import (SingleClientWebsocketServerParams,
                                                     SingleClientWebsocketServerTransport)
    from pipecat.workers.runner import WorkerRunner

    from livejudge.audio import float32_to_pcm16, resample
    from livejudge.testing.dialogues import load_clip, trim

    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        port = sock.getsockname()[1]

    class Bot(FrameProcessor):  # answers after 1 s and 5 s of user audio with 2 s of TTS audio
        def __init__(self):
            super().__init__()
            self.n = 0

        async def process_frame(self, frame, direction):
            await super().process_frame(frame, direction)
            if isinstance(frame, InputAudioRawFrame):
                self.n += 1
                if self.n in (50, 250):
                    self.create_task(self.say())
                return
            await self.push_frame(frame, direction)

        async def say(self):
            x = float32_to_pcm16(resample(trim(load_clip("espeak_reply_05"))[:32000], 16000, 24000))
            await self.push_frame(TTSStartedFrame())
            for i in range(0, len(x), 4800):
                await self.push_frame(TTSAudioRawFrame(audio=x[i:i + 4800], sample_rate=24000, num_channels=1))
            await self.push_frame(TTSStoppedFrame())

    class Rec(BaseObserver):  # the observer's selection rule, recording each stamp
        def __init__(self):
            super().__init__()
            self.push_ns: list[int] = []

        async def on_push_frame(self, d):
            if (isinstance(d.frame, OutputAudioRawFrame) and isinstance(d.source, BaseOutputTransport)
                    and d.direction == FrameDirection.DOWNSTREAM):
                self.push_ns.append(d.timestamp)

    tr = SingleClientWebsocketServerTransport(SingleClientWebsocketServerParams(
        audio_in_enabled=True, audio_out_enabled=True, serializer=ProtobufFrameSerializer()), port=port)
    rec = Rec()
    worker = PipelineWorker(Pipeline([tr.input(), Bot(), tr.output()]), observers=[rec], enable_rtvi=False,
                            idle_timeout_secs=None,
                            params=PipelineParams(audio_in_sample_rate=16000, audio_out_sample_rate=24000))
    arrivals: list[int] = []

    async def client():
        await asyncio.sleep(1.0)
        ser = ProtobufFrameSerializer()
        async with websockets.connect(f"ws://localhost:{port}") as ws:
            async def recv():
                async for m in ws:
                    f = await ser.deserialize(m)
                    if f is not None and hasattr(f, "audio"):
                        arrivals.append(time.monotonic_ns())

            rt = asyncio.ensure_future(recv())
            t0 = time.monotonic()
            for k in range(400):  # 8 s of user audio (silence), in real time
                d = t0 + k * 0.02 - time.monotonic()
                if d > 0:
                    await asyncio.sleep(d)
                await ws.send(await ser.serialize(OutputAudioRawFrame(audio=bytes(640), sample_rate=16000,
                                                                      num_channels=1)))
            await asyncio.sleep(0.5)
            rt.cancel()
        await worker.queue_frame(EndFrame())

    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    await asyncio.gather(runner.run(), client())
    t0 = worker._clock._time  # SystemClock start, monotonic ns (private; this is a check script)
    arr = [(a - t0) / 1e6 for a in arrivals]
    push = [p / 1e6 for p in rec.push_ns]
    interval = 40.0
    play: list[float] = []  # a client that plays on arrival: chunk k starts at max(arrival, end of k−1)
    for a in arr:
        play.append(a if not play or a > play[-1] + interval else play[-1] + interval)
    n = min(len(push), len(play))
    d_play = [push[k] - play[k] for k in range(n)]
    d_arr = [push[k] - arr[k] for k in range(n)]
    return {"chunks": n, "push_minus_play_ms": d_play, "push_minus_arrival_ms": d_arr}


# ------------------------------------------------------------------ 5. the example agent's own latency
def example_agent_latency(runs: int) -> dict:
    """examples/pipecat_embed.py (Silero VAD, reply bot, reactive caller) with Pipecat's own
    UserBotLatencyObserver, without and with LiveJudgeObserver (+ acoustic judge)."""
    import importlib.util
    from pathlib import Path

    from pipecat.observers.user_bot_latency_observer import UserBotLatencyObserver

    path = Path(__file__).resolve().parent.parent / "examples" / "pipecat_embed.py"
    spec = importlib.util.spec_from_file_location("pipecat_embed", path)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    args = ex.build_parser().parse_args(["--display", "none"])
    out: dict = {False: [], True: []}
    fw_vs_audio = []
    for _ in range(runs):
        for with_lj in (False, True):
            lat = UserBotLatencyObserver()

            @lat.event_handler("on_latency_measured")
            async def on_latency(_obs, latency, _acc=out[with_lj]):
                _acc.append(float(latency) * 1000)

            import contextlib
            import io

            with contextlib.redirect_stdout(io.StringIO()):
                res = asyncio.run(ex.run(args, livejudge=with_lj, observers=(lat,)))
            if res is not None:
                fw_vs_audio.append(res["framework_comparison"]["response_latency"]["text"])
    return {"without_ms": out[False], "with_ms": out[True], "texts": fw_vs_audio}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="per-frame figures only (no real-time runs)")
    ap.add_argument("--example-runs", type=int, default=1,
                    help="runs of the example agent per setting for section 5 (0 = skip; ~30 s each)")
    ap.add_argument("--no-websocket", action="store_true", help="skip the websocket stamp check")
    ap.add_argument("--repeats", type=int, default=2, help="real-time runs per setting (default 2)")
    ap.add_argument("--chunks", type=int, default=3000, help="20 ms chunks in the per-frame test (default 3000 = 60 s)")
    args = ap.parse_args()
    quiet_logs()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")

    r = asyncio.run(per_frame_cost(args.chunks))
    o, b = r["ours_us"], r["base_us"]
    print(f"\n1. on_push_frame per call ({r['pushes']} pushes = {r['audio_s']:.0f} s of two-sided audio + events,"
          f" paced at 10x real time)")
    print(f"   LiveJudgeObserver  p50 {pct(o, 50) / 1000:.2f} µs  p99 {pct(o, 99) / 1000:.2f} µs  max {max(o) / 1000:.1f} µs")
    print(f"   no-op BaseObserver p50 {pct(b, 50) / 1000:.2f} µs  p99 {pct(b, 99) / 1000:.2f} µs")
    print(f"   added p50 {(pct(o, 50) - pct(b, 50)) / 1000:.2f} µs = {(pct(o, 50) - pct(b, 50)) / 1e5:.4f} of the 0.1 ms target"
          f"; frames taken {r['frames']}, dropped {r['dropped']}")
    print(f"   worker drained {r['audio_s']:.0f} s of audio in {r['drain_s']:.2f} s after the last push")

    w = worker_cost(1500)
    print(f"\n2. worker thread per 20 ms chunk (off the event loop): p50 {pct(w, 50):.0f} µs  p99 {pct(w, 99):.0f} µs"
          f"  ({pct(w, 50) / 20000:.3f} of real time)")
    if args.quick:
        return

    d = make_dialogue()
    kinds = (None, "noop", "timing", "acoustic")
    names = {None: "none", "noop": "no-op BaseObserver", "timing": "LiveJudge (timing)",
             "acoustic": "LiveJudge + acoustic"}
    print(f"\n3. real-time pipeline, {len(d.call.user) / 16000:.1f} s conversation at 24 kHz, TTS-style agent,"
          f" {args.repeats} interleaved repeats per setting (pooled)")
    runs: dict = {k: {"transit_ms": [], "onset_ms": [], "lag_ms": [], "cpu_s": [], "latencies_s": [], "dropped": 0,
                      "judged": 0} for k in kinds}
    for _ in range(args.repeats):
        for kind in kinds:
            rr = asyncio.run(realtime_run(d, kind))
            for key in ("transit_ms", "onset_ms", "lag_ms"):
                runs[kind][key] += rr[key]
            runs[kind]["cpu_s"].append(rr["cpu_s"])
            if "latencies_s" in rr:
                runs[kind]["latencies_s"].append(rr["latencies_s"])
                runs[kind]["dropped"] += rr["dropped"]
                runs[kind]["judged"] += rr["judged"]
    base = runs[None]
    print(f"   {'observer':<22}{'transit p50/p99 ms':>20}{'reply onset p50/max ms':>24}{'loop lag p50/p99 ms':>22}"
          f"{'CPU s/run':>10}")
    for kind, rr in runs.items():
        print(f"   {names[kind]:<22}{pct(rr['transit_ms'], 50):>9.3f} / {pct(rr['transit_ms'], 99):<8.3f}"
              f"{pct(rr['onset_ms'], 50):>12.2f} / {max(rr['onset_ms']):<9.2f}"
              f"{pct(rr['lag_ms'], 50):>10.2f} / {pct(rr['lag_ms'], 99):<8.2f}{np.mean(rr['cpu_s']):>10.2f}")
    for kind in ("noop", "timing", "acoustic"):
        rr = runs[kind]
        print(f"   vs none, {names[kind]}: transit p50 {pct(rr['transit_ms'], 50) - pct(base['transit_ms'], 50):+.3f} ms,"
              f" reply onset p50 {pct(rr['onset_ms'], 50) - pct(base['onset_ms'], 50):+.2f} ms,"
              f" loop lag p99 {pct(rr['lag_ms'], 99) - pct(base['lag_ms'], 99):+.2f} ms")
    for kind in ("timing", "acoustic"):
        rr = runs[kind]
        print(f"   {names[kind]} measured response latencies {rr['latencies_s']} s "
              f"(truth {[round(x, 3) for x in d.truth.response_latencies_s]}), dropped items {rr['dropped']},"
              f" judged windows {rr['judged']}")

    if not args.no_websocket:
        w = asyncio.run(websocket_stamp_check())
        dp, da = w["push_minus_play_ms"], w["push_minus_arrival_ms"]
        print(f"\n4. agent stamp vs a real websocket client (SingleClientWebsocketServerTransport, 40 ms chunks,"
              f" {w['chunks']} chunks):")
        print(f"   push − client play start: median {pct(dp, 50):+.2f} ms, p95 |Δ| {pct(np.abs(dp), 95):.2f} ms"
              f"   (push − arrival: median {pct(da, 50):+.1f} ms: chunk k is sent one chunk before it plays)")

    if args.example_runs > 0:
        e = example_agent_latency(args.example_runs)
        wo, wi = e["without_ms"], e["with_ms"]
        print(f"\n5. the example agent's own latency (Pipecat UserBotLatencyObserver), {args.example_runs} run(s) each:")
        print(f"   without livejudge: n={len(wo)} mean {np.mean(wo):.1f} ms  p50 {pct(wo, 50):.1f} ms")
        print(f"   with livejudge   : n={len(wi)} mean {np.mean(wi):.1f} ms  p50 {pct(wi, 50):.1f} ms"
              f"   difference of means {np.mean(wi) - np.mean(wo):+.1f} ms")
        for t in e["texts"]:
            print(f"   livejudge on the same calls: {t}")


if __name__ == "__main__":
    main()
