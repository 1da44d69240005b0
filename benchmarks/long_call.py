"""Long calls at flat cost (issue 11 item 5): per-minute cost and memory over hours of audio.

Builds long two-channel calls by tiling dialogues made from the shipped clips (written to a
temporary 16-bit WAV block by block, never held whole), then, each in its own process pinned
to one core with single-threaded BLAS:

1. ``blocks``: a 2-hour call through the pipeline without the judge (what ``score --judge none``
   runs), timed per 10-minute block of call time: real-time factor per block and the cost per
   call-minute at the end against the start (target: equal within ±20 %), the total real-time
   factor (target ≥ 150×) and peak RSS.
2. ``file``: ``livejudge score FILE --judge none`` on a 3-hour file: wall time, real-time
   factor and peak RSS of the whole CLI process (target < 400 MB).
3. ``live``: a 2-hour live-paced session on a simulated clock: the user streams 20 ms
   frames, the agent sends audio only while it speaks (like a websocket bot), the session's
   clock is advanced after every frame (no sleeping), and a stand-in judge takes every window
   in live mode. RSS is sampled every 10 minutes of call time (target: flat).
4. ``judge``: ``livejudge score FILE`` with the default judge (auto: the whisper head) and with
   ``--judge none`` on a ``--judge-minutes`` call, on ``--judge-cores`` cores (issue 19's target:
   a 10-minute call ≥ 30× real time on 2 cores: ``--only judge --judge-minutes 10``).

    nice -n 10 python benchmarks/long_call.py                 # all four (≈ 10 min on one core)
    python benchmarks/long_call.py --only blocks --minutes 30  # one part, shorter

Figures are printed as ratios and per-window times; ``--json OUT`` keeps them.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

BLOCK_MIN = 10.0


def rss_mb() -> float:
    """Current resident set size of this process, MB (from /proc)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pin_one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})


def make_call_file(path: Path, minutes: float, n_dialogues: int = 8) -> float:
    """Tile built dialogues (real clips, every turn-taking phenomenon) into a stereo 16 kHz
    PCM16 WAV of ``minutes``; written block by block. Returns its duration, seconds."""
    import soundfile as sf

    from livejudge.testing.dialogues import example_dialogue

    pool = [example_dialogue(seed=s, machine_agent=s % 2 == 0).stereo() for s in range(n_dialogues)]
    target = int(minutes * 60 * 16000)
    written, k = 0, 0
    with sf.SoundFile(str(path), "w", samplerate=16000, channels=2, subtype="PCM_16") as f:
        while written < target:
            x = pool[k % len(pool)][: target - written]
            f.write(np.clip(x, -1, 1))
            written += len(x)
            k += 1
    return written / 16000


# ---------------------------------------------------------------------------- workers
def _source(path: str):
    try:
        from livejudge.audio import open_call
    except ImportError:  # before the streaming reader existed: the whole file in memory
        from livejudge.audio import load_call

        return load_call(path)
    return open_call(path)


def worker_blocks(path: str) -> dict:
    """Pipeline without the judge; wall time at each 10-minute mark of call time."""
    from livejudge.session import Session, SessionConfig, stream_call

    t0 = time.perf_counter()
    call = _source(path)
    load_s = time.perf_counter() - t0
    dur = call.duration_s
    marks: list[tuple[float, float, float, float]] = []  # (call time, wall, cpu, rss)
    nxt = [BLOCK_MIN * 60]

    def progress(t_s: float) -> None:
        while t_s >= nxt[0] - 1e-6:
            marks.append((nxt[0], time.perf_counter(), time.process_time(), rss_mb()))
            nxt[0] += BLOCK_MIN * 60

    s = Session(SessionConfig(judge_mode="every"))
    start, start_cpu = time.perf_counter(), time.process_time()
    stream_call(s, call, on_progress=progress)
    end_push = time.perf_counter()
    r = s.close()
    end, end_cpu = time.perf_counter(), time.process_time()
    return {"call_s": dur, "load_s": load_s, "push_s": end_push - start, "close_s": end - end_push,
            "total_s": end - t0, "total_cpu_s": end_cpu - start_cpu, **_per_block(marks, start, start_cpu),
            "peak_rss_mb": peak_rss_mb(), "turns": len(r["turns"]), "segments": len(r["segments"])}


def _per_block(marks, start: float, start_cpu: float) -> dict:
    walls, cpus, prev, prev_cpu = [], [], start, start_cpu
    for _, w, c, _ in marks:
        walls.append(w - prev)
        cpus.append(c - prev_cpu)
        prev, prev_cpu = w, c
    return {"block_wall_s": walls, "block_cpu_s": cpus, "block_rss_mb": [m[3] for m in marks]}


