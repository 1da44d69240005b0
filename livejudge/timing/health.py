"""Input health of a recorded call: problems with the channels that make timing wrong or empty.

``check_input(user, agent, ...)`` (pure, numpy) looks at both channels of a call (float32 mono
16 kHz, equal length) and returns ``HealthWarning``s:

* ``silent_channel``: a channel whose loudest 30 ms frame is below ``SILENT_PEAK_DBFS``
  (a wrong ``--user-channel``/``--agent-channel``, or a side that was not recorded). Both silent:
  nothing can be measured.
* ``identical_channels``: the two channels carry the same signal (correlation ≥
  ``IDENTICAL_CORRELATION`` over the call: a mono recording copied to both channels). Every
  moment is then an overlap; nothing can be measured.
* ``channel_swap``: the "agent" channel carries an echo of the "user" channel (the echo gate's
  estimate, ``timing.echo.estimate_echo_path``, with the roles reversed, detects leakage) while
  the usual direction shows none: speakerphone echo leaks the agent into the caller's
  microphone, so the channels are probably swapped. Without echo, a second cue (HEURISTIC): the
  "user" channel is digital silence between its speech (at least ``DIGITAL_SILENCE_SHARE`` of its
  30 ms frames below ``DIGITAL_SILENCE_DBFS``) while the "agent" channel never is (at most
  ``NEVER_DIGITAL_SHARE``): a recorded agent is the side padded with exact zeros between
  utterances (Pipecat's ``AudioBufferProcessor`` fills the bot track's gaps with zero bytes),
  a caller's microphone always carries some room or line noise. Skipped when the usual
  direction of echo shows the order is right. A synthetic caller against an agent recorded after
  a noisy line also fits the cue; the message says so. When neither side is digital silence, a
  third cue (HEURISTIC): the "agent" channel's noise floor (``_noise_floor_dbfs``) is at least
  ``NOISIER_AGENT_DB`` above the "user" channel's and is room or line noise (above
  ``NOISE_FLOOR_MIN_DBFS``): the caller's microphone is usually the noisier side (a new user's
  trial: a −70 dBFS agent line against a −47 dBFS room, swapped, had given no warning).
* ``clipping``: more than ``CLIP_SHARE`` of a channel's samples sit in runs of 3 or more at
  full scale (|x| ≥ ``CLIP_LEVEL``): loud speech was cut off; onsets hold, levels do not.
* ``dc_offset``: |mean| above ``DC_LEVEL`` (the front end's high-pass removes it; said so a
  bad sound card is known).
* ``length_mismatch``: two files (``--user``/``--agent``) whose lengths differ by more than
  ``LENGTH_MISMATCH_SHARE`` and 1 s: one file's rate header is wrong, or one side was cut.
* ``quiet_channel``: a channel's speech level (``speech_level_dbfs``: its loudest 2 s) under
  ``QUIET_SPEECH_DBFS``: the VAD's gate never goes under −50 dBFS, so quiet speech is found late
  or missed (a recording's gain, a distant microphone).
* ``echo_residual``: the echo gate was applied and the agent's echo still stands out in the user
  channel just after the agent stops (``echo_residual_warnings``): a reverberant room's tail.
* ``echo_ungated``: the agent leaks into the user channel (the echo gate's estimate detects it)
  and ``--echo-gate off`` left it there (``echo_ungated_warnings``): its echo reads as caller speech.
* ``reverberant_room``: a channel's phrase ends decay like a room's reverberation (RT60 ≥
  ``REVERB_RT60_S``, ``reverberant_room_warnings``), found at the end of the call: its offsets read late.
* ``noisy_line``: a channel's noise floor above ``NOISY_FLOOR_DBFS``, or a speech-like floor
  (babble, a television: ``SPEECHLIKE_SPREAD_DB``) above ``SPEECHLIKE_FLOOR_DBFS``: outside the
  floors on which the timing error stays within the stated figures (docs/verdicts.md, the
  louder-floors table from ``benchmarks/vad_bounds.py --sets loud``).

Every threshold is HEURISTIC (no published figure fixes them). Warnings go to the result
(``source.input_health``), stderr, the event log and the report. Only a recording from which
nothing can be measured (both channels silent, or the same signal on both) is refused
(``unmeasurable``: score, replay and check exit 2 with one line; a batch skips the call); a live
stream is never stopped, only warned about.

Recorded calls are checked before they are streamed (``check_call``). Live streams (``attach``,
the Pipecat observer, the LiveKit tap) are checked by the Session's ``HealthProbe``: it keeps the
first ``LEVEL_PROBE_S`` of each channel as received, checks once when both channels have
``LIVE_CHECK_S`` (said live: stderr, above the meter, and the event log) and again at the end of
the call (the result's ``source.input_health``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from livejudge.audio import SAMPLE_RATE

SILENT_PEAK_DBFS = -50.0
"""HEURISTIC: a channel whose loudest 30 ms frame is below this holds no speech, dBFS."""
IDENTICAL_CORRELATION = 0.98
"""HEURISTIC: correlation of the two channels above which they are the same signal."""
CLIP_LEVEL = 0.99
"""HEURISTIC: |x| at or above this is at full scale (int16 full scale is 0.99997)."""
CLIP_SHARE = 1e-4
"""HEURISTIC: share of samples in full-scale runs above which a channel is clipped."""
DC_LEVEL = 0.01
"""HEURISTIC: |mean| above this is a DC offset, full-scale units."""
LENGTH_MISMATCH_SHARE = 0.02
"""HEURISTIC: two files whose lengths differ by more than this share (and 1 s) mismatch."""
SWAP_PROBE_S = 120.0
"""HEURISTIC: the channel-swap test reads at most this much of the call, seconds."""
DIGITAL_SILENCE_DBFS = -90.0
"""HEURISTIC: a 30 ms frame quieter than this (about one 16-bit step, 3e-5 full scale) is digital
silence, not a microphone's noise floor, dBFS."""
DIGITAL_SILENCE_SHARE = 0.2
"""HEURISTIC: a channel with at least this share of digitally silent frames is padded with zeros
between its speech (a recorded agent), share of 30 ms frames."""
NEVER_DIGITAL_SHARE = 0.01
"""HEURISTIC: a channel with at most this share of digitally silent frames always carries noise
(a microphone or a line), share of 30 ms frames."""
CLEAN_SOURCE_SHARE = 0.05
"""HEURISTIC: a channel with at least this share of digitally silent frames is a clean digital
source (a TTS clip, a zero-padded agent), whose noise floor is not checked (``noisy_line``): its
quietest sounding frames are speech. Above ``NEVER_DIGITAL_SHARE`` so that a noisy line with a few
dropouts (packet loss filled with zeros) is still checked; share of 30 ms frames."""
NOISE_FLOOR_PERCENTILE = 10.0
"""HEURISTIC: a channel's noise floor is this percentile of its 30 ms frame levels (a side that
talks less than 90 % of the time shows its floor there), percent."""
NOISIER_AGENT_DB = 20.0
"""HEURISTIC: an "agent" noise floor at least this far above the "user" one suggests a swap, dB."""
MEASURED_FLOOR_DBFS = -40.0
"""The loudest noise floor the timing error was measured on (``benchmarks/vad_bounds.py --sets
target``: −55…−40 dBFS; docs/cli.md, the generated timing-tolerance figure), dBFS."""
NOISY_FLOOR_DBFS = -38.0
"""HEURISTIC: a channel whose noise floor (``_noise_floor_dbfs``) is above this is outside the
measured range (``MEASURED_FLOOR_DBFS`` plus 2 dB for the floor estimate's spread): ``noisy_line``
(a trial's −30 dBFS white noise moved a 0.70 s reply to 1.02 s, and at −20 dBFS an espeak agent
read P(human) 0.63, with no warning), dBFS."""
SPEECHLIKE_SPREAD_DB = 2.0
"""HEURISTIC: a noise floor whose quiet frames vary this much or more (20th minus 5th percentile
of the 30 ms frame levels) is speech-like (babble, a television): it fluctuates as speech does.
On built calls (``benchmarks/vad_bounds.py``'s dialogues, 10 seeds, −50…−38 dBFS) white noise
varied by 0.24–0.36 dB, room (pink) noise by 0.60–0.90 dB, six-talker babble by 2.37–3.67 dB; a
crowd of many more talkers is steadier and may read below this, dB."""
SPEECHLIKE_FLOOR_DBFS = -44.0
"""HEURISTIC: a speech-like floor (``SPEECHLIKE_SPREAD_DB``) above this is ``noisy_line`` too:
babble at −40 dBFS RMS reads about −43 dBFS as a floor and already moves latencies (median error
+28 ms, p95 468 ms; ``benchmarks/vad_bounds.py --sets loud``, docs/verdicts.md), while the same
rule gave no warning on 300 channels of built calls at −65…−45 dBFS, dBFS. Babble whose talkers
pause (a café) reads a floor 9–11 dB under its level and is not caught at −40 dBFS RMS though it
moves the timing (a new user's trial; docs/verdicts.md, "Louder floors")."""
QUIET_SPEECH_DBFS = -32.0
"""HEURISTIC: a channel whose speech level (``speech_level_dbfs``) is under this is ``quiet_channel``,
dBFS. The VAD's energy gate never goes under ``VADConfig.energy_floor_dbfs`` (−50 dBFS). A trial's
call turned down by 15 dB (speech level −29 dBFS) measured every value as at full level; by 20 dB
(−34 dBFS) one reply 110 ms late; by 25 dB (−39 dBFS) a 0.35 s reply read 2.37 s and a barge-in
was lost, with no warning. The example call at −39 dBFS read one latency 170 ms off."""
QUIET_TARGET_DBFS = -15.0
"""HEURISTIC: a recording's quiet channel is scaled so that its speech level reaches this
(``quiet_gain_db``; ``sources.recording``), dBFS: the level of the built calls the noise-floor
thresholds and the timing error were measured on (the example call's channels read −14 to −15
dBFS; ``benchmarks/vad_bounds.py`` uses the same clips), so a scaled channel's floor is judged as
theirs was. (At −20 dBFS a call 25 dB down with a −60 dBFS floor read a −41 dBFS floor, under
``NOISY_FLOOR_DBFS``, where the same call at full level read −35 and was warned: a trial.)"""
MAX_GAIN_DB = 30.0
"""HEURISTIC: the most a quiet channel is scaled up, dB (more would lift a noise floor of −80
dBFS into the range the VAD reads as sound)."""
QUIET_TOP_S = 2.0
"""``speech_level_dbfs`` reads a channel's loudest this many seconds of 30 ms frames, seconds."""
NOISE_FLOOR_MIN_DBFS = -70.0
"""HEURISTIC: a noise floor above this is room or line noise, not a clean digital source, dBFS."""
MIN_CALL_S = 1.0
"""HEURISTIC (no published figure fixes it): a call shorter than this cannot hold a turn, a gap and a
reply, so nothing can be measured from it, seconds (a new user's trial: a 0.1 s file was scored,
exit 0, with nothing measured)."""


