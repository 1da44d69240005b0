"""Interpretable paralinguistic and timing features of the agent's speech (CPU, no weights).

Everything here is a pure function of float32 mono 16 kHz audio (plus, for timing, the
window's ``Transition``/``BargeIn`` events). ``extract_features`` computes the whole feature
vector for one window in one pass; the smaller functions are public so tests can check each
feature on audio with a known answer.

Signal processing (one frame analysis, 40 ms Hann frames, 10 ms hop):

* Intensity: frame RMS level in dB re full scale (dBFS).
* F0 and periodicity: the normalised autocorrelation method of Boersma (1993), "Accurate
  short-term analysis of the fundamental frequency and the harmonics-to-noise ratio of a
  sampled sound", IFA Proceedings 17: the frame's autocorrelation divided by the Hann window's
  autocorrelation, peak search for lags in [1/500 s, 1/75 s] with parabolic interpolation,
  voicing threshold 0.45 and octave cost 0.01 per octave (Praat's default values), FFTs by
  ``scipy.fft``. (``librosa.yin`` was measured at 80–190 ms per 30 s on one core here, over
  the 100 ms budget; ``librosa.pyin`` at 7.7 s.) Framing is a strided numpy view (no copy).
* HNR: 10·log10(r / (1 − r)) from the normalised autocorrelation peak r (Boersma 1993, eq. 4).
* Jitter and shimmer: glottal-period marks found by peak picking guided by the F0 track;
  local jitter = mean |T_i − T_{i+1}| / mean T; local shimmer = mean |A_i − A_{i+1}| / mean A
  (the standard "local" definitions used by MDVP and Praat), with Praat's period ceiling
  factor 1.3 and amplitude factor 1.6 between neighbours.
* Syllable nuclei: intensity peaks that are voiced, at least 2 dB above the preceding dip and
  above the median speech level (after de Jong & Wempe 2009, Behav. Res. Methods 41:385).
* Rhythm variability: nPVI of inter-nucleus intervals (Grabe & Low 2002, Papers in Lab.
  Phonology 7:515).
* Spectral balance: alpha ratio, energy 50–1000 Hz over 1–5 kHz in dB (eGeMAPS, Eyben et al.
  2016, IEEE Trans. Affective Computing 7:190), used for the arousal proxy.

Heuristic detectors (labelled as such: they are rules, not trained models): breath /
mouth-noise events inside agent pauses, filled pauses ("uh", "um": long voiced stretches with
flat F0 and a stable spectrum, after Shriberg 2001, J. Int. Phonetic Assoc. 31:153), and
laughter-like bouts (runs of ≥ 3 regularly spaced syllable-like pulses at 3–7 Hz with breathy,
low-HNR voicing, after Bachorowski, Smoski & Owren 2001, JASA 110:1581).

Missing values: a feature that the window cannot measure (no voiced speech, no responses, …)
is NaN in ``FeatureResult.values``; ``FeatureResult.vector(impute=...)`` fills NaNs with the
reference centres (``FEATURES[i].centre``), so a missing feature stands at the centre of the
reference distribution and adds nothing to the latent scores of a head normalised on it.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from livejudge.audio import SAMPLE_RATE
from livejudge.events import BargeIn, SpeechSegment, Transition, Turn

# --------------------------------------------------------------------------- constants

FRAME_S = 0.040
"""Analysis frame length, seconds (3 periods of the 75 Hz pitch floor, as Praat's pitch analysis)."""
HOP_S = 0.010
"""Analysis hop, seconds."""
F0_MIN_HZ = 75.0
"""Pitch floor, Hz (Praat's default)."""
F0_MAX_HZ = 500.0
"""Pitch ceiling, Hz."""
VOICING_THRESHOLD = 0.45
"""Minimum normalised autocorrelation peak for a voiced frame (Praat's default, Boersma 1993)."""
OCTAVE_COST = 0.01
"""Per-octave preference for higher F0 among autocorrelation peaks (Praat's default)."""
SILENCE_DB = -25.0
"""A frame is silent when it is more than 25 dB below the window's speech level (de Jong & Wempe 2009)."""
MIN_PAUSE_S = 0.15
"""Shortest silent interval counted as a pause inside a turn, seconds (Campione & Véronis 2002
count "brief" pauses from about 200 ms; 150 ms keeps them with one frame of margin)."""
TURN_MERGE_PAUSE_S = 0.8
"""Without turns in the input, segments closer than this form one turn (as livejudge.timing.turns)."""
F0_REF_HZ = 100.0
"""Reference for absolute semitone values: st = 12·log2(f0 / 100 Hz)."""

_FRAME = int(round(FRAME_S * SAMPLE_RATE))  # 640 samples
_HOP = int(round(HOP_S * SAMPLE_RATE))  # 160 samples
_NFFT = 1024  # ≥ frame + max lag (640 + 214): no circular wrap in the lags searched
_LAG_MIN = int(math.floor(SAMPLE_RATE / F0_MAX_HZ))  # 32
_LAG_MAX = int(math.ceil(SAMPLE_RATE / F0_MIN_HZ))  # 214


class FeatureError(ValueError):
    """Bad input to the feature extractor; the message names the problem and the fix."""


# --------------------------------------------------------------------------- feature table


@dataclass(frozen=True)
class FeatureSpec:
    """One feature of the acoustic backbone.

    Attributes:
        name: stable id, with its unit as suffix (``_st``, ``_db``, ``_s``, ``_pct``, ``_per_min``).
        unit: unit in words ("semitones", "dB", "s", "%", "per minute", "ratio").
        dimension: dimension id it is evidence for (see ``livejudge.judge.model.dimensions``), or ""
            when it is descriptive only (e.g. F0 level, which depends on the speaker's sex).
        centre: reference value of human conversational speech the prior centres on (also the
            value imputed when the window cannot measure the feature).
        spread: reference spread (the prior's normalisation scale), same unit.
        human_sign: +1 when larger values are more human-like, −1 when smaller are, 0 descriptive.
        source: where the definition and the reference figures come from.
        description: what is measured.
    """

    name: str
    unit: str
    dimension: str
    centre: float
    spread: float
    human_sign: int
    source: str
    description: str


# The centres and spreads below are the documented prior (``livejudge.judge.training.prior``); each
# number's source is in ``source``. A centre is the boundary between the human reference and
# the machine reference (their midpoint) where both are known; "measured on the shipped Austen
# and CMU clips" means the median over those 13 clips of livejudge/data/audio/human/ (read
# speech; librivox_two_cities is left out: it is a held-out speaker of the validity benchmark)
# computed with this module, labelled so because no published figure in these units was
# verified here. Heuristic values are labelled "heuristic".
_SPEAR_RATIO = "SPEARBench Table III: S2S pitch variability 0.118–0.299 vs human 0.321 (median model 0.164, ratio 0.51)"
FEATURES: tuple[FeatureSpec, ...] = (
    # ---- intonation
    FeatureSpec("f0_median_st", "semitones re 100 Hz", "", 0.0, 6.0, 0,
                "Boersma 1993 F0; level depends on the speaker (sex, age): descriptive only",
                "median F0 of voiced agent frames"),
    FeatureSpec("f0_sd_st", "semitones", "intonation", 1.6, 0.6, +1,
                "human 2.1 st measured on the shipped Austen and CMU clips; machine = 0.51 × human ("
                + _SPEAR_RATIO + "); centre = midpoint 1.6 st, spread 0.6 st (heuristic)",
                "standard deviation of F0 in semitones around the agent's median"),
    FeatureSpec("f0_range_st", "semitones", "intonation", 4.7, 1.5, +1,
                "human 6.2 st measured on the shipped Austen and CMU clips; machine = 0.51 × human (" + _SPEAR_RATIO
                + "); centre = midpoint 4.7 st, spread 1.5 st (heuristic)",
                "10th–90th percentile range of F0, semitones"),
    FeatureSpec("final_movement_sd_st", "semitones", "intonation", 2.5, 1.5, +1,
                "heuristic: people end phrases with varied rises and falls; rule-based TTS ends "
                "declaratives with the same fall",
                "SD across inter-pausal units of the F0 change over each unit's last 300 ms of voicing"),
    FeatureSpec("final_rise_ratio", "ratio", "intonation", 0.15, 0.15, +1,
                "heuristic: phrase-final rises (continuation rises, questions) are common in "
                "conversational English",
                "share of inter-pausal units ending in a rise of more than 1 st"),
    # ---- stress
    FeatureSpec("intensity_range_db", "dB", "stress", 15.0, 5.0, +1,
                "heuristic centre (Austen/CMU clips 9–23 dB measured); weak, low weight in the prior",
                "5th–95th percentile range of voiced-frame intensity, dB"),
    FeatureSpec("nucleus_intensity_sd_db", "dB", "stress", 2.3, 0.8, +1,
                "de Jong & Wempe 2009 nuclei; heuristic centre (Austen/CMU clips 0.9–3.3 dB measured)",
                "SD of the peak intensity of syllable nuclei, dB"),
    FeatureSpec("nucleus_f0_sd_st", "semitones", "stress", 1.6, 0.6, +1,
                "F0 prominence variability; same human reference and SPEARBench ratio as f0_sd_st",
                "SD of F0 at syllable nuclei, semitones"),
    # ---- rhythm
    FeatureSpec("speech_rate_syl_s", "syllables per s", "", 4.0, 1.5, 0,
                "de Jong & Wempe 2009; Pellegrino, Coupé & Marsico 2011 (Language 87:539) report "
                "about 6 syllables/s for read English; descriptive (rate alone is no cue)",
                "syllable nuclei per second of phonation"),
    FeatureSpec("speech_rate_cv", "ratio", "rhythm", 0.15, 0.1, +1,
                "heuristic: speaking rate varies with meaning (seed 000 App. D.1, rhythm)",
                "coefficient of variation of syllable rate across inter-pausal units"),
    FeatureSpec("npvi_nucleus", "nPVI (0–200)", "rhythm", 45.0, 10.0, +1,
                "Grabe & Low 2002: vocalic nPVI of British English about 57; this is the nPVI of "
                "inter-nucleus intervals (syllable-sized), centre 45 is heuristic (Austen/CMU clips 46–66 measured)",
                "normalised pairwise variability index of inter-nucleus intervals"),
    FeatureSpec("pause_mean_s", "s", "", 0.5, 0.3, 0,
                "Campione & Véronis 2002 (Speech Prosody): silent pauses cluster around 0.2, 0.5 "
                "and 1 s; descriptive",
                "mean duration of silent pauses (≥ 0.15 s) inside agent turns"),
    FeatureSpec("pause_log_sd", "log10 s", "rhythm", 0.1, 0.08, +1,
                "Campione & Véronis 2002: pause durations are log-normal over several categories; "
                "rule-based TTS inserts pauses of fixed length per punctuation mark (heuristic centre)",
                "SD of log10 pause durations inside agent turns"),
    FeatureSpec("hesitation_rate_per_min", "per minute", "rhythm", 10.0, 8.0, +1,
                "heuristic: short pauses inside phrases and filled pauses; weak (TTS also pauses at commas)",
                "pauses of 0.15–1 s inside turns plus filled pauses, per minute of agent speech"),
    # ---- timing (from the window's transitions and barge-ins)
    FeatureSpec("response_latency_mean_s", "s", "rhythm", 0.85, 0.5, -1,
                "SPEARBench Table III: human response latency mean 742 ms vs S2S 959–2724 ms; "
                "centre = midpoint of 742 and 959 ms; Levinson & Torreira 2015: typical gap about 200 ms",
                "mean user→agent gap (agent onset − user offset), overlaps negative"),
    FeatureSpec("response_latency_sd_s", "s", "rhythm", 0.3, 0.25, +1,
                "Stivers et al. 2009 (PNAS 106:10587): gaps spread over a few hundred ms; pipelines "
                "answer after a near-constant delay (heuristic centre)",
                "SD of user→agent gaps"),
    FeatureSpec("barge_in_yield_ratio", "ratio", "rhythm", 0.5, 0.3, +1,
                "heuristic: people usually stop when talked over; SPEARBench Table III: several S2S "
                "models never interrupt or yield (0 %)",
                "share of user barge-ins after which the agent stopped speaking"),
    # ---- micro-physiological noise
    FeatureSpec("inter_word_floor_db", "dB re speech level", "micro_physiological_noise", -55.0, 10.0, +1,
                "heuristic: 'too clean' is the machine-like end (seed 000 App. D.1); digital silence "
                "between words reads −100 dB (clipped to −85)",
                "median level of silent frames inside agent turns relative to the speech level"),
    FeatureSpec("breath_rate_per_min", "per minute", "micro_physiological_noise", 3.0, 3.0, +1,
                "heuristic: speakers breathe at phrase boundaries, several times a minute",
                "breath / mouth-noise events (unvoiced, 0.1–0.8 s, 15–45 dB below speech, in or at "
                "the edge of pauses) per minute of agent speech"),
    # ---- pronunciation instability
    FeatureSpec("jitter_local_pct", "%", "pronunciation_instability", 2.5, 1.0, +1,
                "local jitter (MDVP/Praat definition); Praat's manual cites 1.04 % as MDVP's "
                "pathology threshold for sustained vowels; connected speech reads higher (Austen/CMU "
                "clips 2.8–5.8 % measured); centre heuristic",
                "mean absolute difference of consecutive glottal periods / mean period"),
    FeatureSpec("shimmer_local_pct", "%", "", 12.0, 4.0, 0,
                "local shimmer (MDVP/Praat definition; MDVP threshold 3.81 % for sustained vowels); "
                "descriptive: espeak read higher than the human clips, so no direction is assumed",
                "mean absolute difference of consecutive period peak amplitudes / mean amplitude"),
    FeatureSpec("hnr_db", "dB", "", 11.0, 3.0, 0,
                "Boersma 1993 HNR; descriptive: no reliable direction between the shipped human "
                "and machine clips",
                "mean harmonics-to-noise ratio of voiced frames"),
    # ---- fillers and auxiliary vocalizations
    FeatureSpec("filled_pause_rate_per_min", "per minute", "use_of_fillers", 1.0, 2.0, +1,
                "Shriberg 2001: filled pauses have flat F0, long duration, stable spectrum; heuristic centre",
                "filled-pause-like stretches (voiced 0.3–1.5 s, flat F0, stable spectrum, next to a pause) per minute"),
    FeatureSpec("laughter_rate_per_min", "per minute", "auxiliary_vocalizations", 1.0, 2.0, +1,
                "Bachorowski, Smoski & Owren 2001: laughs are series of breathy pulses a few per "
                "second; heuristic centre",
                "laughter-like bouts per minute of agent speech"),
    # ---- acoustic emotion (arousal)
    FeatureSpec("arousal_sd", "z units", "acoustic_emotion", 0.25, 0.12, +1,
                "arousal cues F0 level, intensity, alpha ratio (eGeMAPS, Eyben et al. 2016); "
                "SPEARBench Table III: models' arousal tracks the human's far less (ρ 0.53 human vs "
                "−0.02–0.25); heuristic centre",
                "SD across inter-pausal units of an arousal proxy (mean of z-scored F0, intensity, alpha ratio)"),
)

CLIP_SPREADS = 3.0
"""Feature vectors are clipped to centre ± 3 spreads so one outlying value cannot dominate a
linear head (e.g. digital silence at −100 dB)."""

FEATURE_NAMES: tuple[str, ...] = tuple(f.name for f in FEATURES)
"""Feature names in vector order."""
FEATURE_INDEX: dict[str, int] = {n: i for i, n in enumerate(FEATURE_NAMES)}
BY_NAME: dict[str, FeatureSpec] = {f.name: f for f in FEATURES}


# --------------------------------------------------------------------------- frame analysis


@dataclass(frozen=True)
class FrameTrack:
    """Per-frame analysis of one signal (10 ms hop, 40 ms frames).

    Attributes:
        times_s: frame centres relative to the signal start, seconds, shape (n,).
        db: frame RMS level, dBFS (−120 for digital silence), shape (n,).
        f0_hz: F0 in Hz, NaN where unvoiced, shape (n,).
        periodicity: normalised autocorrelation peak r in [0, 1] (0 when silent), shape (n,).
        alpha_db: alpha ratio (50–1000 Hz over 1–5 kHz energy), dB, shape (n,).
        bands_db: log band energies, dB, shape (n, 8) (for spectral stability).
        analysed: True where the frame was analysed (inside the analysis region), shape (n,).
    """

    times_s: np.ndarray
    db: np.ndarray
    f0_hz: np.ndarray
    periodicity: np.ndarray
    alpha_db: np.ndarray
    bands_db: np.ndarray
    analysed: np.ndarray

    @property
    def voiced(self) -> np.ndarray:
        return np.isfinite(self.f0_hz)


_WIN = np.hanning(_FRAME + 2)[1:-1].astype(np.float32)
_WIN_AC = None  # normalised autocorrelation of the window, computed lazily
_FREQS = np.fft.rfftfreq(_NFFT, 1.0 / SAMPLE_RATE)
_BAND_EDGES_HZ = (50, 250, 500, 1000, 1500, 2000, 3000, 4000, 6000)
_BAND_IDX = [(int(np.searchsorted(_FREQS, lo)), int(np.searchsorted(_FREQS, hi)))
             for lo, hi in zip(_BAND_EDGES_HZ[:-1], _BAND_EDGES_HZ[1:])]
_ALPHA_LO = (int(np.searchsorted(_FREQS, 50)), int(np.searchsorted(_FREQS, 1000)))
_ALPHA_HI = (int(np.searchsorted(_FREQS, 1000)), int(np.searchsorted(_FREQS, 5000)))


def _window_autocorr() -> np.ndarray:
    global _WIN_AC
    if _WIN_AC is None:
        import scipy.fft

        spec = scipy.fft.rfft(_WIN.astype(np.float64), n=_NFFT)
        ac = scipy.fft.irfft(np.abs(spec) ** 2, n=_NFFT)[: _LAG_MAX + 2]
        _WIN_AC = (ac / ac[0]).astype(np.float64)
    return _WIN_AC


def _check_audio(x: np.ndarray, name: str = "audio") -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise FeatureError(f"{name} must be mono, shape (n_samples,), got shape {arr.shape}; downmix first (livejudge.audio.to_mono)")
    if not np.issubdtype(arr.dtype, np.floating):
        raise FeatureError(f"{name} must be float in [-1, 1], got {arr.dtype}; convert with livejudge.audio.pcm16_to_float32")
    return arr.astype(np.float32, copy=False)


class FrameCache:
    """Per-frame analysis reused across overlapping windows (a window every 2 s over the last
    30 s analyses each frame ~15 times otherwise). Keyed by the frame's absolute index on the
    session's 10 ms grid, in a ring of ``max_frames`` slots (20 000 frames = 200 s of audio); an
    entry is reused only when the frame's samples give the same sum and mean square (so a judge
    shared by several calls never reuses another call's frame). Thread-safe.

    The cached values are those of ``analyse_frames`` before the window-level steps (the voicing
    threshold relative to the window's loudest frame, ``_clean_f0``), so results are identical
    with and without the cache (``tests/test_acoustic_features.py``)."""

    def __init__(self, max_frames: int = 20_000) -> None:
        n = self.max_frames = int(max_frames)
        self._key = np.full(n, -1, dtype=np.int64)
        self._check = np.zeros((n, 2), dtype=np.float64)
        self._vals = np.zeros((n, 4 + len(_BAND_IDX)), dtype=np.float64)  # peak_r, lag, alpha, bands
        self._flags = np.zeros((n, 2), dtype=bool)  # has_peak, ok
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def lookup(self, keys: np.ndarray, checks: np.ndarray):
        """(hit mask, values (m, 4 + bands), flags (m, 2)) for absolute frame ``keys`` (m,)."""
        slot = keys % self.max_frames
        with self._lock:
            hit = (self._key[slot] == keys) & (self._check[slot] == checks).all(axis=1)
            vals, flags = self._vals[slot], self._flags[slot]
        return hit, vals, flags

    def store(self, keys: np.ndarray, checks: np.ndarray, vals: np.ndarray, flags: np.ndarray) -> None:
        slot = keys % self.max_frames
        with self._lock:
            self._key[slot], self._check[slot], self._vals[slot], self._flags[slot] = keys, checks, vals, flags


def _raw_frames(fr: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per-frame values of frames ``fr`` (float32, shape (m, _FRAME)) that do not depend on the
    rest of the window: (peak_r, lag, has_peak, ok, alpha_db, bands_db)."""
    import scipy.fft

    fr = (fr - fr.mean(axis=1, keepdims=True)) * _WIN
    spec = scipy.fft.rfft(fr, n=_NFFT, axis=1, workers=1)
    power = spec.real ** 2 + spec.imag ** 2
    ac = scipy.fft.irfft(power, n=_NFFT, axis=1, workers=1)[:, : _LAG_MAX + 2]
    ac0 = ac[:, :1]
    ok = ac0[:, 0] > 1e-10
    r = np.zeros(ac.shape, dtype=np.float64)
    r[ok] = (ac[ok] / ac0[ok]) / _window_autocorr()[None, :]
    lags = np.arange(_LAG_MIN, _LAG_MAX + 1)
    seg = r[:, _LAG_MIN: _LAG_MAX + 1]
    # Boersma 1993 / Praat: candidate strength r − octave_cost·log2(f_min·τ)
    score = seg - OCTAVE_COST * np.log2(F0_MIN_HZ * lags / SAMPLE_RATE)[None, :]
    # only local maxima are candidates
    is_peak = np.zeros_like(seg, dtype=bool)
    is_peak[:, 1:-1] = (seg[:, 1:-1] >= seg[:, :-2]) & (seg[:, 1:-1] > seg[:, 2:])
    score = np.where(is_peak, score, -np.inf)
    best = np.argmax(score, axis=1)
    rows = np.arange(len(fr))
    has_peak = np.isfinite(score[rows, best])
    k = best + _LAG_MIN
    y0 = r[rows, k - 1]
    y1 = r[rows, k]
    y2 = r[rows, np.minimum(k + 1, r.shape[1] - 1)]
    denom = y0 - 2 * y1 + y2
    delta = np.where(np.abs(denom) > 1e-12, 0.5 * (y0 - y2) / np.where(np.abs(denom) > 1e-12, denom, 1.0), 0.0)
    delta = np.clip(delta, -0.5, 0.5)
    peak_r = np.clip(y1 - 0.25 * (y0 - y2) * delta, 0.0, 1.0)
    lag = k + delta
    peak_r = np.where(has_peak & ok, peak_r, 0.0)
    lo = power[:, _ALPHA_LO[0]:_ALPHA_LO[1]].sum(axis=1)
    hi = power[:, _ALPHA_HI[0]:_ALPHA_HI[1]].sum(axis=1)
    alpha = 10.0 * np.log10((lo + 1e-12) / (hi + 1e-12))
    bands = np.stack([10.0 * np.log10(power[:, a:b].sum(axis=1) + 1e-12) for a, b in _BAND_IDX], axis=1)
    return peak_r, lag, has_peak, ok, alpha, bands


def analyse_frames(x: np.ndarray, region: np.ndarray | None = None, *, cache: FrameCache | None = None,
                   first_frame: int | None = None) -> FrameTrack:
    """Intensity, F0, periodicity and spectral balance per 10 ms frame (Boersma 1993).

    Args:
        x: float32 mono audio, shape (n_samples,), 16 kHz.
        region: optional bool mask over frames (shape (n_frames,), n_frames = 1 + (n − 640) // 160
            for n ≥ 640); only frames in the region get the autocorrelation and spectrum (the
            rest read silent/unvoiced). Default: all frames.
        cache, first_frame: a ``FrameCache`` and the absolute index (on the session's 10 ms
            grid) of ``x``'s first frame: frames analysed by an earlier overlapping window are
            taken from the cache. Both or neither.
    Returns:
        FrameTrack; frame i covers samples [160·i, 160·i + 640).
    Raises:
        FeatureError: not mono float audio, or a region of the wrong length.
    """
    x = _check_audio(x)
    n_frames = 0 if len(x) < _FRAME else 1 + (len(x) - _FRAME) // _HOP
    times = (np.arange(n_frames) * _HOP + _FRAME / 2) / SAMPLE_RATE
    db = np.full(n_frames, -120.0)
    f0 = np.full(n_frames, np.nan)
    per = np.zeros(n_frames)
    alpha = np.zeros(n_frames)
    bands = np.full((n_frames, len(_BAND_IDX)), -120.0)
    if region is None:
        region = np.ones(n_frames, dtype=bool)
    region = np.asarray(region, dtype=bool)
    if region.shape != (n_frames,):
        raise FeatureError(f"region must have one entry per frame ({n_frames}), got shape {region.shape}")
    if n_frames == 0 or not region.any():
        return FrameTrack(times, db, f0, per, alpha, bands, region)
    from numpy.lib.stride_tricks import as_strided

    frames_all = as_strided(x, shape=(n_frames, _FRAME), strides=(x.strides[0] * _HOP, x.strides[0]), writeable=False)
    idx = np.flatnonzero(region)
    fr = frames_all[idx].astype(np.float32)
    ms = np.mean(fr * fr, axis=1, dtype=np.float64)
    db[idx] = 10.0 * np.log10(np.maximum(ms, 1e-12))
    m = len(idx)
    peak_r, lag = np.zeros(m), np.zeros(m)
    has_peak, ok = np.zeros(m, dtype=bool), np.zeros(m, dtype=bool)
    al, bd = np.zeros(m), np.zeros((m, len(_BAND_IDX)))
    todo = np.ones(m, dtype=bool)
    use_cache = cache is not None and first_frame is not None
    if use_cache:
        keys = first_frame + idx.astype(np.int64)
        checks = np.stack([fr.sum(axis=1, dtype=np.float64), ms], axis=1)
        hit, vals, flags = cache.lookup(keys, checks)
        peak_r[hit], lag[hit], al[hit], bd[hit] = vals[hit, 0], vals[hit, 1], vals[hit, 2], vals[hit, 4:]
        has_peak[hit], ok[hit] = flags[hit, 0], flags[hit, 1]
        todo = ~hit
        cache.hits += int(hit.sum())
        cache.misses += int(todo.sum())
    if todo.any():
        rows = _raw_frames(fr[todo])
        peak_r[todo], lag[todo], has_peak[todo], ok[todo], al[todo], bd[todo] = rows
        if use_cache:
            t = np.flatnonzero(todo)
            vals = np.concatenate([np.stack([peak_r[t], lag[t], al[t], np.zeros(len(t))], axis=1), bd[t]], axis=1)
            cache.store(keys[t], checks[t], vals, np.stack([has_peak[t], ok[t]], axis=1))
    per[idx] = peak_r
    alpha[idx] = al
    bands[idx] = bd
    # voicing: periodic enough and not silent (SILENCE_DB below the loudest analysed frame, and above −70 dBFS)
    loud = db[idx] > max(np.max(db[idx]) + SILENCE_DB - 5.0, -70.0)
    voiced = (peak_r >= VOICING_THRESHOLD) & loud & has_peak
    f0_vals = np.where(voiced, SAMPLE_RATE / np.where(voiced, lag, 1.0), np.nan)
    f0[idx] = f0_vals
    f0 = _clean_f0(f0)
    return FrameTrack(times, db, f0, per, alpha, bands, region)


def _clean_f0(f0: np.ndarray) -> np.ndarray:
    """Remove isolated voiced frames and octave outliers (> 9 st from the running median)."""
    f0 = f0.copy()
    v = np.isfinite(f0)
    if v.sum() < 3:
        return np.full_like(f0, np.nan)
    # isolated single voiced frames
    iso = v & ~np.r_[False, v[:-1]] & ~np.r_[v[1:], False]
    f0[iso] = np.nan
    v = np.isfinite(f0)
    if v.sum() < 3:
        return np.full_like(f0, np.nan)
    st = 12.0 * np.log2(f0[v] / F0_REF_HZ)
    med = float(np.median(st))
    bad = np.abs(st - med) > 9.0
    vals = f0[v]
    vals[bad] = np.nan
    f0[v] = vals
    return f0


# --------------------------------------------------------------------------- intonation / stress


def semitones(f0_hz: np.ndarray, ref_hz: float = F0_REF_HZ) -> np.ndarray:
    """12·log2(f0 / ref): F0 in semitones re ``ref_hz`` (NaN stays NaN)."""
    return 12.0 * np.log2(np.asarray(f0_hz, dtype=float) / ref_hz)


def f0_stats(f0_hz: np.ndarray) -> dict[str, float]:
    """F0 level and variability of the voiced frames.

    Args:
        f0_hz: F0 per frame, Hz, NaN = unvoiced.
    Returns:
        {"f0_median_hz", "f0_median_st" (re 100 Hz), "f0_sd_st" (SD of st around the median
        speaker level), "f0_range_st" (10th–90th percentile)}; NaN when fewer than 10 voiced frames.
    """
    v = np.asarray(f0_hz, dtype=float)
    v = v[np.isfinite(v)]
    if len(v) < 10:
        return {"f0_median_hz": math.nan, "f0_median_st": math.nan, "f0_sd_st": math.nan, "f0_range_st": math.nan}
    st = semitones(v)
    p10, p90 = np.percentile(st, [10, 90])
    return {
        "f0_median_hz": float(np.median(v)),
        "f0_median_st": float(np.median(st)),
        "f0_sd_st": float(np.std(st)),
        "f0_range_st": float(p90 - p10),
    }


def intensity_range_db(db: np.ndarray, voiced: np.ndarray) -> float:
    """5th–95th percentile range of the intensity of voiced frames, dB (NaN if < 10 frames)."""
    d = np.asarray(db)[np.asarray(voiced, dtype=bool)]
    if len(d) < 10:
        return math.nan
    p5, p95 = np.percentile(d, [5, 95])
    return float(p95 - p5)


def hnr_db(periodicity: np.ndarray, voiced: np.ndarray) -> float:
    """Mean HNR of voiced frames, dB: 10·log10(r / (1 − r)) (Boersma 1993), r clipped to [1e-4, 0.9999]."""
    r = np.clip(np.asarray(periodicity)[np.asarray(voiced, dtype=bool)], 1e-4, 0.9999)
    if len(r) < 5:
        return math.nan
    return float(np.mean(10.0 * np.log10(r / (1.0 - r))))


# --------------------------------------------------------------------------- jitter / shimmer


def glottal_pulses(x: np.ndarray, track: FrameTrack) -> list[tuple[np.ndarray, np.ndarray]]:
    """Period marks in each voiced run: (times_s, amplitudes) per run.

    Peak picking guided by the F0 track: the first mark is the largest positive sample in the
    run's first period; each next one is the largest sample in [t + 0.8·T, t + 1.2·T] with T the
    local period, refined by parabolic interpolation (sub-sample time and amplitude).

    Args:
        x: float32 mono audio, 16 kHz (the signal the track was computed on).
        track: its FrameTrack.
    Returns:
        a list with one (times in s, peak amplitudes) pair per voiced run of ≥ 3 frames.
    """
    x = _check_audio(x)
    v = track.voiced
    out: list[tuple[np.ndarray, np.ndarray]] = []
    if not v.any():
        return out
    edges = np.flatnonzero(np.diff(np.r_[0, v.astype(np.int8), 0]))
    f0 = track.f0_hz
    for a, b in zip(edges[::2], edges[1::2]):
        if b - a < 3:
            continue
        start = a * _HOP + _FRAME // 4
        stop = min(len(x) - 2, (b - 1) * _HOP + 3 * _FRAME // 4)
        f_run = f0[a:b]
        t_frames = (np.arange(a, b) * _HOP + _FRAME // 2)
        period0 = SAMPLE_RATE / f_run[0]
        seg = x[start:int(start + period0) + 1]
        if len(seg) < 3:
            continue
        t = start + int(np.argmax(seg))
        times = []
        amps = []
        while True:
            T = SAMPLE_RATE / float(np.interp(t, t_frames, f_run))
            lo = int(t + 0.8 * T)
            hi = int(t + 1.2 * T) + 1
            if hi >= stop:
                break
            k = lo + int(np.argmax(x[lo:hi]))
            if 0 < k < len(x) - 1:
                y0, y1, y2 = float(x[k - 1]), float(x[k]), float(x[k + 1])
                d = y0 - 2 * y1 + y2
                dd = 0.5 * (y0 - y2) / d if abs(d) > 1e-12 else 0.0
                dd = max(-0.5, min(0.5, dd))
                times.append((k + dd) / SAMPLE_RATE)
                amps.append(y1 - 0.25 * (y0 - y2) * dd)
            t = k
        if len(times) >= 3:
            out.append((np.asarray(times), np.asarray(amps)))
    return out


def jitter_shimmer(pulses: Sequence[tuple[np.ndarray, np.ndarray]],
                   period_factor: float = 1.3, amplitude_factor: float = 1.6) -> tuple[float, float, int]:
    """Local jitter and local shimmer, percent (MDVP/Praat "local" definitions).

    jitter = mean |T_i − T_{i+1}| / mean T_i over consecutive period pairs whose ratio is below
    ``period_factor`` and whose periods lie in [1/500, 1/75] s; shimmer = mean |A_i − A_{i+1}| /
    mean A_i over consecutive pulse pairs with amplitude ratio below ``amplitude_factor``.

    Args:
        pulses: output of ``glottal_pulses``.
    Returns:
        (jitter %, shimmer %, number of period pairs used); NaNs when fewer than 10 pairs.
    """
    num_j = 0.0
    den_j = 0.0
    n_j = 0
    num_s = 0.0
    den_s = 0.0
    n_s = 0
    for times, amps in pulses:
        T = np.diff(times)
        ok = (T >= 1.0 / F0_MAX_HZ) & (T <= 1.0 / F0_MIN_HZ)
        t1, t2 = T[:-1], T[1:]
        pair = ok[:-1] & ok[1:] & (np.maximum(t1, t2) / np.minimum(t1, t2) < period_factor)
        num_j += float(np.abs(t1 - t2)[pair].sum())
        den_j += float(((t1 + t2) / 2)[pair].sum())
        n_j += int(pair.sum())
        a1, a2 = amps[:-1], amps[1:]
        okp = (a1 > 0) & (a2 > 0)
        ratio = np.where(okp, np.maximum(a1, a2) / np.where(okp, np.minimum(a1, a2), 1.0), np.inf)
        pa = okp & (ratio < amplitude_factor)
        num_s += float(np.abs(a1 - a2)[pa].sum())
        den_s += float(((a1 + a2) / 2)[pa].sum())
        n_s += int(pa.sum())
    jit = 100.0 * num_j / den_j if n_j >= 10 and den_j > 0 else math.nan
    shim = 100.0 * num_s / den_s if n_s >= 10 and den_s > 0 else math.nan
    return jit, shim, n_j


# --------------------------------------------------------------------------- rhythm


def syllable_nuclei(track: FrameTrack, mask: np.ndarray | None = None, min_dip_db: float = 2.0) -> np.ndarray:
    """Frame indices of syllable nuclei (after de Jong & Wempe 2009).

    A nucleus is a local maximum of the (3-frame smoothed) intensity that is voiced, lies above
    the median intensity of the voiced frames and rises at least ``min_dip_db`` above the dip
    since the previous accepted nucleus; at most one per 60 ms.

    Args:
        track: FrameTrack; mask: optional bool frames to consider (e.g. one turn).
    Returns:
        int array of frame indices, ascending.
    """
    from scipy.signal import find_peaks

    db = track.db
    if len(db) < 3:
        return np.zeros(0, dtype=int)
    sm = np.convolve(db, np.ones(3) / 3.0, mode="same")
    voiced = track.voiced
    ok = voiced if mask is None else voiced & mask
    if ok.sum() < 3:
        return np.zeros(0, dtype=int)
    thr = float(np.median(sm[ok]))
    peaks, _ = find_peaks(sm, height=thr, prominence=min_dip_db, distance=6)
    return peaks[ok[peaks]]


def npvi(intervals: np.ndarray) -> float:
    """Normalised pairwise variability index, 100/(m−1)·Σ|d_k − d_{k+1}| / ((d_k + d_{k+1})/2)
    (Grabe & Low 2002). NaN for fewer than 3 intervals."""
    d = np.asarray(intervals, dtype=float)
    if len(d) < 3:
        return math.nan
    return float(100.0 * np.mean(np.abs(d[:-1] - d[1:]) / ((d[:-1] + d[1:]) / 2.0)))


def silent_intervals(silent: np.ndarray, min_frames: int) -> list[tuple[int, int]]:
    """Runs of True of at least ``min_frames`` frames: [(start, stop_exclusive), ...]."""
    s = np.asarray(silent, dtype=bool)
    if not s.any():
        return []
    edges = np.flatnonzero(np.diff(np.r_[0, s.astype(np.int8), 0]))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2]) if b - a >= min_frames]


def find_pauses(silent: np.ndarray, turn_mask: np.ndarray, min_pause_s: float = MIN_PAUSE_S) -> list[tuple[int, int]]:
    """Silent pauses inside turns: runs of silent frames ≥ ``min_pause_s`` with non-silent turn
    frames on both sides (a pause at a turn's edge is not inside the turn).

    Args:
        silent: bool per frame (quieter than the speech level − 25 dB); turn_mask: bool per
            frame inside an agent turn. Frames are 10 ms apart.
    Returns:
        [(first frame, last frame + 1), ...]; duration = (b − a) · 10 ms.
    """
    silent = np.asarray(silent, dtype=bool)
    turn_mask = np.asarray(turn_mask, dtype=bool)
    n = len(silent)
    out = []
    for a, b in silent_intervals(silent & turn_mask, int(round(min_pause_s / HOP_S))):
        if a == 0 or b >= n:
            continue
        if turn_mask[a - 1] and turn_mask[b] and not silent[a - 1] and not silent[b]:
            out.append((a, b))
    return out


# --------------------------------------------------------------------------- heuristic detectors


def breath_events(track: FrameTrack, mask: np.ndarray, speech_level_db: float,
                  floor_db: float = -120.0) -> list[tuple[int, int]]:
    """Breath / mouth-noise events (HEURISTIC rule, not a trained detector).

    An event is a run of 100–800 ms of unvoiced frames (periodicity < 0.45) that are 15–45 dB
    below the speech level and at least 6 dB above the pause floor, with near-silence (frames
    20 dB below the speech level) or the turn's edge within 100 ms on at least one side:
    inhalations sit in pauses and at phrase starts.

    Args:
        track: FrameTrack of the agent audio; mask: frames to search (the agent's turns);
        speech_level_db: 95th percentile of voiced-frame dB; floor_db: median dB of pauses.
    Returns:
        [(first frame, last frame + 1), ...].
    """
    db = track.db
    mask = np.asarray(mask, dtype=bool)
    n = len(db)
    cand = (mask & ~track.voiced & (track.periodicity < VOICING_THRESHOLD)
            & (db < speech_level_db - 15.0) & (db > speech_level_db - 45.0) & (db > floor_db + 6.0))
    out = []
    for a, b in silent_intervals(cand, 10):
        if b - a > 80:
            continue
        before = db[max(0, a - 10):a]
        after = db[b:b + 10]
        quiet_b = len(before) == 0 or np.mean(before < speech_level_db - 20.0) > 0.5 or not mask[max(0, a - 1)]
        quiet_a = len(after) == 0 or np.mean(after < speech_level_db - 20.0) > 0.5 or not mask[min(b, n - 1)]
        if quiet_b or quiet_a:
            out.append((a, b))
    return out


def filled_pauses(track: FrameTrack, voiced: np.ndarray, speech_level_db: float) -> list[tuple[int, int]]:
    """Filled-pause-like stretches, "uh"/"um" (HEURISTIC rule after Shriberg 2001).

    A voiced run of 0.3–1.5 s with flat F0 (SD < 0.8 st, overall change < 2 st), a stable
    spectrum (mean frame-to-frame change of the 8 log band energies < 2 dB) and a pause (≥ 50 ms
    of frames 20 dB below the speech level) within 150 ms before or after it.

    Returns:
        [(first frame, last frame + 1), ...].
    """
    db = track.db
    st = semitones(track.f0_hz)
    quiet = db < speech_level_db - 20.0
    out = []
    for a, b in silent_intervals(np.asarray(voiced, dtype=bool), 30):
        if b - a > 150:
            continue
        run = st[a:b]
        run = run[np.isfinite(run)]
        if len(run) < 20 or np.std(run) >= 0.8:
            continue
        k = max(3, len(run) // 5)
        if abs(float(np.median(run[-k:]) - np.median(run[:k]))) >= 2.0:
            continue
        flux = float(np.mean(np.abs(np.diff(track.bands_db[a:b], axis=0))))
        if flux >= 2.0:
            continue
        if quiet[max(0, a - 15):a].sum() >= 5 or quiet[b:b + 15].sum() >= 5:
            out.append((a, b))
    return out


def laughter_bouts(track: FrameTrack, nuclei: np.ndarray, voiced: np.ndarray,
                   speaker_f0_st: float | None = None, min_rise_st: float = 3.0) -> list[tuple[int, int]]:
    """Laughter-like bouts (HEURISTIC rule after Bachorowski, Smoski & Owren 2001).

    A bout is ≥ 4 consecutive syllable nuclei at 3–7 per second with regular spacing
    (coefficient of variation of the intervals < 0.15), voicing that breaks between every two
    pulses (≥ 2 unvoiced frames: the aspirated "h" of "ha-ha"), dips of ≥ 6 dB between them
    and, when ``speaker_f0_st`` (the window's median F0, semitones re 100 Hz) is given, a median
    F0 at the pulses at least ``min_rise_st`` above it (laughs are pitched well above the
    speaker's speech, Bachorowski et al. 2001); without this last rule, the evenly timed
    syllables of rule-based TTS read as laughter.

    Returns:
        [(first nucleus frame, last nucleus frame + 1), ...], non-overlapping.
    """
    nuc = np.asarray(nuclei, dtype=int)
    voiced = np.asarray(voiced, dtype=bool)
    db = track.db
    out: list[tuple[int, int]] = []
    if len(nuc) < 4:
        return out

    def pair_ok(p: int, q: int) -> bool:
        d = (q - p) * HOP_S
        if not (1 / 7.0 <= d <= 1 / 3.0):
            return False
        between = slice(p + 1, q)
        if (~voiced[between]).sum() < 2:
            return False
        return float(min(db[p], db[q]) - np.min(db[between])) >= 6.0

    i = 0
    while i < len(nuc) - 3:
        j = i
        while j + 1 < len(nuc) and pair_ok(nuc[j], nuc[j + 1]):
            j += 1
        if j - i >= 3:
            ivs = np.diff(nuc[i:j + 1]) * HOP_S
            st_p = semitones(track.f0_hz[nuc[i:j + 1]])
            st_p = st_p[np.isfinite(st_p)]
            high = speaker_f0_st is None or (len(st_p) >= 3 and float(np.median(st_p)) >= speaker_f0_st + min_rise_st)
            if np.std(ivs) / np.mean(ivs) < 0.15 and high:
                out.append((int(nuc[i]), int(nuc[j]) + 1))
                i = j + 1
                continue
        i += 1
    return out


# --------------------------------------------------------------------------- timing


def latency_stats(transitions: Iterable[Transition]) -> dict[str, float]:
    """Response latency (user→agent ``gap_s``, seconds; negative = overlap) mean and SD.

    Returns:
        {"response_latency_mean_s", "response_latency_sd_s", "n_responses"}; the mean is NaN
        without responses, the SD NaN with fewer than 2.
    """
    gaps = np.array([t.gap_s for t in transitions if t.is_response], dtype=float)
    return {
        "response_latency_mean_s": float(gaps.mean()) if len(gaps) else math.nan,
        "response_latency_sd_s": float(gaps.std(ddof=1)) if len(gaps) >= 2 else math.nan,
        "n_responses": float(len(gaps)),
    }


def barge_in_yield(barge_ins: Iterable[BargeIn]) -> tuple[float, int]:
    """(share of user barge-ins after which the agent yielded, number of user barge-ins); NaN if none."""
    b = [x for x in barge_ins if x.by == "user"]
    if not b:
        return math.nan, 0
    return float(np.mean([x.yield_s is not None for x in b])), len(b)


# --------------------------------------------------------------------------- the window


@dataclass(frozen=True)
class FeatureResult:
    """Features of one window's agent speech.

    Attributes:
        values: feature name → value in its unit (NaN = not measurable in this window).
        voiced_s: seconds of voiced agent speech analysed.
        speech_s: seconds of agent speech (VAD segments inside the window).
        turn_s: seconds of agent turns (speech plus pauses inside turns) inside the window.
        n_units: inter-pausal units (stretches of agent speech between silent pauses ≥ 0.15 s).
        n_responses: user→agent transitions in the window.
        n_agent_turns: agent turns overlapping the window.
        n_barge_ins: user barge-ins in the window.
        n_periods: glottal period pairs used for jitter.
        extra: further named values for display (counts, F0 in Hz).
    """

    values: dict[str, float]
    voiced_s: float
    speech_s: float
    turn_s: float
    n_units: int
    n_responses: int
    n_agent_turns: int
    n_barge_ins: int
    n_periods: int
    extra: dict[str, float] = field(default_factory=dict)

    def vector(self, impute: bool = True) -> np.ndarray:
        """float32 array of shape (len(FEATURE_NAMES),) in ``FEATURE_NAMES`` order. With
        ``impute`` (the backbone's vector), NaNs are replaced by each feature's reference centre
        and values are clipped to centre ± ``CLIP_SPREADS`` spreads (see module docstring)."""
        v = np.array([self.values.get(n, math.nan) for n in FEATURE_NAMES], dtype=np.float64)
        if impute:
            centres = np.array([f.centre for f in FEATURES])
            spreads = np.array([f.spread for f in FEATURES])
            v = np.where(np.isfinite(v), v, centres)
            v = np.clip(v, centres - CLIP_SPREADS * spreads, centres + CLIP_SPREADS * spreads)
        return v.astype(np.float32)


def _intervals_to_mask(intervals: Sequence[tuple[float, float]], n_frames: int, pad_s: float = 0.0) -> np.ndarray:
    """Frames (by centre time) inside any [a − pad, b + pad) interval, seconds relative to the signal."""
    m = np.zeros(n_frames, dtype=bool)
    if n_frames == 0:
        return m
    centres = (np.arange(n_frames) * _HOP + _FRAME / 2) / SAMPLE_RATE
    for a, b in intervals:
        lo = int(np.searchsorted(centres, a - pad_s))
        hi = int(np.searchsorted(centres, b + pad_s))
        m[lo:hi] = True
    return m


def energy_segments(x: np.ndarray, floor_db: float = -55.0, range_db: float = 40.0,
                    merge_s: float = 0.3, min_s: float = 0.1) -> list[tuple[float, float]]:
    """Fallback speech segments from frame energy, used only when a window carries no VAD segments.

    Frames louder than max(``floor_db`` dBFS, loudest frame − ``range_db``) are speech; runs
    closer than ``merge_s`` are merged and runs shorter than ``min_s`` dropped.

    Returns:
        [(onset_s, offset_s), ...] relative to the start of ``x``.
    """
    x = _check_audio(x)
    n = 0 if len(x) < _FRAME else 1 + (len(x) - _FRAME) // _HOP
    if n == 0:
        return []
    from numpy.lib.stride_tricks import as_strided

    fr = as_strided(x, shape=(n, _FRAME), strides=(x.strides[0] * _HOP, x.strides[0]), writeable=False)
    db = 10.0 * np.log10(np.maximum(np.mean(fr.astype(np.float64) ** 2, axis=1), 1e-12))
    sp = db > max(floor_db, float(db.max()) - range_db)
    runs = silent_intervals(sp, 1)
    segs: list[list[float]] = []
    for a, b in runs:
        # a loud frame holds some speech: onset lies in the first loud frame's last hop, offset in the last one's first hop
        on, off = a * HOP_S + FRAME_S - HOP_S / 2, (b - 0.5) * HOP_S
        if segs and on - segs[-1][1] < merge_s:
            segs[-1][1] = off
        else:
            segs.append([on, off])
    return [(a, b) for a, b in segs if b - a >= min_s]


def extract_features(
    agent: np.ndarray,
    *,
    start_s: float = 0.0,
    segments: Sequence[SpeechSegment] | None = None,
    turns: Sequence[Turn] = (),
    transitions: Sequence[Transition] = (),
    barge_ins: Sequence[BargeIn] = (),
    frame_cache: FrameCache | None = None,
) -> FeatureResult:
    """All features of the agent's speech in one window.

    Args:
        agent: float32 mono audio of the agent channel, shape (n_samples,), 16 kHz, starting at
            session time ``start_s``.
        segments: the agent's VAD speech segments (session clock; others' segments are ignored).
            ``None`` = the window carries no VAD information: segments are found from energy
            (``energy_segments``, a fallback).
        turns: the agent's turns (session clock); pauses are measured inside them. Without
            turns, segments closer than ``TURN_MERGE_PAUSE_S`` are merged into turns.
        transitions, barge_ins: the window's timing events (session clock).
        frame_cache: reuse per-frame analysis across overlapping windows (``FrameCache``); used
            only when ``start_s`` lies on the 10 ms frame grid. Results are identical without it.
    Returns:
        FeatureResult.
    Raises:
        FeatureError: audio not mono float.
    """
    x = _check_audio(agent, "agent audio")
    dur = len(x) / SAMPLE_RATE
    n_frames = 0 if len(x) < _FRAME else 1 + (len(x) - _FRAME) // _HOP
    if segments is None:
        seg_iv = energy_segments(x)
    else:
        seg_iv = [(s.onset_s - start_s, s.offset_s - start_s) for s in segments if s.channel == "agent"]
    seg_iv = [(max(0.0, a), min(dur, b)) for a, b in seg_iv if b > 0 and a < dur and b > a]
    turn_iv = [(max(0.0, t.onset_s - start_s), min(dur, t.offset_s - start_s)) for t in turns
               if t.channel == "agent" and t.offset_s - start_s > 0 and t.onset_s - start_s < dur]
    if not turn_iv:
        # no turns given: merge segments across pauses shorter than 0.8 s (livejudge.timing.turns default)
        for a, b in sorted(seg_iv):
            if turn_iv and a - turn_iv[-1][1] < TURN_MERGE_PAUSE_S:
                turn_iv[-1] = (turn_iv[-1][0], max(turn_iv[-1][1], b))
            else:
                turn_iv.append((a, b))
    speech_mask = _intervals_to_mask(seg_iv, n_frames)
    turn_mask = _intervals_to_mask(turn_iv, n_frames) | speech_mask
    region = _intervals_to_mask(seg_iv + turn_iv, n_frames, pad_s=0.3)
    values: dict[str, float] = {n: math.nan for n in FEATURE_NAMES}
    extra: dict[str, float] = {}

    lat = latency_stats(transitions)
    values["response_latency_mean_s"] = lat["response_latency_mean_s"]
    values["response_latency_sd_s"] = lat["response_latency_sd_s"]
    y_ratio, n_b = barge_in_yield(barge_ins)
    values["barge_in_yield_ratio"] = y_ratio
    n_agent_turns = len([t for t in turns if t.channel == "agent"]) or len(seg_iv)

    first = start_s * SAMPLE_RATE / _HOP
    on_grid = frame_cache is not None and abs(first - round(first)) < 1e-6
    track = analyse_frames(x, region, cache=frame_cache if on_grid else None,
                           first_frame=int(round(first)) if on_grid else None)
    voiced = track.voiced & turn_mask
    speech_s = float(sum(b - a for a, b in seg_iv))
    turn_s = float(turn_mask.sum() * HOP_S)
    voiced_s = float(voiced.sum() * HOP_S)
    base = dict(voiced_s=voiced_s, speech_s=speech_s, turn_s=turn_s, n_responses=int(lat["n_responses"]),
                n_agent_turns=int(n_agent_turns), n_barge_ins=n_b)
    if voiced.sum() < 10:
        return FeatureResult(values=values, n_units=0, n_periods=0, extra=extra, **base)
    f0 = np.where(voiced, track.f0_hz, np.nan)
    st_all = semitones(f0)

    # ---- intonation
    fs = f0_stats(f0)
    values["f0_median_st"] = fs["f0_median_st"]
    values["f0_sd_st"] = fs["f0_sd_st"]
    values["f0_range_st"] = fs["f0_range_st"]
    extra["f0_median_hz"] = fs["f0_median_hz"]

    # ---- silence and inter-pausal units inside turns
    speech_level = float(np.percentile(track.db[voiced], 95))
    silent = turn_mask & (track.db < speech_level + SILENCE_DB)
    pauses = find_pauses(silent, turn_mask)
    # IPUs: turn frames that are not inside a pause, split at pauses and turn edges
    in_pause = np.zeros(n_frames, dtype=bool)
    for a, b in pauses:
        in_pause[a:b] = True
    ipu_mask = turn_mask & ~in_pause
    units = [(a, b) for a, b in silent_intervals(ipu_mask, 5) if voiced[a:b].sum() >= 5]
    n_units = len(units)

    # final movements: F0 change over the last 300 ms of voicing in each unit
    finals = []
    for a, b in units:
        vi = np.flatnonzero(np.isfinite(st_all[a:b]))
        if len(vi) < 8:
            continue
        last = vi[vi >= vi[-1] - 30]
        if len(last) < 5:
            continue
        slope = np.polyfit(last * HOP_S, st_all[a:b][last], 1)[0]
        finals.append(slope * (last[-1] - last[0]) * HOP_S)
    if len(finals) >= 2:
        finals_a = np.array(finals)
        values["final_movement_sd_st"] = float(np.std(finals_a))
        values["final_rise_ratio"] = float(np.mean(finals_a > 1.0))
    extra["n_final_movements"] = float(len(finals))

    # ---- stress
    values["intensity_range_db"] = intensity_range_db(track.db, voiced)
    nuc = syllable_nuclei(track, voiced)
    nuc = nuc[turn_mask[nuc]] if len(nuc) else nuc
    extra["n_nuclei"] = float(len(nuc))
    if len(nuc) >= 5:
        values["nucleus_intensity_sd_db"] = float(np.std(track.db[nuc]))
        nst = st_all[nuc]
        nst = nst[np.isfinite(nst)]
        if len(nst) >= 5:
            values["nucleus_f0_sd_st"] = float(np.std(nst))

    # ---- rhythm: rate per unit, nPVI, pauses
    phon_s = float(ipu_mask.sum() * HOP_S)
    if phon_s > 0:
        values["speech_rate_syl_s"] = len(nuc) / phon_s
    rates = []
    pvis = []
    for a, b in units:
        n_in = nuc[(nuc >= a) & (nuc < b)]
        d = (b - a) * HOP_S
        if d >= 0.5:
            rates.append(len(n_in) / d)
        if len(n_in) >= 4:
            pvis.append(np.diff(n_in) * HOP_S)
    if len(rates) >= 2 and np.mean(rates) > 0:
        values["speech_rate_cv"] = float(np.std(rates) / np.mean(rates))
    if pvis:
        values["npvi_nucleus"] = npvi(np.concatenate([p for p in pvis]))
    pause_d = np.array([(b - a) * HOP_S for a, b in pauses])
    extra["n_pauses"] = float(len(pause_d))
    if len(pause_d) >= 1:
        values["pause_mean_s"] = float(pause_d.mean())
    if len(pause_d) >= 2:
        values["pause_log_sd"] = float(np.std(np.log10(pause_d)))
    speech_min = max(phon_s, 1e-9) / 60.0

    # ---- noise floor between words (inside turns, silent frames)
    sil_frames = silent & turn_mask
    if sil_frames.sum() >= 10:
        values["inter_word_floor_db"] = float(max(np.median(track.db[sil_frames]) - speech_level, -100.0))

    # ---- heuristic detectors: breaths / mouth noise, filled pauses, laughter-like bouts
    floor_ref = float(np.median(track.db[sil_frames])) if sil_frames.sum() >= 10 else -120.0
    n_breath = len(breath_events(track, turn_mask | region, speech_level, floor_ref))
    extra["n_breaths"] = float(n_breath)
    n_filled = len(filled_pauses(track, voiced, speech_level))
    extra["n_filled_pauses"] = float(n_filled)
    n_laugh = len(laughter_bouts(track, nuc, voiced, speaker_f0_st=fs["f0_median_st"]))
    extra["n_laughs"] = float(n_laugh)

    # ---- pronunciation instability
    values["hnr_db"] = hnr_db(track.periodicity, voiced)
    masked = FrameTrack(track.times_s, track.db, f0, track.periodicity, track.alpha_db, track.bands_db, track.analysed)
    jit, shim, n_pairs = jitter_shimmer(glottal_pulses(x, masked))
    values["jitter_local_pct"] = jit
    values["shimmer_local_pct"] = shim

    # ---- arousal proxy across units
    ar = []
    for a, b in units:
        vv = voiced[a:b]
        if vv.sum() < 10:
            continue
        ar.append((float(np.nanmedian(st_all[a:b])), float(np.mean(track.db[a:b][vv])),
                   float(np.mean(track.alpha_db[a:b][vv]))))
    if len(ar) >= 2:
        arr = np.array(ar)
        # z-score each cue with a fixed reference spread (3 st, 4 dB, 4 dB; heuristic) so the
        # proxy's scale does not depend on the window; SD across units of the mean z
        z = (arr - arr.mean(axis=0)) / np.array([3.0, 4.0, 4.0])
        values["arousal_sd"] = float(np.std(z.mean(axis=1)))

    if speech_min > 0:
        values["breath_rate_per_min"] = n_breath / speech_min if phon_s >= 3.0 else math.nan
        values["filled_pause_rate_per_min"] = n_filled / speech_min if phon_s >= 3.0 else math.nan
        values["laughter_rate_per_min"] = n_laugh / speech_min if phon_s >= 3.0 else math.nan
        n_hes = int(np.sum((pause_d >= 0.15) & (pause_d <= 1.0))) + n_filled
        values["hesitation_rate_per_min"] = n_hes / speech_min if phon_s >= 3.0 else math.nan

    return FeatureResult(values=values, n_units=n_units, n_periods=n_pairs, extra=extra, **base)
