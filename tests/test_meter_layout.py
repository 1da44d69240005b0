"""The meter on a real (emulated) 80×24 terminal: no stale lines after it stops, the final frame
stays on screen, long titles never push the indicators off the line, units spelled out, and
plain lines wrap between fields, never inside a word."""

import io
import time

import pytest

from livejudge.judge.model.judge import load_judge
from livejudge.session import Session, SessionConfig, stream_call
from livejudge.testing.dialogues import example_dialogue
from livejudge.outputs.meter import Meter, PlainLines, elide, render_text

pyte = pytest.importorskip("pyte", reason="pyte (terminal emulator, dev extra) not installed")


@pytest.fixture(scope="module")
def scored():
    d = example_dialogue(seed=0)
    s = Session(SessionConfig(judge_mode="every", interval_s=5.0), judge=load_judge("acoustic"))
    stream_call(s, d.call)
    r = s.close()
    return s, r


class _Term(io.TextIOBase):
    """A file that feeds a pyte 80×24 screen (what a terminal would show)."""

    def __init__(self, cols=80, rows=24):
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.Stream(self.screen)

    def write(self, s):
        self.stream.feed(s.replace("\n", "\r\n"))
        return len(s)

    def isatty(self):
        return True

    def lines(self):
        return [line.rstrip() for line in self.screen.display]


def test_meter_on_80x24_leaves_one_header_and_the_final_frame(scored, monkeypatch):
    import sys

    from rich.console import Console

    s, r = scored
    term = _Term()
    monkeypatch.setattr(sys, "stderr", term)  # stderr and stdout share the terminal, as in a shell
    console = Console(file=term, width=80, height=24, force_terminal=True, color_system=None)
    m = Meter(s, "replay " + "x" * 120 + ".wav", console=console, refresh_per_second=20)
    m.start()
    for i in range(3):  # notes on stderr while the meter runs (attach/demo print some)
        time.sleep(0.15)
        print(f"livejudge: note {i} on stderr while the meter runs", file=sys.stderr)
    time.sleep(0.15)
    m.stop()
    console.file.write("livejudge: 43.8s · summary line\n")
    screen = term.lines()
    headers = [line for line in screen if line.startswith("livejudge · ")]
    assert len(headers) == 1, screen  # no stale header left above the final frame
    info = s.judge.info()  # the judging head and its version, not pushed off by the title
    assert "user ○ agent ○" in headers[0] and headers[0].endswith(f"{info['head']} {info['head_version']}")
    assert "…" in headers[0] and headers[0].count("x") < 80
    assert any("summary line" in line for line in screen)
    # the whole final frame (header to footer) is on the screen above the summary
    i = screen.index(headers[0])
    assert any(("gated" in line) for line in screen[i:]), screen
    assert f"user barge-ins {r['summary']['user_barge_in_count']}" in "\n".join(screen)


def test_meter_units_are_spelled_out(scored):
    s, r = scored
    text = render_text(s, "replay example_call.wav")
    for cryptic in ("→machine", "ignored)", " win ·", "n="):
        assert cryptic not in text
    assert "windows · " in text and " ms each" in text and "replies" in text and "agent talked through" in text
    assert "pulls towards machine:" in text or "towards human:" in text
    lines = text.rstrip("\n").split("\n")
    assert len(lines) <= 23 and max(len(x) for x in lines) <= 80  # one row spare at 80×24


def test_elide_keeps_both_ends():
    assert elide("short.wav", 20) == "short.wav"
    e = elide("a_very_long_recording_name.wav", 15)
    assert len(e) == 15 and e.startswith("a_very") and e.endswith(".wav") and "…" in e


def test_plain_lines_wrap_between_fields(scored):
    s, r = scored
    buf = io.StringIO()
    p = PlainLines(s, buf, events=False, width=60)
    from livejudge.events import JudgeResult

    last = next(x for x in s.judge_results if isinstance(x, JudgeResult))
    p.on_event(last)
    out = buf.getvalue().rstrip("\n").split("\n")
    assert len(out) > 1 and all(len(x) <= 60 for x in out)
    words = " ".join(x.strip() for x in out).split(" ")
    # every field of the unwrapped line survives whole: wrapping never split a word
    unwrapped = io.StringIO()
    PlainLines(s, unwrapped, events=False, width=10_000).on_event(last)
    # (the judge's validity line comes first, on its own line, in both)
    assert words == " ".join(x.strip() for x in unwrapped.getvalue().strip().split("\n")).split(" ")