WARNING_CODES = ("too_short", "silent_channel", "identical_channels", "channel_swap", "clipping", "dc_offset",
                 "length_mismatch", "extra_channels", "truncated_file", "bad_samples", "unfinished_header", "no_speech",
                 "noisy_line", "quiet_channel", "silent_tail", "echo_residual", "echo_ungated", "reverberant_room")
"""Every ``HealthWarning.code``; a gate names one as ``input_health_<code>_count``
(``commands.gates.call_metrics``)."""


@dataclass(frozen=True, slots=True)
class HealthWarning:
    """One input problem.

    Attributes:
        code: one of ``WARNING_CODES``: "too_short", "silent_channel", "identical_channels",
            "channel_swap", "clipping", "dc_offset",
            "length_mismatch", "extra_channels" (a file of more than two channels: which two are read),
            "truncated_file", "bad_samples", "unfinished_header" (a WAV whose header was never finished,
            read to the end of its bytes) (found while the file was read: ``reader_warnings``),
            "no_speech" (a channel with sound but no VAD speech, found at the end of the call:
            ``no_speech_warnings``), "noisy_line" (a noise floor above ``NOISY_FLOOR_DBFS``, or a
            speech-like one above ``SPEECHLIKE_FLOOR_DBFS``), "quiet_channel" (speech under
            ``QUIET_SPEECH_DBFS``), "silent_tail" (``silent_tail_warning``), "echo_residual" (the echo
            gate's room tail, ``echo_residual_warnings``), "echo_ungated" (echo detected with the
            gate off, ``echo_ungated_warnings``), "reverberant_room" (phrase ends that decay like a
            reverberant room, ``reverberant_room_warnings``).
        channel: "user", "agent" or None (both).
        message: one line: the problem and the fix.
        value: the measured figure (seconds, dBFS, correlation, share, offset; see code), or None.
        threshold: the HEURISTIC threshold it crossed.
        unmeasurable: True when nothing can be measured from this input.
    """

    code: str
    channel: str | None
    message: str
    value: float | None
    threshold: float | None
    unmeasurable: bool = False

    def to_dict(self) -> dict:
        d = asdict(self)
        d["value"] = None if self.value is None else round(float(self.value), 6)
        d["basis"] = "HEURISTIC"
        return d


def _frame_rms(x: np.ndarray, frame: int = int(0.03 * SAMPLE_RATE)) -> np.ndarray:
    """RMS of each whole 30 ms frame of ``x`` (float32 16 kHz), each frame's DC removed (DC is not
    sound); float64 shape (n_frames,), empty for less than one frame."""
    n = len(x) // frame
    fr = x[: n * frame].reshape(n, frame).astype(np.float64)
    fr = fr - fr.mean(axis=1, keepdims=True)
    return np.sqrt(np.mean(fr**2, axis=1))


def _peak_dbfs(x: np.ndarray) -> float:
    rms = _frame_rms(x)
    return float(20 * np.log10(max(float(rms.max()), 1e-6))) if rms.size else -120.0


def _digital_silence_share(rms: np.ndarray) -> float:
    """Share of 30 ms frames whose RMS (``_frame_rms``: DC removed) is below
    ``DIGITAL_SILENCE_DBFS``; 0.0 for less than one frame."""
    return float(np.mean(rms < 10 ** (DIGITAL_SILENCE_DBFS / 20))) if rms.size else 0.0


def _between_sound(rms: np.ndarray) -> np.ndarray:
    """A channel's 30 ms frame RMS levels from its first frame of sound to its last (digital silence,
    below ``DIGITAL_SILENCE_DBFS``, cut off at both ends). A file that starts late or stops early
    (zeros before or after it: two files of different lengths, padded to the longer) has no zeros
    between its speech and no floor of −120 dBFS (trial K: a caller's file 18 s shorter than the
    agent's read "42 % digital silence between its speech" and the caller was called the agent)."""
    sound = np.flatnonzero(rms >= 10 ** (DIGITAL_SILENCE_DBFS / 20))
    return rms[sound[0]:sound[-1] + 1] if sound.size else rms[:0]


def _noise_floor_dbfs(rms: np.ndarray) -> float:
    """The noise floor of a channel from its 30 ms frame RMS levels (``_frame_rms``: DC removed):
    their ``NOISE_FLOOR_PERCENTILE`` percentile, dBFS (−120.0 for digital silence or no frame)."""
    if not rms.size:
        return -120.0
    return float(20 * np.log10(max(float(np.percentile(rms, NOISE_FLOOR_PERCENTILE)), 1e-6)))


def _floor_spread_db(rms: np.ndarray) -> float:
    """How much a channel's quiet 30 ms frames vary: the 20th minus the 5th percentile of their
    levels (``_frame_rms``), dB; 0.0 without frames. Frames of digital silence (below
    ``DIGITAL_SILENCE_DBFS``) are left out: a zero-padded agent is not a fluctuating floor."""
    db = 20 * np.log10(np.maximum(rms, 1e-6))
    db = db[db > DIGITAL_SILENCE_DBFS]
    if db.size < 10:
        return 0.0
    p5, p20 = np.percentile(db, [5.0, 20.0])
    return float(p20 - p5)


def quiet_gain_db(level_dbfs: float) -> float:
    """The gain a recording's quiet channel of speech level ``level_dbfs`` (``speech_level_dbfs``)
    is scaled up by: to ``QUIET_TARGET_DBFS``, at most ``MAX_GAIN_DB``, rounded to 0.1 dB. dB."""
    return round(min(MAX_GAIN_DB, max(0.0, QUIET_TARGET_DBFS - level_dbfs)), 1)


SPEECH_LEVEL_RANGE_DB = 20.0
"""HEURISTIC: ``speech_level_dbfs`` reads only frames within this many dB of a channel's fifth
loudest 30 ms frame (one or two clicks louder than the speech do not set the reference), dB."""


