"""Hostile input is bounded (issue 11, items 2 and 3): each failure the issue lists, reproduced.

Session API: int16 is scaled, (n, 2)/3-D refused, NaN samples cleaned and counted, NaN times
refused, a 10 h jump refused, ``note`` after close raises. Wire: Twilio fields of the wrong
type and Pipecat frames with an odd byte count or absurd rate give one-line ProtocolErrors;
end to end the call ends with exit 1, one line, and a result whose ``ended``/``errors`` say
why. Files: a WAV header declaring 1 Hz or 4294967295 Hz is refused before decoding.
"""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import time

import numpy as np
import pytest

from livejudge.audio import (MAX_RATE, MIN_RATE, SAMPLE_RATE, AudioFormatError, StreamResampler, bounded_ratio,
                             check_rate, load_audio, load_call)
from livejudge.session import Session, SessionConfig
from livejudge.sources.protocols import AgentAudio, Mark, ProtocolError, make_protocol
from livejudge.testing.dialogues import DialogueBuilder

VAD_FRAME_S = 0.03


def _dialogue():
    b = DialogueBuilder(seed=1)
    b.user("cmu_cards_005")
    b.agent("espeak_reply_01", gap_s=0.6)
    return b.build()


def _latencies(session: Session) -> list[float]:
    return [t.gap_s for t in session.close() and session.timeline.transitions if t.is_response]


# ----------------------------------------------------------------------------- Session.push
def test_int16_is_scaled_like_float():
    d = _dialogue()
    truth = d.truth.response_latencies_s
    got = {}
    for kind in ("float", "int16"):
        s = Session()
        for i in range(0, len(d.call.user), 320):
            u, a = d.call.user[i:i + 320], d.call.agent[i:i + 320]
            if kind == "int16":
                u = np.round(u * 32767).astype(np.int16)
                a = np.round(a * 32767).astype(np.int16)
            s.push("user", u, i / SAMPLE_RATE)
            s.push("agent", a, i / SAMPLE_RATE)
        got[kind] = _latencies(s)
    assert len(truth) == 1 and len(got["int16"]) == 1
    assert abs(got["int16"][0] - truth[0]) <= VAD_FRAME_S + 0.01  # int16 taken at its true level
    assert got["int16"] == pytest.approx(got["float"], abs=1e-9)


@pytest.mark.parametrize("shape", [(640, 2), (2, 320, 1), ()])
def test_non_mono_refused_with_downmix_hint(shape):
    s = Session()
    with pytest.raises(ValueError, match=r"must be mono, shape \(n_samples,\)") as e:
        s.push("user", np.zeros(shape, dtype=np.float32), 0.0)
    if len(shape) == 2:
        assert "livejudge.audio.to_mono" in str(e.value)
    assert s.now_s == 0.0  # nothing fed


@pytest.mark.parametrize("raw", [bytes(640), bytearray(640), memoryview(bytes(640))])
def test_raw_pcm_bytes_are_refused_with_how_to_decode_them(raw):
    """A trial passed a transport frame's bytes to push_audio: "must be mono, shape (n_samples,),
    got shape ()" did not say that bytes are not samples."""
    s = Session()
    with pytest.raises(ValueError, match=r"user samples are raw bytes: decode them first.*np\.frombuffer"):
        s.push_audio("user", raw, 16000, 0.0)
    with pytest.raises(ValueError, match="raw bytes"):
        s.push_audio("user", raw, 8000, 0.0)  # resampled rates check the samples first, too
    assert s.now_s == 0.0  # nothing fed


@pytest.mark.parametrize("bad", [np.zeros(10, dtype=np.int32), np.zeros(10, dtype=complex),
                                 np.array(["a", "b"]), np.zeros(10, dtype=bool), [[1.0], [2.0, 3.0]]])
def test_unusable_dtypes_refused(bad):
    with pytest.raises(ValueError, match="samples"):
        Session().push("agent", bad, 0.0)


