"""Build two-channel dialogues from real clips with a known ground-truth timeline.

Used by the tests, the examples and the validity benchmark. Each clip is first trimmed to
its speech (``speech_bounds``: 10 ms frame energies well above the clip's own noise
floor), with 5 ms fades, so the truth bounds of every placed utterance are exact sample
positions. A low white-noise floor (default −65 dBFS) is added to both channels; realistic
line conditions (noise floors of other kinds and levels, room tails, breaths, telephone line,
DC offset, clicks and pops, speakerphone echo) are options of ``DialogueBuilder`` that never
change the truth.

Example::

    b = DialogueBuilder(seed=1)
    b.user("cmu_cards_005")                      # user speaks at 0.5 s
    b.agent("espeak_reply_01", gap_s=0.6)        # agent answers 600 ms after the user stops
    b.user("cmu_goforward", barge_in_after_s=1.5, agent_yield_s=0.4)   # user barges in
    d = b.build()                                # d.call: TwoChannelAudio; d.truth: events

Clips are looked up by stem in ``livejudge/data/audio/{human,machine}`` or given as arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from livejudge.audio import SAMPLE_RATE, TwoChannelAudio, load_audio, resample, to_mono
from livejudge.events import Backchannel, BargeIn, Channel, SpeechSegment, Transition, other
from livejudge.timing.turns import TurnConfig

FRAME = SAMPLE_RATE // 100  # 10 ms


def clips_dir() -> Path:
    """Directory of the shipped clips (``human/`` and ``machine/`` inside)."""
    return Path(str(resources.files("livejudge") / "data" / "audio"))


def list_clips(kind: str) -> list[str]:
    """Stems of the shipped clips of one kind: "human" or "machine"."""
    return sorted(p.stem for p in (clips_dir() / kind).glob("*.wav"))


@lru_cache(maxsize=64)
def load_clip(name: str) -> np.ndarray:
    """A shipped clip by stem (e.g. "cmu_cards_001"), float32 mono 16 kHz, not trimmed.

    Raises:
        FileNotFoundError: no such clip (the message lists where it looked).
    """
    for kind in ("human", "machine"):
        p = clips_dir() / kind / f"{name}.wav"
        if p.exists():
            data, rate = load_audio(p)
            return resample(to_mono(data), rate)
    raise FileNotFoundError(f"no clip named {name!r} in {clips_dir()}/{{human,machine}}")


def _zero_phase_highpass(x: np.ndarray, cutoff_hz: float = 70.0) -> np.ndarray:
    """x with DC and rumble below ``cutoff_hz`` removed, without delay (sosfiltfilt), so the
    truth bounds are not moved: sub-70 Hz drift and handling noise in the recordings is not
    speech (the same front end as ``livejudge.timing.frontend``)."""
    from scipy.signal import sosfiltfilt

    from livejudge.timing.frontend import highpass_sos

    x = np.asarray(x, dtype=np.float64)
    if len(x) < 64:
        return x - x.mean()
    return sosfiltfilt(highpass_sos(cutoff_hz), x - x.mean())


def speech_bounds(x: np.ndarray, rel_db: float = 30.0, floor_margin_db: float = 12.0,
                  min_run: int = 3) -> tuple[int, int]:
    """(first, last+1) sample of a clip's speech, from 10 ms frame energies.

    A frame is active when, both in the clip as recorded and after a zero-phase 70 Hz
    high-pass (DC, drift and rumble are not speech), its level exceeds both (loudest frame − ``rel_db``) and (the
    clip's noise floor, its 10th-percentile frame level, + ``floor_margin_db``); speech starts
    at the first and ends at the last run of ≥ ``min_run`` active frames, so isolated clicks
    and breath bursts in the recordings' background are not counted as speech.

    Raises:
        ValueError: clip shorter than 10 ms or with no run of active frames.
    """
    n = len(x) // FRAME
    if n == 0:
        raise ValueError("clip shorter than 10 ms")
    act = np.ones(n, dtype=bool)
    for y in (x, _zero_phase_highpass(x)):
        fr = y[: n * FRAME].reshape(n, FRAME).astype(np.float64)
        db = 10 * np.log10(np.mean(fr**2, axis=1) + 1e-12)
        floor = np.percentile(db, 10) if np.percentile(db, 10) > -100 else -100.0
        act &= db > max(db.max() - rel_db, floor + floor_margin_db)
    act = act.astype(np.int8)
    runs = np.convolve(act, np.ones(min_run, dtype=np.int8), mode="valid") == min_run
    starts = np.flatnonzero(runs)
    if starts.size == 0:
        raise ValueError("clip holds no speech above the threshold")
    return int(starts[0] * FRAME), int((starts[-1] + min_run) * FRAME)


def trim(x: np.ndarray, fade_s: float = 0.005, also: np.ndarray | None = None) -> np.ndarray:
    """The speech part of a clip (``speech_bounds``) with short linear fades at both ends.
    With ``also`` (the same clip as recorded, same length), only what is speech in both."""
    a, b = speech_bounds(x)
    if also is not None:
        a2, b2 = speech_bounds(also)
        a, b = max(a, a2), min(b, b2)
    y = x[a:b].astype(np.float32).copy()
    nf = min(int(fade_s * SAMPLE_RATE), len(y) // 2)
    if nf:
        ramp = np.linspace(0.0, 1.0, nf, dtype=np.float32)
        y[:nf] *= ramp
        y[-nf:] *= ramp[::-1]
    return y


@dataclass(frozen=True)
class Placed:
    """One utterance in the built dialogue: exact truth bounds, seconds."""

    channel: Channel
    onset_s: float
    offset_s: float
    kind: str  # "turn" or "backchannel"
    clip: str


@dataclass
class DialogueTruth:
    """Ground truth of a built dialogue, from the placements (not from any detector)."""

    placed: list[Placed] = field(default_factory=list)
    transitions: list[Transition] = field(default_factory=list)
    barge_ins: list[BargeIn] = field(default_factory=list)
    backchannels: list[Backchannel] = field(default_factory=list)

    def segments(self) -> list[SpeechSegment]:
        return [SpeechSegment(p.channel, p.onset_s, p.offset_s) for p in self.placed]

    @property
    def response_latencies_s(self) -> list[float]:
        return [t.gap_s for t in self.transitions if t.is_response]


@dataclass
class Dialogue:
    call: TwoChannelAudio
    truth: DialogueTruth

    def stereo(self, user_channel: int = 0) -> np.ndarray:
        """float32 (n_samples, 2) with the user on ``user_channel`` (0 or 1)."""
        cols = [self.call.user, self.call.agent]
        if user_channel == 1:
            cols.reverse()
        return np.stack(cols, axis=1)

    def write(self, path: str | Path, sample_rate: int = SAMPLE_RATE, user_channel: int = 0) -> Path:
        """Write a stereo WAV (16-bit PCM) at ``sample_rate`` Hz."""
        import soundfile as sf

        data = resample(self.stereo(user_channel), SAMPLE_RATE, sample_rate)
        sf.write(str(path), np.clip(data, -1, 1), sample_rate, subtype="PCM_16")
        return Path(path)


def _level(x: np.ndarray, dbfs: float) -> np.ndarray:
    """x scaled to an RMS level of ``dbfs`` (dB re full scale), float32."""
    rms = float(np.sqrt(np.mean(np.asarray(x, dtype=np.float64) ** 2)))
    return (np.asarray(x, dtype=np.float64) * (10 ** (dbfs / 20) / max(rms, 1e-12))).astype(np.float32)


def noise(kind: str, n: int, dbfs: float, rng: np.random.Generator) -> np.ndarray:
    """A noise floor, float32 shape (n,), 16 kHz, RMS ``dbfs``.

    kind: "white"; "babble" (six shipped human clips at random offsets, looped, summed:
    a crowd of talkers, speech-shaped and fluctuating, no intelligible talker); "room"
    (pink 1/f noise above 20 Hz, the spectrum of ventilation and traffic rumble).
    Raises: ValueError for another kind.
    """
    if kind == "white":
        return _level(rng.standard_normal(n), dbfs)
    if kind == "room":
        spec = np.fft.rfft(rng.standard_normal(n))
        f = np.fft.rfftfreq(n, 1 / SAMPLE_RATE)
        spec *= np.where(f > 20.0, 1.0 / np.sqrt(np.maximum(f, 1.0)), 0.0)
        return _level(np.fft.irfft(spec, n), dbfs)
    if kind == "babble":
        names = [c for c in list_clips("human") if c != "librivox_two_cities"]
        out = np.zeros(n, dtype=np.float64)
        for name in rng.choice(names, size=6, replace=len(names) < 6):
            x = _level(trim(load_clip(str(name))), -20.0)
            reps = int(np.ceil((n + len(x)) / len(x)))
            loop = np.tile(x, reps)
            a = int(rng.integers(0, len(x)))
            out += loop[a:a + n]
        return _level(out, dbfs)
    raise ValueError(f"noise kind must be 'white', 'babble' or 'room', got {kind!r}")


def breath(dur_s: float, dbfs: float, rng: np.random.Generator) -> np.ndarray:
    """A breath-like burst: noise band-passed 500–5000 Hz under a Hann envelope, RMS ``dbfs``.
    Aperiodic, so not speech (float32, 16 kHz)."""
    from scipy.signal import butter, sosfilt

    n = max(16, int(dur_s * SAMPLE_RATE))
    sos = butter(2, [500.0, 5000.0], btype="bandpass", fs=SAMPLE_RATE, output="sos")
    return _level(sosfilt(sos, rng.standard_normal(n)) * np.hanning(n), dbfs)


def room_ir(rt60_s: float, drr_db: float, rng: np.random.Generator, predelay_s: float = 0.005) -> np.ndarray:
    """Reverberant part of a room impulse response (no direct path): exponentially decaying
    noise, -60 dB after ``rt60_s`` (Sabine's reverberation time), scaled so that its energy is
    ``drr_db`` below the direct sound's (direct-to-reverberant ratio), starting ``predelay_s``
    after the direct sound. float32, 16 kHz."""
    n = int((predelay_s + rt60_s) * SAMPLE_RATE)
    t = np.arange(n) / SAMPLE_RATE
    h = rng.standard_normal(n) * np.exp(-6.91 * (t - predelay_s) / rt60_s)
    h[t < predelay_s] = 0.0
    h *= np.sqrt(10 ** (-drr_db / 10) / np.sum(h**2))
    return h.astype(np.float32)


def pop(kind: str, level_dbfs: float, rng: np.random.Generator, dur_s: float = 0.05) -> np.ndarray:
    """A non-speech burst: "pop" = noise low-passed below 1 kHz (plosive on the mic, cable
    knock: energy under 1 kHz, no voicing) under a fast-attack decaying envelope, ``dur_s``
    long; "click" = a 2 ms broadband click; "tone" = a harmonic burst (f0 120–250 Hz, 7
    harmonics falling 1/k, periodic: it passes a voicing check) and "burst" = white noise, both
    ``dur_s`` long with 3 ms ramps, as a full-duplex speech model emits between replies.
    ``level_dbfs`` is the burst's RMS, float32."""
    from scipy.signal import butter, sosfilt

    if kind in ("tone", "burst"):
        n = int(dur_s * SAMPLE_RATE)
        if kind == "tone":
            t = np.arange(n) / SAMPLE_RATE
            f0 = rng.uniform(120.0, 250.0)
            x = sum(np.sin(2 * np.pi * f0 * k * t + rng.uniform(0, 2 * np.pi)) / k for k in range(1, 8))
        else:
            x = rng.standard_normal(n)
        ramp = 0.003 * SAMPLE_RATE
        env = np.minimum(1.0, np.minimum(np.arange(n), n - 1 - np.arange(n)) / ramp)
        return _level(np.asarray(x) * env, level_dbfs)

    if kind == "pop":
        n = int(dur_s * SAMPLE_RATE)
        sos = butter(4, 1000.0, btype="lowpass", fs=SAMPLE_RATE, output="sos")
        env = np.minimum(np.arange(n) / (0.003 * SAMPLE_RATE), 1.0) * np.exp(-np.arange(n) / (0.4 * n))
        return _level(sosfilt(sos, rng.standard_normal(n)) * env, level_dbfs)
    if kind == "click":
        n = int(0.002 * SAMPLE_RATE)
        return _level(rng.standard_normal(n) * np.hanning(n), level_dbfs)
    raise ValueError(f"pop kind must be 'pop', 'click', 'tone' or 'burst', got {kind!r}")


def with_final_fricative(clip: str | np.ndarray, level_dbfs: float = -40.0, dur_s: float = 0.12,
                         seed: int = 0) -> np.ndarray:
    """A clip (untrimmed, float32 16 kHz) with an /s/-like fricative added right where its speech
    ends (``speech_bounds``): noise band-passed 4–7.5 kHz at RMS ``level_dbfs`` for ``dur_s``,
    10 ms fades. The /s/ is speech: place the result as a clip and the builder's trim keeps it
    (its level must clear the clip's peak − 30 dB), so the truth offset is the /s/'s end."""
    from scipy.signal import butter, sosfilt

    x = (load_clip(clip) if isinstance(clip, str) else np.asarray(clip, dtype=np.float32)).copy()
    _, end = speech_bounds(x)
    rng = np.random.default_rng(seed)
    n = int(dur_s * SAMPLE_RATE)
    sos = butter(4, [4000.0, 7500.0], btype="bandpass", fs=SAMPLE_RATE, output="sos")
    s = _level(sosfilt(sos, rng.standard_normal(n + 800))[800:], level_dbfs)
    nf = int(0.01 * SAMPLE_RATE)
    s[:nf] *= np.linspace(0, 1, nf, dtype=np.float32)
    s[-nf:] *= np.linspace(1, 0, nf, dtype=np.float32)
    if end + n > len(x):
        x = np.concatenate([x, np.zeros(end + n - len(x), dtype=np.float32)])
    x[end:end + n] += s
    return x


def with_voiced_tail(clip: str | np.ndarray, *, peak_dbfs: float = -12.0, start_dbfs: float = -27.0,
                     end_dbfs: float = -42.0, dur_s: float = 0.2) -> np.ndarray:
    """A clip ending in a quiet voiced tail (a nasal or vowel decaying after the last stressed
    syllable), built from the clip's own voice: the clip is trimmed (``trim``) and scaled so its
    loudest 10 ms frame is at ``peak_dbfs``; its last voiced 40 ms (normalised autocorrelation
    ≥ 0.7) give one pitch period (the autocorrelation peak at 2.5–15 ms), which is repeated for
    ``dur_s`` with its RMS falling linearly in dB from ``start_dbfs`` to ``end_dbfs``. The tail
    is speech: keep ``end_dbfs`` ≥ ``peak_dbfs`` − 30 dB and the builder's trim keeps all of
    it, so the truth offset is the tail's end.

    Returns float32 mono 16 kHz, shape (n,): the clip up to its last voiced 40 ms, the tail,
    then 0.1 s of silence. Raises ValueError: the clip has no voiced 40 ms."""
    from livejudge.timing.vad import periodicity

    x = trim(load_clip(clip) if isinstance(clip, str) else np.asarray(clip, dtype=np.float32)).astype(np.float64)
    n = len(x) // FRAME
    db = 10 * np.log10(np.mean(x[: n * FRAME].reshape(n, FRAME) ** 2, axis=1) + 1e-12)
    x *= 10 ** ((peak_dbfs - db.max()) / 20)
    w = 4 * FRAME
    end = next((e for e in range(len(x), w, -FRAME) if periodicity(x[e - w:e]) >= 0.7), None)
    if end is None:
        raise ValueError("with_voiced_tail needs a clip with a voiced 40 ms stretch")
    seg = x[end - w:end] - x[end - w:end].mean()
    ac = np.correlate(seg, seg, "full")[w - 1:]
    period = 40 + int(np.argmax(ac[40:241]))
    one = x[end - period:end]
    m = int(dur_s * SAMPLE_RATE)
    tail = np.tile(one, m // period + 1)[:m]
    gain_db = start_dbfs + (end_dbfs - start_dbfs) * np.arange(m) / m
    tail = tail / (np.sqrt(np.mean(one ** 2)) + 1e-12) * 10 ** (gain_db / 20)
    return np.concatenate([x[:end], tail, np.zeros(SAMPLE_RATE // 10)]).astype(np.float32)


def speakerphone(x: np.ndarray, rng: np.random.Generator, rt60_s: float = 0.3) -> np.ndarray:
    """What a speakerphone's microphone picks up of its own loudspeaker: ``x`` band-passed
    300–3800 Hz (a small speaker), soft-clipped (tanh at 3× drive), then through a room
    (``room_ir``-like: unit direct path and exponentially decaying noise, RT60 ``rt60_s``, 150 ms,
    10 dB below the direct path). Scaled to the energy of ``x`` (the gain is applied by the
    caller). float32 16 kHz in and out, same length."""
    from scipy.signal import butter, oaconvolve, sosfilt

    y = sosfilt(butter(2, [300.0, 3800.0], btype="bandpass", fs=SAMPLE_RATE, output="sos"),
                np.asarray(x, dtype=np.float64))
    y = np.tanh(3.0 * y) / 3.0
    m = int(0.15 * SAMPLE_RATE)
    t = np.arange(m) / SAMPLE_RATE
    h = rng.standard_normal(m) * np.exp(-6.9 * t / rt60_s)
    h[: int(0.002 * SAMPLE_RATE)] = 0.0
    h *= np.sqrt(0.1 / (np.sum(h ** 2) + 1e-20))
    h[0] = 1.0
    y = oaconvolve(y, h)[: len(x)]
    ex, ey = float(np.sum(np.asarray(x, dtype=np.float64) ** 2)), float(np.sum(y ** 2))
    return (y * np.sqrt(ex / ey) if ey > 0 else y).astype(np.float32)


def telephone(x: np.ndarray) -> np.ndarray:
    """A telephone line: 300–3400 Hz band (zero-phase, so the truth does not move), 8 kHz,
    G.711 μ-law round trip, back to 16 kHz. float32 in and out, 16 kHz."""
    from scipy.signal import butter, sosfiltfilt

    from livejudge.audio import float32_to_mulaw, mulaw_to_float32

    sos = butter(4, [300.0, 3400.0], btype="bandpass", fs=SAMPLE_RATE, output="sos")
    y = resample(sosfiltfilt(sos, x).astype(np.float32), SAMPLE_RATE, 8000)
    y = mulaw_to_float32(float32_to_mulaw(np.clip(y, -1, 1)))
    return resample(y, 8000, SAMPLE_RATE)[: len(x)].astype(np.float32)


MP3_KBPS_MAX = 160.0
"""The highest constant bitrate of MPEG-2 Layer III (ISO/IEC 13818-3), the layer used at 16 kHz."""


def mp3_round_trip(x: np.ndarray, kbps: float) -> np.ndarray:
    """An MP3 encode and decode at 16 kHz, constant bitrate about ``kbps`` (8–160), realigned.

    What a voice whose audio reached the recording as MP3 (a TTS service's MP3 output, an MP3
    recording of a call) carries: the codec's band limit and quantisation noise. Uses
    libsndfile's LAME/mpg123 through ``soundfile`` (``format="MP3"``); libsndfile maps
    ``compression_level`` linearly onto the bitrate range, so the rate asked for is reached to
    within a few kbit/s (measured: 26 kbit/s for 23 asked, 89 for 84). The decoder's delay
    (0 or about 1105 samples, depending on the rate) is removed by the lag of the largest
    cross-correlation within ±0.15 s, so the truth does not move.

    Args:
        x: float32 mono at 16 kHz, shape (n,).
        kbps: target constant bitrate, kbit/s, 8 to ``MP3_KBPS_MAX``.

    Returns:
        float32 mono at 16 kHz, shape (n,).

    Raises:
        ValueError: ``kbps`` outside 8–160.
    """
    import io

    import soundfile as sf

    if not 8.0 <= kbps <= MP3_KBPS_MAX:
        raise ValueError(f"kbps={kbps} is outside MPEG-2 Layer III's 8-160 kbit/s; pick a rate in that range")
    x = np.asarray(x, dtype=np.float32)
    buf = io.BytesIO()
    sf.write(buf, np.clip(x, -1, 1), SAMPLE_RATE, format="MP3", bitrate_mode="CONSTANT",
             compression_level=float((MP3_KBPS_MAX - kbps) / (MP3_KBPS_MAX - 8.0)))
    buf.seek(0)
    y, _ = sf.read(buf, dtype="float32")
    max_lag = int(0.15 * SAMPLE_RATE)
    n = min(len(x), 4 * SAMPLE_RATE)
    if len(y) > len(x) and n > max_lag:
        ref = x[:n] - x[:n].mean()
        seg = y[: n + max_lag]
        c = np.correlate(seg - seg.mean(), ref[: n - max_lag], "valid")
        lag = int(np.argmax(c[: min(len(c), max_lag + 1)]))
        y = y[lag:]
    out = np.zeros(len(x), dtype=np.float32)
    out[: min(len(x), len(y))] = y[: len(x)]
    return out


class DialogueBuilder:
    """Places trimmed clips on two channels with declared timing (see module docstring).

    Placement helpers (all seconds): ``at_s`` absolute; ``gap_s`` after the other speaker's
    last turn ends (negative = talk-over); ``barge_in_after_s`` after the other speaker's last
    turn started, with ``agent_yield_s``/``user_yield_s`` cutting the interrupted turn that
    long after the barge-in onset (None = it keeps talking).

    Realistic line conditions (all off by default; none changes the truth, which stays the
    placed speech):
        noise_dbfs / noise_kind: the noise floor's RMS and kind ("white", "babble", "room";
            see ``noise``) on ``noise_channels``.
        room_rt60_s / room_drr_db: reverberation (``room_ir``): each channel's speech gets a
            room tail decaying after every phrase. The tail is not speech.
        breath_dbfs / breath_gap_s / breath_s: a breath (``breath``) after every turn, starting
            ``breath_gap_s`` after its offset (skipped where the channel speaks again).
        telephone_line: both channels through ``telephone`` (300–3400 Hz, 8 kHz μ-law).
        dc_offset: constant added to both channels (a cheap sound card), full scale units.
        echo_gain_db / echo_delay_s: the agent's audio leaks into the user channel (speakerphone)
            at this gain (e.g. −18 dB) and delay. The leak is not user speech.
        echo_speakerphone: the leak goes through a small loudspeaker and a room first
            (``speakerphone``: 300–3800 Hz, soft clipping, RT60 0.3 s), not a flat copy.
        line_rate: the sample rate the call will be heard at (e.g. 8000): each clip is passed
            through it before trimming, so the truth is the speech that rate can carry (a
            word-final /s/ above 4 kHz does not exist at 8 kHz). ``telephone_line`` implies it.
        truth: "carried" (default) trims each clip to the speech the line carries, as above;
            "recorded" keeps the speech as recorded (wideband bounds) and sends it through the line
            unchanged in length, so the truth includes a word-final fricative the line drops: what
            a caller heard themself say (``benchmarks/vad_bounds.py``'s ``*-rec`` sets).
    ``pop(channel, at_s, kind)`` adds a click or pop at a known time (not speech).
    """

    def __init__(self, noise_dbfs: float | None = -65.0, seed: int = 0, lead_s: float = 0.5,
                 tail_s: float = 1.0, *, noise_kind: str = "white",
                 noise_channels: tuple[Channel, ...] = ("user", "agent"),
                 room_rt60_s: float | None = None, room_drr_db: float = 10.0,
                 breath_dbfs: float | None = None, breath_gap_s: float = 0.2, breath_s: float = 0.3,
                 telephone_line: bool = False, dc_offset: float = 0.0,
                 echo_gain_db: float | None = None, echo_delay_s: float = 0.05,
                 echo_speakerphone: bool = False,
                 line_rate: int = SAMPLE_RATE, truth: str = "carried") -> None:
        if noise_kind not in ("white", "babble", "room"):
            raise ValueError(f"noise_kind must be 'white', 'babble' or 'room', got {noise_kind!r}")
        if truth not in ("carried", "recorded"):
            raise ValueError(f"truth must be 'carried' or 'recorded', got {truth!r}")
        self.truth = truth
        self.noise_dbfs = noise_dbfs
        self.noise_kind = noise_kind
        self.noise_channels = tuple(noise_channels)
        self.room_rt60_s = room_rt60_s
        self.room_drr_db = room_drr_db
        self.breath_dbfs = breath_dbfs
        self.breath_gap_s = breath_gap_s
        self.breath_s = breath_s
        self.telephone_line = telephone_line
        self.dc_offset = dc_offset
        self.echo_gain_db = echo_gain_db
        self.echo_delay_s = echo_delay_s
        self.echo_speakerphone = echo_speakerphone
        self.line_rate = int(line_rate)
        self.rng = np.random.default_rng(seed)
        self.lead_s = lead_s
        self.tail_s = tail_s
        self._items: list[dict] = []
        self._pops: list[tuple[Channel, float, np.ndarray]] = []
        self.pops: list[tuple[Channel, float, float]] = []
        """(channel, onset_s, offset_s) of every click/pop added (not speech)."""

    def pop(self, channel: Channel, at_s: float, kind: str = "pop", level_dbfs: float = -25.0,
            dur_s: float = 0.05) -> None:
        """Add a click or pop (see ``pop``) on one channel at ``at_s``; it is not speech."""
        x = pop(kind, level_dbfs, self.rng, dur_s)
        self._pops.append((channel, at_s, x))
        self.pops.append((channel, at_s, at_s + len(x) / SAMPLE_RATE))

    # -- placement --------------------------------------------------------------------------
    def _last(self, channel: Channel, kind: str = "turn") -> dict | None:
        for it in reversed(self._items):
            if it["channel"] == channel and it["kind"] == kind:
                return it
        return None

    def as_carried(self, clip: str | np.ndarray) -> np.ndarray:
        """The clip as this builder places it: trimmed to where its speech is, both as recorded
        and as the line carries it (``telephone_line``/``line_rate``: no /s/ above 4 kHz).

        Args:
            clip: a shipped clip's name or float32 mono 16 kHz samples.
        Returns:
            float32 mono 16 kHz samples, shape (n,).
        """
        x = load_clip(clip) if isinstance(clip, str) else np.asarray(clip, dtype=np.float32)
        if self.telephone_line or self.line_rate < SAMPLE_RATE:
            def line(y: np.ndarray) -> np.ndarray:
                out = telephone(y) if self.telephone_line else \
                    resample(resample(y, SAMPLE_RATE, self.line_rate), self.line_rate, SAMPLE_RATE)[: len(y)]
                return np.pad(out, (0, len(y) - len(out))).astype(np.float32)

            if self.truth == "recorded":  # the recorded bounds; the line may drop a fricative inside them
                return line(trim(x))
            return trim(line(x), also=x)
        return trim(x)

    def _add(self, channel: Channel, clip: str | np.ndarray, *, at_s: float | None, gap_s: float | None,
             barge_in_after_s: float | None, yield_s: float | None, kind: str,
             max_s: float | None) -> Placed:
        x = self.as_carried(clip)
        if max_s is not None:
            x = trim(x[: int(max_s * SAMPLE_RATE)])
        name = clip if isinstance(clip, str) else "<array>"
        if at_s is None:
            prev_other = self._last(other(channel))
            if barge_in_after_s is not None:
                if prev_other is None:
                    raise ValueError("barge_in_after_s needs an earlier turn of the other speaker")
                at_s = prev_other["onset"] + barge_in_after_s
            elif gap_s is not None:
                if prev_other is None:
                    raise ValueError("gap_s needs an earlier turn of the other speaker")
                at_s = prev_other["offset"] + gap_s
            else:
                ends = [it["offset"] for it in self._items]
                at_s = max(ends) + 1.0 if ends else self.lead_s
        onset = round(at_s * SAMPLE_RATE)
        item = {"channel": channel, "x": x, "onset": onset / SAMPLE_RATE,
                "offset": (onset + len(x)) / SAMPLE_RATE, "kind": kind, "clip": name}
        if barge_in_after_s is not None and yield_s is not None:
            victim = self._last(other(channel))
            assert victim is not None
            cut_at = item["onset"] + yield_s
            keep = int(round((cut_at - victim["onset"]) * SAMPLE_RATE))
            if keep <= 0 or keep >= len(victim["x"]):
                raise ValueError("yield time places the cut outside the interrupted utterance")
            cut = victim["x"][:keep].copy()
            nf = int(0.005 * SAMPLE_RATE)
            cut[-nf:] *= np.linspace(1.0, 0.0, nf, dtype=np.float32)
            # truth = where speech energy really ends in the cut clip
            _, b = speech_bounds(cut)
            victim["x"] = cut[:b]
            victim["offset"] = victim["onset"] + b / SAMPLE_RATE
        self._items.append(item)
        return Placed(channel, item["onset"], item["offset"], kind, name)

    def user(self, clip: str | np.ndarray, *, at_s: float | None = None, gap_s: float | None = None,
             barge_in_after_s: float | None = None, agent_yield_s: float | None = None,
             max_s: float | None = None) -> Placed:
        """Place a user turn. ``agent_yield_s`` cuts the agent that long after a barge-in."""
        return self._add("user", clip, at_s=at_s, gap_s=gap_s, barge_in_after_s=barge_in_after_s,
                         yield_s=agent_yield_s, kind="turn", max_s=max_s)

    def agent(self, clip: str | np.ndarray, *, at_s: float | None = None, gap_s: float | None = None,
              barge_in_after_s: float | None = None, user_yield_s: float | None = None,
              max_s: float | None = None) -> Placed:
        """Place an agent turn; ``gap_s`` is its response latency after the last user turn."""
        return self._add("agent", clip, at_s=at_s, gap_s=gap_s, barge_in_after_s=barge_in_after_s,
                         yield_s=user_yield_s, kind="turn", max_s=max_s)

    def backchannel(self, channel: Channel, clip: str | np.ndarray, *, after_onset_s: float,
                    max_s: float = 0.5) -> Placed:
        """A short utterance (≤ max_s of speech) inside the other's last turn, ``after_onset_s``
        after that turn started. The other's turn must go on past it."""
        host = self._last(other(channel))
        if host is None:
            raise ValueError("a backchannel needs a turn of the other speaker to sit in")
        return self._add(channel, clip, at_s=host["onset"] + after_onset_s, gap_s=None,
                         barge_in_after_s=None, yield_s=None, kind="backchannel", max_s=max_s)

    # -- result -----------------------------------------------------------------------------
    def build(self) -> Dialogue:
        """Mix the placements into two channels and derive the ground truth from them."""
        end = max([it["offset"] for it in self._items] + [p[2] for p in self.pops]) + self.tail_s
        n = int(round(end * SAMPLE_RATE))
        ch = {"user": np.zeros(n, dtype=np.float32), "agent": np.zeros(n, dtype=np.float32)}
        for it in self._items:
            a = int(round(it["onset"] * SAMPLE_RATE))
            ch[it["channel"]][a:a + len(it["x"])] += it["x"]
        if self.room_rt60_s is not None:
            from scipy.signal import fftconvolve

            for c in ch:
                h = room_ir(self.room_rt60_s, self.room_drr_db, self.rng)
                ch[c] = ch[c] + fftconvolve(ch[c], h)[:n].astype(np.float32)
        if self.breath_dbfs is not None:
            for it in self._items:
                if it["kind"] != "turn":
                    continue
                b0, b1 = it["offset"] + self.breath_gap_s, it["offset"] + self.breath_gap_s + self.breath_s
                if b1 + 0.1 > end or any(o is not it and o["channel"] == it["channel"]
                                         and o["onset"] < b1 + 0.1 and o["offset"] > it["offset"]
                                         for o in self._items):
                    continue
                x = breath(self.breath_s, self.breath_dbfs, self.rng)
                a = int(round(b0 * SAMPLE_RATE))
                ch[it["channel"]][a:a + len(x)] += x[: n - a]
        if self.echo_gain_db is not None:
            d = int(round(self.echo_delay_s * SAMPLE_RATE))
            leak = np.zeros(n, dtype=np.float32)
            src = speakerphone(ch["agent"], self.rng) if self.echo_speakerphone else ch["agent"]
            leak[d:] = src[: n - d] * np.float32(10 ** (self.echo_gain_db / 20))
            ch["user"] = ch["user"] + leak
        for c, at_s, x in self._pops:
            a = int(round(at_s * SAMPLE_RATE))
            ch[c][a:a + len(x)] += x[: n - a]
        if self.noise_dbfs is not None:
            for c in self.noise_channels:
                if self.noise_kind == "white":  # the historical draw: old seeds give old audio
                    ch[c] += (self.rng.standard_normal(n) * 10 ** (self.noise_dbfs / 20)).astype(np.float32)
                else:
                    ch[c] += noise(self.noise_kind, n, self.noise_dbfs, self.rng)
        if self.telephone_line:
            ch = {c: telephone(ch[c]) for c in ch}
        if self.dc_offset:
            ch = {c: ch[c] + np.float32(self.dc_offset) for c in ch}
        placed = [Placed(it["channel"], it["onset"], it["offset"], it["kind"], it["clip"]) for it in self._items]
        truth = DialogueTruth(placed=sorted(placed, key=lambda p: p.onset_s))
        truth.backchannels = [Backchannel(p.channel, p.onset_s, p.offset_s) for p in truth.placed
                              if p.kind == "backchannel"]
        turns = [p for p in truth.placed if p.kind == "turn"]
        floor: Placed | None = None
        reaction_s = TurnConfig().reaction_s
        for t in turns:
            for o in turns:
                if o.channel != t.channel and o.onset_s < t.onset_s < o.offset_s:
                    # rounded to the nanosecond: the float difference printed 0.40000000000000036 (a trial)
                    y = round(o.offset_s - t.onset_s, 9) if o.offset_s < t.offset_s else None
                    if y is not None and y < reaction_s:
                        break  # the other was ending on its own: a terminal overlap (turns.analyze)
                    truth.barge_ins.append(BargeIn(t.channel, t.onset_s, y))
                    break
            if floor is None or (t.channel == floor.channel and t.offset_s > floor.offset_s):
                floor = t
                continue
            if t.channel != floor.channel and t.offset_s > floor.offset_s:
                truth.transitions.append(Transition(floor.channel, t.channel, floor.offset_s, t.onset_s))
                floor = t
        call = TwoChannelAudio(user=ch["user"], agent=ch["agent"], sample_rate_in=SAMPLE_RATE,
                               channels={"user": 0, "agent": 1})
        return Dialogue(call=call, truth=truth)


def example_dialogue(seed: int = 0, machine_agent: bool = True, agent_delay_s: float = 0.0, **line) -> Dialogue:
    """A call of about 45 s (43.5 s at seed 0) with every phenomenon: varied gaps (100–2500 ms), an
    agent start 0.3 s before the caller ends (scored as an early start), user barge-ins (one
    yielded, one talked through), backchannels on both sides. The clips and timeline are fixed;
    ``seed`` draws only the line's random parts (noise, room, breaths), so every seed gives the same
    timing (seed 0 is examples/example_call.wav). ``agent_delay_s`` starts every agent reply that
    much later (a slower agent: each user→agent gap grows by it, seconds). ``line``:
    DialogueBuilder's line conditions (noise_dbfs, noise_kind, room_rt60_s, breath_dbfs…)."""
    b = DialogueBuilder(seed=seed, **line)
    d = float(agent_delay_s)
    A = (lambda i: f"espeak_reply_0{i}") if machine_agent else (lambda i: ["librivox_austen_0870", "librivox_austen_0890", "librivox_austen_0920", "librivox_austen_0930", "librivox_austen_0880"][i - 1])
    b.user("cmu_cards_005")
    b.agent(A(1), gap_s=0.7 + d)
    b.backchannel("user", "cmu_cards_004", after_onset_s=2.0, max_s=0.4)
    b.user("librivox_austen_0930", gap_s=0.25)
    b.agent(A(2), gap_s=1.2 + d)
    b.user("cmu_cards_002", barge_in_after_s=2.0, agent_yield_s=0.45)
    b.agent(A(3), gap_s=0.1 + d)
    b.user("cmu_numbers", gap_s=0.6)
    b.backchannel("agent", "espeak_reply_02", after_onset_s=1.2, max_s=0.35)
    b.agent(A(4), gap_s=2.5 + d)
    b.user("cmu_cards_003", barge_in_after_s=1.5, agent_yield_s=None)
    b.user("cmu_something", gap_s=0.9)
    b.agent(A(5), gap_s=-0.3 + d)
    b.user("librivox_austen_0880", gap_s=0.4)
    return b.build()
