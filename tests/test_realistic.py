"""Timing on realistic lines (issue 10): noise floors, room tails, breaths, babble, telephone,
DC offset, clicks and pops, a quiet word-final /s/, a user resuming after a pause.

Dialogues come from real clips with exact truth (``livejudge.testing.dialogues``); each measured value
is checked against it. Stated tolerances (errors are rounded to the 10 ms refinement grid):
* clean-ish lines (noise ≤ −47 dBFS white/room, 16–48 kHz): onsets within 30 ms, latencies and yield
  times within 50 ms (one 30 ms VAD frame + 20 ms, as in test_pipeline);
* loud noise (−40 dBFS), babble, 8 kHz and the μ-law telephone line: within 70 ms (the
  quietest word ends sink into the noise; babble is itself speech-like);
* room tails (RT60 0.3 s, direct-to-reverberant ratio 10 dB) with breaths: within 100 ms for
  offsets and latencies (a reverberant decay above the phrase's peak − 30 dB reads as speech;
  see benchmarks/vad_bounds.py for medians and p95s).
Turn structure (transitions, barge-ins, backchannels) must match the truth exactly.
"""

import numpy as np
import pytest

from livejudge.audio import SAMPLE_RATE, TwoChannelAudio, resample
from livejudge.timing.frontend import StreamingHighPass, highpass
from livejudge.session import Session, SessionConfig, snapshot_of_call, stream_call
from livejudge.testing.dialogues import (
    DialogueBuilder,
    example_dialogue,
    load_clip,
    pop,
    trim,
    with_final_fricative,
)
from livejudge.timing.turns import analyze
from livejudge.timing.vad import StreamingVAD, VADConfig, detect_segments, periodicity


def _through(call: TwoChannelAudio, rate: int) -> TwoChannelAudio:
    if rate == SAMPLE_RATE:
        return call
    f = lambda x: resample(resample(x, SAMPLE_RATE, rate), rate, SAMPLE_RATE)[: len(x)]  # noqa: E731
    return TwoChannelAudio(f(call.user), f(call.agent), rate, call.channels)


def _check(d, snap, tol_s, tol_lat_s=None):
    """Measured timeline vs the definitions (turns.analyze) applied to the truth segments: the
    same as the builder's truth, except that an utterance the line shortens below 1 s (a
    word-final /s/ above 4 kHz is gone at 8 kHz) is a backchannel by definition."""
    tol_lat_s = tol_s if tol_lat_s is None else tol_lat_s
    tr = analyze(d.truth.segments())
    assert [(t.from_channel, t.to_channel) for t in snap.transitions] == \
        [(t.from_channel, t.to_channel) for t in tr.transitions]
    for m, t in zip(snap.transitions, tr.transitions):
        assert m.to_onset_s == pytest.approx(t.to_onset_s, abs=tol_s)
        assert m.gap_s == pytest.approx(t.gap_s, abs=tol_lat_s)
    assert [(b.by, b.yield_s is None) for b in snap.barge_ins] == [(b.by, b.yield_s is None) for b in tr.barge_ins]
    for m, t in zip(snap.barge_ins, tr.barge_ins):
        assert m.onset_s == pytest.approx(t.onset_s, abs=tol_s)
        if t.yield_s is not None:
            assert m.yield_s == pytest.approx(t.yield_s, abs=tol_lat_s)
    assert [(b.channel, round(b.onset_s, 1)) for b in snap.backchannels] == \
        [(b.channel, pytest.approx(round(b.onset_s, 1), abs=0.1)) for b in tr.backchannels]


@pytest.mark.parametrize("noise_dbfs", [-55, -50, -47])
@pytest.mark.parametrize("kind", ["white", "room"])
def test_noise_floor_above_the_old_fixed_gate(noise_dbfs, kind):
    # the fixed −50 dBFS gate gave offsets 100–170 ms late once noise rose above it.
    # Yields and gaps 50 ms: one cut-off reply fades out like a room decay and loses 40 ms.
    d = example_dialogue(seed=2, noise_dbfs=noise_dbfs, noise_kind=kind)
    _check(d, snapshot_of_call(d.call), 0.030, tol_lat_s=0.050)


@pytest.mark.parametrize("rate", [8000, 16000, 48000])
def test_loud_noise_at_each_rate(rate):
    d = example_dialogue(seed=0, noise_dbfs=-40, line_rate=min(rate, SAMPLE_RATE))
    _check(d, snapshot_of_call(_through(d.call, rate)), 0.070)


