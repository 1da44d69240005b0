"""Streaming voice activity detection per channel, with noise-adaptive speech bounds.

The default detector is WebRTC's GMM VAD (package ``webrtcvad-wheels``, import ``webrtcvad``).
WebRTC reads faint noise as speech and keeps saying "speech" for up to ~140 ms after it ends
(its internal hangover), so ``StreamingVAD`` wraps it in three HEURISTIC stages:

1. **Noise-adaptive energy gate.** A per-channel ``NoiseFloor`` estimates the noise's median
   level and spread from the low percentiles of all recent 10 ms sub-frame levels (the last
   ``noise_history_s``); a frame can be speech only when its level exceeds
   ``max(energy_floor_dbfs, noise median + 1.28 σ + gate_margin_db)``. (With a fixed −50 dBFS
   gate, a channel whose noise sat at −49…−43 dBFS got offsets 100–170 ms late: WebRTC's own
   hangover frames passed the gate.) No segment opens before 0.3 s of the channel is known. A
   recording is read ahead (``StreamingVAD.prime_noise``): over its first ``noise_history_s`` the
   estimate is the one of those seconds, and the refinement's thresholds go no higher than their
   noise gives, so a recording that starts inside a phrase does not read that phrase as noise
   (trials' first turns came out short, split or lost); a live stream cannot.
2. **Voicing before opening.** A run of gated speech frames opens a segment only once it has
   ``min_voiced_s`` of periodic frames (normalised autocorrelation ≥ ``voicing_threshold`` at
   a lag of 2.5–15 ms, F0 67–400 Hz). Clicks, pops, breaths and other short non-speech bursts
   are aperiodic, so they never open a segment, whatever their energy. A segment also closes
   after ``max_unvoiced_s`` without a periodic frame (noise the gate lets through cannot hold
   a segment open for ever).
3. **Bound refinement at ``refine_ms`` (10 ms).** The onset is the start of the stretch of
   active sub-frames (gaps ≤ ``bridge_s`` bridged) that holds the first periodic frame; the
   offset is the end of the stretch that holds the last periodic frame. A sub-frame is active
   when its full-band level exceeds ``max(noise threshold, segment peak − rel_floor_db)`` or
   its high-band (> 3 kHz) level exceeds ``max(high-band noise threshold, high-band peak −
   rel_floor_db)``, so a quiet word-final /s/ stays in. Each band's noise threshold is the
   ``NOISE_TAIL_Q`` (95th) percentile of the channel's recent *quiet* sub-frames (outside open
   segments and 0.1 s lead-ins) + ``refine_margin_db``; with fewer than ``MIN_QUIET_SUBS`` of
   them (a long stretch of speech), the last such percentile if at most ``TAIL_KEEP_S`` old, else
   the normal-in-dB estimate (noise median + 2 σ + ``refine_margin_db``). The percentile
   is read off the noise itself because babble (a crowd of talkers) is not normal in dB: its
   σ, estimated from the low tail, put the old threshold 10 dB above the babble's median (word
   ends cut) and the high-band one inside the babble's own /s/ bursts (babble bridged in).
   Across a gap, a stretch needs ≥ 2 active sub-frames (a lone 10 ms noise peak is not
   speech). After a longer gap (≤ 120 ms) the offset still reaches a fricative of ≥ 30 ms (a
   word-final /s/ after a stop closure) or a loud burst of ≥ 30 ms (≥ the gate and ≥ peak −
   ``BURST_REL_DB``: a released final stop or an aperiodic word end after a short dip).
   A breath after a pause is not speech, nor is a room's decay once it has fallen
   ``rel_floor_db`` below the phrase's peak; an abrupt stop followed by a steady decay (a
   cut-off reply in a reverberant room, or the reverb of a final fricative) ends at the step
   (``_decay_cut``), and a trailing run kept only by the high band that falls ≥ 1 dB per 10 ms
   is a fricative's reverb, not the fricative (``_fading_fricative_cut``). ``rel_floor_db`` = 30 dB is the definition of the test clips' speech
   bounds (``testing.speech_bounds``). Onsets are refined again when the segment closes (its
   peak is known then; they only move later).

Bounds are acoustic, not decision times: a segment is *emitted* after ``hangover_s`` of
silence, but its offset is where speech stopped. ``adaptive=False`` gives the plain frame
VAD (fixed ``energy_floor_dbfs`` gate, bounds at whole VAD frames) for comparison.
Any detector that yields one boolean per fixed-length frame can sit behind ``FrameClassifier``;
``VADConfig(detector="silero")`` puts Silero VAD there (``SileroClassifier``). Behind these
stages it gives the same bounds as WebRTC on the issue-10 benchmark at twice the CPU cost, so
WebRTC stays the default and no CLI flag selects Silero (``benchmarks/vad_bounds.py --vad
webrtc,silero`` compares them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
from scipy.signal import firwin

from livejudge.audio import SAMPLE_RATE
from livejudge.events import Channel, SpeechSegment

GATE_Z = 1.28
"""The gate sits this many noise standard deviations (+ gate_margin_db) above the noise median
(its 90th percentile when levels are normal in dB)."""
REFINE_Z = 2.0
"""Refined bounds keep sub-frames this many σ (+ refine_margin_db) above the noise median."""
FRICATIVE_BRIDGE_S = 0.12
"""A fricative (high band ≥ full band − 3 dB) this soon after the last active sub-frame still
belongs to the segment: a word-final /s z ts dz/ follows its stop closure (≤ ~100 ms)."""
BURST_REL_DB = 20.0
"""A loud aperiodic burst (≥ 30 ms at or above both the frame gate and the segment's peak − this,
dB) within FRICATIVE_BRIDGE_S after the last active sub-frame still belongs to the segment
(HEURISTIC: a released final stop /t k/ or an aspirated or creaky word end after a short dip; a
breath is ≥ 20 dB quieter than the phrase and comes later)."""
HIGH_BAND_HZ = 3000.0
HB_TAPS = 63  # linear-phase FIR high-pass for the high band (applied zero-phase, "same")
"""Lower edge of the high band used to keep fricatives (/s/ 4–8 kHz, /f/, /θ/) in a segment, Hz."""



NOISE_TAIL_Q = 95.0
"""Refined bounds keep sub-frames above this percentile (+ ``refine_margin_db``) of the levels
of the channel's recent non-speech sub-frames, full band and high band each (HEURISTIC)."""
PRE_RUN_S = 0.1
"""Sub-frames this long before a run of gated speech frames are not counted as noise (a quiet
onset below the gate leads the run), seconds."""
TAIL_KEEP_S = 12.0
"""HEURISTIC: when the stored 6 s hold fewer than ``MIN_QUIET_SUBS`` quiet sub-frames (a long
stretch of speech), the refinement keeps the noise thresholds last read off quiet sub-frames
if they are at most this old and below the fallback, seconds. The fallback (low percentiles
of all levels) read speech as noise there: after 6 s of continuous synthetic speech on a −50 dBFS line with a
room tail, the threshold sat at −30 dBFS and a quiet voiced word end (−27 → −42 dBFS over
200 ms) was cut 140 ms early."""
MIN_QUIET_SUBS = 20
"""Quiet sub-frames (1 s) a percentile must be read off to be kept for ``TAIL_KEEP_S`` (with
20, a speech lead-in among them once kept a −18 dBFS "noise" level and cut a phrase 260 ms
short)."""
MIN_QUIET_SUBS = 20
"""Non-speech sub-frames (10 ms each) needed among the stored 6 s before their level percentile
replaces the normal-in-dB estimate (noise median + REFINE_Z σ) as the refinement threshold."""