class _StandInJudge:
    """Takes each window like a judge would (reads its events and audio), in microseconds."""

    def judge(self, windows):
        from livejudge.events import JudgeResult

        out = []
        for w in windows:
            level = float(np.sqrt(np.mean(w.agent[-1600:] ** 2))) if len(w.agent) else 0.0
            p = min(1.0, level + 0.01 * (len(w.turns) + len(w.transitions)))
            out.append(JudgeResult(w.end_s, w.start_s, w.end_s, p, {}))
        return out

    def info(self):
        return {"backbone": "stand-in", "provenance": "benchmark"}


def worker_live(path: str) -> dict:
    """A live-paced session on a simulated clock: RSS and wall per 10 minutes of call time."""
    from livejudge.session import Session, SessionConfig

    call = _source(path)
    s = Session(SessionConfig(judge_mode="live"), judge=_StandInJudge())
    step = 320
    marks, nxt = [], BLOCK_MIN * 60
    t0, t0_cpu = time.perf_counter(), time.process_time()
    i = 0
    if hasattr(call, "blocks"):
        blocks = call.blocks()
    else:
        blocks = iter([(call.user, call.agent)])
    cu = ca = np.zeros(0, dtype=np.float32)
    for u, a in blocks:
        u, a = np.concatenate([cu, u]), np.concatenate([ca, a])
        m = len(u) - len(u) % step
        for k in range(0, m, step):
            t = i / 16000
            s.push("user", u[k:k + step], t)
            if np.abs(a[k:k + step]).max() > 0.01:  # the agent sends audio only while it speaks
                s.push("agent", a[k:k + step], t)
            i += step
            s.advance(i / 16000)  # the session clock: end of this frame
            if i / 16000 >= nxt:
                marks.append((nxt, time.perf_counter(), time.process_time(), rss_mb()))
                nxt += BLOCK_MIN * 60
        cu, ca = u[m:], a[m:]
    r = s.close()
    return {"call_s": i / 16000, **_per_block(marks, t0, t0_cpu), "total_s": time.perf_counter() - t0,
            "total_cpu_s": time.process_time() - t0_cpu,
            "peak_rss_mb": peak_rss_mb(), "judged": r["summary"]["judged_windows"],
            "dropped": r["summary"]["dropped_windows"], "turns": len(r["turns"])}


