"""v12 (``../refit_v6/README.md``, "v12"): the stage-2 CNN with the open rows of the later batches as
extra training rows (issue 19).

    extra.py extract        build the extra rows' dialogues (``judge_lofo.build_calls`` with round 2's
                            arguments) and keep their stage-2 frames (extract.py's energy rule)
                            -> $FRAME_OUT/extra_l2.npz
    extra.py lofo --seed S  round 2's 45 folds, test rows unchanged; each fold network trains on the
                            fold's round-2 training rows plus the extra rows that are not of its
                            held-out family, not of its held-out human groups and share no voice or
                            speaker with its test rows -> $FRAME_OUT/preds_frame_cnn_stage2_extra[_sS].npz
    extra.py train --seed S the product's network: round 3's rows (``wild.py train``) plus every extra
                            row -> $FRAME_OUT/wild_cnn2x_sS.pt (``make_v11.py`` exports it)

Extra rows: the rows of ``EXTRA`` (benchmarks/data/wild_manifest_{4,6,7,8}.csv as gathered under
/work/exp/wild) whose licence allows fitting (``judge_lofo.FIT_OK``), English, not of round 2's
excluded families (``fl.EXCLUDE_V4``), no dialogue of a sealed family, group or voice.
``--channels`` (v13): the extra dialogues built with ``judge_lofo``'s wild channels (telephone line and
room, ``WILD_CHANNELS``; half of each agent's dialogues stay on the clean line, both classes alike);
every file name gains ``ch`` (extra_l2ch.npz, preds_frame_cnn_stage2_extrach[_sS].npz, wild_cnn2xch_sS.pt).
``--recipe`` (v17, v18; ../refit_v6/README.md): what the network learns from, the rows and split
unchanged: ``centre`` (v17) takes each dialogue's mean frame off its frames before anything else
(``frame_cnn.centre_dialogue``: fit, calibration and test rows alike); ``mask`` (v18) masks every
training crop (``frame_cnn.mask_crop``); ``ep6`` (v19) trains 6 epochs instead of 12; ``base3``
(v20) reads Whisper base's stage-3 frames (d = 512) from $BASE_FRAME_OUT/whisper_frames_l3.npz
(extract.py with ``FRAME_MODEL_BIN``, ``FRAME_BLOCKS=3``, ``FRAME_KEEP=3``; same dialogues and kept
frames as tiny's) in place of tiny's stage 2 (``--control repro`` only: the extra rows have no base
frames). File names gain ``_recipe<R>``.

Environment as round 3 (``wild.py``): LFCC_MANIFESTS with round 2's four manifests, FRAME_OUT=.scratch/frame_lofo_r2.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fl  # noqa: E402  (puts the repo and benchmarks/ on sys.path)

JL, C = fl.JL, fl.common
WILD_DIR = Path(os.environ.get("WILD_DIR", "/work/exp/wild"))
EXTRA = [WILD_DIR / n for n in ("manifest_conv4.csv", "manifest_comm6.csv", "manifest_comm7.csv", "manifest_comm8.csv")]
CHANNELS = ("telephone", "room")
"""v13's wild channels (``--channels``)."""
VARIANT = ""
"""'' (v12) or 'ch' (v13, ``--channels``): set once by ``main``, read by the file names below."""


def out_path():
    return fl.OUT / f"extra_l2{VARIANT}.npz"
SR = 16000


def extra_rows(sealed) -> list[dict]:
    """The extra rows (module docstring); a row of a sealed family or group is refused outright."""
    rows = [r for m in EXTRA for r in JL.read_manifest(m)]
    rows = [r for r in rows if r.get("fit") and (r.get("lang") or "en") == C.LANG and r["family"] not in fl.EXCLUDE_V4]
    bad = [r["path"] for r in rows if r["family"] in set(sealed.families) or r["family"] in set(sealed.groups)]
    if bad:
        sys.exit(f"{len(bad)} extra rows of a sealed family or group, e.g. {bad[0]}: refusing")
    return rows