ONSET_LOOKBACK_S = 0.5
"""How far (seconds) the adaptive VAD's onset refinement may reach back before a segment's first
periodic frame (HEURISTIC: across quiet onsets such as /h/ or a fricative)."""

class FrameClassifier(Protocol):
    """Decides speech / non-speech for one frame of ``frame_len`` samples (float32, 16 kHz)."""

    frame_len: int

    def is_speech(self, frame: np.ndarray) -> bool: ...


MAX_HANGOVER_S = 1.0
"""HEURISTIC: the longest VAD hangover accepted, seconds. A hangover longer than a pause inside one
side's speech joins the speech around it: at 2 s the example call's agent turn ran into its own
backchannel 0.6 s later and a +0.60 s gap read −1.51 s (a trial); up to 1.8 s every gap there was
right. Gaps between turns are mostly under 1 s (reference.md, human timing), so 1 s keeps a margin."""


@dataclass(frozen=True)
class VADConfig:
    """Settings of the streaming VAD (see the module docstring for the stages).

    Attributes:
        aggressiveness: WebRTC mode 0–3 (3 = most aggressive at rejecting non-speech).
        frame_ms: 10, 20 or 30 (WebRTC's allowed frame lengths).
        hangover_s: silence needed to end a segment, seconds (decision delay, not bound shift).
        min_speech_s: shortest run of gated speech frames that opens a segment, seconds.
        energy_floor_dbfs: the energy gate never goes below this frame level (dB re full
            scale); with ``adaptive=False`` it is the whole gate.
        highpass_hz: cut-off of the front-end high-pass (``livejudge.timing.frontend``) applied by
            ``Session`` and ``detect_segments`` before the VAD, Hz; None = off.
        adaptive: noise-floor gate, voicing check and refined bounds (default True).
        gate_margin_db: the gate sits this far above noise median + 1.28 σ, dB.
        refine_margin_db: refined bounds keep sub-frames this far above noise median + 2 σ, dB.
        rel_floor_db: refined bounds drop sub-frames this far below the segment's peak, dB.
        refine_ms: resolution of the refined bounds, ms (5 or 10; must divide frame_ms).
        bridge_s: gaps of inactive sub-frames up to this long stay inside a bound, seconds.
        voicing_threshold: normalised autocorrelation that makes a frame periodic (0–1).
        min_voiced_s: periodic speech needed before a segment opens, seconds.
        max_unvoiced_s: an open segment closes after this long without a periodic frame, s.
        noise_history_s: how much audio the noise floor estimate looks back on, seconds.
        detector: frame classifier behind the gate: "webrtc" (default) or "silero" (the
            Silero VAD v5 ONNX model that ships in pipecat-ai; ``SileroClassifier``).
        silero_threshold: speech probability at which Silero says speech (it stays speech
            until the probability falls below this − 0.15, as Silero's own
            ``get_speech_timestamps`` does).
    """

    aggressiveness: int = 1
    frame_ms: int = 30
    hangover_s: float = 0.3
    min_speech_s: float = 0.06
    energy_floor_dbfs: float = -50.0
    highpass_hz: float | None = 70.0
    adaptive: bool = True
    gate_margin_db: float = 3.0
    refine_margin_db: float = 2.0
    rel_floor_db: float = 30.0
    refine_ms: int = 10
    bridge_s: float = 0.05
    voicing_threshold: float = 0.5
    min_voiced_s: float = 0.06
    max_unvoiced_s: float = 1.0
    noise_history_s: float = 8.0
    detector: str = "webrtc"
    silero_threshold: float = 0.5

    def validate(self) -> "VADConfig":
        if self.detector not in ("webrtc", "silero"):
            raise ValueError(f"VAD detector must be 'webrtc' or 'silero', got {self.detector!r}")
        if not 0.0 < self.silero_threshold < 1.0:
            raise ValueError(f"silero_threshold must be in (0, 1), got {self.silero_threshold}")
        if self.aggressiveness not in (0, 1, 2, 3):
            raise ValueError(f"VAD aggressiveness must be 0–3, got {self.aggressiveness}")
        if self.frame_ms not in (10, 20, 30):
            raise ValueError(f"VAD frame must be 10, 20 or 30 ms (WebRTC), got {self.frame_ms}")
        if self.hangover_s < 0 or self.min_speech_s < 0:
            raise ValueError("VAD hangover_s and min_speech_s must be ≥ 0")
        if self.hangover_s > MAX_HANGOVER_S:  # --hangover-s 100 gave "latency p50 -0.29s" (a trial)
            raise ValueError(f"VAD hangover_s (--hangover-s) must be at most {MAX_HANGOVER_S:g} s, got {self.hangover_s:g}: "
                             "a longer hangover runs each segment across the gaps it should measure")
        if self.refine_ms not in (5, 10) or self.frame_ms % self.refine_ms:
            raise ValueError(f"VAD refine_ms must be 5 or 10 and divide frame_ms, got {self.refine_ms}")
        if self.highpass_hz is not None and not 0 < self.highpass_hz < SAMPLE_RATE / 2:
            raise ValueError(f"VAD highpass_hz must be in (0, 8000) Hz or None, got {self.highpass_hz}")
        return self


