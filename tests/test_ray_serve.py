"""The judge service on Ray Serve (livejudge[ray]): 8 sessions judged through it in shared
batches give the in-process judge's P(human) per window (to 1e-6); a service stopped mid-call
leaves the sessions measuring timing, with the unjudged windows counted and said once."""

import socket
import threading

import pytest

from livejudge.audio import TwoChannelAudio
from livejudge.distributed.remote import RemoteJudge
from livejudge.judge.model.judge import load_judge
from livejudge.session import Session, SessionConfig, stream_call
from livejudge.testing.dialogues import example_dialogue

ray = pytest.importorskip("ray", reason="livejudge[ray] not installed")
serve = pytest.importorskip("ray.serve")

P_TOL = 1e-6
CALL_S = 20.0  # each session streams the first 20 s of a call
CONFIG = SessionConfig(judge_mode="every", interval_s=4.0)  # windows at 4, 8, …, 20 s: 5 per session


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# every test here shares one Ray Serve deployment (a local Ray cluster: subprocesses, ~25 s to start)
pytestmark = pytest.mark.slow

@pytest.fixture(scope="module")
def service():
    """One local Ray + Serve for the module: the main judge app and a second one to kill."""
    from livejudge.distributed.service import start_service

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    port = _free_port()
    url = start_service(port=port, num_cpus=0.5)
    kill_url = start_service(port=port, num_cpus=0.5, name="livejudge-kill", route="/kill")
    yield url, kill_url
    serve.shutdown()
    if started:
        ray.shutdown()


def _call(seed: int) -> TwoChannelAudio:
    d = example_dialogue(seed=seed)
    n = int(CALL_S * 16000)
    return TwoChannelAudio(d.call.user[:n].copy(), d.call.agent[:n].copy(), 16000, {"user": 0, "agent": 1})


@pytest.fixture(scope="module")
def reference():
    """Each call judged in-process (the same Session pipeline)."""
    judge = load_judge("auto")  # the service's default, as livejudge score picks it
    out = {}
    for seed in range(8):
        s = Session(CONFIG, judge=judge)
        stream_call(s, _call(seed))
        out[seed] = s.close()
    return out


