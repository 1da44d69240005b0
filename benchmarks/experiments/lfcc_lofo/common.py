"""Shared setup and configuration of the LFCC-vs-whisper LOFO experiment (issue 19).

Replicates benchmarks/judge_lofo.py main()'s row filtering, dialogue building and sealed-split
loading by calling its functions (the v3 configuration). Never seals, never writes the seal file:
the sealed split must already exist and is only read.

Configuration (environment variables, read here and nowhere else):

  LFCC_MANIFESTS      colon-separated corpus manifests, in the order judge_lofo was given them
                      (required; the 2026-12-03 run used
                      /work/corpus/manifest.jsonl:/work/exp/wild/manifest.csv, i.e. the output of
                      scripts/build_corpus.sh and of scripts/gather_wild_corpus.py)
  LFCC_SEALED         the sealed-split file (default: benchmarks/results/sealed_split.json under the
                      repo root); only read
  LFCC_WHISPER_CACHE  the directory judge_lofo.py --cache wrote (holds <key>.npz with the whisper
                      features X, G); default .scratch/lofo_cache under the repo root (judge_lofo's
                      own --cache default); the 2026-12-03 run used /work/exp/v3/cache
  LFCC_OUT            where features (feats.npz), predictions (preds_*.npz, whisper_preds.npz) and
                      report_*.json are written and read (default .scratch/lfcc_lofo under the repo
                      root, git-ignored); created if missing

Relative paths are taken from the current directory (run the scripts from the repo root).
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import numpy as np  # noqa: F401  (kept: scripts do `from common import ...` after numpy)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]  # benchmarks/experiments/lfcc_lofo -> repo root
for _p in (str(REPO / "benchmarks"), str(REPO)):
    if _p not in sys.path:
        sys.path.insert(0, _p)
import judge_lofo as JL  # noqa: E402
from livejudge.judge.training import protocol as P  # noqa: E402


def _manifests() -> list[Path]:
    raw = os.environ.get("LFCC_MANIFESTS", "")
    ms = [Path(s) for s in raw.split(":") if s]
    if not ms:
        sys.exit("set LFCC_MANIFESTS to the corpus manifests, colon-separated, e.g. "
                 "LFCC_MANIFESTS=CORPUS_DIR/manifest.jsonl:WILD_DIR/manifest.csv (see README.md)")
    missing = [str(m) for m in ms if not m.exists()]
    if missing:
        sys.exit(f"LFCC_MANIFESTS: no such file: {', '.join(missing)}")
    return ms


SEALED = Path(os.environ.get("LFCC_SEALED") or REPO / "benchmarks" / "results" / "sealed_split.json")
WHISPER_CACHE = Path(os.environ.get("LFCC_WHISPER_CACHE") or REPO / ".scratch" / "lofo_cache")
OUT = Path(os.environ.get("LFCC_OUT") or REPO / ".scratch" / "lfcc_lofo")
OUT.mkdir(parents=True, exist_ok=True)
FEATS = OUT / "feats.npz"
WHISPER_PREDS = OUT / "whisper_preds.npz"

EXCLUDE = ["copysyn-griffinlim", "copysyn-lpc", "copysyn-world", "codec-resynthesis", "pyannote-sample"]
LANG, GROUP_CHUNKS, SEED, TURNS, PER_HUMAN, PER_VOICE, PER_FAMILY, HUMAN_GROUP = "en", 3, 0, 4, 12, 3, 60, "family"


def preds_path(tag: str) -> Path:
    return OUT / f"preds_{tag}.npz"


def whisper_features(key: str):
    """(X, G) of the v3 whisper head from judge_lofo's cache (<LFCC_WHISPER_CACHE>/<key>.npz)."""
    p = WHISPER_CACHE / f"{key}.npz"
    if not p.exists():
        sys.exit(f"no whisper feature cache {p}: run benchmarks/judge_lofo.py with the same manifests and "
                 "arguments and --cache DIR, then set LFCC_WHISPER_CACHE=DIR")
    z = np.load(p)
    return z["X"], z["G"]


