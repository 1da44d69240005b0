"""One notion of a flagged moment: a reply after dead air gives two verdicts of one silence
(``dead_air`` from the caller's end, ``latency`` at the reply, same value); the HTML report, the
rich meter, ``livejudge check`` and the summary's ``verdict_flagged_moment_count`` count it once,
while ``verdict_flagged_count`` keeps counting verdicts.

The calls are built from real clips with a known timeline (``DialogueBuilder``), as
tests/test_report_html.py::test_one_long_gap_is_flagged_once builds its one long gap.
"""

from __future__ import annotations

import json

import pytest

from livejudge.commands.check import moment_lines
from livejudge.commands.cli import main
from livejudge.outputs.meter import render_text, verdicts_row
from livejudge.session import Session, SessionConfig, stream_call
from livejudge.testing.dialogues import DialogueBuilder
from livejudge.timing.verdicts import (
    SAME_SILENCE_TOLERANCE_S,
    Verdict,
    flagged_moments,
    metric_names,
    moment_groups,
    moments,
    summarize_verdicts,
)


def _gap_dialogue(gaps_s: tuple[float, ...]):
    """The caller and the agent take turns; the agent's replies come after ``gaps_s`` (a gap
    over 2 s is dead air on the agent's side and a slow latency: two flagged verdicts)."""
    b = DialogueBuilder(seed=3)
    b.user("cmu_cards_001")
    b.agent("espeak_reply_02", gap_s=0.4)
    for k, g in enumerate(gaps_s):
        b.user(f"cmu_cards_00{k + 2}", gap_s=0.3)
        b.agent(f"espeak_reply_0{k + 3}", gap_s=g)
    return b.build()


def _session(gaps_s):
    d = _gap_dialogue(gaps_s)
    s = Session(SessionConfig())  # timing only: verdicts need no judge
    stream_call(s, d.call)
    return s, s.close()


@pytest.fixture(scope="module")
def one_gap():
    return _session((2.5,))


@pytest.fixture(scope="module")
def two_gaps():
    return _session((2.5, 2.6))


# ------------------------------------------------------------------------------ the rule (pure)
def _lat(t, g, outcome="s2s"):
    return Verdict("latency", outcome, outcome in ("human", "early"), t, g, t + 1.0)


def _dead(t, s, outcome="agent_silent"):
    return Verdict("dead_air", outcome, outcome == "caller_silent", t, s, t + s)


def test_a_reply_after_dead_air_is_one_moment_under_its_latency():
    vs = [_lat(1.0, 0.3, "human"), _dead(5.0, 2.5), _lat(7.5, 2.5),
          Verdict("barge_in", "yielded", True, 9.0, 0.4, 10.0)]
    assert moment_groups(vs) == [(0,), (2, 1), (3,)]
    assert moments(vs) == [(vs[0],), (vs[2], vs[1]), (vs[3],)]
    assert flagged_moments(vs) == [(vs[2], vs[1])]


def test_same_silence_is_decided_within_the_stated_tolerance():
    tol = SAME_SILENCE_TOLERANCE_S
    assert tol == 1e-3
    # the result rounds to 0.1 ms: a dead air ending 0.4 ms from the reply is the same silence
    assert moment_groups([_dead(5.0, 2.5), _lat(7.5004, 2.5004)]) == [(1, 0)]
    # a reply 0.002 s off, or a value that disagrees by more than the tolerance: two moments
    assert moment_groups([_dead(5.0, 2.5), _lat(7.502, 2.5)]) == [(0,), (1,)]
    assert moment_groups([_dead(5.0, 2.5), _lat(7.5, 2.3)]) == [(0,), (1,)]
    # a talk-over pairs only with a negative latency at its onset: after dead air it stays its own moment
    assert moment_groups([_dead(5.0, 2.5), Verdict("talk_over", "talk_over", False, 7.5, 2.5, 9.0)]) == [(0,), (1,)]
    # a latency takes one dead air at most; records without a value join nothing
    assert moment_groups([_dead(5.0, 2.5), _dead(5.0, 2.5), _lat(7.5, 2.5)]) == [(1,), (2, 0)]
    assert moment_groups([]) == []