def test_babble_noise():
    d = example_dialogue(seed=1, machine_agent=False, noise_dbfs=-50, noise_kind="babble")
    _check(d, snapshot_of_call(d.call), 0.070)


def test_room_tails_and_breaths():
    d = example_dialogue(seed=0, noise_dbfs=-47, room_rt60_s=0.3, room_drr_db=10.0, breath_dbfs=-41)
    _check(d, snapshot_of_call(d.call), 0.030, tol_lat_s=0.100)
    # breaths (aperiodic) open no segment: as many segments as without them
    d0 = example_dialogue(seed=0, noise_dbfs=-47, room_rt60_s=0.3, room_drr_db=10.0)
    assert len(snapshot_of_call(d.call).segments) == len(snapshot_of_call(d0.call).segments)


def test_mulaw_telephone_line():
    d = example_dialogue(seed=3, machine_agent=False, noise_dbfs=-50, telephone_line=True)
    _check(d, snapshot_of_call(d.call), 0.070)


def test_streaming_matches_whole_call_on_a_noisy_line():
    d = example_dialogue(seed=4, noise_dbfs=-45, noise_kind="room", room_rt60_s=0.3, breath_dbfs=-40)
    s = Session(SessionConfig())
    stream_call(s, d.call, chunk_s=0.013)
    r = s.close()
    whole = snapshot_of_call(d.call)
    assert [(x["channel"], x["onset_s"], x["offset_s"]) for x in r["segments"]] == \
        [(x.channel, pytest.approx(x.onset_s, abs=1e-6), pytest.approx(x.offset_s, abs=1e-6)) for x in whole.segments]


def test_dc_offset_gives_the_same_segments():
    base = example_dialogue(seed=1, noise_dbfs=-55)
    dc = example_dialogue(seed=1, noise_dbfs=-55, dc_offset=0.05)
    assert float(np.mean(dc.call.user)) == pytest.approx(0.05, abs=0.005)  # the offset is there
    a, b = snapshot_of_call(base.call).segments, snapshot_of_call(dc.call).segments
    assert [(s.channel) for s in b] == [(s.channel) for s in a]
    for x, y in zip(a, b):
        assert y.onset_s == pytest.approx(x.onset_s, abs=0.010)
        assert y.offset_s == pytest.approx(x.offset_s, abs=0.010)
    # and through a live Session (the front end runs in Session._feed, chunk by chunk)
    s = Session(SessionConfig())
    stream_call(s, dc.call)
    assert len(s.close()["segments"]) == len(a)


def _pop_dialogue(pops, seed=0):
    b = DialogueBuilder(seed=seed, noise_dbfs=-55)
    b.user("cmu_cards_005")
    agent = b.agent("espeak_reply_03", gap_s=1.6)  # 1.6 s of silence to put the pop into
    b.user("cmu_cards_002", gap_s=0.8)
    for channel, kind in pops:
        b.pop(channel, agent.onset_s - 1.0, kind=kind, level_dbfs=-20.0)
    return b.build()


@pytest.mark.parametrize("channel", ["user", "agent"])
@pytest.mark.parametrize("kind", ["pop", "click"])
def test_pop_or_click_opens_no_turn_and_moves_no_latency(channel, kind):
    clean = snapshot_of_call(_pop_dialogue([]).call)
    d = _pop_dialogue([(channel, kind)])
    assert d.call.user.shape == _pop_dialogue([]).call.user.shape
    snap = snapshot_of_call(d.call)
    assert len(snap.segments) == len(clean.segments)
    assert [(t.channel, t.onset_s) for t in snap.turns] == [(t.channel, t.onset_s) for t in clean.turns]
    assert [t.gap_s for t in snap.transitions if t.is_response] == pytest.approx([t.gap_s for t in clean.transitions if t.is_response], abs=1e-6)
    assert [t.gap_s for t in snap.transitions if t.is_response] == pytest.approx([1.6], abs=0.03)


def test_the_plain_frame_vad_opens_a_turn_on_the_pop():
    # the regression the voicing check fixes: without it the 50 ms pop becomes speech
    d = _pop_dialogue([("agent", "pop")])
    clean = _pop_dialogue([])
    plain = VADConfig(adaptive=False)
    n_plain = len(detect_segments(clean.call.agent, "agent", plain))
    assert len(detect_segments(d.call.agent, "agent", plain)) == n_plain + 1
    assert len(detect_segments(d.call.agent, "agent")) == len(detect_segments(clean.call.agent, "agent"))


