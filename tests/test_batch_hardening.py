"""Batch scoring under a new user's hardening trial: stop signals, long file names, a bad
--out-dir, a full disk.

The stop tests start the real CLI in a subprocess over a folder of calls built from real clips
(``example_dialogue``): short ones, and a long one (the dialogue then 30 min of silence, a small
FLAC that takes ~17 s to score), or a call that never finishes arriving (a FIFO held open with a
WAV header in it: the worker blocks reading it, as on a stalled network mount). They send the
signal once the first result file is there and check the exit code, how soon the batch exited,
that no worker outlived it, and what summary.json says about every call.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from livejudge.commands import batch
from livejudge.commands.batch import MAX_RESULT_NAME_BYTES, _out_names, _row_after_stop
from livejudge.commands.cli import main
from livejudge.testing.dialogues import example_dialogue

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
SR = 16000


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict[str, Path]:
    """Two short calls (43.5 s) and a long one: the same dialogue, then 30 min of silence (FLAC)."""
    d = tmp_path_factory.mktemp("clips")
    a, c = d / "a_short.wav", d / "c_short.wav"
    example_dialogue(seed=0).write(a)
    example_dialogue(seed=1).write(c)
    long = d / "b_long.flac"
    with sf.SoundFile(str(long), "w", SR, 2, subtype="PCM_16", format="FLAC") as f:
        f.write(np.clip(example_dialogue(seed=2).stereo(), -1, 1))
        zeros = np.zeros((60 * SR, 2), dtype="int16")
        for _ in range(30):
            f.write(zeros)
    return {"a": a, "b": long, "c": c}


def _folder(tmp_path: Path, clips: dict[str, Path], keys: str) -> Path:
    d = tmp_path / "calls"
    d.mkdir()
    for k in keys:
        os.link(clips[k], d / clips[k].name)
    return d


def _start(args: list[str], **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "livejudge.commands.cli", "score", *args, "--judge", "none",
                             "--asr", "off"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                            cwd=ROOT, **kw)


def _wait_for_result(out: Path, proc: subprocess.Popen, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(p.name != "summary.json" for p in out.glob("*.json")):
            return
        if proc.poll() is not None:
            raise AssertionError(f"exited early ({proc.returncode}): {proc.stderr.read()[-2000:]}")
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("no result file appeared")


def _finish(proc: subprocess.Popen, workers: list[int], timeout_s: float = 60.0) -> str:
    """The batch's stderr once it exits; past ``timeout_s`` it and its workers are killed (a batch
    that waits for its call in flight must not outlive the test) and the test fails."""
    try:
        return proc.communicate(timeout=timeout_s)[1]
    except subprocess.TimeoutExpired:
        for pid in [proc.pid, *workers]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        proc.communicate()
        raise AssertionError(f"the batch had not exited {timeout_s:g} s after the signal") from None


def _workers(pid: int) -> list[int]:
    """The batch's worker processes (children of ``pid`` running multiprocessing's spawn_main)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            if ppid == pid and b"spawn_main" in (stat.parent / "cmdline").read_bytes():
                found.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _left_alive(workers: list[int]) -> list[int]:
    """The workers still running (each then killed, so a failing test leaves none behind)."""
    left = [w for w in workers if _alive(w)]
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return left


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _summary(out: Path) -> tuple[dict, dict[str, dict]]:
    sm = json.loads((out / "summary.json").read_text())
    return sm, {Path(r["file"]).name: r for r in sm["calls"]}


def _check_rows_cover_results(out: Path, rows: dict[str, dict]) -> None:
    """Every result file in ``out`` is some call's row (ok, or interrupted with its partial result),
    and every interrupted row's result says why it ended (a trial: four results in out/, one call
    in the summary)."""
    listed = {Path(r["result"]).name for r in rows.values() if r.get("result")}
    written = {p.name for p in out.glob("*.json")} - {"summary.json"}
    assert written == listed, (written, listed)
    for r in rows.values():
        assert r["status"] in ("ok", "interrupted", "not_started"), r
        if r["status"] == "interrupted" and r["result"]:
            doc = json.loads(Path(r["result"]).read_text())
            assert doc["source"]["ended"].startswith("interrupted ("), doc["source"]
    assert not list(out.glob(".*.tmp"))  # no temp file left by a killed worker


