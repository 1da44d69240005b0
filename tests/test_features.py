"""Each acoustic feature on synthetic audio with a known answer (livejudge.judge.features.acoustic)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.signal import lfilter, resample_poly

from livejudge.events import BargeIn, SpeechSegment, Transition, Turn
from livejudge.judge.features import acoustic as F

SR = 16000


def harmonic(f0_hz: np.ndarray, n_harm: int = 12, amp: float = 0.3) -> np.ndarray:
    """A voiced-like signal: harmonics 1..n with 1/k amplitudes following the F0 contour (Hz per sample)."""
    phase = 2 * np.pi * np.cumsum(f0_hz) / SR
    x = np.zeros(len(f0_hz))
    for k in range(1, n_harm + 1):
        ok = k * f0_hz < SR / 2 - 500
        x += np.where(ok, np.sin(k * phase) / k, 0.0)
    return (amp * x / np.max(np.abs(x))).astype(np.float32)


def noise(n: int, dbfs: float, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(n) * 10 ** (dbfs / 20)).astype(np.float32)


def pulse_train(periods_s: np.ndarray, amps: np.ndarray, up: int = 10) -> np.ndarray:
    """Glottal-like pulses at exact times (rendered at 160 kHz, decimated to 16 kHz), through a
    500 Hz resonance so each period has one clear positive peak."""
    sr_hi = SR * up
    t = np.concatenate([[0.02], 0.02 + np.cumsum(periods_s)])
    n = int((t[-1] + 0.05) * sr_hi)
    x = np.zeros(n)
    idx = np.round(t * sr_hi).astype(int)
    x[idx[: len(amps)]] = amps[: len(idx)]
    # smooth pulse shape (Hann, 1 ms) before decimation
    w = np.hanning(int(0.001 * sr_hi))
    x = np.convolve(x, w, mode="same")
    y = resample_poly(x, 1, up)
    return (0.3 * y / np.max(np.abs(y))).astype(np.float32)


def seg(a: float, b: float) -> SpeechSegment:
    return SpeechSegment("agent", a, b)


# --------------------------------------------------------------------------- F0


def test_f0_level_and_semitone_sd_of_a_known_contour():
    # F0 = 150 Hz · 2^(3 st · sin(2π·0.5 t) / 12): median 150 Hz (= 7.02 st re 100 Hz),
    # SD of a sine of amplitude 3 st = 3/√2 = 2.121 st
    t = np.arange(int(4.0 * SR)) / SR
    st = 3.0 * np.sin(2 * np.pi * 0.5 * t)
    f0 = 150.0 * 2 ** (st / 12)
    x = harmonic(f0) + noise(len(t), -70)
    tr = F.analyse_frames(x)
    assert tr.voiced.mean() > 0.95
    stats = F.f0_stats(tr.f0_hz)
    assert stats["f0_median_hz"] == pytest.approx(150.0, rel=0.01)
    assert stats["f0_median_st"] == pytest.approx(12 * math.log2(1.5), abs=0.15)
    assert stats["f0_sd_st"] == pytest.approx(3 / math.sqrt(2), abs=0.1)
    # 10th–90th percentile of a sine of amplitude A: 2·A·sin(0.4π) = 5.71 st
    assert stats["f0_range_st"] == pytest.approx(2 * 3 * math.sin(0.4 * math.pi), abs=0.25)


@pytest.mark.parametrize("f0", [85.0, 120.0, 220.0, 400.0])
def test_constant_f0_read_within_half_a_percent(f0):
    x = harmonic(np.full(SR, f0)) + noise(SR, -70)
    tr = F.analyse_frames(x)
    v = tr.f0_hz[tr.voiced]
    assert len(v) > 80
    assert np.median(v) == pytest.approx(f0, rel=0.005)
    assert F.f0_stats(tr.f0_hz)["f0_sd_st"] < 0.05


def test_noise_and_silence_are_unvoiced():
    tr = F.analyse_frames(noise(SR, -20))
    assert tr.voiced.mean() < 0.05
    tr0 = F.analyse_frames(np.zeros(SR, dtype=np.float32))
    assert not tr0.voiced.any()
    assert np.all(tr0.db == -120.0)


# --------------------------------------------------------------------------- intensity, HNR


def test_intensity_range_of_known_amplitude_modulation():
    # a 120 Hz voice whose amplitude alternates 1.0 / 0.1 every 250 ms → 20 dB range
    n = int(4.0 * SR)
    t = np.arange(n) / SR
    env = np.where((t // 0.25) % 2 == 0, 1.0, 0.1)
    x = (harmonic(np.full(n, 120.0)) * env).astype(np.float32) + noise(n, -80)
    tr = F.analyse_frames(x)
    assert F.intensity_range_db(tr.db, tr.voiced) == pytest.approx(20.0, abs=1.0)


@pytest.mark.parametrize("hnr", [5.0, 10.0, 20.0])
def test_hnr_of_harmonic_plus_noise(hnr):
    # periodic power / noise power = hnr dB (Boersma 1993 estimates it from the autocorrelation peak)
    n = 2 * SR
    h = harmonic(np.full(n, 140.0)).astype(np.float64)
    p = np.mean(h ** 2)
    rng = np.random.default_rng(1)
    nz = rng.standard_normal(n) * math.sqrt(p / 10 ** (hnr / 10))
    x = (h + nz).astype(np.float32)
    tr = F.analyse_frames(x)
    voiced = np.isfinite(tr.f0_hz) | (tr.periodicity > 0)  # all frames: HNR is defined on the whole signal
    got = F.hnr_db(tr.periodicity, voiced)
    assert got == pytest.approx(hnr, abs=1.5)


# --------------------------------------------------------------------------- jitter, shimmer


def _periods(n: int, f0: float, delta: float) -> np.ndarray:
    T = 1.0 / f0
    return T * (1 + delta * np.where(np.arange(n) % 2 == 0, 1.0, -1.0))


@pytest.mark.parametrize("delta,expect_pct", [(0.0, 0.0), (0.01, 2.0), (0.02, 4.0)])
def test_local_jitter_of_alternating_periods(delta, expect_pct):
    # periods alternate T(1+δ), T(1−δ): |T_i − T_{i+1}| = 2δT, mean T = T → local jitter = 2δ
    periods = _periods(240, 120.0, delta)
    x = pulse_train(periods, np.ones(len(periods) + 1))
    x = x + noise(len(x), -75)
    tr = F.analyse_frames(x)
    jit, shim, pairs = F.jitter_shimmer(F.glottal_pulses(x, tr))
    assert pairs > 150
    assert jit == pytest.approx(expect_pct, abs=0.25)
    assert shim < 1.0  # equal amplitudes


def test_local_shimmer_of_alternating_amplitudes():
    # amplitudes alternate 1.0 / 0.9: |A_i − A_{i+1}| = 0.1, mean A = 0.95 → shimmer 10.5 %
    periods = _periods(240, 110.0, 0.0)
    amps = np.where(np.arange(len(periods) + 1) % 2 == 0, 1.0, 0.9)
    x = pulse_train(periods, amps)
    x = x + noise(len(x), -75)
    tr = F.analyse_frames(x)
    jit, shim, _ = F.jitter_shimmer(F.glottal_pulses(x, tr))
    assert shim == pytest.approx(100 * 0.1 / 0.95, abs=0.7)
    assert jit < 0.3


def test_jitter_needs_enough_periods():
    assert F.jitter_shimmer([]) == (math.nan, math.nan, 0) or math.isnan(F.jitter_shimmer([])[0])


# --------------------------------------------------------------------------- pauses and rhythm


def _voice_with_pauses(pause_s: list[float], speech_s: float = 1.0, f0: float = 120.0) -> tuple[np.ndarray, list]:
    parts = [noise(int(0.3 * SR), -60, 7)]
    rng = np.random.default_rng(3)
    for i, p in enumerate([None] + pause_s):
        if p is not None:
            parts.append(noise(int(p * SR), -60, i))
        n = int(speech_s * SR)
        t = np.arange(n) / SR
        # syllable-like 4 Hz amplitude modulation on a gently moving F0
        env = 0.55 + 0.45 * np.sin(2 * np.pi * 4.0 * t + rng.uniform(0, np.pi)) ** 2
        parts.append(harmonic(f0 * 2 ** (np.sin(2 * np.pi * 0.7 * t) / 12)) * env.astype(np.float32))
    parts.append(noise(int(0.3 * SR), -60, 99))
    x = np.concatenate(parts).astype(np.float32)
    return x, [Turn("agent", 0.3, len(x) / SR - 0.3, len(pause_s) + 1)]


def test_pause_durations_inside_a_turn():
    x, turns = _voice_with_pauses([0.3, 0.6])
    r = F.extract_features(x, segments=[seg(0.3, len(x) / SR - 0.3)], turns=turns)
    assert r.extra["n_pauses"] == 2
    # pauses read as the silent frames: exact lengths within 2 frames (20 ms) each
    assert r.values["pause_mean_s"] == pytest.approx(0.45, abs=0.03)
    assert r.values["pause_log_sd"] == pytest.approx(np.std(np.log10([0.3, 0.6])), abs=0.03)


def test_find_pauses_ignores_turn_edges_and_short_gaps():
    silent = np.array([1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 1], dtype=bool)
    turn = np.ones_like(silent)
    # 12-frame run (120 ms) < 150 ms is not a pause; edges are not pauses
    assert F.find_pauses(silent, turn) == []
    silent2 = np.r_[np.zeros(5), np.ones(20), np.zeros(5)].astype(bool)
    assert F.find_pauses(silent2, np.ones(30, dtype=bool)) == [(5, 25)]


def test_syllable_nuclei_count_of_a_known_syllable_train():
    # 12 "syllables": 150 ms voiced bursts at 4 per second with a 20 dB dip between them
    n = int(3.0 * SR)
    t = np.arange(n) / SR
    env = 0.1 + 0.9 * np.sin(np.pi * t / 0.25) ** 4  # 12 smooth bursts, 0.25 s apart, ~20 dB dips
    x = np.concatenate([noise(SR // 4, -70), (harmonic(np.full(n, 130.0)) * env).astype(np.float32)
                        + noise(n, -70), noise(SR // 4, -70)])
    tr = F.analyse_frames(x)
    nuc = F.syllable_nuclei(tr)
    assert len(nuc) == 12
    # isochronous: only the 10 ms frame grid (±1 frame on 250 ms, nPVI ≤ 8) separates the intervals
    assert F.npvi(np.diff(nuc) * F.HOP_S) <= 8.5


def test_npvi_known_values():
    assert F.npvi(np.array([0.2, 0.2, 0.2, 0.2])) == 0.0
    # alternating 0.1 / 0.3: |d| / mean = 0.2 / 0.2 = 1 → nPVI 100
    assert F.npvi(np.array([0.1, 0.3, 0.1, 0.3])) == pytest.approx(100.0)
    assert math.isnan(F.npvi(np.array([0.1, 0.2])))


# --------------------------------------------------------------------------- timing


def test_latency_and_yield_from_events():
    tr = [Transition("user", "agent", 1.0, 1.5), Transition("user", "agent", 5.0, 5.9),
          Transition("agent", "user", 3.0, 3.2), Transition("user", "agent", 8.0, 7.9)]
    s = F.latency_stats(tr)
    gaps = np.array([0.5, 0.9, -0.1])
    assert s["n_responses"] == 3
    assert s["response_latency_mean_s"] == pytest.approx(gaps.mean())
    assert s["response_latency_sd_s"] == pytest.approx(gaps.std(ddof=1))
    ratio, n = F.barge_in_yield([BargeIn("user", 2.0, 0.3), BargeIn("user", 4.0, None), BargeIn("agent", 6.0, 0.2)])
    assert (ratio, n) == (0.5, 2)
    assert math.isnan(F.latency_stats([])["response_latency_mean_s"])


# --------------------------------------------------------------------------- the window


def test_silent_agent_gives_nans_and_a_neutral_vector():
    x = noise(5 * SR, -70)
    r = F.extract_features(x, segments=[])
    assert r.voiced_s == 0.0 and r.speech_s == 0.0
    assert all(math.isnan(r.values[n]) for n in F.FEATURE_NAMES)
    v = r.vector()
    assert v.dtype == np.float32 and v.shape == (len(F.FEATURE_NAMES),)
    assert np.allclose(v, [f.centre for f in F.FEATURES])


def test_vector_clips_outliers_to_three_spreads():
    spec = F.BY_NAME["inter_word_floor_db"]
    r = F.FeatureResult(values={"inter_word_floor_db": -100.0}, voiced_s=0, speech_s=0, turn_s=0, n_units=0,
                        n_responses=0, n_agent_turns=0, n_barge_ins=0, n_periods=0)
    v = r.vector()
    assert v[F.FEATURE_INDEX["inter_word_floor_db"]] == pytest.approx(spec.centre - 3 * spec.spread)
    assert math.isnan(r.vector(impute=False)[F.FEATURE_INDEX["f0_sd_st"]])


def test_energy_fallback_finds_the_speech():
    x = np.concatenate([noise(SR, -70), harmonic(np.full(SR, 120.0)), noise(SR, -70)])
    segs = F.energy_segments(x)
    assert len(segs) == 1
    assert segs[0][0] == pytest.approx(1.0, abs=0.03) and segs[0][1] == pytest.approx(2.0, abs=0.05)


def test_bad_input_is_a_clear_error():
    with pytest.raises(F.FeatureError, match="mono"):
        F.extract_features(np.zeros((100, 2), dtype=np.float32))
    with pytest.raises(F.FeatureError, match="float"):
        F.extract_features(np.zeros(16000, dtype=np.int16))


def test_feature_table_is_documented():
    for f in F.FEATURES:
        assert f.unit and f.source and f.description, f.name
        assert f.spread > 0
        assert f.human_sign in (-1, 0, 1)
        assert (f.dimension == "") == (f.human_sign == 0), f.name
    assert len(set(F.FEATURE_NAMES)) == len(F.FEATURE_NAMES)


# --------------------------------------------------------------------------- heuristic detectors


def _speechlike(dur_s: float, seed: int) -> np.ndarray:
    """Voiced speech stand-in: F0 moving ±3 st at 1.5 Hz, syllable-like 4 Hz amplitude modulation."""
    n = int(dur_s * SR)
    t = np.arange(n) / SR
    ph = np.random.default_rng(seed).uniform(0, np.pi)
    env = 0.3 + 0.7 * np.sin(2 * np.pi * 2.0 * t + ph) ** 2
    return (harmonic(120.0 * 2 ** (3 * np.sin(2 * np.pi * 1.5 * t + ph) / 12)) * env).astype(np.float32)


def _bandnoise(dur_s: float, rms_dbfs: float, seed: int = 5) -> np.ndarray:
    from scipy.signal import butter

    n = int(dur_s * SR)
    b, a = butter(2, [500 / (SR / 2), 3000 / (SR / 2)], btype="band")
    y = lfilter(b, a, np.random.default_rng(seed).standard_normal(n))
    y *= 10 ** (rms_dbfs / 20) / np.sqrt(np.mean(y ** 2))
    w = np.hanning(n)
    return (y * np.sqrt(w)).astype(np.float32)


def _run(parts: list[np.ndarray]) -> F.FeatureResult:
    x = np.concatenate([noise(int(0.3 * SR), -60, 11)] + parts + [noise(int(0.3 * SR), -60, 12)])
    x = x + noise(len(x), -62, 13)
    end = len(x) / SR - 0.3
    return F.extract_features(x, segments=[seg(0.3, end)], turns=[Turn("agent", 0.3, end, 1)])


def _level_dbfs(x: np.ndarray) -> float:
    return float(10 * np.log10(np.mean(x.astype(np.float64) ** 2)))


def test_breath_noise_burst_in_a_pause_is_counted():
    v1, v2 = _speechlike(1.6, 1), _speechlike(1.6, 2)  # > 3 s of speech: rates per minute are defined
    lvl = _level_dbfs(v1)
    pause = noise(int(0.9 * SR), -60, 3)
    with_breath = pause.copy()
    burst = _bandnoise(0.35, lvl - 25.0)
    with_breath[int(0.3 * SR):int(0.3 * SR) + len(burst)] += burst
    assert _run([v1, pause, v2]).extra["n_breaths"] == 0
    r = _run([v1, with_breath, v2])
    assert r.extra["n_breaths"] == 1
    assert r.values["breath_rate_per_min"] > 0


def test_filled_pause_uh_is_counted():
    v1, v2 = _speechlike(1.2, 1), _speechlike(1.2, 2)
    n = int(0.5 * SR)
    uh = harmonic(np.full(n, 105.0)) * np.hanning(n).astype(np.float32) ** 0.25  # flat F0, steady spectrum
    p1, p2 = noise(int(0.4 * SR), -60, 4), noise(int(0.4 * SR), -60, 5)
    assert _run([v1, p1, v2]).extra["n_filled_pauses"] == 0
    assert _run([v1, p1, uh, p2, v2]).extra["n_filled_pauses"] == 1


def test_laughter_like_pulse_series_is_counted():
    # "ha ha ha ha ha": 5 calls 200 ms apart, each a 40 ms aspiration then a 110 ms voiced vowel
    calls = []
    for k in range(5):
        asp = _bandnoise(0.04, -35.0, seed=20 + k)
        n = int(0.11 * SR)
        vow = harmonic(np.linspace(180.0, 160.0, n))  # within 9 st of the speech F0 * np.hanning(n).astype(np.float32)
        calls += [asp, vow, noise(int(0.05 * SR), -60, 30 + k)]
    laugh = np.concatenate(calls)
    v1 = _speechlike(1.5, 1)
    p = noise(int(0.3 * SR), -60, 6)
    assert _run([v1, p, _speechlike(1.5, 2)]).extra["n_laughs"] == 0
    r = _run([v1, p, laugh, p, _speechlike(1.5, 2)])
    assert r.extra["n_laughs"] == 1


def test_noise_floor_between_words():
    v1, v2 = _speechlike(1.0, 1), _speechlike(1.0, 2)
    lvl = F.analyse_frames(v1).db
    lvl95 = float(np.percentile(lvl[lvl > -100], 95))
    r = _run([v1, noise(int(0.6 * SR), -60, 7), v2])
    # pause frames hold the −60 dBFS noise plus the −62 dBFS floor → −57.9 dBFS
    expect = 10 * np.log10(10 ** -6 + 10 ** -6.2) - lvl95
    assert r.values["inter_word_floor_db"] == pytest.approx(expect, abs=1.5)


# --------------------------------------------------------------------------- syllable-level features


def _syllables(f0s: list[float], amps: list[float], period_s: float = 0.25, ramp_st: float = 0.0) -> np.ndarray:
    """A train of smooth syllables (one per ``period_s``), syllable i at F0 f0s[i] and peak amplitude
    amps[i]; ``ramp_st`` adds a linear F0 glide over the last 300 ms of the train (a final rise/fall)."""
    n_syl = len(f0s)
    n = int(n_syl * period_s * SR)
    t = np.arange(n) / SR
    idx = np.minimum((t // period_s).astype(int), n_syl - 1)
    f0 = np.asarray(f0s, dtype=float)[idx]
    amp = np.asarray(amps, dtype=float)[idx]
    tail = t > t[-1] - 0.3
    f0 = f0 * 2 ** (np.where(tail, (t - (t[-1] - 0.3)) / 0.3 * ramp_st, 0.0) / 12)
    env = 0.1 + 0.9 * np.sin(np.pi * t / period_s) ** 2
    return (harmonic(f0) * (env * amp).astype(np.float32)).astype(np.float32)


def test_final_rises_and_falls():
    # three phrases of flat 120 Hz ending in +4 st, −4 st and no glide over their last 300 ms
    parts = []
    for k, ramp in enumerate([4.0, -4.0, 0.0]):
        if k:
            parts.append(noise(int(0.5 * SR), -60, 40 + k))
        parts.append(_syllables([120.0] * 6, [1.0] * 6, period_s=0.25, ramp_st=ramp) + noise(int(1.5 * SR), -70, k))
    r = _run(parts)
    assert r.extra["n_final_movements"] == 3
    assert r.values["final_rise_ratio"] == pytest.approx(1 / 3)
    assert r.values["final_movement_sd_st"] == pytest.approx(np.std([4.0, -4.0, 0.0]), abs=0.6)


def test_prominence_variability_of_alternating_syllables():
    # 12 syllables alternating 120 Hz / +4 st and amplitude 1.0 / 0.5 (6.02 dB): SDs 2 st and 3.01 dB
    f0s = [120.0 if i % 2 == 0 else 120.0 * 2 ** (4 / 12) for i in range(12)]
    amps = [1.0 if i % 2 == 0 else 0.5 for i in range(12)]
    r = _run([_syllables(f0s, amps) + noise(3 * SR, -70, 1)])
    assert r.extra["n_nuclei"] == 12
    assert r.values["nucleus_f0_sd_st"] == pytest.approx(2.0, abs=0.2)
    assert r.values["nucleus_intensity_sd_db"] == pytest.approx(20 * np.log10(2) / 2, abs=0.4)


def test_speech_rate_variability_between_phrases():
    # a phrase at 4 syllables/s and one at 8 syllables/s: rates 4 and 8 → CV = 2 / 6
    a = _syllables([120.0] * 8, [1.0] * 8, period_s=0.25) + noise(2 * SR, -70, 2)
    b = _syllables([120.0] * 16, [1.0] * 16, period_s=0.125) + noise(2 * SR, -70, 3)
    r = _run([a, noise(int(0.5 * SR), -60, 8), b])
    assert r.n_units == 2
    assert r.values["speech_rate_cv"] == pytest.approx(2.0 / 6.0, abs=0.06)


def test_arousal_proxy_is_zero_for_equal_phrases_and_grows_with_differences():
    same = [_syllables([120.0] * 8, [0.5] * 8) + noise(2 * SR, -70, 4), noise(int(0.5 * SR), -60, 9),
            _syllables([120.0] * 8, [0.5] * 8) + noise(2 * SR, -70, 5)]
    r0 = _run(same)
    assert r0.values["arousal_sd"] == pytest.approx(0.0, abs=0.05)
    # second phrase 6 st higher and 2.5× louder (+8 dB): F0 and intensity cues each move 2 z units
    loud = [same[0], same[1], _syllables([120.0 * 2 ** 0.5] * 8, [1.25] * 8) + noise(2 * SR, -70, 5)]
    r1 = _run(loud)
    # alpha ratio of the two phrases (it moves with F0 for a fixed 1/k harmonic spectrum)
    alphas = []
    for x in (same[0], loud[2]):
        tr = F.analyse_frames(x)
        alphas.append(float(np.mean(tr.alpha_db[tr.voiced])))
    dz = (6.0 / 3.0 + 20 * np.log10(2.5) / 4.0 + (alphas[1] - alphas[0]) / 4.0) / 3.0
    # SD over two phrases of the mean cue z = |difference| / 2
    assert r1.values["arousal_sd"] == pytest.approx(abs(dz) / 2, abs=0.05)
