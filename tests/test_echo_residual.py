"""Speakerphone echo through a reverberant room: the echo gate models 150 ms of the path
(``ECHO_TAIL_S``), so a long room tail stays in the user channel and reads as caller speech. A
new user's trial: at −10 dB through a room of RT60 0.8 s the gate was on, four caller barge-ins
were invented, and nothing warned. ``residual_tail_db`` measures the tail left just after the
agent stops, and ``echo_residual`` says so (HEURISTIC threshold ``RESIDUAL_TAIL_DB``, 6 dB).

Calls are built from real clips with a known timeline (``DialogueBuilder``); the echo is the agent
channel through a direct path plus ``room_ir``'s decaying tail, delayed and attenuated, added to
the user channel, so where the leak is and how loud is known.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.signal import oaconvolve

from livejudge.commands.cli import main
from livejudge.testing.dialogues import DialogueBuilder, room_ir
from livejudge.timing.echo import RESIDUAL_TAIL_DB, gate_call, residual_tail_db
from livejudge.timing.health import echo_residual_warnings


def _dialogue():
    b = DialogueBuilder(seed=11)
    for i in range(5):
        b.user(f"cmu_cards_00{i + 1}", **({"gap_s": 0.7} if i else {}))
        b.agent(f"espeak_reply_0{i + 1}", gap_s=0.9)
    return b.build().stereo()


def _with_echo(x: np.ndarray, gain_db: float, rt60_s: float | None, drr_db: float = 3.0) -> np.ndarray:
    """``x`` with its agent channel leaking into the user channel 60 ms late at ``gain_db``: dry
    (``rt60_s`` None) or through a room (direct path plus a tail ``drr_db`` below it)."""
    h = np.zeros(int(0.06 * 16000) + 1, np.float32)
    h[-1] = 1.0
    if rt60_s is not None:
        h = np.concatenate([h, np.zeros(int(rt60_s * 16000) + 100, np.float32)])
        tail = room_ir(rt60_s, drr_db, np.random.default_rng(3))
        h[int(0.06 * 16000):int(0.06 * 16000) + tail.size] += tail
    leak = oaconvolve(x[:, 1], h)[: len(x)] * np.float32(10 ** (gain_db / 20))
    y = x.copy()
    y[:, 0] += leak.astype(np.float32)
    return y


@pytest.mark.parametrize("gain_db, rt60_s, warned", [(-10.0, 0.8, True), (-10.0, None, False),
                                                     (-30.0, 0.3, False)])
def test_a_reverberant_echo_tail_left_by_the_gate_is_measured(gain_db, rt60_s, warned):
    x = _with_echo(_dialogue(), gain_db, rt60_s)
    user, info = gate_call(x[:, 0], x[:, 1], "auto")
    assert info["applied"]
    tail = info["residual_tail_db"]
    assert tail is not None
    assert (tail >= RESIDUAL_TAIL_DB) == warned, tail
    assert [w.code for w in echo_residual_warnings(info)] == (["echo_residual"] if warned else [])


def test_no_echo_reads_the_floor_after_the_agent_stops():
    x = _dialogue()
    tail = residual_tail_db(x[:, 0], x[:, 1])
    assert tail is not None and abs(tail) < 2.0, tail
    assert echo_residual_warnings({"applied": False, "residual_tail_db": 20.0}) == []


def test_score_warns_echo_residual_in_the_result(tmp_path):
    import soundfile as sf

    wav, out = tmp_path / "call.wav", tmp_path / "out.json"
    sf.write(str(wav), np.clip(_with_echo(_dialogue(), -10.0, 0.8), -1, 1), 16000, subtype="PCM_16")
    assert main(["score", str(wav), "--judge", "none", "--json", str(out), "--display", "none"]) == 0
    doc = json.loads(out.read_text())
    codes = [w["code"] for w in doc["source"]["input_health"]]
    assert "echo_residual" in codes, codes
    assert doc["source"]["echo_gate"]["residual_tail_db"] >= RESIDUAL_TAIL_DB
    assert doc["summary"]["input_health_warning_count"] >= 1


@pytest.mark.parametrize("gain_db", [-10.0, -30.0, None])
def test_echo_left_in_with_the_gate_off_is_warned(tmp_path, gain_db):
    """``--echo-gate off`` on a speakerphone call: the agent's echo (dry, 60 ms late) read as five
    caller barge-ins and two backchannels with no warning. The gate's estimate still runs (never
    gates) and ``echo_ungated`` says so; a call without echo, or one gated, gets nothing."""
    import soundfile as sf

    x = _dialogue() if gain_db is None else _with_echo(_dialogue(), gain_db, None)
    wav = tmp_path / "call.wav"
    sf.write(str(wav), np.clip(x, -1, 1), 16000, subtype="PCM_16")
    for mode in ("off", "auto"):
        out = tmp_path / f"{mode}.json"
        assert main(["score", str(wav), "--judge", "none", "--json", str(out), "--display", "none",
                     "--echo-gate", mode]) == 0
        doc = json.loads(out.read_text())
        warned = [w for w in doc["source"]["input_health"] if w["code"] == "echo_ungated"]
        gate = doc["source"]["echo_gate"]
        if mode == "off":
            assert gate["applied"] is False and gate["detected"] is (gain_db is not None), gate
        assert len(warned) == (mode == "off" and gain_db is not None), (mode, warned)
        if warned:
            assert "--echo-gate off left it there" in warned[0]["message"]
            assert "at 60 ms" in warned[0]["message"], warned[0]["message"]
            assert doc["summary"]["user_barge_in_count"] >= 3  # what the warning is for
        elif gain_db is None:
            assert doc["summary"]["user_barge_in_count"] == 0
