"""A head's frame readout: a light temporal CNN over the Whisper encoder's earlier-block frames, in NumPy.

The shipped ``whisper-fitted`` head from 0.3.0 on gives P(human) as the mean of two log-odds
(``blend``): the linear ODL head's over the window's pooled features, and this readout's over the
frames of the window's settled agent turns. The readout is several networks (``members``; 0.3.0:
seeds 0 and 1 of one recipe over tiny.en's block 2; 0.4.0: those two and one over Whisper base's
block 3), each calibrated by its own Platt step; their P are averaged. Each
member reads the frames of one encoder and block (``FrameReadoutConfig.encoders`` and ``stages``):
by default the backbone's tiny.en at ``stage``; a member may read Whisper base instead
(``whisper_blocks.BASE``, d = 512), and each distinct (encoder, block) pair is run once per turn.

One member (``benchmarks/experiments/frame_lofo``, ``lofo.py``'s docstring; trained by
``livejudge.judge.training.frame_cnn``): frames (T, d) standardised per component (``mu``, ``sd``;
d = 384 for tiny.en, 512 for base) → three dilated Conv1d layers (kernel 3, dilation 1, 2, 4,
padding keeping T; d→64→64→64), each
followed by batch normalisation (folded into the convolution at export) and ReLU → mean and sample
standard deviation (n − 1) over time, 128 values → Linear(128, 1) = s → P = sigmoid(a·s + c).

Live, each settled agent turn is run through the convolutions once (``turn_stats``: the sums the
pooling needs), and a window pools its turns' sums (``p_human``). Training ran the convolutions over
all of a dialogue's kept frames end to end; per turn, the convolution's padding meets each turn's
edge instead of the next turn's first frames (7 frames per edge of the receptive field). The live
figures are measured with this implementation (refit_v6/README.md, v11, S2).

Errors: ``FrameReadoutError`` (one line) for a missing or malformed ``frame_cnn.safetensors``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

FILE = "frame_cnn.safetensors"
DILATIONS = (1, 2, 4)
ENCODERS = ("shared", "whisper-base")
"""The encoders a member's frames may come from (``FrameReadoutConfig.encoders``): the backbone's
tiny.en, or Whisper base (``whisper_blocks.BASE``)."""
MIN_FRAMES = 8
"""Fewer kept frames than this in a window: no frame readout; P(human) is the linear head's alone
(training scored such a dialogue from a neutral input; HEURISTIC)."""


def frames_in_words(sources: list[tuple[str, int]]) -> str:
    """Distinct (encoder, block) pairs in words, e.g. "tiny.en's block-2 and Whisper base's block-3
    frames" ("the encoder's block-2 frames" when only the backbone's encoder is read). Pure; used
    by ``FrameReadoutConfig.describe`` and by the report, which reads the pairs from a result."""
    name = {"shared": "the encoder's", "whisper-base": "Whisper base's"}
    if len({e for e, _ in sources}) > 1:
        name["shared"] = "tiny.en's"
    parts = [f"{name.get(e, e)} block-{k}" for e, k in sources]
    return (" and ".join(parts) if len(parts) < 3 else ", ".join(parts[:-1]) + " and " + parts[-1]) + " frames"


class FrameReadoutError(ValueError):
    """A head's frame readout cannot be loaded; one line naming the fix."""


