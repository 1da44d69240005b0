"""Ctrl-C on the embedding examples writes what was measured and ends the process (a trial).

Each test starts an example in a subprocess, waits until it has measured a reply (a
``Transition`` in the event log), sends SIGINT as a terminal's Ctrl-C would, and checks: exit
code 130 within seconds, no traceback, the result JSON with ``source.ended`` "interrupted
(Ctrl-C)", and the event log closed by its ``summary`` line. The trial found the LiveKit
example dying with a KeyboardInterrupt traceback and nothing written, and the Pipecat example
running on ~80 s after writing its result (its scripted caller was not cancelled with the
runner).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}


def _start(example: str, args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(ROOT / "examples" / example), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT)


def _ctrl_c_after(proc: subprocess.Popen, ev: Path, needle: str, timeout_s: float = 90.0) -> float:
    """Wait for ``needle`` in the event log, send SIGINT; returns the monotonic time it was sent."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ev.exists() and needle in ev.read_text():
            proc.send_signal(signal.SIGINT)
            return time.monotonic()
        if proc.poll() is not None:
            raise AssertionError(f"exited early ({proc.returncode}): {proc.stderr.read()[-2000:]}")
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"{needle!r} never appeared in the event log")


def _check(proc: subprocess.Popen, sent: float, out: Path, ev: Path, within_s: float) -> dict:
    try:
        _, err = proc.communicate(timeout=within_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"still running {within_s:.0f} s after Ctrl-C: {err[-1500:]}") from None
    took = time.monotonic() - sent
    assert proc.returncode == 130, (proc.returncode, err[-3000:])
    assert "Traceback" not in err, err[-3000:]
    assert "interrupted (Ctrl-C)" in err
    doc = json.loads(out.read_text())
    assert doc["source"]["ended"] == "interrupted (Ctrl-C)"
    recs = [json.loads(line) for line in ev.read_text().splitlines()]  # every line valid JSON
    assert recs[0]["type"] == "header" and recs[-1]["type"] == "summary"
    assert recs[-1]["latency_count"] == doc["summary"]["latency_count"] >= 1  # the reply measured is kept
    assert recs[-1]["ended"] == "interrupted (Ctrl-C)"  # the log said nothing of the cut (a trial)
    doc["_took_s"] = took
    return doc


@pytest.mark.slow  # a real-time LiveKit call cut after its first reply, ~15 s with the report
def test_livekit_example_ctrl_c_writes_result_report_and_event_log(tmp_path):
    out, ev, html = tmp_path / "call.json", tmp_path / "events.jsonl", tmp_path / "report.html"
    report = importlib.util.find_spec("matplotlib") is not None
    proc = _start("livekit_embed.py", ["--plain", "--judge", "none", "--result", str(out), "--events", str(ev),
                                       *(["--report", str(html)] if report else [])])
    sent = _ctrl_c_after(proc, ev, '"Transition"')
    doc = _check(proc, sent, out, ev, within_s=45)
    assert doc["duration_s"] < 18  # cut short: the whole call is ~22 s
    if report:
        assert html.read_text().rstrip().endswith("</html>")  # the report, whole


@pytest.mark.slow  # a real-time Pipecat call (Silero VAD) cut after its first reply, ~15 s
def test_pipecat_example_ctrl_c_ends_within_seconds(tmp_path):
    out, ev = tmp_path / "call.json", tmp_path / "events.jsonl"
    proc = _start("pipecat_embed.py", ["--display", "none", "--judge", "none", "--result", str(out),
                                       "--events", str(ev)])
    sent = _ctrl_c_after(proc, ev, '"Transition"')
    doc = _check(proc, sent, out, ev, within_s=20)  # the caller went on to its 90 s cap: ~80 s
    assert doc["_took_s"] < 10
    assert doc["duration_s"] < 25  # cut short: the whole call is ~29 s
