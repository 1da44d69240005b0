"""A validity protocol that cannot leak (issue 19): a sealed test split set aside once, outer
leave-one-family-out folds over what is left, and every calibration step nested inside its
outer fold.

Rows are dialogues described by ``meta`` dicts with at least ``label`` ("human" | "machine"),
``family`` (the TTS/speech-LM system family of a machine agent; the corpus of a human agent) and
``group`` (the held-out unit of a human agent: a speaker or a source corpus; for a machine the
voice). Pure functions over indices; no audio, no model.

* ``seal``: choose, once, ``n_families`` machine families and ``n_groups`` human groups that no
  fold will see; ``SealedSplit.save``/``load_sealed`` keep the choice in a file so it is never
  re-drawn after results have been seen (``load_or_seal`` refuses a manifest whose families
  changed under a sealed file). ``extend_sealed`` keeps the seal for a corpus that has only
  grown (new families or groups gathered later): nothing sealed is opened or re-drawn, the new
  items are open (or some of the new families sealed, drawn before any result), and the
  extension is recorded in the file.
* ``outer_folds``: for each open machine family F and each open human group G, train on every
  open row that is neither F nor G, test on F's and G's rows.
* ``inner_folds``: the same construction inside an outer fold's training rows only: a
  calibration step fitted on the inner folds' held-out scores never sees the outer test rows
  (``check_nested`` asserts it; ``tests/test_protocol.py`` checks it over random corpora).

Leave-one-family-out and speaker-disjoint human groups follow the anti-spoofing practice of
testing on attacks unseen in training (ASVspoof 2019/2021 evaluation protocols); the sealed
split is the usual held-out test set touched only by the final model.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator, Mapping, Sequence

import numpy as np


RESERVED_SOURCES = ("styletts2/styletts2.github.io", "BytedanceSpeech/bytedancespeech.github.io",
                    "speechbot/speechbot.github.io", "neonbjb/tortoise-tts", "microsoft/VibeVoice",
                    "resemble-ai/Resemblyzer", "Azure-Samples/cognitive-services-speech-sdk",
                    "nu-dialogue/moshi-finetune", "MbBrainz/ttslab", "pyannote/pyannote-audio:tests", "hibari-tts")
"""Held by others for outside evaluation (issue 19): never fetched, fitted, tuned or measured on.
For pyannote-audio only its repository's TEST data is reserved (``…:tests``); the sample the
PyPI package ships as package data is not. A head whose config names one (``reserved_in``) is a
defect."""


def reserved_in(config_text: str) -> list[str]:
    """The reserved sources (``RESERVED_SOURCES``, or their repository/package names alone) named
    in a head's config text, case-insensitive; for a ``repo:sub`` entry, a line naming the repository
    and the sub-path word (e.g. pyannote-audio and "tests")."""
    found = []
    for r in RESERVED_SOURCES:
        repo, _, sub = r.partition(":")
        name = repo.split("/")[-1].lower()
        for line in config_text.lower().splitlines():
            if (repo.lower() in line or name in line) and (not sub or sub in line):
                found.append(r)
                break
    return found


class ProtocolError(ValueError):
    """A protocol rule would be broken (leak, re-seal, too few families); the message names it."""


@dataclass(frozen=True)
class SealedSplit:
    """Families and human groups set aside for the final evaluation only.

    Attributes:
        families: machine families no fold sees.
        groups: human groups no fold sees.
        seed: the draw's seed.
        corpus_key: ``corpus_key`` of the rows it was drawn from (families and groups, not clips),
            or of the corpus it was last extended to (``extend_sealed``).
        extensions: one dict per extension of the corpus after the seal (``extend_sealed``):
            ``from_key``, ``to_key``, ``reason``, ``added_families``, ``added_groups``,
            ``newly_sealed_families``; the originally sealed items never change.
    """

    families: tuple[str, ...]
    groups: tuple[str, ...]
    seed: int
    corpus_key: str
    extensions: tuple[dict, ...] = ()

    def is_sealed(self, m: Mapping) -> bool:
        """Whether a row belongs to the sealed split: a machine row of a sealed family, or any row
        of a sealed human group (a copy-synthesis of a sealed speaker's voice carries that group)."""
        if m["label"] == "machine" and str(m["family"]) in self.families:
            return True
        return str(m.get("group")) in self.groups

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(asdict(self), indent=1) + "\n")
        return p


