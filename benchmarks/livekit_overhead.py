"""What livejudge.livekit.attach costs a running LiveKit AgentSession.

1. Added time per frame on the event loop: the input tap's ``__anext__`` (10 ms caller frames
   at 16 kHz) and the output tap's ``capture_frame`` (10 ms agent frames at 24 kHz), timed
   call by call with ``perf_counter_ns``, next to the bare input/output they wrap.
2. Off-loop cost: the worker thread's CPU time per second of call (conversion, resampling,
   VAD, turn analysis), for reference (it runs beside the agent, not in its path).
3. The session's pace, in real time: the offline example call (``demo_script``, ~22 s)
   without and with livejudge; when each reply starts playing after the caller's start, and
   the loop lag (overshoot of a 10 ms ``asyncio.sleep`` probe), as differences.

Run:  HF_HUB_OFFLINE=1 python benchmarks/livekit_overhead.py [--quick] [--frames N]
(about 75 s; --quick: section 1 only, seconds)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def pct(xs, q):
    return float(np.percentile(np.asarray(xs, dtype=np.float64), q)) if len(xs) else float("nan")


async def per_frame_cost(n: int) -> None:
    from livekit import rtc
    from livekit.agents import AgentSession
    from livekit.agents.voice.io import AudioInput

    import livejudge.livekit as lj
    from livejudge.testing.livekit import NullOutput

    user = rtc.AudioFrame(bytes(320), 16000, 1, 160)
    agent = rtc.AudioFrame((np.random.default_rng(0).normal(0, 3000, 240)).astype(np.int16).tobytes(), 24000, 1, 240)

    class Src(AudioInput):
        async def __anext__(self):
            return user

    async def time_input(inp) -> list[int]:
        out = []
        for _ in range(n):
            t = time.perf_counter_ns()
            await inp.__anext__()
            out.append(time.perf_counter_ns() - t)
        return out

    async def time_output(o) -> list[int]:
        out = []
        for k in range(n):
            t = time.perf_counter_ns()
            await o.capture_frame(agent)
            out.append(time.perf_counter_ns() - t)
            if k % 300 == 299:
                o.flush()
        return out

    bare_in, bare_out = Src(label="bare"), NullOutput(label="bare")
    b_in = await time_input(bare_in)
    b_out = await time_output(bare_out)
    s = AgentSession()
    s.input.audio = Src(label="src")
    s.output.audio = NullOutput(label="sink")
    tap = lj.attach(s, judge="none", close_with_session=False,
                    options=lj.TapOptions(max_queue=4 * n))
    # the frames here come back to back, not paced as a call's: the tap's lines about them (a
    # stalled bunch, no speech, a silent channel) are about this test source, so they are kept
    # off the output (a trial read them as a fault); this section times the taps' calls only
    with contextlib.redirect_stderr(io.StringIO()):
        t_in = await time_input(s.input.audio)
        t_out = await time_output(s.output.audio)
        await tap.aclose()
    print(f"1. per frame on the event loop ({n} frames each, handed over back to back; µs):")
    for name, b, t in (("input  __anext__ (10 ms @16 kHz)", b_in, t_in),
                       ("output capture_frame (10 ms @24 kHz)", b_out, t_out)):
        print(f"   {name}: bare p50 {pct(b, 50) / 1e3:.2f} p99 {pct(b, 99) / 1e3:.2f}; "
              f"with livejudge p50 {pct(t, 50) / 1e3:.2f} p99 {pct(t, 99) / 1e3:.2f}; "
              f"added p50 {(pct(t, 50) - pct(b, 50)) / 1e3:+.2f} µs "
              f"({(pct(t, 50) - pct(b, 50)) / 1e5:.4f} % of the frame's 10 ms)")


async def _one_call(attach: bool) -> dict:
    from livejudge.testing.livekit import build_session, demo_script, run_call
    import livejudge.livekit as lj

    script = demo_script()
    session, caller, out = build_session(script)
    tap = lj.attach(session, judge="none") if attach else None
    lags: list[float] = []
    stop = asyncio.Event()

    async def probe():
        while not stop.is_set():
            t = time.perf_counter()
            await asyncio.sleep(0.01)
            lags.append(time.perf_counter() - t - 0.01)

    p = asyncio.ensure_future(probe())
    await run_call(session, caller)
    stop.set()
    await p
    info = (await tap.aclose())["livekit"] if tap is not None else None
    starts = [s.started_wall - caller.t0_wall for s in out.segments]
    return {"starts": starts, "lag_p50": pct(lags, 50), "lag_p99": pct(lags, 99), "info": info}


def worker_cost(seconds: float = 20.0) -> None:
    """The worker's own cost: feed a Session the way the tap does (10 ms user + agent chunks)."""
    from livejudge.session import Session

    rng = np.random.default_rng(1)
    s = Session()
    n = int(seconds / 0.01)
    x16 = (rng.normal(0, 0.05, 160)).astype(np.float32)
    x24 = (rng.normal(0, 0.05, 240)).astype(np.float32)
    t = time.perf_counter()
    for k in range(n):
        s.push_audio("user", x16, 16000, k * 0.01)
        s.push_audio("agent", x24, 24000, k * 0.01)
    dt = time.perf_counter() - t
    s.close()
    print(f"2. worker (off the loop): {dt / seconds * 1000:.1f} ms CPU per second of call "
          f"({dt / n * 1e6:.0f} µs per 10 ms frame pair)")


async def pace() -> None:
    await _one_call(False)  # warm-up: first streams, tokenizer, imports
    a = await _one_call(False)
    b = await _one_call(True)
    print("3. the session's pace, real time (reply start after the caller's start, s):")
    print(f"   without livejudge: {[round(x, 3) for x in a['starts']]}  loop lag p50 {a['lag_p50'] * 1000:.2f} ms "
          f"p99 {a['lag_p99'] * 1000:.2f} ms")
    print(f"   with livejudge:    {[round(x, 3) for x in b['starts']]}  loop lag p50 {b['lag_p50'] * 1000:.2f} ms "
          f"p99 {b['lag_p99'] * 1000:.2f} ms")
    d = [round((y - x) * 1000, 1) for x, y in zip(a["starts"], b["starts"])]
    print(f"   difference per reply (ms): {d}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="section 1 only")
    ap.add_argument("--frames", type=int, default=3000)
    args = ap.parse_args()
    asyncio.run(per_frame_cost(args.frames))
    if not args.quick:
        worker_cost()
        asyncio.run(pace())


if __name__ == "__main__":
    main()