def test_quiet_word_final_s_stays_in_its_turn():
    x = with_final_fricative("cmu_something", level_dbfs=-40.0, dur_s=0.12)
    b = DialogueBuilder(seed=0, noise_dbfs=-50)
    p = b.user(x)
    b.agent("espeak_reply_01", gap_s=0.5)
    d = b.build()
    # the truth holds the /s/: the placed clip is 120 ms longer than the plain clip's speech
    plain = DialogueBuilder(seed=0).user("cmu_something")
    assert (p.offset_s - p.onset_s) - (plain.offset_s - plain.onset_s) == pytest.approx(0.12, abs=0.015)
    snap = snapshot_of_call(d.call)
    assert snap.segments[0].offset_s == pytest.approx(p.offset_s, abs=0.020)
    assert [t.gap_s for t in snap.transitions if t.is_response] == pytest.approx([0.5], abs=0.020)


def test_user_resuming_after_a_pause_is_not_a_backchannel():
    # the user stops, the agent starts 0.2 s later, the user resumes 0.45 s after stopping
    b = DialogueBuilder(seed=0, noise_dbfs=-55)
    u = b.user("cmu_cards_005")
    b.agent("espeak_reply_01", gap_s=0.2)
    b.user("cmu_cards_004", at_s=u.offset_s + 0.45, max_s=0.5)
    d = b.build()
    snap = snapshot_of_call(d.call)
    assert snap.backchannels == ()
    assert [(x.by, x.yield_s) for x in snap.barge_ins] == [("user", None)]


def test_front_end_is_chunk_invariant_and_removes_dc():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(SAMPLE_RATE) * 0.1 + 0.2).astype(np.float32)
    hp = StreamingHighPass()
    y = np.concatenate([hp(x[a:a + 333]) for a in range(0, len(x), 333)])
    assert np.allclose(y, highpass(x), atol=1e-6)
    assert abs(float(np.mean(y[1600:]))) < 1e-3  # DC gone (0.2 in)
    with pytest.raises(ValueError, match="cut-off"):
        StreamingHighPass(9000.0)


def test_noise_floor_tracks_the_level_and_periodicity_separates_voice_from_pops():
    rng = np.random.default_rng(0)
    for level in (-60.0, -45.0):
        v = StreamingVAD("user")
        v.push((rng.standard_normal(3 * SAMPLE_RATE) * 10 ** (level / 20)).astype(np.float32))
        assert v.noise_floor_dbfs == pytest.approx(level, abs=1.5)
        assert v.gate_dbfs >= max(-50.0, level + 3.0)
    t = np.arange(480) / SAMPLE_RATE
    vowel = sum(np.sin(2 * np.pi * 120 * k * t) / k for k in range(1, 8))
    assert periodicity(vowel) > 0.9
    assert periodicity(pop("pop", -20.0, np.random.default_rng(1))[:480]) < 0.5
    with pytest.raises(ValueError, match="refine_ms"):
        VADConfig(refine_ms=7).validate()


def test_echo_leakage_is_the_agent_delayed_and_attenuated_and_leaves_the_truth():
    def build(**line):
        b = DialogueBuilder(seed=0, noise_dbfs=None, **line)
        b.user("cmu_cards_001")
        b.agent("espeak_reply_01", gap_s=0.4)
        return b.build()

    plain, leak = build(), build(echo_gain_db=-18.0, echo_delay_s=0.05)
    d = int(0.05 * SAMPLE_RATE)
    expected = np.zeros_like(plain.call.agent)
    expected[d:] = plain.call.agent[:-d] * 10 ** (-18 / 20)
    np.testing.assert_allclose(leak.call.user - plain.call.user, expected, atol=1e-6)
    np.testing.assert_array_equal(leak.call.agent, plain.call.agent)
    assert leak.truth.placed == plain.truth.placed


@pytest.mark.parametrize("seed", [0, 2, 3])
def test_babble_at_minus_45_dbfs(seed):
    # babble is not normal in dB (long low tail, short high one): thresholds read off the
    # noise's own 95th percentile instead of median + 2σ (σ from the low tail) keep word ends
    # and stop babble peaks from bridging into bounds. Before: gaps off by up to 160 ms here.
    # (seed 1's human "agent" pauses mid-turn right at the merge limit: turn structure differs)
    # (seed 3: the agent's turn end at 10.58 s is exact since issue 20's kept noise percentile;
    # it was 50 ms early before, which hid the user's onset at 10.77 s, 60 ms early in babble:
    # the latency error is now that onset error, so its tolerance is the onsets' 70 ms)
    d = example_dialogue(seed=seed, machine_agent=False, noise_dbfs=-45, noise_kind="babble")
    _check(d, snapshot_of_call(d.call), 0.070, tol_lat_s=0.070 if seed == 3 else 0.060)


