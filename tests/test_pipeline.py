"""End to end on dialogues built from real clips with a known timeline.

Tolerances (stated): each measured bound within one 30 ms VAD frame + 20 ms of the truth at
16 kHz and above, + 40 ms at 8 kHz (telephone band-limits the onsets of fricatives); gaps,
latencies, overlaps and yield times are differences of two bounds, so within a frame + 40 ms
(+ 60 ms at 8 kHz).
"""

import json

import pytest

from livejudge.commands.cli import main
from livejudge.session import Session, SessionConfig, snapshot_of_call, stream_call
from livejudge.testing.dialogues import example_dialogue

FRAME_S = 0.030


def _tols(rate):
    extra = 0.04 if rate == 8000 else 0.0
    return FRAME_S + 0.020 + extra, FRAME_S + 0.040 + extra


def _check(result, truth, rate):
    tol_bound, tol_diff = _tols(rate)
    mt = result["transitions"]
    assert [(t["from"], t["to"]) for t in mt] == [(t.from_channel, t.to_channel) for t in truth.transitions]
    for m, t in zip(mt, truth.transitions):
        assert m["from_offset_s"] == pytest.approx(t.from_offset_s, abs=tol_bound)
        assert m["to_onset_s"] == pytest.approx(t.to_onset_s, abs=tol_bound)
        assert m["gap_s"] == pytest.approx(t.gap_s, abs=tol_diff)
    mb = result["barge_ins"]
    assert [(b["by"], b["yield_s"] is None) for b in mb] == [(b.by, b.yield_s is None) for b in truth.barge_ins]
    for m, t in zip(mb, truth.barge_ins):
        assert m["onset_s"] == pytest.approx(t.onset_s, abs=tol_bound)
        if t.yield_s is not None:
            assert m["yield_s"] == pytest.approx(t.yield_s, abs=tol_diff)
    bc = result["backchannels"]
    assert [(b["channel"]) for b in bc] == [b.channel for b in truth.backchannels]
    for m, t in zip(bc, truth.backchannels):
        assert m["onset_s"] == pytest.approx(t.onset_s, abs=tol_bound)
    lat = [t.gap_s for t in truth.transitions if t.is_response]
    assert result["summary"]["latency_count"] == len(lat)
    # overlap: every truth overlap of turns appears with the right length
    truth_over = sorted(-t.gap_s for t in truth.transitions if t.gap_s < 0)
    meas_over = sorted(-t["gap_s"] for t in mt if t["gap_s"] < 0)
    assert meas_over == pytest.approx(truth_over, abs=tol_diff)


@pytest.mark.parametrize("rate", [8000, 16000, 44100, 48000])
@pytest.mark.parametrize("user_channel", [0, 1])
def test_score_cli_matches_truth_at_each_rate_and_channel_order(tmp_path, rate, user_channel):
    d = example_dialogue(seed=rate % 7, machine_agent=(user_channel == 0))
    wav = d.write(tmp_path / "call.wav", rate, user_channel)
    out = tmp_path / "r.json"
    code = main(["score", str(wav), "--judge", "none", "--json", str(out),
                 "--user-channel", str(user_channel), "--agent-channel", str(1 - user_channel)])
    assert code == 0
    result = json.loads(out.read_text())
    assert result["sample_rate_in"] == rate
    assert result["channels"] == {"user": user_channel, "agent": 1 - user_channel}
    assert result["duration_s"] == pytest.approx(d.call.duration_s, abs=0.05)
    _check(result, d.truth, rate)


def test_two_mono_files(tmp_path):
    import soundfile as sf

    d = example_dialogue(seed=5)
    sf.write(tmp_path / "u.wav", d.call.user, 16000)
    sf.write(tmp_path / "a.wav", d.call.agent, 16000)
    out = tmp_path / "r.json"
    assert main(["score", "--user", str(tmp_path / "u.wav"), "--agent", str(tmp_path / "a.wav"),
                 "--judge", "none", "--json", str(out)]) == 0
    _check(json.loads(out.read_text()), d.truth, 16000)