def corpus_key(meta: Sequence[Mapping]) -> str:
    """A short hash of the corpus's machine families and human groups (what a seal depends on)."""
    fams = sorted({str(m["family"]) for m in meta if m["label"] == "machine"})
    groups = sorted({str(m["group"]) for m in meta if m["label"] == "human"})
    return hashlib.sha256(json.dumps([fams, groups]).encode()).hexdigest()[:16]


def seal(meta: Sequence[Mapping], n_families: int, n_groups: int, seed: int = 0,
         never: Sequence[str] = ()) -> SealedSplit:
    """Draw the sealed split: ``n_families`` machine families and ``n_groups`` human groups.

    Args:
        meta: one dict per dialogue (module docstring).
        n_families, n_groups: how many to seal (≥ 1 each).
        seed: the draw's seed.
        never: families that may not be sealed (e.g. augmentation families that are training
            material, not systems).
    Raises:
        ProtocolError: fewer than ``n_families + 2`` families or ``n_groups + 2`` groups (at least
            two must stay open so that leave-one-out folds exist).
    """
    fams = sorted({str(m["family"]) for m in meta if m["label"] == "machine"} - set(never))
    groups = sorted({str(m["group"]) for m in meta if m["label"] == "human"})
    if n_families < 1 or n_groups < 1 or len(fams) < n_families + 2 or len(groups) < n_groups + 2:
        raise ProtocolError(f"cannot seal {n_families} of {len(fams)} families and {n_groups} of {len(groups)} "
                            "human groups: at least two of each must stay open for the folds; gather more")
    rng = np.random.default_rng(seed)
    return SealedSplit(tuple(sorted(rng.choice(fams, n_families, replace=False).tolist())),
                       tuple(sorted(rng.choice(groups, n_groups, replace=False).tolist())), int(seed),
                       corpus_key(meta))


def load_sealed(path: str | Path) -> SealedSplit:
    d = json.loads(Path(path).read_text())
    return SealedSplit(tuple(d["families"]), tuple(d["groups"]), int(d["seed"]), str(d["corpus_key"]),
                       tuple(d.get("extensions", ())))