@dataclass(frozen=True)
class FrameReadoutConfig:
    """``config.json`` → ``frame_readout``.

    Attributes:
        stage: encoder blocks run before the readout (``WhisperBlocks(blocks=stage)``), for every
            member without its own ``stages`` entry.
        weight: w in P = sigmoid((1 − w)·logit(p_head) + w·logit(p_frames)); 0.5 shipped.
        members: networks in ``frame_cnn.safetensors`` (``m0.…``, ``m1.…``).
        keep_db: the frame selection's energy floor (``whisper_blocks.kept_frames``).
        encoders: per member, the encoder its frames come from: "shared" (the backbone's tiny.en
            model) or ``whisper_blocks.BASE`` ("whisper-base"); all "shared" when the config omits it.
        stages: per member, its encoder blocks; all ``stage`` when the config omits it.
    """

    stage: int
    weight: float
    members: int
    keep_db: float
    encoders: tuple[str, ...] = ()
    stages: tuple[int, ...] = ()

    @classmethod
    def from_dict(cls, d: dict, where: str = "head") -> "FrameReadoutConfig":
        try:
            n = int(d["members"])
            stage = int(d["stage"])
            encoders = tuple(str(e) for e in d.get("encoders", ["shared"] * n))
            stages = tuple(int(x) for x in d.get("stages", [stage] * n))
            cfg = cls(stage, float(d["weight"]), n, float(d.get("keep_db", 35.0)), encoders, stages)
        except (KeyError, TypeError, ValueError) as exc:
            raise FrameReadoutError(f"{where}: frame_readout needs stage, weight and members ({exc}); "
                                    "re-export it with livejudge.judge.training.frame_cnn") from exc
        if not 0.0 < cfg.weight < 1.0 or cfg.members < 1 or min((cfg.stage,) + cfg.stages) < 1:
            raise FrameReadoutError(f"{where}: frame_readout weight must be in (0, 1), members and stage >= 1, got {d}")
        if len(cfg.encoders) != n or len(cfg.stages) != n:
            raise FrameReadoutError(f"{where}: frame_readout lists {len(cfg.encoders)} encoders and {len(cfg.stages)} "
                                    f"stages for {n} members; give one of each per member")
        unknown = sorted(set(cfg.encoders) - set(ENCODERS))
        if unknown:
            raise FrameReadoutError(f"{where}: frame_readout names encoder(s) {unknown}; this livejudge reads "
                                    f"{list(ENCODERS)} (upgrade livejudge)")
        return cfg

    def describe(self) -> str:
        """The members' frames in words, e.g. "tiny.en's block-2 and Whisper base's block-3 frames"."""
        return frames_in_words(self.sources())

    def sources(self) -> list[tuple[str, int]]:
        """The distinct (encoder, stage) pairs the members read, in first-use order: each one
        ``WhisperBlocks`` pass per turn (``frames_for``)."""
        return list(dict.fromkeys(zip(self.encoders, self.stages)))


