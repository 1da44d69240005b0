"""Protocols against Pipecat's own serializers, and the attach client's pure parts
(JitterPlayer, ScriptedCaller, Recorder) with time passed in."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

from livejudge.audio import SAMPLE_RATE, float32_to_mulaw, mulaw_to_float32
from livejudge.sources.protocols import AgentAudio, Interruption, Mark, ProtocolError, Status, make_protocol
from livejudge.sources.ws import (AgentActivity, AttachConfig, CallerTurn, JitterPlayer, Recorder,
                                  ScriptedCaller)


def _tone(n, rate=SAMPLE_RATE, f=440.0, amp=0.3):
    return (amp * np.sin(2 * np.pi * f * np.arange(n) / rate)).astype(np.float32)


# ----------------------------------------------------------------------------- pipecat wire
pipecat = pytest.importorskip("pipecat")


async def test_pipecat_user_audio_is_what_pipecat_deserializes():
    from pipecat.frames.frames import InputAudioRawFrame
    from pipecat.serializers.protobuf import ProtobufFrameSerializer

    p = make_protocol("pipecat", 16000)
    x = _tone(320)
    frame = await ProtobufFrameSerializer().deserialize(p.encode_audio(x))
    assert isinstance(frame, InputAudioRawFrame)
    assert frame.sample_rate == 16000 and frame.num_channels == 1
    y = np.frombuffer(frame.audio, "<i2").astype(np.float32) / 32768
    assert np.max(np.abs(y - x)) <= 1 / 32768


async def test_pipecat_bot_frames_decode():
    from pipecat.frames.frames import InterruptionFrame, OutputAudioRawFrame, TextFrame
    from pipecat.serializers.protobuf import ProtobufFrameSerializer

    ser, p = ProtobufFrameSerializer(), make_protocol("pipecat")
    x = _tone(960, 24000)
    pcm = (x * 32768).astype("<i2").tobytes()
    items = p.decode(await ser.serialize(OutputAudioRawFrame(audio=pcm, sample_rate=24000, num_channels=1)))
    assert len(items) == 1 and isinstance(items[0], AgentAudio) and items[0].sample_rate == 24000
    assert np.max(np.abs(items[0].samples - x)) <= 1 / 32768
    assert p.decode(await ser.serialize(InterruptionFrame())) == [Interruption("pipecat.interruption")]
    st = p.decode(await ser.serialize(TextFrame(text="hello")))
    assert st == [Status("pipecat.text", {"text": "hello"})]
    with pytest.raises(ProtocolError, match="not a Pipecat protobuf frame"):
        p.decode(b"\xff\xff\xff garbage")


# ----------------------------------------------------------------------------- twilio wire
async def test_twilio_against_pipecat_twilio_serializer():
    from pipecat.frames.frames import InputAudioRawFrame, InterruptionFrame, OutputAudioRawFrame
    from pipecat.processors.frame_processor import FrameProcessorSetup  # noqa: F401
    from pipecat.serializers.twilio import TwilioFrameSerializer

    p = make_protocol("twilio")
    assert p.in_rate == 8000
    opening = [json.loads(m) for m in p.opening()]
    assert [m["event"] for m in opening] == ["connected", "start"]
    assert opening[1]["start"]["mediaFormat"] == {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}
    ser = TwilioFrameSerializer(stream_sid=p.stream_sid,
                                params=TwilioFrameSerializer.InputParams(auto_hang_up=False, sample_rate=8000))
    ser._sample_rate = 8000  # what setup() sets from the pipeline's input rate
    x = _tone(160, 8000)
    frame = await ser.deserialize(p.encode_audio(x))
    assert isinstance(frame, InputAudioRawFrame) and frame.sample_rate == 8000
    y = np.frombuffer(frame.audio, "<i2").astype(np.float32) / 32768
    assert np.corrcoef(x, y)[0, 1] > 0.999  # μ-law round trip
    pcm = (_tone(320, 8000) * 32768).astype("<i2").tobytes()
    items = p.decode(await ser.serialize(OutputAudioRawFrame(audio=pcm, sample_rate=8000, num_channels=1)))
    assert isinstance(items[0], AgentAudio) and items[0].sample_rate == 8000 and items[0].samples.size == 320
    assert p.decode(await ser.serialize(InterruptionFrame())) == [Interruption("twilio.clear")]


def test_twilio_marks_stop_and_errors():
    p = make_protocol("twilio")
    assert p.decode(json.dumps({"event": "mark", "mark": {"name": "m1"}})) == [Mark("m1")]
    assert json.loads(p.mark_played(Mark("m1")))["mark"] == {"name": "m1"}
    assert json.loads(p.closing()[0])["event"] == "stop"
    with pytest.raises(ProtocolError, match="JSON"):
        p.decode("not json")
    with pytest.raises(ProtocolError, match="--protocol pipecat"):
        p.decode(b"\x08\xff\xfe")
    with pytest.raises(ValueError, match="8000"):
        make_protocol("twilio", 16000)
    with pytest.raises(ValueError, match="unknown --protocol"):
        make_protocol("sip")
    media = json.loads(p.encode_audio(np.zeros(160, np.float32)))["media"]
    assert media["track"] == "inbound" and len(base64.b64decode(media["payload"])) == 160


def test_mulaw_roundtrip_error_small():
    x = _tone(8000, 8000)
    y = mulaw_to_float32(float32_to_mulaw(x))
    assert np.max(np.abs(y - x)) < 0.01  # G.711 μ-law step at 0.3 amplitude is ~0.008


# ----------------------------------------------------------------------------- player
def test_player_burst_stamped_at_arrival_and_contiguous():
    pl = JitterPlayer(lookahead_s=0.0)
    pl.on_audio(np.ones(640, np.float32), arrival_s=1.0)   # 40 ms arrives at 1.00
    pl.on_audio(np.ones(640, np.float32), arrival_s=1.001)  # next chunk, early (paced one ahead)
    blocks, _ = pl.pump(1.03)
    assert blocks[0][0] == pytest.approx(1.0) and sum(b.size for _, b in blocks) == 480
    blocks, _ = pl.pump(1.2)
    assert blocks[0][0] == pytest.approx(1.03) and sum(b.size for _, b in blocks) == 800  # contiguous
    pl.on_audio(np.ones(320, np.float32), arrival_s=2.0)  # after an underrun: a new burst
    blocks, _ = pl.pump(2.5)
    assert blocks[0][0] == pytest.approx(2.0)


def test_player_prebuffer_latency_and_flush():
    pl = JitterPlayer(prebuffer_s=0.06, latency_s=0.01, lookahead_s=0.0)
    pl.on_audio(np.ones(1600, np.float32), arrival_s=0.5)
    assert pl.pump(0.55)[0] == []  # still in the jitter buffer
    blocks, _ = pl.pump(0.6)
    assert blocks[0][0] == pytest.approx(0.57)  # 0.5 + 60 ms jitter + 10 ms device latency
    pl.on_mark(Mark("end"))
    assert pl.flush() == pytest.approx(0.06)  # 100 ms − 40 ms played
    blocks, marks = pl.pump(0.7)
    assert blocks == [] and marks == [Mark("end")]  # marks past a clear are acknowledged at once


def _stream(pl, x, t0_s, chunk=640, stall_at=None, stall_s=0.0, pump_s=0.01):
    """Feed ``x`` in 40 ms chunks paced in real time from ``t0_s``, pumping every 10 ms; the chunk
    holding sample ``stall_at`` (and all after it) arrives ``stall_s`` late. Returns the end time."""
    t = t0_s
    late = 0.0
    for k in range(0, x.size, chunk):
        if stall_at is not None and k <= stall_at < k + chunk:
            late = stall_s
        arrival = t0_s + k / 16000 + late
        while t < arrival:
            pl.pump(t)
            t += pump_s
        pl.on_audio(x[k:k + chunk], arrival)
    end = t0_s + x.size / 16000 + late + 0.5
    while t < end:
        pl.pump(t)
        t += pump_s
    return t


def test_player_records_the_agent_audio_running_dry_mid_speech_only():
    """A 0.3 s stall of the agent's stream mid-word is recorded where it was heard; a stall at the
    reply's trailing silence, a 20 ms arrival jitter and a new reply after a flush are not."""
    from livejudge.testing.dialogues import load_clip, speech_bounds

    x = load_clip("espeak_reply_01")
    on, off = speech_bounds(x)
    step = 320
    voiced = [i for i in range(max(on, 640), off - 2 * 640, 640) if np.sqrt(np.mean(x[i - step:i] ** 2)) > 0.05]
    mid = voiced[len(voiced) // 2]  # a chunk boundary whose previous 20 ms is loud speech
    pl = JitterPlayer(lookahead_s=0.0)
    _stream(pl, x, 1.0, stall_at=mid, stall_s=0.3)
    assert len(pl.ran_dry) == 1
    at_s, gap_s = pl.ran_dry[0]
    assert at_s == pytest.approx(1.0 + mid / 16000, abs=0.011) and gap_s == pytest.approx(0.3, abs=0.011)

    quiet = JitterPlayer(lookahead_s=0.0)  # the same stall in the trailing silence after the reply
    tail = (off + 1280) // 640 * 640
    assert tail < x.size, "the clip needs trailing silence for this case"
    _stream(quiet, x, 1.0, stall_at=tail, stall_s=0.3)
    jitter = JitterPlayer(lookahead_s=0.0)
    _stream(jitter, x, 1.0, stall_at=mid, stall_s=0.02)
    assert quiet.ran_dry == [] and jitter.ran_dry == []

    cut = JitterPlayer(lookahead_s=0.0)  # barge-in: flushed mid-word, the next reply comes later
    for k in range(0, mid, 640):
        cut.on_audio(x[k:k + 640], 1.0 + k / 16000)
    cut.pump(1.0 + mid / 16000)
    cut.flush()
    cut.on_audio(x[:640], 1.0 + mid / 16000 + 0.5)
    cut.pump(1.0 + mid / 16000 + 0.6)
    assert cut.ran_dry == []

    lost = JitterPlayer(lookahead_s=0.0)  # a lost connection mid-word (--reconnect): the outage's gap
    for k in range(0, mid, 640):
        lost.on_audio(x[k:k + 640], 1.0 + k / 16000)
    lost.pump(1.0 + mid / 16000)
    lost.end_burst()  # AttachClient, at the reconnection
    lost.on_audio(x[mid:mid + 640], 1.0 + mid / 16000 + 3.0)
    assert lost.ran_dry == []


def test_player_marks_wait_for_playout():
    pl = JitterPlayer(lookahead_s=0.0)
    pl.on_audio(np.ones(800, np.float32), 0.0)
    pl.on_mark(Mark("a"))
    assert pl.pump(0.02)[1] == []
    assert pl.pump(0.05)[1] == [Mark("a")]


# ----------------------------------------------------------------------------- caller
def _run_caller(caller, agent_voice: list[tuple[float, float]], until_s: float):
    """Drive the caller chunk by chunk with an agent voiced in the given (start, end) spans."""
    n = 320
    act = AgentActivity()
    out = []
    for k in range(int(until_s / 0.02)):
        t = k * 0.02
        voiced = any(a <= t < b for a, b in agent_voice)
        act.update(t, np.full(n, 0.3 if voiced else 0.0, np.float32))
        out.append(caller.chunk(k, n, act))
    return np.concatenate(out)


def test_caller_waits_for_reply_then_pause_and_barges_in():
    a, b = _tone(8000), _tone(4000)
    c = ScriptedCaller([CallerTurn(a, "a"), CallerTurn(b, "b"), CallerTurn(b, "c", barge_in_after_s=0.7)],
                       pause_s=0.8, lead_s=0.5)
    _run_caller(c, [(1.5, 3.0), (5.0, 7.0)], until_s=9.0)
    starts = [p["start_s"] for p in c.placed]
    assert starts[0] == pytest.approx(0.5)
    assert starts[1] == pytest.approx(3.0 + 0.8)   # agent stopped at 3.0, pause 0.8
    assert starts[2] == pytest.approx(5.0 + 0.7)   # 0.7 s into the agent's reply: a barge-in
    assert c.placed[2]["barge_in"] and c.done


def test_caller_sends_exact_samples_and_continuous_mode():
    a, b = _tone(1000, f=300), _tone(700, f=500)
    c = ScriptedCaller([CallerTurn(a, "a"), CallerTurn(b, "b")], lead_s=0.1, continuous=True)
    y = _run_caller(c, [], until_s=0.5)
    s = int(0.1 * SAMPLE_RATE)
    assert np.array_equal(y[s:s + 1700], np.concatenate([a, b])) and not y[:s].any()


def test_recorder_places_on_session_clock(tmp_path):
    r = Recorder(tmp_path / "c.wav")
    r.add("user", 0.0, np.ones(320, np.float32) * 0.5)
    r.add("agent", 1.0, np.ones(160, np.float32) * -0.5)
    import soundfile as sf

    y, rate = sf.read(str(r.close()), dtype="float32")
    assert rate == SAMPLE_RATE and y.shape == (16160, 2)
    assert y[16000, 1] == -0.5 and y[15999, 1] == 0 and y[0, 0] == 0.5 and y[320, 0] == 0
    assert r.late_s == 0.0


def test_recorder_file_is_valid_mid_call_and_matches_the_whole_call(tmp_path):
    """A call killed outright keeps what was written: the WAV on disk is readable while the
    recorder is still open, holds all but the last HOLDBACK_S + FLUSH_EVERY_S seconds, and the
    closed file equals the two channels placed on the session clock (PCM16: within 1/32768)."""
    import soundfile as sf

    rng = np.random.default_rng(0)
    dur_s, chunk = 30.0, 320  # 20 ms blocks, as attach sends and plays them
    truth = np.zeros((int(dur_s * SAMPLE_RATE), 2), np.float32)
    r = Recorder(tmp_path / "call.wav")
    for i in range(0, len(truth), chunk):
        u = (rng.standard_normal(chunk) * 0.1).astype(np.float32)
        truth[i:i + chunk, 0] = u
        r.add("user", i / SAMPLE_RATE, u)
        if 5 * SAMPLE_RATE <= i < 12 * SAMPLE_RATE:  # the agent talks 5-12 s, otherwise silent
            a = (rng.standard_normal(chunk) * 0.2).astype(np.float32)
            truth[i:i + chunk, 1] = a
            r.add("agent", i / SAMPLE_RATE, a)
        if i == 20 * SAMPLE_RATE:  # as if SIGKILLed here: what a reader finds on disk now
            on_disk, rate = sf.read(str(tmp_path / "call.wav"), dtype="float32")
            lag_s = 20.0 - len(on_disk) / SAMPLE_RATE
            assert rate == SAMPLE_RATE and 0 < lag_s <= Recorder.HOLDBACK_S + Recorder.FLUSH_EVERY_S + 0.02
            assert np.abs(on_disk - truth[:len(on_disk)]).max() <= 1 / 32768
            assert len(r._buf) <= (Recorder.HOLDBACK_S + Recorder.FLUSH_EVERY_S) * SAMPLE_RATE + chunk
    y, _ = sf.read(str(r.close()), dtype="float32")
    assert y.shape == truth.shape and np.abs(y - truth).max() <= 1 / 32768


def test_recorder_counts_late_audio_and_writes_a_jump_ahead_as_silence(tmp_path):
    import soundfile as sf

    r = Recorder(tmp_path / "c.wav")
    r.add("user", 0.0, np.full(SAMPLE_RATE, 0.25, np.float32))
    r.add("user", 600.0, np.full(160, 0.5, np.float32))  # ten minutes on: silence, written in blocks
    assert len(r._buf) <= (Recorder.HOLDBACK_S + Recorder.FLUSH_EVERY_S) * SAMPLE_RATE + 160
    r.add("agent", 1.0, np.full(1600, -0.5, np.float32))  # long since written: counted, not recorded
    assert r.late_s == pytest.approx(0.1)
    y, _ = sf.read(str(r.close()), dtype="float32")
    assert len(y) == 600 * SAMPLE_RATE + 160
    assert y[SAMPLE_RATE - 1, 0] == 0.25 and not y[SAMPLE_RATE:600 * SAMPLE_RATE].any() and y[-1, 0] == 0.5
    assert r.close() == tmp_path / "c.wav"  # closing twice is harmless


def test_config_errors_are_one_line():
    with pytest.raises(ValueError, match="ws://host:port"):
        AttachConfig("http://x").validate()
    with pytest.raises(ValueError, match="--duration-s"):
        AttachConfig("ws://x:1", duration_s=0).validate()


def test_mic_without_portaudio_says_what_to_do(monkeypatch):
    import builtins
    import sys

    real_import = builtins.__import__

    def no_portaudio(name, *a, **k):  # what `import sounddevice` does without libportaudio2
        if name == "sounddevice":
            raise OSError("PortAudio library not found")
        return real_import(name, *a, **k)

    monkeypatch.delitem(sys.modules, "sounddevice", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_portaudio)
    from livejudge.sources.mic import DeviceError, MicSource, list_devices

    with pytest.raises(DeviceError, match="--input-wav") as e:
        MicSource()
    assert "\n" not in str(e.value)
    with pytest.raises(DeviceError, match="--no-playback"):
        list_devices()


def test_no_device_fails_before_connecting(monkeypatch, capsys):
    """PortAudio present but no device (headless CI): one line, exit 2, nothing contacted."""
    import sys
    import types

    class PortAudioError(Exception):
        pass

    def no_device(**kw):
        raise PortAudioError("Error querying device -1")

    fake = types.SimpleNamespace(check_input_settings=no_device, OutputStream=lambda **kw: no_device(),
                                 PortAudioError=PortAudioError)
    monkeypatch.setitem(sys.modules, "sounddevice", fake)
    from livejudge.commands.cli import main

    assert main(["attach", "--ws-url", "ws://127.0.0.1:9", "--no-playback", "--judge", "none"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "microphone" in err and "--input-wav" in err
    from livejudge.testing.dialogues import clips_dir

    wav = str(clips_dir() / "human" / "cmu_cards_001.wav")
    assert main(["attach", "--ws-url", "ws://127.0.0.1:9", "--input-wav", wav, "--judge", "none"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "speakers" in err and "--no-playback" in err


def test_player_says_whether_voice_is_still_queued():
    """The attach loop ends a scripted call once the agent has been quiet ``end_quiet_s`` and no
    voice is left to play. It waited for an empty queue, which a continuous stream (WebRTC sends
    silence frames between replies) need never give: a CI run of the WebRTC probe ran into the
    20 s silence timeout with every moment passed. Voice queued keeps the call open; silence does not."""
    import numpy as np

    from livejudge.sources.ws import VOICE_DBFS, JitterPlayer

    p = JitterPlayer()
    assert not p.buffered_voice()
    rng = np.random.default_rng(0)
    quiet = (rng.standard_normal(1600) * 10 ** ((VOICE_DBFS - 12) / 20)).astype(np.float32)  # 100 ms, 12 dB under
    p.on_audio(quiet, 0.0)
    assert p.buffered_s > 0 and not p.buffered_voice()
    loud = (rng.standard_normal(320) * 10 ** ((VOICE_DBFS + 6) / 20)).astype(np.float32)  # one 20 ms block over
    p.on_audio(np.concatenate([quiet[:800], loud]), 0.1)
    assert p.buffered_voice()
    p.pump(1.0)  # everything released
    assert p.buffered_s == 0 and not p.buffered_voice()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux) to stand for a full disk")
def test_recorder_on_a_full_disk_stops_recording_not_the_call():
    r = Recorder("/dev/full")
    for i in range(0, 10 * SAMPLE_RATE, 320):  # 10 s of 20 ms blocks: flushes start after ~4 s and fail
        r.add("user", i / SAMPLE_RATE, np.full(320, 0.1, np.float32))
    assert r.error is not None and "recording stopped at" in r.error and "No space" in r.error
    assert len(r._buf) == 0  # nothing more is held in memory
    assert r.close() == Path("/dev/full")
