"""Hostile paths and stops a CI job meets (a new user's trial of hardening, 2026-12-07).

* A named pipe with nothing writing to it, given as the call, waited silently until the job's
  timeout; given as ``--junit``, the run hung past every signal at its end. In a batch folder a
  pipe was left out without a word.
* After ``kill -9``, the previous run's passing JUnit file and its result were still there.
* Piped (CI), a long call or a batch printed nothing until the end.
* ``--judge auto`` whose encoder failed to load for want of memory ended the run (exit 2),
  where ``--help`` promises a timing-only call with one line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import livejudge.audio as audio
from livejudge.commands.cli import PlainProgress, main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "example_call.wav"


def test_a_named_pipe_nothing_writes_to_is_refused_with_the_fix(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(audio, "PIPE_SAY_S", 0.2)
    monkeypatch.setattr(audio, "PIPE_WAIT_S", 1.0)
    fifo = tmp_path / "call.wav"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    code = main(["score", str(fifo), "--judge", "none", "--json", str(tmp_path / "r.json")])
    assert code == 2 and time.monotonic() - t0 < 10.0
    err = capsys.readouterr().err
    assert f"waiting for {fifo} to be written (a named pipe" in err
    assert "is a named pipe that nothing wrote to in 1 s: start the command that writes it first" in err


def test_a_named_pipe_written_late_is_scored_as_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(audio, "PIPE_SAY_S", 0.2)
    fifo = tmp_path / "call.wav"
    os.mkfifo(fifo)

    def write_later():
        time.sleep(0.6)
        with open(fifo, "wb") as f:
            f.write(EXAMPLE.read_bytes())

    th = threading.Thread(target=write_later)
    th.start()
    out = tmp_path / "r.json"
    assert main(["score", str(fifo), "--judge", "none", "--json", str(out)]) == 0
    th.join()
    ref = tmp_path / "ref.json"
    assert main(["score", str(EXAMPLE), "--judge", "none", "--json", str(ref)]) == 0
    got, want = json.loads(out.read_text()), json.loads(ref.read_text())
    assert got["transitions"] == want["transitions"] and got["barge_ins"] == want["barge_ins"]


def test_a_dash_for_the_call_names_dev_stdin(capsys):
    assert main(["score", "-", "--judge", "none"]) == 2
    assert "to read standard input give /dev/stdin" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--junit", "--json"])
def test_an_output_that_is_a_named_pipe_is_refused_before_the_call(tmp_path, capsys, flag):
    fifo = tmp_path / "out.xml"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    code = main(["score", str(EXAMPLE), "--judge", "none", flag, str(fifo), "--fail-if", "latency_p90_s>9"])
    assert code == 2 and time.monotonic() - t0 < 10.0  # it had hung past SIGTERM and SIGINT
    assert f"{flag} {fifo} is a named pipe" in capsys.readouterr().err


def test_a_pipe_in_a_batch_folder_is_skipped_with_its_reason(tmp_path, monkeypatch, capsys):
    """A pipe in a batch folder was left out without a word; it is read as a single ``score``
    reads one, so one that nothing writes to is skipped after ``PIPE_WAIT_S`` (1 s here) with the
    reason. (A pipe whose writer stalls is how tests/test_batch_hardening.py stalls a call.)"""
    monkeypatch.setattr(audio, "PIPE_SAY_S", 0.2)
    monkeypatch.setattr(audio, "PIPE_WAIT_S", 1.0)
    calls = tmp_path / "calls"
    calls.mkdir()
    (calls / "a.wav").write_bytes(EXAMPLE.read_bytes())
    os.mkfifo(calls / "pipe.wav")
    out = tmp_path / "out"
    assert main(["score", str(calls), "--out-dir", str(out), "--judge", "none"]) == 1  # a skipped call
    summary = json.loads((out / "summary.json").read_text())
    skipped = [c for c in summary["calls"] if c["status"] != "ok"]
    assert [Path(c["file"]).name for c in skipped] == ["pipe.wav"]
    assert "is a named pipe that nothing wrote to in 1 s: start the command that writes it first" in \
        skipped[0]["reason"], skipped
    err = capsys.readouterr().err
    assert "[1/2] a.wav: scored" in err or "[2/2] a.wav: scored" in err, err  # piped: one line per call


def _kill_9_when(argv: list[str], ready, settle_s: float = 0.0) -> None:
    """Run ``livejudge ARGV`` in its own process, wait (at most 60 s) until ``ready()``, then
    ``settle_s`` more, and kill it with SIGKILL, which nothing can catch."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-m", "livejudge.commands.cli", *argv], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not ready():
            time.sleep(0.05)
        time.sleep(settle_s)
        assert proc.poll() is None, "the run ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_run_killed_leaves_a_red_junit_file_and_no_earlier_result(tmp_path):
    """``kill -9`` cannot be caught: the run says "did not finish" in its JUnit file from its start,
    and an earlier result at its ``--json`` path is gone, so a CI step reads red, not the last
    run's green."""
    junit, result = tmp_path / "j.xml", tmp_path / "r.json"
    assert main(["score", str(EXAMPLE), "--judge", "none", "--junit", str(junit), "--json", str(result),
                 "--fail-if", "latency_p90_s>9"]) == 0
    assert 'failures="0" errors="0"' in junit.read_text() and result.exists()
    x, sr = sf.read(str(EXAMPLE), dtype="float32")
    long = tmp_path / "long.wav"
    sf.write(str(long), np.tile(x, (40, 1)), sr, subtype="PCM_16")  # 29 minutes: long enough to kill
    _kill_9_when(["score", str(long), "--judge", "none", "--junit", str(junit), "--json", str(result),
                  "--fail-if", "latency_p90_s>9"], lambda: "did not finish" in junit.read_text(), settle_s=0.5)
    text = junit.read_text()
    assert 'errors="1"' in text and "the run did not finish: it was killed" in text, text
    assert not result.exists()


