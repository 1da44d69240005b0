"""Validity of the whisper judge at the DIALOGUE level: leave-one-family-out (LOFO),
leave-one-speaker-group-out (LOSO) and the reserved unseen family (Kokoro).

Dialogues: built with ``livejudge.testing.dialogues.DialogueBuilder`` from corpus clips (a manifest in the
corpus format: path, label, family, speaker, reserved, ...): ``--turns`` agent turns of ONE agent
(a human speaker or a TTS voice), each after a user turn (CMU clips). Every dialogue takes its
timing, noise floor, agent level and user clips from a shared list of specs, so both classes
have the same timing and channel and only the agent voice differs. Each call runs the whole
pipeline (``snapshot_of_call``: VAD → turns), then ``WhisperBackbone`` (encoder once per turn).

Folds (the head never sees the test group; its calibration split is carved from the training
speakers/voices):
* LOFO: for each machine family F (not reserved) and each human group G: fit on everything but
  F and G, test F dialogues vs G dialogues. Reported per F (pooled over G): ROC-AUC, accuracy at
  0.5, mean P(human) of each class.
* LOSO: for each human group G: fit without G (and without the reserved family): accuracy at 0.5
  and mean P(human) of G's dialogues (people kept above 0.5?), and ROC-AUC of G vs the
  reserved family.
* Unseen family (reserved, e.g. Kokoro): G vs the reserved family, pooled over G.
The head is also compared with ``acoustic-fitted`` on the same dialogues (its AUC per family).

Run: python benchmarks/judge_lofo.py MANIFEST [--lang en] [--turns 4] [--seed 0] [--cache DIR] [--ship DIR] [--json OUT]
``--ship DIR`` fits the head on every non-reserved clip (calibration split by speaker) and saves it
with its sources, families and the LOFO/LOSO figures in its config.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

USER_CLIPS = ["cmu_cards_005", "cmu_goforward", "cmu_numbers", "cmu_something", "cmu_cards_002",
              "cmu_cards_001", "cmu_cards_003", "cmu_cards_004"]


def read_manifest(path: Path) -> list[dict]:
    rows = []
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            r["abspath"] = str((path.parent / r["path"]).resolve())
            rows.append(r)
    return rows


def roc_auc(s, y) -> float:
    s, y = np.asarray(s, float), np.asarray(y, bool)
    pos, neg = s[y], s[~y]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    return float(((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum())
                 / (len(pos) * len(neg)))


def channel_of(augment) -> str:
    """A clip's channel condition: the augmentation without its copy-synthesis part and levels
    ("world+gsm" → "gsm", "noise-42dBFS" → "noise", gain changes → "none": levels are normalised)."""
    parts = [x for x in str(augment or "none").split("+") if x]
    parts = [x for x in parts if x not in ("griffinlim", "lpc", "world", "copysynth-gl")]
    if not parts:
        return "none"
    c = parts[-1]
    if c.startswith("gain"):
        return "none"
    if c.startswith("noise"):
        return "noise"
    return c


def build_calls(rows: list[dict], seed: int, turns: int, per_human: int, per_voice: int,
                per_family: int = 60, human_group_key: str = "family", dry: bool = False):
    """(calls, meta): one Dialogue per entry; meta has label, family, speaker, group, reserved.

    Dialogues per agent: humans ``min(per_human, 3 × clips)``; machines ``max(per_voice,
    ceil(per_family / voices in the family))`` so a family with one voice still gets enough.
    Each dialogue keeps ONE channel condition (``channel_of``) for all its agent turns, as a real
    call has one channel. ``group`` = the human's source family (or speaker) for held-out splits;
    a copy-synthesis clip's group is that of its source speaker.
    """
    from livejudge.audio import load_audio, resample, to_mono
    from livejudge.testing.dialogues import DialogueBuilder

    rng = np.random.default_rng(seed)
    n_specs = 64
    specs = [dict(noise=float(rng.uniform(-70, -50)), level=float(rng.uniform(-30, -18)),
                  users=[USER_CLIPS[int(i)] for i in rng.integers(len(USER_CLIPS), size=turns)],
                  ugaps=rng.uniform(0.3, 0.9, size=turns).tolist(), agaps=rng.uniform(0.2, 1.2, size=turns).tolist(),
                  seed=int(rng.integers(1 << 30))) for _ in range(n_specs)]
    by_agent = defaultdict(list)
    for r in rows:
        if r.get("duration_s", 1.0) < 0.8:
            continue
        by_agent[(r["label"], r["family"], r["speaker"], bool(r.get("reserved", False)))].append(r)
    group_of = {}
    for r in rows:
        if r["label"] == "human":
            group_of[r["speaker"]] = r["family"] if human_group_key == "family" else r["speaker"]
    voices = defaultdict(set)
    for (label, fam, spk, _res) in by_agent:
        voices[fam].add(spk)
    cache: dict[str, np.ndarray] = {}

    def clip(p: str) -> np.ndarray:
        if p not in cache:
            d, rate = load_audio(p)
            cache[p] = resample(to_mono(d), rate)
        return cache[p]

    out = []
    k = 0
    for (label, fam, spk, res), clips in sorted(by_agent.items()):
        if label == "human":
            n = min(per_human, 3 * len(clips))
        else:
            n = max(per_voice, -(-per_family // len(voices[fam])))
        by_ch = defaultdict(list)
        for c in clips:
            by_ch[channel_of(c.get("augment"))].append(c)
        chans = sorted(by_ch)
        for j in range(n):
            sp = specs[k % n_specs]
            k += 1
            # half the dialogues on the clean channel when there is one, the rest on the others
            ch = "none" if ("none" in by_ch and (j % 2 == 0 or len(chans) == 1)) else chans[int(rng.integers(len(chans)))]
            pool = by_ch[ch]
            picks = [pool[int(i)] for i in rng.permutation(len(pool))[:turns]]
            while len(picks) < turns:
                picks.append(pool[int(rng.integers(len(pool)))])
            # tail 1.5 s: the last agent turn is settled (whisper.SETTLE_S) when the call ends
            meta = dict(label=label, family=fam, speaker=spk, reserved=res, channel=ch,
                        group=group_of.get(spk, f"{fam}:{spk}"))
            if dry:  # the dialogue's labels and groups only (their order does not depend on the audio)
                out.append((None, meta))
                continue
            b = DialogueBuilder(noise_dbfs=sp["noise"], seed=sp["seed"], tail_s=1.5)
            for i, c in enumerate(picks):
                b.user(sp["users"][i], gap_s=sp["ugaps"][i] if i else None)
                for attempt in range(8):  # a clip with no speech above the builder's threshold: take another
                    y = clip(c["abspath"]).astype(np.float64)
                    y = y * (10 ** (sp["level"] / 20) / (np.sqrt(np.mean(y ** 2)) + 1e-9))
                    try:
                        b.agent(y.clip(-1, 1).astype(np.float32), gap_s=sp["agaps"][i])
                        break
                    except ValueError:
                        c = picks[i] = pool[int(rng.integers(len(pool)))]
            out.append((b.build(), dict(label=label, family=fam, speaker=spk, reserved=res, channel=ch,
                                        group=group_of.get(spk, f"{fam}:{spk}"),
                                        clips=[c["path"] for c in picks])))
    return out


def embed_calls(calls, cache_file: Path | None):
    """X (n, 1572), gated (n, 18), acoustic-fitted P(human) (n,), encoder calls, seconds."""

    from livejudge.judge.features.backbones.whisper import WhisperBackbone
    from livejudge.judge.model.judge import load_judge
    from livejudge.judge.training.whisper_head import window_gates
    from livejudge.session import snapshot_of_call

    if cache_file is not None and cache_file.exists():
        z = np.load(cache_file)
        return z["X"], z["G"], z["P"], int(z["calls"]), float(z["secs"])
    bb = WhisperBackbone()
    ac = load_judge("acoustic")
    X, embs, P = [], [], []
    t0 = time.perf_counter()
    for i, (d, _) in enumerate(calls):
        w = snapshot_of_call(d.call)
        e = bb.embed_one(w)
        embs.append(e)
        X.append(e.vectors["features"])
        # the acoustic-fitted head on the same window (its vector is the first 36 components)
        from livejudge.judge.features.backbones.base import Embedding

        ae = Embedding(vectors={"features": e.vectors["features"][:36]}, evidence=e.evidence, features={})
        inputs = {"features": ae.vectors["features"][None]}
        gates = ac._gate(ae)[0]
        zz = ac.head.latent(inputs)  # the judge's NumpyHead
        zz = np.where(np.array([gates]), ac.head.z_mean[None, :], zz)
        P.append(float(ac.head.outputs(zz).p_human[0]))
        if (i + 1) % 50 == 0:
            print(f"  embedded {i + 1}/{len(calls)} calls ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    secs = time.perf_counter() - t0
    X = np.stack(X).astype(np.float32)
    G = window_gates(embs)
    P = np.array(P)
    if cache_file is not None:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache_file, X=X, G=G, P=P, calls=bb.encoder.n_calls, secs=secs)
    return X, G, P, bb.encoder.n_calls, secs


def calib_split(meta, train_idx, seed: int) -> np.ndarray:
    """bool over train_idx: ~25 % of the training speakers/voices of each class (whole speakers)."""
    rng = np.random.default_rng(seed)
    spk = sorted({(meta[i]["label"], meta[i]["speaker"]) for i in train_idx})
    chosen = set()
    for lab in ("human", "machine"):
        s = [x for x in spk if x[0] == lab]
        rng.shuffle(s)
        n = max(1, int(round(0.25 * len(s))))
        chosen.update(s[:n])
    return np.array([(meta[i]["label"], meta[i]["speaker"]) in chosen for i in train_idx])


def fit_predict(X, G, y, meta, train_idx, test_idx, seed: int, l2: float):

    from livejudge.judge.training.whisper_head import fit_whisper_head

    cal = calib_split(meta, train_idx, seed)
    fit = fit_whisper_head(X[train_idx], y[train_idx], G[train_idx], cal, l2=l2)
    return predict(fit.head, X[test_idx], G[test_idx]), fit


def predict(head, X, G) -> np.ndarray:
    import torch

    with torch.no_grad():
        z = head.latent({"features": torch.as_tensor(np.asarray(X, np.float32))})
        z = torch.where(torch.as_tensor(G), head.z_mean.expand_as(z), z)
        return head.outputs(z).p_human.numpy()


def logit(p) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def sigmoid(t) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(t, dtype=np.float64)))


def summary(p, y) -> dict:
    p, y = np.asarray(p), np.asarray(y)
    return dict(auc=roc_auc(p, y), acc=float(((p >= 0.5) == (y == 1)).mean()),
                p_human_h=float(p[y == 1].mean()) if (y == 1).any() else float("nan"),
                p_human_m=float(p[y == 0].mean()) if (y == 0).any() else float("nan"),
                n_h=int((y == 1).sum()), n_m=int((y == 0).sum()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("manifest")
    ap.add_argument("--turns", type=int, default=4)
    ap.add_argument("--per-human", type=int, default=12, help="dialogues per human speaker (at most 3 per clip)")
    ap.add_argument("--per-voice", type=int, default=3, help="dialogues per TTS voice (at least)")
    ap.add_argument("--per-family", type=int, default=60, help="dialogues per machine family (at least)")
    ap.add_argument("--human-group", choices=("family", "speaker"), default="family",
                    help="held-out human unit: the source corpus (family) or the speaker")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--l2", type=float, default=0.3, help="ridge penalty (chosen on the development corpus)")
    ap.add_argument("--exclude-family", action="append", default=[], metavar="FAMILY",
                    help="leave a family out of training and testing (repeatable; e.g. an augmentation that hurts)")
    ap.add_argument("--lang", default=None, metavar="CODE",
                    help="use only clips in this language (manifest `lang`; e.g. en: the encoder is tiny.en, and a "
                         "language spoken by humans but by few machine voices would become a label)")
    ap.add_argument("--calibrate", choices=("heldout", "split"), default="heldout",
                    help="the shipped head's calibration: heldout (default) adds a Platt step fitted on the LOFO folds' "
                         "held-out-family scores, as a voice at use time is one the head never met; split keeps only "
                         "the Platt step on a calibration split of the training voices")
    ap.add_argument("--cache", default=".scratch/lofo_cache")
    ap.add_argument("--ship", default=None, metavar="DIR")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)

    mpath = Path(args.manifest)
    rows = read_manifest(mpath)
    if args.lang:
        rows = [r for r in rows if (r.get("lang") or "en") == args.lang]  # excluded families are embedded too (one cache), then left out of every fit
    key = hashlib.sha256((mpath.read_text() + f"{args.seed}/{args.turns}/{args.per_human}/{args.per_voice}/{args.per_family}/{args.human_group}/{args.lang}/v5")
                         .encode()).hexdigest()[:16]
    cache_file = Path(args.cache) / f"{key}.npz"
    # with cached embeddings only the labels/groups are needed: no audio is read (the corpus may have moved on)
    calls = build_calls(rows, args.seed, args.turns, args.per_human, args.per_voice, args.per_family,
                        args.human_group, dry=cache_file.exists())
    meta = [m for _, m in calls]
    print(f"{len(calls)} dialogues ({sum(m['label'] == 'human' for m in meta)} human-agent)", file=sys.stderr)
    X, G, P_ac, n_enc, secs = embed_calls(calls, cache_file)
    y = np.array([1 if m["label"] == "human" else 0 for m in meta])
    fam = np.array([m["family"] for m in meta])
    spk = np.array([m["group"] for m in meta])  # human group (source family) of humans and their copies
    res = np.array([m["reserved"] for m in meta])
    use = ~np.isin(fam, args.exclude_family)
    # a machine family all of whose clips are augmentations of other clips (copy-synthesis of humans)
    aug_fams = sorted({r["family"] for r in rows if r["label"] == "machine"} - {
        r["family"] for r in rows if r["label"] == "machine" and r.get("augment") in (None, "", "none")})
    # augmentation families (copy-synthesis of human clips) are training material, not TTS systems:
    # they are not held out as families (their speakers are the human speakers, held out with them)
    families = sorted({str(f) for f, lab, r in zip(fam, y, res) if lab == 0 and not r and f not in aug_fams
                       and f not in args.exclude_family})
    reserved = sorted({str(f) for f, r in zip(fam, res) if r})
    groups = sorted({str(s) for s, l in zip(spk, y) if l == 1})
    cmd = "python benchmarks/judge_lofo.py " + " ".join(argv if argv is not None else sys.argv[1:])
    out = {"command": cmd, "n_dialogues": len(calls), "turns": args.turns, "families": families,
           "augmentation_families": aug_fams, "excluded_families": args.exclude_family,
           "reserved": reserved, "human_groups": groups, "embed_seconds": secs, "encoder_calls": n_enc}

    print(f"\nLOFO (fit without family F and human group G; test F vs G; pooled over G) — {cmd}")
    print(f"{'held-out family':18} {'AUC':>6} {'acc@0.5':>8} {'P(h) human':>11} {'P(h) machine':>13} "
          f"{'acoustic-fitted AUC':>20} {'per-fold AUC mean/min':>22}")
    lofo = {}
    oof: dict[int, list[float]] = defaultdict(list)  # dialogue → its held-out log-odds over LOFO folds
    for F in families:
        ps, ys, pa = [], [], []
        for g in groups:
            test = np.where(((fam == F) | ((y == 1) & (spk == g))))[0]
            train = np.where((fam != F) & (spk != g) & ~res & use)[0]
            # copy-synthesis of the held-out speaker stays out of training too
            train = np.array([i for i in train if spk[i] != g])
            p, _ = fit_predict(X, G, y, meta, train, test, args.seed, args.l2)
            for i, lo in zip(test, logit(p)):
                oof[int(i)].append(float(lo))
            ps.append(p)
            ys.append(y[test])
            pa.append(P_ac[test])
        s = summary(np.concatenate(ps), np.concatenate(ys))
        folds = [roc_auc(p, yy) for p, yy in zip(ps, ys)]
        s["fold_auc_mean"], s["fold_auc_min"] = float(np.mean(folds)), float(np.min(folds))
        s["acoustic_fitted_auc"] = roc_auc(np.concatenate(pa), np.concatenate(ys))
        lofo[F] = s
        print(f"{F:18} {s['auc']:6.3f} {s['acc']:8.3f} {s['p_human_h']:11.3f} {s['p_human_m']:13.3f} "
              f"{s['acoustic_fitted_auc']:20.3f} {s['fold_auc_mean']:14.3f}/{s['fold_auc_min']:.3f}")
    out["lofo"] = lofo
    recal = None
    if oof and args.calibrate == "heldout":
        # second Platt step on the LOFO folds' held-out scores (each dialogue: the mean of its
        # folds' log-odds), classes weighted equally; the reserved family is never in a LOFO fold
        from livejudge.judge.training.whisper_head import class_weights, fit_logistic

        idx = np.array(sorted(oof))
        s_oof = np.array([np.mean(oof[i]) for i in idx])
        ab, c0 = fit_logistic(s_oof[:, None], y[idx], 1e-4, class_weights(y[idx]))
        recal = (float(max(ab[0], 1e-3)), float(c0))
        out["recalibration"] = {"a": recal[0], "c": recal[1], "n": int(len(idx)),
                                "fitted_on": "LOFO held-out-family log-odds of the machine families and held-out human groups"}
        print(f"\nheld-out calibration (Platt on the LOFO folds' held-out log-odds, {len(idx)} dialogues): "
              f"log-odds' = {recal[0]:.3f} · log-odds + {recal[1]:+.3f}; mean P(human) after it, per held-out family "
              f"(human / machine; in-sample for these two numbers):")
        for F in families:
            m = np.array([fam[i] == F or y[i] == 1 for i in idx])
            pp = sigmoid(recal[0] * s_oof[m] + recal[1])
            yy = y[idx][m]
            lofo[F]["recalibrated_p_human_h"] = float(pp[yy == 1].mean())
            lofo[F]["recalibrated_p_human_m"] = float(pp[yy == 0].mean())
            print(f"  {F:18} {pp[yy == 1].mean():.3f} / {pp[yy == 0].mean():.3f}")

    print("\nLOSO (fit without human group G and the reserved family)")
    print(f"{'held-out humans':24} {'n':>4} {'acc@0.5':>8} {'mean P(h)':>10} {'AUC vs reserved':>16}"
          + (f" {'held-out-cal acc':>16} {'held-out-cal P':>14}" if recal is not None else ""))
    loso = {}
    unseen_p, unseen_y = [], []
    for g in groups:
        test = np.where(((y == 1) & (spk == g)) | res)[0]
        train = np.where(~res & use & (spk != g))[0]
        p, _ = fit_predict(X, G, y, meta, train, test, args.seed, args.l2)
        yt = y[test]
        ph = p[yt == 1]
        loso[g] = dict(n=int(len(ph)), acc=float((ph >= 0.5).mean()), p_human=float(ph.mean()),
                       auc_vs_reserved=roc_auc(p, yt) if res.any() else float("nan"),
                       p_human_reserved=float(p[yt == 0].mean()) if res.any() else float("nan"))
        if recal is not None:
            ph = sigmoid(recal[0] * logit(p) + recal[1])[yt == 1]
            loso[g].update(recalibrated_acc=float((ph >= 0.5).mean()), recalibrated_p_human=float(ph.mean()))
        unseen_p.append(p)
        unseen_y.append(yt)
        print(f"{g:24} {len(ph):4d} {loso[g]['acc']:8.3f} {loso[g]['p_human']:10.3f} {loso[g]['auc_vs_reserved']:16.3f}"
              + (f" {loso[g]['recalibrated_acc']:16.3f} {loso[g]['recalibrated_p_human']:14.3f}" if recal is not None else ""))
    out["loso"] = loso
    if res.any():
        s = summary(np.concatenate(unseen_p), np.concatenate(unseen_y))
        s["acoustic_fitted_auc"] = roc_auc(P_ac[(res) | (y == 1)], y[(res) | (y == 1)])
        if recal is not None:  # the reserved family was never used to fit the recalibration either
            pr = sigmoid(recal[0] * logit(np.concatenate(unseen_p)) + recal[1])
            yr = np.concatenate(unseen_y)
            s["recalibrated_acc"] = float(((pr >= 0.5) == (yr == 1)).mean())
            s["recalibrated_p_human_h"], s["recalibrated_p_human_m"] = float(pr[yr == 1].mean()), float(pr[yr == 0].mean())
        out["unseen_family"] = {"families": reserved, **s}
        print(f"\nUNSEEN family {reserved} vs unseen human groups (pooled): AUC {s['auc']:.3f}, acc@0.5 {s['acc']:.3f}, "
              f"mean P(human) human {s['p_human_h']:.3f} / {reserved} {s['p_human_m']:.3f}; "
              f"acoustic-fitted AUC {s['acoustic_fitted_auc']:.3f}")
        if recal is not None:
            print(f"  after held-out calibration: acc@0.5 {s['recalibrated_acc']:.3f}, mean P(human) human "
                  f"{s['recalibrated_p_human_h']:.3f} / {reserved} {s['recalibrated_p_human_m']:.3f}")

    if args.ship:
        from livejudge.judge.model.head import save_head
        from livejudge.judge.training.whisper_head import fit_whisper_head

        train = np.where(~res & use)[0]
        cal = calib_split(meta, train, args.seed)
        used = [r for r in rows if not r.get("reserved") and r["family"] not in args.exclude_family]
        fams = sorted({r["family"] for r in used if r["label"] == "machine" and r["family"] not in aug_fams})
        srcs = sorted({f"{r['family']}: {r.get('source', '')} ({r.get('licence', '')})" for r in used})
        lo = min(v["auc"] for v in lofo.values()) if lofo else float("nan")
        validity = {
            "summary": (f"human vs {len(fams)} TTS families, leave-one-family-out AUC ≥ {lo:.2f}"
                        + (f", unseen {'/'.join(reserved)} AUC {out['unseen_family']['auc']:.2f}"
                           if "unseen_family" in out else "")),
            "lofo": lofo, "loso": loso, "unseen_family": out.get("unseen_family"), "command": cmd,
        }
        fit = fit_whisper_head(X[train], y[train], G[train], cal, l2=args.l2, training={
            "data": f"{len(train)} dialogues ({args.turns} agent turns each) built by benchmarks/judge_lofo.py from "
                    f"{mpath}: TTS families {', '.join(fams)}; human groups {', '.join(map(str, groups))}",
            "families": fams, "augmentations": [a for a in aug_fams if a not in args.exclude_family],
            "excluded_families": list(args.exclude_family), "human_groups": [str(g) for g in groups],
            "reserved_never_used": [str(r) for r in reserved], "validity": validity},
            sources=srcs, recalibrate=recal)
        save_head(args.ship, fit.head, fit.config)
        print(f"\nshipped head → {args.ship}: {validity['summary']}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
