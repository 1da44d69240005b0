"""Audio format conversions at the edges of livejudge.

Inside the core there is one format: float32 mono numpy arrays at ``SAMPLE_RATE`` (16 kHz),
values in [-1, 1]. Everything else (int16 PCM bytes, G.711 μ-law, other sample rates, stereo
files) is converted here, once, by the sources.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

SAMPLE_RATE = 16000
"""Internal sample rate, Hz."""

MAX_FILE_CHANNELS = 64
"""Most channels an input file may declare."""

MAX_SAMPLE_ABS = 4.0
"""Largest sample magnitude taken as is (full scale is ±1): beyond it samples are clipped (and
counted where a message can go). HEURISTIC: far above any real over-range (a resampler's
overshoot of a clipped recording stays under 2), far below values whose squares overflow
float32 (1e19): a float file holding 1e30 would otherwise put inf, then NaN, into the features."""

COMMON_RATES = (8000, 16000, 22050, 24000, 32000, 44100, 48000)
"""Sample rates (Hz) that sources are tested with."""


MIN_RATE, MAX_RATE = 8000, 192000
"""Sample rates (Hz) accepted from untrusted input (files, wire messages, ``push_audio``):
telephony's 8 kHz up to studio 192 kHz. Outside it a declared rate is almost surely wrong
and costly (1 Hz would turn 640 samples into 640 s of audio)."""

MAX_RATIO_TERM = 1000
"""Largest up/down factor of the polyphase resampler. A rate whose exact ratio to the
target needs more (e.g. 191999 Hz → 16000/191999) is resampled with the nearest ratio whose
terms are ≤ 1000 (``Fraction.limit_denominator``; relative rate error < 1e-3, HEURISTIC),
so one 40 ms frame never costs seconds of CPU."""


class AudioFormatError(ValueError):
    """Input audio that cannot be converted; the message names the problem and the fix."""


MONO_FIX = "pass a stereo file or --user A.wav --agent B.wav"
"""The fix a mono file's error ends with (a batch words it its own way: ``batch.batch_words``)."""
SIDE_FIX = "--user/--agent take one side each; for a two-channel call pass it as FILE"
"""The start of the fix a two-channel side's error gives (``batch.batch_words`` rewords it too)."""


def check_rate(rate: object, what: str = "sample rate") -> int:
    """Validate a sample rate from untrusted input.

    Args:
        rate: the declared rate, Hz (an int, or an integral float).
        what: how to name it in the error (e.g. "--in-rate", "agent audio sample_rate").
    Returns:
        the rate as int.
    Raises:
        AudioFormatError: not an integer, or outside ``MIN_RATE``–``MAX_RATE`` (the message
            names the value and the range).
    """
    if isinstance(rate, bool) or not isinstance(rate, (int, float, np.integer, np.floating)):
        raise AudioFormatError(f"{what} must be an integer in Hz, got {rate!r}")
    if isinstance(rate, (float, np.floating)) and not (np.isfinite(rate) and float(rate).is_integer()):
        raise AudioFormatError(f"{what} must be a whole number of Hz, got {rate!r}")
    r = int(rate)
    if not MIN_RATE <= r <= MAX_RATE:
        raise AudioFormatError(f"{what} {r} Hz is outside the supported {MIN_RATE}–{MAX_RATE} Hz")
    return r