def extract() -> None:
    import layers

    _, _, sealed, _, key0 = fl.setup()
    rows = extra_rows(sealed)
    enc = layers.Encoder()
    calls = JL.build_calls(rows, C.SEED, C.TURNS, C.PER_HUMAN, C.PER_VOICE, C.PER_FAMILY, C.HUMAN_GROUP,
                           wild_channels=CHANNELS if VARIANT else ())
    frames, meta, t0, n_s = [], [], time.time(), 0.0
    for d, m in calls:
        if sealed.is_sealed(m):
            sys.exit(f"an extra dialogue is sealed ({m}): refusing")
        f, secs = layers.dialogue_stage2(enc, d, SR)
        n_s += secs
        frames.append(f)
        meta.append({k: m[k] for k in ("label", "family", "speaker", "group", "channel")})
    fr = np.empty(len(frames), object)
    fr[:] = frames
    key = hashlib.sha256("".join(p.read_text() for p in EXTRA).encode() + key0.encode()).hexdigest()[:16]
    np.savez(out_path(), frames=fr, meta=json.dumps(meta), key=key, key_round2=key0)
    print(f"-> {out_path()}: {len(meta)} dialogues from {len(rows)} rows, {n_s:.0f} s agent speech, "
          f"{sum(m['label'] == 'human' for m in meta)} with a person as agent, {time.time() - t0:.0f} s")


BASE_FRAMES = "whisper_frames_l3.npz"
"""v20's frames under $BASE_FRAME_OUT (default .scratch/frame_lofo_base)."""


def load_all(with_extra: bool = True, recipe: str = ""):
    """(FR, meta, y, n0, folds): round 2's stage-2 frames and meta with the extra dialogues after them
    (indices n0…); folds are round 2's. ``with_extra`` False (``--control repro``, which drops every
    extra row anyway): round 2's dialogues alone, so extra_l2.npz need not exist. ``recipe`` 'base3'
    (v20): Whisper base's stage-3 frames of the same dialogues instead (round 2's alone)."""
    calls, meta0, sealed, aug, key = fl.setup()
    if recipe == "base3":
        if with_extra:
            sys.exit("--recipe base3 has frames for round 2's dialogues only: add --control repro")
        path = Path(os.environ.get("BASE_FRAME_OUT") or fl.REPO / ".scratch" / "frame_lofo_base") / BASE_FRAMES
        if not path.exists():
            sys.exit(f"{path} is missing: run extract.py with FRAME_MODEL_BIN, FRAME_BLOCKS=3, FRAME_KEEP=3 "
                     "(../refit_v6/README.md, v20: commands)")
    else:
        path = fl.OUT / "whisper_frames_l2.npz"
    Z = np.load(path, allow_pickle=True)
    if str(Z["key"]) != key or len(Z["frames"]) != len(meta0):
        sys.exit(f"stage-2 frames were extracted for another corpus (key {Z['key']} vs {key}): set LFCC_MANIFESTS as round 2")
    FR, meta = list(Z["frames"]), list(meta0)
    if with_extra:
        X = np.load(out_path(), allow_pickle=True)
        if str(X["key_round2"]) != key:
            sys.exit(f"{out_path()} was extracted beside another round-2 corpus: run extra.py extract again")
        FR += list(X["frames"])
        meta += json.loads(str(X["meta"]))
    y = np.array([1 if m["label"] == "human" else 0 for m in meta])
    folds = list(fl.P.outer_folds(meta0, sealed, aug, C.GROUP_CHUNKS))
    return FR, meta, y, len(meta0), folds, sealed, meta0


def extra_for_fold(meta, n0: int, fold) -> np.ndarray:
    """Indices of the extra dialogues a fold may train on (module docstring)."""
    test_voices = {(meta[i]["label"], meta[i]["speaker"]) for i in fold.test}
    held_groups = set(fold.group.split("+"))
    keep = [i for i in range(n0, len(meta))
            if not (meta[i]["label"] == "machine" and meta[i]["family"] == fold.family)
            and not (meta[i]["label"] == "human" and (meta[i]["group"] in held_groups or meta[i]["family"] in held_groups))
            and (meta[i]["label"], meta[i]["speaker"]) not in test_voices]
    return np.array(keep, dtype=int)


def calib_split_by_family(meta, train_idx, seed: int) -> np.ndarray:
    """bool over train_idx: ``judge_lofo.calib_split(..., by="family")``: ~25 % of the voices, whole
    voices, drawn within each machine family and each human group and never a family's or group's
    only voice, so no family leaves the fit set whole (v14, README.md "v13 result")."""
    return JL.calib_split(meta, train_idx, seed, "family")