def extend_sealed(path: str | Path, meta: Sequence[Mapping], *, known_families: Sequence[str],
                  known_groups: Sequence[str], reason: str, seal_new_families: int = 0, seed: int = 0,
                  never: Sequence[str] = ()) -> SealedSplit:
    """Keep the sealed split at ``path`` for a corpus that has GROWN since it was sealed (new
    machine families or human groups gathered later), instead of re-drawing it.

    Nothing sealed is re-drawn or opened: every sealed family and group must still be in ``meta``
    and stays sealed. The families and groups that are new (in ``meta`` but not in
    ``known_families``/``known_groups``, the corpus the seal was last used on) join the open
    rows, except ``seal_new_families`` of the new families, drawn at random with ``seed`` before
    any result on them exists, which are sealed too. The extension is recorded in the file
    (``SealedSplit.extensions``) with ``reason``, and the file's key moves to the grown corpus.

    Args:
        path: the stored seal (``SealedSplit.save``).
        meta: one dict per dialogue of the grown corpus (module docstring).
        known_families: the machine families (``meta["family"]`` of machine rows) of the corpus
            the seal was drawn on or last extended to, ``never`` families included; sealed ones
            may be left out. known_groups: that corpus's human groups (``meta["group"]`` of
            human rows, not their families). Both are checked against the stored key, so they
            must come from that corpus's manifests (``judge_lofo.py --sealed-corpus``).
        reason: what was gathered (recorded in the file).
        seal_new_families: how many of the NEW families to seal (≥ 0; at least two new ones
            stay open). seed: that draw's seed. never: families never sealed (augmentations).
    Raises:
        ProtocolError: no seal file at ``path``; a sealed family or group is missing from
            ``meta`` (the fix is to restore its clips, not to re-seal); the known lists are not
            the stored corpus; a family or group of the stored corpus vanished (a shrunk or
            changed corpus is not an extension); ``reason`` is empty; ``seal_new_families`` is
            negative or would leave fewer than two of the new families open.
    """
    p = Path(path)
    if not p.exists():
        raise ProtocolError(f"no sealed split at {p}: there is nothing to extend (a first run draws one with "
                            "load_or_seal)")
    s = load_sealed(p)
    key = corpus_key(meta)
    if s.corpus_key == key:
        return s
    if not (reason or "").strip():
        raise ProtocolError("extending a sealed split needs a reason (say what was gathered)")
    if seal_new_families < 0:
        raise ProtocolError(f"seal_new_families must be ≥ 0, not {seal_new_families}")
    fams = {str(m["family"]) for m in meta if m["label"] == "machine"}
    groups = {str(m["group"]) for m in meta if m["label"] == "human"}
    missing = sorted((set(s.families) - fams) | (set(s.groups) - groups))
    if missing:
        raise ProtocolError(f"sealed items missing from this corpus: {missing}; restore their clips "
                            "(a seal is never re-drawn)")
    old_f, old_g = set(known_families) | set(s.families), set(known_groups) | set(s.groups)
    if corpus_key([{"label": "machine", "family": f, "group": ""} for f in old_f]
                  + [{"label": "human", "family": "", "group": g} for g in old_g]) != s.corpus_key:
        raise ProtocolError(f"{p}: the known families and groups given are not the corpus it was "
                            f"{'last extended to' if s.extensions else 'sealed on'} (key {s.corpus_key}); pass that "
                            "corpus's machine families and human groups (meta 'group'), built from its manifests")
    gone = sorted((old_f - fams) | (old_g - groups))
    if gone:
        raise ProtocolError(f"families or groups of the sealed corpus are gone: {gone}; "
                            "an extension may only add")
    added_f = sorted(fams - old_f - set(never))
    added_g = sorted(groups - old_g)
    if seal_new_families and len(added_f) < seal_new_families + 2:
        raise ProtocolError(f"cannot seal {seal_new_families} of {len(added_f)} new families: at least two of the "
                            "NEW families must stay open (so each new family has a fold)")
    rng = np.random.default_rng(seed)
    new_sealed = sorted(rng.choice(added_f, seal_new_families, replace=False).tolist()) if seal_new_families else []
    ext = {"from_key": s.corpus_key, "to_key": key, "reason": reason.strip(), "added_families": added_f,
           "added_groups": added_g, "newly_sealed_families": new_sealed, "seed": int(seed)}
    out = SealedSplit(tuple(sorted(set(s.families) | set(new_sealed))), s.groups, s.seed, key,
                      s.extensions + (ext,))
    out.save(p)
    return out


def load_or_seal(path: str | Path, meta: Sequence[Mapping], n_families: int, n_groups: int, seed: int = 0,
                 never: Sequence[str] = ()) -> SealedSplit:
    """The sealed split stored at ``path``, or a new one drawn and stored there.

    Raises:
        ProtocolError: the stored split was drawn from a different corpus (families or groups
            changed): sealing again after results were seen would leak, so the fix is a new
            path and a note of why.
    """
    p = Path(path)
    if p.exists():
        s = load_sealed(p)
        if s.corpus_key != corpus_key(meta):
            raise ProtocolError(f"{p} was sealed on another corpus (key {s.corpus_key}, now {corpus_key(meta)}); "
                                "if the corpus only GREW, keep the seal with extend_sealed (judge_lofo.py "
                                "--extend-sealed REASON --sealed-corpus OLD_MANIFESTS...); never re-seal over "
                                "results you have seen")
        return s
    s = seal(meta, n_families, n_groups, seed, never)
    s.save(p)
    return s


@dataclass(frozen=True)
class Fold:
    """One leave-one-family-and-group-out fold: ``train`` and ``test`` are row indices;
    ``groups`` the held-out human groups (one, or a chunk of them); ``group`` their label."""

    family: str
    group: str
    train: np.ndarray
    test: np.ndarray
    groups: tuple[str, ...] = ()


def group_sets(groups: Sequence[str], chunks: int | None) -> list[tuple[str, tuple[str, ...]]]:
    """Held-out human units: each group alone (``chunks`` None), or the sorted groups dealt
    round-robin into ``chunks`` speaker-disjoint chunks (fewer folds: training cost)."""
    groups = sorted(groups)
    if not chunks or chunks >= len(groups):
        return [(g, (g,)) for g in groups]
    sets = [tuple(groups[k::chunks]) for k in range(chunks)]
    return [("+".join(s), s) for s in sets if s]