def pcm16_to_float32(data: bytes | np.ndarray) -> np.ndarray:
    """Signed 16-bit little-endian PCM → float32 in [-1, 1).

    Args:
        data: raw s16le bytes (even length) or an int16 array.
    Returns:
        float32 array, shape (n_samples,) (interleaved channels are left interleaved).
    Raises:
        AudioFormatError: odd byte count.
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        if len(data) % 2:
            raise AudioFormatError(f"PCM16 payload has an odd byte count ({len(data)}); expected s16le samples")
        arr = np.frombuffer(data, dtype="<i2")
    else:
        arr = np.asarray(data, dtype=np.int16)
    return arr.astype(np.float32) / 32768.0


def pcm16_chunk_to_mono(audio: bytes, num_channels: int) -> np.ndarray:
    """One frame's s16le PCM bytes (interleaved when ``num_channels`` > 1) → float32 mono,
    shape (n,), in [-1, 1): channels averaged. Lenient, as a framework's frame may be cut
    anywhere: a trailing odd byte or incomplete multi-channel frame is ignored."""
    n = len(audio) // 2
    x = np.frombuffer(audio, dtype="<i2", count=n)
    if num_channels > 1:
        m = (n // num_channels) * num_channels
        x = x[:m].reshape(-1, num_channels).mean(axis=1)
    return x.astype(np.float32) * (1.0 / 32768.0)


def float32_to_pcm16(samples: np.ndarray) -> bytes:
    """float32 in [-1, 1] → s16le bytes (values outside are clipped)."""
    x = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 32767.0 / 32768.0)
    return (np.round(x * 32768.0)).astype("<i2").tobytes()


# ITU-T G.711 μ-law, continuous formula with μ = 255 quantised to 8 bits (G.711 table form).
_MU = 255.0


def _mulaw_decode_table() -> np.ndarray:
    # G.711 decoding of each of the 256 codes (bit-inverted, sign/exponent/mantissa layout).
    codes = np.arange(256, dtype=np.int32)
    u = ~codes & 0xFF
    sign = u & 0x80
    exponent = (u >> 4) & 0x07
    mantissa = u & 0x0F
    magnitude = ((mantissa << 3) + 0x84) << exponent
    magnitude = magnitude - 0x84
    vals = np.where(sign != 0, -magnitude, magnitude)
    return (vals / 32768.0).astype(np.float32)


_MULAW_TABLE = _mulaw_decode_table()


def mulaw_to_float32(data: bytes) -> np.ndarray:
    """G.711 μ-law bytes (8 bits per sample) → float32, shape (n_samples,)."""
    return _MULAW_TABLE[np.frombuffer(data, dtype=np.uint8)]


def float32_to_mulaw(samples: np.ndarray) -> bytes:
    """float32 in [-1, 1] → G.711 μ-law bytes (ITU-T G.711 segment encoding)."""
    pcm = np.clip(np.round(np.asarray(samples, dtype=np.float64) * 32768.0), -32768, 32767).astype(np.int32)
    sign = np.where(pcm < 0, 0x80, 0x00)
    mag = np.minimum(np.abs(pcm), 32635) + 0x84
    exponent = np.floor(np.log2(mag)).astype(np.int32) - 7
    exponent = np.clip(exponent, 0, 7)
    mantissa = (mag >> (exponent + 3)) & 0x0F
    code = ~(sign | (exponent << 4) | mantissa) & 0xFF
    return code.astype(np.uint8).tobytes()


def bounded_ratio(rate_in: int, rate_out: int, max_term: int = MAX_RATIO_TERM) -> Fraction:
    """rate_out/rate_in as a Fraction whose numerator and denominator are ≤ ``max_term``:
    the exact ratio when it fits, else the nearest that does (HEURISTIC, see MAX_RATIO_TERM)."""
    frac = Fraction(rate_out, rate_in)
    if max(frac.numerator, frac.denominator) <= max_term:
        return frac
    flip = frac > 1
    g = 1 / frac if flip else frac  # ≤ 1: its denominator is the larger term
    # the simplest ratio within 1e-4 (small terms = a short filter), else the closest one
    for q in (16, 32, 64, 128, 256, 512, max_term):
        f = g.limit_denominator(min(q, max_term))
        if f and abs(f / g - 1) <= 1e-4:
            break
    f = f or Fraction(1, max_term)
    return 1 / f if flip else f


def resample(samples: np.ndarray, rate_in: int, rate_out: int = SAMPLE_RATE) -> np.ndarray:
    """Band-limited polyphase resampling (scipy.signal.resample_poly, Kaiser window).

    Args:
        samples: float32, shape (n_samples,) or (n_samples, n_channels).
        rate_in, rate_out: sample rates in Hz (positive integers).
    Returns:
        float32 array at rate_out, same number of dimensions.
    Raises:
        AudioFormatError: a non-positive rate.
    """
    if rate_in <= 0 or rate_out <= 0:
        raise AudioFormatError(f"sample rates must be positive, got {rate_in} → {rate_out}")
    x = np.asarray(samples, dtype=np.float32)
    if rate_in == rate_out:
        return x
    from scipy.signal import resample_poly

    frac = bounded_ratio(int(rate_in), int(rate_out))
    y = resample_poly(x, frac.numerator, frac.denominator, axis=0)
    return y.astype(np.float32)


class StreamResampler:
    """Chunk-by-chunk resampler for live streams whose rate is not 16 kHz.

    Each chunk is resampled with ``resample`` on its own; a short tail of the previous chunk
    is carried to avoid edge clicks at chunk joins. Output length tracks the exact rational
    ratio, so the stream never drifts against the session clock.
    """

    def __init__(self, rate_in: int, rate_out: int = SAMPLE_RATE) -> None:
        """Raises AudioFormatError: a rate outside ``MIN_RATE``–``MAX_RATE`` (``check_rate``)."""
        rate_in = check_rate(rate_in)
        rate_out = check_rate(rate_out, "output sample rate")
        self.rate_in = rate_in
        self.rate_out = rate_out
        self._in_total = 0
        self._out_total = 0
        self._ctx = np.zeros(0, dtype=np.float32)
        self._ctx_len = max(16, rate_in // 200)  # 5 ms of history

    def __call__(self, samples: np.ndarray) -> np.ndarray:
        x = np.asarray(samples, dtype=np.float32)
        if self.rate_in == self.rate_out:
            return x
        self._in_total += len(x)
        target = (self._in_total * self.rate_out) // self.rate_in
        n_out = target - self._out_total
        padded = np.concatenate([self._ctx, x])
        y = resample(padded, self.rate_in, self.rate_out)
        skip = (len(self._ctx) * self.rate_out) // self.rate_in
        y = y[skip:]
        if len(y) < n_out:
            y = np.pad(y, (0, n_out - len(y)))
        y = y[:n_out]
        self._out_total += n_out
        self._ctx = padded[-self._ctx_len:]
        return y


def fade_edges(x: np.ndarray, fade_s: float = 0.01) -> np.ndarray:
    """A copy of ``x`` with linear fades in and out of ``fade_s`` seconds (at most half its length
    each), so a clip cut from a recording starts and ends without a click.

    Args:
        x: mono audio at 16 kHz (``SAMPLE_RATE``), any float dtype. fade_s: seconds per fade.
    Returns:
        float32, shape (n,).
    """
    y = np.asarray(x, dtype=np.float32).copy()
    nf = min(int(fade_s * SAMPLE_RATE), y.size // 2)
    if nf:
        r = np.linspace(0.0, 1.0, nf, dtype=np.float32)
        y[:nf] *= r
        y[-nf:] *= r[::-1]
    return y


def to_mono(samples: np.ndarray) -> np.ndarray:
    """Average the channels of shape (n_samples, n_channels) → (n_samples,) float32."""
    x = np.asarray(samples, dtype=np.float32)
    return x if x.ndim == 1 else x.mean(axis=1).astype(np.float32)


SIDE_PROBE_S = 60.0
"""HEURISTIC: how much of a ``--user``/``--agent`` file with several channels is read to tell a
copy of one side (dual mono) from a whole call, seconds."""
SIDE_SAME_CORRELATION = 0.98
"""HEURISTIC: channels of one side's file correlated at least this much are one signal (dual
mono, downmixed); the same figure as the input-health check's ``IDENTICAL_CORRELATION``."""


def check_one_side(data: np.ndarray, path: str | Path, role: str) -> None:
    """Refuse a ``--user``/``--agent`` file whose channels carry different signals: a whole
    two-channel call given as one side was downmixed without a word, and the echo check then
    advised swapping the files (a new user's trial). Dual mono (each channel the same signal,
    correlation ≥ ``SIDE_SAME_CORRELATION``) and silent channels pass.

    Args:
        data: float32 samples of shape (n, channels), at the file's rate (at most
            ``SIDE_PROBE_S`` of it is enough).
        path: the file, for the message. role: "user" or "agent".
    Raises:
        AudioFormatError: two channels whose correlation is below ``SIDE_SAME_CORRELATION``.
    """
    if data.ndim != 2 or data.shape[1] < 2:
        return
    x = data.astype(np.float64) - data.mean(axis=0, dtype=np.float64)
    energy = (x ** 2).sum(axis=0)
    live = [c for c in range(x.shape[1]) if energy[c] > 1e-8 * len(x)]  # RMS above 1e-4 (−80 dBFS)
    for c in live[1:]:
        corr = float((x[:, live[0]] * x[:, c]).sum() / np.sqrt(energy[live[0]] * energy[c]))
        if corr < SIDE_SAME_CORRELATION:
            raise AudioFormatError(
                f"--{role} {path} has {data.shape[1]} channels carrying different signals (channels {live[0]} and {c} "
                f"correlate {round(corr, 2) + 0.0:.2f}): {SIDE_FIX} "
                "(with --user-channel/--agent-channel), or extract one side (sox IN.wav OUT.wav remix 1 takes channel 0, "
                "remix 2 channel 1)")


_COMMON_FORMATS = ("WAV", "FLAC", "OGG", "MP3", "AIFF")
"""Formats a ``cannot decode`` message names, where this machine's libsndfile reads them."""


def _what_it_is(p) -> str:
    """What a file that is not audio holds, where its first bytes say: a JSON document (a result
    given where a recording goes: "Format not recognised" alone sent a trial to ffmpeg); else ""."""
    try:
        with open(p, "rb") as f:
            head = f.read(64).lstrip()
    except OSError:
        return ""
    if head[:1] in (b"{", b"["):
        return ("it is JSON text, not audio: a result document goes to livejudge report, compare or check; "
                "score reads recordings")
    return ""


