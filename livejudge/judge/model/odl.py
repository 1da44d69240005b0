"""The Ordinal Discretization Layer (ODL) judge head: readout → z → 1–5 scores → P(human).

Everything here follows the Turing-test paper ("Human or Machine? A Preliminary Turing Test for
Speech-to-Speech Interaction"), section 6.2.1 and appendix E:

* readout (App. E.3, Table 16): a learnable fusion of the first-step mean of hidden states and
  the last token's hidden state (``"fused"``); ``"mean"`` and ``"last"`` alone for ablation;
  ``"features"`` (identity) for the CPU acoustic backbone, whose vector is a set of named
  interpretable features. Each source is standardised first (App. E.2: "standard
  normalization to the hidden representations"), with statistics stored in the head.
* ODL (§6.2.1): z = f_ODL(h) ∈ R^K, a linear projection (with dropout on h, Table 19);
  cut-points C_ik = (i − r + 2) / (2(r − 2)) · s_k for i = 1..r−1 with a learnable scale s_k
  per dimension (initialised to 2.1, Table 19); P(Y_k ≤ i | x) = σ(C_ik − z_k); category
  probabilities by differencing; loss = mean over samples of Σ_k −log P(Y_k = rating_k).
* classifier (§6.2.1): logits = W_F ẑ + b (n = 2 classes, order ``CLASSES`` =
  ("machine", "human")), cross-entropy + λ‖W_1 + W_2‖₂ with λ = 0.1.
* contributions (App. E.7): c_k = standardised z_k × classifier weight on the machine side,
  ranked by |c_k| (the paper shows the top 8).

Note on the cut-point formula, implemented exactly as printed: for r = 5 it gives
C_k = s_k · (−1/3, −1/6, 0, 1/6), not symmetric about 0, with the three middle bins s_k/6 wide.
At the initial s_k = 2.1 the middle bins are 0.35 wide in z, so levels 2–4 are never the single
most likely level (the expected score still moves smoothly through them); training widens the
bins (raises s_k) when the ratings use the middle levels.

Choices where the paper leaves room (each documented where it is made):

1. s_k is stored as log s_k, so s_k > 0 always and the cut-points stay strictly ordered as the
   paper requires; the formula for C_ik is unchanged.
2. The classifier reads the *standardised* latent scores ẑ_k = (z_k − μ_k) / σ_k, with μ, σ the
   training-set mean and std of z fixed after stage 1 (App. E.7 standardises z with respect to
   the training set before multiplying by the weights). This makes the weights comparable
   across dimensions and the contributions an exact decomposition of the log-odds.
3. The classifier keeps a bias b (PyTorch's default linear layer); it does not enter c_k.
4. "Weight toward machine" is w_k = W_machine,k − W_human,k, so
   Σ_k c_k = log P(machine)/P(human) − (b_machine − b_human): each c_k is that dimension's
   share of the log-odds (nats) for "machine"; c_k > 0 is machine-like evidence, c_k < 0
   human-like (the paper's sign convention). With the symmetry regulariser W_human ≈ −W_machine,
   so w_k ≈ 2·W_machine,k: the paper's value up to a common factor of 2, same ranking.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from livejudge.judge.model.dimensions import DIMENSION_IDS, RATING_LEVELS

# The torch-free constants live in layout (the core install has no torch); re-exported here.
from livejudge.judge.model.layout import (  # noqa: E402,F401
    CLASSES, DROPOUT, HUMAN, MACHINE, READOUT_SOURCES, READOUTS, SCALE_INIT, SYMMETRY_LAMBDA, TOP_K, ODLError,
    top_contributions,
)


# --------------------------------------------------------------------------- pure maths


def _check_r(r: int) -> None:
    if r < 3:
        raise ODLError(f"r must be at least 3 (the cut-point formula divides by r − 2), got {r}")


def cut_points(s: Tensor, r: int = RATING_LEVELS) -> Tensor:
    """Ordered cut-points C_ik = (i − r + 2) / (2(r − 2)) · s_k, i = 1..r−1 (the Turing-test paper, §6.2.1).

    Args:
        s: scales s_k, float tensor of shape (K,) (positive for strictly ordered cut-points).
        r: number of rating levels (≥ 3; the paper uses 5).
    Returns:
        float tensor of shape (K, r − 1); column i−1 holds C_ik.
        For r = 5: C_k = s_k · (−1/3, −1/6, 0, 1/6).
    Raises:
        ODLError: r < 3 or s not 1-D.
    """
    _check_r(r)
    if s.dim() != 1:
        raise ODLError(f"s must have shape (K,), got {tuple(s.shape)}")
    i = torch.arange(1, r, dtype=s.dtype, device=s.device)
    coef = (i - r + 2) / (2.0 * (r - 2))
    return s[:, None] * coef[None, :]


def cumulative_probs(z: Tensor, s: Tensor, r: int = RATING_LEVELS) -> Tensor:
    """P(Y_k ≤ i | x) = σ(C_ik − z_k) (the Turing-test paper, §6.2.1, cumulative link).

    Args:
        z: latent scores, shape (N, K).
        s: scales, shape (K,).
    Returns:
        shape (N, K, r − 1), column i−1 = P(Y_k ≤ i); non-increasing in z_k.
    """
    c = cut_points(s, r)
    return torch.sigmoid(c[None, :, :] - z[:, :, None])


def log_category_probs(z: Tensor, s: Tensor, r: int = RATING_LEVELS) -> Tensor:
    """log P(Y_k = i | x), i = 1..r, computed stably.

    By differencing (the Turing-test paper, §6.2.1): P(Y=1) = σ(C_1 − z), P(Y=r) = 1 − σ(C_{r−1} − z) = σ(z − C_{r−1}),
    and for 1 < i < r, with a = C_i − z and b = C_{i−1} − z,
    σ(a) − σ(b) = σ(a) · σ(−b) · (1 − e^{b − a}), so
    log P(Y=i) = logσ(C_i − z) + logσ(z − C_{i−1}) + log(1 − e^{−(C_i − C_{i−1})}).
    This is the same quantity as the plain difference but keeps precision when both
    sigmoids saturate. Requires s_k > 0 (strictly ordered cut-points).

    Args:
        z: shape (N, K); s: shape (K,).
    Returns:
        shape (N, K, r), float, each row's exp sums to 1.
    """
    c = cut_points(s, r)  # (K, r-1)
    zz = z[:, :, None]
    cc = c[None, :, :]
    first = F.logsigmoid(cc[..., :1] - zz)  # i = 1
    last = F.logsigmoid(zz - cc[..., -1:])  # i = r
    if r > 2:
        gap = (c[:, 1:] - c[:, :-1])[None]  # (1, K, r-2), > 0
        inner = F.logsigmoid(cc[..., 1:] - zz) + F.logsigmoid(zz - cc[..., :-1]) + torch.log(-torch.expm1(-gap))
        return torch.cat([first, inner, last], dim=-1)
    return torch.cat([first, last], dim=-1)


def category_probs(z: Tensor, s: Tensor, r: int = RATING_LEVELS) -> Tensor:
    """P(Y_k = i | x) for i = 1..r by differencing the cumulative probabilities (§6.2.1).

    Returns:
        shape (N, K, r), rows sum to 1.
    """
    return log_category_probs(z, s, r).exp()


def ordinal_nll(z: Tensor, s: Tensor, ratings: Tensor, r: int = RATING_LEVELS) -> Tensor:
    """Ordinal negative log-likelihood with missing ratings masked (the Turing-test paper, §6.2.1).

    loss = (1 / N_rated) Σ_n Σ_k [rating_nk > 0] · (−log P(Y_k = rating_nk | x_n)),
    where N_rated is the number of samples with at least one rating (the paper's 1/|D| over
    the rated data). A missing rating (0) contributes exactly 0; a batch with no ratings
    gives 0 (with a zero gradient).

    Args:
        z: latent scores, shape (N, K).
        s: scales, shape (K,).
        ratings: integer tensor (N, K), values 1..r, 0 = missing.
    Returns:
        scalar tensor.
    Raises:
        ODLError: shape mismatch or a rating outside 0..r.
    """
    if ratings.shape != z.shape:
        raise ODLError(f"ratings shape {tuple(ratings.shape)} does not match z shape {tuple(z.shape)}")
    ratings = ratings.long()
    if ratings.numel() and (int(ratings.min()) < 0 or int(ratings.max()) > r):
        raise ODLError(f"ratings must be 1..{r} (0 = missing), got values in "
                       f"[{int(ratings.min())}, {int(ratings.max())}]")
    mask = ratings > 0
    logp = log_category_probs(z, s, r)
    idx = (ratings - 1).clamp(min=0)
    picked = logp.gather(-1, idx[..., None]).squeeze(-1)
    nll = torch.where(mask, -picked, torch.zeros_like(picked))
    n_rated = int(mask.any(dim=1).sum())
    return nll.sum() / max(n_rated, 1)


def expected_score(probs: Tensor) -> Tensor:
    """E[Y] = Σ_i i · P(Y = i), on the 1..r scale.

    Args:
        probs: shape (..., r).
    Returns:
        shape (...), values in [1, r].
    """
    r = probs.shape[-1]
    levels = torch.arange(1, r + 1, dtype=probs.dtype, device=probs.device)
    return (probs * levels).sum(-1)


def most_likely_level(probs: Tensor) -> Tensor:
    """argmax_i P(Y = i) + 1, an integer tensor of shape (...) with values 1..r."""
    return probs.argmax(-1) + 1


def symmetry_penalty(weight: Tensor) -> Tensor:
    """R(W) = ‖W_1 + W_2‖₂, the symmetry regulariser of the Turing-test paper (§6.2.1).

    Args:
        weight: classifier weight, shape (2, K) (rows = classes).
    Returns:
        scalar tensor (Euclidean norm of the row sum).
    """
    if weight.dim() != 2 or weight.shape[0] != 2:
        raise ODLError(f"classifier weight must have shape (2, K), got {tuple(weight.shape)}")
    return torch.linalg.vector_norm(weight[0] + weight[1])


def classifier_loss(logits: Tensor, labels: Tensor, weight: Tensor, lam: float = SYMMETRY_LAMBDA) -> Tensor:
    """Cross-entropy + λ‖W_1 + W_2‖₂ (the Turing-test paper, §6.2.1, λ = 0.1).

    Args:
        logits: shape (N, 2) in ``CLASSES`` order; labels: (N,) ints, 0 = machine, 1 = human.
        weight: classifier weight (2, K).
    """
    return F.cross_entropy(logits, labels.long()) + lam * symmetry_penalty(weight)


# --------------------------------------------------------------------------- modules


class Readout(nn.Module):
    """Backbone vectors → one embedding h of shape (N, d).

    Each source vector is standardised with stored statistics, (x − mean) / std (defaults 0 and
    1; set by training or by the head's config). Then:

    * ``"fused"``: h = α_mean · mean + α_last · last with (α_mean, α_last) = softmax(a), a a
      learnable 2-vector initialised to 0 (equal weights): the learnable weighted fusion of
      {first_hidden_mean, last_hidden} of the Turing-test paper's App. E.3 (best in Table 16).
    * ``"mean"``, ``"last"``: that source alone (Table 16 ablations).
    * ``"features"``: the acoustic backbone's named features, standardised (identity otherwise).
    """

    def __init__(self, mode: str, dim: int) -> None:
        super().__init__()
        if mode not in READOUT_SOURCES:
            raise ODLError(f"unknown readout {mode!r}; valid: {', '.join(READOUTS)}")
        if dim <= 0:
            raise ODLError(f"embedding size must be positive, got {dim}")
        self.mode = mode
        self.dim = dim
        self.sources = READOUT_SOURCES[mode]
        for src in self.sources:
            self.register_buffer(f"in_mean_{src}", torch.zeros(dim), persistent=False)
            self.register_buffer(f"in_std_{src}", torch.ones(dim), persistent=False)
        if mode == "fused":
            self.fusion_logits = nn.Parameter(torch.zeros(2))

    def fusion_weights(self) -> Tensor:
        """(α_mean, α_last) = softmax(a), shape (2,). Only for the fused readout."""
        if self.mode != "fused":
            raise ODLError(f"readout {self.mode!r} has no fusion weights")
        return torch.softmax(self.fusion_logits, dim=0)

    def set_normalisation(self, source: str, mean: Tensor | Sequence[float], std: Tensor | Sequence[float]) -> None:
        """Set the standardisation of one source; std values ≤ 1e-8 are replaced by 1."""
        if source not in self.sources:
            raise ODLError(f"readout {self.mode!r} has no source {source!r}; sources: {', '.join(self.sources)}")
        m = torch.as_tensor(mean, dtype=torch.float32).reshape(-1)
        sd = torch.as_tensor(std, dtype=torch.float32).reshape(-1)
        if m.numel() != self.dim or sd.numel() != self.dim:
            raise ODLError(f"normalisation for {source!r} must have {self.dim} values, got {m.numel()}/{sd.numel()}")
        sd = torch.where(sd > 1e-8, sd, torch.ones_like(sd))
        getattr(self, f"in_mean_{source}").copy_(m)
        getattr(self, f"in_std_{source}").copy_(sd)

    def normalisation(self, source: str) -> tuple[Tensor, Tensor]:
        return getattr(self, f"in_mean_{source}"), getattr(self, f"in_std_{source}")

    def forward(self, inputs: Mapping[str, Tensor]) -> Tensor:
        """inputs: source name → float tensor (N, d). Returns h, shape (N, d)."""
        xs = []
        for src in self.sources:
            if src not in inputs:
                raise ODLError(f"readout {self.mode!r} needs the {src!r} vector; got {', '.join(inputs) or 'none'}")
            x = inputs[src]
            if x.dim() != 2 or x.shape[1] != self.dim:
                raise ODLError(f"{src!r} vectors must have shape (N, {self.dim}), got {tuple(x.shape)}")
            m, sd = self.normalisation(src)
            xs.append((x.to(m.dtype) - m) / sd)
        if self.mode == "fused":
            w = self.fusion_weights()
            return w[0] * xs[0] + w[1] * xs[1]
        return xs[0]


class OrdinalDiscretizationLayer(nn.Module):
    """h (N, d) → latent scores z (N, K), plus the ordinal model on top (the Turing-test paper, §6.2.1).

    z = W h + b after dropout on h (Table 19: dropout 0.3). The per-dimension scales s_k are
    stored as log s_k (so s_k > 0 and the cut-points stay strictly ordered), initialised to
    s_k = 2.1 (Table 19).
    """

    def __init__(self, in_dim: int, n_dims: int = len(DIMENSION_IDS), r: int = RATING_LEVELS,
                 scale_init: float = SCALE_INIT, dropout: float = DROPOUT) -> None:
        super().__init__()
        _check_r(r)
        if scale_init <= 0:
            raise ODLError(f"scale_init must be positive, got {scale_init}")
        if not 0.0 <= dropout < 1.0:
            raise ODLError(f"dropout must be in [0, 1), got {dropout}")
        self.r = r
        self.n_dims = n_dims
        self.dropout = nn.Dropout(dropout)
        self.proj = nn.Linear(in_dim, n_dims)
        self.log_scale = nn.Parameter(torch.full((n_dims,), math.log(scale_init)))

    @property
    def scale(self) -> Tensor:
        """s_k, shape (K,), positive."""
        return self.log_scale.exp()

    def cut_points(self) -> Tensor:
        """C_ik, shape (K, r − 1)."""
        return cut_points(self.scale, self.r)

    def forward(self, h: Tensor) -> Tensor:
        return self.proj(self.dropout(h))

    def category_probs(self, z: Tensor) -> Tensor:
        """P(Y_k = i), shape (N, K, r)."""
        return category_probs(z, self.scale, self.r)

    def nll(self, z: Tensor, ratings: Tensor) -> Tensor:
        """Masked ordinal NLL of ``ratings`` (N, K; 0 = missing), see ``ordinal_nll``."""
        return ordinal_nll(z, self.scale, ratings, self.r)


@dataclass(frozen=True)
class HeadOutput:
    """What the head gives for a batch of N windows (K dimensions, r levels).

    Attributes:
        z: latent scores, (N, K).
        probs: P(Y_k = i), (N, K, r).
        logits: classifier logits in ``CLASSES`` order, (N, 2).
        p_human: softmax(logits)[:, 1], (N,).
        scores: expected score per dimension, (N, K), on the 1..r scale.
        contributions: c_k toward "machine", (N, K).
    """

    z: Tensor
    probs: Tensor
    logits: Tensor
    p_human: Tensor
    scores: Tensor
    contributions: Tensor


class JudgeHead(nn.Module):
    """Readout + ODL + linear classifier: the trainable part of the judge (the Turing-test paper, §6.2.1).

    Args:
        embedding_dim: size d of each backbone vector.
        readout: one of ``READOUTS``.
        dimensions: dimension ids in output order (default: all 18 in the paper's order).
        r: rating levels (5). scale_init: s_k at start (2.1). dropout: on h (0.3).

    Buffers (not parameters): ``z_mean``, ``z_std`` (K,), the training-set statistics of z that
    standardise it for the classifier and the contributions (App. E.7); the readout's input
    normalisation. Both are stored in the checkpoint's config.json.
    """

    def __init__(self, embedding_dim: int, readout: str = "fused",
                 dimensions: Sequence[str] = DIMENSION_IDS, r: int = RATING_LEVELS,
                 scale_init: float = SCALE_INIT, dropout: float = DROPOUT) -> None:
        super().__init__()
        self.dimensions = tuple(dimensions)
        k = len(self.dimensions)
        if k == 0:
            raise ODLError("a head needs at least one dimension")
        self.embedding_dim = embedding_dim
        self.r = r
        self.dropout_p = dropout
        self.readout = Readout(readout, embedding_dim)
        self.odl = OrdinalDiscretizationLayer(embedding_dim, k, r, scale_init, dropout)
        self.classifier = nn.Linear(k, 2)
        self.register_buffer("z_mean", torch.zeros(k), persistent=False)
        self.register_buffer("z_std", torch.ones(k), persistent=False)

    @property
    def readout_mode(self) -> str:
        return self.readout.mode

    def set_z_normalisation(self, mean: Tensor | Sequence[float], std: Tensor | Sequence[float]) -> None:
        """Set μ, σ of z (training-set statistics); std values ≤ 1e-8 are replaced by 1."""
        m = torch.as_tensor(mean, dtype=torch.float32).reshape(-1)
        sd = torch.as_tensor(std, dtype=torch.float32).reshape(-1)
        k = len(self.dimensions)
        if m.numel() != k or sd.numel() != k:
            raise ODLError(f"z normalisation must have {k} values, got {m.numel()}/{sd.numel()}")
        self.z_mean.copy_(m)
        self.z_std.copy_(torch.where(sd > 1e-8, sd, torch.ones_like(sd)))

    def latent(self, inputs: Mapping[str, Tensor]) -> Tensor:
        """z = f_ODL(readout(inputs)), shape (N, K)."""
        return self.odl(self.readout(inputs))

    def standardise(self, z: Tensor) -> Tensor:
        """ẑ = (z − μ) / σ with the training-set statistics, shape (N, K)."""
        return (z - self.z_mean) / self.z_std

    def logits(self, z: Tensor) -> Tensor:
        """Classifier logits W ẑ + b, shape (N, 2), ``CLASSES`` order."""
        return self.classifier(self.standardise(z))

    def machine_weight(self) -> Tensor:
        """w_k = W_machine,k − W_human,k, shape (K,) (see module docstring, choice 4)."""
        w = self.classifier.weight
        return w[MACHINE] - w[HUMAN]

    def contributions(self, z: Tensor) -> Tensor:
        """c_k = ẑ_k · w_k toward "machine" (App. E.7), shape (N, K); Σ_k c_k + b_m − b_h = log-odds(machine)."""
        return self.standardise(z) * self.machine_weight()

    def outputs(self, z: Tensor) -> HeadOutput:
        """Everything the judge shows, from z (N, K)."""
        probs = self.odl.category_probs(z)
        logits = self.logits(z)
        return HeadOutput(
            z=z, probs=probs, logits=logits, p_human=torch.softmax(logits, dim=-1)[:, HUMAN],
            scores=expected_score(probs), contributions=self.contributions(z),
        )

    def forward(self, inputs: Mapping[str, Tensor]) -> HeadOutput:
        return self.outputs(self.latent(inputs))