def speech_level_dbfs(x: np.ndarray) -> float:
    """A channel's speech level: the RMS of its loudest ``QUIET_TOP_S`` of 30 ms frames (each
    frame's DC removed) among those within ``SPEECH_LEVEL_RANGE_DB`` of its fifth loudest frame,
    dBFS (−120.0 without a frame). HEURISTIC: for a channel with at least that much speech it is the
    level of its louder speech, whatever share of the call it talks; with less (a recording that
    starts 0.3 s before the caller's phrase ends), its speech alone: a trial's 0.34 s of speech at a
    normal level had been averaged with 1.7 s of silence, read "quiet" and scaled up 17.7 dB.

    Args:
        x: float32 mono 16 kHz samples, full scale ±1."""
    rms = _frame_rms(x)
    if not rms.size:
        return -120.0
    k = max(1, int(round(QUIET_TOP_S / 0.03)))
    ref = float(np.partition(rms, max(0, rms.size - 5))[max(0, rms.size - 5)])
    loud = rms[rms >= ref * 10 ** (-SPEECH_LEVEL_RANGE_DB / 20)]
    top = np.partition(loud, max(0, loud.size - k))[-k:] if loud.size > k else loud
    return float(10 * np.log10(max(float(np.mean(top**2)), 1e-12)))


def channel_noise_floor_dbfs(x: np.ndarray) -> float:
    """The noise floor ``check_input`` compares with ``NOISY_FLOOR_DBFS`` for one channel: the
    ``NOISE_FLOOR_PERCENTILE`` percentile of its 30 ms frame RMS levels (DC removed), dBFS.

    Args:
        x: float32 mono 16 kHz samples, full scale ±1, any length.
    Returns:
        dBFS (−120.0 for digital silence or less than one 30 ms frame). HEURISTIC (see the
        percentile's note); speech-like noise (babble) reads about 3 dB below its RMS level
        (``benchmarks/vad_bounds.py --sets loud``, its ``floor_med_dbfs``)."""
    return _noise_floor_dbfs(_frame_rms(x))


def _clip_share(x: np.ndarray) -> float:
    hot = np.abs(x) >= CLIP_LEVEL
    if not hot.any():
        return 0.0
    run3 = hot[:-2] & hot[1:-1] & hot[2:]
    inrun = np.zeros_like(hot)
    inrun[:-2] |= run3
    inrun[1:-1] |= run3
    inrun[2:] |= run3
    return float(inrun.mean())


LIVE_SILENT_HINTS: dict[str, dict[str, str]] = {
    "attach": {"user": "is the microphone muted, or --input-wav silent?",
               "agent": "is the agent sending audio on this connection (--protocol, --in-rate)?"},
    "pipecat": {"user": "does the input transport receive the caller's audio (InputAudioRawFrame)?",
                "agent": "does the output transport play the bot's audio (OutputAudioRawFrame)? Is the "
                         "observer on the worker that runs the output transport?"},
    "livekit": {"user": "is the participant's microphone track published and subscribed?",
                "agent": "does the agent session publish its audio track?"},
    "python": {"user": "is the caller's audio pushed to the \"user\" channel (Session.push_audio)?",
               "agent": "is the agent's audio pushed to the \"agent\" channel (Session.push_audio)?"},
}
"""What to check when a live stream's channel is silent, by where the stream comes from (a
trial: the Pipecat observer's hint named attach's command-line flags)."""