def test_nan_samples_replaced_and_counted_once_per_channel():
    s = Session()
    x = np.zeros(320, dtype=np.float32)
    x[:5] = np.nan
    x[5:7] = np.inf
    s.push("user", x, 0.0)
    s.push("user", x, 0.02)
    s.push("agent", x, 0.0)
    doc = s.close()
    errs = [e for e in doc["errors"] if "NaN/inf" in e]
    assert errs == ["user audio had 14 NaN/inf samples, replaced by 0 (check the source's conversion)",
                    "agent audio had 7 NaN/inf samples, replaced by 0 (check the source's conversion)"]
    assert doc["duration_s"] == pytest.approx(0.04)


@pytest.mark.parametrize("t", [float("nan"), float("inf"), -float("inf"), "abc", None, True,
                               1.1235582092889475e+304, -1e300])  # found by fuzzing: OverflowError
def test_bad_timestamps_refused(t):
    s = Session()
    with pytest.raises(ValueError, match="t_s must be"):
        s.push("user", np.zeros(10, dtype=np.float32), t)
    assert s.now_s == 0.0


def test_ten_hour_jump_refused_fast():
    s = Session()
    s.push("user", np.zeros(320, dtype=np.float32), 0.0)
    with pytest.raises(ValueError, match=r"jumps 36000\.0 s ahead.*max_jump_s=600"):
        s.push("user", np.zeros(320, dtype=np.float32), 36000.0)
    assert s.now_s == pytest.approx(0.02)  # nothing filled
    s.push("user", np.zeros(320, dtype=np.float32), 30.0)  # within the limit: filled with silence
    assert s.now_s == pytest.approx(30.02)
    s2 = Session(SessionConfig(max_jump_s=5.0))
    with pytest.raises(ValueError, match="max_jump_s=5.0"):
        s2.push("agent", np.zeros(10, dtype=np.float32), 6.0)
    with pytest.raises(ValueError, match="max_jump_s"):
        SessionConfig(max_jump_s=0).validate()


def test_note_after_close_raises():
    s = Session()
    s.note("before")
    s.close()
    with pytest.raises(ValueError, match="session is closed"):
        s.note("after")
    with pytest.raises(ValueError, match="t_s must be finite"):
        Session().note("x", float("nan"))


@pytest.mark.parametrize("rate", [1, 999983, 4294967295, 0, -16000, 7999, 192001, 16000.5, "16000"])
def test_push_audio_rate_range(rate):
    with pytest.raises(ValueError, match="sample_rate") as e:
        Session().push_audio("agent", np.zeros(640, dtype=np.float32), rate, 0.0)
    assert str(rate) in str(e.value) or repr(rate) in str(e.value)


def test_rates_in_range_resample_with_bounded_ratio():
    assert check_rate(MIN_RATE) == MIN_RATE and check_rate(float(MAX_RATE)) == MAX_RATE
    for r in (8000, 11025, 22050, 44100, 48000, 96000, 192000):  # common rates: exact ratios
        assert bounded_ratio(r, SAMPLE_RATE) == __import__("fractions").Fraction(SAMPLE_RATE, r)
    f = bounded_ratio(191999, SAMPLE_RATE)  # exact would be 16000/191999
    assert max(f.numerator, f.denominator) <= 1000 and abs(float(f) * 191999 / SAMPLE_RATE - 1) < 1e-3
    rs = StreamResampler(191999)
    out = sum(len(rs(np.zeros(7680, dtype=np.float32))) for _ in range(25))  # 1 s
    assert abs(out - SAMPLE_RATE) <= 2  # no drift against the session clock


# ----------------------------------------------------------------------------- wire: Twilio
@pytest.mark.parametrize("msg,field", [
    ({"event": "media", "media": "AAAA"}, '"media" must be an object'),
    ({"event": "media", "media": {"payload": 12345}}, '"payload" must be a base64 string'),
    ({"event": "mark", "mark": "name"}, '"mark" must be an object'),
    ({"event": "mark", "mark": {"name": {"x": 1}}}, '"name" must be a string'),
    ({"event": 7}, 'string "event"'),
    ({"media": {"payload": "AAAA"}}, 'string "event"'),
    ([1, 2], "not a JSON object"),
])
def test_twilio_wrong_types_one_line(msg, field):
    p = make_protocol("twilio")
    with pytest.raises(ProtocolError) as e:
        p.decode(json.dumps(msg))
    assert field in str(e.value) and "\n" not in str(e.value)