def _over(t, both_s, outcome="talk_over"):
    return Verdict("talk_over", outcome, outcome == "early_start", t, both_s, t + both_s)


def test_a_start_over_the_caller_is_one_moment_under_its_latency():
    """A new user's trial: rude's one start 1.76 s over the caller was two flagged moments
    ("latency -1.76 s" and "talked over the caller"). Its latency (negative) and its talk-over
    share the agent's onset: one moment, within the same 0.001 s."""
    vs = [_lat(10.0, -1.76, "overlapped"), _over(10.0, 1.76), _lat(20.0, 0.3, "human")]
    assert moment_groups(vs) == [(0, 1), (2,)]
    assert flagged_moments(vs) == [(vs[0], vs[1])]
    sm = summarize_verdicts(vs)
    assert (sm["verdict_flagged_count"], sm["verdict_flagged_moment_count"]) == (2, 1)
    # an early start (ok both ways) is one moment too, and not flagged
    assert moment_groups([_lat(3.0, -0.3, "early"), _over(3.0004, 0.3, "early_start")]) == [(0, 1)]
    # another onset (0.002 s off), or a latency that is not negative: two moments
    assert moment_groups([_lat(10.0, -1.76, "overlapped"), _over(10.002, 1.76)]) == [(0,), (1,)]
    assert moment_groups([_lat(10.0, 0.2, "human"), _over(10.0, 1.0)]) == [(0,), (1,)]
    # a latency takes one talk-over at most
    assert moment_groups([_over(10.0, 1.0), _over(10.0, 1.0), _lat(10.0, -1.0, "overlapped")]) == [(1,), (2, 0)]
    from livejudge.timing.verdicts import joined_text

    assert joined_text("talk_over", "talk_over", 1.76, 0.6, False) == " · the same start talks over the caller for 1.76 s [FLAG]"


def test_a_reply_after_yielding_is_one_moment_with_its_restart():
    """A new user's trial: one 1.77 s silence was listed twice, "after yielding: agent waited for
    the caller [ok]" (at the barge-in) and "latency 1.77 s: slower than human [FLAG]" (at the reply).
    The restart's value is the reply's latency: one moment, the latency's text first."""
    from livejudge.timing.verdicts import joined_text

    restart = Verdict("restart", "waited", True, 28.6, 1.77, 31.5)
    vs = [Verdict("barge_in", "yielded", True, 28.6, 0.4, 29.5), restart, _lat(31.5, 1.77)]
    assert moment_groups(vs) == [(0,), (2, 1)]
    assert flagged_moments(vs) == [(vs[2], vs[1])]
    # with dead air before that reply too: one moment of three verdicts
    vs2 = vs + [_dead(29.7, 1.8)]
    vs2[2] = _lat(31.5, 1.8)
    vs2[1] = Verdict("restart", "waited", True, 28.6, 1.8, 31.5)
    assert moment_groups(vs2) == [(0,), (2, 3, 1)]
    # a restart whose next latency disagrees, or is negative (it restarted over the caller): apart
    assert moment_groups([restart, _lat(31.5, 1.5)]) == [(0,), (1,)]
    assert moment_groups([Verdict("restart", "restarted", False, 28.6, 0.3, 29.0),
                          _lat(29.0, -0.8, "overlapped")]) == [(0,), (1,)]
    assert joined_text("restart", "waited", 1.77, None, True) == " · after yielding, it waited for the caller to finish [ok]"


def test_summary_counts_verdicts_and_moments_apart():
    vs = [_dead(5.0, 2.5), _lat(7.5, 2.5), _dead(12.0, 3.0), _lat(15.0, 3.0), _lat(20.0, 0.3, "human")]
    sm = summarize_verdicts(vs)
    assert (sm["verdict_count"], sm["verdict_flagged_count"]) == (5, 4)
    assert (sm["verdict_moment_count"], sm["verdict_flagged_moment_count"]) == (3, 2)
    assert set(sm) == set(metric_names())


