"""Judge head checkpoints: a directory with ``weights.safetensors`` and ``config.json``.

``weights.safetensors`` holds the trainable tensors of ``JudgeHead`` (float32):

* ``readout.fusion_logits`` (2,) — fused readout only
* ``odl.proj.weight`` (K, d), ``odl.proj.bias`` (K,), ``odl.log_scale`` (K,) (log s_k)
* ``classifier.weight`` (2, K), ``classifier.bias`` (2,) — rows in ("machine", "human") order

``config.json`` (``format_version`` 1) describes everything else::

    {
      "format_version": 1,
      "name": "acoustic-prior", "version": "0.2.0",
      "provenance": "prior" | "trained",
      "backbone": {"name": "acoustic-v1", "embedding_dim": 36, "readouts": ["features"]},
      "readout": "features",                      # fused | mean | last | features
      "dimensions": ["memory_consistency", ...],  # ids in output order
      "r": 5, "dropout": 0.3,
      "feature_names": [...] | null,              # one per embedding component (acoustic)
      "normalisation": {
        "inputs": {"features": {"mean": [...], "std": [...]}},   # per readout source, optional
        "z_mean": [...], "z_std": [...]           # training-set statistics of z (App. E.7)
      },
      "evidence_min": {"rhythm": 3.0, ...},       # gating thresholds, optional
      "training": {...},                          # what was fitted on what, n per split, hparams, date
      "sources": [...], "notes": "..."
    }

``provenance`` is "prior" for a head whose weights were set by hand from published
figures/heuristics (labelled as such everywhere it is shown) and "trained" for a head fitted
with ``livejudge train``. Loading validates every field and every tensor shape and raises
``HeadError`` with a one-line message naming the problem and the fix.

Two loaders share those checks: ``read_checkpoint`` reads the arrays with numpy only (what the
judge runs, through ``numpy_head.NumpyHead.from_checkpoint``: the core install has no torch);
``load_head`` builds a torch ``JudgeHead`` from them (training and evaluation, livejudge[train]).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from livejudge.judge.model.dimensions import BY_ID, DIMENSION_IDS
from livejudge.judge.model.layout import READOUT_SOURCES, READOUTS, ODLError, expected_tensor_shapes

if TYPE_CHECKING:  # torch is imported only where a torch JudgeHead is built or saved (livejudge[train])
    from livejudge.judge.model.odl import JudgeHead

FORMAT_VERSION = 1
WEIGHTS_FILE = "weights.safetensors"
CONFIG_FILE = "config.json"
PROVENANCES = ("prior", "trained")


class HeadError(ValueError):
    """A head checkpoint that cannot be used; the message is one line naming problem and fix."""


def judge_kind(backbone_name: str) -> str:
    """The ``--judge`` value that loads a backbone id ("acoustic-v1" → "acoustic",
    "qwen2.5-omni-7b" → "qwen-omni"); other ids are returned unchanged."""
    if backbone_name.startswith("acoustic"):
        return "acoustic"
    if backbone_name.startswith("qwen"):
        return "qwen-omni"
    if backbone_name.startswith("whisper"):
        return "whisper"
    return backbone_name


def mismatch_message(head_backbone: str, judge_backbone: str) -> str:
    """The one-line error for a head built for another backbone."""
    return (f"head was trained for backbone {head_backbone}, but the judge uses {judge_backbone}: "
            f"pass --head for {judge_backbone} or --judge {judge_kind(head_backbone)}")


@dataclass(frozen=True)
class BackboneInfo:
    """The backbone a head was built for: its id, vector size and readout names."""

    name: str
    embedding_dim: int
    readouts: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"name": self.name, "embedding_dim": self.embedding_dim, "readouts": list(self.readouts)}

    @classmethod
    def of(cls, backbone: Any) -> "BackboneInfo":
        """From any object with ``name``, ``embedding_dim``, ``readouts`` (a Backbone)."""
        return cls(str(backbone.name), int(backbone.embedding_dim), tuple(backbone.readouts))


@dataclass(frozen=True)
class HeadConfig:
    """Everything in config.json except the normalisation statistics (those live in the head).

    Attributes:
        name, version: the head's id, e.g. "acoustic-prior", "0.1.0".
        provenance: "prior" (hand-set from published figures/heuristics) or "trained".
        backbone: the backbone the head reads.
        readout: one of ``odl.READOUTS``.
        dimensions: dimension ids in output order.
        r: rating levels (5). dropout: ODL dropout used in training.
        feature_names: names of the embedding components (acoustic backbone), or None.
        evidence_min: dimension id → minimum evidence (in the backbone's unit) below which the
            judge gates the dimension (score 3, contribution 0).
        training: what was fitted on what (n per split, hyperparameters, date); {} for priors.
        sources, notes: where the numbers come from; free text.
    """

    name: str
    version: str
    provenance: str
    backbone: BackboneInfo
    readout: str
    dimensions: tuple[str, ...] = DIMENSION_IDS
    r: int = 5
    dropout: float = 0.3
    feature_names: tuple[str, ...] | None = None
    evidence_min: Mapping[str, float] = field(default_factory=dict)
    training: Mapping[str, Any] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    notes: str = ""
    format_version: int = FORMAT_VERSION

    def with_(self, **changes: Any) -> "HeadConfig":
        """A copy with some fields changed."""
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return {
            "format_version": self.format_version,
            "name": self.name,
            "version": self.version,
            "provenance": self.provenance,
            "backbone": self.backbone.to_dict(),
            "readout": self.readout,
            "dimensions": list(self.dimensions),
            "r": self.r,
            "dropout": self.dropout,
            "feature_names": list(self.feature_names) if self.feature_names is not None else None,
            "evidence_min": {k: float(v) for k, v in self.evidence_min.items()},
            "training": dict(self.training),
            "sources": list(self.sources),
            "notes": self.notes,
        }


def _fail(msg: str) -> None:
    raise HeadError(msg)


def validate_config(cfg: HeadConfig, where: str = "head") -> None:
    """Check a HeadConfig's internal consistency.

    Raises:
        HeadError: the first problem found, in one line.
    """
    if cfg.format_version != FORMAT_VERSION:
        _fail(f"{where}: format_version {cfg.format_version} is not supported (this livejudge reads "
              f"{FORMAT_VERSION}); upgrade livejudge or re-save the head")
    if not cfg.name or not isinstance(cfg.name, str):
        _fail(f"{where}: 'name' must be a non-empty string")
    if cfg.provenance not in PROVENANCES:
        _fail(f"{where}: provenance must be one of {', '.join(PROVENANCES)}, got {cfg.provenance!r}")
    bb = cfg.backbone
    if not bb.name or int(bb.embedding_dim) <= 0:
        _fail(f"{where}: backbone needs a name and a positive embedding_dim, got {bb.to_dict()}")
    if cfg.readout not in READOUTS:
        _fail(f"{where}: unknown readout {cfg.readout!r}; valid: {', '.join(READOUTS)}")
    missing = [s for s in READOUT_SOURCES[cfg.readout] if s not in bb.readouts]
    if missing:
        _fail(f"{where}: readout {cfg.readout!r} needs backbone vectors {missing}, but backbone "
              f"{bb.name} provides {list(bb.readouts)}")
    if not cfg.dimensions:
        _fail(f"{where}: 'dimensions' is empty")
    for d in cfg.dimensions:
        if d not in BY_ID:
            _fail(f"{where}: unknown dimension {d!r}; valid ids: {', '.join(DIMENSION_IDS)}")
    if len(set(cfg.dimensions)) != len(cfg.dimensions):
        _fail(f"{where}: 'dimensions' lists an id twice")
    if not isinstance(cfg.r, int) or cfg.r < 3:
        _fail(f"{where}: r must be an integer ≥ 3, got {cfg.r!r}")
    if not 0.0 <= float(cfg.dropout) < 1.0:
        _fail(f"{where}: dropout must be in [0, 1), got {cfg.dropout!r}")
    if cfg.feature_names is not None and len(cfg.feature_names) != bb.embedding_dim:
        _fail(f"{where}: {len(cfg.feature_names)} feature_names for embedding_dim {bb.embedding_dim}")
    for d, v in cfg.evidence_min.items():
        if d not in cfg.dimensions:
            _fail(f"{where}: evidence_min names {d!r}, which is not one of the head's dimensions")
        if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            _fail(f"{where}: evidence_min[{d!r}] must be a finite number ≥ 0, got {v!r}")


def build_head(cfg: HeadConfig) -> JudgeHead:
    """A freshly initialised JudgeHead with the shapes ``cfg`` describes (needs torch)."""
    from livejudge.judge.model.odl import JudgeHead

    return JudgeHead(cfg.backbone.embedding_dim, cfg.readout, cfg.dimensions, cfg.r, dropout=cfg.dropout)


def _check_head_matches(head: JudgeHead, cfg: HeadConfig) -> None:
    if head.embedding_dim != cfg.backbone.embedding_dim:
        _fail(f"head has embedding size {head.embedding_dim} but config says {cfg.backbone.embedding_dim}")
    if head.readout_mode != cfg.readout:
        _fail(f"head uses readout {head.readout_mode!r} but config says {cfg.readout!r}")
    if tuple(head.dimensions) != tuple(cfg.dimensions):
        _fail("head dimensions differ from config dimensions (ids or order)")
    if head.r != cfg.r:
        _fail(f"head has r={head.r} but config says r={cfg.r}")


def _normalisation_dict(head: JudgeHead) -> dict:
    import torch

    inputs = {}
    for src in head.readout.sources:
        m, sd = head.readout.normalisation(src)
        if not (torch.all(m == 0) and torch.all(sd == 1)):
            inputs[src] = {"mean": m.tolist(), "std": sd.tolist()}
    return {"inputs": inputs, "z_mean": head.z_mean.tolist(), "z_std": head.z_std.tolist()}


def save_head(path: str | Path, head: JudgeHead, config: HeadConfig) -> Path:
    """Write ``head`` + ``config`` as a checkpoint directory (created if needed).

    The normalisation statistics are read from ``head`` (its readout's input statistics and
    z_mean/z_std) and written into config.json.

    Returns:
        the directory path.
    Raises:
        HeadError: config invalid or inconsistent with the head; non-finite weights.
    """
    import torch
    from safetensors.torch import save_file

    validate_config(config)
    _check_head_matches(head, config)
    tensors = {k: v.detach().to(torch.float32).contiguous().cpu() for k, v in head.state_dict().items()}
    for k, v in tensors.items():
        if not torch.isfinite(v).all():
            _fail(f"refusing to save: weight {k} has non-finite values")
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    # One metadata key: safetensors serialises the metadata dict in hash-map order, so with two
    # keys the header (and the file's bytes) could differ between runs; one key is deterministic.
    save_file(dict(sorted(tensors.items())), str(out / WEIGHTS_FILE),
              metadata={"format": f"livejudge-head/{FORMAT_VERSION}"})
    doc = config.to_dict()
    doc["normalisation"] = _normalisation_dict(head)
    # key order as documented: normalisation before evidence_min
    ordered = {k: doc[k] for k in ("format_version", "name", "version", "provenance", "backbone", "readout",
                                   "dimensions", "r", "dropout", "feature_names", "normalisation",
                                   "evidence_min", "training", "sources", "notes")}
    (out / CONFIG_FILE).write_text(json.dumps(ordered, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def _req(doc: dict, key: str, where: str) -> Any:
    if key not in doc:
        _fail(f"{where}: config.json lacks {key!r}; re-save the head with livejudge's save_head")
    return doc[key]


def config_from_dict(doc: dict, where: str = "head") -> HeadConfig:
    """Parse a config.json document (without validating consistency; see ``validate_config``).

    Raises:
        HeadError: a required key is missing or has the wrong type.
    """
    if not isinstance(doc, dict):
        _fail(f"{where}: config.json must hold a JSON object")
    bb = _req(doc, "backbone", where)
    if not isinstance(bb, dict) or not all(k in bb for k in ("name", "embedding_dim", "readouts")):
        _fail(f"{where}: 'backbone' must be an object with name, embedding_dim, readouts")
    try:
        info = BackboneInfo(str(bb["name"]), int(bb["embedding_dim"]), tuple(str(x) for x in bb["readouts"]))
        fn = doc.get("feature_names")
        return HeadConfig(
            name=str(_req(doc, "name", where)),
            version=str(_req(doc, "version", where)),
            provenance=str(_req(doc, "provenance", where)),
            backbone=info,
            readout=str(_req(doc, "readout", where)),
            dimensions=tuple(str(x) for x in _req(doc, "dimensions", where)),
            r=_req(doc, "r", where),
            dropout=float(doc.get("dropout", 0.3)),
            feature_names=tuple(str(x) for x in fn) if fn is not None else None,
            evidence_min=dict(doc.get("evidence_min") or {}),
            training=dict(doc.get("training") or {}),
            sources=tuple(str(x) for x in (doc.get("sources") or ())),
            notes=str(doc.get("notes") or ""),
            format_version=_req(doc, "format_version", where),
        )
    except (TypeError, ValueError) as exc:
        if isinstance(exc, HeadError):
            raise
        _fail(f"{where}: config.json has a field of the wrong type ({exc})")
    raise AssertionError("unreachable")


def _parse_normalisation(norm: Any, cfg: HeadConfig, where: str
                         ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray, np.ndarray]:
    """config.json's ``normalisation`` → ({source: (mean, std)}, z_mean, z_std), float32 arrays.

    A missing block means 0/1 everywhere. std values ≤ 1e-8 are replaced by 1 (as the torch
    buffers). Raises HeadError on a source the readout does not read, a wrong length or a
    non-finite value."""
    k, d = len(cfg.dimensions), cfg.backbone.embedding_dim
    inputs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    zm, zs = np.zeros(k, np.float32), np.ones(k, np.float32)
    if norm is None:
        return inputs, zm, zs
    if not isinstance(norm, dict):
        _fail(f"{where}: 'normalisation' must be an object")
    sources = READOUT_SOURCES[cfg.readout]
    try:
        for src, st in (norm.get("inputs") or {}).items():
            if src not in sources:
                _fail(f"{where}: normalisation for {src!r}, which readout {cfg.readout!r} does not read")
            if len(st["mean"]) != d or len(st["std"]) != d:
                _fail(f"{where}: normalisation of {src!r} has {len(st['mean'])}/{len(st['std'])} values, "
                      f"embedding_dim is {d}")
            m, sd = np.asarray(st["mean"], np.float32), np.asarray(st["std"], np.float32)
            inputs[src] = (m, np.where(sd > 1e-8, sd, np.float32(1.0)).astype(np.float32))
        zm = np.asarray(norm.get("z_mean", [0.0] * k), np.float32).reshape(-1)
        zs = np.asarray(norm.get("z_std", [1.0] * k), np.float32).reshape(-1)
        if zm.size != k or zs.size != k:
            _fail(f"{where}: z_mean/z_std have {zm.size}/{zs.size} values for {k} dimensions")
        zs = np.where(zs > 1e-8, zs, np.float32(1.0)).astype(np.float32)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, HeadError):
            raise
        _fail(f"{where}: bad normalisation statistics ({exc})")
    for name, t in [*((f"in_mean_{s}", m) for s, (m, _) in inputs.items()),
                    *((f"in_std_{s}", sd) for s, (_, sd) in inputs.items()), ("z_mean", zm), ("z_std", zs)]:
        if not np.isfinite(t).all():
            _fail(f"{where}: normalisation {name} has non-finite values")
    return inputs, zm, zs



SHIPPED_HEADS_DIR = Path(__file__).resolve().parents[1] / "heads"
"""Where the heads livejudge ships live (``livejudge/judge/heads/<name>``)."""


def shipped_head_path(path: str | Path) -> Path:
    """``path`` itself, or, when it is a bare name of a shipped head (``whisper-fitted``,
    ``acoustic-fitted``, ``acoustic-prior``) and no head of that name is in the current directory,
    that head's directory inside the installed package: ``--head whisper-fitted`` works from any
    directory (a trial's ``--head livejudge/judge/heads/whisper-fitted`` worked only inside a
    clone), and a folder of that name that holds no head (a batch's ``--out-dir``) does not hide
    it. A head of that name here is used, with a note on stderr."""
    p = Path(path)
    shipped = SHIPPED_HEADS_DIR / p.name
    if len(p.parts) != 1 or not (shipped / CONFIG_FILE).is_file():
        return p
    if not (p / CONFIG_FILE).is_file():  # nothing of that name here, or a folder that holds no head
        return shipped
    # a head of that name here (a trial trained --out whisper-fitted, then eval --head whisper-fitted
    # silently read it): the local one, as a path is a path, and said so
    import sys

    print(f"livejudge: note: --head {p} is the head in ./{p} here, not the shipped head of that name "
          f"({shipped}); pass that path for the shipped one", file=sys.stderr)
    return p.absolute()  # resolved once: a second lookup of the same name says nothing again


def read_checkpoint(path: str | Path, expected_backbone: str | None = None, expected_dim: int | None = None
                    ) -> tuple[HeadConfig, dict[str, np.ndarray], dict[str, tuple[np.ndarray, np.ndarray]],
                               np.ndarray, np.ndarray]:
    """Read and validate a head checkpoint directory with numpy only (no torch).

    Args: as ``load_head``.
    Returns:
        (config, tensors by ``JudgeHead.state_dict()`` name as float32 arrays, readout input
        normalisation {source: (mean, std)}, z_mean, z_std).
    Raises:
        HeadError: missing files, unreadable JSON, invalid fields, backbone or size mismatch,
            missing/unexpected/mis-shaped tensors, non-finite values — one line each.
    """
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    p = shipped_head_path(path)
    where = f"head {p}"
    if not p.exists():
        names = ", ".join(sorted(d.name for d in SHIPPED_HEADS_DIR.iterdir() if (d / CONFIG_FILE).is_file()))
        _fail(f"head directory not found: {p} (pass --head DIR, a directory with {WEIGHTS_FILE} and {CONFIG_FILE}, "
              f"or the name of a head livejudge ships: {names})")
    if not p.is_dir():
        _fail(f"{p} is a file; --head takes the head directory holding {WEIGHTS_FILE} and {CONFIG_FILE}")
    for fname in (CONFIG_FILE, WEIGHTS_FILE):
        if not (p / fname).is_file():
            _fail(f"{where}: missing {fname} (a head is a directory with {WEIGHTS_FILE} and {CONFIG_FILE})")
    try:
        doc = json.loads((p / CONFIG_FILE).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        _fail(f"{where}: {CONFIG_FILE} is not valid JSON (line {exc.lineno}: {exc.msg})")
    cfg = config_from_dict(doc, where)
    validate_config(cfg, where)
    if expected_backbone is not None and cfg.backbone.name != expected_backbone:
        _fail(mismatch_message(cfg.backbone.name, expected_backbone))
    if expected_dim is not None and cfg.backbone.embedding_dim != int(expected_dim):
        _fail(f"{where}: head expects embedding size {cfg.backbone.embedding_dim} but the backbone gives "
              f"{expected_dim}: use a head trained on this backbone's embeddings")
    try:
        tensors = load_file(str(p / WEIGHTS_FILE))
    except (SafetensorError, OSError, ValueError) as exc:
        _fail(f"{where}: cannot read {WEIGHTS_FILE} ({str(exc).splitlines()[0]}); re-save the head")
    want = expected_tensor_shapes(cfg.readout, cfg.backbone.embedding_dim, len(cfg.dimensions))
    missing = sorted(set(want) - set(tensors))
    extra = sorted(set(tensors) - set(want))
    if missing:
        _fail(f"{where}: {WEIGHTS_FILE} lacks tensors {missing} needed by readout {cfg.readout!r}")
    if extra:
        _fail(f"{where}: {WEIGHTS_FILE} has unexpected tensors {extra} (readout or format mismatch)")
    for k in want:
        if tuple(tensors[k].shape) != want[k]:
            _fail(f"{where}: tensor {k} has shape {tuple(tensors[k].shape)}, config implies {want[k]} "
                  f"(embedding_dim {cfg.backbone.embedding_dim}, {len(cfg.dimensions)} dimensions)")
        if not np.isfinite(tensors[k]).all():
            _fail(f"{where}: tensor {k} has non-finite values")
    arrays = {k: np.asarray(v, np.float32) for k, v in tensors.items()}
    norm, z_mean, z_std = _parse_normalisation(doc.get("normalisation"), cfg, where)
    return cfg, arrays, norm, z_mean, z_std


def load_head(path: str | Path, expected_backbone: str | None = None,
              expected_dim: int | None = None) -> tuple[JudgeHead, HeadConfig]:
    """Load and validate a head checkpoint directory as a torch ``JudgeHead`` (needs torch:
    training and evaluation; the live judge runs ``numpy_head.NumpyHead.from_checkpoint``).

    Args:
        path: directory holding weights.safetensors and config.json.
        expected_backbone: the judge's backbone id; a different id in the head is an error.
        expected_dim: the judge's backbone embedding size; a different size is an error.
    Returns:
        (head in eval mode on the CPU, its HeadConfig).
    Raises:
        HeadError: missing files, unreadable JSON, invalid fields, backbone or size mismatch,
            missing/unexpected/mis-shaped tensors, non-finite values — one line each.
    """
    import torch

    cfg, tensors, norm, z_mean, z_std = read_checkpoint(path, expected_backbone, expected_dim)
    head = build_head(cfg)
    head.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in tensors.items()})
    try:
        for src, (m, sd) in norm.items():
            head.readout.set_normalisation(src, m, sd)
        head.set_z_normalisation(z_mean, z_std)
    except ODLError as exc:
        _fail(f"head {Path(path)}: bad normalisation statistics ({exc})")
    head.eval()
    return head, cfg


def head_label(path: str | Path) -> str:
    """"name version" of the head checkpoint in directory ``path`` (e.g. for ``--help``), read from
    its config.json alone: no weights, no validation, cheap at parser-build time. When the config
    is missing or lacks ``name``/``version``: the directory's name and "(version unknown: ...)"."""
    p = Path(path)
    try:
        doc = json.loads((p / CONFIG_FILE).read_text(encoding="utf-8"))
        return f"{doc['name']} {doc['version']}"
    except (OSError, ValueError, KeyError, TypeError):
        return f"{p.name} (version unknown: no readable {CONFIG_FILE})"


def head_summary(cfg: HeadConfig) -> str:
    """One line for logs and the meter, e.g. 'acoustic-prior 0.2.0 (prior, acoustic-v1, readout features)'."""
    return f"{cfg.name} {cfg.version} ({cfg.provenance}, {cfg.backbone.name}, readout {cfg.readout})"


def validity_text(validity: Any) -> str | None:
    """The validity statement of a head's ``training["validity"]`` mapping (written by
    benchmarks/judge_lofo.py and benchmarks/judge_wild.py), without the "validity: " prefix; None
    when it has no ``summary``. Pure; ``validity_line`` and scripts/doc_figures.py both call it, so
    the meter, the result and the docs say the same words.

    ``validity["caveat"]``, when present, comes first (what the figures do not cover, e.g. the wild
    measurement of ``benchmarks/judge_wild.py --write-caveat``): a reader who stops after the first
    line of the meter's wrapped text has read where the head is not valid, not only its
    sealed-split accuracy. The weakest family and its worst fold are read from the stored
    leave-one-family-out table (``validity["lofo"]``: family → ``auc``, ``fold_auc_min``) when the
    summary does not name them already, so a pooled floor never hides a fold where the head is no
    better than chance. ``validity["languages"]`` (ISO 639-1 codes: the languages its rows were
    filtered to) follows the caveat as "fitted on English speech only": a caller in another
    language meets a head no figure covers."""
    v = validity
    if not (isinstance(v, Mapping) and v.get("summary")):
        return None
    summary = str(v["summary"])
    lofo = v.get("lofo")
    if "weakest" not in summary and isinstance(lofo, Mapping) and lofo:
        try:
            fam, row = min(lofo.items(), key=lambda kv: float(kv[1]["auc"]))
            weak = f"weakest: {fam}"
            if "fold_auc_min" in row:
                weak += f"; AUC {float(row['fold_auc_min']):.2f} on its worst held-out human group"
        except (KeyError, TypeError, ValueError):
            weak = ""
        key = "leave-one-family-out AUC"
        if weak and key in summary:
            head_, _, tail = summary.partition(key)
            num, sep, rest = tail.partition(",")
            summary = f"{head_}{key}{num} ({weak}){sep}{rest}"
    langs = v.get("languages")
    if isinstance(langs, (list, tuple)) and langs:  # its figures cover these languages and no other
        names = [LANGUAGE_NAMES.get(str(x), str(x)) for x in langs]
        summary = f"fitted on {' and '.join(names)} speech only. {summary[:1].upper()}{summary[1:]}"
    if v.get("caveat"):  # what the figures do not cover comes first: it is what users meet
        summary = f"{v['caveat']}. {summary[:1].upper()}{summary[1:]}"
    return summary


LANGUAGE_NAMES = {"en": "English"}
"""ISO 639-1 codes a validity mapping's ``languages`` may hold (``benchmarks/judge_lofo.py --lang``),
as the validity line names them; another code is shown as it is."""


def validity_line(cfg: HeadConfig) -> str:
    """One line saying what the head's P(human) has been validated against: "validity: " and
    ``validity_text(cfg.training["validity"])``, e.g. "validity: human vs 4 TTS families,
    leave-one-family-out AUC ≥ 0.85 (weakest: piper; AUC 0.47 on its worst held-out human group),
    unseen kokoro AUC 0.80", or, with a caveat, "validity: NOT valid in the wild: … . Sealed split:
    …". A head without a summary says so. The line starts "validity:" (it used to say
    "validated:", which read as a contradiction before "NOT valid in the wild")."""
    v = cfg.training.get("validity") if isinstance(cfg.training, Mapping) else None
    text = validity_text(v)
    if text is not None:
        return f"validity: {text}"
    test = cfg.training.get("test") if isinstance(cfg.training, Mapping) else None
    held = _held_out_test_text(test, cfg.training.get("manifest"))
    if held is not None:  # a head fresh from `livejudge train`: said "none" though it had these
        return f"validity: {held}"
    return "validity: no held-out validity recorded in this head (see livejudge/judge/heads/README.md)"


def _held_out_test_text(test: Any, manifest: Any) -> str | None:
    """The held-out figure ``livejudge train`` records (``training["test"]``: the manifest's
    'test' rows, never fitted on) as words that say what it was measured on; None without one."""
    if not isinstance(test, Mapping):
        return None
    try:
        n = int(test["n"])
        auc = test.get("roc_auc")
        acc = float(test["binary_accuracy"])
    except (KeyError, TypeError, ValueError):
        return None
    where = Path(str(manifest["path"])).name if isinstance(manifest, Mapping) and manifest.get("path") else "the training manifest"
    auc_text = f"ROC-AUC {float(auc):.2f}, " if isinstance(auc, (int, float)) and auc == auc else ""
    ci = test.get("accuracy_ci95")
    ci_text = (f" (95 % CI {float(ci[0]):.2f}–{float(ci[1]):.2f})"
               if isinstance(ci, (list, tuple)) and len(ci) == 2 else "")
    seen = test.get("in_sample_rows")
    if isinstance(seen, int) and seen > 0:  # a duplicated clip read "never fitted on" (a trial)
        held = (f"IN-SAMPLE: {seen} of them {'is' if seen == 1 else 'are'} also a fitted or validation row, so "
                "this is not a held-out figure")
    else:
        held = "never fitted on"
    few = "; too few calls to mean much" if test.get("few_rows") else ""
    fam = test.get("family_rows")
    if isinstance(fam, Mapping) and isinstance(fam.get("seen"), int) and fam["seen"] > 0:
        # a trial's test rows shared every reader and voice with the fitted rows and read as held out
        who = (f"{fam['seen']} of them {'is' if fam['seen'] == 1 else 'are'} of families the fitted rows also name, "
               "so it is a seen-family figure; whether their speakers are is not recorded")
    elif isinstance(fam, Mapping) and fam.get("named") == n:
        who = "none of their families is among the fitted rows'; whether their speakers are is not recorded"
    else:
        who = "whether their voices and speakers are also in the fitted rows is not recorded"
    return (f"{auc_text}accuracy {acc:.2f}{ci_text} on the {n} 'test' rows of {where} ({held}{few}; {who}, nor is "
            "a leave-one-family-out study)")


def new_config(backbone: Any, *, name: str, version: str = "0.1.0", provenance: str = "trained",
               readout: str | None = None, dimensions: Sequence[str] = DIMENSION_IDS, r: int = 5,
               dropout: float = 0.3, feature_names: Sequence[str] | None = None,
               evidence_min: Mapping[str, float] | None = None, training: Mapping[str, Any] | None = None,
               sources: Sequence[str] = (), notes: str = "") -> HeadConfig:
    """Convenience: a HeadConfig for a Backbone object (readout defaults to "fused" when the
    backbone gives mean+last vectors, else its first readout)."""
    info = BackboneInfo.of(backbone)
    if readout is None:
        readout = "fused" if {"mean", "last"} <= set(info.readouts) else info.readouts[0]
    cfg = HeadConfig(name=name, version=version, provenance=provenance, backbone=info, readout=readout,
                     dimensions=tuple(dimensions), r=r, dropout=dropout,
                     feature_names=tuple(feature_names) if feature_names is not None else None,
                     evidence_min=dict(evidence_min or {}), training=dict(training or {}),
                     sources=tuple(sources), notes=notes)
    validate_config(cfg)
    return cfg
