"""The ODL judge head's inference in numpy: the same numbers as ``odl.JudgeHead``, without torch.

``JudgeHead`` (``odl.py``, torch) is the trainable head; this module runs a trained head on the
CPU with numpy only, so the core install (``pip install livejudge``: replay, score, attach,
report and the CPU judge) does not pull PyTorch. It computes, per window (the Turing-test paper, §6.2.1,
App. E; every choice as documented in ``odl``):

* readout: each source vector standardised with the head's stored statistics,
  (x − mean) / std; ``"fused"`` = α_mean · mean + α_last · last with (α_mean, α_last) =
  softmax(a); ``"mean"``, ``"last"``, ``"features"`` = that source alone (Table 16);
* z = W h + b (the ODL projection; dropout is off at inference);
* cut-points C_ik = (i − r + 2) / (2(r − 2)) · s_k, s_k = exp(log_scale_k), i = 1..r−1;
* log P(Y_k = i) by the same stable log-differencing as ``odl.log_category_probs``;
  expected score E[Y_k] = Σ_i i · P(Y_k = i);
* classifier logits W_F ẑ + b on ẑ = (z − μ) / σ; P(human) = softmax(logits)[:, 1];
* contributions c_k = ẑ_k · (W_machine,k − W_human,k) toward "machine" (App. E.7).

Precision: weights are stored as float32 (the checkpoint's dtype); the maths runs in float64
by default, so the result is the float32-weighted model evaluated almost exactly, and agrees
with the torch float32 path to within its rounding (tests/test_numpy_head.py checks 1e-6 on
P(human), z, scores and contributions for the shipped heads and random heads).

The torch-free constants shared with the training code (``READOUTS``, ``SCALE_INIT``...) live
in ``layout`` (imported by ``head`` and ``odl`` too, so none of the three imports another back);
this module re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from livejudge.judge.model.layout import (  # noqa: F401  (re-exported: the names' old home)
    CLASSES, DROPOUT, HUMAN, MACHINE, READOUT_SOURCES, READOUTS, SCALE_INIT, SYMMETRY_LAMBDA, TENSOR_NAMES,
    TOP_K, ODLError, expected_tensor_shapes, top_contributions,
)


# --------------------------------------------------------------------------- pure maths (numpy)


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    """log σ(x) = −log(1 + e^{−x}), stable for large |x|."""
    return -np.logaddexp(0.0, -x)


def cut_points(s: np.ndarray, r: int) -> np.ndarray:
    """C_ik = (i − r + 2) / (2(r − 2)) · s_k, i = 1..r−1 (the Turing-test paper, §6.2.1).

    Args:
        s: scales s_k, shape (K,). r: rating levels (≥ 3).
    Returns:
        shape (K, r − 1), dtype of ``s``.
    Raises:
        ODLError: r < 3.
    """
    if r < 3:
        raise ODLError(f"r must be at least 3 (the cut-point formula divides by r − 2), got {r}")
    i = np.arange(1, r, dtype=s.dtype)
    return s[:, None] * ((i - r + 2) / (2.0 * (r - 2)))[None, :]


def log_category_probs(z: np.ndarray, s: np.ndarray, r: int) -> np.ndarray:
    """log P(Y_k = i | x), i = 1..r, by the stable log-differencing of ``odl.log_category_probs``:
    log P(Y=1) = logσ(C_1 − z), log P(Y=r) = logσ(z − C_{r−1}), and for 1 < i < r
    log P(Y=i) = logσ(C_i − z) + logσ(z − C_{i−1}) + log(1 − e^{−(C_i − C_{i−1})}).

    Args:
        z: (N, K); s: (K,), positive.
    Returns:
        (N, K, r).
    """
    c = cut_points(s, r)
    zz = z[:, :, None]
    cc = c[None, :, :]
    first = _log_sigmoid(cc[..., :1] - zz)
    last = _log_sigmoid(zz - cc[..., -1:])
    gap = (c[:, 1:] - c[:, :-1])[None]
    inner = _log_sigmoid(cc[..., 1:] - zz) + _log_sigmoid(zz - cc[..., :-1]) + np.log(-np.expm1(-gap))
    return np.concatenate([first, inner, last], axis=-1)


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


# --------------------------------------------------------------------------- the head


@dataclass(frozen=True)
class NumpyHeadOutput:
    """What the head gives for N windows (K dimensions, r levels); numpy arrays.

    Attributes:
        z: latent scores (N, K). probs: P(Y_k = i) (N, K, r). logits: classifier logits in
        ``CLASSES`` order (N, 2). p_human: (N,). scores: expected score (N, K), 1..r.
        contributions: c_k toward "machine" (N, K).
    """

    z: np.ndarray
    probs: np.ndarray
    logits: np.ndarray
    p_human: np.ndarray
    scores: np.ndarray
    contributions: np.ndarray


class NumpyReadout:
    """Backbone vectors → h (N, d): the inference half of ``odl.Readout``.

    Args:
        mode: one of ``READOUTS``. dim: d.
        normalisation: source → (mean, std), each (d,); a source left out uses 0 and 1; std
            values ≤ 1e-8 are replaced by 1 (as ``Readout.set_normalisation``).
        fusion_logits: a, shape (2,), for the fused readout (zeros = equal weights when None).
    Raises:
        ODLError: unknown mode, bad size, a normalisation for a source the mode does not read.
    """

    def __init__(self, mode: str, dim: int, normalisation: Mapping[str, tuple[Any, Any]] | None = None,
                 fusion_logits: Any = None) -> None:
        if mode not in READOUT_SOURCES:
            raise ODLError(f"unknown readout {mode!r}; valid: {', '.join(READOUTS)}")
        if dim <= 0:
            raise ODLError(f"embedding size must be positive, got {dim}")
        self.mode = mode
        self.dim = int(dim)
        self.sources = READOUT_SOURCES[mode]
        self._norm: dict[str, tuple[np.ndarray, np.ndarray]] = {
            src: (np.zeros(self.dim, np.float32), np.ones(self.dim, np.float32)) for src in self.sources}
        for src, (m, sd) in (normalisation or {}).items():
            self.set_normalisation(src, m, sd)
        self.fusion_logits = None
        if mode == "fused":
            a = np.zeros(2, np.float32) if fusion_logits is None else np.asarray(fusion_logits, np.float32).reshape(-1)
            if a.shape != (2,):
                raise ODLError(f"fusion_logits must have 2 values, got {a.size}")
            self.fusion_logits = a

    def set_normalisation(self, source: str, mean: Any, std: Any) -> None:
        """Set one source's standardisation (float32, as the torch buffers)."""
        if source not in self.sources:
            raise ODLError(f"readout {self.mode!r} has no source {source!r}; sources: {', '.join(self.sources)}")
        m = np.asarray(mean, np.float32).reshape(-1)
        sd = np.asarray(std, np.float32).reshape(-1)
        if m.size != self.dim or sd.size != self.dim:
            raise ODLError(f"normalisation for {source!r} must have {self.dim} values, got {m.size}/{sd.size}")
        self._norm[source] = (m, np.where(sd > 1e-8, sd, np.float32(1.0)).astype(np.float32))

    def normalisation(self, source: str) -> tuple[np.ndarray, np.ndarray]:
        """(mean, std) of one source, float32 (d,)."""
        return self._norm[source]

    def fusion_weights(self) -> np.ndarray:
        """(α_mean, α_last) = softmax(a), float64 (2,). Only for the fused readout."""
        if self.fusion_logits is None:
            raise ODLError(f"readout {self.mode!r} has no fusion weights")
        return _softmax(self.fusion_logits.astype(np.float64))

    def __call__(self, inputs: Mapping[str, Any], dtype: Any = np.float64) -> np.ndarray:
        """inputs: source → array (N, d) (cast to float32 first, as the torch judge does).
        Returns h, shape (N, d), ``dtype``."""
        xs = []
        for src in self.sources:
            if src not in inputs:
                raise ODLError(f"readout {self.mode!r} needs the {src!r} vector; got {', '.join(inputs) or 'none'}")
            x = np.asarray(inputs[src], np.float32)
            if x.ndim != 2 or x.shape[1] != self.dim:
                raise ODLError(f"{src!r} vectors must have shape (N, {self.dim}), got {tuple(x.shape)}")
            m, sd = self._norm[src]
            xs.append((x.astype(dtype) - m.astype(dtype)) / sd.astype(dtype))
        if self.mode == "fused":
            w = self.fusion_weights().astype(dtype)
            return w[0] * xs[0] + w[1] * xs[1]
        return xs[0]