def test_meter_row_counts_moments_and_fits_its_column():
    vs = [_dead(5.0, 2.5), _lat(7.5, 2.5), _lat(20.0, 0.3, "human")]
    assert verdicts_row(vs, 0, 39) == "flagged moments: 1 (2 verdicts) of 2"
    assert verdicts_row(vs[2:], 0, 39) == "flagged moments: 0 of 1"
    assert verdicts_row(vs, 1, 39) == "flagged moments: 1 of 2 · 1 pending"  # the bracket goes first
    assert len(verdicts_row(vs * 400, 120, 39)) <= 39


# ------------------------------------------------------------------------------ built calls
def test_one_long_gap_is_one_flagged_moment_everywhere(one_gap, tmp_path, capsys):
    s, r = one_gap
    flagged = [v for v in r["verdicts"] if not v["ok"]]
    assert sorted((v["kind"], v["outcome"]) for v in flagged) == [("dead_air", "agent_silent"), ("latency", "s2s")]
    sm = r["summary"]
    assert sm["verdict_flagged_count"] == 2 and sm["verdict_flagged_moment_count"] == 1
    assert sm["verdict_moment_count"] == sm["verdict_count"] - 1
    # the meter (80x24) says one moment of two verdicts
    text = render_text(s, "replay gap.wav")
    lines = text.rstrip("\n").split("\n")
    assert len(lines) <= 24 and max(map(len, lines)) <= 80
    assert f"flagged moments: 1 (2 verdicts) of {sm['verdict_moment_count']}" in text
    # check's list: one line for the gap, numbered with both verdicts
    doc = tmp_path / "gap.json"
    doc.write_text(json.dumps(r))
    assert main(["check", str(doc)]) == 0
    out, err = capsys.readouterr()
    red = [line for line in out.splitlines() if "[FLAG]" in line]
    nums = sorted(i for i, v in enumerate(r["verdicts"]) if not v["ok"])
    # numbered in the order the line reads: the latency's verdict first, then its dead air's
    lat = next(i for i in nums if r["verdicts"][i]["kind"] == "latency")
    dead = next(i for i in nums if r["verdicts"][i]["kind"] == "dead_air")
    assert len(red) == 1 and red[0].split()[0] == f"{lat},{dead}" and "dead air" in red[0]
    assert red[0].split()[1] + " " + red[0].split()[2] == f"{r['verdicts'][lat]['t_s']:.1f} latency"
    assert len(out.splitlines()) == sm["verdict_moment_count"]
    assert f"{sm['verdict_moment_count']} moments, 1 flagged ({sm['verdict_count']} verdicts, 2 flagged" in err
    # --event N keeps its meaning: N indexes the result's verdicts (a latency cannot be pinned)
    assert main(["check", "--pin-from", str(doc), "--event", str(nums[0])]) == 2
    assert f"verdict {nums[0]} is a " in capsys.readouterr().err


def test_two_separate_silences_are_two_moments(two_gaps):
    s, r = two_gaps
    sm = r["summary"]
    assert sm["verdict_flagged_count"] == 4 and sm["verdict_flagged_moment_count"] == 2
    assert [sorted(v.kind for v in m) for m in flagged_moments(s.verdicts)] == [["dead_air", "latency"]] * 2
    text = render_text(s, "replay gaps.wav")
    assert f"flagged moments: 2 (4 verdicts) of {sm['verdict_moment_count']}" in text
    assert sum("[FLAG]" in line for line in moment_lines(s.verdicts)) == 2


