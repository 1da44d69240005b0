"""Speakerphone echo: what the echo gate (recordings) and the AEC (attach) remove, and what they cost.

Dialogues from real clips (``livejudge.testing.dialogues``: ``example_dialogue`` with a machine agent and
with a human-voiced agent), leakage added with ``livejudge.timing.echo.add_leakage`` at −18/−24/−30 dB,
20/50/80 ms, flat or through a synthetic room response. For each case:

* false user events = |user segments − reference| + user backchannels and barge-ins not in the
  reference (reference: the same call without leakage; for the AEC, through WebRTC's high-pass
  filter alone, which AEC3 always applies), before and after;
* echo suppression, dB: echo energy / output energy over 10 ms frames where the user channel
  holds only echo (clean user < −60 dBFS, echo > −50 dBFS); the AEC's after its first 5 s;
* gate estimates: delay error (ms), gain error (dB), correlation; and for the clean calls the
  correlation ``--echo-gate auto`` compares with its threshold;
* cost: echo gate (estimate + gate) in ms per minute of call; AEC in µs per 10 ms frame.

Run:  nice python benchmarks/echo.py [--quick]     (about a minute; --quick: −18/−30 dB, 20/80 ms, flat)
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np

from livejudge.audio import SAMPLE_RATE
from livejudge.timing.echo import (
    DETECT_CORRELATION,
    EchoCanceller,
    add_leakage,
    echo_gate,
    estimate_echo_path,
    room_impulse_response,
    webrtc_highpass,
)
from livejudge.session import Session, stream_call
from livejudge.testing.dialogues import example_dialogue


def user_events(call) -> dict:
    s = Session()
    stream_call(s, call)
    r = s.close()
    return {"seg": sum(1 for x in r["segments"] if x["channel"] == "user"),
            "barge": sum(1 for b in r["barge_ins"] if b["by"] == "user"),
            "bc": sum(1 for b in r["backchannels"] if b["channel"] == "user")}


def false_events(got: dict, ref: dict) -> int:
    return abs(got["seg"] - ref["seg"]) + abs(got["barge"] - ref["barge"]) + abs(got["bc"] - ref["bc"])


def suppression_db(clean_user, echo, out, skip_s: float = 0.0) -> float:
    n = len(echo) // 160
    fr = lambda x: np.mean(np.asarray(x[: n * 160], np.float64).reshape(n, 160) ** 2, axis=1)  # noqa: E731
    m = (fr(clean_user) < 1e-6) & (fr(echo) > 1e-5)
    m[: int(skip_s * 100)] = False
    return float(10 * np.log10(fr(echo)[m].sum() / (fr(out)[m].sum() + 1e-20)))


def through_aec(mic, far):
    ec = EchoCanceller()
    out = np.zeros_like(mic)
    fed = 0
    for i in range(0, len(mic), 320):  # attach's order: far end released ahead of the mic block
        while fed < min(len(far), i + 640):
            ec.far(far[fed:fed + 160], fed / SAMPLE_RATE)
            fed += 160
        t_s, y = ec.process(mic[i:i + 320], i / SAMPLE_RATE)
        k = int(round(t_s * SAMPLE_RATE))
        out[k:k + len(y)] = y[: max(0, len(out) - k)]
    return out, ec.stats.to_dict()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    gains = (-18, -30) if args.quick else (-18, -24, -30)
    delays = (0.02, 0.08) if args.quick else (0.02, 0.05, 0.08)
    rooms = (False,) if args.quick else (False, True)
    dialogues = {"machine agent": example_dialogue(0), "human agent": example_dialogue(1, machine_agent=False)}
    print("case | gate: delay err ms, gain err dB, corr | false events leak→gate | gate supp dB | "
          "AEC: false events leak→aec | AEC supp dB | AEC µs/frame")
    rows = []
    for dname, d in dialogues.items():
        u, a = d.call.user, d.call.agent
        ref = user_events(d.call)
        ref_hp = user_events(replace(d.call, user=webrtc_highpass(u)))
        t = time.perf_counter()
        p0 = estimate_echo_path(u, a)
        print(f"{dname}, no leakage: correlation {p0.correlation:.3f} (threshold {DETECT_CORRELATION}); "
              f"detected {p0.detected}; estimate {1000 * (time.perf_counter() - t):.0f} ms for {d.call.duration_s:.0f} s")
        for room in rooms:
            for g in gains:
                for dl in delays:
                    rir = room_impulse_response(seed=7) if room else None
                    mic = add_leakage(u, a, gain_db=g, delay_s=dl, rir=rir)
                    echo = mic - u
                    leak = user_events(replace(d.call, user=mic))
                    t = time.perf_counter()
                    p = estimate_echo_path(mic, a)
                    res = echo_gate(mic, a, p)
                    gate_ms_per_min = 1000 * (time.perf_counter() - t) / (d.call.duration_s / 60)
                    gated = user_events(replace(d.call, user=res.user))
                    aec_out, st = through_aec(mic, a)
                    aec = user_events(replace(d.call, user=aec_out))
                    row = {
                        "delay_err_ms": p.delay_s * 1000 - dl * 1000, "gain_err_db": p.gain_db - g,
                        "corr": p.correlation, "leak_false": false_events(leak, ref),
                        "gate_false": false_events(gated, ref), "gate_supp": suppression_db(u, echo, res.user),
                        "aec_leak_false": false_events(leak, ref_hp), "aec_false": false_events(aec, ref_hp),
                        "aec_supp": suppression_db(u, echo, aec_out, skip_s=5.0),
                        "aec_us": st["cost_per_frame_us"], "gate_ms_per_min": gate_ms_per_min,
                    }
                    rows.append(row)
                    print(f"{dname}, {g} dB, {dl * 1000:.0f} ms, {'room' if room else 'flat'} | "
                          f"{row['delay_err_ms']:+.1f}, {row['gain_err_db']:+.2f}, {row['corr']:.3f} | "
                          f"{row['leak_false']}→{row['gate_false']} | {row['gate_supp']:.1f} | "
                          f"{row['aec_leak_false']}→{row['aec_false']} | {row['aec_supp']:.1f} | {row['aec_us']:.0f}")
    col = lambda k: np.array([r[k] for r in rows], dtype=float)  # noqa: E731
    print(f"\n{len(rows)} cases. Gate: |delay err| max {np.abs(col('delay_err_ms')).max():.2f} ms; |gain err| max "
          f"{np.abs(col('gain_err_db')).max():.2f} dB; correlation min {col('corr').min():.3f}; false user events "
          f"{int(col('leak_false').sum())} → {int(col('gate_false').sum())}; suppression median "
          f"{np.median(col('gate_supp')):.1f} dB (min {col('gate_supp').min():.1f}); cost median "
          f"{np.median(col('gate_ms_per_min')):.0f} ms per minute of call.")
    print(f"AEC: false user events {int(col('aec_leak_false').sum())} → {int(col('aec_false').sum())}; suppression "
          f"median {np.median(col('aec_supp')):.1f} dB (min {col('aec_supp').min():.1f}); cost median "
          f"{np.median(col('aec_us')):.0f} µs per 10 ms frame ({np.median(col('aec_us')) / 100:.1f} % of one core).")


if __name__ == "__main__":
    main()