class WebRtcClassifier:
    """WebRTC VAD on one frame (float32, 16 kHz); the energy gate lives in ``StreamingVAD``."""

    def __init__(self, config: VADConfig) -> None:
        import webrtcvad

        self.frame_len = SAMPLE_RATE * config.frame_ms // 1000
        self._vad = webrtcvad.Vad(config.aggressiveness)

    def is_speech(self, frame: np.ndarray) -> bool:
        pcm = (np.clip(frame, -1.0, 32767 / 32768) * 32768.0).astype("<i2").tobytes()
        return self._vad.is_speech(pcm, SAMPLE_RATE)


class SileroClassifier:
    """Silero VAD v5 (Silero Team 2024, github.com/snakers4/silero-vad; MIT) on ``frame_ms``
    frames of float32 16 kHz audio, through pipecat-ai's ONNX wrapper (``SileroOnnxModel``) and
    the model file it ships (``pipecat/audio/vad/data/silero_vad.onnx``).

    The model takes 512-sample (32 ms) windows with a recurrent state, so frames are buffered
    and each frame's answer is the latest window's speech probability with hysteresis (speech
    from ``silero_threshold``, until below it − 0.15): decisions lag the audio by ≤ 32 ms, which
    the bound refinement removes. Cost: see ``benchmarks/vad_bounds.py --vad silero``.

    Raises:
        ImportError: pipecat-ai (with onnxruntime) is not installed; the message says how.
    """

    WINDOW = 512

    def __init__(self, config: VADConfig) -> None:
        import os

        from livejudge.sources.protocols.pipecat import import_pipecat_quietly

        (mod,) = import_pipecat_quietly(("pipecat.audio.vad.silero",),
                                        "--vad silero needs pipecat-ai: pip install 'livejudge[pipecat]'")
        path = os.path.join(os.path.dirname(mod.__file__), "data", "silero_vad.onnx")
        self._model = mod.SileroOnnxModel(path)
        self.frame_len = SAMPLE_RATE * config.frame_ms // 1000
        self._on = config.silero_threshold
        self._off = max(0.01, config.silero_threshold - 0.15)
        self._buf = np.zeros(0, dtype=np.float32)
        self._speech = False
        self.prob = 0.0

    def is_speech(self, frame: np.ndarray) -> bool:
        self._buf = np.concatenate([self._buf, np.asarray(frame, dtype=np.float32)])
        while len(self._buf) >= self.WINDOW:
            w, self._buf = self._buf[:self.WINDOW], self._buf[self.WINDOW:]
            self.prob = float(self._model(w, SAMPLE_RATE)[0, 0])
            self._speech = self.prob >= (self._off if self._speech else self._on)
        return self._speech


def make_classifier(config: VADConfig) -> FrameClassifier:
    """The frame classifier ``config.detector`` names (webrtc or silero)."""
    return SileroClassifier(config) if config.detector == "silero" else WebRtcClassifier(config)


def periodicity(x: np.ndarray, min_lag: int = 40, max_lag: int = 240) -> float:
    """Voicing strength of a frame: the largest normalised autocorrelation over lags
    ``min_lag..max_lag`` samples (default 2.5–15 ms at 16 kHz, F0 400–67 Hz).

    r(τ) = Σ x[n]x[n+τ] / sqrt(Σ x[n]² · Σ x[n+τ]²) over the overlapping parts (the
    normalisation of the YIN/"NCCF" family of pitch trackers, Talkin 1995 RAPT).
    Args: x float32/64 shape (n,), n > max_lag. Returns a float in [-1, 1]; 0 for silence.
    """
    x = np.asarray(x, dtype=np.float64)
    x = x - x.mean()
    n = len(x)
    if n <= max_lag:
        raise ValueError(f"periodicity needs more than {max_lag} samples, got {n}")
    nfft = 1 << (2 * n - 1).bit_length()
    spec = np.fft.rfft(x, nfft)
    ac = np.fft.irfft(spec.real**2 + spec.imag**2, nfft)
    c = np.cumsum(x * x)
    total = c[-1]
    if total <= 1e-12:
        return 0.0
    lags = np.arange(min_lag, max_lag + 1)
    e_head = c[n - 1 - lags]
    e_tail = total - c[lags - 1]
    r = ac[lags] / np.sqrt(e_head * e_tail + 1e-20)
    return float(r.max())


