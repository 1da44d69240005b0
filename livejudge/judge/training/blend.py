"""One head whose P(human) is a weighted mean of other heads' log-odds, exactly (issue 19).

Why: two whisper heads fitted on different data are each ahead on different neural families (a
refit on diffusion, flow-matching and GAN/VITS voices, the shipped head on codec-LM, masked-codec
and conversational voices; ``benchmarks/experiments/refit_v6/README.md``). Averaging log-odds is
the plain way to combine two such classifiers (a fixed-weight linear opinion pool on the logit
scale; Genest & Zidek 1986, Stat. Sci. 1(1), "logarithmic opinion pool"). The weights are FIXED
before any figure of the blend exists; nothing is fitted here.

Maths. A head maps the backbone vector x (d,) through its readout normalisation (μ_m, σ_m), its
ODL rows W_m (K, d) and bias b_m (K,) to z_m = W_m (x − μ_m)/σ_m + b_m, and its classifier to the
log-odds of "human"

    L_m(x) = Σ_k c_mk (z_mk − z̄_mk) + B_m,   c_mk = (Wc_m[HUMAN,k] − Wc_m[MACHINE,k]) / s_mk,
    B_m = bc_m[HUMAN] − bc_m[MACHINE]

(z̄, s: the head's z normalisation). The blend with weights w_m (Σ w_m = 1) is

    L(x) = Σ_m w_m L_m(x) = Σ_k z_k + B,   z_k = Σ_m w_m c_mk (z_mk − z̄_mk),   B = Σ_m w_m B_m,

and z_k is affine in the first member's standardised input x' = (x − μ_1)/σ_1:
row_k = Σ_m w_m c_mk W_mk ⊙ σ_1/σ_m, bias_k = Σ_m w_m c_mk (W_mk · (μ_1 − μ_m)/σ_m + b_mk − z̄_mk).
It is stored as an ordinary head (ODL rows, z̄ = 0, classifier ±s_k/2 and ±B/2:
``whisper_head.set_sum_classifier``), so the judge, the meter and every API read it unchanged. A dimension the
judge gates has z_k = z̄_k = 0 in the blend, as each member's term c_mk (z_mk − z̄_mk) is 0 when
that member gates it: the blend equals the members' blended log-odds with gating too, provided
the members gate alike (same backbone, readout, dimensions and ``evidence_min``; checked).
A dimension's 1–5 score reads z_k through cut-points whose scale is the weighted mean of the
members' log-scales (for whisper heads c_mk = 1 and z̄ = 0, so z_k is the weighted mean of their
z_k, and their scales are equal).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from livejudge.judge.model.head import HeadConfig, HeadError
from livejudge.judge.model.numpy_head import NumpyHead
from livejudge.judge.model.odl import HUMAN, MACHINE

__all__ = ["blend_heads", "blend_log_odds", "weights_digest"]


def weights_digest(head_dir: str | Path) -> str:
    """sha256 (first 16 hex digits) of a head directory's weights.safetensors: which member it was."""
    return hashlib.sha256((Path(head_dir) / "weights.safetensors").read_bytes()).hexdigest()[:16]


def blend_log_odds(log_odds: Sequence[np.ndarray], weights: Sequence[float]) -> np.ndarray:
    """Σ_m w_m L_m: the blend's log-odds of "human" from its members', float64 (n,).

    Args:
        log_odds: one (n,) array per member. weights: one per member, ≥ 0, summing to 1.
    Raises:
        ValueError: a weight count, sign or sum that does not fit.
    """
    w = _check_weights(weights, len(log_odds))
    arrs = [np.asarray(lo, np.float64) for lo in log_odds]
    if any(a.ndim != 1 or a.shape != arrs[0].shape for a in arrs):
        raise ValueError(f"blend log-odds must be 1-D arrays of one length, got shapes {[a.shape for a in arrs]}")
    return np.sum([wi * a for wi, a in zip(w, arrs)], axis=0)


def _check_weights(weights: Sequence[float], n: int) -> np.ndarray:
    """The weights as float64 (n,). Raises ValueError: not a list of numbers, a count other than the
    members', a negative or non-finite weight, or a sum other than 1."""
    if isinstance(weights, (str, bytes)) or not hasattr(weights, "__len__") or not all(
            isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) for x in weights):
        raise ValueError(f"blend weights must be a list of numbers, one per member (e.g. [0.5, 0.5]), got {weights!r}")
    w = np.asarray(weights, np.float64).reshape(-1)
    if n < 2:
        raise ValueError(f"a blend needs at least two members, got {n}")
    if w.size != n:
        raise ValueError(f"a blend needs one weight per member: {n} members, {w.size} weight(s)")
    if not np.isfinite(w).all() or (w < 0).any() or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"blend weights must be finite, ≥ 0 and sum to 1, got {w.tolist()}")
    return w


