"""Verdict settle delay: how long after a moment its live verdict is published (meter, plain lines,
event log, `on_verdict`), per verdict kind, on built calls streamed as a live source does.

A verdict is published once later audio can no longer change it (``Session._publish_settled``):
its own settle time (``Verdict.settle_s``: the caller's turn end for a barge-in; for a latency, once
the reply has lasted ``backchannel_max_s`` and the caller's turn has ended; ...) must be ``merge_pause_s + backchannel_max_s`` behind where both channels' VADs have
read to, and behind the onset of any segment still open. So a verdict usually waits for the next
turn to end, too. The figures are seconds of session time from the moment (``t_s``) to the
session time at which the verdict was published, and from its ``settle_s`` to that time.

Calls: ``livejudge.testing.verdict_calls`` (the verdict benchmark's polite and rude calls, each
seed drawing new latencies, yields, pauses and silences) on the quiet, babble and telephone lines.

    python benchmarks/verdict_settle.py [--seeds 4] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
from collections import defaultdict

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

LINES = ("quiet", "babble-50", "telephone")
"""Line conditions of ``livejudge.testing.verdict_calls.LINE_CONDITIONS`` used."""


def measure(seeds: int, chunk_s: float = 0.02) -> dict:
    """Per verdict kind: n, and median / p95 / max of (published − t_s) and (published − settle_s)."""
    from livejudge.session import Session
    from livejudge.testing.verdict_calls import LINE_CONDITIONS, polite_call, rude_call
    from livejudge.timing.verdicts import Verdict

    rows: dict[str, list[tuple[float, float]]] = defaultdict(list)
    at_close = 0

    class Sink:
        def __init__(self, s):
            self.s = s

        def on_event(self, e):
            nonlocal at_close
            if not isinstance(e, Verdict):
                return
            if self.s._closed_result is not None or getattr(self.s, "_closing", False):
                at_close += 1
                return
            rows[e.kind].append((self.s.now_s - e.t_s, self.s.now_s - e.settle_s))

        def on_close(self, result):
            pass

    n_calls = 0
    for seed in range(seeds):
        for line, make in [(ln, mk) for ln in LINES for mk in (polite_call, rude_call)]:
            d, _ = make(seed=seed, vary=True, **LINE_CONDITIONS[line])
            s = Session()
            sink = Sink(s)
            s.add_sink(sink)
            n = int(chunk_s * 16000)
            for i in range(0, len(d.call.user), n):
                s.push("user", d.call.user[i:i + n], i / 16000)
                s.push("agent", d.call.agent[i:i + n], i / 16000)
            s._closing = True  # verdicts published from here on come with the end of the call
            s.close()
            n_calls += 1
    out = {"calls": n_calls, "lines": list(LINES), "published_at_close": at_close, "kinds": {}}
    for kind, v in sorted(rows.items()):
        a = np.array(v)
        out["kinds"][kind] = {
            "n": len(v),
            "after_moment_s": {"median": round(float(np.median(a[:, 0])), 2),
                               "p95": round(float(np.percentile(a[:, 0], 95)), 2),
                               "max": round(float(a[:, 0].max()), 2)},
            "after_settle_s": {"median": round(float(np.median(a[:, 1])), 2),
                               "p95": round(float(np.percentile(a[:, 1], 95)), 2),
                               "max": round(float(a[:, 1].max()), 2)}}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=4, help="example dialogues per line condition")
    ap.add_argument("--json", default=None, help="write the figures here")
    a = ap.parse_args(argv)
    res = measure(a.seeds)
    print(f"{res['calls']} calls ({', '.join(res['lines'])}); {res['published_at_close']} verdicts came only "
          "with the end of the call")
    print(f"{'kind':<12} {'n':>4}  after the moment: median / p95 / max (s)   after settle_s: median / p95 / max (s)")
    for k, r in res["kinds"].items():
        m, s = r["after_moment_s"], r["after_settle_s"]
        print(f"{k:<12} {r['n']:>4}  {m['median']:>6.2f} / {m['p95']:>5.2f} / {m['max']:>5.2f}"
              f"{'':>21}{s['median']:>6.2f} / {s['p95']:>5.2f} / {s['max']:>5.2f}")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(res, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
