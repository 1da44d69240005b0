"""Validity of the whisper judge at the DIALOGUE level, under the protocol of issue 19.

Leave-one-family-out (LOFO) folds crossed with held-out human groups, nested calibration, and a
sealed split scored only by ``--final``.

Dialogues: built with ``livejudge.testing.dialogues.DialogueBuilder`` from corpus clips (a manifest in the
corpus format: path, label, family, speaker, reserved, ...): ``--turns`` agent turns of ONE agent
(a human speaker or a TTS voice), each after a user turn (CMU clips). Every dialogue takes its
timing, noise floor, agent level and user clips from a shared list of specs, so both classes
have the same timing and channel and only the agent voice differs. Each call runs the whole
pipeline (``snapshot_of_call``: VAD → turns), then ``WhisperBackbone`` (encoder once per turn).

Protocol (issue 19; ``livejudge.judge.training.protocol``): a sealed split (``--sealed``: machine
families and human groups drawn ONCE and stored; no fold reads them; only ``--final`` scores
them, with the shipped head, at the user's unit, and logs every such run), then outer folds over
the open rows, every calibration step nested inside its outer fold. The old "reserved" column of a
manifest is an ordinary family now (it was looked at while choosing).

Folds (the head never sees the test group; its calibration split is carved from the training
speakers/voices):
* LOFO: for each open machine family F and each open human group G: fit on every open row that
  is neither F nor G (a copy-synthesis of G's voice included), test F dialogues vs G dialogues.
  Reported per F (pooled over G): ROC-AUC, accuracy at 0.5, mean P(human) of each class.
* Held-out people: each human group's dialogues over every fold that tests it: accuracy at 0.5
  and mean P(human) (people kept above 0.5?).
The head is also compared with ``acoustic-fitted`` on the same dialogues (its AUC per family).

Run: python benchmarks/judge_lofo.py MANIFEST [--lang en] [--turns 4] [--seed 0] [--cache DIR] [--ship DIR] [--json OUT]
     python benchmarks/judge_lofo.py MANIFEST --final [--head DIR]   # the sealed split, logged
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
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

USER_CLIPS = ["cmu_cards_005", "cmu_goforward", "cmu_numbers", "cmu_something", "cmu_cards_002",
              "cmu_cards_001", "cmu_cards_003", "cmu_cards_004"]


FIT_OK = {"CC0-1.0", "MIT", "MIT-0", "Apache-2.0", "BSD-3-Clause", "BSD-2-Clause", "CC-BY-4.0", "public-domain"}
"""Licences of a CSV (wild) manifest's rows that allow FITTING a shipped head (benchmarks/judge_wild.py):
permissive ones only (MIT-0, "MIT No Attribution", added 2026-12-05 for aws-samples'
repositories: MIT without even the notice condition). Share-alike (CC-BY-SA), non-commercial or no-derivatives (NC, ND), copyleft
(GPL, AGPL, MPL) and "none found" rows are measured, never fitted. A row's ``licence`` is the
recording's: a public corpus's clip hosted in another repository keeps the corpus's licence
(LibriSpeech/LibriTTS/VCTK CC-BY-4.0, LJSpeech public domain; the manifest's ``licence_note``
says where it was hosted; docs/corpus.md)."""


def _git_head() -> str | None:
    """The repository's commit when a table was made (so its order against a rule can be checked)."""
    import subprocess

    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def read_manifest(path: Path) -> list[dict]:
    """Rows of a corpus manifest: JSON lines (``scripts/build_corpus.sh``) or the wild corpus's CSV
    (``docs/corpus.md``: path, label, family, system, speaker, duration_s, lang, licence...). A CSV
    row's voice is its ``system`` (machines) or its corpus (people); ``fit`` is False unless its
    licence is in ``FIT_OK`` (measure-only rows are never fitted on)."""
    rows = []
    if path.suffix == ".csv":
        import csv

        with path.open() as f:
            for r in csv.DictReader(f):
                rows.append({"path": r["path"], "abspath": str((path.parent / r["path"]).resolve()),
                             "label": r["label"], "family": r["family"], "speaker": r["system"],
                             "duration_s": float(r["duration_s"] or 0), "lang": r.get("lang") or "en",
                             "source": f"github:{r['repo']}@{r['commit'][:10]}:{r['source_path']}",
                             "licence": r["licence"], "fit": r["licence"] in FIT_OK, "wild": True})
        return rows
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


MIN_CLIP_S = 0.8
"""Clips shorter than this (manifest ``duration_s``) are never put in a dialogue."""

NARROWBAND_HZ = 4500.0
NARROWBAND_MAX_SHARE = 1e-4


def is_narrowband(x: np.ndarray, rate_hz: int = 16000) -> bool:
    """True when a clip carries (almost) no energy above ``NARROWBAND_HZ``: an 8 kHz-sampled
    source (telephone, radio) resampled to 16 kHz. x: float mono samples at ``rate_hz``. The share
    of power above 4.5 kHz (past the 8 kHz resampler's transition band) is below 1e-4 (-40 dB).
    HEURISTIC threshold, set on the third and fourth wild batches' clips: the 8 kHz people there
    keep at most 1.3e-6 above 4.5 kHz, the wideband people 4.7e-4 or more, the machines 1.5e-4 or
    more."""
    x = np.asarray(x, np.float64)
    if len(x) < 256:
        return False
    spec = np.abs(np.fft.rfft(x - x.mean())) ** 2
    f = np.fft.rfftfreq(len(x), 1.0 / rate_hz)
    total = spec.sum()
    return bool(total > 0 and spec[f > NARROWBAND_HZ].sum() / total < NARROWBAND_MAX_SHARE)


def narrowband_voices(rows: list[dict]) -> set[str]:
    """Human voices (manifest ``speaker``) most of whose usable clips (``MIN_CLIP_S`` or longer, the
    ones dialogues are built from) are narrowband (``is_narrowband``):
    where the source's bandwidth alone could tell a person from a machine, because nearly every
    machine clip is wideband (docs/corpus.md, fourth batch)."""
    from livejudge.audio import load_audio, resample, to_mono

    votes: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        if r["label"] == "human" and r.get("duration_s", 1.0) >= MIN_CLIP_S:  # as build_calls: shorter clips are never used
            d, rate = load_audio(r["abspath"])
            votes[r["speaker"]].append(is_narrowband(resample(to_mono(d), rate)))
    return {v for v, b in votes.items() if sum(b) * 2 > len(b)}


