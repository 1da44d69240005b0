"""LFCC front end (ASVspoof 2019/2021 LFCC baseline style), numpy/scipy only.

16 kHz input; pre-emphasis 0.97; 20 ms Hamming window (320 samples), 10 ms hop, 512-point FFT;
power spectrum; 20 triangular filters spaced LINEARLY over 0-8000 Hz; log; DCT-II (ortho), 20
coefficients (c0..c19); deltas and delta-deltas (regression over +-2 frames) -> 60 dims/frame.
"""
from __future__ import annotations

import numpy as np
from scipy.fft import dct, rfft

SR = 16000
WIN, HOP, NFFT = 320, 160, 512


def linear_fbank(n_filters: int = 20, nfft: int = NFFT, sr: int = SR, fmin: float = 0.0, fmax: float = 8000.0):
    edges = np.linspace(fmin, fmax, n_filters + 2)
    freqs = np.arange(nfft // 2 + 1) * sr / nfft
    fb = np.zeros((n_filters, len(freqs)))
    for k in range(n_filters):
        lo, c, hi = edges[k], edges[k + 1], edges[k + 2]
        fb[k] = np.clip(np.minimum((freqs - lo) / (c - lo), (hi - freqs) / (hi - c)), 0, None)
    return fb


_FB = linear_fbank()
_WINDOW = np.hamming(WIN)


def frames(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    x = np.append(x[0], x[1:] - 0.97 * x[:-1])
    if len(x) < WIN:
        x = np.pad(x, (0, WIN - len(x)))
    n = 1 + (len(x) - WIN) // HOP
    idx = np.arange(WIN)[None, :] + HOP * np.arange(n)[:, None]
    return x[idx] * _WINDOW


def power_spectrum(x: np.ndarray) -> np.ndarray:
    """(n_frames, 257) power spectrum of the pre-emphasised, windowed frames."""
    return np.abs(rfft(frames(x), n=NFFT, axis=1)) ** 2


def deltas(c: np.ndarray, N: int = 2) -> np.ndarray:
    """Regression deltas over +-N frames along axis 0 (edge-padded)."""
    T = len(c)
    p = np.pad(c, ((N, N), (0, 0)), mode="edge")
    num = sum(n * (p[N + n:N + n + T] - p[N - n:N - n + T]) for n in range(1, N + 1))
    return num / (2 * sum(n * n for n in range(1, N + 1)))


def lfcc(x: np.ndarray, n_ceps: int = 20, with_deltas: bool = True, S: np.ndarray | None = None):
    """(n_frames, 60) LFCC + delta + delta-delta (or (n_frames, 20) static only)."""
    if S is None:
        S = power_spectrum(x)
    E = np.log(S @ _FB.T + 1e-10)
    c = dct(E, type=2, axis=1, norm="ortho")[:, :n_ceps]
    if not with_deltas:
        return c
    d = deltas(c)
    return np.concatenate([c, d, deltas(d)], axis=1)


def frame_energy_db(x: np.ndarray) -> np.ndarray:
    """Per-frame energy (dB) of the raw (not pre-emphasised) signal on the same frame grid."""
    x = np.asarray(x, np.float64)
    if len(x) < WIN:
        x = np.pad(x, (0, WIN - len(x)))
    n = 1 + (len(x) - WIN) // HOP
    idx = np.arange(WIN)[None, :] + HOP * np.arange(n)[:, None]
    return 10 * np.log10(np.mean(x[idx] ** 2, axis=1) + 1e-12)