def check_input(user: np.ndarray, agent: np.ndarray, *, lengths: tuple[int, int] | None = None,
                swap_test: bool = True, live: bool | str = False, swap_fix: str | None = None,
                scale_quiet: bool = False) -> list[HealthWarning]:
    """Input-health warnings of a call (see the module docstring).

    Args:
        user, agent: float32 mono 16 kHz, shape (n,), the same length (as read, before any
            echo gate or high-pass).
        lengths: for two files, each side's own length in samples at 16 kHz (before padding).
        swap_test: run the channel-swap test (two echo-path estimates over at most ``SWAP_PROBE_S``:
            about 0.3 s of CPU per minute of call).
        live: the channels come from a live stream (no channel flags to suggest): the messages
            name what to check on the line instead; a string names where the stream comes from
            ("attach", "pipecat", "livekit", "python": ``LIVE_SILENT_HINTS``), True means "attach".
        swap_fix: for a recording, the flags that read it the other way round (``check_call``
            derives them from the flags it was opened with: "--user-channel 0 --agent-channel 1",
            or swapping the ``--user``/``--agent`` files); None: the channel flags in general.
        scale_quiet: a quiet channel will be scaled up by ``quiet_gain_db`` before timing (a
            recording: ``sources.recording``): its noise floor is checked at that level (a trial:
            a call 25 dB down with a −60 dBFS floor, scaled by 22 dB, read a 0.50 s reply as 0.96 s
            with no ``noisy_line``, which the same call at full level gave).
    Returns:
        list of HealthWarning, most serious first.
    Raises:
        ValueError: the channels differ in length.
    """
    u = np.asarray(user, dtype=np.float32).reshape(-1)
    a = np.asarray(agent, dtype=np.float32).reshape(-1)
    if u.size != a.size:
        raise ValueError(f"user and agent channels differ in length ({u.size} vs {a.size} samples)")
    out: list[HealthWarning] = []
    if u.size < MIN_CALL_S * SAMPLE_RATE:
        out.append(HealthWarning(
            "too_short", None,
            f"the call lasts {u.size / SAMPLE_RATE:.2f} s, under {MIN_CALL_S:.0f} s: too short to hold a turn and a "
            "reply, so nothing can be measured; is this the whole recording?", u.size / SAMPLE_RATE, MIN_CALL_S,
            unmeasurable=True))
    peaks = {"user": _peak_dbfs(u), "agent": _peak_dbfs(a)}
    silent = [c for c, p in peaks.items() if p < SILENT_PEAK_DBFS]
    for c in silent:
        flag = "--user-channel" if c == "user" else "--agent-channel"
        fix = (f"check {flag}, or whether that side was recorded" if not live else
               LIVE_SILENT_HINTS.get(live if isinstance(live, str) else "attach", LIVE_SILENT_HINTS["attach"])[c])
        if peaks[c] >= NOISE_FLOOR_MIN_DBFS and live:  # faint sound on a live call: no file to score again
            # (a trial: a live Session 3 s in, the agent not yet speaking, was told to "score it again")
            fix = f"{fix}; if that side is speaking, it reaches livejudge too quietly to measure: raise its level"
        elif peaks[c] >= NOISE_FLOOR_MIN_DBFS:  # sound, too faint to read: speech recorded 40+ dB down reads so
            # (the last note: past the 30 dB gain cap a channel with speech was called silent, no more)
            fix = (f"{fix}; if it holds speech, it was recorded too quietly to measure (livejudge scales a "
                   f"quiet recording up by at most {MAX_GAIN_DB:.0f} dB): raise its level by "
                   f"{QUIET_TARGET_DBFS - peaks[c]:.0f} dB and score it again")
        out.append(HealthWarning(
            "silent_channel", c,
            f"the {c} channel is silent (loudest frame {peaks[c]:.0f} dBFS): {fix}"
            + ("; with both silent nothing can be measured" if len(silent) == 2 else ""),
            peaks[c], SILENT_PEAK_DBFS, unmeasurable=len(silent) == 2))
    if not silent and u.size:
        uu, aa = u.astype(np.float64) - u.mean(), a.astype(np.float64) - a.mean()
        den = float(np.sqrt(np.dot(uu, uu) * np.dot(aa, aa)))
        corr = float(np.dot(uu, aa) / den) if den > 0 else 0.0
        if corr >= IDENTICAL_CORRELATION:
            out.append(HealthWarning(
                "identical_channels", None,
                f"the two channels carry the same signal (correlation {corr:.3f}): a mono recording copied to "
                "both? Record the caller and the agent on separate channels; nothing can be measured from this one",
                corr, IDENTICAL_CORRELATION, unmeasurable=True))
        elif swap_test and u.size >= 2 * SAMPLE_RATE:
            from livejudge.timing.echo import DETECT_CORRELATION, estimate_echo_path

            n = min(u.size, int(SWAP_PROBE_S * SAMPLE_RATE))
            try:
                usual = estimate_echo_path(u[:n], a[:n])
                reverse = estimate_echo_path(a[:n], u[:n])
            except ValueError:
                usual = reverse = None
            fix = (f"the channels are probably swapped; {swap_fix or 'swap --user-channel and --agent-channel'}"
                   if not live else
                   "the two sides are probably fed the wrong way round (check which stream is the caller's)")
            if reverse is not None and reverse.detected and not usual.detected:
                out.append(HealthWarning(
                    "channel_swap", None,
                    f"the agent channel carries an echo of the user channel (correlation {reverse.correlation:.2f}), "
                    f"the reverse of speakerphone echo: {fix}", float(reverse.correlation), DETECT_CORRELATION))
            elif usual is None or not usual.detected:  # no echo to tell the order: the noise floors
                # each channel from its first sound to its last: padding is neither silence between
                # speech nor a floor
                ru, ra = _between_sound(_frame_rms(u[:n])), _between_sound(_frame_rms(a[:n]))
                du, da = _digital_silence_share(ru), _digital_silence_share(ra)
                # a quiet channel's room noise can sit under one 16-bit step, and its floor is low
                # because all of it is: neither cue says anything of the order (a caller 40 dB down
                # read as swapped, and the advice inverted right numbers: a trial)
                loud_user = speech_level_dbfs(u[:n]) >= QUIET_SPEECH_DBFS
                if du >= DIGITAL_SILENCE_SHARE and da <= NEVER_DIGITAL_SHARE and loud_user:
                    # a noise gate or suppressor that zeroes the caller's pauses fits too, and following
                    # "probably swapped" there inverted right numbers (a trial): the user is told to listen
                    tail = (f": {fix}" if live else
                            ": the channels may be swapped; listen to the user channel, and if it holds the agent's "
                            f"voice, {swap_fix or 'swap --user-channel and --agent-channel'}")
                    out.append(HealthWarning(
                        "channel_swap", None,
                        f"the user channel is digital silence between its speech ({du:.0%} of frames) while the agent "
                        f"channel always carries noise ({da:.0%}): a recorded agent is usually the zero-padded side "
                        f"and a microphone never is, unless the caller is synthetic or a noise gate or noise "
                        f"suppression zeroes the caller's pauses"
                        # live: a client that sends nothing in the caller's pauses leaves zeros too (a trial)
                        + (" or the caller's client sends no audio while the caller is silent (a muted microphone, "
                           "push to talk)" if live else "") + tail, du, DIGITAL_SILENCE_SHARE))
                else:
                    fu, fa = _noise_floor_dbfs(ru), _noise_floor_dbfs(ra)
                    if fa - fu >= NOISIER_AGENT_DB and fa > NOISE_FLOOR_MIN_DBFS and loud_user:
                        out.append(HealthWarning(
                            "channel_swap", None,
                            f"the agent channel's noise floor ({fa:.0f} dBFS) is {fa - fu:.0f} dB above the user "
                            f"channel's ({fu:.0f} dBFS): a caller's microphone is usually the noisier side, unless "
                            f"the caller is synthetic or the agent comes through a noisy line: {fix}",
                            fa - fu, NOISIER_AGENT_DB))
    n_probe = min(u.size, int(SWAP_PROBE_S * SAMPLE_RATE))
    for c, x in (("user", u), ("agent", a)):
        level = speech_level_dbfs(x[:n_probe] if n_probe else x) if c not in silent and x.size else None
        quiet = level is not None and level < QUIET_SPEECH_DBFS
        gain = quiet_gain_db(level) if quiet and scale_quiet else 0.0
        scaled = f" (after scaling this quiet channel up {gain:.1f} dB)" if gain else ""
        rms = _frame_rms(x[:n_probe]) if c not in silent and n_probe >= 2 * SAMPLE_RATE else None
        # a channel that drops to digital silence carries no continuous background: its quietest
        # sounding frames are its own speech (a dense 6.5 s TTS clip read "speech-like background at
        # -41 dBFS": a trial), and a noisy line never falls to zero
        if rms is not None and rms.size and float(np.mean(rms < 10 ** (DIGITAL_SILENCE_DBFS / 20))) >= CLEAN_SOURCE_SHARE:
            rms = None
        if rms is not None:
            floor = _noise_floor_dbfs(rms) + gain
            spread = _floor_spread_db(rms)
            if floor <= NOISY_FLOOR_DBFS and floor > SPEECHLIKE_FLOOR_DBFS and spread >= SPEECHLIKE_SPREAD_DB:
                out.append(HealthWarning(
                    "noisy_line", c,
                    f"the {c} channel's background is speech-like (babble or a television: its quiet frames vary by "
                    f"{spread:.0f} dB) with a floor of {floor:.0f} dBFS{scaled}; on such noise livejudge's timing error grows "
                    f"from a floor of about {SPEECHLIKE_FLOOR_DBFS:.0f} dBFS (benchmarks/vad_bounds.py --sets loud): "
                    "expect offsets found late, and replies and barge-ins missed; record closer to the source",
                    floor, SPEECHLIKE_FLOOR_DBFS))
            elif floor > NOISY_FLOOR_DBFS:
                out.append(HealthWarning(
                    "noisy_line", c,
                    f"the {c} channel's noise floor is {floor:.0f} dBFS{scaled}, louder than the floors livejudge's timing "
                    f"error was measured on (to {MEASURED_FLOOR_DBFS:.0f} dBFS, benchmarks/vad_bounds.py): expect "
                    "offsets found late or early, replies and barge-ins missed, and P(human) outside what it was "
                    "validated on; denoise or record closer to the source", floor, NOISY_FLOOR_DBFS))
        if quiet:
            out.append(HealthWarning(
                "quiet_channel", c,
                f"the {c} channel is quiet (its loudest {QUIET_TOP_S:g} s of speech at {level:.0f} dBFS, under "
                f"{QUIET_SPEECH_DBFS:.0f}): the VAD's gate stays at or above -50 dBFS, so quiet speech is found "
                "late or missed; raise the recording gain, or normalise the file (e.g. sox in.wav out.wav norm -3)",
                level, QUIET_SPEECH_DBFS))
        share = _clip_share(x)
        if share > CLIP_SHARE:
            out.append(HealthWarning(
                "clipping", c, f"the {c} channel is clipped ({share:.2%} of samples at full scale): lower the "
                "recording gain; onsets and offsets still hold", share, CLIP_SHARE))
        dc = float(np.mean(x, dtype=np.float64)) if x.size else 0.0
        if abs(dc) > DC_LEVEL:
            out.append(HealthWarning(
                "dc_offset", c, f"the {c} channel has a DC offset of {dc:+.3f} full scale (removed by the "
                "70 Hz high-pass; a sound-card fault)", dc, DC_LEVEL))
    if lengths is not None:
        lu, la = int(lengths[0]), int(lengths[1])
        diff = abs(lu - la)
        if diff > LENGTH_MISMATCH_SHARE * max(lu, la) and diff > SAMPLE_RATE:
            out.append(HealthWarning(
                "length_mismatch", None,
                f"the user file lasts {lu / SAMPLE_RATE:.1f} s and the agent file {la / SAMPLE_RATE:.1f} s: a wrong "
                "sample-rate header, or one side cut short; times after the shorter one ends are not comparable",
                diff / max(lu, la), LENGTH_MISMATCH_SHARE))
    out.sort(key=lambda w: not w.unmeasurable)
    return out


LEVEL_PROBE_S = 120.0
"""HEURISTIC: ``check_call`` reads at most this much of a long call, seconds (memory stays flat:
15 MB for both channels); the warnings then speak of that part only."""


def _swap_fix(channels) -> str | None:
    """The flags that read a recording the other way round, from its ``channels`` ({"user": index or
    path, "agent": ...}); None when unknown. A fixed "try --user-channel 1 --agent-channel 0" repeated
    the flags of a call already read that way (a new user's trial)."""
    if not isinstance(channels, dict):
        return None
    u, a = channels.get("user"), channels.get("agent")
    if isinstance(u, str) and isinstance(a, str):
        return f"swap the two files: --user {a} --agent {u}"
    if isinstance(u, int) and isinstance(a, int):
        return f"try --user-channel {a} --agent-channel {u}"
    return None


def check_call(call, *, swap_test: bool = True) -> list[HealthWarning]:
    """``check_input`` of a ``TwoChannelAudio`` or a ``livejudge.audio.CallReader`` (its first
    ``LEVEL_PROBE_S`` seconds; for two files, each file's own length too)."""
    return check_recording(call, swap_test=swap_test)[0]


def check_recording(call, *, swap_test: bool = True) -> tuple[list[HealthWarning], dict | None]:
    """``check_call``'s warnings and ``check_line``'s narrowband note of a recorded call, from one
    read of its first ``LEVEL_PROBE_S`` seconds (what ``score``, ``replay``, ``check`` and a batch
    run before streaming)."""
    lengths = getattr(call, "_lengths", None)  # CallReader: each side's length before padding
    two_files = isinstance(getattr(call, "channels", None), dict) and isinstance(call.channels.get("user"), str)
    probed = hasattr(call, "head") and call.duration_s > LEVEL_PROBE_S
    if hasattr(call, "head"):
        audio = call.head(LEVEL_PROBE_S) if probed else call.read_all()
    else:
        audio = call
    ws = check_input(audio.user, audio.agent, lengths=lengths if two_files else None, swap_test=swap_test,
                     swap_fix=_swap_fix(getattr(call, "channels", None)), scale_quiet=True)
    where = f"in the first {LEVEL_PROBE_S:.0f} s"
    if probed and unmeasurable(ws) and all(w.code == "silent_channel" for w in ws if w.unmeasurable):
        # both channels silent in the first LEVEL_PROBE_S: a call that starts later (a trial: 125 s
        # of lead silence was refused as "both channels are silent", 100 s was scored) is checked
        # from its first sound; a call silent to its end is refused as the whole call
        later = _from_first_sound(call, LEVEL_PROBE_S)
        if later is None:
            where = "in the whole call"
        else:
            start_s, audio = later
            ws = check_input(audio.user, audio.agent, lengths=lengths if two_files else None, swap_test=swap_test,
                             swap_fix=_swap_fix(getattr(call, "channels", None)), scale_quiet=True)
            where = f"in the {LEVEL_PROBE_S:.0f} s from {start_s:.0f} s, where the first sound is"
    if probed:
        from dataclasses import replace

        ws = [replace(w, message=f"{w.message} ({where})") if w.code != "length_mismatch" else w for w in ws]
    n_ch = getattr(call, "file_channels", None)
    if isinstance(n_ch, int) and n_ch > 2:  # a trial's 3-channel file was scored on two of them, silently
        ch = call.channels
        ws.append(HealthWarning(
            "extra_channels", None,
            f"the file has {n_ch} channels; only channel {ch['user']} (user) and {ch['agent']} (agent) are read: "
            f"if the call is on others, pass --user-channel and --agent-channel (0–{n_ch - 1})", float(n_ch), 2.0))
    return ws, _line_of(audio.user, audio.agent, getattr(call, "sample_rate_in", None))