WILD_CHANNELS = {"telephone": dict(telephone_line=True), "room": dict(room_rt60_s=0.5, room_drr_db=5.0)}
"""Call-level channels a wild (CSV) row's dialogue may go through (``--wild-channels``): the wild
rows carry no clip-level augmentations (the package corpus's ``augment`` rows), so without these
their machines are always wideband and dry while many of their people are 8 kHz or far-field
recordings. ``telephone``: both sides through 300–3400 Hz and 8 kHz μ-law (ITU-T G.711), as
judge_wild.py's telephone condition; ``room``: each side's speech reverberated, RT60 0.5 s,
direct-to-reverberant ratio 5 dB (``dialogues.room_ir``; a HEURISTIC small office)."""


VENDOR_GROUPS = (("openai", r"openai"), ("google+deepgram", r"gemini|google|deepgram"),
                 ("amazon+ibm", r"amazon|polly|ibm|watson"))
"""``--split-family-by-vendor``: (sub-family, pattern on the row's system) in order, first match wins.
Written for commercial-neural-tts (2026-12-05, before any run with it;
benchmarks/experiments/refit_v6/README.md, v9blend): OpenAI's engines against Google's and
Deepgram's; Deepgram alone (5 clips) is too few for a family of its own. amazon+ibm added for the
seventh batch before any run with it (v10blend): Polly and Watson, IBM alone being 8 clips."""


def split_by_vendor(rows: list[dict], family: str) -> list[dict]:
    """``rows`` with every machine row of ``family`` relabelled ``family:<vendor group>`` by
    ``VENDOR_GROUPS`` (its ``speaker`` is the wild row's system), so that leave-one-family-out
    holds one vendor group out while the others teach. Other rows are returned unchanged.

    Raises:
        SystemExit: a row of ``family`` whose system matches no vendor group (one line naming it).
    """
    import re

    out = []
    for r in rows:
        if r["label"] == "machine" and r["family"] == family:
            sub = next((name for name, rx in VENDOR_GROUPS if re.search(rx, r["speaker"], re.I)), None)
            if sub is None:
                raise SystemExit(f"--split-family-by-vendor {family}: system {r['speaker']!r} matches no vendor in "
                                 f"judge_lofo.VENDOR_GROUPS; add it there (before any run that reads it)")
            r = r | {"family": f"{family}:{sub}"}
        out.append(r)
    return out


def build_calls(rows: list[dict], seed: int, turns: int, per_human: int, per_voice: int,
                per_family: int = 60, human_group_key: str = "family", dry: bool = False,
                wild_channels: tuple[str, ...] = ()):
    """(calls, meta): one Dialogue per entry; meta has label, family, speaker, group, reserved.

    Dialogues per agent: humans ``min(per_human, 3 × clips)``; machines ``max(per_voice,
    ceil(per_family / voices in the family))`` so a family with one voice still gets enough.
    Each dialogue keeps ONE channel condition (``channel_of``) for all its agent turns, as a real
    call has one channel. ``group`` = the human's source family (or speaker) for held-out splits;
    a copy-synthesis clip's group is that of its source speaker. ``wild_channels`` (names in
    ``WILD_CHANNELS``): a wild row's agent (either class) has half its dialogues on the clean line
    and the rest through one of these, drawn from a separate random stream so that the clips picked
    are the same as without them.
    """
    from livejudge.audio import load_audio, resample, to_mono
    from livejudge.testing.dialogues import DialogueBuilder

    rng = np.random.default_rng(seed)
    ch_rng = np.random.default_rng(seed + 1_000_003)  # wild channels only: the picks' stream is untouched
    n_specs = 64
    specs = [dict(noise=float(rng.uniform(-70, -50)), level=float(rng.uniform(-30, -18)),
                  users=[USER_CLIPS[int(i)] for i in rng.integers(len(USER_CLIPS), size=turns)],
                  ugaps=rng.uniform(0.3, 0.9, size=turns).tolist(), agaps=rng.uniform(0.2, 1.2, size=turns).tolist(),
                  seed=int(rng.integers(1 << 30))) for _ in range(n_specs)]
    by_agent = defaultdict(list)
    for r in rows:
        if r.get("duration_s", 1.0) < MIN_CLIP_S:
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
            line = "none"
            if wild_channels and clips[0].get("wild") and j % 2 == 1:
                line = wild_channels[int(ch_rng.integers(len(wild_channels)))]
                ch = line
            picks = [pool[int(i)] for i in rng.permutation(len(pool))[:turns]]
            while len(picks) < turns:
                picks.append(pool[int(rng.integers(len(pool)))])
            # tail 1.5 s: the last agent turn is settled (whisper.SETTLE_S) when the call ends
            meta = dict(label=label, family=fam, speaker=spk, reserved=res, channel=ch,
                        group=group_of.get(spk, f"{fam}:{spk}"))
            if dry:  # the dialogue's labels and groups only (their order does not depend on the audio)
                out.append((None, meta))
                continue
            b = DialogueBuilder(noise_dbfs=sp["noise"], seed=sp["seed"], tail_s=1.5, **WILD_CHANNELS.get(line, {}))
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


CALIB_SPLITS = ("voice", "family", "family-keep-small", "family-out")
"""How ``calib_split`` draws the calibration voices: ``voice`` (the default, every stored run so far):
~25 % of each class's voices drawn over all families at once; ``family``: drawn within each machine
family and each human group, never a family's or group's only voice (refit_v6/README.md, "v13
result": a single-voice family could leave the fit whole under ``voice``); ``family-keep-small``:
as ``family``, but a family or group of fewer than ``KEEP_SMALL_BELOW`` voices stays whole in the
fit (tests the hypothesis in docs/judge.md that ``family`` loses by taking 1 of a small family's 2-3
voices); ``family-out``: ~25 % of the fold's machine families whole (at least one, never all), the
people as ``family`` (v16, refit_v6/README.md: the Platt step then sees scores of families the fit
never met, as the held-out family is)."""

