"""Input health (livejudge.timing.health) on calls built from real clips: each problem is made on
purpose and must be named, and a clean call (any line condition) must give no warning."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from livejudge.testing import example_dialogue
from livejudge.timing.health import CLIP_SHARE, check_input


@pytest.fixture(scope="module")
def clean():
    return example_dialogue(seed=0)


@pytest.mark.parametrize("line", [dict(), dict(noise_dbfs=-47.0, noise_kind="babble"),
                                  dict(noise_dbfs=-50.0, telephone_line=True),
                                  dict(noise_dbfs=-50.0, echo_gain_db=-18.0)])
def test_clean_calls_give_no_warning(line):
    d = example_dialogue(seed=1, **line)
    assert check_input(d.call.user, d.call.agent) == []


def test_each_problem_is_named(clean):
    u, a = clean.call.user, clean.call.agent
    w = check_input(u, np.zeros_like(a))
    assert [(x.code, x.channel, x.unmeasurable) for x in w] == [("silent_channel", "agent", False)]
    assert "--agent-channel" in w[0].message
    w = check_input(np.zeros_like(u), np.zeros_like(a))
    assert [x.unmeasurable for x in w] == [True, True]
    w = check_input(u, u.copy())
    assert [(x.code, x.unmeasurable) for x in w] == [("identical_channels", True)]
    hot = np.clip(u * 100, -1, 1)  # speech driven 40 dB into full scale
    w = check_input(hot, a)
    # (40 dB of gain lifts the noise floor too, out of the measured range: noisy_line as well)
    assert [(x.code, x.channel) for x in w if x.code != "noisy_line"] == [("clipping", "user")]
    assert next(x for x in w if x.code == "clipping").value > CLIP_SHARE
    assert check_input(u * 0.5, a) == []  # loud is not clipped
    w = check_input(u, a + np.float32(0.05))
    assert [(x.code, x.channel) for x in w] == [("dc_offset", "agent")] and w[0].value == pytest.approx(0.05, abs=1e-3)
    n = len(u)
    w = check_input(u, a, lengths=(n, n // 2))
    assert [x.code for x in w] == ["length_mismatch"]
    assert check_input(u, a, lengths=(n, n - 8000)) == []  # 0.5 s short: within 1 s
    w = check_input(u[:15999], a[:15999])  # under MIN_CALL_S (1 s): refused before any other check
    assert (w[0].code, w[0].unmeasurable, w[0].value) == ("too_short", True, pytest.approx(15999 / 16000))
    assert not any(x.code == "too_short" for x in check_input(u[:16000], a[:16000]))


def test_swapped_channels_with_speakerphone_echo():
    d = example_dialogue(seed=0, echo_gain_db=-18.0)
    assert check_input(d.call.user, d.call.agent) == []  # the usual direction of echo
    w = check_input(d.call.agent, d.call.user)  # swapped: the "agent" channel holds the echo
    assert [x.code for x in w] == ["channel_swap"] and "--user-channel" in w[0].message


@pytest.mark.parametrize("line", [dict(), dict(noise_dbfs=-47.0, noise_kind="babble"),
                                  dict(noise_dbfs=-50.0, telephone_line=True), dict(noise_dbfs=-60.0)])
def test_swapped_channels_without_echo_by_the_noise_floors(line):
    """A Pipecat recording pads the bot track with zero bytes between utterances, while the caller's
    microphone always carries noise: built so (noise on the caller's side only, −60…−47 dBFS, also
    through a telephone line), the usual order gives no warning and the swapped one a channel_swap
    naming the cue; noise on both sides, or on neither, says nothing of the order."""
    d = example_dialogue(seed=1, noise_channels=("user",), **line)
    assert check_input(d.call.user, d.call.agent) == []
    w = check_input(d.call.agent, d.call.user)
    assert [x.code for x in w] == ["channel_swap"]
    assert "digital silence" in w[0].message and "--user-channel" in w[0].message and "synthetic" in w[0].message
    assert 0.2 <= w[0].value <= 1.0
    live = check_input(d.call.agent, d.call.user, live=True)
    assert [x.code for x in live] == ["channel_swap"] and "wrong way round" in live[0].message
    assert "sends no audio while the caller is silent" in live[0].message  # live: a muted client leaves zeros too
    assert check_input(d.call.agent, d.call.user, swap_test=False) == []
    for both in (dict(noise_dbfs=None), dict(noise_dbfs=-60.0)):  # zeros on both sides, noise on both
        e = example_dialogue(seed=1, **both)
        assert check_input(e.call.agent, e.call.user) == [] and check_input(e.call.user, e.call.agent) == []


@pytest.mark.parametrize("agent_floor_dbfs", [-70.0, -65.0])
def test_swapped_channels_by_the_noise_floor_levels(agent_floor_dbfs):
    """Neither side digital silence: a caller in a −47 dBFS room and an agent line carrying −70 or
    −65 dBFS of noise (a new user's trial: swapped, it gave no warning). The usual order says
    nothing; swapped, the "agent" floor sits 18+ dB above the "user" one: a channel_swap naming the
    levels, whose value is the measured difference (truth 23 or 18 dB, ±3 dB for the speech the
    10th percentile may catch); 18 dB is under NOISIER_AGENT_DB (20), so only -70 warns."""
    d = example_dialogue(seed=1, noise_channels=("user",), noise_dbfs=-47.0)
    rng = np.random.default_rng(5)
    a = (d.call.agent + rng.normal(0.0, 10 ** (agent_floor_dbfs / 20), d.call.agent.size)).astype(np.float32)
    assert check_input(d.call.user, a) == []
    w = check_input(a, d.call.user)
    if agent_floor_dbfs == -70.0:
        assert [x.code for x in w] == ["channel_swap"]
        assert "noise floor" in w[0].message and "synthetic" in w[0].message and "--user-channel" in w[0].message
        assert w[0].value == pytest.approx(23.0, abs=3.0)
    else:
        assert w == []


def test_the_swap_fix_names_the_other_order_of_the_flags_used(tmp_path):
    """"try --user-channel 1 --agent-channel 0" was printed for a call already read with those flags
    (a new user's trial): the fix is the order the recording was NOT read in, or the two files
    swapped."""
    import soundfile as sf

    from livejudge.audio import open_call
    from livejudge.timing.health import check_call

    d = example_dialogue(seed=1, noise_channels=("user",))
    path = tmp_path / "call.wav"
    d.write(path)  # the caller on channel 0
    for u, a in ((0, 1), (1, 0)):
        with open_call(path, user_channel=u, agent_channel=a) as r:
            w = check_call(r)
        if (u, a) == (0, 1):
            assert w == []
        else:
            assert [x.code for x in w] == ["channel_swap"] and w[0].message.endswith(
                "try --user-channel 0 --agent-channel 1")
    sf.write(tmp_path / "u.wav", d.call.user, 16000)
    sf.write(tmp_path / "a.wav", d.call.agent, 16000)
    with open_call(user=tmp_path / "a.wav", agent=tmp_path / "u.wav") as r:
        w = check_call(r)
    assert [x.code for x in w] == ["channel_swap"]
    assert w[0].message.endswith(f"swap the two files: --user {tmp_path / 'u.wav'} --agent {tmp_path / 'a.wav'}")


def test_score_and_check_say_it_everywhere(tmp_path, capsys):
    from livejudge.commands.cli import main
    from livejudge.outputs.html_report import require_matplotlib

    d = example_dialogue(seed=0, echo_gain_db=-18.0)
    path = d.write(tmp_path / "swapped.wav", user_channel=1)  # the user on channel 1, read as channel 0
    out, log = tmp_path / "r.json", tmp_path / "e.jsonl"
    assert main(["score", str(path), "--judge", "none", "--json", str(out), "--events", str(log)]) == 0
    err = capsys.readouterr().err
    assert "warning: the agent channel carries an echo of the user channel" in err
    doc = json.loads(out.read_text())
    assert [w["code"] for w in doc["source"]["input_health"]] == ["channel_swap"]
    assert doc["source"]["input_health"][0]["basis"] == "HEURISTIC"
    notes = [json.loads(x) for x in log.read_text().splitlines()]
    assert any(x.get("kind") == "input_health" and x.get("code") == "channel_swap" for x in notes)
    assert main(["check", str(path)]) == 0
    assert "probably swapped" in capsys.readouterr().err
    try:
        require_matplotlib()
    except Exception:
        return
    from livejudge.outputs.html_report import render_html

    assert "Input health:" in render_html(doc) and "probably swapped" in render_html(doc)


# ---------------------------------------------------------------- live streams and batches


class _Notes:
    def __init__(self):
        self.notes = []

    def on_event(self, event):
        if getattr(event, "kind", None) == "input_health":
            self.notes.append(event)

    def on_close(self, result):
        pass


def _push_live(session, user, agent, step_s=0.02):
    """Feed both channels chunk by chunk, as a live source does (no file check before)."""
    n = int(step_s * 16000)
    for i in range(0, len(user), n):
        session.push("user", user[i:i + n], i / 16000)
        session.push("agent", agent[i:i + n], i / 16000)


def _tiled(x, seconds):
    return np.tile(x, int(np.ceil(seconds * 16000 / len(x))))[: int(seconds * 16000)].astype(np.float32)


def test_live_stream_is_checked_during_the_call_and_at_close():
    """A live route (no file to check first): the agent side sends silence. The probe says so once
    both channels hold LIVE_CHECK_S (before the call ends), and the result keeps it."""
    import time

    from livejudge.session import Session
    from livejudge.timing.health import LIVE_CHECK_S

    d = example_dialogue(seed=0)
    u = _tiled(d.call.user, LIVE_CHECK_S + 5)
    sink = _Notes()
    s = Session(sinks=[sink], info={"kind": "attach"})  # as `livejudge attach` builds it
    _push_live(s, u, np.zeros_like(u))
    for _ in range(100):  # the check runs on a worker thread, off the audio path
        if sink.notes:
            break
        time.sleep(0.05)
    assert [(n.data["code"], n.data["channel"]) for n in sink.notes] == [("silent_channel", "agent")]
    assert "is the agent sending audio" in sink.notes[0].data["message"]
    assert "--agent-channel" not in sink.notes[0].data["message"]  # no file flags on a live line
    doc = s.close()
    assert [(w["code"], w["channel"]) for w in doc["source"]["input_health"]] == [("silent_channel", "agent")]
    # inside a Pipecat pipeline the hint names the pipeline's frames, not attach's flags (a trial)
    s = Session(info={"source": "pipecat"})
    _push_live(s, u, np.zeros_like(u))
    msg = s.close()["source"]["input_health"][0]["message"]
    assert "OutputAudioRawFrame" in msg and "--protocol" not in msg
    assert len(sink.notes) == 1  # said once, not again at close


@pytest.mark.parametrize("line", [dict(noise_dbfs=-47.0, noise_kind="babble"),
                                  dict(noise_dbfs=-50.0, telephone_line=True)])
def test_live_clean_call_gives_no_warning(line):
    from livejudge.session import Session

    d = example_dialogue(seed=2, **line)
    s = Session()
    _push_live(s, d.call.user, d.call.agent)
    assert s.close()["source"]["input_health"] == []


def test_live_short_call_is_checked_at_close_and_early_only_warnings_are_marked():
    from livejudge.session import Session

    d = example_dialogue(seed=0)
    s = Session()  # a 10 s call: no live check, the one at close
    _push_live(s, d.call.user[:160000], d.call.user[:160000].copy())
    assert [w["code"] for w in s.close()["source"]["input_health"]] == ["identical_channels"]
    # the agent is silent for the first 35 s, then speaks: said live, kept as "first 30 s only"
    u = _tiled(d.call.user, 45)
    a = np.concatenate([np.zeros(35 * 16000, np.float32), _tiled(d.call.agent[16000 * 5:], 10)])
    s = Session()
    _push_live(s, u, a)
    got = s.close()["source"]["input_health"]
    assert [(w["code"], w["channel"]) for w in got] == [("silent_channel", "agent")]
    assert "in the first 30 s" in got[0]["message"]


def test_batch_scoring_checks_every_call(tmp_path, capsys):
    """`score DIR`: each call gets the single score's check; the warnings are in its result, the
    summary (JSON and CSV) and one stderr line naming the file."""
    import csv

    from livejudge.commands.cli import main

    calls = tmp_path / "calls"
    calls.mkdir()
    example_dialogue(seed=0, echo_gain_db=-18.0).write(calls / "swapped.wav", user_channel=1)
    example_dialogue(seed=1).write(calls / "fine.wav")
    out = tmp_path / "out"
    assert main(["score", str(calls), "--out-dir", str(out), "--judge", "none", "--asr", "off"]) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "swapped.wav" in err and "probably swapped" in err
    # no warning names the fine call (its piped progress line, "[1/2] fine.wav: scored", does)
    assert not [line for line in err.splitlines() if "fine.wav" in line and "warning" in line], err
    summary = json.loads((out / "summary.json").read_text())
    rows = {r["file"].rsplit("/", 1)[-1]: r for r in summary["calls"]}
    assert len(rows["swapped.wav"]["input_health"]) == 1 and rows["fine.wav"]["input_health"] == []
    doc = json.loads((out / "swapped.json").read_text())
    assert [w["code"] for w in doc["source"]["input_health"]] == ["channel_swap"]
    with open(out / "summary.csv", newline="") as f:
        got = {r["file"].rsplit("/", 1)[-1]: r["input_health"] for r in csv.DictReader(f)}
    assert "probably swapped" in got["swapped.wav"] and got["fine.wav"] == ""


def test_a_recording_nothing_can_be_measured_from_is_refused(tmp_path, capsys):
    """One signal on both channels (a mono recording copied), or both silent: the warning says
    nothing can be measured, so score/check refuse it (exit 2, one line) and a batch skips it,
    instead of a result with a P(human) and verdicts of a call that was never heard."""
    import soundfile as sf

    from livejudge.commands.cli import main

    d = example_dialogue(seed=0)
    calls = tmp_path / "calls"
    calls.mkdir()
    sf.write(str(calls / "mono_dup.wav"), np.stack([d.call.user, d.call.user], axis=1), 16000)
    sf.write(str(calls / "silent.wav"), np.zeros((16000 * 5, 2), np.float32), 16000)
    # 0.1 s of the call's speech (a new user's trial: scored, exit 0, nothing measured)
    sf.write(str(calls / "short.wav"), np.stack([d.call.user, d.call.agent], axis=1)[16000 * 2:16000 * 2 + 1600], 16000)
    d.write(calls / "fine.wav")
    for name, needle in (("mono_dup.wav", "the same signal"), ("silent.wav", "both channels are silent"),
                         ("short.wav", "lasts 0.10 s, under 1 s: too short")):
        for cmd in (["score", "--judge", "none"], ["check"]):
            out = tmp_path / f"{name}.json"
            code = main([cmd[0], str(calls / name), *cmd[1:], "--json", str(out)])
            err = capsys.readouterr().err.strip().splitlines()
            assert code == 2 and any(needle in line and name in line for line in err), err
            assert not out.exists()
    outdir = tmp_path / "out"
    assert main(["score", str(calls), "--out-dir", str(outdir), "--judge", "none", "--asr", "off"]) == 1  # skipped ones
    summary = json.loads((outdir / "summary.json").read_text())
    rows = {r["file"].rsplit("/", 1)[-1]: r for r in summary["calls"]}
    assert rows["fine.wav"]["status"] == "ok" and summary["n_scored"] == 1
    assert rows["mono_dup.wav"]["status"] == "skipped" and "same signal" in rows["mono_dup.wav"]["reason"]
    assert rows["silent.wav"]["status"] == "skipped" and "silent" in rows["silent.wav"]["reason"]
    assert rows["short.wav"]["status"] == "skipped" and "too short" in rows["short.wav"]["reason"]


def test_a_file_of_more_than_two_channels_says_which_two_are_read(tmp_path):
    """A 3-channel recording was scored on channels 0 and 1 without a word (a new user's trial): the
    health check names the two read and the flags that choose others; a stereo file gets no such line."""
    import soundfile as sf

    from livejudge.audio import open_call
    from livejudge.timing.health import check_call

    d = example_dialogue(seed=1)
    three = np.stack([d.call.user, d.call.agent, np.zeros_like(d.call.user)], axis=1)
    sf.write(tmp_path / "three.wav", three, 16000)
    with open_call(tmp_path / "three.wav") as r:
        w = [x for x in check_call(r) if x.code == "extra_channels"]
    assert len(w) == 1 and w[0].value == 3.0
    assert "3 channels; only channel 0 (user) and 1 (agent) are read" in w[0].message and "(0–2)" in w[0].message
    d.write(tmp_path / "two.wav")
    with open_call(tmp_path / "two.wav") as r:
        assert not [x for x in check_call(r) if x.code == "extra_channels"]


def test_a_live_call_stopped_before_the_agent_spoke_does_not_blame_the_wire():
    """A demo stopped by Ctrl-C 4.5 s in, before the agent's first turn, was told "is the agent
    sending audio on this connection (--protocol, --in-rate)?" (a trial). A call stopped by hand
    before the live check was due now says the agent may not have had its turn yet; a call that
    ended otherwise keeps the wire question."""
    from livejudge.session import Session

    d = example_dialogue(seed=0)
    n = int(4.5 * 16000)
    for ended, words, info in (
            ("interrupted (Ctrl-C)", "before the call was stopped: it may not have had its turn yet", {"kind": "attach"}),
            ("script done", "is the agent sending audio", {"kind": "attach"}),
            # a Session built in Python: its own terms, not attach's flags (a trial read "--input-wav silent?")
            ("script done", 'is the agent\'s audio pushed to the "agent" channel (Session.push_audio)?', None),
            ("script done", 'is the agent\'s audio pushed to the "agent" channel (Session.push_audio)?',
             {"call": "mine"})):  # info of a Python user's own
        s = Session(info=info)
        s.info["ended"] = ended
        _push_live(s, d.call.user[:n], np.zeros(n, np.float32))
        got = s.close()["source"]["input_health"]
        assert [(w["code"], w["channel"]) for w in got] == [("silent_channel", "agent")]
        assert words in got[0]["message"], got[0]["message"]


def test_one_block_of_chance_correlation_is_no_echo_and_no_swap():
    """An 8 s built call without any leakage (room noise −47 dBFS, the agent 0.3 s after the
    caller) gave the reverse echo estimate a correlation of 0.50 over one 0.5 s block, and the
    swap check called its channels swapped (a trial). A detection now needs MIN_DETECT_BLOCKS."""
    from livejudge.testing.dialogues import DialogueBuilder
    from livejudge.timing.echo import MIN_DETECT_BLOCKS, estimate_echo_path

    b = DialogueBuilder(noise_dbfs=-47, noise_kind="room", seed=0)
    b.user("cmu_cards_005")
    b.agent("espeak_reply_01", gap_s=0.3)
    b.user("cmu_cards_002", barge_in_after_s=1.0, agent_yield_s=0.4)
    d = b.build()
    reverse = estimate_echo_path(d.call.agent, d.call.user)
    assert reverse.blocks < MIN_DETECT_BLOCKS and not reverse.detected
    assert check_input(d.call.user, d.call.agent) == []


def test_a_channel_with_sound_but_no_speech_says_so(tmp_path, capsys):
    """A file of noise (a trial's WAV with a random body) scored as a call with "n=0" and nothing
    to say why. A channel that is not silent but holds no VAD speech over at least
    NO_SPEECH_MIN_S now gets a no_speech warning (said, in the result, counted in
    input_health_warning_count); a channel with speech, or one already called silent, does not."""
    import soundfile as sf

    from livejudge.commands.cli import main
    from livejudge.timing.health import NO_SPEECH_MIN_S, no_speech_warnings

    rng = np.random.default_rng(0)
    d = example_dialogue(seed=0)
    noise = (0.1 * rng.standard_normal(len(d.call.user))).astype(np.float32)  # −20 dBFS white noise
    sf.write(tmp_path / "agent_noise.wav", np.stack([d.call.user, noise], 1), 16000, subtype="FLOAT")
    out = tmp_path / "r.json"
    assert main(["score", str(tmp_path / "agent_noise.wav"), "--judge", "none", "--asr", "off", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    codes = [(w["code"], w["channel"]) for w in doc["source"]["input_health"]]
    assert ("no_speech", "agent") in codes and ("no_speech", "user") not in codes
    assert doc["summary"]["input_health_warning_count"] == len(codes)
    assert "no speech was found on the agent channel" in capsys.readouterr().err
    # the clean call: no such warning
    d.write(tmp_path / "clean.wav")
    assert main(["score", str(tmp_path / "clean.wav"), "--judge", "none", "--asr", "off", "--json", str(out)]) == 0
    assert not [w for w in json.loads(out.read_text())["source"]["input_health"] if w["code"] == "no_speech"]
    # the pure rule: too short a call, or a channel already called silent, says nothing
    assert no_speech_warnings(set(), NO_SPEECH_MIN_S - 1, []) == []
    said = [{"code": "silent_channel", "channel": "agent"}]
    assert [w.channel for w in no_speech_warnings({"user"}, 40.0, said)] == []
    assert [w.channel for w in no_speech_warnings(set(), 40.0, said)] == ["user"]


@pytest.mark.parametrize("noise_dbfs,warned", [(-50.0, False), (-42.0, False), (-35.0, True), (-25.0, True)])
def test_a_noise_floor_louder_than_the_measured_range_is_a_warning(noise_dbfs, warned):
    """A trial added white noise to a call: at −30 dBFS a 0.70 s reply read 1.02 s, at −20 dBFS an
    espeak agent read P(human) 0.63, and no warning said the call was outside what was measured
    (timing error to −40 dBFS). A floor above NOISY_FLOOR_DBFS is now noisy_line, per channel."""
    from livejudge.timing.health import NOISY_FLOOR_DBFS

    d = example_dialogue(seed=0)
    rng = np.random.default_rng(3)
    n = (10 ** (noise_dbfs / 20) * rng.standard_normal(len(d.call.agent))).astype(np.float32)
    w = check_input(d.call.user, d.call.agent + n)
    noisy = [x for x in w if x.code == "noisy_line"]
    assert [x.channel for x in noisy] == (["agent"] if warned else [])
    if warned:
        assert abs(noisy[0].value - noise_dbfs) < 2.0 and noisy[0].value > NOISY_FLOOR_DBFS
        assert "timing error was measured on (to -40 dBFS" in noisy[0].message


@pytest.mark.parametrize("kind,noise_dbfs,warned", [
    ("babble", -50.0, False), ("babble", -46.0, False), ("babble", -40.0, True),
    ("white", -42.0, False), ("room", -42.0, False)])
def test_speech_like_noise_is_a_noisy_line_below_the_white_noise_threshold(kind, noise_dbfs, warned):
    """Babble at −40 dBFS RMS reads a floor of about −43 dBFS, under NOISY_FLOOR_DBFS, yet it
    already moved latencies (median error +26 ms, p95 468 ms, `benchmarks/vad_bounds.py --sets
    loud`) with no warning. A floor whose quiet frames fluctuate as speech does now warns from
    SPEECHLIKE_FLOOR_DBFS; white and room noise at the same level do not (their timing held)."""
    from livejudge.testing.dialogues import noise
    from livejudge.timing.health import NOISY_FLOOR_DBFS, SPEECHLIKE_FLOOR_DBFS

    d = example_dialogue(seed=0)
    rng = np.random.default_rng(5)
    n = len(d.call.user)
    w = check_input(d.call.user + noise(kind, n, noise_dbfs, rng), d.call.agent + noise(kind, n, noise_dbfs, rng))
    noisy = [x for x in w if x.code == "noisy_line"]
    assert [x.channel for x in noisy] == (["user", "agent"] if warned else []), [x.message for x in noisy]
    for x in noisy:
        assert SPEECHLIKE_FLOOR_DBFS < x.value <= NOISY_FLOOR_DBFS and x.threshold == SPEECHLIKE_FLOOR_DBFS
        assert "speech-like (babble or a television" in x.message and "--sets loud" in x.message


def test_a_telephone_band_call_gets_a_line_note_not_a_warning(tmp_path, capsys):
    """A trial scored the same call wideband and through an 8 kHz μ-law line: a 0.60 s reply read
    0.86 s on the line, flagged with "within timing error" false, and nothing said the line was
    narrowband. A channel with no speech above the telephone band now gets a note (stderr, the
    result's source.line, the event log, the report), not an input-health warning: the file is
    fine, and gates on input_health_warning_count must not fail every telephone call."""
    import soundfile as sf

    from livejudge.audio import resample
    from livejudge.commands.cli import main
    from livejudge.timing.health import NARROWBAND_HIGH_DB, check_line, high_band_db

    wide = example_dialogue(seed=0, noise_dbfs=-50.0)
    tel = example_dialogue(seed=0, noise_dbfs=-50.0, telephone_line=True, line_rate=8000)
    for x in (wide.call.user, wide.call.agent):
        assert high_band_db(x) > NARROWBAND_HIGH_DB + 10
    for x in (tel.call.user, tel.call.agent):
        assert high_band_db(x) < NARROWBAND_HIGH_DB - 10
    assert check_line(wide.call) is None and check_line(tel.call)["channels"] == ["user", "agent"]
    assert high_band_db(np.zeros(16000, np.float32)) is None
    # as a user has it: an 8 kHz file
    st = np.stack([resample(tel.call.user, 16000, 8000), resample(tel.call.agent, 16000, 8000)], axis=1)
    sf.write(str(tmp_path / "tel.wav"), st, 8000, subtype="PCM_16")
    wide.write(tmp_path / "wide.wav")
    for name, narrow in (("tel", True), ("wide", False)):
        out, rep, ev = tmp_path / f"{name}.json", tmp_path / f"{name}.html", tmp_path / f"{name}.jsonl"
        assert main(["score", str(tmp_path / f"{name}.wav"), "--judge", "none", "--asr", "off", "--json", str(out),
                     "--report", str(rep), "--events", str(ev)]) == 0
        err = capsys.readouterr().err
        doc = json.loads(out.read_text())
        line = doc["source"].get("line")
        said = [x for x in err.splitlines() if x.startswith("livejudge: note: the user and agent channels are narrowband")]
        assert (line is not None, len(said), "<b>Line:</b>" in rep.read_text(), '"line"' in ev.read_text()) == (
            (True, 1, True, True) if narrow else (False, 0, False, False))
        assert doc["summary"]["input_health_warning_count"] == 0
        # a gate metric of its own (a trial: a telephone call could not be gated on)
        assert doc["summary"]["narrowband_channel_count"] == (2 if narrow else 0)
        # each verdict carries the line, so within_timing_error uses the narrowband error (298 ms for
        # a latency, not the wideband 55 ms: a trial's 0.60 s reply read 0.86 s on a mu-law line)
        lat = [v for v in doc["verdicts"] if v["kind"] in ("latency", "barge_in")]
        assert lat and all(v.get("line", "wideband") == ("narrowband" if narrow else "wideband") for v in lat)
        if narrow:
            assert "docs/verdicts.md, the telephone table" in line["note"] and line["band"] == "narrowband"


@pytest.mark.parametrize("line,narrow", [(dict(noise_dbfs=-50.0, telephone_line=True, line_rate=8000), True),
                                         (dict(noise_dbfs=-50.0), False)])
def test_a_live_telephone_line_gets_the_line_note(line, narrow, capsys):
    """A trial attached over a μ-law line (--protocol twilio) and nothing said the line was
    narrowband, though score says it of the same call recorded. The live check now says it (once,
    on stderr, in the event log and the result's source.line), a wideband live call gets none."""
    from livejudge.session import Session

    d = example_dialogue(seed=0, **line)
    s = Session()
    _push_live(s, d.call.user, d.call.agent)
    doc = s.close()
    said = [x for x in capsys.readouterr().err.splitlines() if "narrowband" in x]
    if narrow:
        assert doc["source"]["line"]["channels"] == ["user", "agent"] and len(said) == 1
        assert [e for e in doc["framework_events"] if e["kind"] == "line"]
        assert doc["summary"]["narrowband_channel_count"] == 2
    else:
        assert doc["source"].get("line") is None and said == []
        assert doc["summary"]["narrowband_channel_count"] == 0  # checked and wideband, not "not checked"
    assert doc["source"]["input_health"] == []


def test_an_agent_over_a_telephone_line_keeps_the_wideband_error_on_latencies(tmp_path, capsys):
    """A trial's call: the caller recorded wideband, only the agent through an 8 kHz mu-law line (as
    attach --protocol twilio measures its own caller). Every latency read "inside the 298 ms p95
    timing error of a narrowband line" and the note said latencies read long, though they run from
    the caller's wideband end (measured within 10 ms). Latencies now keep the wideband error; the
    agent's yield times take the narrowband one; the note says which."""
    from livejudge.commands.cli import main

    wide = example_dialogue(seed=0, noise_dbfs=-50.0)
    tel = example_dialogue(seed=0, noise_dbfs=-50.0, telephone_line=True, line_rate=8000)
    mixed = tmp_path / "mixed.wav"
    import soundfile as sf

    n = min(len(wide.call.user), len(tel.call.agent))
    sf.write(str(mixed), np.stack([wide.call.user[:n], tel.call.agent[:n]], axis=1), 16000, subtype="PCM_16")
    out = tmp_path / "m.json"
    assert main(["score", str(mixed), "--judge", "none", "--asr", "off", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["source"]["line"]["channels"] == ["agent"]
    assert "the caller's side is wideband, so latencies keep the wideband timing error" in doc["source"]["line"]["note"]
    by_kind = {}
    for v in doc["verdicts"]:
        by_kind.setdefault(v["kind"], set()).add(v.get("line", "wideband"))
    assert by_kind["latency"] == {"wideband"} and by_kind.get("barge_in", {"narrowband"}) == {"narrowband"}


def test_a_call_that_starts_after_the_level_probe_is_scored_and_a_silent_one_refused(tmp_path, capsys):
    """A trial: a call after 125 s of silence was refused ("both channels are silent"), though
    100 s of lead silence scored: the level check read only the first ``LEVEL_PROBE_S`` (120 s).
    It now reads on to the first sound and checks from there; a file silent to its end is still
    refused. The call's latencies are those of the same call without the lead, 125 s later."""
    import soundfile as sf

    from livejudge.commands.cli import main
    from livejudge.timing.health import LEVEL_PROBE_S

    d = example_dialogue(seed=0)
    lead = int((LEVEL_PROBE_S + 5.0) * 16000)
    stereo = np.stack([d.call.user, d.call.agent], axis=1)
    late = np.concatenate([np.zeros((lead, 2), np.float32), stereo])
    sf.write(str(tmp_path / "late.wav"), late, 16000)
    d.write(tmp_path / "plain.wav")
    docs = {}
    for name in ("plain", "late"):
        out = tmp_path / f"{name}.json"
        assert main(["score", str(tmp_path / f"{name}.wav"), "--judge", "none", "--json", str(out)]) == 0, \
            capsys.readouterr().err
        docs[name] = json.loads(out.read_text())
    capsys.readouterr()
    lat = {k: [t["gap_s"] for t in doc["transitions"] if t["from"] == "user"] for k, doc in docs.items()}
    assert len(lat["late"]) == len(lat["plain"]) > 0
    assert np.allclose(lat["late"], lat["plain"], atol=0.01), lat
    # silent to its end (longer than the probe): refused, and said of the whole call
    sf.write(str(tmp_path / "silent.wav"), np.zeros((lead + 16000 * 20, 2), np.float32), 16000)
    assert main(["score", str(tmp_path / "silent.wav"), "--judge", "none"]) == 2
    assert "both channels are silent" in capsys.readouterr().err


def test_a_quiet_recording_is_warned():
    """A trial: a call recorded 25 dB under normal level read a 0.35 s reply as 2.37 s and lost a
    barge-in, with no warning (the VAD's gate never goes under -50 dBFS). Built from real clips:
    the example call turned down by 25 dB warns on both channels, by 15 dB on neither."""
    from livejudge.timing.health import QUIET_SPEECH_DBFS, speech_level_dbfs

    d = example_dialogue(seed=0)
    for gain_db, warned in ((-15.0, set()), (-25.0, {"user", "agent"})):
        g = np.float32(10 ** (gain_db / 20))
        ws = check_input(d.call.user * g, d.call.agent * g)
        assert {w.channel for w in ws if w.code == "quiet_channel"} == warned, [w.message for w in ws]
        for w in ws:
            if w.code == "quiet_channel":
                assert w.value < QUIET_SPEECH_DBFS and "normalise" in w.message
    # the level is the loud speech's, not the call's average: the same for a side that talks little
    assert abs(speech_level_dbfs(d.call.user) - speech_level_dbfs(d.call.user[: 16000 * 20])) < 3.0


def test_speech_too_faint_to_scale_is_named_not_only_called_silent():
    """Past the 30 dB gain cap a channel of speech read only as "silent" (the last note). Built
    from real clips: the example call's caller turned down by 48 dB (loudest frame near -56 dBFS)
    is still silent_channel, and the message says it may be faint speech and by how much to raise
    it; digital silence (no sound at all) gets no such hint."""
    d = example_dialogue(seed=0)
    g = np.float32(10 ** (-48 / 20))
    w = [w for w in check_input(d.call.user * g, d.call.agent) if w.code == "silent_channel"]
    assert [x.channel for x in w] == ["user"] and -60 < w[0].value < -50, w
    raise_db = float(w[0].message.split("raise its level by ")[1].split(" dB")[0])
    assert abs(raise_db - (-15.0 - w[0].value)) <= 1.0, w[0].message  # to the level scaling aims at
    zero = [w for w in check_input(np.zeros_like(d.call.user), d.call.agent) if w.code == "silent_channel"]
    assert len(zero) == 1 and "too quietly" not in zero[0].message
    # live, there is no recording to score again (a trial's Session was told to): raise the level
    live = [w for w in check_input(d.call.user * g, d.call.agent, live=True) if w.code == "silent_channel"]
    assert len(live) == 1 and "score it again" not in live[0].message, live
    assert live[0].message.endswith("it reaches livejudge too quietly to measure: raise its level"), live


def test_a_quiet_recording_is_scaled_up_and_measured_as_at_full_level(tmp_path, capsys):
    """The trial's quiet call, built from real clips: the example call turned down by 25 dB read a
    latency 170 ms off; score now scales each quiet channel up (``health.QUIET_TARGET_DBFS``),
    says so, records ``source.gain_db``, and measures the same latencies and barge-ins as at full
    level (within 10 ms)."""
    import soundfile as sf

    from livejudge.commands.cli import main

    d = example_dialogue(seed=0)
    g = np.float32(10 ** (-25 / 20))
    sf.write(str(tmp_path / "quiet.wav"), np.stack([d.call.user * g, d.call.agent * g], axis=1), 16000)
    d.write(tmp_path / "full.wav")
    docs = {}
    for name in ("full", "quiet"):
        out = tmp_path / f"{name}.json"
        assert main(["score", str(tmp_path / f"{name}.wav"), "--judge", "none", "--json", str(out)]) == 0
        docs[name] = json.loads(out.read_text())
    err = capsys.readouterr().err
    assert "the user channel is quiet" in err and "scaled up by 24." in err
    assert "gain_db" not in docs["full"]["source"]
    assert docs["quiet"]["source"]["gain_db"] == {"user": pytest.approx(24, abs=1), "agent": pytest.approx(25, abs=1)}
    lat = {k: [t["gap_s"] for t in doc["transitions"] if t["from"] == "user"] for k, doc in docs.items()}
    assert len(lat["quiet"]) == len(lat["full"]) and np.allclose(lat["quiet"], lat["full"], atol=0.01), lat
    bi = {k: [(b["onset_s"], b["yield_s"]) for b in doc["barge_ins"]] for k, doc in docs.items()}
    assert len(bi["quiet"]) == len(bi["full"])
    for (t0, y0), (t1, y1) in zip(bi["full"], bi["quiet"]):
        assert abs(t0 - t1) <= 0.01 and (y0 is None) == (y1 is None) and (y0 is None or abs(y0 - y1) <= 0.01)


def test_a_quiet_channels_noise_floor_is_checked_at_the_level_it_is_scaled_to():
    """A trial: a call 25 dB down with a -60 dBFS noise floor was scaled up 22 dB (its floor then
    near -38 dBFS) with no ``noisy_line``, and a 0.50 s reply read 0.96 s; the same call at full
    level warned. A recording's quiet channel is now checked at the level it will be scaled to,
    the level the floor thresholds were set at (a later trial: scaled to -20 dBFS, the example call
    25 dB down with a -60 dBFS floor read -41 dBFS, unwarned, where at full level it reads -35)."""
    from livejudge.timing.health import quiet_gain_db, speech_level_dbfs

    d = example_dialogue(seed=0)
    g = np.float32(10 ** (-25 / 20))
    rng = np.random.default_rng(3)
    u, a = (x * g + rng.standard_normal(x.size).astype(np.float32) * np.float32(10 ** (-60 / 20))
            for x in (d.call.user, d.call.agent))
    live = {w.channel for w in check_input(u, a) if w.code == "noisy_line"}
    rec = [w for w in check_input(u, a, scale_quiet=True) if w.code == "noisy_line"]
    assert live == set()  # as streamed live (not scaled), -60 dBFS is an ordinary floor
    assert {w.channel for w in rec} == {"user", "agent"}, [w.message for w in rec]
    gain = quiet_gain_db(speech_level_dbfs(u))
    assert 20 < gain < 30 and all("after scaling this quiet channel up" in w.message for w in rec)
    assert all(abs(w.value - (-60 + quiet_gain_db(speech_level_dbfs(x)))) < 2.0 for w, x in zip(
        sorted(rec, key=lambda w: w.channel), (a, u)))


def test_a_long_silent_tail_is_warned(tmp_path):
    """A trial's call followed by 59 minutes of zeros was scored without a word. Built from real
    clips: the example call with 75 s of silence after it gets one ``silent_tail`` warning naming
    where speech ends (within the VAD's offset of the call's last speech); with 30 s after it,
    none. The timing is the same either way."""
    import json

    import soundfile as sf

    from livejudge.commands.cli import main

    d = example_dialogue(seed=0)
    last = max(p.offset_s for p in d.truth.placed)
    docs = {}
    for tail_s in (30, 75):
        wav = tmp_path / f"tail{tail_s}.wav"
        z = np.zeros(16000 * tail_s, dtype=np.float32)
        sf.write(str(wav), np.stack([np.concatenate([d.call.user, z]), np.concatenate([d.call.agent, z])], axis=1), 16000)
        out = tmp_path / f"tail{tail_s}.json"
        assert main(["score", str(wav), "--judge", "none", "--json", str(out)]) == 0
        docs[tail_s] = json.loads(out.read_text())
    assert [w["code"] for w in docs[30]["source"]["input_health"]] == []
    w = [w for w in docs[75]["source"]["input_health"] if w["code"] == "silent_tail"]
    assert len(w) == 1 and docs[75]["summary"]["input_health_warning_count"] == 1
    ends = float(w[0]["message"].split("speech ends at ")[1].split(" s")[0])
    assert abs(ends - last) <= 0.5, (ends, last)
    assert docs[30]["summary"]["latency_p50_s"] == docs[75]["summary"]["latency_p50_s"]


def test_a_clean_tts_clip_is_not_called_a_noisy_line():
    """A trial's train/eval warned "background is speech-like (babble or a television)" on a clean
    espeak clip with digital silence at its ends: it is nearly all speech, so the 10th-percentile
    "floor" fell on its own quiet phonemes. A channel that drops to digital silence on at least
    ``CLEAN_SOURCE_SHARE`` of its frames has no floor to check; the same clip under continuous
    noise at -38 dBFS is still warned."""
    import soundfile as sf

    from livejudge.timing.health import CLEAN_SOURCE_SHARE

    x, rate = sf.read(str(Path(__file__).resolve().parents[1] / "livejudge/data/audio/machine/espeak_austen_0870.wav"),
                      dtype="float32")
    assert rate == 16000
    from livejudge.timing.health import _frame_rms

    db = 20 * np.log10(np.maximum(_frame_rms(x), 1e-6))
    assert CLEAN_SOURCE_SHARE <= float(np.mean(db < -90)) < 0.1  # the trial's clip: a few % of zeros
    assert [w.code for w in check_input(np.zeros_like(x), x)] == ["silent_channel"]
    noisy = x + np.random.default_rng(0).normal(0, 10 ** (-35 / 20), x.size).astype(np.float32)
    assert "noisy_line" in [w.code for w in check_input(np.zeros_like(x), noisy)]


def _int16(x):
    """As a 16-bit recorder stores it (what rounds under one step becomes exact zeros)."""
    return (np.round(np.clip(x, -1, 1) * 32767) / 32767).astype(np.float32)


def test_a_caller_whose_pauses_a_noise_gate_zeroes_is_not_called_swapped_with_confidence():
    """A trial zeroed the caller's channel between words (as client noise suppression or a noise
    gate does) and got "the channels are probably swapped; try --user-channel 1 --agent-channel 0",
    advice that inverted right numbers. The cue cannot tell such a caller from a zero-padded agent,
    so the warning now names that reading and asks the user to listen before swapping."""
    d = example_dialogue(seed=0)
    u = d.call.user.copy()
    frame = 480
    for i in range(0, u.size - frame, frame):  # a gate: every 30 ms frame under −50 dBFS set to zero
        if np.sqrt(np.mean(u[i:i + frame] ** 2)) < 10 ** (-50 / 20):
            u[i:i + frame] = 0.0
    (w,) = [x for x in check_input(u, d.call.agent) if x.code == "channel_swap"]
    assert "noise suppression zeroes the caller's pauses" in w.message
    assert "may be swapped; listen to the user channel, and if it holds the agent's voice" in w.message
    assert "probably swapped" not in w.message


def test_a_quiet_caller_is_not_read_as_a_swap():
    """A trial's caller channel 40 dB down (speech at −54 dBFS, stored as 16-bit) had its room noise
    rounded to zeros and was read as the zero-padded agent ("probably swapped"); after the zeros
    cue was limited, its low floor set off the noise-floor cue instead. A quiet channel's zeros and
    floor say nothing of the order: no channel_swap (the quiet-channel warning still stands)."""
    d = example_dialogue(seed=0)
    w = check_input(_int16(d.call.user * 0.01), _int16(d.call.agent))
    assert "channel_swap" not in [x.code for x in w] and "quiet_channel" in [x.code for x in w], w


def test_a_caller_file_that_stops_early_is_not_read_as_a_zero_padded_agent():
    """Trial K: `--user` and `--agent` files of different lengths (the caller's 18 s shorter),
    padded with zeros to the longer, read "the user channel is digital silence between its speech
    (42 % of frames) … swap the two files", and so did a stereo file whose caller channel stops
    early. Zeros before a channel's first sound or after its last are not between its speech: no
    channel_swap. Zeros between the words (a noise gate) still give the listen-first warning."""
    d = example_dialogue(seed=0)
    u = d.call.user.copy()
    stop = int(u.size * 0.55)
    u[stop:] = 0.0  # the caller's side ends early; what follows is padding
    assert "channel_swap" not in [w.code for w in check_input(u, d.call.agent)]
    late = d.call.user.copy()
    late[: int(late.size * 0.3)] = 0.0  # or starts late
    assert "channel_swap" not in [w.code for w in check_input(late, d.call.agent)]
    gated = u.copy()
    for i in range(0, stop - 480, 480):  # zeros between its words too: the noise-gate reading stands
        if np.sqrt(np.mean(gated[i:i + 480] ** 2)) < 10 ** (-50 / 20):
            gated[i:i + 480] = 0.0
    assert "channel_swap" in [w.code for w in check_input(gated, d.call.agent)]


def test_a_short_fragment_of_speech_at_a_normal_level_is_not_quiet():
    """Trial K: a recording that starts 0.34 s before the caller's phrase ends read "the user channel
    is quiet (loudest 2 s at −33 dBFS)" and was scaled up 17.7 dB: the loudest 2 s of frames held
    1.7 s of silence. The level is now read off the frames near its loudest, so a fragment of speech
    reads its own level; a channel of quiet speech is still warned, also beside a click 30 dB louder."""
    from livejudge.testing.dialogues import load_clip, trim
    from livejudge.timing.health import QUIET_SPEECH_DBFS, speech_level_dbfs

    clip = trim(load_clip("cmu_cards_005"))
    part = clip[clip.size // 2: clip.size // 2 + int(0.34 * 16000)]  # 0.34 s of the phrase
    frag = np.zeros(16000 * 6, np.float32)
    frag[: part.size] = part  # then silence
    assert speech_level_dbfs(part) > QUIET_SPEECH_DBFS
    assert abs(speech_level_dbfs(frag) - speech_level_dbfs(part)) < 1.0  # its own level, not diluted
    d = example_dialogue(seed=0)
    assert "quiet_channel" not in [w.code for w in check_input(frag, d.call.agent[: frag.size])]
    quiet = (d.call.user * np.float32(10 ** (-25 / 20))).copy()
    quiet[16000 * 5] = 0.9  # a click far above the speech does not set its level
    quiet[16000 * 5 + 1] = -0.9
    assert speech_level_dbfs(quiet) < QUIET_SPEECH_DBFS
    assert "quiet_channel" in [w.code for w in check_input(quiet, d.call.agent)]