def _from_first_sound(call, after_s: float):
    """(start_s, audio): ``LEVEL_PROBE_S`` of ``call`` (a ``CallReader``) from the 10 s block holding
    its first 30 ms frame above ``SILENT_PEAK_DBFS`` on either channel at or after ``after_s``, or
    None when there is none (silent to the end). ``CallReader.span``: memory bounded by
    ``LEVEL_PROBE_S``."""
    level = 10 ** (SILENT_PEAK_DBFS / 20)

    def sounds(start_s: float, u: np.ndarray, a: np.ndarray) -> bool:
        return start_s + len(u) / SAMPLE_RATE > after_s and \
            max(_frame_rms(u).max(initial=0.0), _frame_rms(a).max(initial=0.0)) >= level

    return call.span(LEVEL_PROBE_S, first=sounds)


def report_warnings(warnings: list[HealthWarning], session=None, stream=None, *, say: bool = True) -> list[dict]:
    """Say each warning: one stderr line each (unless ``say`` is False: a batch puts them in its
    summary instead), a ``input_health`` note in the session (event log, result's
    ``framework_events``); returns their dicts for the result's ``source.input_health``."""
    import sys

    out = stream if stream is not None else sys.stderr
    for w in warnings:
        if say:
            try:
                print(f"livejudge: warning: {w.message}", file=out)
            except (OSError, ValueError):
                pass
        if session is not None:
            try:
                session.note("input_health", code=w.code, channel=w.channel, message=w.message)
            except ValueError:  # the session closed meanwhile (a live check racing the end of the call)
                pass
    return [w.to_dict() for w in warnings]


NARROWBAND_HIGH_DB = -30.0
"""HEURISTIC: a channel whose loud frames hold less energy at 4.2–7 kHz than this, relative to
300–3400 Hz, carries a telephone band (``high_band_db``), dB. On built calls
(``benchmarks/vad_bounds.py``'s dialogues) wideband speech read −19…−5 dB at every noise kind
and 16/48 kHz, calls through 8 kHz −45…−40 dB, through a G.711 μ-law telephone line −64…−58 dB."""


def high_band_db(x: np.ndarray) -> float | None:
    """How much of a channel's speech lies above the telephone band: the mean power at 4.2–7 kHz
    over the mean power at 300–3400 Hz, dB, in the 32 ms frames within 20 dB of its loudest
    (its speech). Pure.

    Args:
        x: float32 mono 16 kHz samples.
    Returns:
        dB (about −19…−5 for wideband speech, below ``NARROWBAND_HIGH_DB`` for a telephone or
        8 kHz line), or None when the channel has no frame above digital silence."""
    n = 512
    m = x.size // n
    if m == 0:
        return None
    fr = np.asarray(x[: m * n], dtype=np.float64).reshape(m, n)
    fr = fr - fr.mean(axis=1, keepdims=True)
    e = np.mean(fr**2, axis=1)
    if not e.max() > 10 ** (DIGITAL_SILENCE_DBFS / 10):
        return None
    loud = fr[e > e.max() * 1e-2]
    p = np.mean(np.abs(np.fft.rfft(loud * np.hanning(n), axis=1)) ** 2, axis=0)
    f = np.fft.rfftfreq(n, 1 / SAMPLE_RATE)
    hi, lo = float(p[(f >= 4200) & (f <= 7000)].mean()), float(p[(f >= 300) & (f <= 3400)].mean())
    return float(10 * np.log10((hi + 1e-30) / (lo + 1e-30)))


def check_line(call) -> dict | None:
    """The line a recorded call came over, when it is narrowband: ``{"band": "narrowband",
    "channels": [...], "sample_rate_in": Hz, "high_band_db": {channel: dB}, "note": one line}``,
    or None (wideband, or nothing to read). A channel is narrowband when its speech holds no energy
    above the telephone band (``NARROWBAND_HIGH_DB``): an 8 kHz input, or an 8 kHz call resampled
    before it was saved. Not an input-health warning: a telephone
    line is what many agents run on, and nothing is wrong with the file. The timing error there is
    larger (a trial's 0.60 s reply read 0.86 s on a μ-law line), so the verdicts of such a call use
    the narrowband timing error (``Verdict.line``, ``timing.metrics.MEASURED_TIMING_ERROR_NARROWBAND``).

    Args:
        call: a ``TwoChannelAudio`` or ``livejudge.audio.CallReader`` (its first
            ``LEVEL_PROBE_S`` seconds are read; ``check_recording`` reads them once for both)."""
    audio = call.head(LEVEL_PROBE_S) if hasattr(call, "head") else call
    return _line_of(audio.user, audio.agent, getattr(call, "sample_rate_in", None))


def check_line_live(user: np.ndarray, agent: np.ndarray, rate: int | None = None) -> dict | None:
    """``check_line`` of a live stream's held audio (``HealthProbe.audio``: float32 mono 16 kHz,
    both channels as received), ``rate`` the source's own sample rate (Hz) or None. The Session
    runs it with the live input-health check and again at close, so attach and the Pipecat
    observer say a narrowband line as a recorded call's score does."""
    return _line_of(np.asarray(user, np.float32), np.asarray(agent, np.float32), rate)


def _line_of(user: np.ndarray, agent: np.ndarray, rate: int | None) -> dict | None:
    """``check_line`` of audio already read (float32 mono 16 kHz per channel), the input's rate beside it."""
    db = {c: high_band_db(x) for c, x in (("user", user), ("agent", agent))}
    narrow = [c for c, v in db.items() if v is not None and v < NARROWBAND_HIGH_DB]
    if not narrow:
        return None
    which = " and ".join(narrow) + (" channels are" if len(narrow) > 1 else " channel is")
    if "user" in narrow:  # latencies run from the caller's end: a word-final sound lost reads them long
        effect = ("word-final sounds above the band are not on the line, so latencies read long, and 'within timing "
                  "error' uses the timing error measured on such lines (docs/verdicts.md, the telephone table); read "
                  "flags near the human band's edge as upper bounds")
    else:  # the agent's side alone (an agent over a telephone line, the caller recorded wideband)
        effect = ("the caller's side is wideband, so latencies keep the wideband timing error; yield times, timed to "
                  "the agent's end, use the error measured on such lines (docs/verdicts.md, the telephone table)")
    note = f"the {which} narrowband (a telephone or 8 kHz line: no speech above 4 kHz): {effect}"
    return {"band": "narrowband", "channels": narrow, "sample_rate_in": rate,
            "high_band_db": {c: None if v is None else round(v, 1) for c, v in db.items()},
            "threshold_db": NARROWBAND_HIGH_DB, "note": note}


def reader_warnings(reader) -> list[HealthWarning]:
    """The problems a ``livejudge.audio.CallReader`` found while the call was read, as input-health
    warnings: ``truncated_file`` (a file that ended before its header said: its missing end is not
    scored; a stereo file ends where its bytes do, and of two files the cut one reads as silence
    to the other's end), ``bad_samples`` (samples beyond full scale clipped, NaN or ±inf set to 0) and
    ``unfinished_header`` (a WAV whose header declares no samples, read to the end of its bytes). They
    used to go only to the result's ``errors``, so a gate on ``input_health_warning_count`` passed
    a file cut to a third of its length (a new user's trial). Each message as the reader wrote it."""
    out = [HealthWarning("truncated_file", None, msg, None, None) for msg in getattr(reader, "truncated", ())]
    out += [HealthWarning("bad_samples", None, msg, None, None) for msg in getattr(reader, "warnings", ())]
    # a WAV whose header declares no samples is read to the end of its bytes (it had been refused with
    # a sox command to repair it): said, since a recorder that never finished the file may have stopped early
    out += [HealthWarning("unfinished_header", None, msg, None, None) for msg in getattr(reader, "unfinished", ())]
    return out


