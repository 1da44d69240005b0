"""Load test of the judge service (livejudge serve-judge / Ray Serve) on loopback.

N simulated live sessions judge through one service: each session is what a live Session's
judging path is — its own live-mode ``JudgeScheduler`` (one pending slot: a window still
waiting when the next is due is dropped as stale) in front of a ``RemoteJudge`` — fed the
real WindowSnapshots of recorded calls (built by ``livejudge.testing.dialogues``, run through the
Session pipeline once beforehand) on a real-time clock: one window every ``--interval-s``
per session, sessions started at random phases. The audio path's own work (VAD, turns) is
left out so that the clients cost the machine little next to the judge.

Per N: offered windows/s (N / interval), judged windows/s, p50/p99 judge latency (window
due → result back: slot wait + HTTP + batching + judging), dropped (stale) and unjudged
(timed out / refused) windows, the service's mean batch size, and whether it saturated
(over 5 % of the windows dropped or unjudged, or p99 latency over the interval). ``shed``:
windows the service skipped because their client had already given up (its timeout).

    python benchmarks/judge_service_load.py                      # starts a local CPU service
    python benchmarks/judge_service_load.py --url http://gpu-host:8000/judge --sessions 8,32,64,128

Needs livejudge[ray] for the local service (not for ``--url``).
"""

from __future__ import annotations

import argparse
import heapq
import random
import socket
import sys
import threading
import time

import numpy as np

from livejudge.distributed.remote import RemoteJudge
from livejudge.judge.model.scheduler import JudgeScheduler
from livejudge.session import Session, SessionConfig, stream_call
from livejudge.testing.dialogues import example_dialogue


def call_windows(n_calls: int, interval_s: float, window_s: float) -> list[list]:
    """The WindowSnapshots a live session of each recorded call submits (every ``interval_s``)."""
    out = []
    for seed in range(n_calls):
        d = example_dialogue(seed=seed)
        s = Session(SessionConfig(window_s=window_s, interval_s=interval_s))
        stream_call(s, d.call)
        dur = len(d.call.user) / 16000
        out.append([s.snapshot(t) for t in np.arange(interval_s, dur + 1e-9, interval_s)])
    return out


def run_level(url: str, n: int, duration_s: float, interval_s: float, windows: list[list], timeout_s: float,
              seed: int = 0) -> dict:
    rng = random.Random(seed)
    latencies: list[float] = []
    lock = threading.Lock()
    judges = [RemoteJudge(url, timeout_s=timeout_s, retry_s=0.5) for _ in range(n)]
    errors: list[str] = []
    scheds = [JudgeScheduler(j, mode="live", max_batch=1, on_error=errors.append).start() for j in judges]
    t0 = time.perf_counter()
    last_result = [t0]
    heap = [(t0 + rng.uniform(0, interval_s), k, rng.randrange(10**6)) for k in range(n)]
    heapq.heapify(heap)
    submitted = 0
    while heap:
        due, k, idx = heapq.heappop(heap)
        if due - t0 > duration_s:
            break
        wait = due - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        call = windows[k % len(windows)]
        snap = call[idx % len(call)]

        def done(result, t_sub=due):
            now = time.perf_counter()
            with lock:
                latencies.append(now - t_sub)
                last_result[0] = max(last_result[0], now)

        scheds[k].submit(snap, done, key=k)
        submitted += 1
        heapq.heappush(heap, (due + interval_s, k, idx + 1))
    for s in scheds:
        s.stop(drain=True, timeout_s=timeout_s + 5)
    span = max(last_result[0], t0 + duration_s) - t0
    lat = np.array(latencies) if latencies else np.array([np.nan])
    dropped = sum(s.dropped for s in scheds)
    unjudged = sum(j.unavailable_windows for j in judges)
    judged = len(latencies)
    offered = n / interval_s
    rate = judged / span
    return {"n": n, "offered": offered, "judged_per_s": rate, "p50_ms": float(np.percentile(lat, 50)) * 1e3,
            "p99_ms": float(np.percentile(lat, 99)) * 1e3, "submitted": submitted, "judged": judged,
            "dropped": dropped, "unjudged": unjudged,
            # saturated: more than 5 % of the windows lost, or results later than the next window
            "saturated": dropped + unjudged > 0.05 * submitted or float(np.percentile(lat, 99)) > interval_s,
            "errors": errors[:1]}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default=None, help="an existing judge service (default: start a local CPU one)")
    ap.add_argument("--sessions", default="1,8,32,64", help="comma-separated N")
    ap.add_argument("--duration-s", type=float, default=20.0, help="seconds of load per N")
    ap.add_argument("--interval-s", type=float, default=2.0, help="seconds between a session's windows")
    ap.add_argument("--window-s", type=float, default=30.0, help="judged window, seconds")
    ap.add_argument("--timeout-s", type=float, default=2.0, help="RemoteJudge timeout, seconds")
    ap.add_argument("--calls", type=int, default=3, help="recorded calls the sessions replay")
    ap.add_argument("--max-batch", type=int, default=16, help="local service: @serve.batch max_batch_size")
    ap.add_argument("--batch-wait-ms", type=float, default=10.0, help="local service: batch_wait_timeout_s in ms")
    ap.add_argument("--ray-cpus", type=int, default=None, help="local Ray: CPUs (default: all)")
    args = ap.parse_args(argv)
    levels = [int(x) for x in args.sessions.split(",")]

    windows = call_windows(args.calls, args.interval_s, args.window_s)
    url = args.url
    if url is None:
        import ray

        from livejudge.distributed.service import start_service

        ray.init(num_cpus=args.ray_cpus, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        t = time.perf_counter()
        url = start_service(port=_free_port(), max_batch_size=args.max_batch,
                            batch_wait_timeout_s=args.batch_wait_ms / 1000.0)
        print(f"local service up in {time.perf_counter() - t:.1f} s at {url}", file=sys.stderr)
    probe = RemoteJudge(url, timeout_s=30.0)
    info = probe.fetch_info()
    probe.judge(windows[0][-1:])  # warm-up
    print(f"judge {info.get('backbone')} / {info.get('head')} · max_batch {info.get('max_batch_size')} · "
          f"batch wait {info.get('batch_wait_timeout_s')} s · window {args.window_s:g} s every {args.interval_s:g} s "
          f"per session · {args.duration_s:g} s per level · timeout {args.timeout_s:g} s")
    print(f"{'N':>4} {'offered/s':>9} {'judged/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'dropped':>8} {'unjudged':>8} "
          f"{'batch':>6} {'shed':>5}  saturated")
    for n in levels:
        before = probe.fetch_info()
        r = run_level(url, n, args.duration_s, args.interval_s, windows, args.timeout_s)
        after = probe.fetch_info()
        nb = max(1, after.get("batches", 0) - before.get("batches", 0))
        mean_batch = (after.get("windows", 0) - before.get("windows", 0)) / nb
        shed = after.get("skipped", 0) - before.get("skipped", 0)
        print(f"{n:>4} {r['offered']:>9.1f} {r['judged_per_s']:>9.1f} {r['p50_ms']:>8.0f} {r['p99_ms']:>8.0f} "
              f"{r['dropped']:>8} {r['unjudged']:>8} {mean_batch:>6.1f} {shed:>5}  {'yes' if r['saturated'] else 'no'}"
              f"{'  (' + r['errors'][0][:90] + ')' if r['errors'] else ''}", flush=True)
    if args.url is None:
        from ray import serve

        serve.shutdown()
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
