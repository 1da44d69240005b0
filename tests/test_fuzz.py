"""Property-based fuzzing of livejudge's untrusted-input doors (issue 11, item 4), with hypothesis.

Doors: the Twilio, Pipecat and Pipecat-eval (RTVI) wire decoders, ``Session.push``/``push_audio``/``note``, and the
audio loaders (``load_audio``/``load_call`` on arbitrary bytes and on WAV headers with
arbitrary fields). Properties: only the documented error type escapes (ProtocolError,
ValueError, AudioFormatError: one line each), what comes out is well-formed (float32 mono,
finite, a rate in range), no example takes longer than the deadline (no hang), and the audio a
door produces is bounded by its input (no unbounded memory).

Fixed budget for CI: ``derandomize=True`` (the same examples every run), 200 examples per
door (``LIVEJUDGE_FUZZ_EXAMPLES`` overrides it for a longer local run), a generous
per-example deadline so a loaded CI machine does not flake while a hang still fails.
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from livejudge.audio import MAX_RATE, MIN_RATE, SAMPLE_RATE, AudioFormatError, load_audio, load_call  # noqa: E402
from livejudge.session import Session, SessionConfig  # noqa: E402
from livejudge.sources.protocols import (AgentAudio, Interruption, Mark, ProtocolError, Status,  # noqa: E402
                                         make_protocol)

N = int(os.environ.get("LIVEJUDGE_FUZZ_EXAMPLES", "200"))
FUZZ = settings(max_examples=N, deadline=timedelta(seconds=3), derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _check_items(items, max_samples: int) -> None:
    assert isinstance(items, list)
    for it in items:
        assert isinstance(it, (AgentAudio, Interruption, Mark, Status))
        if isinstance(it, AgentAudio):
            assert it.samples.dtype == np.float32 and it.samples.ndim == 1
            assert np.isfinite(it.samples).all() and it.samples.size <= max_samples
            assert MIN_RATE <= it.sample_rate <= MAX_RATE
        if isinstance(it, Status):
            json.dumps(it.data)  # notes go into the result document


# ----------------------------------------------------------------------------- JSON values
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63), st.floats(allow_nan=False),
                      st.text(max_size=20))
json_value = st.recursive(json_leaf, lambda c: st.one_of(st.lists(c, max_size=4),
                                                         st.dictionaries(st.text(max_size=8), c, max_size=4)),
                          max_leaves=12)
b64ish = st.one_of(st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=", max_size=400),
                   st.text(max_size=40))
twilio_msg = st.one_of(
    st.fixed_dictionaries({"event": st.sampled_from(["media", "mark", "clear", "start", "stop", "dtmf"]) | json_value},
                          optional={"media": st.one_of(json_value, st.fixed_dictionaries({}, optional={
                              "payload": b64ish | json_value, "track": json_value})),
                                    "mark": st.one_of(json_value, st.fixed_dictionaries({}, optional={"name": json_value})),
                                    "streamSid": json_value}),
    json_value,
)


@FUZZ
@given(st.one_of(twilio_msg.map(json.dumps), st.text(max_size=200), st.binary(max_size=200)))
def test_fuzz_twilio_decode(message):
    p = make_protocol("twilio")
    try:
        items = p.decode(message)
    except ProtocolError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    _check_items(items, max_samples=len(message))


# ----------------------------------------------------------------------------- Pipecat
def _frames():
    pb = make_protocol("pipecat")._pb

    def audio(data, rate, ch):
        f = pb.Frame()
        f.audio.audio, f.audio.sample_rate, f.audio.num_channels = data, rate, ch
        return f.SerializeToString()

    def text(kind, s):
        f = pb.Frame()
        if kind == "text":
            f.text.text = s
        elif kind == "transcription":
            f.transcription.text = s
        else:
            f.message.data = s
        return f.SerializeToString()

    u32 = st.one_of(st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 7999, 8000, 16000, 44100, 192000, 192001,
                                                                 999983, 2**32 - 1]))
    return st.one_of(
        st.builds(audio, st.binary(max_size=2048), u32, st.one_of(st.integers(0, 4), u32)),
        st.builds(text, st.sampled_from(["text", "transcription", "message"]),
                  st.one_of(st.text(max_size=100), json_value.map(json.dumps), st.just("[" * 5000))),
        st.binary(max_size=300),
    )


@FUZZ
@given(st.data())
def test_fuzz_pipecat_decode(data):
    pytest.importorskip("pipecat")
    message = data.draw(st.one_of(_frames(), st.text(max_size=100)))
    p = make_protocol("pipecat")
    try:
        items = p.decode(message)
    except ProtocolError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    _check_items(items, max_samples=len(message))


# ----------------------------------------------------------------------------- Session
dtypes = st.sampled_from([np.float32, np.float64, np.float16, np.int16, np.int32, np.uint8, np.bool_,
                          np.complex64])
sample_arrays = st.one_of(hnp.arrays(dtypes, st.integers(0, 4000)),  # mono, up to 0.25 s
                          hnp.arrays(dtypes, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=16)))
times = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.floats(-1.0, 8.0),
                  st.sampled_from([1e304, -1e304, 1e9, 1e10, 5.0, 5.0001, 2**63]),
                  st.integers(-10, 10), st.text(max_size=3), st.none())
MAX_JUMP_S = 5.0
Session().push_audio("user", np.zeros(441, dtype=np.float32), 22050, 0.0)  # warm imports (scipy) outside the deadline


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["user", "agent", "x", ""]), sample_arrays, times,
                          st.one_of(st.none(), st.integers(-1, 2**32), st.sampled_from([8000, 22050, 191999]))),
                min_size=1, max_size=6))
def test_fuzz_session_push(calls):
    s = Session(SessionConfig(max_jump_s=MAX_JUMP_S))
    pushed_s = 0.0
    for channel, x, t, rate in calls:
        try:
            if rate is None:
                s.push(channel, x, t)
            else:
                s.push_audio(channel, x, rate, t)
        except ValueError as exc:
            assert str(exc) and "\n" not in str(exc)
            continue
        pushed_s += x.size / MIN_RATE * 1.01 + 0.01
    # bounded: the clock never passes the jumps allowed plus the audio actually pushed
    assert s.now_s <= len(calls) * MAX_JUMP_S + pushed_s + 1.0
    s.push("user", np.zeros(320, dtype=np.float32), s.now_s)  # still usable after refusals
    try:
        s.note("fuzz", 0.0, value=1)
    except ValueError:
        pass
    doc = s.close()
    json.dumps(doc)
    assert all(isinstance(e, str) and "\n" not in e for e in doc["errors"])
    with pytest.raises(ValueError):
        s.note("after close")


# ----------------------------------------------------------------------------- audio files
def _wav_bytes(fmt_tag: int, n_ch: int, rate: int, bits: int, data: bytes, lie_len: int | None) -> bytes:
    block = (n_ch * bits // 8) & 0xFFFF
    fmt = struct.pack("<HHIIHH", fmt_tag & 0xFFFF, n_ch & 0xFFFF, rate & 0xFFFFFFFF,
                      (rate * block) & 0xFFFFFFFF, block, bits & 0xFFFF)
    dlen = len(data) if lie_len is None else lie_len & 0xFFFFFFFF
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", dlen) + data
    return b"RIFF" + struct.pack("<I", len(body) & 0xFFFFFFFF) + body


wav_files = st.builds(
    _wav_bytes,
    st.sampled_from([1, 3, 6, 7, 0xFFFE, 0, 2]),
    st.one_of(st.integers(0, 3), st.integers(0, 0xFFFF)),
    st.one_of(st.sampled_from([1, 8000, 16000, 44100, 192000, 999983, 2**32 - 1]), st.integers(0, 2**32 - 1)),
    st.sampled_from([8, 16, 24, 32, 64, 0, 12]),
    st.binary(max_size=4096),
    st.one_of(st.none(), st.integers(0, 2**32 - 1)),
)


@FUZZ
@given(st.one_of(wav_files, st.binary(max_size=4096)), st.sampled_from([".wav", ".flac", ".ogg", ".mp3", ""]))
def test_fuzz_audio_loaders(blob, suffix):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / f"call{suffix}"
        p.write_bytes(blob)
        try:
            data, rate = load_audio(p)
        except AudioFormatError as exc:
            assert str(exc) and "\n" not in str(exc)
        else:
            assert data.dtype == np.float32 and data.ndim == 2 and np.isfinite(data).all()
            assert MIN_RATE <= rate <= MAX_RATE
            assert data.size <= 8 * len(blob) + 16  # no more samples than the bytes could hold
        try:
            call = load_call(p)
        except AudioFormatError as exc:
            assert str(exc) and "\n" not in str(exc)
        else:
            assert call.user.dtype == np.float32 and call.user.shape == call.agent.shape
            assert call.user.size <= 2 * SAMPLE_RATE / MIN_RATE * len(blob) + 16


# ----------------------------------------------------------------------------- Pipecat eval wire
@FUZZ
@given(st.data())
def test_fuzz_pipecat_eval_decode(data):
    pytest.importorskip("pipecat")
    p = make_protocol("pipecat-eval")
    audio_data = st.fixed_dictionaries({}, optional={"audio": b64ish | json_value,
                                                     "sampleRate": st.one_of(json_value, st.integers(-1, 2**33)),
                                                     "numChannels": json_value})
    msg = st.fixed_dictionaries({"label": st.just(p._label) | json_value,
                                 "type": st.sampled_from([p._ser.EVAL_BOT_AUDIO_TYPE, "bot-interrupted",
                                                          "bot-ready", "x"]) | json_value},
                                optional={"data": audio_data | json_value, "event": json_value})
    message = data.draw(st.one_of(msg.map(json.dumps), json_value.map(json.dumps), st.text(max_size=100),
                                  st.binary(max_size=100)))
    try:
        items = p.decode(message)
    except ProtocolError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    _check_items(items, max_samples=len(message))