def _calib(meta, idx, split: str, calib_seed: int | None) -> np.ndarray:
    """The calibration part of ``idx``: ``judge_lofo.calib_split`` by ``split`` ('' = voice, as every
    stored run), drawn with ``calib_seed`` (None = ``C.SEED``, every stored run's draw)."""
    seed = C.SEED if calib_seed is None else calib_seed
    if split == "family":
        return calib_split_by_family(meta, idx, seed)
    return JL.calib_split(meta, idx, seed, split or "voice")


RECIPES = ("", "centre", "mask", "ep6", "base3")
"""``--recipe``: '' every stored run's network; 'centre' v17; 'mask' v18; 'ep6' v19; 'base3' v20
(module docstring)."""


def recipe_epochs(recipe: str) -> int:
    """Training epochs under ``recipe``: 6 for 'ep6' (v19), else 12 (every stored network)."""
    return 6 if recipe == "ep6" else 12


def apply_recipe(FR: list, recipe: str) -> list:
    """The frames the network sees under ``recipe``: centred per dialogue for 'centre', else as given."""
    if recipe not in RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}: use one of {RECIPES}")
    if recipe != "centre":
        return FR
    import temporal_cnn as cnn

    return [cnn.centre_dialogue(x) for x in FR]


def lofo(seed: int, threads: int, control: str = "", split: str = "", calib_seed: int | None = None,
         recipe: str = "") -> None:
    """S1's fold networks (module docstring). ``control`` (diagnostics, README.md "v13 result"):
    ``repro`` trains without any extra row (round 2's networks again, through this code);
    ``split`` draws the calibration split with the extra rows as the candidate does, then drops
    them from both parts (what the changed split alone does). ``split``/``calib_seed``: how the
    calibration voices are drawn (``_calib``; v15, refit_v6/README.md, reads several draws).
    ``recipe``: what the network learns from (``apply_recipe``, module docstring)."""
    import torch

    import temporal_cnn as cnn
    from livejudge.judge.training.whisper_head import class_weights, fit_logistic

    torch.set_num_threads(threads)
    FR, meta, y, n0, folds, sealed, meta0 = load_all(with_extra=control != "repro", recipe=recipe)
    FR = apply_recipe(FR, recipe)
    t0 = time.time()
    fi, ti, ps, n_extra = [], [], [], []
    for k, fold in enumerate(folds):
        fl.P.check_nested(meta0, sealed, fold, np.array([], int))
        ex = extra_for_fold(meta, n0, fold)
        if control == "repro":
            ex = ex[:0]
        train_idx = np.concatenate([fold.train, ex])
        cal = _calib(meta, train_idx, split, calib_seed)
        fit, cl = train_idx[~cal], train_idx[cal]
        if control == "split":
            fit, cl = fit[fit < n0], cl[cl < n0]
        net, mu, sd = cnn.train(FR, y, fit, seed, 3, recipe_epochs(recipe), mask=recipe == "mask")
        s_cl = cnn.scores(net, mu, sd, [FR[i] for i in cl])
        ab, c = fit_logistic(s_cl[:, None], y[cl], 1e-4, class_weights(y[cl]))
        p = JL.sigmoid(max(float(ab[0]), 1e-3) * cnn.scores(net, mu, sd, [FR[i] for i in fold.test]) + c)
        fi.append(np.full(len(fold.test), k))
        ti.append(fold.test)
        ps.append(p)
        n_extra.append(len(ex))
        print(f"fold {k + 1}/{len(folds)} {fold.family}/{fold.group[:24]} +{len(ex)} extra auc "
              f"{JL.roc_auc(p, y[fold.test]):.3f} ({time.time() - t0:.0f} s)", flush=True)
    out = fl.preds_path(f"frame_cnn_stage2_extra{VARIANT}" + (f"_ctl{control}" if control else "")
                        + (f"_recipe{recipe}" if recipe else "")
                        + (f"_split{split}" if split else "")
                        + (f"_cs{calib_seed}" if calib_seed is not None else "")
                        + (f"_s{seed}" if seed else ""))
    np.savez(out, fold=np.concatenate(fi), idx=np.concatenate(ti), p=np.concatenate(ps),
             families=np.array([f.family for f in folds]), groups=np.array([f.group for f in folds]),
             n_extra=np.array(n_extra), seconds=time.time() - t0)
    print(f"-> {out}")