@pytest.mark.slow  # a subprocess with two workers; the stalled call holds it the 4 s grace period
def test_sigterm_stops_a_two_job_batch_within_seconds_and_leaves_no_worker(clips, tmp_path):
    """SIGTERM to the batch process alone (as docker stop sends it) while one worker is stuck on
    a call that never ends: exit 143 within seconds (the trial's batch waited for the call in
    flight: 46 s, killed first by the grace period), every worker ended before the exit, and the
    summary covers every call."""
    d = _folder(tmp_path, clips, "ac")
    stalled = d / "b_stalled.wav"
    os.mkfifo(stalled)
    fd = os.open(stalled, os.O_RDWR)  # a writer that never finishes: the reader blocks, no EOF
    try:
        os.write(fd, clips["a"].read_bytes()[:4096])
        manifest = _manifest(tmp_path, d / "a_short.wav", stalled, d / "c_short.wav")
        out = tmp_path / "out"
        proc = _start([str(manifest), "--out-dir", str(out), "--jobs", "2"])
        _wait_for_result(out, proc)
        workers = _workers(proc.pid)
        assert len(workers) == 2, workers
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        err = _finish(proc, workers, 30.0)
        took_s = time.monotonic() - t0
        left = _left_alive(workers)
    finally:
        os.close(fd)
    assert proc.returncode == 143, err[-3000:]
    assert took_s < 12.0, (took_s, err[-2000:])  # the grace period (4 s) plus writing, on a busy machine
    assert not left, "a worker outlived the batch"
    assert "Traceback" not in err and "stopping (SIGTERM)" in err and "stopped by SIGTERM" in err, err[-3000:]
    sm, rows = _summary(out)
    assert sm["n_calls"] == 3 and sm["n_scored"] + sm["n_interrupted"] + sm["n_not_started"] == 3
    assert sm["n_skipped"] == sm["n_calls"] - sm["n_scored"]
    assert rows["a_short.wav"]["status"] == "ok" and (out / "a_short.json").exists()
    b = rows["b_stalled.wav"]
    assert b["status"] == "interrupted" and b["result"] is None
    assert b["reason"].startswith("interrupted (SIGTERM) before it finished; no partial result"), b["reason"]
    assert sm["stopped"].startswith(f"SIGTERM after {sm['n_scored']} of 3 calls had finished: {sm['n_interrupted']} interrupted")
    assert sm["medians"]["latency_p50_s"] is not None  # over the scored calls only
    _check_rows_cover_results(out, rows)
    assert (out / "summary.csv").read_text().count("\n") == 4  # header + every call


