"""Batch scoring on Ray (livejudge[ray]): the same per-call pipeline as ``--jobs`` as Ray tasks
on a local Ray; result documents identical to the local path's; a rejected file reported, a
transient failure retried once, a persistent one reported after its retry — never aborting."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from livejudge.commands.batch import ScoreOptions, SessionConfig, discover_calls, score_call
from livejudge.commands.cli import main
from livejudge.testing.dialogues import example_dialogue

ray = pytest.importorskip("ray", reason="livejudge[ray] not installed")

TIMING_FIELDS = ("compute_ms", "created_utc", "wall_s", "result")
"""Left out of the comparison: the judge's per-window compute time, the document's creation
time, the row's wall time, and the row's result path (a different --out-dir)."""


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the module (starting one takes ~10 s on 2 busy cores)."""
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    """4 short calls with a known timeline, one undecodable file and one empty file."""
    d = tmp_path_factory.mktemp("raycalls")
    for i in range(4):
        example_dialogue(seed=i).write(d / f"call_{i}.wav")
    (d / "garbage.wav").write_bytes(b"RIFF\x00\x00\x00\x00not a wave file at all")
    sf.write(str(d / "empty.wav"), np.zeros((0, 2), dtype="float32"), 16000)
    return d


def strip_timing(x):
    if isinstance(x, dict):
        return {k: strip_timing(v) for k, v in x.items() if k not in TIMING_FIELDS}
    if isinstance(x, list):
        return [strip_timing(v) for v in x]
    return x


@pytest.mark.slow  # a local Ray cluster (subprocesses): ~30 s with its start
def test_ray_batch_equals_local_jobs(local_ray, calls, tmp_path, capsys):
    local, onray = tmp_path / "local", tmp_path / "ray"
    common = ["--asr", "off", "--interval-s", "10"]
    assert main(["score", str(calls), "--out-dir", str(local), "--jobs", "1", *common]) == 1  # two broken files skipped
    assert main(["score", str(calls), "--out-dir", str(onray), "--ray", *common]) == 1  # two broken files skipped
    err = capsys.readouterr().err
    assert "garbage.wav" in err and "empty.wav" in err
    a = json.loads((local / "summary.json").read_text())
    b = json.loads((onray / "summary.json").read_text())
    assert (b["n_calls"], b["n_scored"], b["n_skipped"]) == (6, 4, 2)
    assert b["ray"] == {"address": "local", "retries": 1} and b["jobs"] == 2
    assert strip_timing(a["calls"]) == strip_timing(b["calls"])  # files, status, reasons, metrics
    assert a["medians"] == b["medians"]
    reasons = {Path(r["file"]).name: r["reason"] for r in b["calls"] if r["status"] != "ok"}
    assert "cannot decode" in reasons["garbage.wav"] and "no audio samples" in reasons["empty.wav"]
    for i in range(4):
        da = json.loads((local / f"call_{i}.json").read_text())
        db = json.loads((onray / f"call_{i}.json").read_text())
        assert len(db["judge"]) >= 4 and db["summary"]["latency_count"] >= 1
        assert strip_timing(da) == strip_timing(db)


@pytest.mark.slow  # a local Ray cluster (subprocesses)
def test_transient_failure_retried_once_persistent_one_reported(local_ray, calls, tmp_path):
    from livejudge.commands.batch import run_batch_ray

    log = tmp_path / "attempts.log"
    log.touch()

    def flaky(path, options):  # a closure: Ray ships it by value to the workers
        name = Path(path).name
        with open(log, "a") as f:
            f.write(name + "\n")
        tries = log.read_text().split().count(name)
        if name == "call_1.wav" and tries == 1:
            raise OSError("transient read error (first attempt)")
        if name == "call_2.wav":
            raise OSError("disk gone")
        return score_call(path, options)

    files = [p for p in discover_calls(calls) if p.name in ("call_0.wav", "call_1.wav", "call_2.wav", "garbage.wav")]
    opts = ScoreOptions(config=SessionConfig(judge_mode="every", interval_s=10.0))
    s = run_batch_ray(files, tmp_path / "out", opts, progress=False, score_fn=flaky)
    rows = {Path(r["file"]).name: r for r in s["calls"]}
    assert [rows[n]["status"] for n in ("call_0.wav", "call_1.wav", "call_2.wav", "garbage.wav")] == \
        ["ok", "ok", "skipped", "skipped"]
    assert rows["call_2.wav"]["reason"] == "failed after 2 attempts: OSError: disk gone"
    assert rows["call_2.wav"]["attempts"] == 2
    attempts = log.read_text().split()
    # the transient failure ran twice, the persistent one twice (then reported), the rejected file once
    assert (attempts.count("call_1.wav"), attempts.count("call_2.wav"), attempts.count("garbage.wav")) == (2, 2, 1)
    got = json.loads((tmp_path / "out" / "call_1.json").read_text())
    assert strip_timing(got) == strip_timing(json.loads(json.dumps(score_call(files[1], opts))))


