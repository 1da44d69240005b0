"""Speed of the whisper judge (``--judge whisper``): encoder cost per second of agent speech,
judge cost per window, and a long call scored with the judge on.

1. Encoder: ``WhisperEncoder.encode`` on agent turns of 2, 5, 10 and 20 s (shipped clips
   concatenated), one CTranslate2 thread pinned to one core: ms per second of speech.
2. Judge per 30 s window: ``Judge.judge`` on windows of a call (``compute_ms``), p50/p95, with the
   turn cache as in a live session (a turn is encoded by the first window that holds all of it).
3. Long call: ``score`` (every window of 30 s judged every 2 s) of a ``--minutes`` call (default
   60) on ``--cores`` cores (default 2): real-time factor (target ≥ 30× for a 10-minute call: issue 19), encoder calls, peak RSS.

    python benchmarks/judge_whisper_speed.py [--minutes 60] [--cores 2] [--head DIR] [--json out.json]

``--head``: another whisper head (default the shipped one); a head with a frame readout also runs the
encoder's first blocks in NumPy and the readout per agent turn (``livejudge.judge.model.frame_cnn``).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--json", default=None)
    ap.add_argument("--head", default=None, metavar="DIR", help="whisper head (default: the shipped one)")
    ap.add_argument("--judge-depth", type=int, default=None, metavar="N",
                    help="windows queued ahead of the judge (default: the CLI's, scheduler.EVERY_DEPTH; 1: each "
                         "window judged before the next is submitted, as before 2026-12-06)")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    from livejudge.judge.features.backbones.whisper import WhisperEncoder
    from livejudge.judge.model.judge import load_judge
    from livejudge.testing.dialogues import load_clip
    from pipeline_speed import long_call, run

    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    out: dict = {}
    # 1. encoder, one core
    if cores:
        os.sched_setaffinity(0, {cores[0]})
    enc = WhisperEncoder(threads=1)
    src = np.concatenate([load_clip(c) for c in ("librivox_austen_0870", "librivox_austen_0880",
                                                 "librivox_austen_0890", "librivox_two_cities")])
    enc.encode(src[:32000])  # warm-up
    rows = []
    for sec in (2, 5, 10, 20):
        x = src[:sec * 16000]
        ts = []
        for _ in range(3):
            t0 = time.perf_counter()
            enc.encode(x)
            ts.append(time.perf_counter() - t0)
        ms = 1000 * min(ts)
        rows.append({"turn_s": sec, "ms": round(ms, 1), "ms_per_s": round(ms / sec, 2)})
        print(f"encoder, 1 core: {sec:2d} s turn → {ms:6.1f} ms ({ms / sec:5.2f} ms per second of speech)")
    out["encoder"] = rows
    # 2 + 3. long call on N cores
    if cores:
        os.sched_setaffinity(0, set(cores[:max(1, args.cores)]))
    call = long_call(args.minutes)
    judge = load_judge("whisper", head=args.head)
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    wall, r = run(call, judge, depth=args.judge_depth)
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    # CPU seconds the run used (all threads): on a shared box the wall clock also counts other
    # people's work; call_s / cpu_s is the real-time factor with ONE core to ourselves (a lower
    # bound for two cores)
    cpu_s = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    per_win = np.array([j["compute_ms"] for j in r["judge"]])
    dur = call.duration_s
    out["long_call"] = {
        "call_s": round(dur, 1), "cores": args.cores, "wall_s": round(wall, 2), "realtime_factor": round(dur / wall, 1),
        "cpu_s": round(cpu_s, 2), "realtime_factor_cpu": round(dur / cpu_s, 1),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "windows": len(per_win), "encoder_calls": judge.backbone.encoder.n_calls,
        "agent_turns": sum(1 for t in r["turns"] if t["channel"] == "agent"),
        "judge_ms_per_window": {"p50": round(float(np.percentile(per_win, 50)), 1),
                                "p95": round(float(np.percentile(per_win, 95)), 1),
                                "max": round(float(per_win.max()), 1)},
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "head": judge.info()["summary"], "frame_readout": judge.frame_readout is not None,
        "judge_depth": args.judge_depth,
    }
    lc = out["long_call"]
    print(f"judge per 30 s window: p50 {lc['judge_ms_per_window']['p50']} ms, p95 {lc['judge_ms_per_window']['p95']} ms, "
          f"max {lc['judge_ms_per_window']['max']} ms ({lc['windows']} windows)")
    print(f"{dur / 60:.0f}-minute call, score with --judge whisper on {args.cores} cores: {wall:.1f} s → "
          f"{dur / wall:.1f}× real time (target ≥ 30×, issue 19; load average {lc['load_average_1min']}); CPU time {cpu_s:.1f} s → "
          f"{dur / cpu_s:.1f}× real time per busy core; {lc['encoder_calls']} encoder calls for "
          f"{lc['agent_turns']} agent turns; peak RSS {lc['peak_rss_mb']} MB")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