def test_twilio_good_messages_still_decode():
    p = make_protocol("twilio")
    (a,) = p.decode(json.dumps({"event": "media", "media": {"payload": base64.b64encode(b"\xff" * 160).decode()}}))
    assert isinstance(a, AgentAudio) and a.samples.shape == (160,) and a.sample_rate == 8000
    assert p.decode(json.dumps({"event": "mark", "mark": {"name": "m1"}})) == [Mark("m1")]


# ----------------------------------------------------------------------------- wire: Pipecat
def _pc_audio(data: bytes, rate: int, ch: int = 1) -> bytes:
    p = make_protocol("pipecat")
    f = p._pb.Frame()
    f.audio.audio, f.audio.sample_rate, f.audio.num_channels = data, rate, ch
    return f.SerializeToString()


@pytest.mark.parametrize("data,rate,ch,needle", [
    (b"\x00" * 641, 16000, 1, "641 bytes is not whole s16le frames"),
    (b"\x00" * 642, 16000, 2, "642 bytes is not whole s16le frames of 2 channels"),
    (b"\x00" * 640, 999983, 1, "999983 Hz is outside the supported 8000–192000 Hz"),
    (b"\x00" * 640, 1, 1, "1 Hz is outside"),
    (b"\x00" * 640, 4294967295, 1, "4294967295 Hz is outside"),
    (b"\x00" * 640, 0, 1, "no sample_rate"),
    (b"\x00" * 640, 16000, 4294967295, "declares 4294967295 channels"),
])
def test_pipecat_bad_audio_frames_one_line(data, rate, ch, needle):
    pytest.importorskip("pipecat")
    with pytest.raises(ProtocolError) as e:
        make_protocol("pipecat").decode(_pc_audio(data, rate, ch))
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_pipecat_in_rate_checked():
    pytest.importorskip("pipecat")
    with pytest.raises(ValueError, match="--in-rate 1 Hz is outside"):
        make_protocol("pipecat", 1)


# ----------------------------------------------------------------------------- wire: end to end
def _attach_main(tmp_path, port, *extra, protocol="twilio"):
    from test_attach_faults import _wav

    from livejudge.commands.cli import main

    out, ev = tmp_path / "out.json", tmp_path / "ev.jsonl"
    t0 = time.monotonic()
    code = main(["attach", "--ws-url", f"ws://127.0.0.1:{port}", "--protocol", protocol, "--no-playback",
                 "--input-wav", _wav(tmp_path), "--judge", "none", "--display", "none",
                 "--silence-timeout-s", "5", "--json", str(out), "--events", str(ev), *extra])
    wall = time.monotonic() - t0
    doc = json.loads(out.read_text())
    [json.loads(line) for line in ev.read_text().splitlines()]
    return code, doc, wall


def _sends(*messages, then_wait_s: float = 10.0):
    async def handler(ws):
        await asyncio.sleep(0.2)
        try:
            for m in messages:
                await ws.send(m() if callable(m) else m)
            async def drain():  # read what the client sends (else its close frame waits behind it)
                async for _ in ws:
                    pass
            await asyncio.wait_for(drain(), then_wait_s)  # until the client hangs up
        except Exception:
            pass
    return handler


@pytest.mark.parametrize("bad", ['{"event": "media", "media": "AAAA"}',
                                 '{"event": "media", "media": {"payload": 12345}}',
                                 '{"event": "mark", "mark": "name"}'])
def test_attach_twilio_wrong_type_ends_call_with_reason(tmp_path, capsys, bad):
    from test_attach_faults import fake_agent

    with fake_agent(_sends(bad)) as port:
        code, doc, _ = _attach_main(tmp_path, port)
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    line = [ln for ln in err.splitlines() if "unexpected message from the agent" in ln]
    assert len(line) == 1 and "must be" in line[0]
    assert doc["source"]["ended"] == "failed: protocol"
    assert any("unexpected message from the agent" in e for e in doc["errors"])


