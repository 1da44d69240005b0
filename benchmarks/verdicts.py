"""Per-event verdicts against the truth of built calls: how often each verdict class is right.

Calls: ``livejudge.testing.verdict_calls`` (a polite agent, and a rude one with one planted
misbehaviour per class), with ``vary=True``: each seed draws new latencies, yields, pauses
and silences (kept ≥ 0.1 s clear of the thresholds) and new noise. Line conditions: quiet,
white/babble/room noise, reverberation, telephone (μ-law), speakerphone echo at −18 dB (removed
by the echo gate, as ``--echo-gate auto`` does); every call also with the user on channel 1
(written to a WAV file and read back, as the CLI does).

A planted moment is right when a verdict of its kind lies within 0.15 s of it with the planted
outcome, and (where it has one) its measured time within 0.15 s of the truth. Also counted:
flagged verdicts on the polite calls (false alarms), and tracebacks (there must be none).

Run:  nice python benchmarks/verdicts.py [--seeds 4]      (about 1 s of CPU per call)
Prints one row per class: right / planted, and the share; then the cost of ``verdicts()`` on a
whole call, in µs per speech segment, and as a share of the session's own time for the call.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

from livejudge.audio import open_call
from livejudge.session import Session, SessionConfig, stream_call
from livejudge.testing.verdict_calls import LINE_CONDITIONS, MOMENT_TOL_S, VALUE_TOL_S, polite_call, rude_call
from livejudge.timing.echo import gate_source

T_TOL_S, V_TOL_S, LINES = MOMENT_TOL_S, VALUE_TOL_S, LINE_CONDITIONS


COST = {"verdicts_s": 0.0, "session_s": 0.0, "segments": 0}


def score_file(path: Path, user_channel: int) -> list:
    from livejudge.timing.verdicts import verdicts

    reader = open_call(str(path), user_channel=user_channel, agent_channel=1 - user_channel)
    try:
        call, _ = gate_source(reader, "auto", log=False)
        s = Session(SessionConfig())
        t0 = time.perf_counter()
        stream_call(s, call)
        s.close()
        COST["session_s"] += time.perf_counter() - t0
        tl = s.timeline
        t0 = time.perf_counter()
        vs = verdicts(tl)
        COST["verdicts_s"] += time.perf_counter() - t0
        COST["segments"] += len(tl.segments)
        return vs
    finally:
        reader.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=4)
    args = ap.parse_args()
    right, total, false_alarms, crashes, n_calls = Counter(), Counter(), 0, 0, 0
    misses: list[str] = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            for line_name, line in LINES.items():
                for build in (polite_call, rude_call):
                    for uc in (0, 1):
                        n_calls += 1
                        try:
                            d, planted = build(seed=seed, vary=True, **line)
                            path = d.write(Path(tmp) / "call.wav", user_channel=uc)
                            vs = score_file(path, uc)
                        except Exception:
                            crashes += 1
                            traceback.print_exc()
                            continue
                        for kind, outcome, t_s, value_s in planted:
                            cls = f"{kind}/{outcome}"
                            total[cls] += 1
                            near = [v for v in vs if v.kind == kind and abs(v.t_s - t_s) <= T_TOL_S]
                            v = min(near, key=lambda v: abs(v.t_s - t_s)) if near else None
                            ok = (v is not None and v.outcome == outcome
                                  and ((value_s is None and v.value_s is None)
                                       or (value_s is not None and v.value_s is not None
                                           and abs(v.value_s - value_s) <= V_TOL_S)))
                            right[cls] += ok
                            if not ok:
                                got = "none" if v is None else f"{v.outcome} {v.value_s}"
                                misses.append(f"seed {seed} {line_name} {build.__name__} user@{uc}: {cls} "
                                              f"at {t_s:.2f} s (truth {value_s}) → {got}")
                        if build is polite_call:
                            false_alarms += sum(1 for v in vs if not v.ok)
    wall = time.perf_counter() - t0
    print(f"{n_calls} calls ({args.seeds} seeds × {len(LINES)} lines × polite/rude × 2 channel orders), "
          f"{wall:.0f} s wall ({wall / max(n_calls, 1):.2f} s per call)")
    print(f"{'class':28s} {'right':>11s} {'share':>7s}")
    for cls in sorted(total):
        print(f"{cls:28s} {right[cls]:5d} / {total[cls]:<4d} {right[cls] / total[cls]:7.1%}")
    all_r, all_t = sum(right.values()), sum(total.values())
    print(f"{'all':28s} {all_r:5d} / {all_t:<4d} {all_r / max(all_t, 1):7.1%}")
    print(f"flagged verdicts on polite calls (false alarms): {false_alarms}; tracebacks: {crashes}")
    if COST["segments"]:
        print(f"verdicts() on a whole call: {COST['verdicts_s'] / COST['segments'] * 1e6:.1f} µs per segment; "
              f"{COST['verdicts_s'] / COST['session_s']:.2%} of the session's time for the same calls")
    for m in misses[:20]:
        print("  miss:", m)


if __name__ == "__main__":
    main()
