"""A recording that starts inside the caller's phrase (a recorder that trims leading silence, a
snippet cut from a longer call): a new user's trial measured its first turn short, split or lost
(a 0.35 s reply read 1.02 s or 2.30 s, a false "caller paused" moment) with no warning. The VAD's
noise floor was learnt from the stream's start, which was speech. ``score`` now reads a recording's
first seconds ahead (``Session.prime_noise_floor``).

The calls are built from real clips with a known timeline (``DialogueBuilder``) and cut; each
measured value is checked against the truth. Stated tolerance: offsets and latencies within 60 ms
(``benchmarks/vad_bounds.py``'s target set: p95 55 ms on a whole call; the errors seen before were
190–3060 ms)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from livejudge.audio import SAMPLE_RATE
from livejudge.commands.cli import main
from livejudge.testing.dialogues import DialogueBuilder
from livejudge.timing.vad import NoiseFloor, StreamingVAD, VADConfig, detect_segments

TOL_S = 0.06


@pytest.fixture(scope="module")
def dialogue():
    b = DialogueBuilder(noise_dbfs=-60.0, seed=3)
    b.user("librivox_austen_0890")  # a 4.7 s phrase, as the trial's
    b.agent("espeak_reply_01", gap_s=0.35)
    b.user("cmu_cards_005", gap_s=0.7)
    b.agent("espeak_reply_02", gap_s=0.6)
    return b.build()


def _score(tmp_path, x: np.ndarray, name: str) -> dict:
    wav = tmp_path / f"{name}.wav"
    sf.write(str(wav), x, SAMPLE_RATE, subtype="PCM_16")
    out = tmp_path / f"{name}.json"
    assert main(["score", str(wav), "--judge", "none", "--asr", "off", "--json", str(out)]) == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize("into_s", [0.0, 0.5, 1.2, 2.0, 2.9])
def test_a_recording_cut_inside_the_callers_first_phrase_measures_it(dialogue, tmp_path, capsys, into_s):
    first = next(p for p in dialogue.truth.placed if p.channel == "user")
    cut_s = first.onset_s + into_s
    assert first.offset_s - cut_s > 0.8  # the cut leaves most of the phrase
    r = _score(tmp_path, dialogue.stereo()[int(round(cut_s * SAMPLE_RATE)):], f"cut{into_s}")
    users = [t for t in r["turns"] if t["channel"] == "user"]
    agents = [t for t in r["turns"] if t["channel"] == "agent"]
    truth_agent = [p for p in dialogue.truth.placed if p.channel == "agent"]
    # the phrase is one turn, ending where it ends, before the agent's first reply
    before = [t for t in users if t["onset_s"] < agents[0]["onset_s"]]
    assert len(before) == 1, users
    assert before[0]["offset_s"] == pytest.approx(first.offset_s - cut_s, abs=TOL_S)
    assert before[0]["onset_s"] < 0.5  # from (about) the start: the trial's began 0.23–0.41 s late, or later
    lat = [t for t in r["transitions"] if t["from"] == "user" and t["to"] == "agent"]
    want = [a.onset_s - u.offset_s for u, a in zip([p for p in dialogue.truth.placed if p.channel == "user"],
                                                      truth_agent)]
    assert [round(t["gap_s"], 2) for t in lat] == pytest.approx(want, abs=TOL_S)
    assert not [v for v in r["verdicts"] if v["kind"] == "pause"]  # no "caller paused" invented
    assert r["source"]["input_health"] == []


def test_read_ahead_gives_score_s_segments_and_changes_nothing_on_a_call_that_starts_quiet(dialogue, tmp_path):
    """detect_segments(read_ahead=True) is what score measures on a recording; on a call that starts
    with silence, reading ahead changes no segment (the floor of the first seconds is the floor)."""
    x = dialogue.stereo()
    whole = _score(tmp_path, x, "whole")
    for col, ch in ((0, "user"), (1, "agent")):
        plain = detect_segments(x[:, col], ch)
        ahead = detect_segments(x[:, col], ch, read_ahead=True)
        assert [(round(s.onset_s, 2), round(s.offset_s, 2)) for s in ahead] == \
            [(round(s.onset_s, 2), round(s.offset_s, 2)) for s in plain]
        assert [(round(s.onset_s, 2), round(s.offset_s, 2)) for s in ahead] == \
            [(round(s["onset_s"], 2), round(s["offset_s"], 2)) for s in whole["segments"] if s["channel"] == ch]
    cut = x[int(round((dialogue.truth.placed[0].onset_s + 0.45) * SAMPLE_RATE)):]
    r = _score(tmp_path, cut, "cut")
    ahead = detect_segments(cut[:, 0], "user", read_ahead=True)
    assert [(round(s.onset_s, 2), round(s.offset_s, 2)) for s in ahead] == \
        [(round(s["onset_s"], 2), round(s["offset_s"], 2)) for s in r["segments"] if s["channel"] == "user"]


def test_noise_floor_prime_is_replaced_by_the_streams_own_levels():
    """The read-ahead levels start the estimate, and each level the stream adds takes the place of
    its read-ahead copy: streaming the same levels leaves the estimate where priming put it."""
    rng = np.random.default_rng(0)
    levels = np.concatenate([rng.normal(-20, 3, 200), rng.normal(-65, 1, 600)])  # speech first, then noise
    primed = NoiseFloor(800)
    primed.prime(levels)
    at_start = primed.median_db
    assert at_start is not None and at_start < -60  # the noise, not the speech the stream starts with
    plain = NoiseFloor(800)
    plain.add(levels[:60])
    assert plain.median_db > -30  # learnt from the start alone: speech read as the floor
    for k in range(0, 800, 30):
        primed.add(levels[k:k + 30])
    assert primed.median_db == pytest.approx(at_start, abs=1e-9)
    with pytest.raises(RuntimeError):
        primed.prime(levels)
    v = StreamingVAD("user", VADConfig())
    v.push(np.zeros(480, np.float32))
    with pytest.raises(RuntimeError):
        v.prime_noise(np.zeros(16000, np.float32))


@pytest.fixture(scope="module")
def phone_dialogue():
    b = DialogueBuilder(noise_dbfs=-55.0, seed=5)
    b.user("cmu_cards_005", at_s=1.0)  # the trial's first phrase (3.0 s)
    b.agent("espeak_reply_01", gap_s=0.3)
    b.user("cmu_numbers", gap_s=0.6)
    b.agent("espeak_reply_02", gap_s=0.7)
    return b.build()


def _telephone(x: np.ndarray) -> np.ndarray:
    """Both channels through a 300–3400 Hz band and down to 8 kHz, as a phone line carries them."""
    from scipy.signal import butter, resample_poly, sosfilt

    sos = butter(4, [300, 3400], btype="band", fs=SAMPLE_RATE, output="sos")
    return np.stack([resample_poly(sosfilt(sos, x[:, c]), 1, 2) for c in (0, 1)], axis=1)


@pytest.mark.parametrize("into_s", [0.4, 1.0, 1.9, 2.3])
def test_a_mu_law_recording_cut_inside_the_callers_first_phrase_measures_it(phone_dialogue, tmp_path, capsys, into_s):
    """Trial K: the same cut over an 8 kHz μ-law line read the first caller turn 0.26 s short (a 0.30 s
    reply as 0.56 s) at one cut point of nine: the line has no high band to keep a phrase's end, and
    the first frames of a word the frame VAD had missed counted as quiet. Within the timing error of
    a narrowband line at every cut point (its p95 is 298 ms; the errors here are within 60 ms)."""
    d = phone_dialogue
    first = next(p for p in d.truth.placed if p.channel == "user")
    cut_s = first.onset_s + into_s
    x8 = _telephone(d.stereo())[int(round(cut_s * 8000)):]
    wav = tmp_path / f"ulaw{into_s}.wav"
    sf.write(str(wav), np.clip(x8, -1, 1), 8000, subtype="ULAW")
    out = tmp_path / f"ulaw{into_s}.json"
    assert main(["score", str(wav), "--judge", "none", "--asr", "off", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    users = [t for t in r["turns"] if t["channel"] == "user"]
    agents = [t for t in r["turns"] if t["channel"] == "agent"]
    before = [t for t in users if t["onset_s"] < agents[0]["onset_s"]]
    assert len(before) == 1, users
    assert before[0]["offset_s"] == pytest.approx(first.offset_s - cut_s, abs=TOL_S)
    lat = [t["gap_s"] for t in r["transitions"] if t["from"] == "user" and t["to"] == "agent"]
    want = [a.onset_s - u.offset_s for u, a in zip([p for p in d.truth.placed if p.channel == "user"],
                                                      [p for p in d.truth.placed if p.channel == "agent"])]
    assert lat[0] == pytest.approx(want[0], abs=TOL_S)