KEEP_SMALL_BELOW = 4
"""``family-keep-small``: families and groups with fewer voices than this give none to calibration."""


def calib_split(meta, train_idx, seed: int, by: str = "voice") -> np.ndarray:
    """bool over train_idx: the calibration part, ~25 % of the training voices (whole voices, so a
    voice is never on both sides); the rest is the fit part. Only ``train_idx`` rows are read, so a
    fold's calibration never holds its test rows (tests/test_calib_split.py).

    ``by`` (``CALIB_SPLITS``): ``voice`` draws 25 % of each class's voices over all families at once,
    so a family with one voice (piper in round 2's corpus) can be drawn whole into calibration and
    never be fitted on; ``family`` draws 25 % within each machine family and each human group and
    never takes a family's or group's only voice, so every family the fold trains on is in the fit;
    ``family-keep-small`` as ``family`` but takes nothing from a family or group of fewer than
    ``KEEP_SMALL_BELOW`` (4) voices; ``family-out`` takes 25 % of the machine families, rounded, at
    least one and never every one, each whole (a fold with one machine family: 25 % of its voices, as
    ``family``), and the people as ``family``. Raises ValueError for another ``by``."""
    if by not in CALIB_SPLITS:
        raise ValueError(f"calibration split {by!r}: use one of {', '.join(CALIB_SPLITS)}")
    rng = np.random.default_rng(seed)
    chosen = set()
    if by == "voice":
        spk = sorted({(meta[i]["label"], meta[i]["speaker"]) for i in train_idx})
        for lab in ("human", "machine"):
            s = [x for x in spk if x[0] == lab]
            rng.shuffle(s)
            n = max(1, int(round(0.25 * len(s))))
            chosen.update(s[:n])
    else:
        by_key: dict = {}
        for i in train_idx:
            m = meta[i]
            key = (m["label"], m["family"] if m["label"] == "machine" else m["group"])
            by_key.setdefault(key, set()).add(m["speaker"])
        smallest = KEEP_SMALL_BELOW if by == "family-keep-small" else 2
        fams = sorted(k for k in by_key if k[0] == "machine") if by == "family-out" else []
        if len(fams) > 1:
            rng.shuffle(fams)
            for k in fams[:min(len(fams) - 1, max(1, int(round(0.25 * len(fams)))))]:
                chosen.update((k[0], x) for x in by_key.pop(k))
            by_key = {k: v for k, v in by_key.items() if k[0] == "human"}
        for k in sorted(by_key):
            v = sorted(by_key[k])
            if len(v) < smallest:
                continue
            rng.shuffle(v)
            chosen.update((k[0], x) for x in v[:max(1, int(round(0.25 * len(v))))])
    return np.array([(meta[i]["label"], meta[i]["speaker"]) in chosen for i in train_idx], dtype=bool)


def fit_predict(X, G, y, meta, train_idx, test_idx, seed: int, l2: float, split_by: str = "voice"):

    from livejudge.judge.training.whisper_head import fit_whisper_head

    cal = calib_split(meta, train_idx, seed, split_by)
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


def fold_predict(X, G, y, meta, fold, sealed, seed: int, l2: float, nested: bool, never=(),
                 group_chunks: int | None = None, split_by: str = "voice") -> np.ndarray:
    """P(human) of ``fold.test`` from a head fitted on ``fold.train``. With ``nested``, the second
    Platt step (held-out-family calibration) is fitted on the held-out log-odds of the INNER folds
    of ``fold.train`` only, then applied to the outer test rows: the calibration never sees them
    (``protocol.check_nested`` asserts it). ``split_by``: ``calib_split``'s ``by``."""
    from livejudge.judge.training.protocol import check_nested, inner_folds
    from livejudge.judge.training.whisper_head import class_weights, fit_logistic

    p, _ = fit_predict(X, G, y, meta, fold.train, fold.test, seed, l2, split_by)
    if not nested:
        return p
    oof: dict[int, list[float]] = defaultdict(list)
    for inner in inner_folds(meta, fold, never, group_chunks):
        if len(set(y[inner.train].tolist())) < 2 or len(inner.test) == 0:
            continue
        try:
            q, _ = fit_predict(X, G, y, meta, inner.train, inner.test, seed, l2, split_by)
        except ValueError:  # an inner split without one of the classes
            continue
        for i, lo in zip(inner.test, logit(q)):
            oof[int(i)].append(float(lo))
    idx = np.array(sorted(oof), dtype=int)
    check_nested(meta, sealed, fold, idx)
    if len(idx) == 0 or len(set(y[idx].tolist())) < 2:
        return p
    s_oof = np.array([np.mean(oof[i]) for i in idx])
    ab, c0 = fit_logistic(s_oof[:, None], y[idx], 1e-4, class_weights(y[idx]))
    return sigmoid(max(float(ab[0]), 1e-3) * logit(p) + float(c0))


def floor2(x: float) -> str:
    """Rounded DOWN to 2 decimals (a validity figure never rounds up)."""
    return f"{np.floor(float(x) * 100) / 100:.2f}"