@pytest.mark.parametrize("data,rate,needle", [(b"\x00" * 641, 16000, "not whole s16le frames"),
                                              (b"\x00" * 640, 999983, "999983 Hz is outside"),
                                              (b"\x00" * 640, 4294967295, "4294967295 Hz is outside")])
def test_attach_pipecat_bad_frame_ends_call_with_reason(tmp_path, capsys, data, rate, needle):
    pytest.importorskip("pipecat")
    from test_attach_faults import fake_agent

    with fake_agent(_sends(_pc_audio(data, rate))) as port:
        code, doc, wall = _attach_main(tmp_path, port, protocol="pipecat")
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and needle in err
    assert doc["source"]["ended"] == "failed: protocol" and any(needle in e for e in doc["errors"])
    assert wall < 5.0  # refused at the door, not after seconds of resampling


@pytest.mark.slow  # ~8 s: the flooding agent shares this process (GIL)
def test_attach_duration_holds_under_a_flood_of_odd_rate_frames(tmp_path):
    """An agent flooding 40 ms frames at 191999 Hz as fast as it can (each frame once cost
    seconds at 999983 Hz): --duration-s still ends the call on time."""
    pytest.importorskip("pipecat")
    from test_attach_faults import fake_agent

    frame = _pc_audio((np.random.default_rng(0).normal(0, 3000, 7680)).astype("<i2").tobytes(), 191999)

    async def flood(ws):
        try:
            async def drain():
                async for _ in ws:
                    pass
            reader = asyncio.ensure_future(drain())
            while not reader.done():
                await ws.send(frame)
                await asyncio.sleep(0)
        except Exception:
            pass

    with fake_agent(flood) as port:
        code, doc, wall = _attach_main(tmp_path, port, "--duration-s", "1.5", protocol="pipecat")
    assert code == 0 and doc["source"]["ended"] == "duration"
    assert 1.5 <= doc["duration_s"] < 2.5 and wall < 10.0  # ~1.5 s of call plus start-up, not minutes
    assert doc["source"]["attach"]["agent_audio_in_s"] > 0


def test_attach_audio_far_ahead_of_playout_is_dropped(tmp_path):
    """130 s of agent audio sent at once: what exceeds the 120 s queue is dropped and counted."""
    from test_attach_faults import fake_agent

    one_s = json.dumps({"event": "media", "media": {"payload": base64.b64encode(b"\xff" * 8000).decode()}})
    with fake_agent(_sends(*[one_s] * 130, then_wait_s=3.0)) as port:
        code, doc, _ = _attach_main(tmp_path, port, "--duration-s", "2.0")
    assert code == 0 and doc["source"]["ended"] == "duration"
    att = doc["source"]["attach"]
    assert att["dropped_messages"] >= 8 and att["agent_audio_in_s"] <= 120.0 + doc["duration_s"] + 0.1
    assert any("agent audio dropped" in e for e in doc["errors"])


def test_attach_one_message_with_too_much_audio_is_dropped(tmp_path):
    from test_attach_faults import fake_agent

    big = json.dumps({"event": "media", "media": {"payload": base64.b64encode(b"\xff" * 8000 * 61).decode()}})
    with fake_agent(_sends(big, then_wait_s=1.0)) as port:
        code, doc, _ = _attach_main(tmp_path, port, "--duration-s", "1.0")
    assert code == 0
    att = doc["source"]["attach"]
    assert att["dropped_messages"] == 1 and att["dropped_message_audio_s"] == pytest.approx(61.0)
    assert any(e["kind"] == "ws.audio_dropped" for e in doc["framework_events"])


def test_attach_message_over_size_limit(tmp_path, capsys):
    from test_attach_faults import fake_agent

    with fake_agent(_sends(b"\x00" * (16 * 2**20 + 1))) as port:
        code, doc, _ = _attach_main(tmp_path, port)
    err = capsys.readouterr().err
    assert code == 1 and "larger than 16777216 bytes" in err
    assert doc["source"]["ended"] == "failed: too_big"


