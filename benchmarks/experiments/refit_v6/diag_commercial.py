"""Why commercial-neural-tts looks human to every head (a diagnostic, not a result; issue 19).

For the shipped head, each window's log-odds of "human" is exactly Σ_k z_k + b (the whisper head's
parametrisation, livejudge/judge/training/whisper_head.py), so z_k is dimension k's share. This
prints the mean share per dimension for three sets of v7's open dialogues (its embedding cache):
commercial-neural-tts machines, the other machines of families the shipped head never met, and the
people neither the shipped head nor any fold head was fitted on. A share above the people's pushes
that set toward "human". Usage (repo root, after v7's LOFO run wrote its cache):

    python benchmarks/experiments/refit_v6/diag_commercial.py /work/exp/v7/cache/77514f5f77dc7af4.npz
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

import judge_lofo as JL  # noqa: E402

MANIFESTS = ["/work/corpus/manifest.jsonl"] + [f"/work/exp/wild/{m}" for m in
                                               ("manifest.csv", "manifest_new.csv", "manifest_conv.csv", "manifest_conv4.csv")]
EXCLUDE = ["copysyn-griffinlim", "copysyn-lpc", "copysyn-world", "codec-resynthesis", "pyannote-sample",
           "other-neural", "resynthesis", "voice-conversion"]


def main() -> int:
    from livejudge.judge.model.numpy_head import NumpyHead
    from livejudge.judge.training.protocol import load_or_seal

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cache", help="v7's embedding cache (.npz)")
    a = ap.parse_args()
    rows = [r for m in MANIFESTS for r in JL.read_manifest(Path(m)) if r.get("fit", True)
            and (r.get("lang") or "en") == "en" and r["family"] not in EXCLUDE
            and r["speaker"] != "JFK-inaugural-1961-public-domain"]
    meta = [m for _, m in JL.build_calls(rows, 0, 4, 12, 3, 60, "family", dry=True)]
    sealed = load_or_seal(str(ROOT / "benchmarks/results/sealed_split.json"), meta, 2, 1, 0)
    agents = {(m["label"], m["family"], m["speaker"]) for m in meta if sealed.is_sealed(m)}
    rows = [r for r in rows if (r["label"], r["family"], r["speaker"]) not in agents]
    meta = [m for _, m in JL.build_calls(rows, 0, 4, 12, 3, 60, "family", dry=True)]
    z = np.load(a.cache)
    X, G = z["X"], z["G"]
    if len(X) != len(meta):
        print(f"the cache has {len(X)} rows, the dialogues {len(meta)}: not v7's cache", file=sys.stderr)
        return 2
    h = NumpyHead.from_checkpoint(ROOT / "livejudge/judge/heads/whisper-fitted")  # never-met sets need a head
    # that was not fitted on the wild rows: the shipped one
    fams = set(h.config.training.get("families", []))
    groups = {g for x in h.config.training.get("human_groups", []) for g in str(x).split("+")}
    Z = np.where(G, h.z_mean[None, :], h.latent({"features": X}))
    sets = {
        "commercial-neural-tts": np.array([m["family"] == "commercial-neural-tts" for m in meta]),
        "other never-met machines": np.array([m["label"] == "machine" and m["family"] not in fams
                                              and m["family"] != "commercial-neural-tts" for m in meta]),
        "people it never met": np.array([m["label"] == "human" and not (set(str(m["group"]).split("+")) & groups)
                                         for m in meta]),
    }
    lo = Z.sum(1) + float(h.classifier_bias[0] - h.classifier_bias[1])
    print(f"head {h.config.name} {h.config.version}; mean share of log-odds(human) per dimension (z_k), "
          f"v7's open dialogues")
    print(f"{'dimension':28}" + "".join(f"{k:>27}" for k in sets))
    for k, d in enumerate(h.dimensions):
        if np.abs(h.proj_weight[k]).sum() == 0:
            continue
        print(f"{d:28}" + "".join(f"{Z[s, k].mean():27.2f}" for s in sets.values()))
    # the encoder readout's part of the three rows that read it (the rest of those rows is acoustic)
    from livejudge.judge.features.backbones.whisper import ENCODER_DIMENSIONS, N_ACOUSTIC

    Hs = h.readout({"features": X})
    ks = [h.dimensions.index(d) for d in ENCODER_DIMENSIONS]
    enc = sum(Hs[:, N_ACOUSTIC:] @ h.proj_weight[k, N_ACOUSTIC:].astype(np.float64) for k in ks)
    enc = enc * (1.0 - G[:, ks].mean(1))  # a gated row drops its share (as the judge does)
    print(f"{'  of which encoder readout':28}" + "".join(f"{enc[s].mean():27.2f}" for s in sets.values()))
    print(f"{'log-odds (total)':28}" + "".join(f"{lo[s].mean():27.2f}" for s in sets.values()))
    print(f"{'n dialogues':28}" + "".join(f"{int(s.sum()):27d}" for s in sets.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