def run_worker(kind: str, path: Path, pythonpath: str) -> dict:
    env = dict(os.environ, PYTHONPATH=pythonpath)
    out = subprocess.run([sys.executable, __file__, "--worker", kind, str(path)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_cli(path: Path, pythonpath: str, judge: str, cores: int = 1) -> dict:
    """``livejudge score`` in a child process pinned to ``cores`` cores: wall, CPU, peak RSS (of the child)."""
    env = dict(os.environ, PYTHONPATH=pythonpath)
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "r.json"
        cmd = [sys.executable, "-m", "livejudge.commands.cli", "score", str(path), "--judge", judge,
               "--json", str(out), "--display", "none"]
        if hasattr(os, "sched_getaffinity"):
            cpus = sorted(os.sched_getaffinity(0))[:max(1, cores)]
            cmd = ["taskset", "-c", ",".join(map(str, cpus))] + cmd
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, _, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        r = json.loads(out.read_text())
    return {"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "peak_rss_mb": ru.ru_maxrss / 1024,
            "call_s": r["duration_s"],
            "windows": r["summary"]["judged_windows"],
            "judge_ms_p50": float(np.median([j["compute_ms"] for j in r["judge"]])) if r["judge"] else None}


# ---------------------------------------------------------------------------- report
def _blocks_table(name: str, res: dict) -> list[str]:
    lines = [f"{name}: {res['call_s'] / 60:.0f} min call, per {BLOCK_MIN:.0f}-minute block of call time"]
    lines.append("   block (min)   wall s  CPU s   ×real time (CPU)   CPU ms per call-minute   RSS MB")
    for k, (w, c, rss) in enumerate(zip(res["block_wall_s"], res["block_cpu_s"], res["block_rss_mb"])):
        lines.append(f"  {k * BLOCK_MIN:5.0f}–{(k + 1) * BLOCK_MIN:<5.0f} {w:7.2f} {c:7.2f} {BLOCK_MIN * 60 / c:12.0f}×"
                     f" {1000 * c / BLOCK_MIN:18.0f}        {rss:7.1f}")
    c = res["block_cpu_s"]
    if len(c) >= 2:
        lines.append(f"  CPU cost per call-minute, last block / first block: {c[-1] / c[0]:.2f} "
                     f"(target 0.8–1.2); last two / first two: {(c[-1] + c[-2]) / (c[0] + c[1]):.2f}")
    rss = res["block_rss_mb"]
    if rss:
        lines.append(f"  RSS first → last block: {rss[0]:.0f} → {rss[-1]:.0f} MB; peak {res['peak_rss_mb']:.0f} MB")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=120.0, help="length of the call for blocks/live")
    ap.add_argument("--file-minutes", type=float, default=180.0, help="length of the file for the CLI memory run")
    ap.add_argument("--judge-minutes", type=float, default=60.0, help="length of the call judged by the CPU judge")
    ap.add_argument("--only", action="append", choices=("blocks", "file", "live", "judge"),
                    help="run only these parts (repeatable)")
    ap.add_argument("--pythonpath", default=str(Path(__file__).resolve().parents[1]),
                    help="livejudge checkout to measure (e.g. an older one, for before/after)")
    ap.add_argument("--judge-cores", type=int, default=2, help="cores the judge run may use (issue 19: 2)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--worker", nargs=2, metavar=("KIND", "FILE"), help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        pin_one_core()
        kind, path = args.worker
        res = worker_blocks(path) if kind == "blocks" else worker_live(path)
        print(json.dumps(res))
        return

    parts = args.only or ["blocks", "file", "live", "judge"]
    out: dict = {"pythonpath": args.pythonpath, "cores": 1, "load_avg": os.getloadavg()}
    print(f"livejudge from {args.pythonpath}; one core; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores (shared machine)")
    with tempfile.TemporaryDirectory(prefix="livejudge-long-") as d:
        files: dict[float, Path] = {}

        def call_file(minutes: float) -> Path:
            if minutes not in files:
                p = Path(d) / f"call_{minutes:g}min.wav"
                t = time.perf_counter()
                make_call_file(p, minutes)
                print(f"(built a {minutes:g}-minute call in {time.perf_counter() - t:.0f} s: {p.stat().st_size / 1e6:.0f} MB)")
                files[minutes] = p
            return files[minutes]

        if "blocks" in parts:
            res = run_worker("blocks", call_file(args.minutes), args.pythonpath)
            out["blocks"] = res
            print()
            print("\n".join(_blocks_table("pipeline without the judge", res)))
            print(f"  total: {res['total_cpu_s']:.1f} CPU s ({res['total_s']:.1f} s wall) for "
                  f"{res['call_s'] / 60:.0f} min → {res['call_s'] / res['total_cpu_s']:.0f}× real time per CPU "
                  f"second, {res['call_s'] / res['total_s']:.0f}× by the wall clock (target ≥ 150×); "
                  f"reading the file {res['load_s']:.2f} s, closing {res['close_s']:.2f} s")
        if "file" in parts:
            res = run_cli(call_file(args.file_minutes), args.pythonpath, "none")
            out["file"] = res
            print()
            print(f"livejudge score FILE --judge none on a {res['call_s'] / 60:.0f}-minute file: "
                  f"{res['cpu_s']:.1f} CPU s ({res['wall_s']:.1f} s wall) → "
                  f"{res['call_s'] / res['cpu_s']:.0f}× real time per CPU second "
                  f"({res['call_s'] / res['wall_s']:.0f}× by the wall clock), peak RSS {res['peak_rss_mb']:.0f} MB (target < 400 MB)")
        if "live" in parts:
            res = run_worker("live", call_file(args.minutes), args.pythonpath)
            out["live"] = res
            print()
            print("\n".join(_blocks_table("live-paced session, simulated clock, stand-in judge", res)))
            print(f"  windows judged {res['judged']}, dropped {res['dropped']} (live mode)")
        if "judge" in parts:
            path = call_file(args.judge_minutes)
            print()
            for judge in ("auto", "none"):  # the default judge, and timing alone for comparison
                res = run_cli(path, args.pythonpath, judge, cores=args.judge_cores)
                out[f"judge_{judge}"] = res
                per = (f", {res['windows']} windows, judge p50 {res['judge_ms_p50']:.1f} ms per 30 s window"
                       if res["judge_ms_p50"] is not None else "")
                print(f"livejudge score FILE --judge {judge} on a {res['call_s'] / 60:.0f}-minute call, "
                      f"{args.judge_cores} core(s): {res['wall_s']:.1f} s wall → {res['call_s'] / res['wall_s']:.1f}× "
                      f"real time (target ≥ 30× for auto on 2 cores); {res['cpu_s']:.1f} CPU s "
                      f"({res['call_s'] / res['cpu_s']:.1f}× per CPU second){per}, peak RSS {res['peak_rss_mb']:.0f} MB")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
