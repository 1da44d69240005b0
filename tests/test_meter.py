"""The meter fits 80×24 and shows what the session measured; plain lines when piped."""

import io

from livejudge.judge.model.judge import PRIOR_ACOUSTIC_HEAD, load_judge
from livejudge.session import Session, SessionConfig, stream_call
from livejudge.testing.dialogues import example_dialogue
from livejudge.outputs.meter import PlainLines, render_text


def _session():
    d = example_dialogue(seed=0)
    s = Session(SessionConfig(judge_mode="every", interval_s=5.0), judge=load_judge("acoustic", head=PRIOR_ACOUSTIC_HEAD))  # shows the PRIOR label
    return d, s


def test_meter_fits_80x24_and_shows_the_numbers():
    d, s = _session()
    stream_call(s, d.call)
    r = s.close()
    text = render_text(s, "replay example_call.wav")
    lines = text.rstrip("\n").split("\n")
    assert len(lines) <= 24
    assert max(len(line) for line in lines) <= 80
    p50 = r["summary"]["latency_p50_s"]
    assert f"p50 {p50:.2f}" in text
    assert f"P(human) {r['judge'][-1]['p_human']:4.2f}" in text
    assert f"user barge-ins {r['summary']['user_barge_in_count']}" in text
    assert "intonation" in text and "PRIOR" in text


def test_plain_lines_print_one_line_per_window():
    d, s = _session()
    buf = io.StringIO()
    s.add_sink(PlainLines(s, buf, events=False))
    stream_call(s, d.call)
    r = s.close()
    lines = [x for x in buf.getvalue().splitlines() if x.startswith("[t=")]
    assert len(lines) == len(r["judge"])
    assert "P(human)=" in lines[-1] and "p50=" in lines[-1]


def test_plain_lines_piped_are_one_record_per_line():
    """Piped into a file or CI log (not a TTY), each record stays on one line, so it can be
    grepped (a new user found them hard-wrapped at 80 columns)."""
    d, s = _session()
    buf = io.StringIO()  # not a TTY
    s.add_sink(PlainLines(s, buf, events=True))
    stream_call(s, d.call)
    s.close()
    lines = buf.getvalue().splitlines()
    assert any(len(x) > 80 for x in lines)
    assert not any(x.startswith("    ") for x in lines)  # no continuation lines
    assert all(x.startswith(("[", "judge ", "livejudge")) for x in lines if x), lines[:5]