def write_sealed_validity(head: Path, figs: dict, run: int) -> str:
    """Put the sealed evaluation into the head's config as its validity line: accuracy at 0.5 and
    mean P(human) per sealed family and for the sealed people, rounded down, naming the families
    the head was fitted on. Returns the summary."""
    cfg_path = head / "config.json"
    cfg = json.loads(cfg_path.read_text())
    tr = cfg.setdefault("training", {})
    # a family held out by vendor group ("family:vendor") is named once, as its family
    fitted = list(dict.fromkeys(f.split(":", 1)[0] for f in tr.get("families") or []))
    seen_groups = set(tr.get("human_groups") or [])
    # a head older than the seal may have been fitted on a sealed family or group: say so, per item
    seen = lambda name, pool: " (in its training)" if name in pool else ""  # noqa: E731
    parts = [f"{F}{seen(F, fitted)} acc {floor2(r['acc'])} P(h) {floor2(r['mean_p_human'])}"
             for F, r in figs["per_family"].items() if r["n"] and F != "people"]
    ppl = figs["per_family"].get("people")
    groups = figs.get("sealed_groups") or []
    ppl_seen = " (in its training)" if set(groups) & seen_groups else ""
    # held-out figures first; the AUC says when its people are not held out; then what it was fitted on
    auc_note = " with people in its training" if ppl_seen and ppl and ppl["n"] else ""
    summary = ("sealed split: " + "; ".join(parts)
               + (f"; people{ppl_seen} acc {floor2(ppl['acc'])} P(h) {floor2(ppl['mean_p_human'])}" if ppl and ppl["n"] else "")
               + f"; AUC {floor2(figs['auc'])}{auc_note} (final run {run}); fitted on {len(fitted)} families "
                 f"({', '.join(fitted)})")
    v = dict(tr.get("validity") or {})
    v.update(summary=summary, sealed=figs)
    tr["validity"] = v
    cfg_path.write_text(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n")
    return summary


def final_eval(args, rows, sealed, cmd: str) -> int:
    """``--final``: the shipped head (``--head``) on the sealed split at the user's unit: each
    sealed dialogue scored as ``livejudge score`` does (live 30 s windows every 2 s, P(human) =
    mean over windows with evidence), figures per sealed family and for the sealed people;
    every run appended to ``--final-log``."""
    from livejudge.judge.model.judge import DEFAULT_WHISPER_HEAD, load_judge
    from livejudge.judge.training.protocol import append_final_log, final_log_entry
    from livejudge.session import Session, SessionConfig, stream_call

    head = Path(args.head) if args.head else DEFAULT_WHISPER_HEAD
    calls = build_calls(rows, args.seed, args.turns, args.per_human, args.per_voice, args.per_family,
                        args.human_group)
    calls = [(d, m) for d, m in calls if sealed.is_sealed(m)]
    if not calls:
        print("no sealed dialogues in this manifest", file=sys.stderr)
        return 2
    judge = load_judge("whisper", head=head)
    per, ys, covs = [], [], []
    for d, m in calls:
        s = Session(SessionConfig(judge_mode="every"), judge=judge)
        stream_call(s, d.call)
        r = s.close()
        per.append(r["summary"]["mean_p_human"])
        covs.append(r["summary"]["evidence_coverage"] or 0.0)
        ys.append(1 if m["label"] == "human" else 0)
    ok = np.array([p is not None for p in per])
    p = np.array([x if x is not None else np.nan for x in per], dtype=float)
    y = np.array(ys)
    fam = np.array([m["family"] if m["label"] == "machine" else "people" for _, m in calls])
    figs = {"n_dialogues": len(calls), "no_evidence_dialogues": int((~ok).sum()),
            "sealed_families": list(sealed.families), "sealed_groups": list(sealed.groups),
            "evidence_coverage_mean": float(np.mean(covs)),
            "auc": roc_auc(p[ok], y[ok]), "per_family": {}}
    print(f"\nFINAL (sealed split {list(sealed.families)} + people {list(sealed.groups)}), head {head}:")
    for F in sorted(set(fam)):
        sel = (fam == F) & ok
        want = 1 if F == "people" else 0
        figs["per_family"][F] = {"n": int(sel.sum()), "mean_p_human": float(p[sel].mean()) if sel.any() else None,
                                 "acc": float(((p[sel] >= 0.5) == want).mean()) if sel.any() else None}
        row = figs["per_family"][F]
        print(f"  {F:18} n={row['n']:3d} mean P(human) {row['mean_p_human']:.3f} acc@0.5 {row['acc']:.3f}")
    print(f"  pooled ROC-AUC {figs['auc']:.3f}; evidence coverage {figs['evidence_coverage_mean']:.2f}; "
          f"{figs['no_evidence_dialogues']} dialogue(s) without evidence")
    n = append_final_log(args.final_log, final_log_entry(figs, head_dir=head, sealed=sealed, command=cmd))
    print(f"  logged as final run {n} in {args.final_log}")
    if args.write_validity:
        line = write_sealed_validity(head, figs, n)
        print(f"  validity line written into {head / 'config.json'}: {line}")
    if args.json:
        Path(args.json).write_text(json.dumps(figs, indent=1, default=float))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] + " (module docstring: the whole protocol)")
    ap.add_argument("manifest", nargs="+", help="corpus manifests (JSON lines or the wild CSV), pooled")
    ap.add_argument("--turns", type=int, default=4, help="agent turns per dialogue (default 4)")
    ap.add_argument("--per-human", type=int, default=12, help="dialogues per human speaker (at most 3 per clip)")
    ap.add_argument("--per-voice", type=int, default=3, help="dialogues per TTS voice (at least)")
    ap.add_argument("--per-family", type=int, default=60, help="dialogues per machine family (at least)")
    ap.add_argument("--human-group", choices=("family", "speaker"), default="family",
                    help="held-out human unit: the source corpus (family) or the speaker")
    ap.add_argument("--seed", type=int, default=0, help="seed of the dialogue draws, splits and a first seal (default 0)")
    ap.add_argument("--l2", type=float, default=0.3, help="ridge penalty (chosen on the development corpus)")
    ap.add_argument("--exclude-family", action="append", default=[], metavar="FAMILY",
                    help="leave a family out of training and testing (repeatable; e.g. an augmentation that hurts)")
    ap.add_argument("--exclude-speaker", action="append", default=[], metavar="VOICE",
                    help="leave a voice out of training and testing (repeatable): the manifest's speaker, which for "
                         "a wild CSV row is its system column; e.g. a person the measure-only sources also hold, "
                         "so that a head fitted here is never measured on someone it was fitted on")
    ap.add_argument("--lang", default=None, metavar="CODE",
                    help="use only clips in this language (manifest `lang`; e.g. en: the encoder is tiny.en, and a "
                         "language spoken by humans but by few machine voices would become a label)")
    ap.add_argument("--calibrate", choices=("heldout", "split"), default="heldout",
                    help="heldout (default): a second Platt step fitted on held-out-family scores, NESTED in each "
                         "outer fold (its inner folds only); split: only the Platt step on a calibration split")
    ap.add_argument("--calib-seed", type=int, default=None, metavar="N",
                    help="seed of the calibration split alone (default: --seed): run the same folds and dialogues "
                         "under several draws of the split and read them together with benchmarks/lofo_draws.py")
    ap.add_argument("--calib-split", choices=CALIB_SPLITS, default="voice",
                    help="how the calibration voices are drawn from a fold's training rows (calib_split): voice "
                         "(default, every stored run): 25%% of each class's voices over all families; family: 25%% "
                         "within each family and human group, never its only voice, so no family leaves the fit; "
                         "family-keep-small: as family, but families of 1-3 voices give none")
    ap.add_argument("--sealed", default="benchmarks/results/sealed_split.json", metavar="PATH",
                    help="the sealed test split: drawn once and stored here, reused ever after (issue 19; "
                         "default %(default)s)")
    ap.add_argument("--seal-families", type=int, default=2, help="machine families to seal (first run only)")
    ap.add_argument("--seal-groups", type=int, default=1, help="human groups to seal (first run only)")
    ap.add_argument("--extend-sealed", default=None, metavar="REASON",
                    help="the corpus has GROWN since the seal (new families or groups gathered): keep every "
                         "sealed item, open the new ones, record REASON in the seal file (needs --sealed-corpus)")
    ap.add_argument("--sealed-corpus", nargs="+", default=None, metavar="MANIFEST",
                    help="with --extend-sealed: the manifests the seal was last used with (same filters); "
                         "put it after the positional manifests, it takes every path that follows")
    ap.add_argument("--seal-new-families", type=int, default=0,
                    help="with --extend-sealed: also seal this many of the NEW families, drawn before any result")
    ap.add_argument("--final", action="store_true",
                    help="evaluate ONLY the shipped head (--head) on the sealed split at the user's unit, and log it")
    ap.add_argument("--head", default=None, metavar="DIR", help="head for --final (default: the shipped whisper-fitted)")
    ap.add_argument("--final-log", default="benchmarks/results/final_runs.jsonl", metavar="PATH",
                    help="where every --final run is appended (default %(default)s)")
    ap.add_argument("--write-validity", action="store_true",
                    help="with --final: write the sealed figures into the head's config as its validity line")
    ap.add_argument("--group-chunks", type=int, default=None, metavar="K",
                    help="hold out K speaker-disjoint chunks of human groups instead of one group per fold (cost)")
    ap.add_argument("--compare-head", default="livejudge/judge/heads/whisper-fitted", metavar="DIR",
                    help="also score every fold's test dialogues with this existing head (default: the shipped one) "
                         "and report its AUC per held-out family beside the fold heads' ('' to skip); a family "
                         "it was fitted on is marked, since that figure is not held out")
    ap.add_argument("--blend-compare", type=float, default=None, metavar="W",
                    help="the candidate is a BLEND: each fold head's log-odds mixed with the compare head's, "
                         "(1-W)·fold + W·compare (livejudge.judge.training.blend; W fixed before the run, never "
                         "tuned); with --ship, the blend of the refit and the compare head is saved. Its figures "
                         "are held out only on families and people the compare head never met")
    ap.add_argument("--wild-channels", default="", metavar="LIST",
                    help="comma-separated channels of judge_lofo.WILD_CHANNELS (telephone, room) that half of "
                         "each wild row's dialogues go through, both classes (issue 19: augmentations for both "
                         "classes); default none (the runs up to v7)")
    ap.add_argument("--split-family-by-vendor", default=None, metavar="FAMILY",
                    help="hold FAMILY out by vendor group (judge_lofo.VENDOR_GROUPS), not whole: one vendor's "
                         "engines held out while the others teach (the sealed split still reads FAMILY)")
    ap.add_argument("--cache", default=".scratch/lofo_cache", metavar="DIR",
                    help="embedding cache, keyed by the manifests' text and these options (default %(default)s)")
    ap.add_argument("--ship", default=None, metavar="DIR",
                    help="also fit a head on every open row and save it to DIR (a candidate; shipping is a choice)")
    ap.add_argument("--json", default=None, metavar="OUT", help="write the tables as JSON here")
    ap.add_argument("--preds", default=None, metavar="OUT.npz",
                    help="also write every outer fold's per-row P(human) (fold, row index, p, and each row's label, "
                         "family, group, speaker), to combine with another readout on the same folds")
    args = ap.parse_args(argv)
    wild_ch = tuple(x for x in args.wild_channels.split(",") if x)
    if set(wild_ch) - set(WILD_CHANNELS):
        ap.error(f"--wild-channels: unknown {sorted(set(wild_ch) - set(WILD_CHANNELS))}; valid: {', '.join(WILD_CHANNELS)}")
    if args.blend_compare is not None and not (0.0 < args.blend_compare < 1.0 and args.compare_head):
        ap.error("--blend-compare W needs 0 < W < 1 and a --compare-head to blend with")
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    from livejudge.judge.training.blend import blend_heads, blend_log_odds, weights_digest
    from livejudge.judge.training.protocol import load_or_seal, outer_folds

    from livejudge.judge.training.protocol import extend_sealed

    def usable_rows(manifests, say: bool) -> list[dict]:
        rows = [r for m in manifests for r in read_manifest(m)]
        measure_only = [r for r in rows if not r.get("fit", True)]
        rows = [r for r in rows if r.get("fit", True)]  # measure-only sources are never fitted on
        if measure_only and say:
            print(f"{len(measure_only)} measure-only clips left out (their licence does not allow fitting)",
                  file=sys.stderr)
        if args.lang:
            rows = [r for r in rows if (r.get("lang") or "en") == args.lang]
        return [r for r in rows if r["family"] not in args.exclude_family and r["speaker"] not in args.exclude_speaker]

    def augmentation_families(rows) -> list[str]:
        fams = {r["family"] for r in rows if r["label"] == "machine"}
        return sorted(fams - {r["family"] for r in rows
                              if r["label"] == "machine" and r.get("augment") in (None, "", "none")})

    if args.extend_sealed is not None and not args.sealed_corpus:
        ap.error("--extend-sealed needs --sealed-corpus MANIFEST... (the corpus the seal was last used with)")
    mpaths = [Path(m) for m in args.manifest]
    rows = usable_rows(mpaths, say=True)
    cmd = "python benchmarks/judge_lofo.py " + " ".join(argv if argv is not None else sys.argv[1:])
    # augmentation families (copy-synthesis of human clips) are training material, not systems:
    # never sealed, never held out as a family (their rows go with their human speaker's group)
    aug_fams = augmentation_families(rows)
    key = hashlib.sha256(("".join(m.read_text() for m in mpaths) + f"{args.group_chunks}/{args.seed}/{args.turns}/{args.per_human}/{args.per_voice}/{args.per_family}/{args.human_group}/{args.lang}/{sorted(args.exclude_family)}/v6"
                          + (f"/{sorted(args.exclude_speaker)}" if args.exclude_speaker else "")
                          + (f"/wild-channels={','.join(wild_ch)}" if wild_ch else "")
                          + (f"/split-by-vendor={args.split_family_by_vendor}" if args.split_family_by_vendor else ""))
                         .encode()).hexdigest()[:16]
    cache_file = Path(args.cache) / f"{key}.npz"
    calls = build_calls(rows, args.seed, args.turns, args.per_human, args.per_voice, args.per_family,
                        args.human_group, dry=True, wild_channels=wild_ch)
    meta = [m for _, m in calls]
    if args.extend_sealed is not None:
        old_rows = usable_rows([Path(m) for m in args.sealed_corpus], say=False)
        old_calls = build_calls(old_rows, args.seed, args.turns, args.per_human, args.per_voice, args.per_family,
                                args.human_group, dry=True)
        old_meta = [m for _, m in old_calls]
        sealed = extend_sealed(args.sealed, meta, reason=args.extend_sealed, seed=args.seed, never=aug_fams,
                               known_families=sorted({m["family"] for m in old_meta if m["label"] == "machine"}),
                               known_groups=sorted({m["group"] for m in old_meta if m["label"] == "human"}),
                               seal_new_families=args.seal_new_families)
        if sealed.extensions:
            e = sealed.extensions[-1]
            print(f"sealed split extended: new open families {[f for f in e['added_families'] if f not in e['newly_sealed_families']]}, "
                  f"newly sealed {e['newly_sealed_families']}, new groups {e['added_groups']}", file=sys.stderr)
    else:
        sealed = load_or_seal(args.sealed, meta, args.seal_families, args.seal_groups, args.seed, never=aug_fams)
    print(f"sealed split ({args.sealed}): families {list(sealed.families)}, people {list(sealed.groups)}",
          file=sys.stderr)
    if args.final:
        return final_eval(args, rows, sealed, cmd)
    mpath = " + ".join(map(str, mpaths))
    # the open rows only are built and embedded: no sealed audio is read before --final
    sealed_agents = {(m["label"], m["family"], m["speaker"]) for m in meta if sealed.is_sealed(m)}
    rows_open = [r for r in rows if (r["label"], r["family"], r["speaker"]) not in sealed_agents]
    if args.split_family_by_vendor:  # after the seal, which is keyed on the manifests' own families
        if args.split_family_by_vendor in sealed.families:
            ap.error(f"--split-family-by-vendor: {args.split_family_by_vendor} is sealed; it is never split or opened")
        rows_open = split_by_vendor(rows_open, args.split_family_by_vendor)
    calls = build_calls(rows_open, args.seed, args.turns, args.per_human, args.per_voice, args.per_family,
                        args.human_group, dry=cache_file.exists(), wild_channels=wild_ch)
    meta = [m for _, m in calls]
    assert not any(sealed.is_sealed(m) for m in meta), "a sealed dialogue among the open ones"
    print(f"{len(calls)} open dialogues ({sum(m['label'] == 'human' for m in meta)} human-agent)", file=sys.stderr)
    X, G, P_ac, n_enc, secs = embed_calls(calls, cache_file)
    y = np.array([1 if m["label"] == "human" else 0 for m in meta])
    fam = np.array([m["family"] for m in meta])
    nested = args.calibrate == "heldout"
    calib_seed = args.seed if args.calib_seed is None else args.calib_seed  # the split alone (--calib-seed)
    P_cmp, cmp_fams = None, set()
    if args.compare_head:
        from livejudge.judge.model.head import load_head

        cmp_head, cmp_cfg = load_head(args.compare_head)
        cmp_digest = weights_digest(args.compare_head)  # which head, by its weights (the rule checks it)
        P_cmp = predict(cmp_head, X, G)
        cmp_fams = set((cmp_cfg.training or {}).get("families", []))
        cmp_groups = {g for x in (cmp_cfg.training or {}).get("human_groups", []) for g in str(x).split("+")}
        # per test row: a machine, or a person of a group the existing head was never fitted on
        unmet = np.array([m["label"] == "machine" or not (set(str(m["group"]).split("+")) & cmp_groups) for m in meta])
        # people whose source is narrowband: the comparison is also read without them (a bandwidth cue)
        nb_voices = narrowband_voices(rows_open)
        narrow = np.array([m["label"] == "human" and m["speaker"] in nb_voices for m in meta])
    folds = list(outer_folds(meta, sealed, aug_fams, args.group_chunks))
    families = sorted({f.family for f in folds})
    groups = sorted({f.group for f in folds})
    out = {"command": cmd, "commit": _git_head(), "started_utc": started,
           "n_dialogues": len(calls), "turns": args.turns, "families": families,
           "augmentation_families": aug_fams, "excluded_families": args.exclude_family,
           "sealed": {"families": list(sealed.families), "groups": list(sealed.groups)},
           "human_groups": groups, "calibration": "nested held-out-family Platt" if nested else "split Platt",
           "calibration_split": args.calib_split, "seed": args.seed, "calib_seed": calib_seed,
           "embed_seconds": secs, "encoder_calls": n_enc, "wild_channels": list(wild_ch),
           "channels": dict(sorted(Counter(f"{m['label']}:{m['channel']}" for m in meta).items()))}
    if args.blend_compare is not None:
        out["blend_compare"] = {"weight": args.blend_compare, "compare_head_weights_sha256_16": cmp_digest,
                                "note": "every fold figure is the blend's; held out only on families and people the "
                                        "compare head never met (compare_head.fresh_families, people_neither_met)"}
        print(f"candidate: blend, log-odds {1 - args.blend_compare:g}·fold head + {args.blend_compare:g}·compare head "
              f"({args.compare_head}); its figures on families or people the compare head was fitted on are NOT held out",
              file=sys.stderr)
    print(f"\nLOFO x leave-one-human-group-out ({len(folds)} folds, calibration {out['calibration']}) — {cmd}")
    print(f"{'held-out family':18} {'AUC':>6} {'acc@0.5':>8} {'P(h) human':>11} {'P(h) machine':>13} "
          f"{'acoustic-fitted AUC':>20} {'per-fold AUC mean/min':>22}"
          + (f" {'compare-head AUC':>17}" if P_cmp is not None else ""))
    by_f: dict[str, list] = defaultdict(list)
    by_g: dict[str, list] = defaultdict(list)
    fold_p = []
    for fold in folds:
        p = fold_predict(X, G, y, meta, fold, sealed, calib_seed, args.l2, nested, aug_fams, args.group_chunks,
                         args.calib_split)
        if args.blend_compare is not None:  # the candidate is the blend of this fold head and the compare head
            p = sigmoid(blend_log_odds([logit(p), logit(P_cmp[fold.test])], [1 - args.blend_compare, args.blend_compare]))
        by_f[fold.family].append((p, y[fold.test], P_ac[fold.test], fold.test))
        fold_p.append(p)
        hm = y[fold.test] == 1
        by_g[fold.group].append(p[hm])
    lofo = {}
    for F in families:
        ps = np.concatenate([a for a, _, _, _ in by_f[F]])
        ys = np.concatenate([b for _, b, _, _ in by_f[F]])
        s = summary(ps, ys)
        fa = [roc_auc(a, b) for a, b, _, _ in by_f[F]]
        s["fold_auc_mean"], s["fold_auc_min"] = float(np.nanmean(fa)), float(np.nanmin(fa))
        s["acoustic_fitted_auc"] = roc_auc(np.concatenate([c for _, _, c, _ in by_f[F]]), ys)
        extra = ""
        if P_cmp is not None:  # the same test dialogues, scored by the existing head
            pc = P_cmp[np.concatenate([t for _, _, _, t in by_f[F]])]
            s["compare_head"] = {**summary(pc, ys), "fitted_on_family": F in cmp_fams}
            if F not in cmp_fams:  # this family again, with only the people neither head was fitted on
                tt = np.concatenate([t for _, _, _, t in by_f[F]])
                newp = unmet[tt]
                s["people_neither_met"] = {"n_h": int(((ys == 1) & newp).sum()), "auc": roc_auc(ps[newp], ys[newp]),
                                           "compare_head_auc": roc_auc(pc[newp], ys[newp])}
                wb = newp & ~narrow[tt]
                s["people_neither_met_wideband"] = {"n_h": int(((ys == 1) & wb).sum()), "auc": roc_auc(ps[wb], ys[wb]),
                                                    "compare_head_auc": roc_auc(pc[wb], ys[wb])}
            extra = f" {s['compare_head']['auc']:10.3f}" + (" (fitted)" if F in cmp_fams else "")
        lofo[F] = s
        print(f"{F:18} {s['auc']:6.3f} {s['acc']:8.3f} {s['p_human_h']:11.3f} {s['p_human_m']:13.3f} "
              f"{s['acoustic_fitted_auc']:20.3f} {s['fold_auc_mean']:14.3f}/{s['fold_auc_min']:.3f}" + extra)
    out["lofo"] = lofo
    allp = np.concatenate([a for F in families for a, _, _, _ in by_f[F]])
    ally = np.concatenate([b for F in families for _, b, _, _ in by_f[F]])
    out["pooled_auc"] = roc_auc(allp, ally)
    if args.preds:  # per-row fold predictions, in fold order (refit_v6/README.md, v11's S1)
        rows_f = [(k, i, float(q)) for k, fold in enumerate(folds) for i, q in zip(fold.test, fold_p[k])]
        np.savez(args.preds, fold=np.array([r[0] for r in rows_f]), idx=np.array([r[1] for r in rows_f]),
                 p=np.array([r[2] for r in rows_f]), families=np.array([f.family for f in folds]),
                 meta=np.array([[m["label"], m["family"], str(m["group"]), m["speaker"]] for m in meta]))
        print(f"per-row fold predictions -> {args.preds}", file=sys.stderr)
    line = f"pooled over every fold: AUC {out['pooled_auc']:.3f}"
    if P_cmp is not None:
        fresh = [F for F in families if F not in cmp_fams]
        if fresh:  # only the families the existing head never met: a held-out figure for it too
            parts = [x for F in fresh for x in by_f[F]]  # (p, y, acoustic p, test rows) per fold
            fp, fy, ft = (np.concatenate([x[k] for x in parts]) for k in (0, 1, 3))
            fc = P_cmp[ft]
            # people it never met either: human test dialogues of groups outside its training
            new_people = unmet[ft]
            wb = new_people & ~narrow[ft]
            out["compare_head"] = {"dir": args.compare_head, "version": cmp_cfg.version,
                                   "weights_sha256_16": cmp_digest,
                                   "families_fitted_on": sorted(cmp_fams),
                                   "narrowband_voices": sorted(nb_voices),
                                   "fresh_wideband_people_test_rows": int(((fy == 1) & wb).sum()),
                                   "fold_heads_auc_fresh_families_and_wideband_people": roc_auc(fp[wb], fy[wb]),
                                   "compare_head_auc_fresh_families_and_wideband_people": roc_auc(fc[wb], fy[wb]),
                                   "human_groups_fitted_on": sorted(cmp_groups),
                                   "fresh_families": fresh, "fold_heads_auc_on_fresh": roc_auc(fp, fy),
                                   "compare_head_auc_on_fresh": roc_auc(fc, fy),
                                   "fresh_people_test_rows": int(((fy == 1) & new_people).sum()),
                                   "fold_heads_auc_fresh_families_and_people": roc_auc(fp[new_people], fy[new_people]),
                                   "compare_head_auc_fresh_families_and_people": roc_auc(fc[new_people], fy[new_people])}
            c = out["compare_head"]
            line += (f"; on the {len(fresh)} families the compare head never met: fold heads "
                     f"{c['fold_heads_auc_on_fresh']:.3f}, compare head {c['compare_head_auc_on_fresh']:.3f} "
                     f"(its people partly in its training); with only people it never met "
                     f"({c['fresh_people_test_rows']} human test rows over those folds): fold heads "
                     f"{c['fold_heads_auc_fresh_families_and_people']:.3f}, compare head "
                     f"{c['compare_head_auc_fresh_families_and_people']:.3f}")
    print(line)
    print("\nheld-out people (each group's dialogues, over every fold that tests it)")
    loso = {}
    for g in groups:
        ph = np.concatenate(by_g[g])
        loso[g] = {"n": int(len(ph)), "acc": float((ph >= 0.5).mean()), "p_human": float(ph.mean())}
        print(f"  {g:24} n={len(ph):4d} acc@0.5 {loso[g]['acc']:.3f} mean P(human) {loso[g]['p_human']:.3f}")
    out["loso"] = loso

    if args.ship:
        from livejudge.judge.model.head import save_head
        from livejudge.judge.training.whisper_head import class_weights, fit_logistic, fit_whisper_head

        train = np.arange(len(meta))
        cal = calib_split(meta, train, calib_seed, args.calib_split)
        recal = None
        if nested:  # the shipped head's held-out-family step: fitted on the outer folds' held-out scores
            oof: dict[int, list[float]] = defaultdict(list)
            for fold in folds:
                q, _ = fit_predict(X, G, y, meta, fold.train, fold.test, calib_seed, args.l2, args.calib_split)
                for i, lo in zip(fold.test, logit(q)):
                    oof[int(i)].append(float(lo))
            idx = np.array(sorted(oof))
            ab, c0 = fit_logistic(np.array([np.mean(oof[i]) for i in idx])[:, None], y[idx], 1e-4, class_weights(y[idx]))
            recal = (float(max(ab[0], 1e-3)), float(c0))
        used = [r for r in rows_open]
        fams = sorted({r["family"] for r in used if r["label"] == "machine" and r["family"] not in aug_fams})
        srcs = sorted({f"{r['family']}: {r.get('source', '')} ({r.get('licence', '')})" for r in used})
        lo = min(v["auc"] for v in lofo.values()) if lofo else float("nan")
        validity = {
            "summary": (f"human vs {len(fams)} TTS families, nested leave-one-family-out AUC ≥ {lo:.2f}; "
                        "sealed split not yet evaluated (run --final)"),
            "lofo": lofo, "loso": loso, "command": cmd,
            **({"languages": [args.lang]} if args.lang else {}),
        }
        if args.blend_compare is not None:  # held out only where the compare head never met the family
            # ... and only against the people neither member met
            fresh_l = {F: {"auc": v["people_neither_met"]["auc"], "n_h": v["people_neither_met"]["n_h"],
                           "n_m": v["n_m"], "compare_head_auc": v["people_neither_met"]["compare_head_auc"]}
                       for F, v in lofo.items() if F not in cmp_fams}
            lo = min(v["auc"] for v in fresh_l.values()) if fresh_l else float("nan")
            validity = {
                "summary": (f"human vs {len(fresh_l)} TTS families neither member was fitted on, against people "
                            f"neither met, nested leave-one-family-out AUC ≥ {lo:.2f}; sealed split not yet "
                            "evaluated (run --final)"),
                "lofo": fresh_l, "command": cmd, **({"languages": [args.lang]} if args.lang else {}),
                "note": "a blend's fold figures on families or people its compare-head member was fitted on are "
                        "not held out and are left out here"}
        fit = fit_whisper_head(X[train], y[train], G[train], cal, l2=args.l2, training={
            "data": f"{len(train)} open dialogues ({args.turns} agent turns each) built by benchmarks/judge_lofo.py from "
                    f"{mpath}: TTS families {', '.join(fams)}; human groups {', '.join(map(str, groups))}",
            "families": fams, "augmentations": aug_fams, "excluded_families": list(args.exclude_family),
            "human_groups": [str(g) for g in groups], "wild_channels": list(wild_ch),
            "sealed_never_used": {"families": list(sealed.families), "groups": list(sealed.groups)},
            "validity": validity},
            sources=srcs, recalibrate=recal)
        # a candidate, not a release: its version says so (the shipped head's name and version are set
        # only when a rule is met and it is copied into livejudge/judge/heads/)
        cand_version = f"{started[:10]}-candidate"
        fit = fit.__class__(fit.head, fit.config.with_(version=cand_version), fit.mean, fit.std)
        if args.blend_compare is None:
            save_head(args.ship, fit.head, fit.config)
        else:  # the refit is saved beside the blend, as its member
            member = Path(str(args.ship).rstrip("/") + "-refit")
            tr = dict(fit.config.training)
            # this run's fold figures are the blend's, not the member's own: the member says so
            save_head(member, fit.head, fit.config.with_(training={**tr, "validity": {
                "summary": "member of a blend (judge_lofo.py --blend-compare): its own leave-one-family-out "
                           "figures were not computed in this run; see the blend's config", "command": cmd}}))
            bhead, bcfg = blend_heads(
                [member, args.compare_head], [1 - args.blend_compare, args.blend_compare],
                name=cmp_cfg.name, version=f"{cand_version}-blend",
                training={"validity": validity, "data": tr["data"] + f"; blended with {cmp_cfg.name} {cmp_cfg.version}",
                          # the refit never used the sealed items; a sealed item the compare head was fitted on
                          # (fitted before the seal was drawn) is in the blend, so it is not listed as never used
                          "sealed_never_used": {
                              "families": [f for f in tr["sealed_never_used"]["families"] if f not in cmp_fams],
                              "groups": [g for g in tr["sealed_never_used"]["groups"] if g not in cmp_groups],
                              "note": f"sealed items {cmp_cfg.name} {cmp_cfg.version} was fitted on (before the seal "
                                      "was drawn) are in the blend through it and are left out of this list"},
                          "excluded_families": tr["excluded_families"]})
            save_head(args.ship, bhead, bcfg)
        print(f"\nshipped head → {args.ship}: {validity['summary']}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=float))
    return 0


if __name__ == "__main__":
    from livejudge.judge.training.protocol import ProtocolError

    try:
        sys.exit(main())
    except ProtocolError as exc:  # a protocol rule would break: one line naming it and the fix
        print(f"judge_lofo: {exc}", file=sys.stderr)
        sys.exit(2)
