"""Conversions at the edges: PCM16, μ-law, resampling, loading calls."""

import numpy as np
import pytest
import soundfile as sf

from livejudge.audio import (
    COMMON_RATES,
    AudioFormatError,
    StreamResampler,
    float32_to_mulaw,
    float32_to_pcm16,
    load_call,
    mulaw_to_float32,
    pcm16_to_float32,
    resample,
)


def _sine(freq, rate, dur=1.0, amp=0.5):
    t = np.arange(int(rate * dur)) / rate
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def _peak_hz(x, rate):
    spec = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    return np.fft.rfftfreq(len(x), 1 / rate)[int(np.argmax(spec))]


def test_pcm16_round_trip_is_exact_to_one_lsb():
    x = np.linspace(-1, 0.999, 1001, dtype=np.float32)
    y = pcm16_to_float32(float32_to_pcm16(x))
    assert y.dtype == np.float32
    assert np.max(np.abs(x - y)) <= 1 / 32768 + 1e-7


def test_pcm16_rejects_odd_byte_count():
    with pytest.raises(AudioFormatError, match="odd byte count"):
        pcm16_to_float32(b"\x00\x01\x02")


def test_mulaw_round_trip_error_is_within_g711_step():
    x = _sine(440, 8000, 0.1, amp=0.8)
    y = mulaw_to_float32(float32_to_mulaw(x))
    # G.711 μ-law: relative error ≤ ~1/32 of the value plus the smallest step near 0
    assert np.all(np.abs(x - y) <= np.abs(x) / 16 + 2e-3)
    assert mulaw_to_float32(bytes([0xFF]))[0] == 0.0  # μ-law code 0xFF is zero


@pytest.mark.parametrize("rate", COMMON_RATES)
def test_resample_keeps_frequency_and_duration(rate):
    x = _sine(440, rate)
    y = resample(x, rate)
    assert len(y) == 16000
    assert abs(_peak_hz(y, 16000) - 440) <= 1.0


def test_stream_resampler_matches_length_and_signal():
    x = _sine(300, 48000, 2.0)
    rs = StreamResampler(48000)
    chunks = [rs(x[i:i + 960]) for i in range(0, len(x), 960)]  # 20 ms chunks
    y = np.concatenate(chunks)
    assert len(y) == 32000  # exact: no drift against the session clock
    whole = resample(x, 48000)
    # away from the very start, chunked output tracks the whole-signal resampling closely
    assert np.max(np.abs(y[800:-800] - whole[800:-800])) < 0.05