def test_a_long_talk_over_is_one_flagged_moment_in_a_built_call(tmp_path, capsys):
    """A call whose agent starts 1.5 s before the caller's turn ends: its negative latency and its
    talk-over are one flagged moment in the summary, the meter and check's list."""
    b = DialogueBuilder(seed=3)
    b.user("cmu_cards_001")
    b.agent("espeak_reply_02", gap_s=0.4)
    b.user("librivox_austen_0890", gap_s=0.3)  # 5.3 s: the agent starts 3.8 s into it
    b.agent("espeak_reply_03", gap_s=-1.5)
    d = b.build()
    truth = [t for t in d.truth.transitions if t.is_response]
    assert abs(truth[-1].gap_s + 1.5) < 0.05  # the built start, 1.5 s over the caller
    s = Session(SessionConfig())
    stream_call(s, d.call)
    r = s.close()
    over = [(i, v) for i, v in enumerate(r["verdicts"]) if v["kind"] == "talk_over"]
    lat = [(i, v) for i, v in enumerate(r["verdicts"]) if v["kind"] == "latency" and v["value_s"] < 0]
    assert len(over) == 1 and len(lat) == 1 and not over[0][1]["ok"] and not lat[0][1]["ok"]
    assert abs(lat[0][1]["value_s"] + 1.5) < 0.1  # measured against the truth within 0.1 s
    sm = r["summary"]
    assert sm["verdict_flagged_moment_count"] == sm["verdict_flagged_count"] - 1
    doc = tmp_path / "over.json"
    doc.write_text(json.dumps(r))
    assert main(["check", str(doc)]) == 0
    out, _ = capsys.readouterr()
    line = next(x for x in out.splitlines() if "the same start talks over the caller" in x)
    assert line.split()[0] == ",".join(str(i) for i in sorted([lat[0][0], over[0][0]]))  # both verdicts' numbers
    assert sum("talked over the caller" in x or "the same start talks over" in x for x in out.splitlines()) == 1


def test_a_start_in_the_callers_pause_is_one_moment_with_its_latency():
    """A cut-in gave "caller paused 0.32 s: agent cut in [FLAG]" and "latency 0.31 s: human band
    [ok]" at the same start (a new user's trial: the "ok" read as praise). The pause ends at the
    agent's onset and lasts the gap: one flagged moment, as dead air and its reply."""
    from livejudge.timing.verdicts import joined_text

    cut = Verdict("pause", "cut_in", False, 9.0, 0.32, 10.32)
    vs = [cut, _lat(9.32, 0.32, "human"), Verdict("barge_in", "slow_yield", False, 9.9, 1.0, 11.0)]
    assert moment_groups(vs) == [(1, 0), (2,)]  # the caller's barge-in that follows stays apart
    assert flagged_moments(vs) == [(vs[1], vs[0]), (vs[2],)]
    # a pause the agent waited out ends when the caller resumes: no latency there, no join
    waited = Verdict("pause", "waited", True, 30.0, 0.8, 30.8)
    assert moment_groups([waited, _lat(33.0, 0.4, "human")]) == [(0,), (1,)]
    # a long silence the agent cut into: dead air and the pause both join the one latency
    assert moment_groups([_dead(5.0, 2.5), Verdict("pause", "cut_in", False, 5.0, 2.5, 8.0), _lat(7.5, 2.5)]) == [(2, 0, 1)]
    assert joined_text("pause", "cut_in", 0.32, 1.0, False) == " · the same start cut into the caller's pause (0.32 s into it) [FLAG]"


def test_end_of_call_line_names_talked_through_barge_ins_and_flagged_moments(capsys):
    """A rude agent's end-of-call line read "latency p50 0.32s · barge-ins by the user 5, agent
    talk-overs 1": fast, one talk-over; the 3 barge-ins it talked through and its 9 flagged moments
    of 12 were only on the meter (a new user's trial). The line now carries both; a call with no
    talked-through barge-in adds nothing."""
    from livejudge.commands.runner import print_summary

    sm = {"latency_p50_s": 0.32, "latency_p90_s": 1.23, "latency_count": 5, "barge_in_count": 5,
          "user_barge_in_count": 5, "agent_talk_over_count": 1, "backchannel_count": 2, "mean_p_human": 0.02,
          "judged_windows": 4, "dropped_windows": 0, "verdict_barge_in_talked_through_count": 3,
          "verdict_moment_count": 12, "verdict_flagged_moment_count": 9, "no_evidence_windows": 1}
    print_summary({"duration_s": 48.1, "summary": sm})
    err = capsys.readouterr().err
    assert "windows 4 judged (1 without evidence), 0 dropped" in err, err  # as the report's card says
    assert "barge-ins by the user 5 (talked through 3), agent talk-overs 1 · flagged moments 9/12 ·" in err, err
    print_summary({"duration_s": 48.1, "summary": {**sm, "verdict_barge_in_talked_through_count": 0}})
    assert "barge-ins by the user 5, agent talk-overs 1 · flagged moments 9/12 ·" in capsys.readouterr().err