class FrameCNN:
    """The members of a frame readout (module docstring).

    Args:
        tensors: name → array, ``m{i}.mu`` (d,), ``m{i}.sd`` (d,) with d the member's frame width
            (384 tiny, 512 base), ``m{i}.conv{j}.weight``
            (64, C_in, 3) and ``.bias`` (64,) for j = 0, 1, 2 (batch norm folded in), ``m{i}.out.weight``
            (1, 128), ``m{i}.out.bias`` (1,), ``m{i}.platt`` (2,) = (a, c).
        config: its ``FrameReadoutConfig``.
    Raises:
        FrameReadoutError: a tensor missing or of the wrong shape.
    """

    def __init__(self, tensors: dict[str, np.ndarray], config: FrameReadoutConfig) -> None:
        self.config = config
        self.members = []
        for i in range(config.members):
            def t(name: str, shape: tuple | None = None) -> np.ndarray:
                key = f"m{i}.{name}"
                if key not in tensors:
                    raise FrameReadoutError(f"{FILE} lacks {key}: re-export the frame readout")
                a = np.asarray(tensors[key], np.float32)
                if shape is not None and a.shape != shape:
                    raise FrameReadoutError(f"{FILE}: {key} has shape {a.shape}, expected {shape}")
                return a
            convs = [(t(f"conv{j}.weight"), t(f"conv{j}.bias")) for j in range(len(DILATIONS))]
            self.members.append({"mu": t("mu"), "sd": t("sd"), "convs": convs,
                                 "out_w": t("out.weight", (1, 2 * convs[-1][0].shape[0])), "out_b": t("out.bias", (1,)),
                                 "platt": t("platt", (2,))})
        self.dims = tuple(int(m["mu"].shape[0]) for m in self.members)
        """Per member, the frame width it reads (384 for tiny.en, 512 for Whisper base)."""

    @classmethod
    def load(cls, head_dir: str | Path, config: dict) -> "FrameCNN":
        """From a head directory's ``frame_cnn.safetensors`` and its config's ``frame_readout``."""
        from safetensors.numpy import load_file

        cfg = FrameReadoutConfig.from_dict(config, str(head_dir))
        path = Path(head_dir) / FILE
        if not path.is_file():
            raise FrameReadoutError(f"{path} missing: the head's config names a frame readout; copy the whole head folder")
        return cls(load_file(str(path)), cfg)

    def turn_stats(self, frames: np.ndarray | Sequence[np.ndarray]) -> np.ndarray:
        """Per member, the last layer's sums over one turn's frames.

        Args:
            frames: float32 (T, d), the turn's kept frames (T may be 0), read by every member; or one
                such array per member (members with other encoders or stages, ``config.sources``).
        Returns:
            float64 (members, 2·64 + 1): [Σ h, Σ h², T] of the last convolution's output over time.
        Raises:
            ValueError: a member's frames are not its width (``dims``), or the list's length is not
                the member count.
        """
        per = list(frames) if isinstance(frames, (list, tuple)) else [frames] * len(self.members)
        if len(per) != len(self.members):
            raise ValueError(f"{len(per)} frame arrays for {len(self.members)} members")
        out = []
        for m, frames in zip(self.members, per):
            c = m["convs"][-1][0].shape[0]
            if len(frames) and frames.shape[1] != m["mu"].shape[0]:
                raise ValueError(f"frames of width {frames.shape[1]} for a member that reads {m['mu'].shape[0]}: "
                                 "pass each member the frames of its own encoder (config.sources)")
            if len(frames) == 0:
                out.append(np.zeros(2 * c + 1))
                continue
            h = ((np.asarray(frames, np.float32) - m["mu"]) / m["sd"]).T  # (d, T)
            for (w, b), d in zip(m["convs"], DILATIONS):
                hp = np.pad(h, ((0, 0), (d, d)))
                n = h.shape[1]
                cols = np.concatenate([hp[:, k * d:k * d + n] for k in range(3)], 0)  # (3·C_in, T)
                h = np.maximum(w.transpose(0, 2, 1).reshape(w.shape[0], -1) @ cols + b[:, None], 0.0)
            h = h.astype(np.float64)
            out.append(np.concatenate([h.sum(1), (h ** 2).sum(1), [h.shape[1]]]))
        return np.stack(out)

    def p_human(self, stats: Sequence[np.ndarray]) -> float | None:
        """P(human) of a window from its turns' ``turn_stats``: the members' calibrated P, averaged.

        Returns:
            float in (0, 1), or None with fewer than ``MIN_FRAMES`` frames in all.
        """
        if not len(stats):
            return None
        s = np.sum(np.stack(stats), axis=0)  # (members, 129)
        ps = []
        for m, row in zip(self.members, s):
            c = (len(row) - 1) // 2
            n = row[-1]
            if n < MIN_FRAMES:
                return None
            mean = row[:c] / n
            var = np.maximum(row[c:2 * c] - n * mean ** 2, 0.0) / (n - 1)
            logit = float(m["out_w"][0] @ np.concatenate([mean, np.sqrt(var)]) + m["out_b"][0])
            a, c0 = (float(v) for v in m["platt"])
            ps.append(1.0 / (1.0 + np.exp(-(a * logit + c0))))
        return float(np.mean(ps))


def blend(p_head: float, p_frames: float | None, weight: float) -> float:
    """sigmoid((1 − w)·logit(p_head) + w·logit(p_frames)); ``p_head`` when ``p_frames`` is None.

    The log-odds mean of two calibrated readouts (refit_v6/README.md, v11; the same blend as
    ``livejudge.judge.training.blend`` uses for two linear heads)."""
    if p_frames is None:
        return float(p_head)
    return float(1.0 / (1.0 + np.exp(-((1 - weight) * log_odds(p_head) + weight * log_odds(p_frames)))))


def log_odds(p: float) -> float:
    """log(p / (1 − p)) of a probability clipped to [1e-6, 1 − 1e-6] (as ``judge_lofo.logit``)."""
    p = min(max(float(p), 1e-6), 1 - 1e-6)
    return float(np.log(p / (1 - p)))



def load_frame_readout(head_dir: str | Path) -> FrameCNN | None:
    """The frame readout a head directory's config.json names (``frame_readout``), or None.

    Raises:
        FrameReadoutError: the config names one but its file or tensors are missing or malformed.
    """
    import json

    cfg = Path(head_dir) / "config.json"
    try:
        doc = json.loads(cfg.read_text())
    except (OSError, ValueError):
        return None  # the head loader reports a missing or broken config.json
    section = doc.get("frame_readout")
    return None if section is None else FrameCNN.load(head_dir, section)
