"""A caller in a reverberant room: the room's tail after each phrase decays slowly (−60 dB per
RT60), the VAD keeps part of it as speech, and the caller's offsets read late, so response
latencies read short and flatter the agent. A new user's trial: RT60 0.5–0.8 s read latencies
50–290 ms short, unwarned. ``phrase_end_decays`` reads the decay after each phrase end (a blind
RT60 estimate) and ``reverberant_room`` says so from ``REVERB_RT60_S`` (HEURISTIC).

Calls are built from dry real clips with a known timeline (``DialogueBuilder``); the caller's
channel then goes through a room (``room_ir``: exponentially decaying noise of a given RT60 and
direct-to-reverberant ratio), so the RT60 to read and the true latencies are known.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.signal import oaconvolve

from livejudge.commands.cli import main
from livejudge.testing.dialogues import DialogueBuilder, load_clip, noise, room_ir
from livejudge.timing.frontend import highpass
from livejudge.timing.health import (REVERB_RT60_S, _frame_rms, phrase_end_decays, reverberant_room_warnings)
from livejudge.timing.vad import detect_segments


def _dialogue():
    b = DialogueBuilder(seed=11)
    for i in range(5):
        b.user(f"cmu_cards_00{i + 1}", **({"gap_s": 0.7} if i else {}))
        b.agent(f"espeak_reply_0{i + 1}", gap_s=(0.3, 0.5, 0.7, 0.9, 1.2)[i])
    return b.build()


def _call(rt60_s: float | None, drr_db: float = 3.0, floor_dbfs: float = -55.0):
    """(stereo call, truth latencies): the caller through a room of ``rt60_s`` (None: dry), room
    noise at ``floor_dbfs`` on both channels."""
    d = _dialogue()
    x = d.stereo().copy()
    rng = np.random.default_rng(0)
    if rt60_s is not None:
        x[:, 0] += oaconvolve(x[:, 0], room_ir(rt60_s, drr_db, rng))[: len(x)].astype(np.float32)
    for c in (0, 1):
        x[:, c] += noise("room", len(x), floor_dbfs, rng)
    return x, d.truth.response_latencies_s


def _user_offsets(x: np.ndarray) -> list[float]:
    return [s.offset_s for s in detect_segments(highpass(x[:, 0], 70.0), "user")]


@pytest.mark.parametrize("rt60_s, lo, hi", [(0.8, 0.7, 1.0), (0.5, 0.42, 0.65)])
def test_the_decay_after_phrase_ends_reads_the_rooms_rt60(rt60_s, lo, hi):
    x, _ = _call(rt60_s)
    found = [d for d in phrase_end_decays(_frame_rms(x[:, 0]), _user_offsets(x)) if d is not None]
    assert len(found) >= 4, found
    rt60 = float(np.median([d[0] for d in found]))
    assert lo <= rt60 <= hi, found


def test_a_dry_voice_stops_with_a_step():
    for floor in (-60.0, -45.0):
        x, _ = _call(None, floor_dbfs=floor)
        ends = phrase_end_decays(_frame_rms(x[:, 0]), _user_offsets(x))
        assert sum(d is not None for d in ends) <= 1, (floor, ends)


def _score(tmp_path, x) -> dict:
    import soundfile as sf

    wav, out = tmp_path / "call.wav", tmp_path / "out.json"
    sf.write(str(wav), np.clip(x, -1, 1), 16000, subtype="PCM_16")
    assert main(["score", str(wav), "--judge", "none", "--json", str(out), "--display", "none"]) == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize("rt60_s, drr_db, warned", [(0.8, 3.0, True), (0.5, 6.0, True), (0.3, 10.0, False),
                                                     (None, 0.0, False)])
def test_score_warns_a_reverberant_caller(tmp_path, rt60_s, drr_db, warned):
    """RT60 0.8 s reads every latency 150–390 ms short and 0.5 s 80–180 ms: warned, on the user
    channel, with the RT60 read. The benchmark's mild room tails (RT60 0.3 s, 10 dB) and a dry
    caller are not."""
    x, truth = _call(rt60_s, drr_db)
    doc = _score(tmp_path, x)
    got = [w for w in doc["source"]["input_health"] if w["code"] == "reverberant_room"]
    lat = [t["gap_s"] for t in doc["transitions"] if t["from"] == "user" and t["to"] == "agent"]
    assert len(lat) == len(truth)
    short_s = float(np.median([w - g for g, w in zip(lat, truth)]))
    if not warned:
        assert got == [] and short_s < 0.05, (got, short_s)
        return
    assert [w["channel"] for w in got] == ["user"] and short_s >= 0.07, (got, short_s)
    assert got[0]["value"] >= REVERB_RT60_S and abs(got[0]["value"] - rt60_s) <= 0.2, got
    assert f"RT60 about {got[0]['value']:.1f} s" in got[0]["message"]
    assert "response latencies read short (flattering the agent), and a quick reply" in got[0]["message"]


def test_an_audiobook_and_told_channels_are_not_called_reverberant():
    """A 44 s home recording of a reading (17 phrase ends, two of which fade slowly) is not a room;
    a silent channel or an unmeasurable call gets nothing more."""
    mono = load_clip("librivox_two_cities")
    offs = [s.offset_s for s in detect_segments(highpass(mono, 70.0), "user")]
    assert len(offs) >= 10
    assert reverberant_room_warnings({"user": _frame_rms(mono)}, {"user": offs}, []) == []
    x, _ = _call(0.8)
    lv, offs = {"user": _frame_rms(x[:, 0])}, {"user": _user_offsets(x)}
    assert [w.code for w in reverberant_room_warnings(lv, offs, [])] == ["reverberant_room"]
    for said in ([{"code": "silent_channel", "channel": "user"}],
                 [{"code": "identical_channels", "channel": None, "unmeasurable": True}]):
        assert reverberant_room_warnings(lv, offs, said) == []


def test_a_batch_says_a_warning_found_at_the_close_once_with_its_call(tmp_path, capsys):
    """A re-check: in a batch, ``reverberant_room`` (found at the close of the call) was printed twice,
    once bare (with --jobs 2, of no named call) and once with the file's name."""
    import soundfile as sf

    calls = tmp_path / "calls"
    calls.mkdir()
    x, _ = _call(0.8)
    sf.write(str(calls / "room.wav"), np.clip(x, -1, 1), 16000, subtype="PCM_16")
    assert main(["score", str(calls), "--out-dir", str(tmp_path / "out"), "--judge", "none"]) == 0
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "sounds reverberant" in ln]
    assert len(lines) == 1 and "room.wav" in lines[0], lines


@pytest.mark.parametrize("rt60_s, drr_db, floor_dbfs", [(1.6, 5.0, -50.0), (1.2, 3.0, -42.0), (2.0, 5.0, -65.0)])
def test_a_long_room_is_warned_too(rt60_s, drr_db, floor_dbfs):
    """A re-check: rooms of RT60 1.2–2 s read latencies up to 640 ms short and were not warned: the
    offset lay deep in the tail, where less than the required decay was left to see. The decay is now
    looked for up to 0.9 s before the offset, and RT60s up to 3 s are read."""
    x, _ = _call(rt60_s, drr_db, floor_dbfs)
    got = reverberant_room_warnings({"user": _frame_rms(x[:, 0])}, {"user": _user_offsets(x)}, [])
    assert [w.channel for w in got] == ["user"], got
    assert abs(got[0].value - rt60_s) <= 0.25 * rt60_s, got[0].value