@pytest.mark.slow  # a subprocess with two workers
def test_ctrl_c_to_the_process_group_stops_idle_and_busy_workers_without_a_traceback(clips, tmp_path):
    """Ctrl-C in a terminal signals the whole process group: the idle worker (its one call done)
    printed a ``Process SpawnProcess-2 ... KeyboardInterrupt`` traceback. Workers ignore it; the
    batch stops them, the long call in flight writes its partial result, exit 130."""
    d = _folder(tmp_path, clips, "ab")
    out = tmp_path / "out"
    proc = _start([str(d), "--out-dir", str(out), "--jobs", "2"], start_new_session=True)
    _wait_for_result(out, proc)
    workers = _workers(proc.pid)
    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    err = _finish(proc, workers)
    took_s = time.monotonic() - t0
    left = _left_alive(workers)
    assert proc.returncode == 130, err[-3000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err and "SpawnProcess" not in err, err[-3000:]
    assert took_s < 10.0, took_s  # the long call needs ~15 s more
    assert workers and not left, "a worker outlived the batch"
    sm, rows = _summary(out)
    assert rows["a_short.wav"]["status"] == "ok"
    b = rows["b_long.flac"]
    assert b["status"] == "interrupted" and b["reason"].startswith("interrupted (Ctrl-C) before it finished"), b
    assert b["result"] and json.loads(Path(b["result"]).read_text())["source"]["ended"] == "interrupted (Ctrl-C)"
    assert b["metrics"] is None and sm["n_scored"] == 1  # a partial call is not in the medians
    # the stop line counts a partial result only where the row says it holds audio (a call stopped in its
    # checks, before any audio was scored, has a result file that holds no measurement)
    part = int("its partial result covers the first" in b["reason"])
    assert sm["stopped"] == (f"Ctrl-C after 1 of 2 calls had finished: 1 interrupted ({part} with a partial result), "
                             "0 not started")
    _check_rows_cover_results(out, rows)


@pytest.mark.slow  # a subprocess
def test_sigterm_with_one_job_writes_the_call_in_flight_as_a_partial_result(clips, tmp_path):
    """``--jobs 1``: SIGTERM exited at once and dropped the call in flight; a single ``score``
    writes an ``interrupted (SIGTERM)`` result. Now the batch does too, and lists the calls it
    did not start."""
    d = _folder(tmp_path, clips, "abc")
    out = tmp_path / "out"
    junit = tmp_path / "gates.xml"
    proc = _start([str(d), "--out-dir", str(out), "--jobs", "1", "--junit", str(junit), "--fail-if", "latency_p90_s>30"])
    _wait_for_result(out, proc)
    time.sleep(3.0)  # the long call is past its input-health check (~2 s), streaming
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    err = _finish(proc, [])
    took_s = time.monotonic() - t0
    assert proc.returncode == 143, err[-3000:]
    assert took_s < 8.0, took_s
    assert "Traceback" not in err, err[-3000:]
    sm, rows = _summary(out)
    assert [rows[n]["status"] for n in ("a_short.wav", "b_long.flac", "c_short.wav")] == \
        ["ok", "interrupted", "not_started"]
    doc = json.loads((out / "b_long.json").read_text())
    assert doc["source"]["ended"] == "interrupted (SIGTERM)"
    assert any(n["kind"] == "interrupted" for n in doc["framework_events"])
    assert doc["duration_s"] < 1800  # the audio up to the signal, not the whole call (1843.5 s)
    assert rows["b_long.flac"]["reason"] == (f"interrupted (SIGTERM) before it finished; its partial result "
                                             f"covers the first {doc['duration_s']:.1f} s")
    assert rows["c_short.wav"]["reason"] == "not started: the batch was stopped (SIGTERM) first"
    assert (sm["n_calls"], sm["n_scored"], sm["n_interrupted"], sm["n_not_started"]) == (3, 1, 1, 1)
    assert sm["stopped"] == ("SIGTERM after 1 of 3 calls had finished: 1 interrupted (1 with a partial result), "
                             "1 not started")
    _check_rows_cover_results(out, rows)
    # the JUnit file says the batch was stopped (a trial's stopped batch wrote none; a stopped single
    # call's read green): an error case, red on a CI page
    import xml.etree.ElementTree as ET

    gates = ET.parse(junit).getroot().find("testsuite")
    case = gates.find("testcase[@name='the batch ran to its end']")
    assert gates.get("errors") == "1" and case.find("error").get("type") == "CallCutShort"
    assert "the batch was stopped (SIGTERM after 1 of 3 calls had finished" in case.find("error").get("message")


@pytest.mark.slow  # a subprocess held the 4 s grace period
def test_sigterm_with_one_job_cuts_a_call_that_does_not_end_within_the_grace_period(clips, tmp_path):
    """``--jobs 1``, the call in flight blocked reading its input (it never reaches a point where
    it can stop): the batch still exits 143 soon after the grace period, with the summary."""
    from livejudge.commands.batch import STOP_GRACE_S

    d = _folder(tmp_path, clips, "a")
    stalled = d / "b_stalled.wav"
    os.mkfifo(stalled)
    fd = os.open(stalled, os.O_RDWR)
    try:
        os.write(fd, clips["a"].read_bytes()[:4096])
        out = tmp_path / "out"
        proc = _start([str(_manifest(tmp_path, d / "a_short.wav", stalled)), "--out-dir", str(out), "--jobs", "1"])
        _wait_for_result(out, proc)
        time.sleep(0.5)  # reading the stalled call
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        err = _finish(proc, [], 30.0)
        took_s = time.monotonic() - t0
    finally:
        os.close(fd)
    assert proc.returncode == 143, err[-3000:]
    assert STOP_GRACE_S <= took_s < STOP_GRACE_S + 6.0, took_s
    assert "Traceback" not in err, err[-3000:]
    sm, rows = _summary(out)
    assert [r["status"] for r in sm["calls"]] == ["ok", "interrupted"]
    assert rows["b_stalled.wav"]["reason"].startswith("interrupted (SIGTERM) before it finished; no partial result")
    _check_rows_cover_results(out, rows)


def _manifest(tmp_path: Path, *paths: Path) -> Path:
    m = tmp_path / "calls.txt"
    m.write_text("".join(f"{p}\n" for p in paths))
    return m


@pytest.mark.slow  # a subprocess with two workers
def test_a_batch_killed_outright_leaves_no_worker_scoring_on(clips, tmp_path):
    """SIGKILL (what follows SIGTERM after the grace period) cannot be caught: a worker left
    behind scored on and wrote its result 40 s later. Each worker ends itself once its batch
    process is gone."""
    d = _folder(tmp_path, clips, "abc")
    out = tmp_path / "out"
    proc = _start([str(d), "--out-dir", str(out), "--jobs", "2"])
    _wait_for_result(out, proc)
    workers = _workers(proc.pid)
    assert len(workers) == 2, workers
    proc.kill()
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and [w for w in workers if _alive(w)]:
        time.sleep(0.1)
    assert not _left_alive(workers), "a worker outlived its killed batch"
    time.sleep(1.0)
    assert not (out / "b_long.json").exists()  # needs ~15 s more: nobody scored it on


def test_a_result_file_written_before_the_stop_counts(clips, tmp_path):
    """A worker killed after writing its result but before reporting back: the row comes from the
    file (written during this batch), not "interrupted"; a stale file from an earlier run does not
    count, nor does a call never started."""
    from livejudge.commands.batch import ScoreOptions, score_call
    from livejudge.outputs.report import write_json

    out = tmp_path / "r.json"
    write_json(score_call(clips["a"], ScoreOptions(judge="none")), out)
    row = _row_after_stop(str(clips["a"]), str(out), True, "SIGTERM", since_wall=time.time() - 5)
    assert row["status"] == "ok" and row["result"] == str(out) and row["metrics"]["latency_count"] > 0
    stale = _row_after_stop(str(clips["a"]), str(out), True, "SIGTERM", since_wall=time.time() + 60)
    assert stale["status"] == "interrupted" and stale["result"] is None
    assert _row_after_stop(str(clips["a"]), str(out), False, "SIGHUP", 0.0)["status"] == "not_started"


# ------------------------------------------------------------------ result file names
def test_result_names_fit_the_file_system_and_stay_unique(tmp_path):
    long = "y" * 251
    files = [tmp_path / f"{long}.wav", tmp_path / f"{long[:200]}é{long[:50]}.wav", tmp_path / f"{long[:200]}z.wav",
             tmp_path / "summary.wav", tmp_path / "x.wav"]
    names = _out_names(files)
    assert len(set(names)) == len(names)
    for n in names:
        assert len(os.fsencode(n)) <= MAX_RESULT_NAME_BYTES
        # the temporary name write_text_atomic uses while writing fits as well
        assert len(os.fsencode(f".{n[:100]}.abcdefgh.tmp")) <= 143
    assert names[0].startswith("y" * 90) and names[0].endswith(".json")
    assert names[3] == "summary_1.json" and names[4] == "x.json"  # summary.json is the batch's
    assert _out_names(files) == names  # the same names on every run


def test_a_call_with_a_255_byte_file_name_is_scored_and_written(tmp_path, capsys):
    """A trial: a valid call named with 251 characters was scored, then listed as skipped
    (``OSError: [Errno 36] File name too long``) and the batch exited 1."""
    d = tmp_path / "calls"
    d.mkdir()
    name = "y" * 251 + ".wav"
    example_dialogue(seed=0).write(d / name)
    example_dialogue(seed=1).write(d / "short.wav")
    out = tmp_path / "outm"
    code = main(["score", str(d), "--out-dir", str(out), "--judge", "none", "--asr", "off"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "Errno" not in err and "skipped" not in " ".join(err.split()).replace("0 skipped", "")
    sm, rows = _summary(out)
    r = rows[name]  # the summary row names the original file
    assert r["status"] == "ok" and Path(r["result"]).parent == out
    doc = json.loads(Path(r["result"]).read_text())
    assert doc["source"]["file"] == str(d / name) and doc["summary"]["latency_count"] > 0
    assert sm["n_scored"] == 2


# ------------------------------------------------------------------ --out-dir checked first
@pytest.mark.parametrize("case", ["a file", "under a file", "unwritable", "name too long"])
def test_a_bad_out_dir_is_one_line_and_exit_2_before_any_call(case, clips, tmp_path, capsys, monkeypatch):
    d = _folder(tmp_path, clips, "a")
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    out, want = {
        "a file": (afile, f"--out-dir {afile} is a file, not a directory"),
        "under a file": (afile / "x", f"--out-dir {afile / 'x'}: {afile} is a file, not a directory"),
        "unwritable": (Path("/proc/livejudge-results/x"), "--out-dir /proc/livejudge-results/x: cannot create files "
                                                          "in /proc"),
        "name too long": (tmp_path / ("r" * 300), "is 300 bytes; this file system allows"),
    }[case]
    scored = []
    monkeypatch.setattr(batch, "score_call", lambda *a, **k: scored.append(a) or {})
    code = main(["score", str(d), "--out-dir", str(out), "--judge", "none", "--asr", "off"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and want in err and "Traceback" not in err, err
    assert scored == [] and afile.read_text() == "not a folder"


def test_a_read_only_out_dir_is_one_line(clips, tmp_path, capsys, monkeypatch):
    """A directory where no file can be created (read-only): EACCES from the probe file, as a
    non-root user meets it (root writes into a read-only directory, so the failure is made)."""
    import errno
    import tempfile

    d = _folder(tmp_path, clips, "a")
    ro = tmp_path / "ro"
    ro.mkdir()
    real = tempfile.mkstemp

    def mkstemp(*a, **k):
        if Path(str(k.get("dir", ""))) == ro:
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(*a, **k)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    code = main(["score", str(d), "--out-dir", str(ro / "x"), "--judge", "none", "--asr", "off"])
    err = capsys.readouterr().err
    assert code == 2 and "cannot create files in" in err and "Permission denied" in err and err.count("\n") == 1


# ------------------------------------------------------------------ a full disk
@pytest.fixture
def disk_full(tmp_path, monkeypatch):
    """Every write into ``tmp_path/out`` fails with ENOSPC (as on a full tmpfs); the temp
    directory is ``tmp_path/tmp``. ``refuse_temp()`` makes the temp directory full too."""
    from livejudge.outputs import guard

    out, tmp = tmp_path / "out", tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    real = guard.write_text_atomic
    full = {out}

    def write(path, text):
        if Path(path).parent in full:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(path, text)

    monkeypatch.setattr(guard, "write_text_atomic", write)
    return out, tmp, lambda: full.add(tmp)


def test_a_full_disk_keeps_the_calls_scored_writes_to_the_temp_dir_and_exits_1(clips, tmp_path, disk_full, capsys):
    """A trial on an 8 KiB tmpfs: every call scored, then listed as ``skipped: OSError: [Errno 28]``,
    "no call could be scored", exit 2 (the bad-input code)."""
    out, tmp, _ = disk_full
    d = _folder(tmp_path, clips, "ac")
    code = main(["score", str(d), "--out-dir", str(out), "--judge", "none", "--asr", "off"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "no call could be scored" not in err and "skipped" not in " ".join(err.split()).replace("0 skipped", "")
    for n in ("a_short", "c_short"):
        assert f"cannot write the result to {out / (n + '.json')} (No space left on device); written to {tmp}" in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"livejudge: exit 1: 4 file(s) could not be written into {out}: ") and "free some space" in last
    assert not list(out.glob("*.json"))
    fb = list(tmp.glob("livejudge-summary-*.json"))
    assert len(fb) == 1 and f"summary in {fb[0]}" in " ".join(err.split())
    sm, rows = _summary_at(fb[0])
    assert sm["n_scored"] == 2 and sm["medians"]["latency_p50_s"] is not None
    assert sm["fallback"]["summary.json"] == str(fb[0]) and Path(sm["fallback"]["summary.csv"]).exists()
    assert len(sm["write_errors"]) == 4 and all("No space left on device" in e for e in sm["write_errors"])
    for r in rows.values():  # each call's result, whole, in the temp directory
        assert r["status"] == "ok" and Path(r["result"]).parent == tmp and "No space left" in r["write_error"]
        assert json.loads(Path(r["result"]).read_text())["summary"]["latency_count"] == r["metrics"]["latency_count"]


def test_with_the_temp_dir_full_too_the_summary_goes_to_stdout(clips, tmp_path, disk_full, capsys):
    out, tmp, refuse_temp = disk_full
    refuse_temp()
    d = _folder(tmp_path, clips, "a")
    code = main(["score", str(d), "--out-dir", str(out), "--judge", "none", "--asr", "off"])
    got = capsys.readouterr()
    assert code == 1, got.err
    assert "nor to a temp file" in got.err and "here it is on stdout" in got.err
    assert "summary on stdout" in " ".join(got.err.split())
    sm = json.loads(got.out)
    assert sm["n_scored"] == 1 and sm["calls"][0]["result"] is None
    assert sm["calls"][0]["metrics"]["latency_count"] > 0  # the call's figures survive in the summary
    assert not list(tmp.iterdir()) and not list(out.glob("*.json"))


def _summary_at(p: Path) -> tuple[dict, dict[str, dict]]:
    sm = json.loads(p.read_text())
    return sm, {Path(r["file"]).name: r for r in sm["calls"]}
