"""Front-end cost on this CPU: LFCC-60 (+ the stats readout) on a 30 s 16 kHz signal, single process."""
import os, sys, time
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder (common.py, lfcc.py)
import lfcc as L
x = (np.random.default_rng(0).standard_normal(30 * 16000) * 0.05).astype(np.float32)
L.lfcc(x)
for name, f in (("LFCC-60 (power spectrum + filterbank + DCT + deltas)", lambda: L.lfcc(x)),
                ("LFCC-60 + mean/std stats + 120-d logistic score", lambda: (lambda C: np.concatenate([C.mean(0), C.std(0)]) @ np.ones(120))(L.lfcc(x))),
                ("one 2 s live window (LFCC-60)", lambda: L.lfcc(x[:32000]))):
    n = 20
    t = time.perf_counter()
    for _ in range(n):
        f()
    dt = (time.perf_counter() - t) / n
    secs = 2.0 if "2 s" in name else 30.0
    print(f"{name:55} {1000 * dt:8.2f} ms per call, {1000 * dt / secs:.3f} ms per audio second (RTF {dt / secs:.5f})")