def _folds(meta: Sequence[Mapping], rows: np.ndarray, families: Sequence[str],
           gsets: Sequence[tuple[str, tuple[str, ...]]]) -> Iterator[Fold]:
    lab = np.array([m["label"] for m in meta])
    fam = np.array([str(m["family"]) for m in meta])
    grp = np.array([str(m["group"]) for m in meta])
    in_rows = np.zeros(len(meta), dtype=bool)
    in_rows[rows] = True
    for F in families:
        for name, members in gsets:
            held = np.isin(grp, list(members))
            test = in_rows & (((lab == "machine") & (fam == F)) | ((lab == "human") & held))
            # a machine row whose group is held out (e.g. copy-synthesis of that speaker) stays out of training too
            train = in_rows & (fam != F) & ~held
            yield Fold(F, name, np.where(train)[0], np.where(test)[0], tuple(members))


def open_rows(meta: Sequence[Mapping], sealed: SealedSplit) -> np.ndarray:
    """Indices of the rows any fold may use (not sealed)."""
    return np.array([i for i, m in enumerate(meta) if not sealed.is_sealed(m)], dtype=int)


def outer_folds(meta: Sequence[Mapping], sealed: SealedSplit, never_held_out: Sequence[str] = (),
                group_chunks: int | None = None) -> Iterator[Fold]:
    """Leave-one-family-out × leave-one-human-group-out folds over the open rows.

    ``never_held_out``: machine families used for training but not held out as families (e.g.
    copy-synthesis augmentations of human clips). ``group_chunks``: hold out chunks of human
    groups instead of single groups (``group_sets``)."""
    rows = open_rows(meta, sealed)
    fams = sorted({str(meta[i]["family"]) for i in rows if meta[i]["label"] == "machine"} - set(never_held_out))
    groups = sorted({str(meta[i]["group"]) for i in rows if meta[i]["label"] == "human"})
    yield from _folds(meta, rows, fams, group_sets(groups, group_chunks))


def inner_folds(meta: Sequence[Mapping], outer: Fold, never_held_out: Sequence[str] = (),
                group_chunks: int | None = None) -> Iterator[Fold]:
    """The same construction inside ``outer.train`` only (for calibration nested in the fold)."""
    rows = outer.train
    fams = sorted({str(meta[i]["family"]) for i in rows if meta[i]["label"] == "machine"} - set(never_held_out))
    groups = sorted({str(meta[i]["group"]) for i in rows if meta[i]["label"] == "human"})
    yield from _folds(meta, rows, fams, group_sets(groups, group_chunks))


def check_nested(meta: Sequence[Mapping], sealed: SealedSplit, outer: Fold, calibration_rows: np.ndarray) -> None:
    """Raise ProtocolError when a fold leaks: its training or calibration rows include one of its
    test rows, a row of its held-out family or group, or a sealed row."""
    test = set(outer.test.tolist())
    for name, rows in (("training", outer.train), ("calibration", calibration_rows)):
        for i in np.asarray(rows).tolist():
            m = meta[i]
            if i in test:
                raise ProtocolError(f"fold {outer.family}/{outer.group}: {name} row {i} is a test row")
            if sealed.is_sealed(m):
                raise ProtocolError(f"fold {outer.family}/{outer.group}: {name} row {i} is sealed")
            if str(m["family"]) == outer.family or str(m["group"]) in (outer.groups or (outer.group,)):
                raise ProtocolError(f"fold {outer.family}/{outer.group}: {name} row {i} is of the held-out "
                                    "family or group")


def final_log_entry(figures: Mapping, *, head_dir: str | Path, sealed: SealedSplit, command: str) -> dict:
    """One line of the ``--final`` log: what was evaluated (head files' hash), on which seal, by
    which command, with which figures. Every final run is logged, so a sealed figure can never be
    chosen from several tries without the log showing it."""
    import datetime as _dt

    h = hashlib.sha256()
    for f in sorted(Path(head_dir).glob("*")):
        if f.is_file():
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return {"utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "head": str(head_dir), "head_sha256": h.hexdigest()[:16], "sealed": asdict(sealed),
            "command": command, "figures": dict(figures)}


def append_final_log(path: str | Path, entry: Mapping) -> int:
    """Append ``entry`` to the JSON-lines log at ``path``; returns how many final runs it now holds."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("a") as f:
        f.write(json.dumps(entry, default=float) + "\n")
    return sum(1 for line in p.read_text().splitlines() if line.strip())