def test_plain_progress_says_where_a_long_call_is(capsys):
    p = PlainProgress("call.wav", 3600.0, every_s=0.0)
    time.sleep(0.01)
    p(600.0)
    err = capsys.readouterr().err
    assert err.startswith("livejudge: scoring call.wav: 600/3600 s (17 %), about ") and "left" in err, err


def test_judge_auto_that_cannot_load_for_memory_is_timing_only(monkeypatch, capsys):
    from livejudge.commands.runner import judge_from_config
    from livejudge.config import JudgeConfig
    from livejudge.errors import CLIError
    import livejudge.judge.model.judge as jm

    def no_memory(*a, **k):
        raise RuntimeError("mkl_malloc: failed to allocate memory")

    monkeypatch.setattr(jm, "load_judge", no_memory)
    assert judge_from_config(JudgeConfig(kind="auto")) is None
    assert ("no P(human): the judge could not load (mkl_malloc: failed to allocate memory); timing is measured"
            in capsys.readouterr().err)
    with pytest.raises(CLIError, match="cannot load the whisper judge: mkl_malloc"):
        judge_from_config(JudgeConfig(kind="whisper"))


def test_random_bytes_named_mp3_are_not_called_a_missing_file(tmp_path, capsys):
    """libsndfile says "File does not exist or is not a regular file (possibly a pipe?)" of a
    regular file whose bytes it does not recognise; the message says what is true."""
    f = tmp_path / "rand.mp3"
    f.write_bytes(np.random.default_rng(0).bytes(5000))
    assert main(["score", str(f), "--judge", "none"]) == 2
    err = capsys.readouterr().err
    assert "its bytes are not audio that libsndfile recognises" in err and "does not exist" not in err, err


def test_a_judge_that_could_not_load_is_in_the_result_not_read_as_judge_off(tmp_path, monkeypatch, capsys):
    """A re-check: the result of a call whose judge could not load had ``errors: []`` and read "judge
    off: timing only", like ``--judge none``; a P(human) gate's reason asked "is the judge off?"."""
    import livejudge.judge.model.judge as jm

    def no_memory(*a, **k):
        raise RuntimeError("mkl_malloc: failed to allocate memory")

    monkeypatch.setattr(jm, "load_judge", no_memory)
    out = tmp_path / "r.json"
    code = main(["score", str(EXAMPLE), "--json", str(out), "--fail-if", "p_human_mean<0.3"])
    doc = json.loads(out.read_text())
    assert doc["source"]["judge_unavailable"] == "mkl_malloc: failed to allocate memory"
    assert any(e.startswith("no P(human): the judge could not load (mkl_malloc") for e in doc["errors"]), doc["errors"]
    err = capsys.readouterr().err
    assert "(the judge could not load: timing only; see the result's errors)" in err, err
    assert "did it not load?" in err and code == 3, err


def _long_call(tmp_path: Path, repeats: int) -> Path:
    x, sr = sf.read(str(EXAMPLE), dtype="float32")
    d = tmp_path / "calls"
    d.mkdir(exist_ok=True)
    p = d / "long.wav"
    sf.write(str(p), np.tile(x, (repeats, 1)), sr, subtype="PCM_16")
    return p


def test_a_piped_batch_of_a_long_call_says_it_is_still_scoring(tmp_path, monkeypatch, capsys):
    """One line per call left a piped batch of long calls silent for minutes (a re-check: 55 s).
    Every ``HEARTBEAT_S`` it says what it is still scoring (0.2 s here)."""
    import livejudge.commands.batch as batch

    monkeypatch.setattr(batch, "HEARTBEAT_S", 0.2)
    calls = _long_call(tmp_path, 8).parent  # about 6 minutes of call: a few seconds of work
    assert main(["score", str(calls), "--out-dir", str(tmp_path / "out"), "--judge", "none"]) == 0
    err = capsys.readouterr().err
    assert "livejudge: [0/1 done] still scoring long.wav (" in err, err
    assert "livejudge: [1/1] long.wav: scored" in err


