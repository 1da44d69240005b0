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
    # only dead air and latency pair: a talk-over at the same time stays its own moment
    assert moment_groups([_dead(5.0, 2.5), Verdict("talk_over", "talk_over", False, 7.5, 2.5, 9.0)]) == [(0,), (1,)]
    # a latency takes one dead air at most; records without a value join nothing
    assert moment_groups([_dead(5.0, 2.5), _dead(5.0, 2.5), _lat(7.5, 2.5)]) == [(1,), (2, 0)]
    assert moment_groups([]) == []


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
    assert len(red) == 1 and red[0].split()[0] == ",".join(map(str, nums)) and "dead air" in red[0]
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
