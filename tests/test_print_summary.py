"""The end-of-call summary on stderr (``runner.print_summary``): whose backchannels, and where the
validity line's shorthand is explained (a new user's trial: "sealed split", "final run 5" and
"people (in its training)" were unexplained in the terminal)."""

from __future__ import annotations

from livejudge.commands.runner import VALIDITY_HELP, print_summary


def _result(**summary):
    sm = {"latency_p50_s": 0.7, "latency_p90_s": 1.9, "latency_count": 5, "barge_in_count": 2,
          "user_barge_in_count": 2, "agent_talk_over_count": 0, "agent_early_start_count": 1,
          "backchannel_count": 3, "mean_p_human": 0.2, "judged_windows": 10, "dropped_windows": 0}
    sm.update(summary)
    return {"duration_s": 43.5, "summary": sm,
            "judge_info": {"head": "whisper-fitted", "summary": "whisper-fitted 0.3.0 (trained)",
                           "validated": "validity: NOT valid in the wild: x. Sealed split: y"}}


def test_summary_names_whose_backchannels_and_points_to_the_validity_help(capsys):
    print_summary(_result(user_backchannel_count=2, agent_backchannel_count=1))
    err = capsys.readouterr().err.splitlines()
    assert "· backchannels user 2, agent 1 ·" in err[0]
    # the validity claim first: what a glance at the first 80 columns reads (a new user's trial)
    assert err[1] == ("livejudge: validity: NOT valid in the wild: x. Sealed split: y "
                      f"(judge whisper-fitted 0.3.0 (trained); how to read it: {VALIDITY_HELP})")
    assert "Reading the validity line" in VALIDITY_HELP


def test_on_a_terminal_the_validity_line_wraps_to_its_width(monkeypatch):
    import io

    from livejudge.commands import runner

    class Tty(io.StringIO):
        def isatty(self):
            return True

    ji = _result()["judge_info"]
    ji["validated"] = "validity: NOT valid in the wild: " + "ROC-AUC 0.78 wideband, people 0.69; " * 8
    monkeypatch.setattr("shutil.get_terminal_size", lambda fallback=(80, 24): __import__("os").terminal_size((80, 24)))
    out = Tty()
    runner.print_validity(ji, file=out)
    lines = out.getvalue().splitlines()
    assert len(lines) > 3 and all(len(x) <= 80 for x in lines)
    assert lines[0].startswith("livejudge: validity: NOT valid in the wild") and lines[1].startswith("  ")
    piped = io.StringIO()  # a log or a pipe: one line, as before
    runner.print_validity(ji, file=piped)
    assert len(piped.getvalue().splitlines()) == 1


def test_an_older_result_without_per_channel_counts_shows_the_total(capsys):
    print_summary(_result())
    assert "· backchannels 3 ·" in capsys.readouterr().err


def test_on_a_terminal_the_summary_line_wraps_too_and_stays_one_line_in_a_pipe(monkeypatch):
    import io

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr("shutil.get_terminal_size", lambda fallback=(80, 24): __import__("os").terminal_size((80, 24)))
    for stream, tty in ((Tty(), True), (io.StringIO(), False)):
        monkeypatch.setattr("sys.stderr", stream)
        print_summary(_result())
        lines = stream.getvalue().splitlines()
        starts = [i for i, x in enumerate(lines) if x.startswith("livejudge: ")]  # the summary, the validity line
        assert len(starts) == 2 and "latency p50" in lines[0] and "mean P(human)" in " ".join(lines[:starts[1]])
        if tty:  # the summary alone spans several lines, none past column 80
            assert starts[1] > 1 and all(len(x) <= 80 for x in lines)
        else:
            assert starts[1] == 1 and lines[0].endswith("dropped")  # the whole summary on one line


def test_after_the_rich_meter_the_validity_line_is_not_printed_twice(capsys):
    """The meter's last frame ends with the validity line; the summary then points to it in one line
    (a new user's trial counted 20 lines of the same text on a 24-line screen)."""
    result = _result()
    print_summary(result, validity=False)
    err = capsys.readouterr().err
    assert result["judge_info"]["validated"] not in err
    assert "its validity line is the meter's last lines above (judge whisper-fitted 0.3.0 (trained)" in err
    assert VALIDITY_HELP in err


def test_windows_a_judge_service_never_judged_are_said_with_how_to_gate_them(capsys):
    """A new user's trial killed the judge service 8 s into a replay: the line said "mean P(human)
    0.00 · windows 6 judged (5 without evidence), 0 dropped", that mean from 1 window, and the 16
    windows never judged were only in judge_info. The line now counts them, says how many windows
    the mean is over, and names the gate."""
    print_summary(_result(mean_p_human=0.0, judged_windows=6, no_evidence_windows=5, judge_unavailable_windows=16))
    line = capsys.readouterr().err.splitlines()[0]
    assert ("mean P(human) 0.00 (from 1 window; most were not judged, so a --fail-if on P(human) fails) · windows 6 "
            "judged (5 without evidence), 16 not judged (judge service unavailable; gate it with --fail-if "
            "'judge_unavailable_windows>0'), 0 dropped") in line
    # a short outage: the mean is still a measurement, and says what it is over
    print_summary(_result(judged_windows=20, no_evidence_windows=2, judge_unavailable_windows=2))
    line = capsys.readouterr().err.splitlines()[0]
    assert "mean P(human) 0.20 (from 18 windows) · windows 20 judged (2 without evidence), 2 not judged" in line
    # none unjudged (in-process, or older results without the count): the line as before
    for extra in ({"judge_unavailable_windows": 0}, {}):
        print_summary(_result(no_evidence_windows=1, **extra))
        line = capsys.readouterr().err.splitlines()[0]
        assert line.endswith("· mean P(human) 0.20 · windows 10 judged (1 without evidence), 0 dropped")


def test_a_call_scored_without_a_judge_says_the_judge_was_off(capsys):
    """`--judge none` (and probe's default) printed "mean P(human) –" alone, as a judge that found
    nothing would (the last note): it now says the judge was off. A judge that ran and had no
    evidence does not read so."""
    off = _result(mean_p_human=None, judged_windows=0)
    off["judge_info"] = None
    print_summary(off)
    assert "mean P(human) – (judge off: timing only) ·" in capsys.readouterr().err
    print_summary(_result(mean_p_human=None, judged_windows=10, no_evidence_windows=10))
    err = capsys.readouterr().err
    assert "mean P(human) – ·" in err and "judge off" not in err


def test_the_summary_names_which_channel_was_read_as_whom(capsys):
    """A trial's swapped recording (no echo, floors 15 dB apart) read the caller as the agent, and
    the summary never said which channel it took as whom."""
    r = _result()
    r["channels"] = {"user": 1, "agent": 0}
    print_summary(r)
    assert capsys.readouterr().err.startswith("livejudge: 43.5s (user ch1, agent ch0) · latency p50")
    r["channels"] = {"user": "u.wav", "agent": "a.wav"}  # two files: named elsewhere
    print_summary(r)
    assert capsys.readouterr().err.startswith("livejudge: 43.5s · latency p50")