class NumpyHead:
    """Readout + ODL + classifier at inference, numpy only; mirrors ``odl.JudgeHead``'s methods
    (``latent``, ``standardise``, ``logits``, ``machine_weight``, ``contributions``,
    ``category_probs``, ``outputs``, call).

    Args:
        tensors: the checkpoint tensors by ``JudgeHead.state_dict()`` name (``TENSOR_NAMES``,
            plus ``readout.fusion_logits`` for a fused readout), any float dtype; kept as float32.
        readout: one of ``READOUTS``. dimensions: ids in output order (K). r: rating levels.
        normalisation: source → (mean, std) of the readout inputs.
        z_mean, z_std: training-set statistics of z, (K,) (defaults 0 and 1; std ≤ 1e-8 → 1).
        dtype: float type of the maths (float64 by default; see the module docstring).
    Raises:
        ODLError: a missing tensor or a shape that does not fit.
    """

    def __init__(self, tensors: Mapping[str, Any], readout: str, dimensions: Sequence[str], r: int,
                 normalisation: Mapping[str, tuple[Any, Any]] | None = None, z_mean: Any = None,
                 z_std: Any = None, dtype: Any = np.float64) -> None:
        self.dimensions = tuple(dimensions)
        k = len(self.dimensions)
        if k == 0:
            raise ODLError("a head needs at least one dimension")
        if int(r) < 3:
            raise ODLError(f"r must be at least 3 (the cut-point formula divides by r − 2), got {r}")
        self.r = int(r)
        self.dtype = np.dtype(dtype)
        if "odl.proj.weight" not in tensors:
            raise ODLError("head tensors lack 'odl.proj.weight'")
        w = np.asarray(tensors["odl.proj.weight"], np.float32)
        if w.ndim != 2 or w.shape[0] != k:
            raise ODLError(f"odl.proj.weight must have shape ({k}, d), got {tuple(w.shape)}")
        self.embedding_dim = int(w.shape[1])
        shapes = expected_tensor_shapes(readout, self.embedding_dim, k) if readout in READOUT_SOURCES else {}
        arrays = {}
        for name, shape in shapes.items():
            if name not in tensors:
                raise ODLError(f"head tensors lack {name!r} (readout {readout!r})")
            a = np.asarray(tensors[name], np.float32)
            if tuple(a.shape) != shape:
                raise ODLError(f"tensor {name} has shape {tuple(a.shape)}, expected {shape}")
            arrays[name] = a
        self.readout = NumpyReadout(readout, self.embedding_dim, normalisation, arrays.get("readout.fusion_logits"))
        self.proj_weight = arrays["odl.proj.weight"]
        self.proj_bias = arrays["odl.proj.bias"]
        self.log_scale = arrays["odl.log_scale"]
        self.classifier_weight = arrays["classifier.weight"]
        self.classifier_bias = arrays["classifier.bias"]
        zm = np.zeros(k, np.float32) if z_mean is None else np.asarray(z_mean, np.float32).reshape(-1)
        zs = np.ones(k, np.float32) if z_std is None else np.asarray(z_std, np.float32).reshape(-1)
        if zm.size != k or zs.size != k:
            raise ODLError(f"z normalisation must have {k} values, got {zm.size}/{zs.size}")
        self.z_mean = zm
        self.z_std = np.where(zs > 1e-8, zs, np.float32(1.0)).astype(np.float32)
        self.config = None
        """The HeadConfig when built by ``from_checkpoint`` (else None)."""

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_torch(cls, head: Any, dtype: Any = np.float64) -> "NumpyHead":
        """The numpy twin of a torch ``JudgeHead`` (its weights and normalisation, copied)."""
        tensors = {k: v.detach().cpu().float().numpy() for k, v in head.state_dict().items()}
        norm = {}
        for src in head.readout.sources:
            m, sd = head.readout.normalisation(src)
            norm[src] = (m.detach().cpu().float().numpy(), sd.detach().cpu().float().numpy())
        return cls(tensors, head.readout_mode, head.dimensions, head.r, norm,
                   head.z_mean.detach().cpu().float().numpy(), head.z_std.detach().cpu().float().numpy(), dtype)

    @classmethod
    def from_checkpoint(cls, path: str | Path, expected_backbone: str | None = None,
                        expected_dim: int | None = None, dtype: Any = np.float64) -> "NumpyHead":
        """Load and validate a head directory (weights.safetensors + config.json) without torch.

        The checks and one-line errors are ``head.load_head``'s (``head.read_checkpoint``);
        the HeadConfig is kept as ``.config``.
        Raises:
            HeadError: as ``head.load_head``.
        """
        from livejudge.judge.model.head import read_checkpoint

        cfg, tensors, norm, z_mean, z_std = read_checkpoint(path, expected_backbone, expected_dim)
        head = cls(tensors, cfg.readout, cfg.dimensions, cfg.r, norm, z_mean, z_std, dtype)
        head.config = cfg
        return head

    # ------------------------------------------------------------------ maths

    @property
    def readout_mode(self) -> str:
        return self.readout.mode

    @property
    def scale(self) -> np.ndarray:
        """s_k = exp(log_scale_k), shape (K,)."""
        return np.exp(self.log_scale.astype(self.dtype))

    def cut_points(self) -> np.ndarray:
        """C_ik, shape (K, r − 1)."""
        return cut_points(self.scale, self.r)

    def latent(self, inputs: Mapping[str, Any]) -> np.ndarray:
        """z = W · readout(inputs) + b, shape (N, K) (no dropout at inference)."""
        h = self.readout(inputs, self.dtype)
        return h @ self.proj_weight.astype(self.dtype).T + self.proj_bias.astype(self.dtype)

    def standardise(self, z: np.ndarray) -> np.ndarray:
        """ẑ = (z − μ) / σ with the training-set statistics, shape (N, K)."""
        return (z - self.z_mean.astype(self.dtype)) / self.z_std.astype(self.dtype)

    def logits(self, z: np.ndarray) -> np.ndarray:
        """Classifier logits W ẑ + b, shape (N, 2), ``CLASSES`` order."""
        return self.standardise(z) @ self.classifier_weight.astype(self.dtype).T + self.classifier_bias.astype(self.dtype)

    def machine_weight(self) -> np.ndarray:
        """w_k = W_machine,k − W_human,k, shape (K,)."""
        w = self.classifier_weight.astype(self.dtype)
        return w[MACHINE] - w[HUMAN]

    def contributions(self, z: np.ndarray) -> np.ndarray:
        """c_k = ẑ_k · w_k toward "machine" (App. E.7), shape (N, K)."""
        return self.standardise(z) * self.machine_weight()

    def category_probs(self, z: np.ndarray) -> np.ndarray:
        """P(Y_k = i), shape (N, K, r)."""
        return np.exp(log_category_probs(np.asarray(z, self.dtype), self.scale, self.r))

    def outputs(self, z: np.ndarray) -> NumpyHeadOutput:
        """Everything the judge shows, from z (N, K)."""
        z = np.asarray(z, self.dtype)
        probs = self.category_probs(z)
        logits = self.logits(z)
        levels = np.arange(1, self.r + 1, dtype=self.dtype)
        return NumpyHeadOutput(z=z, probs=probs, logits=logits, p_human=_softmax(logits)[:, HUMAN],
                               scores=(probs * levels).sum(-1), contributions=self.contributions(z))

    def __call__(self, inputs: Mapping[str, Any]) -> NumpyHeadOutput:
        return self.outputs(self.latent(inputs))