def test_streaming_session_in_odd_chunks_matches_whole_call_analysis():
    d = example_dialogue(seed=2)
    s = Session(SessionConfig())
    stream_call(s, d.call, chunk_s=0.037)  # chunks that do not line up with VAD frames
    live = s.close()
    _check(live, d.truth, 16000)
    whole = snapshot_of_call(d.call)
    assert [(t.channel, t.onset_s, t.offset_s) for t in whole.turns] == [
        (t["channel"], t["onset_s"], t["offset_s"]) for t in live["turns"]]


def test_result_document_has_the_documented_keys(tmp_path):
    d = example_dialogue(seed=4)
    wav = d.write(tmp_path / "c.wav")
    out = tmp_path / "r.json"
    assert main(["score", str(wav), "--json", str(out), "--interval-s", "5"]) == 0
    r = json.loads(out.read_text())
    for key in ("duration_s", "sample_rate_in", "channels", "segments", "turns", "transitions", "barge_ins",
                "backchannels", "judge", "summary", "judge_info"):
        assert key in r
    for key in ("latency_count", "latency_mean_s", "latency_p50_s", "latency_p90_s", "barge_in_count",
                "yield_mean_s", "overlap_ratio", "backchannel_count", "talk_ratio", "mean_p_human",
                "dropped_windows"):
        assert key in r["summary"]
    # every window of the call was judged in score mode (none dropped), each with 18 dimensions
    assert r["summary"]["dropped_windows"] == 0
    assert len(r["judge"]) == int(d.call.duration_s // 5) + 1
    assert all(len(j["dimensions"]) == 18 for j in r["judge"])
    # null only for windows without evidence: every dimension gated, or the ungated ones carrying
    # under MIN_EVIDENCE_SHARE of the classifier's weight
    from livejudge.events import MIN_EVIDENCE_SHARE

    for j in r["judge"]:
        gated_all = all(d["gated"] for d in j["dimensions"].values())
        no_evidence = gated_all or j["evidence_share"] < MIN_EVIDENCE_SHARE
        assert (j["p_human"] is None) == no_evidence == j["no_evidence"]  # always present, a bool
        assert 0.0 <= j["evidence_share"] <= 1.0 and (not gated_all or j["evidence_share"] == 0.0)
        assert j["p_human"] is None or 0.0 <= j["p_human"] <= 1.0
    with_p = [j["p_human"] for j in r["judge"] if j["p_human"] is not None]
    assert with_p and r["summary"]["mean_p_human"] == pytest.approx(sum(with_p) / len(with_p), abs=1e-3)
    assert r["judge_info"]["provenance"] in ("prior", "trained")


def test_replay_at_max_speed_judges_every_window_like_score(tmp_path, capsys):
    d = example_dialogue(seed=6)
    wav = d.write(tmp_path / "c.wav")
    outs = {}
    for cmd in (["replay", "--speed", "max", "--display", "none"], ["score"]):
        out = tmp_path / f"{cmd[0]}.json"
        assert main([*cmd, str(wav), "--json", str(out), "--interval-s", "5", "--asr", "off"]) == 0
        outs[cmd[0]] = json.loads(out.read_text())
    assert outs["replay"]["summary"]["dropped_windows"] == 0
    assert [j["window_end_s"] for j in outs["replay"]["judge"]] == [j["window_end_s"] for j in outs["score"]["judge"]]
    err = capsys.readouterr().err
    assert err.count("latency p50") == 2  # both print the one-line summary on stderr
    # the result (and the meter's title) names the command run: replay --speed max said "score" (a trial)
    assert outs["replay"]["source"]["kind"] == "replay" and outs["score"]["source"]["kind"] == "score"


def test_usage_errors_are_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["replay", "x.wav", "--speed", "fast"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--speed must be a number or 'max'" in err[0] and "--help" in err[0]