def test_load_call_stereo_channels_either_way_and_two_files(tmp_path):
    u, a = _sine(200, 44100), _sine(900, 44100)
    st = tmp_path / "call.wav"
    sf.write(st, np.stack([u, a], 1), 44100)
    c = load_call(st)
    assert c.sample_rate_in == 44100 and c.channels == {"user": 0, "agent": 1}
    assert abs(_peak_hz(c.user, 16000) - 200) <= 1 and abs(_peak_hz(c.agent, 16000) - 900) <= 1
    c2 = load_call(st, user_channel=1, agent_channel=0)
    assert abs(_peak_hz(c2.user, 16000) - 900) <= 1
    sf.write(tmp_path / "u.wav", u, 44100)
    sf.write(tmp_path / "a.wav", a[: len(a) // 2], 44100)
    c3 = load_call(user=tmp_path / "u.wav", agent=tmp_path / "a.wav")
    assert len(c3.user) == len(c3.agent) == 16000


def test_load_call_errors_are_one_line_with_the_fix(tmp_path):
    mono = tmp_path / "mono.wav"
    sf.write(mono, _sine(200, 16000), 16000)
    with pytest.raises(AudioFormatError, match="--user A.wav --agent B.wav"):
        load_call(mono)
    st = tmp_path / "st.wav"
    sf.write(st, np.zeros((1600, 2), dtype=np.float32), 16000)
    with pytest.raises(AudioFormatError, match="out of range"):
        load_call(st, agent_channel=2)
    with pytest.raises(AudioFormatError, match="not found"):
        load_call(tmp_path / "missing.wav")
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"not audio at all")
    with pytest.raises(AudioFormatError, match="cannot decode"):
        load_call(bad)


def test_cannot_decode_names_what_loads_mp3_included(tmp_path):
    """"cannot decode" said "(use WAV/FLAC/OGG)" although MP3 loads (libsndfile >= 1.1, a new
    user's trial): it names what this machine's libsndfile reads, and each named format loads."""
    from livejudge.audio import load_audio, open_call

    bad = tmp_path / "bad.m4a"
    bad.write_bytes(b"not audio at all")
    for read in (load_audio, open_call):
        with pytest.raises(AudioFormatError, match="cannot decode") as err:
            read(bad)
        msg = str(err.value)
        assert "use WAV/FLAC/OGG" not in msg and "livejudge reads WAV, FLAC" in msg and "ffmpeg" in msg, msg
    if "MP3" not in sf.available_formats():
        pytest.skip("this libsndfile has no MP3 (before 1.1)")
    assert "MP3" in msg
    mp3 = tmp_path / "call.mp3"
    sf.write(mp3, np.stack([_sine(200, 16000), _sine(300, 16000)], axis=1), 16000, format="MP3")
    data, rate = load_audio(mp3)
    assert rate == 16000 and data.shape[1] == 2


def test_a_whole_call_given_as_one_side_is_refused_and_dual_mono_is_read(tmp_path):
    """`--agent call.wav` with the two-channel call was downmixed without a word, and the echo
    check then advised swapping the files (a new user's trial). A side's file whose channels carry
    different signals is refused with the fix; dual mono and a silent second channel are read."""
    from livejudge.audio import CallReader

    u, a = _sine(200, 16000, 3.0), _sine(900, 16000, 3.0)
    sf.write(tmp_path / "u.wav", u, 16000)
    sf.write(tmp_path / "call.wav", np.stack([u, a], 1), 16000)
    sf.write(tmp_path / "dual.wav", np.stack([a, a], 1), 16000)
    sf.write(tmp_path / "half.wav", np.stack([a, np.zeros_like(a)], 1), 16000)
    msg = r"--agent .*call.wav has 2 channels carrying different signals .*pass it as FILE"
    with pytest.raises(AudioFormatError, match=msg):
        load_call(user=tmp_path / "u.wav", agent=tmp_path / "call.wav")
    with pytest.raises(AudioFormatError, match=msg):
        CallReader(user=tmp_path / "u.wav", agent=tmp_path / "call.wav")
    for ok in ("dual.wav", "half.wav"):
        c = load_call(user=tmp_path / "u.wav", agent=tmp_path / ok)
        assert abs(_peak_hz(c.agent, 16000) - 900) <= 1
        with CallReader(user=tmp_path / "u.wav", agent=tmp_path / ok) as r:  # rewound after the probe
            got = np.concatenate([b[1] for b in r.blocks()])
        assert len(got) == len(a) and abs(_peak_hz(got, 16000) - 900) <= 1


def test_a_result_json_given_as_a_recording_says_what_it_is(tmp_path):
    """A trial ran `score result.json`: "Format not recognised (livejudge reads WAV, FLAC, …)" sent
    it to convert the file; the message now says it is JSON, and which commands read results."""
    from livejudge.audio import CallReader

    p = tmp_path / "call.json"
    p.write_text('{"summary": {}}')
    from livejudge.audio import load_audio

    for read in (load_audio, CallReader):
        with pytest.raises(AudioFormatError, match="it is JSON text, not audio: a result document goes to livejudge report"):
            read(p)
    q = tmp_path / "noise.bin"
    q.write_bytes(b"\x01\x02garbage" * 10)
    with pytest.raises(AudioFormatError) as err:
        load_audio(q)
    assert "JSON" not in str(err.value) and "livejudge reads" in str(err.value)