def _decode_error(exc: Exception, p) -> str:
    """libsndfile's words for a file it cannot open, made true: for an existing regular file whose
    bytes it does not recognise (random bytes named .mp3) it says "File does not exist or is not a
    regular file (possibly a pipe?)" (a trial)."""
    text = str(exc)
    if "does not exist or is not a regular file" in text and os.path.isfile(p):
        return "its bytes are not audio that libsndfile recognises (a damaged or mislabelled file)"
    return text


def decode_hint() -> str:
    """What the file readers here decode, for a ``cannot decode`` message: the common formats
    this machine's libsndfile reads (``soundfile.available_formats()``; MP3 from libsndfile 1.1
    on, as the soundfile wheels ship it), and how to convert the rest."""
    try:
        import soundfile as sf

        have = set(sf.available_formats())
    except Exception:  # no soundfile: the decode failed before this anyway
        have = set()
    common = [f.replace("OGG", "OGG (Vorbis, Opus)") for f in _COMMON_FORMATS if f in have] or ["WAV", "FLAC"]
    return (f"livejudge reads {', '.join(common)}; convert others (M4A/AAC, WebM, ...) first, "
            "e.g. ffmpeg -i call.m4a call.wav")


def _existing_audio_file(path: str | Path) -> Path:
    """``path`` as a Path, after the checks every reader makes before decoding.

    Raises:
        AudioFormatError: the file does not exist, or is empty (0 bytes), or is "-", each with its fix.
    """
    if str(path) == "-":  # was "audio file not found: - (check the path)" (a trial)
        raise AudioFormatError("a call is read from a file; to read standard input give /dev/stdin "
                               "(cat call.wav | livejudge score /dev/stdin)")
    p = Path(path)
    if not p.exists():
        raise AudioFormatError(f"audio file not found: {p} (check the path)")
    if p.is_file() and p.stat().st_size == 0:
        raise AudioFormatError(f"{p} is an empty file (0 bytes): record the call again or check the copy")
    return p


def load_audio(path: str | Path) -> tuple[np.ndarray, int]:
    """Decode an audio file with soundfile (WAV, FLAC, OGG, MP3, ...: ``decode_hint``).

    Returns:
        (samples float32 of shape (n_samples, n_channels), sample rate in Hz).
    Raises:
        AudioFormatError: file missing, empty (0 bytes) or not decodable, a sample rate outside
            ``MIN_RATE``–``MAX_RATE``, or more than ``MAX_FILE_CHANNELS`` channels.
            Non-finite samples (float files) are replaced by 0.
    """
    import soundfile as sf

    p = _existing_audio_file(path)
    try:
        info = sf.info(str(p))
    except Exception as exc:  # soundfile raises several types; re-raise as one clear error
        raise AudioFormatError(f"cannot decode {p}: {_decode_error(exc, p)} ({_what_it_is(p) or decode_hint()})") from exc
    try:  # validated before decoding: a header claiming 1 Hz or 4 GHz must not cost memory
        check_rate(info.samplerate, f"{p}: sample rate")
    except AudioFormatError as exc:
        raise AudioFormatError(f"{exc}; resample the file (e.g. sox {p} -r 16000 {p.stem}_16k.wav)") from None
    if not 1 <= info.channels <= MAX_FILE_CHANNELS:
        raise AudioFormatError(f"{p} declares {info.channels} channels; at most {MAX_FILE_CHANNELS} "
                               "are supported (a call has two)")
    try:
        data, rate = sf.read(str(p), dtype="float32", always_2d=True)
    except Exception as exc:  # soundfile raises several types; re-raise as one clear error
        raise AudioFormatError(f"cannot decode {p}: {_decode_error(exc, p)} ({decode_hint()})") from exc
    if data.size and not np.max(np.abs(data)) <= MAX_SAMPLE_ABS:  # float WAVs can hold NaN/inf, 1e30
        data = np.clip(np.nan_to_num(data, nan=0.0, posinf=0.0, neginf=0.0), -MAX_SAMPLE_ABS, MAX_SAMPLE_ABS)
    return data, int(rate)


@dataclass(frozen=True)
class TwoChannelAudio:
    """A call split into its two roles, both float32 mono 16 kHz of equal length.

    Attributes:
        user, agent: float32, shape (n_samples,), 16 kHz.
        sample_rate_in: the input files' sample rate, Hz.
        channels: where each role came from, e.g. ``{"user": 0, "agent": 1}`` or file paths.
    """

    user: np.ndarray
    agent: np.ndarray
    sample_rate_in: int
    channels: dict

    @property
    def duration_s(self) -> float:
        return len(self.user) / SAMPLE_RATE


def load_call(
    path: str | Path | None = None,
    *,
    user: str | Path | None = None,
    agent: str | Path | None = None,
    user_channel: int = 0,
    agent_channel: int = 1,
) -> TwoChannelAudio:
    """Load a recorded call as two roles: one stereo file, or two mono files.

    Args:
        path: a file with at least two channels; ``user_channel``/``agent_channel`` pick them.
        user, agent: two files, one per role (each downmixed to mono), used instead of path.
    Raises:
        AudioFormatError: mono input without a second file, a channel index out of range,
            mismatched arguments, or no samples at all.
    """
    if path is not None and (user is not None or agent is not None):
        raise AudioFormatError("give either one stereo FILE or --user A.wav --agent B.wav, not both")
    if path is not None:
        data, rate = load_audio(path)
        n_ch = data.shape[1]
        if n_ch < 2:
            raise AudioFormatError(
                f"{path} is mono; a call needs two channels: {MONO_FIX}"
            )
        for name, idx in (("user", user_channel), ("agent", agent_channel)):
            if not 0 <= idx < n_ch:
                raise AudioFormatError(f"--{name}-channel {idx} is out of range: {path} has {n_ch} channels "
                                               f"(use 0–{n_ch - 1})")
        if user_channel == agent_channel:
            raise AudioFormatError("--user-channel and --agent-channel must differ")
        u = resample(data[:, user_channel], rate)
        a = resample(data[:, agent_channel], rate)
        channels: dict = {"user": user_channel, "agent": agent_channel}
    else:
        if user is None or agent is None:
            raise AudioFormatError("need a stereo FILE, or both --user A.wav and --agent B.wav")
        du, ru = load_audio(user)
        da, ra = load_audio(agent)
        for side_file, d, d2 in ((user, du, da), (agent, da, du)):
            if not len(d) and len(d2):  # as CallReader: one empty side is not a silent speaker
                raise AudioFormatError(_no_samples_message(side_file, (side_file,)))
        check_one_side(du[: int(SIDE_PROBE_S * ru)], user, "user")
        check_one_side(da[: int(SIDE_PROBE_S * ra)], agent, "agent")
        u = resample(to_mono(du), ru)
        a = resample(to_mono(da), ra)
        rate = ru if ru == ra else ru
        channels = {"user": str(user), "agent": str(agent)}
    n = max(len(u), len(a))
    if n == 0:
        what = path if path is not None else f"{user} and {agent}"
        raise AudioFormatError(_no_samples_message(what, (path,) if path is not None else (user, agent)))
    u = np.pad(u, (0, n - len(u)))
    a = np.pad(a, (0, n - len(a)))
    return TwoChannelAudio(user=u.astype(np.float32), agent=a.astype(np.float32), sample_rate_in=rate, channels=channels)