def test_missing_ray_gives_install_hint(monkeypatch, calls, tmp_path, capsys):
    from livejudge.distributed import ray_batch

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"pip install 'livejudge\[ray\]'"):
        ray_batch.import_ray()
    assert main(["score", str(calls), "--out-dir", str(tmp_path / "o"), "--ray", "--asr", "off"]) == 2
    assert "livejudge[ray]" in capsys.readouterr().err


@pytest.mark.slow  # a local Ray cluster (subprocesses)
def test_a_stop_signal_cancels_the_ray_tasks_and_writes_the_summary(local_ray, calls, tmp_path):
    """A --ray batch stopped by SIGTERM (a CI timeout) died with no summary and left its tasks
    running; now the tasks not back are cancelled within seconds, the summary lists every call
    (the cancelled ones as interrupted, with why) and the batch ends by its signal (exit 143)."""
    import os
    import signal
    import threading
    import time

    from livejudge.commands.batch import run_batch_ray
    from livejudge.commands.runner import SignalExit

    files = sorted(calls.glob("call_*.wav"))
    out = tmp_path / "out"
    sent = []

    def stop_when_first_is_back():
        deadline = time.monotonic() + 120
        while not (out / "call_0.json").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGTERM)

    def slow_but_first(path, options):  # a closure: Ray ships it by value; every call but call_0 hangs
        if not path.endswith("call_0.wav"):
            time.sleep(300)
        return score_call(path, options)

    threading.Thread(target=stop_when_first_is_back, daemon=True).start()
    opts = ScoreOptions(config=SessionConfig(judge_mode="every"), judge="none", asr="off")
    with pytest.raises(SignalExit) as exc:
        run_batch_ray(files, out, opts, progress=False, score_fn=slow_but_first)
    assert exc.value.code == 143
    assert time.monotonic() - sent[0] < 20  # not the 300 s the hanging calls would take
    s = json.loads((out / "summary.json").read_text())
    assert s["n_calls"] == 4 and [Path(r["file"]).name for r in s["calls"]] == [f.name for f in files]
    status = {Path(r["file"]).name: r["status"] for r in s["calls"]}
    assert status == {"call_0.wav": "ok", "call_1.wav": "interrupted", "call_2.wav": "interrupted",
                      "call_3.wav": "interrupted"}
    assert s["stopped"].startswith("SIGTERM after 1 of 4 calls had finished: 3 Ray task(s) cancelled")
    assert all("its Ray task was cancelled" in r["reason"] for r in s["calls"] if r["status"] == "interrupted")


def test_ray_init_leaves_the_batch_stop_handlers_in_place(monkeypatch):
    """``ray.init`` replaces SIGTERM's handler (``sys.exit``), so a ``--ray`` batch that started its
    own local Ray died on SIGTERM with "*** SIGTERM received", exit 1 and no summary (a trial);
    the module fixture's Ray, started before the batch, hid it. ``init_ray`` now puts back the
    handlers the batch had installed. Here a stand-in Ray replaces them as ``ray.init`` does."""
    import signal

    from livejudge.distributed import ray_batch

    class FakeRay:
        def __init__(self):
            self.started = False

        def is_initialized(self):
            return self.started

        def init(self, **kw):
            self.started = True
            signal.signal(signal.SIGTERM, lambda *a: sys.exit(a[0]))  # what ray.init does
            signal.signal(signal.SIGINT, signal.SIG_DFL)

    def mine(signum, frame):
        pass

    fake = FakeRay()
    monkeypatch.setattr(ray_batch, "import_ray", lambda: fake)
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        signal.signal(signal.SIGTERM, mine)
        signal.signal(signal.SIGINT, mine)
        assert ray_batch.init_ray(None, 1) is True and fake.started
        assert signal.getsignal(signal.SIGTERM) is mine and signal.getsignal(signal.SIGINT) is mine
        assert ray_batch.init_ray(None, 1) is False  # already running: nothing touched
    finally:
        for s, h in before.items():
            signal.signal(s, h)


