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
   Printed as p50/p99 and as ratios to the no-observer run.

Run:  HF_HUB_OFFLINE=1 python benchmarks/observer_overhead.py [--quick]
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
    from livejudge.pipecat.testing import PacedOutputTransport, RealClock

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
    from livejudge.testing import example_dialogue

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
    from livejudge.testing import DialogueBuilder

    b = DialogueBuilder(seed=3)
    b.user("cmu_cards_001")
    b.agent("espeak_reply_02", gap_s=0.6)
    b.user("cmu_cards_004", barge_in_after_s=1.2, agent_yield_s=0.35)
    b.agent("espeak_reply_05", gap_s=0.9)
    b.user("cmu_cards_002", gap_s=0.3)
    b.agent("espeak_reply_03", gap_s=1.4, max_s=1.5)
    return b.build()


async def realtime_run(dialogue, observer_kind: str | None) -> dict:
    from pipecat.frames.frames import InputAudioRawFrame, TTSAudioRawFrame
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="per-frame figures only (no real-time runs)")
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


if __name__ == "__main__":
    main()
