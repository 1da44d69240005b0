"""Whisper's log-Mel spectrogram in NumPy, so the Whisper-encoder judge needs only CTranslate2.

The same computation as OpenAI Whisper's ``log_mel_spectrogram`` (whisper/audio.py) and
faster-whisper's ``FeatureExtractor``: 400-sample periodic Hann window, 160-sample hop (10 ms at
16 kHz), reflect-padded centred STFT, power spectrum with the last frame dropped, 80 Slaney-scale
Mel filters (librosa ``mel(sr=16000, n_fft=400, n_mels=80)``), ``log10`` clipped at 1e-10, floor at
``max - 8``, then ``(x + 4) / 4``. ``tests/test_log_mel.py`` checks it equals faster-whisper's
output where that package is installed.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

SAMPLE_RATE = 16000
N_FFT = 400
HOP = 160
N_MELS = 80


@lru_cache(maxsize=4)
def mel_filters(n_mels: int = N_MELS, sr: int = SAMPLE_RATE, n_fft: int = N_FFT) -> np.ndarray:
    """Slaney-scale, Slaney-normalised triangular Mel filters (librosa's default ``mel``).

    Returns:
        float32, shape (n_mels, n_fft // 2 + 1); read-only.
    """
    fftfreqs = np.fft.rfftfreq(n=n_fft, d=1.0 / sr)
    mels = np.linspace(0.0, 45.245640471924965, n_mels + 2)  # hz_to_mel(8000) on the Slaney scale
    f_sp = 200.0 / 3
    freqs = f_sp * mels
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = np.log(6.4) / 27.0
    log_t = mels >= min_log_mel
    freqs[log_t] = min_log_hz * np.exp(logstep * (mels[log_t] - min_log_mel))
    fdiff = np.diff(freqs)
    ramps = freqs.reshape(-1, 1) - fftfreqs.reshape(1, -1)
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (freqs[2:n_mels + 2] - freqs[:n_mels]))[:, None]
    out = weights.astype(np.float32)
    out.setflags(write=False)
    return out


def log_mel(x: np.ndarray, padding: int = HOP) -> np.ndarray:
    """Whisper log-Mel features of one clip.

    Args:
        x: float32 audio, shape (n_samples,), 16 kHz mono in [-1, 1]; at least 201 samples.
        padding: zero samples appended before the STFT (faster-whisper's default 160).
    Returns:
        float32, shape (80, 1 + (n_samples + padding) // 160), one column per 10 ms.
    Raises:
        ValueError: not 1-D or too short for one 400-sample frame after reflect padding.
    """
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 1 or len(x) + padding <= N_FFT // 2:
        raise ValueError(f"log_mel needs 1-D audio longer than {N_FFT // 2} samples, got shape {x.shape}")
    if padding:
        x = np.pad(x, (0, padding))
    window = np.hanning(N_FFT + 1)[:-1].astype(np.float32)
    xp = np.pad(x, (N_FFT // 2, N_FFT // 2), mode="reflect")
    n_frames = 1 + (len(xp) - N_FFT) // HOP
    frames = np.lib.stride_tricks.as_strided(xp, (n_frames, N_FFT), (HOP * xp.strides[0], xp.strides[0]))
    spec = np.fft.rfft(frames * window, n=N_FFT, axis=-1).astype(np.complex64).T  # (201, n_frames)
    power = np.abs(spec[:, :-1]) ** 2
    mel = mel_filters() @ power
    logs = np.log10(np.clip(mel, 1e-10, None))
    logs = np.maximum(logs, logs.max() - 8.0)
    return ((logs + 4.0) / 4.0).astype(np.float32)


def mel_pieces(x: np.ndarray, chunk_s: float = 30.0) -> list[np.ndarray]:
    """A Whisper encoder's input for one clip: pieces of ``chunk_s`` (30 s: the encoder's 1500
    positions × 20 ms), each at its own length, as log-mel.

    Args:
        x: float32, shape (n_samples,), 16 kHz mono, at least 0.04 s.
    Returns:
        per piece, float32 (80, 2N) log-mel (``log_mel``; an odd last column dropped, a tail under
        0.04 s zero-padded to it: its frames are masked as padding).
    Raises:
        ValueError: empty or non-1-D input.
    """
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 1 or len(x) < 640:
        raise ValueError(f"encoder input must be 1-D float32 audio of at least 0.04 s, got shape {x.shape}")
    chunk = int(chunk_s * 16000)
    out = []
    for a in range(0, len(x), chunk):
        piece = x[a:a + chunk]
        if len(piece) < 640:
            piece = np.pad(piece, (0, 640 - len(piece)))
        feats = log_mel(piece)  # (80, n_mel_frames)
        out.append(feats[:, :feats.shape[1] - feats.shape[1] % 2])
    return out
