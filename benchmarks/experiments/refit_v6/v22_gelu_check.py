"""Does the float32 erf (``whisper_blocks._erf``, v22's S3 speed-ups; README.md, "v22 result") change
what a head scores? One call (``pipeline_speed.long_call``), scored as ``livejudge score`` does with
a head, once with the shipped GELU and once with ``scipy.special.erf`` in float64 as before
2026-12-06; prints the largest window difference of P(human) and of the frame readout's P.

    python benchmarks/experiments/refit_v6/v22_gelu_check.py [--head DIR] [--minutes 3]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main(argv=None) -> int:
    from scipy.special import erf

    import livejudge.judge.features.backbones.whisper_blocks as WB
    from livejudge.judge.model.judge import load_judge
    from pipeline_speed import long_call, run

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--head", default=None, help="a whisper head with a frame readout (default the shipped one)")
    ap.add_argument("--minutes", type=float, default=3.0)
    a = ap.parse_args(argv)

    def scipy_gelu(x):  # the GELU as it was before the float32 erf
        return (0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))).astype(np.float32)

    call, out, shipped = long_call(a.minutes), {}, WB._gelu
    try:
        for name, g in (("float32 erf", shipped), ("scipy erf", scipy_gelu)):
            WB._gelu = g
            _, r = run(call, load_judge("whisper", head=a.head))
            out[name] = (np.array([np.nan if w.get("p_human") is None else w["p_human"] for w in r["judge"]], float),
                         np.array([(w.get("frame_readout") or {}).get("p_human", np.nan) for w in r["judge"]], float))
    finally:
        WB._gelu = shipped
    for k, what in enumerate(("P(human)", "frame readout P")):
        x, y = out["float32 erf"][k], out["scipy erf"][k]
        both = ~np.isnan(x) & ~np.isnan(y)
        print(f"{what}: {int(both.sum())} windows, largest |difference| {np.abs(x[both] - y[both]).max():.2g} "
              f"(windows store 4 decimals); same windows without a value: {bool((np.isnan(x) == np.isnan(y)).all())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
