"""The noise floor over the whole call (``timing.health.changing_floor_warnings``, fed by the
Session's ``FloorTrack``): a floor that gets loud part way through a call is warned about, with
where; a quiet call, a monologue and a floor already warned about are not.

A new user's trial: the example call with −60 dBFS white noise that rose to −35 dBFS at 20 s gave
no warning (the check before streaming reads a percentile over the whole call, which the quiet
first part held down), though the same noise over the whole call warns ``noisy_line``. The calls
here are built from real clips with a known timeline (``DialogueBuilder``); the noise is added
where stated, so where the warning says it starts is known to a window's hop
(``FLOOR_HOP_S``, 5 s).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from livejudge.commands.cli import main
from livejudge.testing.dialogues import DialogueBuilder, load_clip, noise
from livejudge.timing.health import (FLOOR_HOP_S, FloorTrack, _frame_rms, changing_floor_warnings)


def _call(rise_at_s: float | None, kind: str = "white", dbfs: float = -35.0):
    """A 10-turn dialogue of real clips (about 40 s), a −65 dBFS floor on both channels, and from
    ``rise_at_s`` on noise of ``kind`` at ``dbfs`` RMS on the user channel."""
    b = DialogueBuilder(seed=5)
    for i in range(5):
        b.user(f"cmu_cards_00{i + 1}", **({"gap_s": 0.6} if i else {}))
        b.agent(f"espeak_reply_0{i + 1}", gap_s=0.8)
    d = b.build()
    x = d.stereo()
    if rise_at_s is not None:
        k = int(rise_at_s * 16000)
        x[k:, 0] += noise(kind, len(x) - k, dbfs, np.random.default_rng(1)).astype(np.float32)
    return x


def _score(tmp_path, x) -> list[dict]:
    import soundfile as sf

    wav, out = tmp_path / "call.wav", tmp_path / "out.json"
    sf.write(str(wav), np.clip(x, -1, 1), 16000, subtype="PCM_16")
    assert main(["score", str(wav), "--judge", "none", "--json", str(out), "--display", "none"]) == 0
    return json.loads(out.read_text())["source"]["input_health"]


def test_a_floor_that_rises_part_way_is_warned_with_where(tmp_path):
    x = _call(rise_at_s=20.0)
    assert len(x) / 16000 > 35.0
    noisy = [w for w in _score(tmp_path, x) if w["code"] == "noisy_line"]
    assert [w["channel"] for w in noisy] == ["user"], noisy
    msg = noisy[0]["message"]
    start_s = float(msg.split(" from ")[1].split(" s ")[0])
    assert 20.0 <= start_s <= 20.0 + FLOOR_HOP_S, msg
    assert "to the end" in msg and "dBFS elsewhere" in msg, msg
    assert -37.0 <= noisy[0]["value"] <= -33.0, noisy[0]


def test_the_same_call_without_the_rise_gets_no_floor_warning(tmp_path):
    assert not [w for w in _score(tmp_path, _call(rise_at_s=None)) if w["code"] == "noisy_line"]


def _levels(x: np.ndarray) -> np.ndarray:
    t = FloorTrack()
    for i in range(0, len(x), 320):  # fed as a stream of 20 ms chunks
        t.feed(x[i:i + 320])
    return t.rms()


def test_floor_track_gives_the_frame_levels_of_the_whole_stream():
    x = _call(rise_at_s=None)[:, 0]
    np.testing.assert_allclose(_levels(x), _frame_rms(x).astype(np.float32), rtol=1e-5)


def test_a_monologue_and_a_told_channel_get_no_floor_warning():
    """A 44 s audiobook reading (its pauses hold a −60 dBFS floor) is not read as noise, even as
    one long turn; a channel already told ``noisy_line`` or ``silent_channel``, or an
    unmeasurable call, gets nothing more."""
    mono = load_clip("librivox_two_cities")
    lv = _levels(mono)
    assert changing_floor_warnings({"user": lv, "agent": lv}, []) == []
    loud = _levels(_call(rise_at_s=0.0)[:, 0])
    assert [w.channel for w in changing_floor_warnings({"user": loud}, [])] == ["user"]
    for said in ([{"code": "noisy_line", "channel": "user"}], [{"code": "silent_channel", "channel": "user"}],
                 [{"code": "identical_channels", "channel": None, "unmeasurable": True}]):
        assert changing_floor_warnings({"user": loud}, said) == []


@pytest.mark.parametrize("noisy_s", [9.0, 16.0])
def test_one_noisy_window_is_not_enough(noisy_s):
    """Fewer than ``FLOOR_RUN_WINDOWS`` noisy windows in a row (a 9 s burst fills no 10 s window
    enough to read as its floor, or one at most) give no warning; 16 s of noise gives one."""
    x = _call(rise_at_s=None)[:, 0].copy()
    k0, k1 = 16000 * 5, int(16000 * (5 + noisy_s))
    x[k0:k1] += noise("white", k1 - k0, -30.0, np.random.default_rng(2)).astype(np.float32)
    got = changing_floor_warnings({"user": _levels(x)}, [])
    assert bool(got) == (noisy_s > 10.0), got


def test_noise_there_all_call_is_not_placed_where_its_floor_first_reads_loud():
    """Babble whose talkers pause reads a lower floor in some windows; a re-check saw "from 10 s to
    the end (-49 dBFS elsewhere)" for babble there from 0 s. Where the other windows read within
    ``FLOOR_CONTRAST_DB`` of the loudest, the warning names no start and no "elsewhere"; a floor
    that rose by more is placed. Frame levels are given directly (30 ms frames, dBFS)."""
    from livejudge.timing.health import FLOOR_CONTRAST_DB

    rng = np.random.default_rng(4)

    def frames(*parts):  # (seconds, dBFS) stretches of steady noise, ±0.1 dB jitter
        return np.concatenate([10 ** ((db + rng.normal(0, 0.1, int(s / 0.03))) / 20) for s, db in parts])

    near = changing_floor_warnings({"user": frames((10, -36), (12, -36 - FLOOR_CONTRAST_DB + 3), (20, -36))}, [])
    assert len(near) == 1 and "windows, and within 10 dB of it in the others" in near[0].message, near
    assert " from " not in near[0].message and "elsewhere" not in near[0].message
    rose = changing_floor_warnings({"user": frames((20, -60), (25, -36))}, [])
    assert len(rose) == 1 and "reaches -36 dBFS from 20 s to the end (-60 dBFS elsewhere)" in rose[0].message, rose