class NoiseFloor:
    """Noise level of one channel from the low percentiles of all recent sub-frame levels
    (HEURISTIC, in the spirit of minimum statistics, Martin 2001, IEEE TSAP 9:504): over a
    few seconds even continuous speech has pauses and closures, so the quietest fifth of the
    10 ms levels is noise. Assuming noise levels roughly normal in dB, its spread is
    σ = (p20 − p5) / 0.80 and its median p20 + 0.84 σ.

    ``add(levels_db)`` appends levels (dB re full scale) to a ring of ``capacity``; the
    estimates are recomputed every ``update_every`` additions (so they do not depend on how
    the stream was chunked), and are None until ``min_count`` levels have been seen.
    """

    def __init__(self, capacity: int, min_count: int = 30, update_every: int = 30) -> None:
        self._ring = np.zeros(capacity, dtype=np.float64)
        self._n = 0
        self._primed = 0  # levels read ahead (``prime``), held until the stream's own take their places
        self._since = 0
        self._min = min_count
        self._every = update_every
        self.median_db: float | None = None
        self.sigma_db: float = 0.0

    def prime(self, levels_db: np.ndarray) -> None:
        """Hold the levels of the stream's first ``capacity`` sub-frames, read ahead, before any
        ``add``: the estimate then starts from them, and each level the stream adds later takes the
        place of its own read-ahead copy, so over the stream's first ``capacity`` sub-frames the
        estimate is the one of those sub-frames, as it is of the last ``capacity`` ones later on
        (a recording that starts inside a phrase had its speech read as the noise floor). Only
        before the first ``add``."""
        if self._n:
            raise RuntimeError("NoiseFloor.prime comes before the first add")
        lv = np.asarray(levels_db, dtype=np.float64)[: len(self._ring)]
        self._ring[: len(lv)] = lv
        self._primed = len(lv)
        if self._primed >= self._min:
            self._estimate()

    def _estimate(self) -> None:
        self.median_db, self.sigma_db = _median_sigma(self._ring[: min(max(self._n, self._primed), len(self._ring))])

    def add(self, levels_db: np.ndarray) -> None:
        k = len(levels_db)
        if k == 0:
            return
        cap = len(self._ring)
        pos = self._n % cap
        if pos + k <= cap:
            self._ring[pos:pos + k] = levels_db
        else:
            self._ring[(self._n + np.arange(k)) % cap] = levels_db
        self._n += k
        self._since += k
        if max(self._n, self._primed) >= self._min and (self._since >= self._every or self.median_db is None):
            self._since = 0
            self._estimate()

    def above(self, z: float, margin_db: float) -> float | None:
        """Level z noise standard deviations + ``margin_db`` above the noise median, dBFS."""
        if self.median_db is None:
            return None
        return self.median_db + z * self.sigma_db + margin_db


def _db(power: np.ndarray) -> np.ndarray:
    return 10.0 * np.log10(power + 1e-12)


def _median_sigma(levels_db: np.ndarray) -> tuple[float, float]:
    """(median, σ) of noise sub-frame levels assumed normal in dB, read off their low percentiles
    (``NoiseFloor``): σ = (p20 − p5)/0.80 (clipped to 0.3–4 dB), median p20 + 0.84 σ, dB."""
    p5, p20 = np.percentile(levels_db, (5, 20))
    sigma = float(min(max((p20 - p5) / 0.80, 0.3), 4.0))
    return float(p20 + 0.84 * sigma), sigma


def _normal_thr(levels_db: np.ndarray, margin_db: float) -> float:
    """The normal-in-dB noise threshold of sub-frame levels (as ``NoiseFloor``: σ = (p20 − p5)/0.80,
    median p20 + 0.84 σ), ``GATE_Z`` σ + ``margin_db`` above the median, dBFS."""
    median, sigma = _median_sigma(levels_db)
    return median + GATE_Z * sigma + margin_db