@pytest.mark.slow  # the real CLI starting its own local Ray (~15 s), then SIGTERM
def test_sigterm_to_a_ray_batch_that_started_its_ray_writes_the_summary(calls, tmp_path):
    """The trial's command: `score DIR --out-dir OUT --ray --jobs 1`, SIGTERM once the first result
    is written. It printed "*** SIGTERM received", exited 1 and wrote no summary; it now writes the
    summary (the calls not back marked interrupted) and exits 143, as SIGINT's 130 did."""
    import os
    import signal
    import subprocess
    import time

    src = tmp_path / "in"
    src.mkdir()
    for i in range(6):
        (src / f"c{i}.wav").write_bytes((calls / f"call_{i % 4}.wav").read_bytes())
    out = tmp_path / "out"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-c", "from livejudge.commands.cli import entry; entry()", "score",
                             str(src), "--out-dir", str(out), "--ray", "--jobs", "1", "--asr", "off"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while not list(out.glob("c*.json")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err[-3000:]
    assert "SIGTERM received" not in err and "summary written" in err, err[-3000:]
    s = json.loads((out / "summary.json").read_text())
    assert s["n_calls"] == 6 and s["stopped"].startswith("SIGTERM after")
    status = [r["status"] for r in s["calls"]]
    assert "ok" in status and set(status) <= {"ok", "interrupted"}
    assert (out / "summary.csv").exists()


class _RayKilledWhileStarting:
    """A stand-in Ray whose start is hit by SIGTERM: ``init`` installs Ray's handler (``sys.exit``),
    as ``ray.init`` does, and the signal arrives before it returns; ``shutdown`` is recorded."""

    def __init__(self):
        self.calls = []

    def is_initialized(self):
        return False

    def init(self, **kw):
        import os
        import signal
        import time

        self.calls.append("init")
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(signum))
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises first
        raise AssertionError("SIGTERM did not arrive")

    def shutdown(self):
        self.calls.append("shutdown")


def test_sigterm_while_ray_starts_writes_the_summary_and_stops_ray(calls, tmp_path, monkeypatch):
    """A re-check: SIGTERM 2–8 s into `score --ray` (Ray still starting, its own handler in force)
    exited 15 with no line and no summary, and left Ray's dashboard and runtime-env agents running.
    Ray is now shut down and the signal handed to the batch's handler: the summary lists every call
    as interrupted and the batch exits 143."""
    from livejudge.commands.batch import run_batch_ray
    from livejudge.commands.runner import SignalExit
    from livejudge.distributed import ray_batch

    fake = _RayKilledWhileStarting()
    monkeypatch.setattr(ray_batch, "import_ray", lambda: fake)
    files = sorted(calls.glob("call_*.wav"))
    out = tmp_path / "out"
    opts = ScoreOptions(config=SessionConfig(judge_mode="every"), judge="none", asr="off")
    with pytest.raises(SignalExit) as exc:
        run_batch_ray(files, out, opts, progress=False)
    assert exc.value.code == 143 and fake.calls == ["init", "shutdown"]
    s = json.loads((out / "summary.json").read_text())
    assert s["n_calls"] == 4 and {r["status"] for r in s["calls"]} == {"interrupted"}
    assert s["stopped"].startswith("SIGTERM after 0 of 4 calls had finished")


def test_sigterm_while_ray_starts_reaches_the_callers_handler(monkeypatch):
    """The same start under `serve-judge`, whose handler (``raise_on_terminate``) raises: the caller
    gets its SignalExit (main's 143 and "stopped by SIGTERM"), not Ray's exit 15, and Ray is shut down."""
    import signal

    from livejudge.commands.runner import SignalExit, raise_on_terminate
    from livejudge.distributed.ray_batch import guarded_init

    fake = _RayKilledWhileStarting()
    old = raise_on_terminate()
    mine = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(SignalExit) as exc:
            guarded_init(fake)
        assert exc.value.code == 143 and fake.calls == ["init", "shutdown"]
        assert signal.getsignal(signal.SIGTERM) is mine  # the caller's handler is back, not Ray's
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