@pytest.mark.parametrize("line", [dict(noise_dbfs=-40, noise_kind="white", seed=0),
                                  dict(noise_dbfs=-40, noise_kind="white", seed=2),
                                  dict(noise_dbfs=-45, noise_kind="babble", seed=0),
                                  dict(noise_dbfs=-45, noise_kind="babble", seed=2)])
def test_loud_final_burst_after_a_dip_stays_in_the_turn(line):
    # "something" ends with a loud aperiodic burst (−23…−31 dBFS, 8 dB below the clip's peak)
    # after a ~100 ms dip at −35…−40 dBFS that the noise fills: the segment ended at the dip,
    # 90 ms early (the burst has no periodic frame and is no fricative). A loud burst within
    # 120 ms now stays in (BURST_REL_DB). Tolerance: the 10 ms grid + 20 ms.
    x = trim(load_clip("cmu_something"))
    n = len(x) // 160
    db = 10 * np.log10(np.mean(x[: n * 160].reshape(n, 160).astype(np.float64) ** 2, axis=1) + 1e-12)
    assert db[-19:-11].min() >= db.max() - 16 and db[-23:-19].max() <= db.max() - 19  # burst after a dip
    b = DialogueBuilder(**line)
    p = b.user("cmu_something")
    b.agent("espeak_reply_01", gap_s=0.5)
    snap = snapshot_of_call(b.build().call)
    user = [s for s in snap.segments if s.channel == "user"]
    assert len(user) == 1
    assert user[0].offset_s == pytest.approx(p.offset_s, abs=0.030)
    assert [t.gap_s for t in snap.transitions if t.is_response] == pytest.approx([0.5], abs=0.030)


def test_silero_detector_behind_the_adaptive_stages():
    pytest.importorskip("pipecat")
    d = example_dialogue(seed=2, noise_dbfs=-50)
    snap = snapshot_of_call(d.call, SessionConfig(vad=VADConfig(detector="silero")))
    _check(d, snap, 0.030, tol_lat_s=0.050)
    with pytest.raises(ValueError, match="detector"):
        VADConfig(detector="silreo").validate()


@pytest.mark.parametrize("clip", ["cmu_cards_001", "cmu_cards_002"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_final_fricative_reverb_is_not_speech(clip, seed):
    # "cards": a final /s/ in a room (RT60 0.3 s, DRR 10 dB) leaves a fricative-like decay that
    # the high band kept in: offsets came out 70–90 ms late. The decay (≥ 1 dB per 10 ms) is
    # now cut (_fading_fricative_cut). Tolerance: one 30 ms VAD frame (the reverb's first
    # sub-frames stay above the phrase's peak − 30 dB, like the truth's own last frame).
    b = DialogueBuilder(seed=seed, noise_dbfs=-55, room_rt60_s=0.3, room_drr_db=10.0)
    p = b.user(clip)
    b.agent("espeak_reply_01", gap_s=0.5)
    snap = snapshot_of_call(b.build().call)
    user = [s for s in snap.segments if s.channel == "user"]
    assert len(user) == 1
    assert user[0].offset_s == pytest.approx(p.offset_s, abs=0.0305)  # 30 ms + float slack


def test_the_truth_as_recorded_keeps_what_a_telephone_line_drops():
    """DialogueBuilder(truth="recorded") keeps each clip's recorded bounds and sends it through the
    line unchanged in length, so the truth holds the speech the line drops or weakens below its
    peak − 30 dB (a word-final /s/ above 3.4 kHz); "carried" (the default) trims to what the line
    carries. benchmarks/vad_bounds.py's ulaw-rec and 8k-rec sets measure timing against it."""
    x = with_final_fricative(load_clip("cmu_cards_001"))
    rec = DialogueBuilder(noise_dbfs=-60, telephone_line=True, truth="recorded")
    car = DialogueBuilder(noise_dbfs=-60, telephone_line=True)
    assert len(rec.as_carried(x)) == len(trim(x))
    assert len(trim(x)) - len(car.as_carried(x)) > 0.1 * SAMPLE_RATE  # the /s/ (0.12 s) is not carried
    wide = DialogueBuilder(noise_dbfs=-60, truth="recorded")  # no line: both truths are the recording
    assert np.array_equal(wide.as_carried(x), DialogueBuilder(noise_dbfs=-60).as_carried(x))
    with pytest.raises(ValueError, match="truth must be"):
        DialogueBuilder(truth="wideband")