def test_whisper_meter_shows_only_measured_dimensions_and_the_whole_validity_line():
    """The default head: dimensions without a feature of their own are listed as not measured
    (not drawn with a score), the three that share one learned score are one row, and the
    validity line (with its caveat) is shown whole, wrapped, inside 80×22; when the line leaves too
    few lines for every dimension note (0.3.0 names 15 families), the notes say they were cut and
    a taller terminal shows them."""
    import textwrap

    pytest.importorskip("ctranslate2")
    judge = load_judge("whisper")
    d = example_dialogue(seed=0)
    s = Session(SessionConfig(judge_mode="every", interval_s=5.0), judge=judge)
    stream_call(s, d.call)
    s.close()
    text = render_text(s, "replay example_call.wav")
    lines = text.rstrip("\n").split("\n")
    assert len(lines) <= 22 and max(len(x) for x in lines) <= 80  # + summary line + cursor at 80×24
    view = judge.info()["dimensions"]
    rows = [x[:40] for x in lines[3:]]
    for dim in view["not_measured"]:  # never a score row
        from livejudge.outputs.meter import SHORT_NAMES

        assert not any(r[4:21].strip() == SHORT_NAMES[dim] for r in rows), dim
    shared = next(g for g in view["groups"] if len(g) > 1)
    assert any(f"breathing/mouth+{len(shared) - 1}" in r for r in rows)
    validity = judge.info()["validated"]
    assert "NOT valid in the wild" in validity
    # whole, wrapped at spaces (a family's name is never cut at its hyphens)
    assert "\n".join(textwrap.wrap(validity, 80, break_on_hyphens=False)) in text
    # the validity line comes first; the dimension notes get the lines left, and say when they were cut
    # the row's "+N" explained under the rows in the report's words ("(+N sharing its score)"); at
    # 80×24 0.4.0's line ("Fitted on English speech only" added) leaves it no room: a taller terminal
    plus = f"breathing/mouth+{len(shared) - 1}: {len(shared) - 1} more sharing its"
    # the timing column gave up its least needed row (the talk share) so the frame still fits
    assert "agent talk share" not in text and "p50 " in text and "human ≤" in text
    # at 80×24 0.3.0's validity line cuts the notes; the cut points to a report only where one is
    # written (a new user's trial: the demo, which writes none, said "more in the report")
    assert "… (more with --report)" in text and "more in the report" not in text
    assert "… (more in the report)" in render_text(s, "replay example_call.wav", report="call.html")
    tall = render_text(s, "replay example_call.wav", height=31)  # a taller terminal shows the notes too
    assert "not measured, head reads no text:" in tall and "… (more" not in tall
    assert plus in tall and "agent talk share" in tall
    assert "\n".join(textwrap.wrap(validity, 80, break_on_hyphens=False)) in tall


def test_dimension_view_groups_shared_rows_and_names_why_a_row_is_not_measured():
    import numpy as np

    from livejudge.judge.model.judge import dimension_view

    W = np.zeros((5, 4))
    W[0] = [1, 0, 0, 0]
    W[1] = [1, 0.1, 0, 0]       # cosine 0.995 with row 0: one shared score
    W[2] = [0, 1, 0, 0]
    W[3] = [0, 0, 0.001, 0]     # 0.1 % of the largest row: almost no weight (HEURISTIC 2 %)
    dims = ["rhythm", "stress", "intonation", "accent", "textual_sentiment"]  # last row all zero
    v = dimension_view(dims, W)
    assert v["groups"] == [["rhythm", "stress"], ["intonation"]]
    assert v["not_measured"]["textual_sentiment"] == "the head reads no text"
    assert v["not_measured"]["accent"].startswith("almost no weight")
    # a head that reads some text but gives one text dimension no weight does not "read no text"
    both = dimension_view(dims + ["code_switching"], np.vstack([W[:4], [[0, 0, 0, 1]], np.zeros((1, 4))]))
    assert both["not_measured"]["code_switching"] == "no weight in the head"
    W[4, 3] = 1.0
    assert dimension_view(dims, W)["groups"][-1] == ["textual_sentiment"]
    with pytest.raises(ValueError):
        dimension_view(dims[:3], W)


