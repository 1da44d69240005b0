"""Pipeline speed: `score --speed max` on a 10-minute two-channel call, on one core.

Reports the real-time factor of the whole pipeline without the judge and with the default
judge (30 s window every 2 s), the judge's time per window (p50/p95), and peak memory.
Targets (issue 2): ≥ 50× real time without the judge; judge ≤ 100 ms per 30 s window.

    python benchmarks/pipeline_speed.py [--minutes 10] [--json out.json]
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def long_call(minutes: float):
    from livejudge.audio import TwoChannelAudio
    from livejudge.testing.dialogues import example_dialogue

    parts_u, parts_a, total, seed = [], [], 0.0, 0
    while total < minutes * 60:
        d = example_dialogue(seed=seed, machine_agent=seed % 2 == 0)
        parts_u.append(d.call.user)
        parts_a.append(d.call.agent)
        total += d.call.duration_s
        seed += 1
    n = int(minutes * 60 * 16000)
    u, a = np.concatenate(parts_u)[:n], np.concatenate(parts_a)[:n]
    return TwoChannelAudio(u, a, 16000, {"user": 0, "agent": 1})


def run(call, judge, interval_s=2.0, depth=None):
    """Score ``call`` as ``livejudge score`` does (every window judged; ``depth`` windows may queue
    ahead of the judge, default the CLI's ``EVERY_DEPTH``): (wall seconds, result document)."""
    from livejudge.judge.model.scheduler import EVERY_DEPTH
    from livejudge.session import Session, SessionConfig, stream_call

    s = Session(SessionConfig(interval_s=interval_s, judge_mode="every",
                              judge_depth=EVERY_DEPTH if depth is None else depth), judge=judge)
    t0 = time.perf_counter()
    stream_call(s, call)
    r = s.close()
    return time.perf_counter() - t0, r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    import torch

    torch.set_num_threads(1)
    from livejudge.judge.model.judge import load_judge

    call = long_call(args.minutes)
    dur = call.duration_s
    wall_nojudge, r0 = run(call, None)
    judge = load_judge("acoustic")
    wall_judge, r1 = run(call, judge)
    per_win = [j["compute_ms"] for j in r1["judge"]]
    out = {
        "call_s": round(dur, 1),
        "cores": 1,
        "no_judge": {"wall_s": round(wall_nojudge, 2), "realtime_factor": round(dur / wall_nojudge, 1)},
        "with_judge": {"wall_s": round(wall_judge, 2), "realtime_factor": round(dur / wall_judge, 1),
                       "windows": len(per_win), "interval_s": 2.0, "window_s": 30.0},
        "judge_ms_per_window": {"p50": round(float(np.percentile(per_win, 50)), 1),
                                "p95": round(float(np.percentile(per_win, 95)), 1),
                                "max": round(float(np.max(per_win)), 1)},
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "turns": len(r0["turns"]),
    }
    print(f"call {dur:.0f} s on 1 core")
    print(f"  pipeline without judge : {wall_nojudge:6.2f} s  → {dur / wall_nojudge:7.1f}× real time (target ≥ 50×)")
    print(f"  pipeline with judge    : {wall_judge:6.2f} s  → {dur / wall_judge:7.1f}× real time "
          f"({len(per_win)} windows of 30 s every 2 s)")
    print(f"  judge per 30 s window  : p50 {out['judge_ms_per_window']['p50']} ms, p95 "
          f"{out['judge_ms_per_window']['p95']} ms (target ≤ 100 ms)")
    print(f"  peak memory            : {out['peak_rss_mb']} MB RSS")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
