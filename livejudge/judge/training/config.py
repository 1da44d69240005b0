"""Training hyperparameters (``TrainConfig``) and ``TrainError``, torch-free.

They live apart from ``train`` (which needs torch, livejudge[train]) so that the CLI can show
``livejudge train --help`` defaults without importing torch; ``train`` re-exports both.
"""

from __future__ import annotations

from dataclasses import dataclass

from livejudge.judge.model.numpy_head import SCALE_INIT, SYMMETRY_LAMBDA


class TrainError(ValueError):
    """Training cannot proceed as asked; one-line message naming the fix."""


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class TrainConfig:
    """Hyperparameters of both stages; defaults are the Turing-test paper's Table 19 unless noted.

    Attributes:
        seed: seeds torch and numpy (initialisation, shuffling, dropout).
        odl_lr, odl_batch_size, dropout, scale_init: stage 1 (Table 19: 1e-5, 64, 0.3, 2.1).
        odl_epochs: maximum stage-1 epochs (livejudge default, with early stopping).
        linear_lr, linear_batch_size: stage 2 (Table 19: 1e-3, 128).
        linear_epochs: maximum stage-2 epochs (livejudge default).
        symmetry_lambda: λ (0.1, §6.2.1).
        patience: epochs without a better validation loss before stopping (livejudge default).
        min_rated: fewest rated training samples for which stage 1 is fitted; below it stage 1
            keeps the initial head's ODL (livejudge default).
        progress: show rich progress bars.
    """

    seed: int = 0
    odl_lr: float = 1e-5
    odl_batch_size: int = 64
    odl_epochs: int = 300
    dropout: float = 0.3
    scale_init: float = SCALE_INIT
    linear_lr: float = 1e-3
    linear_batch_size: int = 128
    linear_epochs: int = 300
    symmetry_lambda: float = SYMMETRY_LAMBDA
    patience: int = 20
    min_rated: int = 20
    progress: bool = True

    def validate(self) -> "TrainConfig":
        for name in ("odl_lr", "linear_lr"):
            if not getattr(self, name) > 0:
                raise TrainError(f"{name} must be positive, got {getattr(self, name)}")
        for name in ("odl_batch_size", "linear_batch_size", "odl_epochs", "linear_epochs", "patience"):
            if int(getattr(self, name)) < 1:
                raise TrainError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not 0.0 <= self.dropout < 1.0:
            raise TrainError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.scale_init <= 0:
            raise TrainError(f"scale_init must be positive, got {self.scale_init}")
        return self