def test_a_batch_killed_leaves_no_earlier_summary(tmp_path):
    """After ``kill -9`` a re-check found the last run's passing summary.json in --out-dir: the
    batch removes it as it starts, and writes its own at its end or stop."""
    calls = _long_call(tmp_path, 40).parent
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text(json.dumps({"n_calls": 1, "gates": [{"failed": False}]}))
    (out / "summary.csv").write_text("file,status\nold.wav,ok\n")
    _kill_9_when(["score", str(calls), "--out-dir", str(out), "--judge", "none"],
                 lambda: not (out / "summary.json").exists())
    assert not (out / "summary.json").exists() and not (out / "summary.csv").exists()


def test_a_call_stopped_before_any_audio_is_not_counted_as_a_partial_result():
    from livejudge.commands.batch import _row_of_doc

    row = _row_of_doc({"source": {"ended": "interrupted (SIGTERM)"}, "duration_s": 0.0}, "c2.json")
    assert row["status"] == "interrupted"
    assert "stopped before any of its audio was scored" in row["reason"] and "covers" not in row["reason"]
    row = _row_of_doc({"source": {"ended": "interrupted (SIGTERM)"}, "duration_s": 12.34}, "c2.json")
    assert row["reason"].endswith("its partial result covers the first 12.3 s")


def test_an_output_that_names_a_recording_or_a_batch_file_is_refused_and_left_alone(tmp_path, capsys):
    """A trial: ``score x.wav --json other.wav`` wrote JSON over another recording, and ``compare A B
    --json B/c1.json`` replaced a batch's call result. Mending it showed worse: the stale ``--json``
    removal deleted the recording before the check ran. Both are refused now, and the file is kept;
    a non-JUnit file at ``--junit`` is not turned red either."""
    import shutil

    other = tmp_path / "other.wav"
    shutil.copy(EXAMPLE, other)
    before = other.read_bytes()
    bare = tmp_path / "take1"  # a recording without a file name ending: known by its first bytes (a re-check)
    shutil.copy(EXAMPLE, bare)
    for target in (other, bare):
        for cmd in (["score", str(EXAMPLE), "--judge", "none", "--json"], ["score", str(EXAMPLE), "--judge", "none",
                    "--junit"], ["check", str(EXAMPLE), "--json"], ["check", str(EXAMPLE), "--at", "16.1",
                    "--expect", "yield", "--junit"]):
            assert main(cmd + [str(target)]) == 2, cmd
            assert f"{target} is an existing audio file (a recording?)" in capsys.readouterr().err
            assert target.read_bytes() == before
    # check wrote its result over the recording it read (a re-check): its own input is refused too
    assert main(["check", str(other), "--json", str(other)]) == 2 and other.read_bytes() == before
    calls = tmp_path / "calls"
    calls.mkdir()
    shutil.copy(EXAMPLE, calls / "c1.wav")
    out = tmp_path / "out"
    assert main(["score", str(calls), "--out-dir", str(out), "--judge", "none"]) == 0
    kept = (out / "c1.json").read_text()
    capsys.readouterr()
    assert main(["compare", str(out), str(out), "--json", str(out / "c1.json")]) == 2
    assert "is a file of the input folder" in capsys.readouterr().err
    # the batch given as its summary.json: the same folder (a re-check wrote over c1.json that way)
    assert main(["compare", str(out / "summary.json"), str(out / "summary.json"), "--json", str(out / "c1.json")]) == 2
    assert "is a file of the input folder" in capsys.readouterr().err
    assert (out / "c1.json").read_text() == kept
    # a result of livejudge at --json is still removed as a run starts (a killed run leaves none behind),
    # and an earlier run's --report too (a re-check: a failed re-run left it beside its red JUnit file)
    r, html = tmp_path / "r.json", tmp_path / "r.html"
    r.write_text(kept)
    html.write_text("<!DOCTYPE html>\n<html><head><title>livejudge report · old.wav</title></head></html>")
    notes = tmp_path / "notes.html"
    notes.write_text("<html><title>my notes</title></html>")
    assert main(["score", str(tmp_path / "missing.wav"), "--judge", "none", "--json", str(r),
                 "--report", str(html)]) == 2
    assert not r.exists() and not html.exists()
    assert main(["score", str(tmp_path / "missing.wav"), "--judge", "none", "--report", str(notes)]) == 2
    assert notes.exists()  # not a livejudge report: left alone