# ----------------------------------------------------------------------------- files
def _wav_with_rate(path, rate: int, n_ch: int = 2, n: int = 640) -> str:
    """A PCM16 WAV whose header declares ``rate`` (any uint32), written by hand."""
    data = np.zeros(n * n_ch, dtype="<i2").tobytes()
    fmt = struct.pack("<HHIIHH", 1, n_ch, rate, (rate * n_ch * 2) & 0xFFFFFFFF, n_ch * 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    return str(path)


@pytest.mark.parametrize("rate,needle", [(1, "1 Hz is outside the supported 8000–192000 Hz"),
                                        (999983, "999983 Hz is outside the supported 8000–192000 Hz"),
                                        (4294967295, "cannot decode")])  # libsndfile refuses this header
def test_file_with_absurd_rate_refused_before_decoding(tmp_path, rate, needle):
    p = _wav_with_rate(tmp_path / "x.wav", rate)
    with pytest.raises(AudioFormatError, match=needle) as e:
        load_audio(p)
    assert "\n" not in str(e.value)
    with pytest.raises(AudioFormatError):
        load_call(p)


def test_score_absurd_rate_one_line_exit_2(tmp_path, capsys):
    from livejudge.commands.cli import main

    code = main(["score", _wav_with_rate(tmp_path / "x.wav", 1), "--judge", "none"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "1 Hz is outside" in err[0] and "resample" in err[0]


def test_empty_file_says_it_is_empty(tmp_path, capsys):
    from livejudge.audio import CallReader
    from livejudge.commands.cli import main

    p = tmp_path / "call.wav"
    p.write_bytes(b"")
    for load in (load_audio, load_call, CallReader):
        with pytest.raises(AudioFormatError, match="is an empty file \\(0 bytes\\)"):
            load(p)
    code = main(["score", str(p), "--judge", "none"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "empty file (0 bytes)" in err[0], err


def test_float_wav_with_nan_is_cleaned(tmp_path):
    import soundfile as sf

    x = np.zeros((1600, 2), dtype=np.float32)
    x[10:20] = np.nan
    x[30] = np.inf
    sf.write(str(tmp_path / "f.wav"), x, 16000, subtype="FLOAT")
    data, rate = load_audio(tmp_path / "f.wav")
    assert rate == 16000 and np.isfinite(data).all() and data.shape == (1600, 2)


@pytest.mark.parametrize("argv,needles", [
    # a flag of another subcommand: names this one's help and the one that takes it
    (["score", "CALL", "--speed", "max"], ["livejudge score: unrecognized arguments: --speed max",
                                            "--speed belongs to livejudge replay", "livejudge score --help"]),
    (["score", "CALL", "--jobs", "0"], ["--jobs must be at least 1, got 0"]),
    (["score", "CALL", "--merge-pause-s", "-1", "--judge", "none"], ["--merge-pause-s must be ≥ 0 seconds, got -1"]),
    (["score", "CALL", "--user-channel", "5", "--judge", "none"], ["--user-channel 5 is out of range", "use 0–1"]),
])
def test_cli_usage_errors_name_the_flag_and_the_fix(tmp_path, capsys, argv, needles):
    import soundfile as sf

    from livejudge.commands.cli import main

    p = tmp_path / "call.wav"
    sf.write(str(p), np.zeros((16000, 2), dtype="float32"), 16000)
    try:  # argparse errors exit; the others return the code
        code = main([str(p) if a == "CALL" else a for a in argv])
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert all(n in err[0] for n in needles), err[0]


@pytest.mark.parametrize("field_, flag", [("window_s", "--window-s"), ("interval_s", "--interval-s")])
def test_a_bad_session_config_names_the_python_field_and_the_flag(field_, flag):
    """A trial built SessionConfig(interval_s=-1) for the Pipecat observer and read "--interval-s
    must be positive": a flag it never typed. The field's name comes first, the flag beside it."""
    from livejudge.session import SessionConfig

    with pytest.raises(ValueError, match=rf"^{field_} \({flag}\) must be a positive number of seconds, got -1"):
        SessionConfig(**{field_: -1.0}).validate()
    # NaN passed "<= 0" and made the whole call one window; inf the same; "2" was a bare TypeError
    for bad in (float("nan"), float("inf"), "2", True):
        with pytest.raises(ValueError, match=rf"^{field_} \({flag}\) must be a positive number of seconds"):
            SessionConfig(**{field_: bad}).validate()