def train(seed: int, control: str = "", split: str = "", recipe: str = "") -> None:
    """The product's network (module docstring); ``control`` 'repro': round 3's rows only (no extra
    row, and extra_l2.npz need not exist), ``split`` 'family': ``calib_split_by_family`` (v14,
    README.md); ``recipe``: ``apply_recipe``."""
    import torch

    import temporal_cnn as cnn
    from wild import NOW_MEASURE_ONLY
    from livejudge.judge.training.whisper_head import class_weights, fit_logistic

    torch.set_num_threads(2)
    FR, meta, y, n0, folds, sealed, meta0 = load_all(with_extra=control != "repro", recipe=recipe)
    FR = apply_recipe(FR, recipe)
    rows = np.array([i for i, m in enumerate(meta) if m["speaker"] not in NOW_MEASURE_ONLY
                     and (control != "repro" or i < n0)])
    cal = _calib(meta, rows, split, None)
    fit, cl = rows[~cal], rows[cal]
    t0 = time.time()
    net, mu, sd = cnn.train(FR, y, fit, seed, 3, recipe_epochs(recipe), mask=recipe == "mask")
    s_cl = cnn.scores(net, mu, sd, [FR[i] for i in cl])
    ab, c = fit_logistic(s_cl[:, None], y[cl], 1e-4, class_weights(y[cl]))
    path = fl.OUT / (f"wild_cnn2x{VARIANT}" + (f"_ctl{control}" if control else "") + (f"_recipe{recipe}" if recipe else "")
                     + (f"_split{split}" if split else "")
                     + f"_s{seed}.pt")
    torch.save({"state": net.state_dict(), "mu": mu, "sd": sd, "a": max(float(ab[0]), 1e-3), "c": float(c),
                "rows": len(rows), "fit": len(fit), "calib": len(cl), "extra": int((rows >= n0).sum()),
                "split": split or "judge_lofo.calib_split",
                "recipe": recipe, "key": str(np.load(out_path(), allow_pickle=True)["key"]) if n0 < len(meta) else "",
                "channels": list(CHANNELS) if VARIANT else [],
                "seconds": time.time() - t0}, path)
    print(f"-> {path}: {len(rows)} rows ({int((rows >= n0).sum())} extra; {len(fit)} fit, {len(cl)} calibration), {time.time() - t0:.0f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("step", choices=("extract", "lofo", "train"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2, help="torch threads for lofo (1 to run two seeds side by side)")
    ap.add_argument("--control", choices=("", "repro", "split"), default="",
                    help="lofo diagnostics: repro (no extra row), split (the candidate's calibration split, no extra row)")
    ap.add_argument("--split", choices=("", "family", "family-keep-small", "family-out"), default="",
                    help="lofo: the calibration split (default judge_lofo.calib_split's voice split; family: "
                         "calib_split_by_family; family-keep-small: judge_lofo's, families of 1-3 voices stay whole; "
                         "family-out: judge_lofo's, ~25 %% of the machine families whole, v16)")
    ap.add_argument("--calib-seed", type=int, default=None,
                    help="lofo: the calibration split's draw (default: the fixed seed of every stored run)")
    ap.add_argument("--recipe", choices=RECIPES, default="",
                    help="lofo/train: what the network learns from (v17 centre: each dialogue's mean frame off; "
                         "v18 mask: SpecAugment-style masks on training crops; v19 ep6: 6 epochs, not 12); "
                         "default every stored run's")
    ap.add_argument("--channels", action="store_true", help="v13: the extra dialogues through the wild channels (docstring)")
    a = ap.parse_args()
    global VARIANT
    VARIANT = "ch" if a.channels else ""
    if a.step == "extract":
        extract()
    elif a.step == "lofo":
        lofo(a.seed, a.threads, a.control, a.split, a.calib_seed, a.recipe)
    else:
        train(a.seed, a.control, a.split, a.recipe)


if __name__ == "__main__":
    main()