class StreamingVAD:
    """Frame-by-frame VAD over one channel's stream on the session clock.

    ``push`` accepts chunks of any length (float32, 16 kHz, already high-passed when
    ``config.highpass_hz`` is set: ``Session`` and ``detect_segments`` do it); samples are
    assumed contiguous from ``start_s``. Returns the segments that closed during the push.
    """

    def __init__(self, channel: Channel, config: VADConfig | None = None,
                 classifier: FrameClassifier | None = None, start_s: float = 0.0) -> None:
        self.channel = channel
        self.config = cfg = (config or VADConfig()).validate()
        self.classifier = classifier or make_classifier(cfg)
        self.frame_len = self.classifier.frame_len
        self.frame_s = self.frame_len / SAMPLE_RATE
        self._pending = np.zeros(0, dtype=np.float32)
        self._frames_done = 0
        self._start_s = start_s
        self._hang_frames = int(round(cfg.hangover_s / self.frame_s))
        self._min_frames = max(1, int(round(cfg.min_speech_s / self.frame_s)))
        # run state
        self._run_start: int | None = None  # first voiced frame of the current candidate run
        self._run_voiced = 0
        self._last_voiced: int | None = None  # last voiced frame index
        self._open = False
        # adaptive state
        self._adaptive = cfg.adaptive
        self._fixed_gate_db = cfg.energy_floor_dbfs
        self._sub_len = SAMPLE_RATE * cfg.refine_ms // 1000
        self._sub_s = self._sub_len / SAMPLE_RATE
        self._spf = self.frame_len // self._sub_len  # sub-frames per frame
        self._block_subs = self._spf * max(1, int(1.0 / self.frame_s))  # sub-frames per push block
        self._hb_fir = firwin(HB_TAPS, HIGH_BAND_HZ, pass_zero=False, fs=SAMPLE_RATE)
        cap = int(round(6.0 / self._sub_s))  # 6 s of sub-frame levels (and audio) for refinement
        self._lvl = np.full(cap, -120.0)
        self._audio = np.zeros((cap, self._sub_len))  # high-band levels are computed from it
        self._quiet = np.zeros(cap, dtype=bool)  # sub-frame outside any speech run or segment
        self._tail_db: float | None = None  # NOISE_TAIL_Q level of the quiet sub-frames, dBFS
        self._tail_kept: tuple[int, float, float] | None = None  # (sub-frame, _tail_db, _hb_thr) last read
        self._hbc = np.zeros(0)  # high-band levels of sub-frames _hbc_lo.. (at each refinement)
        self._hbc_lo = 0
        self._hb_thr = -120.0
        self._cap = cap
        self._subs_done = 0
        hist = max(1, int(round(cfg.noise_history_s / self._sub_s)))
        self._noise = NoiseFloor(hist)
        self._ctx = np.zeros(max(0, 480 - self.frame_len), dtype=np.float32)  # periodicity context
        self._min_periodic = max(1, int(round(cfg.min_voiced_s / self.frame_s)))
        self._max_unvoiced = max(1, int(round(cfg.max_unvoiced_s / self.frame_s)))
        self._bridge = int(round(cfg.bridge_s / self._sub_s))
        self._fric_bridge = int(round(FRICATIVE_BRIDGE_S / self._sub_s))
        self._pre_run = int(round(PRE_RUN_S / self._sub_s))
        self._first_periodic: int | None = None
        self._last_periodic: int | None = None
        self._run_periodic = 0
        self._peak_db = -120.0
        self._peak_hb_db = -120.0
        self._onset_s: float | None = None
        self._prev_offset_s = float("-inf")  # the last segment's offset: the next onset is not before it
        self._hi_sub = -1  # newest sub-frame whose levels are stored
        # read ahead (prime_noise): the noise thresholds of the channel's first seconds (high band;
        # full band, before refine_margin_db), and how many sub-frames they cover (within them, the
        # refinement's thresholds go no higher than these)
        self._prime_hb_thr = float("inf")
        self._prime_tail_db = float("inf")
        self._primed_subs = 0

    # ------------------------------------------------------------------ public state
    @property
    def time_s(self) -> float:
        """Session time up to which frames have been classified."""
        return self._start_s + self._frames_done * self.frame_s

    @property
    def open_onset_s(self) -> float | None:
        """Onset of the segment in progress (speech now), or None."""
        if self._open and self._run_start is not None:
            if self._onset_s is not None:
                return self._onset_s
            return self._start_s + self._run_start * self.frame_s
        return None

    @property
    def onset_floor_s(self) -> float:
        """Earliest onset any segment not yet emitted can still get, session seconds.

        A lower bound for incremental turn-taking (``livejudge.timing.timeline``): the open segment's or
        the candidate run's first frame, else the classified time; minus ``ONSET_LOOKBACK_S``
        with the adaptive VAD, whose onset refinement (also re-run at close) may reach that far
        back before the first periodic frame.
        """
        if self._run_start is not None:
            t = self._start_s + self._run_start * self.frame_s
            if self._open and self.open_onset_s is not None:
                t = min(t, self.open_onset_s)
        else:
            t = self.time_s
        return t - ONSET_LOOKBACK_S if self._adaptive else t

    @property
    def last_voiced_s(self) -> float | None:
        """End of the last voiced frame of the open segment, or None."""
        if self._open and self._last_voiced is not None:
            return self._start_s + (self._last_voiced + 1) * self.frame_s
        return None

    @property
    def noise_floor_dbfs(self) -> float | None:
        """Median noise level of recent 10 ms sub-frames, dBFS (None until 0.3 s seen)."""
        return self._noise.median_db

    @property
    def gate_dbfs(self) -> float:
        """Current energy gate of the frame VAD, dBFS."""
        g = self._noise.above(GATE_Z, self.config.gate_margin_db) if self._adaptive else None
        return self._fixed_gate_db if g is None else max(self._fixed_gate_db, g)

    # ------------------------------------------------------------------ streaming
    def prime_noise(self, samples: np.ndarray) -> None:
        """Start the noise floor (``NoiseFloor.prime``) from the channel's first seconds, read ahead:
        a recording's first ``noise_history_s`` (front end applied, as ``push`` gets them), before
        the first ``push``. Without it the floor is learnt from the stream's start, and a recording
        that starts inside a phrase read that phrase as noise: a new user's trial cut a call 0.2 s
        into a caller's phrase and measured it 1.6 s long for 2.5 s, a 0.35 s reply as 1.02 s, or
        lost it. A live stream cannot read ahead (its first phrase stays so). No effect with
        ``adaptive=False``.

        Args:
            samples: float32, shape (n,), 16 kHz, high-passed as ``push``'s input.
        Raises:
            RuntimeError: after the first ``push``.
        """
        if not self._adaptive:
            return
        if self._frames_done or self._pending.size:
            raise RuntimeError("StreamingVAD.prime_noise comes before the first push")
        x = np.asarray(samples, dtype=np.float64).reshape(-1)
        n = len(x) // self._sub_len
        if n < self._noise._min:
            return
        u = x[: n * self._sub_len].reshape(n, self._sub_len)
        lvl = _db(np.einsum("ij,ij->i", u, u) / self._sub_len)
        self._noise.prime(lvl)
        self._primed_subs = n
        # each band's noise threshold as the refinement reads it off quiet sub-frames (their
        # NOISE_TAIL_Q percentile), here those under the frame gate: read off the noise itself
        noise = lvl < self.gate_dbfs
        if int(noise.sum()) >= MIN_QUIET_SUBS:
            hb = np.convolve(u.reshape(-1), self._hb_fir, mode="same").reshape(n, -1)
            hbl = _db(np.einsum("ij,ij->i", hb, hb) / self._sub_len)
            self._prime_hb_thr = float(np.percentile(hbl[noise], NOISE_TAIL_Q)) + self.config.refine_margin_db
            self._prime_tail_db = float(np.percentile(lvl[noise], NOISE_TAIL_Q))

    def push(self, samples: np.ndarray) -> list[SpeechSegment]:
        x = np.asarray(samples, dtype=np.float32)
        if self._pending.size:
            x = np.concatenate([self._pending, x])
        n_frames = len(x) // self.frame_len
        out: list[SpeechSegment] = []
        block = self._block_subs * self._sub_len  # ≤ 1 s at a time: the level
        for a in range(0, n_frames * self.frame_len, block):     # ring holds 6 s
            out += self._push_frames(x[a:min(a + block, n_frames * self.frame_len)])
        self._pending = x[n_frames * self.frame_len:].copy()
        return out

    def _push_frames(self, used: np.ndarray) -> list[SpeechSegment]:
        """Classify whole frames (len(used) is a multiple of frame_len)."""
        out: list[SpeechSegment] = []
        fl, spf = self.frame_len, self._spf
        n_frames = len(used) // fl
        u = used.astype(np.float64)
        pw = np.einsum("ij,ij->i", u.reshape(-1, self._sub_len), u.reshape(-1, self._sub_len)) / self._sub_len
        frame_db = _db(pw.reshape(n_frames, spf).mean(axis=1))
        if self._adaptive:
            lvl = _db(pw)
            pos, k = self._subs_done % self._cap, len(lvl)
            if pos + k <= self._cap:
                self._lvl[pos:pos + k] = lvl
                self._audio[pos:pos + k] = u.reshape(k, self._sub_len)
            else:
                idx = (self._subs_done + np.arange(k)) % self._cap
                self._lvl[idx] = lvl
                self._audio[idx] = u.reshape(k, self._sub_len)
            frame_peak = lvl.reshape(n_frames, spf).max(axis=1)
            ctx = np.concatenate([self._ctx, used]) if self._ctx.size else used
            off = len(self._ctx)
        for k in range(n_frames):
            frame = used[k * fl:(k + 1) * fl]
            if not self._adaptive:
                voiced = frame_db[k] >= self._fixed_gate_db and self.classifier.is_speech(frame)
                seg = self._step(voiced)
            else:
                self._hi_sub = self._subs_done + spf - 1
                voiced = frame_db[k] >= self.gate_dbfs and self.classifier.is_speech(frame)
                periodic = False
                if voiced:
                    a = off + (k + 1) * fl
                    win = ctx[max(0, a - 480):a]
                    periodic = len(win) > 240 and periodicity(win) >= self.config.voicing_threshold
                seg = self._step_adaptive(voiced, periodic, float(frame_peak[k]))
                self._noise.add(lvl[k * spf:(k + 1) * spf])
                # noise only: no gated speech now, no open segment (nor its hangover); a run's
                # lead-in is un-flagged when the run starts and when its segment opens
                self._quiet[(self._subs_done + np.arange(spf)) % self._cap] = not voiced and not self._open
            self._subs_done += spf
            if seg is not None:
                out.append(seg)
        self._hi_sub = self._subs_done - 1
        if self._adaptive and self._ctx.size:
            self._ctx = ctx[-len(self._ctx):].copy()
        return out

    def _step(self, voiced: bool) -> SpeechSegment | None:
        """Plain frame VAD (``adaptive=False``)."""
        i = self._frames_done
        self._frames_done += 1
        if voiced:
            if self._run_start is None:
                self._run_start = i
                self._run_voiced = 0
            self._run_voiced += 1
            self._last_voiced = i
            if not self._open and self._run_voiced >= self._min_frames:
                self._open = True
            return None
        return self._step_silent(i)

    def _step_silent(self, i: int) -> SpeechSegment | None:
        """A non-speech frame ``i`` (both VADs): end a segment after the hangover; forget a
        candidate run too short to open once a silence as long as the hangover passes."""
        if self._run_start is None:
            return None
        assert self._last_voiced is not None
        silent = i - self._last_voiced
        if not self._open:
            if silent > self._hang_frames:
                self._run_start = None
            return None
        if silent >= self._hang_frames:
            return self._close()
        return None

    def _step_adaptive(self, voiced: bool, periodic: bool, peak_db: float) -> SpeechSegment | None:
        i = self._frames_done
        self._frames_done += 1
        if voiced:
            if self._run_start is None:
                self._run_start = i
                self._run_voiced = 0
                self._run_periodic = 0
                # a quiet speech onset (below the gate) may lead the run: not noise either
                a = i * self._spf
                self._quiet[np.arange(max(self._oldest_sub(), a - self._pre_run), a) % self._cap] = False
                self._first_periodic = None
                self._peak_db = -120.0
            self._run_voiced += 1
            self._last_voiced = i
            self._peak_db = max(self._peak_db, peak_db)
            if periodic:
                self._run_periodic += 1
                self._last_periodic = i
                if self._first_periodic is None:
                    self._first_periodic = i
            if (not self._open and self._run_voiced >= self._min_frames
                    and self._run_periodic >= self._min_periodic
                    and self._noise.median_db is not None):  # no speech before the floor is known
                self._open = True
                self._onset_s = self._refine_onset()
                # PRE_RUN_S before the refined onset on is speech (even below the gate); what the
                # run held before that was noise (e.g. while the noise floor was still unknown)
                a = int(round((self._onset_s - self._start_s) / self._sub_s)) - self._pre_run
                r0 = self._run_start * self._spf
                self._quiet[np.arange(max(a, self._oldest_sub()), max(a, r0)) % self._cap] = False
                self._quiet[np.arange(max(r0, self._oldest_sub()), a) % self._cap] = True
            if self._open and self._last_periodic is not None and i - self._last_periodic >= self._max_unvoiced:
                return self._close()
            return None
        return self._step_silent(i)

    # ------------------------------------------------------------------ refinement
    def _prepare_high_band(self) -> None:
        """High-band (> 3 kHz) levels of the stored sub-frames, the noise thresholds of both
        bands and the current run's high-band peak: computed from the stored audio only when
        bounds are refined (once or twice per segment), not for every frame.

        Noise thresholds (HEURISTIC): with ≥ ``MIN_QUIET_SUBS`` quiet (non-speech) sub-frames
        among the stored 6 s, each band's threshold is their ``NOISE_TAIL_Q`` percentile level;
        otherwise the normal-in-dB estimate from the low percentiles of all levels (as
        ``NoiseFloor``). The percentile is read off the noise itself because babble (a crowd of
        talkers) is not normal in dB: its 10 ms levels have a long low tail and a short high
        one (at −40 dBFS, p5/p50/p95/p99 = −7.0/0/+3.9/+5.2 dB re median full band, −10.3/0/
        +9.2/+12.6 dB in the high band), so a σ read from the low tail put the full-band
        threshold 10 dB above the median (word ends cut) and the high-band one inside the
        babble's own peaks (babble bridged into bounds). For white and room noise both estimates
        agree within 0.6 dB.
        """
        hi = self._hi_sub
        lo = self._oldest_sub()  # the whole stored 6 s: the onset and the quiet sub-frames
        idx = np.arange(lo, hi + 1) % self._cap
        hb = np.convolve(self._audio[idx].reshape(-1), self._hb_fir, mode="same").reshape(len(idx), -1)
        self._hbc = _db(np.einsum("ij,ij->i", hb, hb) / self._sub_len)
        self._hbc_lo = lo
        quiet = self._quiet[idx]
        n_quiet = int(quiet.sum())
        if n_quiet >= MIN_QUIET_SUBS:
            self._tail_db = float(np.percentile(self._lvl[idx][quiet], NOISE_TAIL_Q))
            self._hb_thr = float(np.percentile(self._hbc[quiet], NOISE_TAIL_Q)) + self.config.refine_margin_db
            self._tail_kept = (hi, self._tail_db, self._hb_thr)
        else:
            self._tail_db = None
            self._hb_thr = _normal_thr(self._hbc, self.config.refine_margin_db)
            kept = self._tail_kept
            fallback = self._noise.above(REFINE_Z, 0.0)
            if (kept is not None and (hi - kept[0]) * self._sub_s <= TAIL_KEEP_S
                    and (fallback is None or kept[1] < fallback)):
                # a long stretch of speech left too few quiet sub-frames in the stored 6 s: the
                # last percentile read off them still holds where the low percentiles of all
                # levels read speech as noise (it is lower; a higher one was read off a speech
                # lead-in among too few quiet sub-frames: once −18 dBFS, a phrase cut 260 ms short)
                self._tail_db, self._hb_thr = kept[1], min(kept[2], self._hb_thr)
        if hi < self._primed_subs:
            # a recording read ahead (prime_noise), within its first seconds: the stored levels may be
            # mostly speech (a recording that starts inside a phrase), their low percentiles read it as
            # noise, and its "quiet" sub-frames may be a word's first frames that the frame VAD had not
            # yet called speech, so a phrase's end fell under the threshold (trials J and K: a call cut
            # inside a phrase lost its last 0.2–0.3 s, wideband and over μ-law): neither band's
            # threshold goes higher than the noise of the first seconds gives
            self._hb_thr = min(self._hb_thr, self._prime_hb_thr)
            if self._tail_db is not None:  # the full band's, read off quiet sub-frames, likewise
                self._tail_db = min(self._tail_db, self._prime_tail_db)
        run0 = max(lo, (self._run_start or 0) * self._spf)
        self._peak_hb_db = float(self._hbc[run0 - lo:].max()) if hi >= run0 else -120.0

    def _thresholds(self) -> tuple[float, float]:
        cfg = self.config
        if self._tail_db is not None:
            n: float | None = self._tail_db + cfg.refine_margin_db
        else:
            n = self._noise.above(REFINE_Z, cfg.refine_margin_db)
        n = self._fixed_gate_db - cfg.gate_margin_db if n is None else n
        thr = max(n, self._peak_db - cfg.rel_floor_db)
        thr_hb = max(self._hb_thr, self._peak_hb_db - cfg.rel_floor_db)
        return thr, thr_hb

    def _hbl(self, j: int) -> float:
        k = j - self._hbc_lo
        return float(self._hbc[k]) if 0 <= k < len(self._hbc) else -120.0

    def _active(self, j: int, thr: float, thr_hb: float) -> bool:
        return bool(self._lvl[j % self._cap] > thr or self._hbl(j) > thr_hb)

    def _oldest_sub(self) -> int:
        """Oldest sub-frame surely still in the ring: a block (≤ 1 s) of levels is stored before
        its frames are classified, so mid-block the ring already holds sub-frames past
        ``_hi_sub``; counting from ``_hi_sub`` keeps the result independent of chunking."""
        return max(0, self._hi_sub + 1 - self._cap + self._block_subs)

    def _refine_onset(self) -> float:
        """Start of the active stretch holding the first periodic frame, session seconds."""
        assert self._first_periodic is not None
        self._prepare_high_band()
        thr, thr_hb = self._thresholds()
        s0 = self._first_periodic * self._spf
        lo = max(self._oldest_sub(), s0 - int(round(ONSET_LOOKBACK_S / self._sub_s)))
        # the first active sub-frame of the periodic frame, then back across active stretches
        top = min(self._hi_sub, s0 + int(round(0.5 / self._sub_s)))  # at close: the peak may raise thr
        start = next((j for j in range(s0, top + 1) if self._active(j, thr, thr_hb)), s0)
        j, gap = start - 1, 0
        while j >= lo:
            # across a gap, a lone active sub-frame is a noise peak: a stretch needs two
            if self._active(j, thr, thr_hb) and (gap == 0 or (j > lo and self._active(j - 1, thr, thr_hb))):
                start, gap = j, 0
            else:
                gap += 1
                if gap > self._bridge:
                    break
            j -= 1
        # never before the previous segment's offset: a channel's segments do not overlap (a trial's
        # quiet recording gave 14.67–15.60 s and 15.13–16.34 s, its talk time counted twice)
        return max(round(self._start_s + start * self._sub_s, 6), self._prev_offset_s)

    def _refine_offset(self) -> float:
        """End of the active stretch holding the last periodic frame, session seconds."""
        assert self._last_periodic is not None
        self._prepare_high_band()
        thr, thr_hb = self._thresholds()
        e0 = (self._last_periodic + 1) * self._spf - 1  # last sub-frame of the last periodic frame
        hi = self._hi_sub
        thr_burst = max(self.gate_dbfs, self._peak_db - BURST_REL_DB)
        end = next((j for j in range(e0, e0 - self._spf, -1) if self._active(j, thr, thr_hb)),
                   e0 - self._spf + 1)
        j, gap = end + 1, 0
        while j <= hi:
            # active sub-frames continue the segment across gaps ≤ bridge_s; after a longer
            # gap (≤ FRICATIVE_BRIDGE_S) only a fricative (word-final /s z ts dz/) or a loud
            # burst (BURST_REL_DB) of ≥ 30 ms does; across a gap, a lone active sub-frame is a
            # noise peak unless it is as loud as a burst: a stretch needs two
            if self._active(j, thr, thr_hb) and (gap == 0 or self._lvl[j % self._cap] >= thr_burst
                                                 or (j < hi and self._active(j + 1, thr, thr_hb))) \
                    and (gap <= self._bridge or self._run_of(j, hi, lambda k: self._fricative(k, thr_hb))
                         or self._run_of(j, hi, lambda k: self._lvl[k % self._cap] >= thr_burst)):
                end, gap = j, 0
            else:
                gap += 1
                if gap > max(self._bridge, self._fric_bridge):
                    break
            j += 1
        end = self._fading_fricative_cut(end, thr)
        end = self._decay_cut(max(e0 - 30, self._oldest_sub()), end)
        return round(self._start_s + (end + 1) * self._sub_s, 6)

    def _fading_fricative_cut(self, end: int, thr: float) -> int:
        """Drop a trailing run of sub-frames kept only by the high band (full band ≤ ``thr``)
        when it is ≥ 3 sub-frames long and its high-band level falls ≥ 1 dB per sub-frame
        (least squares): a fricative's reverberant decay (RT60 ≤ 0.6 s), not a fricative, which
        holds its level (HEURISTIC; a final /s/ in a room had offsets 60–90 ms late).
        Returns the last speech sub-frame."""
        j = end
        while j > self._oldest_sub() and self._lvl[j % self._cap] <= thr:
            j -= 1
        run = np.array([self._hbl(k) for k in range(j + 1, end + 1)])
        if len(run) >= 3 and np.polyfit(np.arange(len(run)), run, 1)[0] <= -1.0:
            return j
        return end

    def _decay_cut(self, lo: int, end: int) -> int:
        """Drop a room's reverberant tail from the end of a segment (HEURISTIC).

        When speech stops abruptly (a cut-off reply), the level falls by about the direct-to-
        reverberant ratio within one sub-frame and then decays (−60 dB per RT60). The segment
        ends at the earliest sub-frame ``j`` (from ``lo``) where the level steps down ≥ 7 dB (or
        ≥ 10.5 dB over two sub-frames, the cut falling inside the middle one) and
        everything after it up to ``end`` (≥ 3 sub-frames) stays within 3 dB of the level
        just after the step (the 10 ms levels of a reverberant decay scatter by a few dB; with
        1.5 dB a 50 ms tail stayed in and turned a backchannel 0.85 s after the agent's turn
        into the agent resuming) and falls ≥ 1 dB per sub-frame (least squares; RT60 ≤ 0.6 s). (A tail
        with fricative-like sub-frames used to be kept as speech; but a final fricative's own
        reverb is fricative-like, and such tails made offsets 60–90 ms late on the benchmark's
        second seed; a real fricative does not fall 1 dB per 10 ms from a 7 dB step.) Returns
        the last speech sub-frame.
        """
        if end - lo < 4:
            return end
        lv = self._lvl[np.arange(lo, end + 1) % self._cap]
        for k in range(len(lv) - 4):
            if lv[k] - lv[k + 1] >= 7.0:
                cut = k  # the step falls between two sub-frames
            elif lv[k] - lv[k + 2] >= 10.5 and lv[k + 1] > lv[k + 2]:
                cut = k + 1  # or inside sub-frame k + 1
            else:
                continue
            tail = lv[cut + 1:]
            if len(tail) < 3 or tail.max() > tail[0] + 3.0:
                continue
            slope = np.polyfit(np.arange(len(tail)), tail, 1)[0]
            if slope <= -1.0:
                return lo + cut
        return end

    @staticmethod
    def _run_of(j: int, hi: int, test, n: int = 3) -> bool:
        """Sub-frames j..j+n-1 (all ≤ hi) all pass ``test``: a stretch of n × 10 ms."""
        return j + n - 1 <= hi and all(test(k) for k in range(j, j + n))

    def _fricative(self, j: int, thr_hb: float) -> bool:
        """Sub-frame ``j`` is fricative-like: high band active and holding most of the energy."""
        h = self._hbl(j)
        return bool(h > thr_hb and h >= self._lvl[j % self._cap] - 3.0)

    def _close(self) -> SpeechSegment:
        assert self._run_start is not None and self._last_voiced is not None
        if self._adaptive and self._last_periodic is not None and self._onset_s is not None:
            onset = self._onset_s
            if self._first_periodic is not None and (self._first_periodic * self._spf > self._oldest_sub() + 50
                                                    or self._oldest_sub() == 0):
                # the segment's peak is known now: re-refine; the onset can only move later
                onset = max(onset, self._refine_onset())
            offset = max(self._refine_offset(), onset + self._sub_s)
        else:
            onset = round(self._start_s + self._run_start * self.frame_s, 6)
            offset = round(self._start_s + (self._last_voiced + 1) * self.frame_s, 6)
        seg = SpeechSegment(channel=self.channel, onset_s=onset, offset_s=offset)
        self._prev_offset_s = offset
        self._run_start = None
        self._last_voiced = None
        self._last_periodic = None
        self._first_periodic = None
        self._onset_s = None
        self._open = False
        return seg

    def flush(self) -> list[SpeechSegment]:
        """End of stream: close an open segment at its last voiced frame. A segment never ends
        after the last sample pushed: the partial last frame is padded with zeros to be read, and
        its frame's end had put an offset up to one frame past the call's end (a trial: 6.41 s in a
        6.40 s call, so the caller's "mm" outlasted the agent's turn the end had cut, and read
        neither as a backchannel nor as a barge-in)."""
        end_s = self.time_s + self._pending.size / SAMPLE_RATE  # the last real sample's end
        if self._pending.size:
            pad = np.zeros(self.frame_len - len(self._pending), dtype=np.float32)
            segs = self.push(pad)
        else:
            segs = []
        if self._open:
            segs.append(self._close())
        self._run_start = None
        return [s if s.offset_s <= end_s else SpeechSegment(s.channel, s.onset_s, max(s.onset_s, round(end_s, 6)))
                for s in segs]


def detect_segments(samples: np.ndarray, channel: Channel, config: VADConfig | None = None,
                    start_s: float = 0.0, read_ahead: bool = False) -> list[SpeechSegment]:
    """Run the front end (``config.highpass_hz``) and the streaming VAD over a whole array
    (float32, shape (n,), 16 kHz) and return all segments, session seconds. ``read_ahead``: start
    the noise floor from the first ``noise_history_s`` (``StreamingVAD.prime_noise``), as
    ``score`` does for a recording (``Session.prime_noise_floor``); off by default, so the judge's
    stored features and the corpus build stay as they were computed."""
    cfg = (config or VADConfig()).validate()
    x = np.asarray(samples, dtype=np.float32)
    if cfg.highpass_hz is not None:
        from livejudge.timing.frontend import highpass

        x = highpass(x, cfg.highpass_hz)
    vad = StreamingVAD(channel, cfg, start_s=start_s)
    if read_ahead:
        vad.prime_noise(x[: int(round(cfg.noise_history_s * SAMPLE_RATE))])
    return vad.push(x) + vad.flush()
