"""Speed of the acoustic backbone's features: milliseconds per 30 s window on one core.

Target (issue 6): features for a 30 s window in ≤ 100 ms on one core.

Run:  python benchmarks/judge_features_speed.py [--repeats 10]

Pins the process to one CPU core (Linux) and limits BLAS/OpenMP threads to 1 before numpy
loads. Four 30 s windows:
  * worst case: speech all through, declared as one 30 s agent segment and turn (every shipped
    human clip trimmed and butted together);
  * a 30 s LibriVox reading without VAD information (the backbone's energy fallback);
  * dialogue: a 30 s slice of a built two-party call (agent speaks about half of it), with
    VAD segments and turns from ``snapshot_of_call`` (VAD time not counted);
  * silent agent: nothing to analyse.
Prints per-window median and max milliseconds and the ratio to real time (compute / 30 s).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=10, help="timed runs per window (default: %(default)s)")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    from livejudge.judge.features.backbones.acoustic import AcousticBackbone
    from livejudge.session import snapshot_of_call, window_from_timeline  # noqa: F401
    from livejudge.testing.dialogues import example_dialogue, load_clip
    from livejudge.timing.window import WindowSnapshot

    from livejudge.events import SpeechSegment, Turn
    from livejudge.testing.dialogues import list_clips, trim

    bb = AcousticBackbone()
    n = 30 * 16000
    reading = load_clip("librivox_two_cities")[:n]
    worst = WindowSnapshot(0.0, 30.0, user=np.zeros(n, np.float32), agent=reading.astype(np.float32))
    # every human clip trimmed and butted together, repeated to 30 s, declared one segment and one turn
    cat = np.concatenate([trim(load_clip(c)) for c in list_clips("human")])
    cat = np.tile(cat, int(np.ceil(n / len(cat))))[:n].astype(np.float32)
    full_seg = (SpeechSegment("agent", 0.0, 30.0),)
    dense = WindowSnapshot(0.0, 30.0, user=np.zeros(n, np.float32), agent=cat, segments=full_seg,
                           turns=(Turn("agent", 0.0, 30.0, 1),))
    call = example_dialogue(seed=0, machine_agent=False).call
    full = snapshot_of_call(call)
    a, b = 5.0, 35.0
    ia, ib = int(a * 16000), int(b * 16000)
    dia = WindowSnapshot(a, b, user=call.user[ia:ib], agent=call.agent[ia:ib],
                         segments=tuple(s for s in full.segments if s.offset_s > a and s.onset_s < b),
                         turns=tuple(t for t in full.turns if t.offset_s > a and t.onset_s < b),
                         transitions=tuple(t for t in full.transitions if a <= t.to_onset_s < b),
                         barge_ins=tuple(x for x in full.barge_ins if a <= x.onset_s < b))
    silent = WindowSnapshot(0.0, 30.0, user=reading.copy(), agent=np.zeros(n, np.float32),
                            segments=tuple(s for s in full.segments if s.channel == "user"))
    print(f"acoustic backbone {bb.name}: {bb.embedding_dim} features, one core, {args.repeats} runs per window")
    print(f"{'window (30 s)':<34}{'agent speech s':>15}{'median ms':>11}{'max ms':>9}{'× real time':>13}")
    ok = True
    for name, w in (("agent speech, one 30 s segment", dense), ("reading, energy segments", worst),
                    ("dialogue slice", dia), ("silent agent", silent)):
        bb.embed([w])  # warm-up (imports, FFT plans)
        ts = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            e = bb.embed([w])[0]
            ts.append(time.perf_counter() - t0)
        med = statistics.median(ts) * 1000
        print(f"{name:<34}{e.features.get('speech_s', 0.0):>15.1f}{med:>11.1f}{max(ts) * 1000:>9.1f}{med / 30000:>13.4f}")
        ok &= med <= 100.0
    print("target ≤ 100 ms per 30 s window:", "met" if ok else "NOT met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