def _same_gating(cfgs: Sequence[HeadConfig]) -> None:
    a = cfgs[0]
    for c in cfgs[1:]:
        for what, x, y in (("backbone", a.backbone.name, c.backbone.name), ("readout", a.readout, c.readout),
                           ("dimensions", tuple(a.dimensions), tuple(c.dimensions)), ("r", a.r, c.r),
                           ("evidence_min", dict(a.evidence_min), dict(c.evidence_min))):
            if x != y:
                raise HeadError(f"cannot blend heads {a.name} and {c.name}: they differ in {what} "
                                "(members must read the same backbone vector and gate alike)")


def blend_heads(members: Sequence[str | Path], weights: Sequence[float], *, name: str, version: str,
                training: dict[str, Any] | None = None, notes: str = "") -> tuple[Any, HeadConfig]:
    """Build the blend of head directories ``members`` (module docstring) as a torch JudgeHead
    and its HeadConfig, ready for ``head.save_head``.

    Args:
        members: head directories (weights.safetensors + config.json), same backbone and readout.
        weights: w_m, one per member, ≥ 0, summing to 1 (fixed in advance; nothing is fitted).
        name, version: the blend's id. training: extra ``training`` fields (e.g. its validity);
            ``families``, ``human_groups`` and ``sources`` are the union of the members'.
    Returns:
        (JudgeHead in eval mode, HeadConfig).
    Raises:
        HeadError: a member that does not load or that reads/gates differently.
        ValueError: bad weights.
    """
    import torch

    from livejudge.judge.model.odl import JudgeHead
    from livejudge.judge.training.whisper_head import set_sum_classifier

    w = _check_weights(weights, len(members))
    heads = [NumpyHead.from_checkpoint(m) for m in members]
    cfgs = [h.config for h in heads]
    _same_gating(cfgs)
    h0 = heads[0]
    if h0.readout.mode != "features":
        raise HeadError(f"blend supports the 'features' readout only, got {h0.readout.mode!r}")
    mu0, sd0 = (a.astype(np.float64) for a in h0.readout.normalisation("features"))
    K, d = h0.proj_weight.shape
    rows = np.zeros((K, d))
    bias = np.zeros(K)
    B = 0.0
    for wm, h in zip(w, heads):
        mu, sd = (a.astype(np.float64) for a in h.readout.normalisation("features"))
        Wc = h.classifier_weight.astype(np.float64)
        bc = h.classifier_bias.astype(np.float64)
        c = (Wc[HUMAN] - Wc[MACHINE]) / h.z_std.astype(np.float64)
        Wm = h.proj_weight.astype(np.float64)
        rows += wm * c[:, None] * Wm * (sd0 / sd)[None, :]
        bias += wm * c * (Wm @ ((mu0 - mu) / sd) + h.proj_bias.astype(np.float64) - h.z_mean.astype(np.float64))
        B += wm * float(bc[HUMAN] - bc[MACHINE])
    s = np.sum([wm * h.z_std.astype(np.float64) for wm, h in zip(w, heads)], axis=0)
    s = np.where(s > 1e-8, s, 1.0)
    head = JudgeHead(d, readout="features", dimensions=cfgs[0].dimensions, r=cfgs[0].r, dropout=0.0)
    with torch.no_grad():
        head.readout.set_normalisation("features", mu0, sd0)
        head.odl.proj.weight.copy_(torch.as_tensor(rows, dtype=torch.float32))
        head.odl.proj.bias.copy_(torch.as_tensor(bias, dtype=torch.float32))
        head.odl.log_scale.copy_(torch.as_tensor(np.sum([wm * h.log_scale.astype(np.float64)
                                                         for wm, h in zip(w, heads)], axis=0), dtype=torch.float32))
    set_sum_classifier(head, s, B)
    head.eval()

    def union(key: str) -> list:
        return sorted({str(x) for c in cfgs for x in ((c.training or {}).get(key) or [])})

    tr: dict[str, Any] = {
        "method": "fixed-weight mean of the members' log-odds of human (livejudge.judge.training.blend): "
                  "exact, stored as one head; nothing fitted",
        "blend": {"weights": [float(x) for x in w],
                  "members": [{"dir": str(m), "name": c.name, "version": c.version, "weights_sha256_16": weights_digest(m)}
                              for m, c in zip(members, cfgs)]},
        "families": union("families"), "human_groups": union("human_groups"),
        "augmentations": union("augmentations"),
    }
    tr.update(training or {})
    c0 = cfgs[0]
    srcs = tuple(sorted({src for c in cfgs for src in c.sources}))
    cfg = c0.with_(name=name, version=version, training=tr, sources=srcs,
                   notes=notes or f"blend of {', '.join(f'{c.name} {c.version}' for c in cfgs)} (mean of log-odds)")
    return head, cfg
