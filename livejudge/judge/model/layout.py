"""The ODL judge head's layout and torch-free constants, shared by the checkpoint format
(``head``), the numpy inference (``numpy_head``) and the torch head (``odl``).

They sit in a module of their own so that those three import it and not each other: the
checkpoint format reads a head for the numpy inference, which ``head`` must not import back
(issue 21: no import circles). ``numpy_head`` and ``odl`` re-export every name.
"""

from __future__ import annotations

from typing import Any, Sequence

CLASSES: tuple[str, str] = ("machine", "human")
"""Class order of the classifier logits: index 0 = machine, 1 = human."""
MACHINE, HUMAN = 0, 1

SCALE_INIT = 2.1
"""Initial cut-point scale s_k (the Turing-test paper, Table 19)."""
DROPOUT = 0.3
"""ODL dropout (the Turing-test paper, Table 19)."""
SYMMETRY_LAMBDA = 0.1
"""λ of the symmetry regulariser λ‖W_1 + W_2‖₂ (the Turing-test paper, §6.2.1)."""
TOP_K = 8
"""Number of contributions the paper's case studies rank (the Turing-test paper, App. E.7)."""

READOUT_SOURCES: dict[str, tuple[str, ...]] = {
    "fused": ("mean", "last"),
    "mean": ("mean",),
    "last": ("last",),
    "features": ("features",),
}
"""Readout mode → the backbone vectors (``Embedding.vectors`` keys) it reads."""
READOUTS: tuple[str, ...] = tuple(READOUT_SOURCES)

TENSOR_NAMES = ("odl.proj.weight", "odl.proj.bias", "odl.log_scale", "classifier.weight", "classifier.bias")
"""The checkpoint tensors every head has (``JudgeHead.state_dict()`` keys); a fused readout adds
``readout.fusion_logits``."""


class ODLError(ValueError):
    """Bad input to the ODL maths (shape, rating range, r); the message names the problem."""


def expected_tensor_shapes(readout: str, embedding_dim: int, n_dims: int) -> dict[str, tuple[int, ...]]:
    """Name → shape of every tensor a head checkpoint must hold (the ``JudgeHead`` state dict).

    Args:
        readout: one of ``READOUTS``; embedding_dim: d; n_dims: K.
    """
    shapes: dict[str, tuple[int, ...]] = {"readout.fusion_logits": (2,)} if readout == "fused" else {}
    shapes.update({"odl.proj.weight": (n_dims, embedding_dim), "odl.proj.bias": (n_dims,),
                   "odl.log_scale": (n_dims,), "classifier.weight": (2, n_dims), "classifier.bias": (2,)})
    return shapes  # in JudgeHead.state_dict() order


def top_contributions(contributions: Sequence[float] | Any, dimension_ids: Sequence[str],
                      k: int = TOP_K) -> list[tuple[str, float]]:
    """The k dimensions with the largest |c_k|, largest first (the Turing-test paper, App. E.7: top 8).

    Args:
        contributions: K values (a sequence, a numpy array or a torch tensor).
    Ties keep the dimension order. Positive c_k = machine-like evidence.
    Raises:
        ODLError: not one value per dimension.
    """
    raw = contributions.tolist() if hasattr(contributions, "tolist") else contributions
    vals = [float(v) for v in raw]
    if len(vals) != len(dimension_ids):
        raise ODLError(f"{len(vals)} contributions for {len(dimension_ids)} dimensions")
    order = sorted(range(len(vals)), key=lambda i: -abs(vals[i]))
    return [(dimension_ids[i], vals[i]) for i in order[:k]]