NO_SPEECH_MIN_S = 10.0
"""HEURISTIC: a channel that is not silent but in which the VAD found no speech over at least
this much of the call gets a ``no_speech`` warning, seconds (a shorter call may hold one side's
turn only)."""


SILENT_TAIL_S = 60.0
"""HEURISTIC: a recording whose last speech on either channel ends more than this before the call
does gets a ``silent_tail`` warning, seconds (a trial's call followed by 59 minutes of silence was
scored without a word, its report listing 1773 windows without evidence)."""


def silent_tail_warning(last_speech_end_s: float | None, duration_s: float) -> list[HealthWarning]:
    """``silent_tail`` when the call runs on more than ``SILENT_TAIL_S`` after the last speech of
    either channel (``last_speech_end_s``, s; None: no speech, which ``no_speech`` and
    ``silent_channel`` cover). Pure."""
    if last_speech_end_s is None or duration_s - last_speech_end_s <= SILENT_TAIL_S:
        return []
    tail = duration_s - last_speech_end_s
    return [HealthWarning(
        "silent_tail", None,
        f"the last {tail:.0f} s of the call hold no speech on either channel (speech ends at "
        f"{last_speech_end_s:.1f} s of {duration_s:.0f} s): a recording left running? The timing is unaffected; "
        "the judge's windows there have no evidence and count in no mean", tail, SILENT_TAIL_S)]


FLOOR_WINDOW_S = 10.0
"""HEURISTIC: the noise floor over time (``changing_floor_warnings``) is read in windows this long,
seconds: a 10 s window holds a second of pauses in ordinary speech (a 44 s audiobook monologue
read its −60 dBFS floor in every window), while a floor that rose 20 s into a call hid under the
whole call's percentile (a new user's trial: −60 then −35 dBFS white noise, no warning)."""
FLOOR_HOP_S = 5.0
"""HEURISTIC: the windows of ``changing_floor_warnings`` start this far apart, seconds."""
FLOOR_RUN_WINDOWS = 2
"""HEURISTIC: ``changing_floor_warnings`` warns only where at least this many windows in a row
(15 s of the call) read a noisy floor, so one window of a caller's long turn, read as floor, does
not."""


FLOOR_CONTRAST_DB = 10.0
"""HEURISTIC: ``changing_floor_warnings`` says where a noisy floor starts and ends only when the
other windows read at least this much quieter (a floor that rose); nearer, the noise is taken to be
there all call, reading lower where it pauses (babble), dB."""