def test_eight_sessions_through_the_service_equal_in_process(service, reference):
    url, _ = service
    docs: dict[int, dict] = {}

    def run(seed):
        s = Session(CONFIG, judge=RemoteJudge(url, timeout_s=30.0))  # generous: 8 sessions on 2 busy cores
        stream_call(s, _call(seed))
        docs[seed] = s.close()

    threads = [threading.Thread(target=run, args=(seed,)) for seed in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert sorted(docs) == list(range(8))
    for seed in range(8):
        got, want = docs[seed], reference[seed]
        assert got["errors"] == [] and got["judge_info"]["judge_unavailable_windows"] == 0
        assert [w["t_s"] for w in got["judge"]] == [w["t_s"] for w in want["judge"]] == [4.0, 8.0, 12.0, 16.0, 20.0]
        assert got["judge_info"]["head"] == want["judge_info"]["head"]
        assert got["summary"] == want["summary"]  # timing untouched by where the judge runs
    # full-precision P(human) per window (the documents round to 4 places): judge the same windows both ways
    s = Session(CONFIG)
    stream_call(s, _call(3))
    windows = [s.snapshot(t) for t in (8.0, 16.0, 20.0)]
    remote = RemoteJudge(url, timeout_s=30.0).judge(windows)
    local = load_judge("auto").judge(windows)
    for r, l in zip(remote, local, strict=True):
        assert abs(r.classifier_p_human - l.classifier_p_human) <= P_TOL
        assert (r.p_human is None) == (l.p_human is None)  # no evidence: None on both sides
        assert all(abs(r.dimensions[k].score - l.dimensions[k].score) <= P_TOL for k in l.dimensions)
    info = RemoteJudge(url).fetch_info()
    assert info["windows"] >= 8 * 5 + 3
    assert info["batches"] < info["windows"]  # windows of different sessions shared a judge call


def test_service_killed_mid_call_sessions_carry_on(service, reference):
    _, kill_url = service
    sessions = [Session(CONFIG, judge=RemoteJudge(kill_url, timeout_s=30.0, retry_s=0.2)) for _ in range(2)]
    calls = [_call(seed) for seed in (0, 1)]
    half = int(10.0 * 16000)

    def feed(s, call, a, b):  # 20 ms chunks on the session clock, as a live source sends them
        for i in range(a, b, 320):
            s.push("user", call.user[i:i + 320], i / 16000)
            s.push("agent", call.agent[i:i + 320], i / 16000)

    for s, c in zip(sessions, calls):
        feed(s, c, 0, half)  # every mode: windows at 4 and 8 s are judged before this returns
    serve.delete("livejudge-kill")  # the service is gone mid-call
    for s, c in zip(sessions, calls):
        feed(s, c, half, len(c.user))
    docs = [s.close() for s in sessions]
    for doc, seed in zip(docs, (0, 1)):
        assert [w["t_s"] for w in doc["judge"]] == [4.0, 8.0]
        assert doc["judge_info"]["judge_unavailable_windows"] == 3  # 12, 16, 20 s
        unavailable = [e for e in doc["errors"] if "unavailable" in e]
        assert len(unavailable) == 1 and "/kill" in unavailable[0]
        assert doc["summary"]["latency_count"] == reference[seed]["summary"]["latency_count"] >= 1
        assert doc["turns"] == reference[seed]["turns"]  # timing measured to the end of the call
        assert doc["duration_s"] == reference[seed]["duration_s"] == CALL_S


def test_pipecat_observer_takes_judge_url(service):
    pytest.importorskip("pipecat")
    from livejudge.pipecat.observer import LiveJudgeCore

    url, _ = service
    core = LiveJudgeCore(judge_url=url, asr="off")
    try:
        assert isinstance(core.session.judge, RemoteJudge) and core.session.judge.url == url
    finally:
        core.close_blocking()
    core2 = LiveJudgeCore(judge=url, asr="off")
    try:
        assert isinstance(core2.session.judge, RemoteJudge)
    finally:
        core2.close_blocking()


def test_score_with_judge_url_equals_in_process(service, tmp_path):
    import json

    from livejudge.commands.cli import main

    url, _ = service
    wav = example_dialogue(seed=5).write(tmp_path / "call.wav")
    common = ["score", str(wav), "--asr", "off", "--interval-s", "10", "--display", "none"]
    assert main([*common, "--json", str(tmp_path / "local.json")]) == 0
    assert main([*common, "--judge-url", url, "--json", str(tmp_path / "remote.json")]) == 0
    a = json.loads((tmp_path / "local.json").read_text())
    b = json.loads((tmp_path / "remote.json").read_text())
    assert b["judge_info"]["service"] == url and b["judge_info"]["judge_unavailable_windows"] == 0
    assert b["judge_info"]["head"] == a["judge_info"]["head"]
    for doc in (a, b):
        doc.pop("created_utc"), doc.pop("judge_info")
        for w in doc["judge"]:
            w.pop("compute_ms")
    assert len(a["judge"]) == 5 and a == b


def test_windows_nobody_waits_for_are_skipped(service):
    """Load shedding: a window whose client timeout has run out before judging is not judged."""
    import json
    import urllib.request

    from livejudge.distributed.remote import CONTENT_TYPE, encode_windows

    url, _ = service
    s = Session(CONFIG)
    stream_call(s, _call(4))
    windows = [s.snapshot(8.0), s.snapshot(16.0)]
    before = RemoteJudge(url).fetch_info()
    req = urllib.request.Request(url, data=encode_windows(windows, timeout_s=0.0), method="POST",
                                 headers={"Content-Type": CONTENT_TYPE})
    with urllib.request.urlopen(req, timeout=30) as resp:
        doc = json.loads(resp.read())
    after = RemoteJudge(url).fetch_info()
    assert doc["results"] == [None, None]
    assert after["skipped"] - before["skipped"] == 2 and after["windows"] == before["windows"]


@pytest.mark.parametrize("signame,code", [("SIGTERM", 143), ("SIGHUP", 129)])
def test_serve_judge_stopped_by_a_signal_leaves_no_ray_process(signame, code):
    """A new user's trial: after `kill -TERM` of serve-judge, Ray's own SIGTERM handler aborted it
    (exit 134) and ray::DashboardAgent and ray::RuntimeEnvAgent ran on, re-parented to PID 1.
    SIGTERM and SIGHUP now shut down Serve and Ray as Ctrl-C does: 143 / 129, nothing left."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    psutil = pytest.importorskip("psutil")
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(root), "PYTHONUNBUFFERED": "1"}
    env.pop("RAY_ADDRESS", None)  # a Ray of its own, not the module's
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "livejudge.commands.cli", "serve-judge", "--judge", "acoustic",
                             "--port", str(port), "--replica-cpus", "0.5"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=root)
    try:
        deadline = time.monotonic() + 240
        err = []
        while not any("judge service (" in x for x in err):
            line = proc.stderr.readline()
            assert line and time.monotonic() < deadline, f"serve-judge never started: {''.join(err)[-2000:]}"
            err.append(line)
        started = next(x for x in err if "judge service (" in x)
        from livejudge.judge.model.head import head_label
        from livejudge.judge.model.judge import DEFAULT_ACOUSTIC_HEAD

        assert f"judge service ({head_label(DEFAULT_ACOUSTIC_HEAD)}) at http://127.0.0.1:{port}/judge" in started
        ray_procs = psutil.Process(proc.pid).children(recursive=True)
        assert len(ray_procs) >= 3  # gcs_server, raylet, its agents, Serve's actors
        proc.send_signal(getattr(signal, signame))
        rest = proc.communicate(timeout=180)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, rest[-2000:]
    assert rest.rstrip().endswith(f"livejudge: stopped by {signame}")
    _, alive = psutil.wait_procs(ray_procs, timeout=30)
    assert not alive, [(p.pid, p.name()) for p in alive]