def setup(build_audio: bool = False, exclude: list[str] | None = None):
    """(calls, meta, sealed, aug_fams, key): the open dialogues (audio only if build_audio).

    ``exclude``: families left out (judge_lofo ``--exclude-family``); default ``EXCLUDE``, the v3
    run's list (``benchmarks/experiments/frame_lofo`` passes the v4 run's)."""
    exclude = EXCLUDE if exclude is None else list(exclude)
    manifests = _manifests()
    rows = [r for m in manifests for r in JL.read_manifest(m)]
    rows = [r for r in rows if r.get("fit", True)]
    rows = [r for r in rows if (r.get("lang") or "en") == LANG]
    rows = [r for r in rows if r["family"] not in exclude]
    aug_fams = sorted({r["family"] for r in rows if r["label"] == "machine"} - {
        r["family"] for r in rows if r["label"] == "machine" and r.get("augment") in (None, "", "none")})
    key = hashlib.sha256(("".join(m.read_text() for m in manifests) + f"{GROUP_CHUNKS}/{SEED}/{TURNS}/{PER_HUMAN}/{PER_VOICE}/{PER_FAMILY}/{HUMAN_GROUP}/{LANG}/{sorted(exclude)}/v6")
                         .encode()).hexdigest()[:16]
    calls = JL.build_calls(rows, SEED, TURNS, PER_HUMAN, PER_VOICE, PER_FAMILY, HUMAN_GROUP, dry=True)
    meta = [m for _, m in calls]
    assert SEALED.exists(), f"sealed split {SEALED} missing: refusing to seal (set LFCC_SEALED)"
    sealed = P.load_or_seal(SEALED, meta, 2, 1, SEED, never=aug_fams)  # exists -> load + corpus-key check only
    sealed_agents = {(m["label"], m["family"], m["speaker"]) for m in meta if sealed.is_sealed(m)}
    rows_open = [r for r in rows if (r["label"], r["family"], r["speaker"]) not in sealed_agents]
    del rows, calls, meta
    calls = JL.build_calls(rows_open, SEED, TURNS, PER_HUMAN, PER_VOICE, PER_FAMILY, HUMAN_GROUP, dry=not build_audio)
    meta = [m for _, m in calls]
    assert not any(sealed.is_sealed(m) for m in meta), "a sealed dialogue among the open ones"
    return calls, meta, sealed, aug_fams, key


class _Reduced:
    """What a wrapped ``DialogueBuilder.build`` returns in place of a dialogue: its features only."""

    def __init__(self, rec):
        self.rec = rec


def extract_each(features, setup_fn=None, progress=None, every: int = 100):
    """Build the open dialogues with their audio and reduce each to ``features(dialogue)`` right
    after it is built (identical audio to judge_lofo's), dropping the audio (memory).

    ``setup_fn``: a ``setup`` with the experiment's arguments (default: this module's ``setup``);
    ``progress``: a callable giving a progress string, printed every ``every`` dialogues.
    Returns (recs, calls, meta, sealed, aug_fams, key, wall_s); ``recs[i]`` is dialogue i's features
    (``calls[i][0].rec``). Both extractors (``lfcc_lofo/extract.py``, ``frame_lofo/extract.py``) use it."""
    import time

    import livejudge.testing.dialogues as D

    recs: list = []
    orig = D.DialogueBuilder.build

    def build(self):
        recs.append(features(orig(self)))
        if progress is not None and len(recs) % every == 0:
            print(f"  {len(recs)} dialogues, {progress()}", flush=True)
        return _Reduced(recs[-1])

    D.DialogueBuilder.build = build
    t0 = time.time()
    try:
        calls, meta, sealed, aug, key = (setup_fn or setup)(build_audio=True)
    finally:
        D.DialogueBuilder.build = orig
    assert len(recs) == len(calls) and all(c.rec is r for (c, _), r in zip(calls, recs))
    return recs, calls, meta, sealed, aug, key, time.time() - t0


def standardised_lr_fit_predict(X, G, y, meta, train_idx, test_idx, seed, l2):
    """The LFCC readout (judge_lofo ``fit_predict``'s signature; ``G`` unused): features standardised
    on the fold's fit rows, class-weighted logistic regression at ``l2``, then Platt on judge_lofo's
    calibration split. Returns (P(human) of ``test_idx``, None). Raises ValueError when a split
    lacks a class."""
    from livejudge.judge.training.whisper_head import class_weights, fit_logistic

    cal = JL.calib_split(meta, train_idx, seed)
    fit, cl = train_idx[~cal], train_idx[cal]
    for nm, rr in (("fit", fit), ("calibration", cl)):
        if len(set(y[rr].tolist())) < 2:
            raise ValueError(f"the {nm} split needs both classes")
    mu, sd = X[fit].mean(0), X[fit].std(0)
    sd = np.where(sd > 1e-9, sd, 1.0)
    H = lambda r: (X[r] - mu) / sd  # noqa: E731
    beta, b0 = fit_logistic(H(fit), y[fit], l2, class_weights(y[fit]))
    s = H(cl) @ beta + b0
    ab, c = fit_logistic(s[:, None], y[cl], 1e-4, class_weights(y[cl]))
    a = max(float(ab[0]), 1e-3)
    return JL.sigmoid(a * (H(test_idx) @ beta + b0) + c), None


def lfcc_frames(key: str) -> list:
    """Per dialogue, float32 (frames, 60) LFCC with deltas and delta-deltas, from ``FEATS``
    (``extract.py``'s output for the corpus ``key``)."""
    import lfcc as L

    F = np.load(FEATS, allow_pickle=True)
    assert str(F["key"]) == key
    out = []
    for c in F["frames"]:
        c = c.astype(np.float32)
        d = L.deltas(c)
        out.append(np.concatenate([c, d, L.deltas(d)], 1).astype(np.float32))
    return out