class FloorTrack:
    """The 30 ms frame levels of one channel over the whole call, as it streams (the Session
    feeds it every chunk, float32 mono 16 kHz, before the high-pass), for
    ``changing_floor_warnings``: the checks before streaming read at most the first
    ``LEVEL_PROBE_S``. Memory: 4 bytes per 30 ms frame (0.5 MB an hour); cost: one
    ``_frame_rms`` per second of audio. Not thread-safe on its own (the Session feeds it under its
    lock)."""

    def __init__(self) -> None:
        self._buf: list[np.ndarray] = []
        self._n = 0
        self._rms: list[np.ndarray] = []

    def feed(self, x: np.ndarray) -> None:
        if not len(x):
            return
        self._buf.append(np.array(x, dtype=np.float32))  # a copy: callers reuse their buffers
        self._n += len(x)
        if self._n >= SAMPLE_RATE:
            self._flush()

    def _flush(self) -> None:
        frame = int(0.03 * SAMPLE_RATE)
        x = np.concatenate(self._buf) if len(self._buf) > 1 else self._buf[0]
        k = (len(x) // frame) * frame
        if k:
            self._rms.append(_frame_rms(x[:k]).astype(np.float32))
        rest = x[k:]
        self._buf, self._n = ([rest] if len(rest) else []), len(rest)

    def rms(self) -> np.ndarray:
        """Every whole 30 ms frame's RMS so far (``_frame_rms``), float32 shape (n_frames,)."""
        if self._n >= int(0.03 * SAMPLE_RATE):
            self._flush()
        return np.concatenate(self._rms) if self._rms else np.zeros(0, np.float32)


def _noisy_window(rms: np.ndarray) -> tuple[float, bool] | None:
    """(floor dBFS, speech-like) of one window's frame levels when it breaks the ``noisy_line``
    rules of ``check_input`` (a floor above ``NOISY_FLOOR_DBFS``, or a speech-like one above
    ``SPEECHLIKE_FLOOR_DBFS``), else None."""
    floor = _noise_floor_dbfs(rms)
    if floor > NOISY_FLOOR_DBFS:
        return floor, False
    if floor > SPEECHLIKE_FLOOR_DBFS and _floor_spread_db(rms) >= SPEECHLIKE_SPREAD_DB:
        return floor, True
    return None


def changing_floor_warnings(levels: dict, said: list[dict]) -> list[HealthWarning]:
    """``noisy_line`` for a channel whose noise floor is too loud in part of the call only, or after
    the part the check before streaming read (``LEVEL_PROBE_S``): the floor is read in
    ``FLOOR_WINDOW_S`` windows every ``FLOOR_HOP_S`` by ``check_input``'s rules, and a run of at
    least ``FLOOR_RUN_WINDOWS`` noisy windows is said with where it lies. A new user's trial: −60
    then −35 dBFS white noise from 20 s gave no warning, and −60 then −40 dBFS babble turned the
    noise's onset into a barge-in "slow_yield 3.04 s". Pure. HEURISTIC thresholds (as
    ``check_input``).

    Args:
        levels: {"user": rms, "agent": rms}, each ``FloorTrack.rms()`` (30 ms frame RMS, float32).
        said: the input-health warnings already given, as dicts: a channel already told
            ``noisy_line`` or ``silent_channel``, or an unmeasurable call, gets nothing more.
    Returns:
        list of HealthWarning (at most one per channel).
    """
    if any(w.get("unmeasurable") for w in said):
        return []
    told = {w.get("channel") for w in said if w.get("code") in ("noisy_line", "silent_channel")}
    frame_s = 0.03
    win, hop = int(round(FLOOR_WINDOW_S / frame_s)), int(round(FLOOR_HOP_S / frame_s))
    out: list[HealthWarning] = []
    for c in ("user", "agent"):
        rms = np.asarray(levels.get(c, ()), dtype=np.float64)
        if c in told or rms.size < win + hop * (FLOOR_RUN_WINDOWS - 1):
            continue
        if _digital_silence_share(rms) >= CLEAN_SOURCE_SHARE:
            continue  # a clean digital source: its quietest sounding frames are speech (check_input)
        starts = range(0, rms.size - win + 1, hop)
        found = [(s, _noisy_window(rms[s:s + win])) for s in starts]
        run, best = 0, 0
        for _, f in found:
            run = run + 1 if f is not None else 0
            best = max(best, run)
        if best < FLOOR_RUN_WINDOWS:
            continue
        noisy = [(s, f) for s, f in found if f is not None]
        start_s, end_s = noisy[0][0] * frame_s, min(rms.size, noisy[-1][0] + win) * frame_s
        floor = max(f[0] for _, f in noisy)
        quiet = [_noise_floor_dbfs(rms[s:s + win]) for s, f in found if f is None]
        if quiet and floor - max(quiet) < FLOOR_CONTRAST_DB:
            # noise there all call whose floor reads lower in some windows (babble that pauses) is not
            # "from 10 s to the end, -49 dBFS elsewhere" (a re-check: the babble was there from 0 s)
            where = (f"in {len(noisy)} of the call's {len(found)} windows, and within {FLOOR_CONTRAST_DB:.0f} dB "
                     "of it in the others")
            elsewhere = ""
        else:
            where = (f"from {start_s:.0f} s to {end_s:.0f} s" if end_s < rms.size * frame_s - FLOOR_HOP_S
                     else f"from {start_s:.0f} s to the end")
            elsewhere = f" ({min(quiet):.0f} dBFS elsewhere)" if quiet else ""
        if all(f[1] for _, f in noisy):
            what = (f"the {c} channel's background is speech-like (babble or a television) with a floor of up to "
                    f"{floor:.0f} dBFS {where}{elsewhere}; on such noise livejudge's timing error grows from a floor "
                    f"of about {SPEECHLIKE_FLOOR_DBFS:.0f} dBFS (benchmarks/vad_bounds.py --sets loud)")
            threshold = SPEECHLIKE_FLOOR_DBFS
        else:
            what = (f"the {c} channel's noise floor reaches {floor:.0f} dBFS {where}{elsewhere}, louder than the "
                    f"floors livejudge's timing error was measured on (to {MEASURED_FLOOR_DBFS:.0f} dBFS, "
                    "benchmarks/vad_bounds.py)")
            threshold = NOISY_FLOOR_DBFS
        out.append(HealthWarning(
            "noisy_line", c,
            f"{what}: expect offsets found late or early, and replies and barge-ins missed or invented there; "
            "denoise or record closer to the source (HEURISTIC, read in "
            f"{FLOOR_WINDOW_S:.0f} s windows)", floor, threshold))
    return out


REVERB_RT60_S = 0.45
"""HEURISTIC: a channel whose phrase ends decay like a room with at least this reverberation time
(RT60, seconds, estimated by ``phrase_end_decays``) gets ``reverberant_room``. On a five-exchange
dialogue with the caller through a room (built from dry clips, so the truth is known; room noise at
−55 dBFS; direct-to-reverberant ratios 0–10 dB): RT60 0.3 s (read 0.32–0.41 s) left response
latencies 0–90 ms short, RT60 0.5 s (read 0.48–0.55 s) 30–210 ms short, RT60 0.8 s (read
0.80–0.91 s) 130–390 ms short.
``benchmarks/vad_bounds.py --sets room`` gives the share of channels warned per room, and every
other set the share warned wrongly (none on the noise, target, μ-law and loud sets)."""
REVERB_SHARE = 0.6
"""HEURISTIC: at least this share of a channel's phrase ends (and ``REVERB_MIN_ENDS``) must show a
room's decay: a room is there at every phrase end, while a dry voice's own fade on a noisy line
(−38 dBFS) showed one at up to 3 of 13 ends."""
REVERB_MIN_ENDS = 3
"""HEURISTIC: fewer phrase ends with a decay than this say nothing of the room."""
_DECAY_FRAME_S = 0.03  # FloorTrack's frames
_DECAY_SLOPES_DB = (-10.0, -0.6)  # per 30 ms frame: RT60 0.18–3 s (60 dB × 0.03 s / slope)
_DECAY_FIT_DB = 1.5  # the decay's RMS distance from its straight line in dB (a room's decay is linear in dB)
_DECAY_SPAN_DB = 18.0  # the decay falls at least this far to the floor (12 dB: a dry voice fading into a −40 dBFS floor read as a room)
_DECAY_REACH_DB = 6.0  # and its line meets the floor within this (speech stops with a step instead)
_DECAY_BACK = 30  # frames before the offset the decay may start (0.9 s: in a long room the offset lies deep
# in the tail; with 0.36 s, RT60 1.2–2 s rooms went unwarned, a re-check)
_DECAY_AHEAD = 60  # frames after it within which the level reaches the floor (1.8 s)


def phrase_end_decays(rms: np.ndarray, offsets_s, floor_window_s: float = FLOOR_WINDOW_S) -> list[tuple | None]:
    """How each phrase end of one channel decays: ``(rt60_s, tail_s)`` where the level falls to the
    noise floor along a straight line in dB (a room's reverberant decay: −60 dB per RT60, Sabine;
    the blind estimate from free decays after speech, as in Ratnam et al. 2003, JASA 114(5),
    "Blind estimation of reverberation time"), else None (speech that stops with a step: a dry
    voice). HEURISTIC.

    The decay is looked for from ``_DECAY_BACK`` frames (0.9 s) before each offset to where the level
    first reads within 3 dB of the local floor, within ``_DECAY_AHEAD`` frames (1.8 s) after it (the
    floor: ``_noise_floor_dbfs`` of the ``floor_window_s`` around the offset, at least −80 dBFS): the
    earliest start from which the levels to there fit a line (RMS ≤ ``_DECAY_FIT_DB``) that falls
    0.6–10 dB per frame (RT60 0.18–3 s), spans ≥ ``_DECAY_SPAN_DB`` and meets the floor within
    ``_DECAY_REACH_DB``. A floor loud enough to hide all but ``_DECAY_SPAN_DB`` of the decay hides
    the room (a re-check: RT60 0.8 s at a 10 dB ratio on a −40 dBFS floor was not warned), and on
    such floors a short room reads long (RT60 0.3 s read as 0.55 s at −40 dBFS). ``tail_s`` is how far before the offset that decay starts:
    how much of the room's tail the offset may hold (an over-estimate: the phrase's own fade joins
    the line).

    Args:
        rms: the channel's 30 ms frame RMS (``FloorTrack.rms()``), float, shape (n_frames,).
        offsets_s: the channel's segment offsets, seconds on the same clock.
    Returns:
        one entry per offset, in order.
    """
    lv = 20 * np.log10(np.maximum(np.asarray(rms, dtype=np.float64), 1e-6))
    half = int(round(floor_window_s / 2 / _DECAY_FRAME_S))
    out: list[tuple | None] = []
    for off in offsets_s:
        i0 = int(round(off / _DECAY_FRAME_S))
        if i0 >= lv.size:
            out.append(None)
            continue
        floor = max(_noise_floor_dbfs(np.asarray(rms[max(i0 - half, 0):i0 + half], dtype=np.float64)), -80.0)
        f = next((j for j in range(max(i0 - 3, 0), min(i0 + _DECAY_AHEAD, lv.size)) if lv[j] <= floor + 3.0), None)
        found = None
        for start in range(max(i0 - _DECAY_BACK, 0), (f or 0) - 3):
            seg = lv[start:f]
            t = np.arange(seg.size, dtype=np.float64)
            slope, icpt = np.polyfit(t, seg, 1)
            if not (_DECAY_SLOPES_DB[0] <= slope <= _DECAY_SLOPES_DB[1]) or seg[0] - floor < _DECAY_SPAN_DB:
                continue
            if slope * seg.size + icpt - floor > _DECAY_REACH_DB:
                continue
            if float(np.sqrt(np.mean((seg - (slope * t + icpt)) ** 2))) <= _DECAY_FIT_DB:
                found = (round(-60.0 * _DECAY_FRAME_S / slope, 2), round((i0 - start) * _DECAY_FRAME_S, 2))
                break
        out.append(found)
    return out


def reverberant_room_warnings(levels: dict, offsets: dict, said: list[dict]) -> list[HealthWarning]:
    """``reverberant_room`` for a channel whose phrase ends decay like a room with an RT60 of at least
    ``REVERB_RT60_S`` (median of ``phrase_end_decays``), at ``REVERB_SHARE`` of its phrase ends or
    more: the VAD keeps part of that tail as speech, so the channel's offsets read late. A new user's
    trial: a caller in a reverberant room (RT60 0.5–0.8 s) read response latencies 50–290 ms short,
    flattering the agent, with no warning. Pure. HEURISTIC.

    Args:
        levels: {"user": rms, "agent": rms}, each ``FloorTrack.rms()`` (30 ms frame RMS).
        offsets: {"user": [offset_s, ...], "agent": [...]}, the channels' segment offsets, seconds.
        said: the input-health warnings already given, as dicts (an unmeasurable call, or a silent
            channel, gets nothing more).
    Returns:
        list of HealthWarning (at most one per channel).
    """
    if any(w.get("unmeasurable") for w in said):
        return []
    told = {w.get("channel") for w in said if w.get("code") in ("silent_channel", "reverberant_room")}
    out: list[HealthWarning] = []
    for c in ("user", "agent"):
        ends = list(offsets.get(c, ()))
        if c in told or len(ends) < REVERB_MIN_ENDS:
            continue
        found = [d for d in phrase_end_decays(levels.get(c, np.zeros(0)), ends) if d is not None]
        if len(found) < REVERB_MIN_ENDS or len(found) < REVERB_SHARE * len(ends):
            continue
        rt60 = float(np.median([d[0] for d in found]))
        if rt60 < REVERB_RT60_S:
            continue
        tail_ms = 1000 * float(np.median([d[1] for d in found]))
        # what moves (a re-check measured it): not the caller's onsets, so not a barge-in's time
        side = ("response latencies read short (flattering the agent), and a quick reply can read as an early "
                "start or as the agent restarting over the caller" if c == "user" else "the caller's replies read quicker than they were, the agent's yields longer")
        out.append(HealthWarning(
            "reverberant_room", c,
            f"the {c} channel sounds reverberant: {len(found)} of its {len(ends)} phrase ends decay like a room "
            f"with RT60 about {rt60:.1f} s, and the timing keeps part of that tail as speech, so its offsets read "
            f"late by up to about {tail_ms:.0f} ms: {side}; record closer to the talker or with a headset "
            "(HEURISTIC)", rt60, REVERB_RT60_S))
    return out


def echo_residual_warnings(gate_info: dict) -> list[HealthWarning]:
    """``echo_residual`` when the echo gate was applied and the agent's echo still stands
    ``timing.echo.RESIDUAL_TAIL_DB`` above the user channel's floor just after the agent stops
    (``source.echo_gate.residual_tail_db``, ``timing.echo.residual_tail_db``): a speakerphone in
    a reverberant room, whose tail outlasts the echo path the gate models. A new user's trial: at
    −10 dB through a room of RT60 0.8 s the gate was on, and the tail became four caller
    barge-ins and a talked-through barge-in read as a 3.34 s yield, with no warning. Pure.
    HEURISTIC."""
    from livejudge.timing.echo import RESIDUAL_TAIL_DB

    tail = gate_info.get("residual_tail_db") if isinstance(gate_info, dict) and gate_info.get("applied") else None
    if not isinstance(tail, (int, float)) or tail < RESIDUAL_TAIL_DB:
        return []
    return [HealthWarning(
        "echo_residual", "user",
        f"the agent's echo outlasts the echo gate: the user channel stays {tail:.0f} dB above its floor just after "
        f"the agent stops (a speakerphone in a reverberant room); its tail can read as caller speech: phantom "
        "backchannels and barge-ins, yields read long; use a headset or the phone's echo canceller, or record "
        "each side before it reaches the room (HEURISTIC)", float(tail), RESIDUAL_TAIL_DB)]


def echo_ungated_warnings(gate_info: dict) -> list[HealthWarning]:
    """``echo_ungated`` when ``--echo-gate off`` was asked and the gate's estimate still detects the
    agent leaking into the user channel (``source.echo_gate.detected``, from
    ``timing.echo.gate_source``'s estimate on the same span ``auto`` reads). A new user's trial:
    speakerphone calls scored with the gate off read the agent's echo as caller speech (phantom
    barge-ins and backchannels) without a word. Pure. HEURISTIC (the detection threshold,
    ``timing.echo.DETECT_CORRELATION``)."""
    from livejudge.timing.echo import DETECT_CORRELATION

    if not isinstance(gate_info, dict) or gate_info.get("mode") != "off" or not gate_info.get("detected"):
        return []
    corr = float(gate_info.get("correlation") or 0.0)
    where = (f" at {gate_info['delay_ms']:.0f} ms, {gate_info['gain_db']:.1f} dB"
             if all(isinstance(gate_info.get(k), (int, float)) for k in ("delay_ms", "gain_db")) else "")
    return [HealthWarning(
        "echo_ungated", "user",
        f"the agent leaks into the user channel{where} (correlation {corr:.2f}) and --echo-gate off left it there: "
        "its echo can read as caller speech (phantom barge-ins and backchannels, yields read long); score with "
        "--echo-gate auto (the default) to gate it (HEURISTIC)", corr, float(gate_info.get("threshold")
                                                                               or DETECT_CORRELATION))]


def no_speech_warnings(spoke, duration_s: float, said: list[dict]) -> list[HealthWarning]:
    """``no_speech`` for each channel with no VAD speech segment over a call of at least
    ``NO_SPEECH_MIN_S``, unless a warning already said why (``silent_channel``, an unmeasurable
    input): a file of noise, music or a garbled body scored as a call with "n=0" and nothing to
    say why (a trial). Pure.

    Args:
        spoke: the channels ("user", "agent") with at least one VAD speech segment.
        duration_s: the call's length, seconds.
        said: the input-health warnings already given, as dicts (``HealthWarning.to_dict``).
    """
    if duration_s < NO_SPEECH_MIN_S:
        return []
    have = set(spoke)
    told = {(w.get("code"), w.get("channel")) for w in said if isinstance(w, dict)}
    out = []
    for c in ("user", "agent"):
        if c in have or ("silent_channel", c) in told or any(code == "identical_channels" for code, _ in told):
            continue
        out.append(HealthWarning(
            "no_speech", c,
            f"no speech was found on the {c} channel in {duration_s:.0f} s (it carries sound, but the voice "
            "activity detector found none): is it speech, noise or music, and is the file decoded as recorded?",
            0.0, NO_SPEECH_MIN_S))
    return out


def silent_from_nan(not_numbers: Sequence[str], what: str) -> str:
    """The refusal of audio that reads silent because its NaN/±inf samples were set to 0: the
    reader's first line about them (``CallReader.not_numbers``), then ``what`` ("both channels
    are", "the file is") was silent. One wording for ``unmeasurable`` and a manifest's mono row."""
    return f"{not_numbers[0]}; with them set to 0 {what} silent: nothing can be measured"


def unmeasurable(warnings: list[HealthWarning], *, truncated: Sequence[str] = (),
                 not_numbers: Sequence[str] = ()) -> str | None:
    """The one-line reason to refuse a recording, or None when something can be measured:
    too short, both channels silent, or one signal on both (``HealthWarning.unmeasurable``).

    Args:
        warnings: ``check_recording``'s warnings.
        truncated: the reader's lines for files that end before their header says
            (``CallReader.truncated``): a call too short because it was cut names the cut (a trial's
            WAV cut to 50 bytes read only "lasts 0.00 s").
        not_numbers: the reader's lines for samples that were NaN/±inf and set to 0
            (``CallReader.not_numbers``): channels silent because they were NaN name the NaN (an
            all-NaN file was refused as silent).
    """
    bad = [w for w in warnings if w.unmeasurable]
    if not bad:
        return None
    short = next((w for w in bad if w.code == "too_short"), None)
    if short is not None and truncated:
        return f"the call lasts {short.value:.2f} s, under {MIN_CALL_S:.0f} s: {truncated[0]}"
    if all(w.code == "silent_channel" for w in bad):
        if not_numbers:
            return silent_from_nan(not_numbers, "both channels are")
        return ("both channels are silent (loudest frames "
                + " and ".join(f"{w.value:.0f} dBFS" for w in bad if w.value is not None)
                + "): nothing can be measured; check --user-channel/--agent-channel, or whether the call was recorded")
    return bad[0].message


LIVE_CHECK_S = 30.0
"""HEURISTIC: a live stream is checked once both channels have this much audio, seconds (early
enough to fix a muted side during the call; long enough for both sides to have spoken)."""


class HealthProbe:
    """Input health of a live stream (see the module docstring).

    ``feed(channel, x)`` keeps the first ``limit_s`` seconds of each channel (float32 mono 16 kHz,
    as received, before the high-pass: memory at most 2 × ``limit_s`` × 64 KB, 15 MB at 120 s).
    ``due()`` is True once, when both channels hold ``LIVE_CHECK_S``; ``check()`` runs
    ``check_input(live=True)`` on the aligned part held (both channels to the shorter one).
    Not thread-safe on its own: the Session feeds it under its lock.
    """

    def __init__(self, limit_s: float = LEVEL_PROBE_S, early_s: float = LIVE_CHECK_S, source: str = "attach") -> None:
        self.source = source  # where the stream comes from, for the hints (``LIVE_SILENT_HINTS``)
        self._limit = int(limit_s * SAMPLE_RATE)
        self._early = int(early_s * SAMPLE_RATE)
        self.early_s = float(early_s)
        self._parts: dict[str, list[np.ndarray]] = {"user": [], "agent": []}
        self._n = {"user": 0, "agent": 0}
        self._early_done = False

    def feed(self, channel: str, x: np.ndarray) -> None:
        room = self._limit - self._n[channel]
        if room > 0 and len(x):
            part = np.array(x[:room], dtype=np.float32)  # a copy: callers reuse their buffers
            self._parts[channel].append(part)
            self._n[channel] += len(part)

    @property
    def held_s(self) -> float:
        """Seconds held on both channels (the shorter one)."""
        return min(self._n.values()) / SAMPLE_RATE

    def due(self) -> bool:
        """True exactly once: when both channels first hold ``early_s`` seconds."""
        if self._early_done or min(self._n.values()) < self._early:
            return False
        self._early_done = True
        return True

    def audio(self) -> tuple[np.ndarray, np.ndarray]:
        """(user, agent) float32 (n,), both cut to the shorter channel held."""
        n = min(self._n.values())
        u = np.concatenate(self._parts["user"]) if self._parts["user"] else np.zeros(0, np.float32)
        a = np.concatenate(self._parts["agent"]) if self._parts["agent"] else np.zeros(0, np.float32)
        return u[:n], a[:n]

    def check(self) -> list[HealthWarning]:
        """``check_input(live=True)`` of what is held; [] when under 1 s is held (nothing to judge)."""
        u, a = self.audio()
        if len(u) < SAMPLE_RATE:
            return []
        return check_input(u, a, live=self.source)


__all__ = ["HealthProbe", "HealthWarning", "LIVE_CHECK_S", "check_call", "check_input", "check_line", "check_line_live",
           "report_warnings",
           "unmeasurable"]