def test_meter_counts_a_barge_in_only_once_its_verdict_settles():
    """Mid barge-in (the caller has started, the agent has not yet stopped) the live timeline reads
    "talked through"; the meter must not say so before the verdict settles (it shows it pending),
    and after the call it counts exactly the barge-in the agent really talked through."""
    d = example_dialogue(seed=0)
    b = next(x for x in d.truth.barge_ins if x.by == "user" and x.yield_s is not None)
    s = Session(SessionConfig())
    n, stop = 320, int((b.onset_s + 0.3) * 16000)  # 20 ms chunks up to 0.3 s into the barge-in
    for i in range(0, stop, n):
        s.push("user", d.call.user[i:i + n], i / 16000)
        s.push("agent", d.call.agent[i:i + n], i / 16000)
    provisional = [v for v in s.verdicts if v.kind == "barge_in" and abs(v.t_s - b.onset_s) < 0.1]
    assert [v.outcome for v in provisional] == ["talked_through"]  # what the old meter counted
    text = render_text(s, "live")
    assert "agent talked through 0 of them" in text and "pending" in text
    for i in range(stop, len(d.call.user), n):
        s.push("user", d.call.user[i:i + n], i / 16000)
        s.push("agent", d.call.agent[i:i + n], i / 16000)
    s.close()
    through = sum(1 for x in d.truth.barge_ins if x.by == "user" and x.yield_s is None)
    text = render_text(s, "live")
    assert through == 1 and f"agent talked through {through} of them" in text and "pending" not in text


def test_the_meter_is_told_whether_a_report_is_written(monkeypatch, tmp_path):
    """run_session gives the meter the call's --report path (None without one), so the cut
    dimension notes point to the report only when there is one."""
    import livejudge.outputs.meter as meter_mod
    from livejudge.commands.runner import run_session
    from livejudge.config import OutputConfig

    seen = []
    monkeypatch.setattr(meter_mod, "make_display", lambda session, title, mode, report=None, stream=None: seen.append(report))
    for report in (None, str(tmp_path / "call.html")):
        s = Session(SessionConfig(judge_mode="off"))
        run_session(s, lambda stop: None, title="t", output=OutputConfig(display="rich", report=report))
    assert seen == [None, str(tmp_path / "call.html")]
    assert meter_mod.Meter(Session(SessionConfig(judge_mode="off")), report="r.html").report == "r.html"


def test_the_meter_says_when_a_judge_service_left_windows_unjudged():
    """A judge service that stopped answering left windows unjudged; the meter's judge row says
    how many (it said only the windows judged), whole inside its column."""
    import types

    d = example_dialogue(seed=0)
    s = Session(SessionConfig())
    stream_call(s, d.call)
    s.close()
    s.judge = types.SimpleNamespace(unavailable_windows=16)  # RemoteJudge's count
    row = next(line for line in render_text(s, "x").splitlines() if "judge:" in line)
    assert "judge: 0 windows · 16 not judged" in row and "…" not in row


def test_dimension_notes_are_cut_between_notes_not_inside_one():
    """At 80×24 the shared-score note was cut after its first line ("breathing/mouth+2: 2 more
    sharing its" then "… (more with --report)"; a trial): notes now go whole or not at all."""
    from livejudge.outputs.meter import whole_notes

    notes = ["a: 2 more sharing its", "  score (x, y)", "not measured, why: p, q", "  r, s", "z: one line"]
    assert whole_notes(notes, 1) == []
    assert whole_notes(notes, 3) == notes[:2]
    assert whole_notes(notes, 4) == notes[:4] and whole_notes(notes, 9) == notes