# ---------------------------------------------------------------------------- streaming input
def _resampled_length(n_in: int, rate_in: int, rate_out: int = SAMPLE_RATE) -> int:
    """Number of samples ``resample`` returns for ``n_in`` input samples."""
    if rate_in == rate_out:
        return n_in
    frac = Fraction(rate_out, rate_in)
    up, down = frac.numerator, frac.denominator
    return n_in * up // down + bool(n_in * up % down)


class BlockResampler:
    """Resamples a stream block by block to exactly what ``resample`` gives for the whole stream.

    ``resample`` (scipy.signal.resample_poly) filters with a Kaiser-windowed FIR of half-length
    10·max(up, down) taps at the up-sampled rate. Each block is resampled together with
    enough input on both sides (``context`` samples, aligned to the decimation factor so the
    polyphase phases line up) and only the outputs whose filter support lies in held input
    are returned; the rest wait for the next block. So a file read in blocks decodes to the
    same samples as the file read whole (to float rounding of the same operations), unlike
    ``StreamResampler``, which trades that for no added delay on live streams.

    Args:
        rate_in, rate_out: sample rates, Hz (positive integers).
    Raises:
        AudioFormatError: a non-positive rate.
    """

    def __init__(self, rate_in: int, rate_out: int = SAMPLE_RATE) -> None:
        if rate_in <= 0 or rate_out <= 0:
            raise AudioFormatError(f"sample rates must be positive, got {rate_in} → {rate_out}")
        self.rate_in, self.rate_out = int(rate_in), int(rate_out)
        frac = Fraction(self.rate_out, self.rate_in)
        self.up, self.down = frac.numerator, frac.denominator
        half_len = 10 * max(self.up, self.down)
        ctx = -(-(half_len + 2 * self.down) // self.up) + 2
        self.context = -(-ctx // self.down) * self.down  # input samples, a multiple of down
        self._buf = np.zeros(0, dtype=np.float32)
        self._buf_start = 0  # global input index of _buf[0]
        self._n_in = 0
        self._n_out = 0

    def _produce(self, k_end: int) -> np.ndarray:
        """Outputs [n_out, k_end) from the held input."""
        if k_end <= self._n_out:
            return np.zeros(0, dtype=np.float32)
        s0 = max(0, self._n_out * self.down // self.up - self.context)
        s0 -= s0 % self.down
        s0 = max(s0, self._buf_start)
        assert s0 % self.down == 0, "held input must start on the decimation grid"
        y = resample(self._buf[s0 - self._buf_start:], self.rate_in, self.rate_out)
        off = s0 * self.up // self.down
        out = y[self._n_out - off:k_end - off]
        if len(out) < k_end - self._n_out:  # the very end: resample's own length rounding
            out = np.pad(out, (0, k_end - self._n_out - len(out)))
        self._n_out = k_end
        keep = max(0, self._n_out * self.down // self.up - self.context)
        keep -= keep % self.down
        if keep > self._buf_start:
            self._buf = self._buf[keep - self._buf_start:]
            self._buf_start = keep
        return out.astype(np.float32, copy=False)

    def push(self, samples: np.ndarray) -> np.ndarray:
        """Take one block (float32, shape (n,)); return the output samples now final."""
        x = np.asarray(samples, dtype=np.float32).reshape(-1)
        if self.up == self.down:
            self._n_in += len(x)
            self._n_out += len(x)
            return x
        self._buf = np.concatenate([self._buf, x]) if self._buf.size else x.copy()
        self._n_in += len(x)
        k_end = max(0, (self._n_in - self.context) * self.up // self.down)
        return self._produce(k_end)

    def finish(self) -> np.ndarray:
        """End of stream: the remaining outputs (total = ``resample``'s length for all input)."""
        if self.up == self.down:
            return np.zeros(0, dtype=np.float32)
        return self._produce(_resampled_length(self._n_in, self.rate_in, self.rate_out))


class CallReader:
    """A recorded call read block by block: memory bounded by the block, not the file.

    Same inputs, checks and samples as ``load_call`` (which reads the whole file; use it for
    short clips). Iterate ``blocks()`` for (user, agent) pairs of float32 mono 16 kHz arrays of
    equal length; together they are exactly ``load_call``'s arrays.

    Attributes:
        sample_rate_in: the input's sample rate, Hz (the user file's, for two files).
        channels: where each role came from, as in ``TwoChannelAudio``.
        n_samples: length of each role at 16 kHz, samples (from the file headers).
        truncated: after reading, one message per file that ended before its header said, or
            that could not be decoded past some point (a damaged FLAC or OGG: what was decoded is
            scored), or an OGG that ends without its end-of-stream page (``ogg_ends_cut``). Its
            missing end is not scored: a stereo file ends where its bytes do; of two files, the
            cut one reads as silence to the other's end.
        warnings: after reading, one message per file with samples beyond ±``MAX_SAMPLE_ABS``
            (clipped), and one per file with NaN or ±inf samples (set to 0).
        unfinished: after reading, one message per WAV whose header was never finished (its
            ``data`` chunk declares 0 bytes while the file holds audio): its samples are read as
            its ``fmt`` chunk describes them, to the end of its bytes.
    Raises:
        AudioFormatError: as ``load_call``; also from ``blocks()`` when a file's first block cannot
            be decoded (damage later on is ``truncated``).
    """

    def __init__(self, path: str | Path | None = None, *, user: str | Path | None = None,
                 agent: str | Path | None = None, user_channel: int = 0, agent_channel: int = 1) -> None:
        if path is not None and (user is not None or agent is not None):
            raise AudioFormatError("give either one stereo FILE or --user A.wav --agent B.wav, not both")
        self._files: list = []
        self.truncated: list[str] = []  # one line per file that ended before its header said
        self.warnings: list[str] = []  # one line per file whose samples had to be clipped or zeroed
        self.not_numbers: list[str] = []  # those of ``warnings`` whose samples were NaN/±inf (set to 0)
        self.unfinished: list[str] = []  # one line per WAV whose header was never finished (read as raw)
        try:
            if path is not None:
                f = _open_sound(path)
                self._files.append(f)
                n_ch = f.channels
                if n_ch < 2:
                    raise AudioFormatError(
                        f"{path} is mono; a call needs two channels: {MONO_FIX}")
                for name, idx in (("user", user_channel), ("agent", agent_channel)):
                    if not 0 <= idx < n_ch:
                        raise AudioFormatError(f"--{name}-channel {idx} is out of range: {path} has {n_ch} channels "
                                               f"(use 0–{n_ch - 1})")
                if user_channel == agent_channel:
                    raise AudioFormatError("--user-channel and --agent-channel must differ")
                self.sample_rate_in = int(f.samplerate)
                self.file_channels = n_ch  # more than two: the input-health check says which two are read
                self.channels: dict = {"user": user_channel, "agent": agent_channel}
                self._cols = (user_channel, agent_channel)
                n = _resampled_length(f.frames, self.sample_rate_in)
                self._lengths = (n, n)
            else:
                if user is None or agent is None:
                    raise AudioFormatError("need a stereo FILE, or both --user A.wav and --agent B.wav")
                fu = _open_sound(user)
                self._files.append(fu)
                fa = _open_sound(agent)
                self._files.append(fa)
                for fx, side, role in ((fu, user, "user"), (fa, agent, "agent")):
                    if fx.channels > 1:  # a whole call given as one side (read the start, then rewind)
                        try:
                            head = fx.read(int(SIDE_PROBE_S * fx.samplerate), dtype="float32", always_2d=True)
                        except Exception:  # unreadable part-way: blocks() says where
                            head = None
                        if head is not None:
                            check_one_side(head, side, role)
                        try:
                            fx.seek(0)
                        except Exception:  # noqa: BLE001  (damaged part-way: blocks() opens it again)
                            pass
                self.sample_rate_in = int(fu.samplerate)
                self.channels = {"user": str(user), "agent": str(agent)}
                self._cols = None
                self._lengths = (_resampled_length(fu.frames, int(fu.samplerate)),
                                 _resampled_length(fa.frames, int(fa.samplerate)))
            self.n_samples = max(self._lengths)
            if path is None:  # one side of no samples read as a silent caller or agent, exit 0 (a trial)
                for side_file, n_side in ((user, self._lengths[0]), (agent, self._lengths[1])):
                    if n_side == 0 and self.n_samples > 0:
                        raise AudioFormatError(_no_samples_message(side_file, (side_file,)))
            if self.n_samples == 0:
                what = path if path is not None else f"{user} and {agent}"
                raise AudioFormatError(_no_samples_message(what, (path,) if path is not None else (user, agent)))
        except BaseException:
            self.close()
            raise

    @property
    def duration_s(self) -> float:
        return self.n_samples / SAMPLE_RATE

    def close(self) -> None:
        for f in self._files:
            f.close()
            src = getattr(f, "livejudge_source", None)  # a WAV read past its unfinished header
            if src is not None:
                src.close()

    def __enter__(self) -> "CallReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def blocks(self, block_s: float = 10.0):
        """Yield (user, agent): float32 mono 16 kHz arrays of equal length, in order, covering
        ``n_samples`` in all. Each block holds about ``block_s`` seconds (the last one less).
        Each call reads from the start of the file(s); use one iteration at a time."""
        frames_per_block = max(1, int(block_s * self._files[0].samplerate))
        if self._cols is not None:
            f = self._rewound(0)
            rs = (BlockResampler(self.sample_rate_in), BlockResampler(self.sample_rate_in))
            for data in self._checked_blocks(f, frames_per_block):
                yield rs[0].push(data[:, self._cols[0]]), rs[1].push(data[:, self._cols[1]])
            yield rs[0].finish(), rs[1].finish()
            return
        # two files: each at its own rate; emit equal lengths, pad the shorter one at the end
        queues: tuple[list, list] = ([], [])
        held, done = [0, 0], [False, False]
        its = [self._role_stream(i, block_s) for i in range(len(self._files))]
        emitted = 0
        while emitted < self.n_samples:
            for r in (0, 1):
                if not done[r]:
                    try:
                        y = next(its[r])
                    except StopIteration:
                        done[r] = True
                    else:
                        queues[r].append(y)
                        held[r] += len(y)
            # a role whose file has ended is known (silence) up to the end of the call
            m = min(self.n_samples - emitted if done[r] else held[r] for r in (0, 1))
            if m > 0:
                u, a = _take(queues[0], m, held, 0), _take(queues[1], m, held, 1)
                emitted += m
                yield u, a
        for r in (0, 1):  # run each file's reader to its end, where _checked_blocks notes what it found:
            for _ in its[r]:  # a pair of NaN files read "silent", the NaN unnamed
                pass

    def _rewound(self, i: int):
        """File ``i`` at its first frame. A decoder that failed part-way (a damaged FLAC) cannot seek
        any more ("Internal psf_fseek() failed"): the file is opened again by its name."""
        f = self._files[i]
        try:
            f.seek(0)
            return f
        except Exception:  # noqa: BLE001  (libsndfile's error after a failed decode)
            pass
        import soundfile as sf

        try:
            g = sf.SoundFile(f.name)
        except Exception as exc:
            raise AudioFormatError(f"cannot read {f.name} again from its start after damage part-way: {exc}") from None
        g.livejudge_declared_frames = getattr(f, "livejudge_declared_frames", None)
        g.livejudge_ogg_cut = getattr(f, "livejudge_ogg_cut", False)
        g.livejudge_name = getattr(f, "livejudge_name", None)
        f.close()
        self._files[i] = g
        return g

    def _role_stream(self, i: int, block_s: float):
        f = self._rewound(i)
        rs = BlockResampler(int(f.samplerate))
        for data in self._checked_blocks(f, max(1, int(block_s * f.samplerate))):
            yield rs.push(to_mono(data))
        yield rs.finish()

    def _checked_blocks(self, f, frames: int):
        """``_read_blocks``, noting in ``truncated`` a file that ends before its header says, and
        in ``warnings`` one whose samples had to be clipped or zeroed (counted per read of the
        file: a call is read more than once, and the counts of two reads were added up)."""
        done = n_clip = n_bad = 0
        damaged = None
        try:
            for data in _read_blocks(f, frames, keep_nonfinite=True):
                done += len(data)
                if not np.max(np.abs(data)) <= MAX_SAMPLE_ABS:  # 1e30 or NaN in a float file: fix, and say so
                    finite = np.isfinite(data)
                    n_bad += int(data.size - np.count_nonzero(finite))
                    n_clip += int(np.count_nonzero(np.abs(data[finite]) > MAX_SAMPLE_ABS))
                    data = np.clip(np.nan_to_num(data, nan=0.0, posinf=0.0, neginf=0.0), -MAX_SAMPLE_ABS,
                                   MAX_SAMPLE_ABS)
                yield data
        except AudioFormatError as exc:
            if not done:  # nothing decodable: the file is unreadable, not cut
                raise
            # damage part-way (a cut FLAC: "flac decoder lost sync"): what was decoded is scored, as a
            # cut WAV's is; it had been a traceback, and no result, within the first 120 s (a trial)
            damaged = exc.__cause__ or exc
        name = getattr(f, "livejudge_name", None) or Path(f.name).name  # a pipe's name, not its temp copy's
        if damaged is not None:
            msg = (f"{name} is damaged: it could not be decoded past {done / f.samplerate:.1f} s ({damaged}); the "
                   "rest is not scored (re-export it, or record it again)")
            if msg not in self.truncated:
                self.truncated.append(msg)
        # NaN/inf were set to 0 without a word (a note from a previous session's probing)
        for n, prefix, rest, nonfinite in (
                (n_clip, f"{name} holds ", f"samples beyond ±{MAX_SAMPLE_ABS:g} (full scale is ±1), clipped: "
                                           "check how it was written (float audio belongs in [-1, 1])", False),
                (n_bad, f"{name} holds ", "samples that are not numbers (NaN or ±inf), set to 0: check how it "
                                          "was written (a float file from a failed computation)", True)):
            msg = f"{prefix}{n} {rest}"
            if n and not any(w.startswith(prefix) and w.endswith(rest) for w in self.warnings):
                self.warnings.append(msg)
                if nonfinite:
                    self.not_numbers.append(msg)
        if getattr(f, "livejudge_unfinished", False):
            msg = (f"{name}'s header was never finished (it declares no samples: a recorder stopped before it "
                   f"closed the file, or a writer that never does): its {done / f.samplerate:.1f} s of samples were "
                   "read as its fmt chunk describes them; if the recorder stopped early, the call went on past them")
            if msg not in self.unfinished:
                self.unfinished.append(msg)
        declared = max(int(f.frames), int(getattr(f, "livejudge_declared_frames", None) or 0))
        if done < declared and damaged is None:
            msg = (f"{name} is truncated: its header says {declared / f.samplerate:.1f} s but only "
                   f"{done / f.samplerate:.1f} s could be read (a cut-off file; re-export or record it again)")
            if msg not in self.truncated:
                self.truncated.append(msg)
        elif damaged is None and getattr(f, "livejudge_ogg_cut", False):
            # libsndfile reads a cut Ogg file as a shorter whole one: its last page says it is not
            msg = (f"{name} is truncated: it ends without its Ogg end-of-stream page (a recorder stopped before it "
                   f"closed the file, or a copy cut short); the {done / f.samplerate:.1f} s it holds are scored, the "
                   "rest is missing (re-export or record it again)")
            if msg not in self.truncated:
                self.truncated.append(msg)

    def head(self, seconds: float) -> TwoChannelAudio:
        """The first ``seconds`` of the call in memory (float32 16 kHz, as ``load_call``)."""
        return self.span(seconds)[1]  # type: ignore[index]  # from 0: always a span

    def span(self, seconds: float, first=None, block_s: float = 10.0) -> tuple[float, TwoChannelAudio] | None:
        """(start_s, audio): ``seconds`` of the call in memory (float32 16 kHz, as ``load_call``)
        from the start of the first ``block_s`` block for which ``first(start_s, user, agent)`` is
        True (the block's start, s, and its two float32 16 kHz arrays); from 0 when ``first`` is
        None. None when no block is. Reads block by block and stops once ``seconds`` are held:
        memory bounded by ``seconds``, time by where the span starts."""
        n = int(round(seconds * SAMPLE_RATE))
        us, as_, got, pos, start = [], [], 0, 0, (0 if first is None else None)
        for u, a in self.blocks(block_s):
            if start is None and first(pos / SAMPLE_RATE, u, a):
                start = pos
            pos += len(u)
            if start is None:
                continue
            us.append(u[: n - got])
            as_.append(a[: n - got])
            got += len(us[-1])
            if got >= n:
                break
        if start is None:
            return None
        cat = (lambda xs: np.concatenate(xs) if xs else np.zeros(0, dtype=np.float32))
        return start / SAMPLE_RATE, TwoChannelAudio(user=cat(us), agent=cat(as_), sample_rate_in=self.sample_rate_in,
                                                    channels=self.channels)

    def read_all(self) -> TwoChannelAudio:
        """The whole call in memory (for short calls and tests)."""
        parts = list(self.blocks())
        u = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.float32)
        a = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, dtype=np.float32)
        return TwoChannelAudio(user=u, agent=a, sample_rate_in=self.sample_rate_in, channels=self.channels)


def _take(queue: list, m: int, held: list, r: int) -> np.ndarray:
    """Pop m samples from a role's queue (zeros once it has run out: the shorter file's end)."""
    out, need = [], m
    while need and queue:
        y = queue[0]
        if len(y) <= need:
            out.append(y)
            need -= len(y)
            queue.pop(0)
        else:
            out.append(y[:need])
            queue[0] = y[need:]
            need = 0
    got = m - need
    held[r] -= got
    if need:
        out.append(np.zeros(need, dtype=np.float32))
    return np.concatenate(out) if len(out) != 1 else out[0]


OGG_MAX_PAGE_BYTES = 27 + 255 + 255 * 255
"""The largest Ogg page: a 27-byte header, up to 255 lacing values, up to 255 × 255 bytes of data
(RFC 3533, section 6)."""


def ogg_ends_cut(path: str | Path) -> bool:
    """True when an Ogg file (Vorbis, Opus) does not end with a whole page that has the
    end-of-stream flag (RFC 3533, section 6: ``header_type`` bit 0x04 on a logical stream's last
    page): a recorder stopped before it closed the file, or a copy cut short. libsndfile reads such
    a file as a shorter, whole one (the length comes from the last page it finds), so nothing else
    says that its end is missing. False for a file that ends with a whole end-of-stream page, and
    for a file that cannot be read (the decoder says what is wrong with it)."""
    import struct

    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            start = max(0, size - OGG_MAX_PAGE_BYTES - 27)
            fh.seek(start)
            tail = fh.read()
    except OSError:
        return False
    at = len(tail)
    while True:  # the last "OggS" whose page, as its header gives it, ends exactly at the file's end
        at = tail.rfind(b"OggS", 0, at)
        if at < 0:
            return True  # no whole page ends the file: cut inside its last page
        head = tail[at:at + 27]
        if len(head) == 27 and head[4] == 0:
            n_seg = head[26]
            lacing = tail[at + 27:at + 27 + n_seg]
            if len(lacing) == n_seg and at + 27 + n_seg + sum(lacing) == len(tail):
                return not struct.unpack("<B", head[5:6])[0] & 0x04


def _wav_data_chunk(path: str | Path) -> tuple[int, int, int] | None:
    """Where a RIFF/WAVE file's ``data`` chunk holds its samples: ``(byte offset of the samples,
    the size the chunk header declares, the fmt chunk's block align or 0 if none came first)``, or
    None (not WAV, no data chunk among the first 64 chunks, a short fmt chunk, unreadable)."""
    import struct

    try:
        with open(path, "rb") as fh:
            head = fh.read(12)
            if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
                return None
            block_align = 0
            for _ in range(64):  # a handful of chunks precede the data in any real file
                ch = fh.read(8)
                if len(ch) < 8:
                    return None
                cid, size = ch[:4], struct.unpack("<I", ch[4:])[0]
                if cid == b"fmt ":
                    fmt = fh.read(size)
                    if len(fmt) < 14:
                        return None
                    block_align = struct.unpack("<H", fmt[12:14])[0]
                    fh.seek(size & 1, 1)
                elif cid == b"data":
                    return fh.tell(), size, block_align
                else:
                    fh.seek(size + (size & 1), 1)
    except OSError:
        return None
    return None


def _unfinished_wav_data_at(path: str | Path) -> int | None:
    """The byte offset of the samples of a RIFF/WAVE file whose ``data`` chunk declares 0 bytes (a
    header never finished: a recorder stopped before it wrote the lengths, or a streaming writer's
    placeholder), or None for any other file."""
    chunk = _wav_data_chunk(path)
    return chunk[0] if chunk is not None and chunk[1] == 0 else None


class _FromOffset:
    """A binary file read from byte ``offset`` on, as if the file began there: what libsndfile's
    RAW reader needs to read the samples of a WAV whose header was never finished (soundfile's
    virtual I/O calls ``seek``, ``tell`` and ``read``/``readinto``)."""

    def __init__(self, path: str, offset: int) -> None:
        self._fh = open(path, "rb")
        self._offset = offset
        self._fh.seek(offset)
        self.path = path

    def seek(self, pos: int, whence: int = 0) -> int:
        self._fh.seek(self._offset + pos if whence == 0 else pos, whence)
        return self.tell()

    def tell(self) -> int:
        return self._fh.tell() - self._offset

    def read(self, n: int = -1) -> bytes:
        return self._fh.read(n)

    def readinto(self, buf) -> int:
        return self._fh.readinto(buf)

    def close(self) -> None:
        self._fh.close()

    def __str__(self) -> str:  # what messages name (SoundFile.name is this object)
        return self.path


def _read_unfinished_wav(f, p: Path):
    """``f`` (an open SoundFile of ``p`` that reads 0 frames) again as its samples, when ``p`` is a WAV
    whose ``data`` chunk declares 0 bytes but whose file holds more than ``UNFINISHED_HEADER_BYTES``
    (a recorder stopped before it finished the header: a trial's 2.8 MB call had been refused with
    a sox command to repair it): libsndfile's RAW reader over the bytes after the chunk's header,
    in the format the ``fmt`` chunk declares. Returns the new SoundFile (``f`` closed), marked
    ``livejudge_unfinished``, or ``f`` itself for any other file."""
    import soundfile as sf

    try:
        if f.frames or str(f.format) != "WAV" or os.path.getsize(p) <= UNFINISHED_HEADER_BYTES:
            return f
    except OSError:
        return f
    at = _unfinished_wav_data_at(p)
    if at is None:
        return f
    src = _FromOffset(str(p), at)
    try:
        g = sf.SoundFile(src, mode="r", format="RAW", samplerate=int(f.samplerate), channels=int(f.channels),
                         subtype=str(f.subtype), endian="LITTLE")
    except Exception:  # noqa: BLE001  (a subtype RAW cannot read: the file stays refused as before)
        src.close()
        return f
    if not g.frames:
        g.close()
        src.close()
        return f
    f.close()
    g.livejudge_unfinished = True
    g.livejudge_source = src  # closed with the SoundFile's reader (CallReader.close)
    return g


def _wav_declared_frames(path: str | Path) -> int | None:
    """Frames a RIFF/WAVE file's ``data`` chunk header declares, or None (not WAV, no size, or a
    streaming writer's 0/0xFFFFFFFF placeholder). libsndfile reports the frames actually present,
    so a larger declared count means the file was cut short."""
    chunk = _wav_data_chunk(path)
    if chunk is None or not chunk[2] or chunk[1] in (0, 0xFFFFFFFF):
        return None
    return chunk[1] // chunk[2]


PIPE_SAY_S = 2.0
"""HEURISTIC: a pipe that gives nothing for this long is said to be waited for, once, seconds."""
PIPE_WAIT_S = 60.0
"""HEURISTIC: a named pipe (made with mkfifo, outside /dev and /proc) that nothing has written to
for this long is refused: no writer was started (a trial's ``score fifo.wav`` waited silently until
its CI timeout killed it), seconds. Standard input and ``<(…)`` are waited for as long as they take."""


AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".oga", ".opus", ".aiff", ".aif", ".mp3")
"""The file name endings of audio livejudge reads (what libsndfile reads; docs/cli.md)."""

_AUDIO_MAGIC = (b"RIFF", b"RIFX", b"RF64", b"fLaC", b"OggS", b"FORM", b"ID3", b"\xff\xfb", b"\xff\xf3",
                b"\xff\xf2", b".snd", b"caff", b"wvpk")
"""The first bytes of the audio containers libsndfile and mpg123 read (WAV/RF64, FLAC, Ogg, AIFF,
MP3 with an ID3 tag or a bare frame, AU, CAF, WavPack)."""


def looks_like_audio(path: str | Path) -> bool:
    """Whether ``path`` is an existing regular file that is audio by its name (``AUDIO_SUFFIXES``) or
    by its first bytes (``_AUDIO_MAGIC``), so an output written there would destroy a recording (a
    trial: a WAV copied to a name without an ending was overwritten by ``--json``). False for a missing
    file, a directory, a pipe, or one that cannot be read. Never raises."""
    p = Path(path)
    try:
        if not p.is_file():
            return False
        if p.suffix.lower() in AUDIO_SUFFIXES:
            return True
        with open(p, "rb") as fh:
            head = fh.read(4)
    except OSError:
        return False
    return any(head.startswith(m) for m in _AUDIO_MAGIC)


def is_named_pipe(path: str | Path) -> bool:
    """Whether ``path`` is a FIFO in the file system (made with mkfifo), not standard input or a
    ``<(…)`` descriptor (``/dev/stdin``, ``/dev/fd/N``, ``/proc/self/fd/N``)."""
    import stat

    text = os.path.abspath(str(path))
    if text.startswith(("/dev/", "/proc/")):
        return False
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _wait_for_pipe(p: Path, fd: int) -> None:
    """Block until ``fd`` (a pipe opened non-blocking) has bytes or its writer closed it: one line
    on stderr after ``PIPE_SAY_S``; a named pipe (``is_named_pipe``) with nothing written after
    ``PIPE_WAIT_S`` is AudioFormatError."""
    import select
    import sys
    import time

    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    named = is_named_pipe(p)
    t0 = time.monotonic()
    said = False
    while not poller.poll(250):
        waited = time.monotonic() - t0
        if not said and waited >= PIPE_SAY_S:
            said = True
            print(f"livejudge: waiting for {p} to be written"
                  + (f" (a named pipe: start the command that writes it; refused after {PIPE_WAIT_S:.0f} s)"
                     if named else ""), file=sys.stderr)
        if named and waited >= PIPE_WAIT_S:
            raise AudioFormatError(f"{p} is a named pipe that nothing wrote to in {PIPE_WAIT_S:.0f} s: start the "
                                   "command that writes it first, or give a file")


MAX_SPOOL_BYTES = 8 << 30
"""Most bytes read from a pipe before decoding (``_spool``): 8 GiB, over 6 hours of 48 kHz stereo
float32; more is a stream without end, refused rather than left to fill the disk."""


def _spool(p: Path) -> Path:
    """Copy a pipe or FIFO (``score <(cat call.wav)``, ``/dev/stdin``) to a temp file, block by
    block, so the decoder can seek in it; the caller opens it and removes the name. Disk, not
    memory, holds the copy. Raises AudioFormatError (a device such as /dev/zero, empty, more than
    ``MAX_SPOOL_BYTES``, unreadable, no space)."""
    import stat
    import tempfile

    try:
        mode = os.stat(p).st_mode
    except OSError:
        mode = 0
    if stat.S_ISDIR(mode):  # was "cannot read … (a pipe, copied to a temp file…): Is a directory" (a trial)
        raise AudioFormatError(f"{p} is a directory, not a call's audio file: give one file (a batch of the "
                               "directory's calls is `livejudge score DIR --out-dir OUT`)")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):  # /dev/zero was copied to /tmp without end (a trial)
        raise AudioFormatError(f"{p} is a device, not an audio file or a pipe: give a file, or pipe one in "
                               "(cat call.wav | livejudge score /dev/stdin)")
    try:  # non-blocking: a FIFO with no writer would block the open itself, without a word (a trial)
        rfd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise AudioFormatError(f"cannot read {p} (a pipe): {exc.strerror or exc}") from None
    try:
        _wait_for_pipe(p, rfd)
        os.set_blocking(rfd, True)
    except BaseException:
        os.close(rfd)
        raise
    fd, tmp = tempfile.mkstemp(prefix="livejudge-pipe-", suffix=p.suffix[:10] or ".audio")
    try:
        with os.fdopen(rfd, "rb") as src, os.fdopen(fd, "wb") as dst:
            got = 0
            while block := src.read(1 << 20):
                got += len(block)
                if got > MAX_SPOOL_BYTES:
                    raise AudioFormatError(f"{p} gave more than {MAX_SPOOL_BYTES >> 20} MiB: more than any call "
                                           "livejudge reads (a stream without end?); save the call to a file first")
                dst.write(block)
        if os.path.getsize(tmp) == 0:
            raise AudioFormatError(f"{p} gave no bytes (an empty pipe): check the command that feeds it")
    except OSError as exc:
        os.unlink(tmp)
        raise AudioFormatError(f"cannot read {p} (a pipe, copied to a temp file to decode it): {exc}") from None
    except BaseException:
        os.unlink(tmp)
        raise
    return Path(tmp)


def _open_sound(path: str | Path):
    import soundfile as sf

    p = _existing_audio_file(path)
    spooled = None
    if not p.is_file():  # a pipe or FIFO: libsndfile must seek ("Seek attempted on unseekable file")
        p = spooled = _spool(p)
    try:
        f = sf.SoundFile(str(p))
    except Exception as exc:
        if spooled is not None:
            os.unlink(spooled)
        raise AudioFormatError(f"cannot decode {path}: {_decode_error(exc, p)} ({_what_it_is(p) or decode_hint()})") from exc
    declared = _wav_declared_frames(p)
    ogg_cut = str(getattr(f, "format", "")) == "OGG" and ogg_ends_cut(p)
    f = _read_unfinished_wav(f, p)  # a header never finished: its samples, read as raw (a warning says so)
    if spooled is not None:
        os.unlink(spooled)  # the open file stays readable; nothing is left behind
    f.livejudge_declared_frames = declared if declared is not None and declared > f.frames else None
    f.livejudge_ogg_cut = ogg_cut  # its end is missing, which its length cannot show (ogg_ends_cut)
    f.livejudge_name = Path(path).name  # what the warnings name: a pipe's temp copy had been (a trial)
    try:  # the same header checks as load_audio, before a sample is decoded
        try:
            check_rate(f.samplerate, f"{p}: sample rate")
        except AudioFormatError as exc:
            raise AudioFormatError(f"{exc}; resample the file (e.g. sox {p} -r 16000 {p.stem}_16k.wav)") from None
        if not 1 <= f.channels <= MAX_FILE_CHANNELS:
            raise AudioFormatError(f"{p} declares {f.channels} channels; at most {MAX_FILE_CHANNELS} "
                                   "are supported (a call has two)")
    except BaseException:
        f.close()
        raise
    return f


def _read_blocks(f, frames: int, *, keep_nonfinite: bool = False):
    """float32 blocks of shape (n, channels) from an open soundfile.SoundFile."""
    done = 0
    while True:
        try:
            data = f.read(frames, dtype="float32", always_2d=True)
        except Exception as exc:
            raise AudioFormatError(f"cannot decode {f.name} after {done / f.samplerate:.1f} s: {exc}") from exc
        if not len(data):
            return
        done += len(data)
        if not keep_nonfinite and not np.isfinite(data).all():  # float files can hold NaN/inf, as in load_audio
            data = np.nan_to_num(data, nan=0.0, posinf=0.0, neginf=0.0)
        yield data


UNFINISHED_HEADER_BYTES = 4096
"""A WAV of no declared samples but more bytes than this holds audio its header never counted
(a recorder stopped before it wrote the lengths), bytes."""


def _no_samples_message(what, paths) -> str:
    """Why a call has no samples, in one line: an empty recording, or a WAV whose header was never
    finalised while its bytes hold audio (a trial's 2.7 MB file read as "an empty recording")."""
    for f in paths:
        try:
            size = os.path.getsize(f)
            with open(f, "rb") as fh:
                head = fh.read(12)
        except (OSError, TypeError):
            continue
        if head[:4] == b"RIFF" and head[8:12] == b"WAVE" and size > UNFINISHED_HEADER_BYTES:
            return (f"{f}: its header says it holds no samples, but the file has {size / 1e6:.1f} MB: the header "
                    "was never finished (a recorder stopped before it closed the file?); repair a copy, e.g. "
                    f"sox --ignore-length {f} fixed.wav, and score that")
    return (f"{what} has no audio samples (an empty recording): record the call again or check that the file "
            "was written completely")


def open_call(path: str | Path | None = None, *, user: str | Path | None = None,
              agent: str | Path | None = None, user_channel: int = 0, agent_channel: int = 1) -> CallReader:
    """Open a recorded call for reading block by block (``CallReader``); arguments and errors
    as ``load_call``. Use it as a context manager, or call ``close()``."""
    return CallReader(path, user=user, agent=agent, user_channel=user_channel, agent_channel=agent_channel)
