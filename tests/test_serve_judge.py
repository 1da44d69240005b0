"""``livejudge serve-judge`` without Ray (fakes for Ray's start and stop): SIGTERM and SIGHUP shut
down Serve and Ray as Ctrl-C does and exit 143 / 129 (a new user's trial: after SIGTERM, Ray's own
handler aborted the process and its DashboardAgent and RuntimeEnvAgent ran on, re-parented to
PID 1); the startup line names the head the service loaded, with its validity line, and --help
says what --judge auto loads. The real service under a real SIGTERM: tests/test_ray_serve.py."""

from __future__ import annotations

import os
import signal
import time

import pytest

from livejudge.commands import serve_judge
from livejudge.commands.cli import main
from livejudge.commands.runner import validity_text
from livejudge.judge.model.judge import load_judge, resolve_kind

URL = "http://127.0.0.1:8011/judge"


@pytest.fixture
def fake_ray(monkeypatch):
    """Ray's start and stop replaced: ``start_ray`` installs a SIGTERM handler as Ray's does (Ray's
    aborts the process; this one records that it ran and raises SystemExit(1), which ``main`` does
    not turn into an exit code); ``stop_service`` records when it ran, and ``then`` runs inside it."""
    calls: list[str] = []
    state = {"then": None, "during_start": None, "info": load_judge("acoustic").info()}

    def ray_handler(signum, frame):
        calls.append("ray's handler")
        raise SystemExit(1)

    def start_ray(address):
        calls.append("start_ray")
        signal.signal(signal.SIGTERM, ray_handler)

    def start_service(**kw):
        calls.append("start_service")
        if state["during_start"] is not None:
            os.kill(os.getpid(), state["during_start"])
            time.sleep(5)  # the handler raises first
        return URL

    def stop_service():
        calls.append("stop_service")
        if state["then"] is not None:
            state["then"]()

    monkeypatch.setattr(serve_judge, "start_ray", start_ray)
    monkeypatch.setattr(serve_judge, "start_service", start_service)
    monkeypatch.setattr(serve_judge, "stop_service", stop_service)
    monkeypatch.setattr(serve_judge, "service_info", lambda url: state["info"])
    monkeypatch.setattr(serve_judge, "cluster_capacity", lambda: state["capacity"])
    state["capacity"] = {"CPU": 2.0, "GPU": 0.0}
    state["calls"] = calls
    return state


def _stop_with(monkeypatch, signum: int) -> None:
    def wait():
        os.kill(os.getpid(), signum)
        time.sleep(5)  # interrupted by the handler
        raise AssertionError(f"{signal.Signals(signum).name} did not stop the wait")

    monkeypatch.setattr(serve_judge, "wait_for_stop", wait)


@pytest.mark.parametrize("signum,code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 0)])
def test_each_stop_signal_shuts_down_serve_and_ray_and_exits_with_its_code(fake_ray, monkeypatch, capsys,
                                                                           signum, code):
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    _stop_with(monkeypatch, signum)
    assert main(["serve-judge", "--judge", "acoustic"]) == code
    assert fake_ray["calls"] == ["start_ray", "start_service", "stop_service"]  # Ray's handler never ran
    err = capsys.readouterr().err
    if code:
        assert err.rstrip().endswith(f"livejudge: stopped by {signal.Signals(signum).name}")
    # the test process gets its own handlers back
    assert {s: signal.getsignal(s) for s in before} == before


def test_a_second_sigterm_while_stopping_waits_for_the_shutdown(fake_ray, monkeypatch, capfd):
    """A second SIGTERM (systemd, Docker) while Serve and Ray shut down must not cut the shutdown
    short: it prints one line and the shutdown goes on; the exit code stays the first signal's."""
    finished = []

    def again():
        for _ in range(2):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
        finished.append(True)

    fake_ray["then"] = again
    _stop_with(monkeypatch, signal.SIGTERM)
    assert main(["serve-judge"]) == 143
    assert finished == [True] and fake_ray["calls"].count("stop_service") == 1
    err = capfd.readouterr().err  # the handler writes to fd 2 (async-signal safe)
    assert err.count("still stopping the judge service (Serve, then Ray); please wait") == 1


def test_a_signal_while_serve_starts_still_stops_ray(fake_ray, monkeypatch):
    """SIGTERM after Ray has started but before the deployment is up: Ray is stopped all the same."""
    fake_ray["during_start"] = signal.SIGTERM
    _stop_with(monkeypatch, signal.SIGINT)  # never reached
    assert main(["serve-judge"]) == 143
    assert fake_ray["calls"] == ["start_ray", "start_service", "stop_service"]


def test_startup_line_names_the_loaded_head_and_prints_its_validity_line(fake_ray, monkeypatch, capsys):
    """The startup line said "judge service (auto)"; it names the head the service loaded and its
    version, then prints the validity line as ``score`` prints it."""
    _stop_with(monkeypatch, signal.SIGTERM)
    info = fake_ray["info"]
    assert main(["serve-judge"]) == 143
    lines = capsys.readouterr().err.splitlines()
    start = next(i for i, x in enumerate(lines) if "judge service (" in x)
    assert lines[start].startswith(f"livejudge: judge service ({info['head']} {info['head_version']}) at {URL} — "
                                   f"sessions: --judge-url {URL}")
    assert info["head"] == "acoustic-fitted" and lines[start + 1] == validity_text(info)
    # a service that does not answer its info: the kind asked for, no validity line
    fake_ray["info"] = {}
    assert main(["serve-judge", "--judge", "whisper"]) == 143
    lines = capsys.readouterr().err.splitlines()
    start = next(i for i, x in enumerate(lines) if "judge service (" in x)
    assert f"judge service (whisper) at {URL}" in lines[start] and "validity" not in lines[start + 1]


def test_help_says_what_auto_loads_and_the_signal_exit_codes(capsys, monkeypatch):
    """--help said auto was "whisper with livejudge[asr], else acoustic"; auto is the whisper judge
    from the core install (``resolve_kind``), as ``score --help`` and docs/judge.md say."""
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit):
        main(["serve-judge", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert resolve_kind("auto") == "whisper"
    assert "auto: the whisper judge (from the core install" in text and "no livejudge[asr] needed" in text
    assert "else acoustic" not in text
    tail = text[text.rfind("exit codes:"):]
    assert "143 stopped by SIGTERM · 129 by SIGHUP" in tail and "no Ray process is left behind" in tail


def test_what_can_be_checked_before_ray_starts_is_one_line_and_exit_2(fake_ray, capsys, tmp_path):
    """A port in use, a flag out of range, a head that cannot load: 30–50 lines of Ray traceback and
    exit 1, the head's path never named (a trial). Now one line, exit 2, and Ray is never started."""
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    cases = [(["--port", "99999"], "--port must be 1–65535, got 99999"),
             (["--replicas", "0"], "--replicas must be at least 1, got 0"),
             (["--replica-gpus", "-1"], "--replica-cpus and --replica-gpus must be ≥ 0"),
             (["--port", str(port)], f"port {port} on 127.0.0.1 is in use"),
             (["--head", str(tmp_path / "nope")], f"cannot load its judge: head directory not found: {tmp_path / 'nope'}"),
             (["--judge", "qwen-omni"], "--judge qwen-omni needs --head DIR"),
             (["--judge", "qwen-omni", "--head", "whisper-fitted"], "head was trained for backbone whisper")]
    try:
        for argv, needle in cases:
            assert main(["serve-judge", *argv]) == 2, argv
            err = capsys.readouterr().err
            assert needle in err and len(err.strip().splitlines()) == 1, (argv, err)
    finally:
        taken.close()
    assert fake_ray["calls"] == []


def test_a_deployment_or_cluster_that_fails_is_one_line_and_ray_is_stopped(fake_ray, monkeypatch, capsys):
    def failing(**kw):
        raise RuntimeError("Deploying application livejudge-judge failed: Failed to update the deployments "
                           "['JudgeService'].\nTraceback (most recent call last):\n  File ...")

    monkeypatch.setattr(serve_judge, "start_service", failing)
    assert main(["serve-judge", "--port", "8011"]) == 1
    err = capsys.readouterr().err
    assert "the judge service did not start: Deploying application livejudge-judge failed" in err
    assert "Traceback" not in err and fake_ray["calls"] == ["start_ray", "stop_service"]

    def no_cluster(address):
        raise ConnectionError("ray client connection timeout")

    monkeypatch.setattr(serve_judge, "start_ray", no_cluster)
    assert main(["serve-judge", "--port", "8011", "--ray-address", "ray://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert "no Ray cluster answers at --ray-address ray://127.0.0.1:1" in err and "ray start --head" in err


def test_replicas_beyond_the_machine_are_refused_not_left_pending(fake_ray, monkeypatch, capsys):
    """`serve-judge --replicas 4` on a 2-CPU machine printed nothing and served nothing for minutes
    (Serve keeps a replica it cannot place pending; a trial). A local Ray too small for the replicas
    is now one line, exit 2, and Ray is stopped; on a cluster (which may grow) it is a warning."""
    _stop_with(monkeypatch, signal.SIGTERM)
    assert main(["serve-judge", "--replicas", "4"]) == 2
    err = capsys.readouterr().err
    assert ("--replicas 4 × --replica-cpus 1 need 4 CPU(s) and the Ray cluster has 2: Serve waits for them "
            "without end; lower --replicas or --replica-cpus") in err
    assert fake_ray["calls"] == ["start_ray", "stop_service"]  # nothing deployed, Ray stopped
    fake_ray["calls"].clear()
    assert main(["serve-judge", "--judge", "acoustic", "--replica-gpus", "1"]) == 2
    assert "need 1 GPU(s) and the Ray cluster has 0" in capsys.readouterr().err
    fake_ray["calls"].clear()
    assert main(["serve-judge", "--replicas", "2", "--replica-cpus", "1"]) == 143  # fits exactly
    assert fake_ray["calls"] == ["start_ray", "start_service", "stop_service"]
    fake_ray["calls"].clear()
    assert main(["serve-judge", "--replicas", "4", "--ray-address", "auto"]) == 143
    err = capsys.readouterr().err
    assert "warning: --replicas 4 × --replica-cpus 1 need 4 CPU(s) and the Ray cluster has 2: the service starts " \
           "when nodes join (an autoscaler), else never" in err and "start_service" in fake_ray["calls"]


def test_the_startup_line_of_a_service_on_every_interface_gives_a_usable_url(fake_ray, monkeypatch, capsys):
    """`--host 0.0.0.0` printed "sessions: --judge-url http://0.0.0.0:8127/judge", a URL no client can
    use (a trial). It now names 127.0.0.1 for this machine and this machine's address for others;
    Ctrl-C, which printed nothing after Ray's lines, now says the service stopped."""
    monkeypatch.setattr(serve_judge, "start_service", lambda **kw: f"http://{kw['host']}:{kw['port']}/judge")
    _stop_with(monkeypatch, signal.SIGINT)
    assert main(["serve-judge", "--host", "0.0.0.0", "--port", "8127"]) == 0
    err = capsys.readouterr().err
    assert ("at http://0.0.0.0:8127/judge — listening on every interface: sessions on this machine use "
            "--judge-url http://127.0.0.1:8127/judge, others this machine's address in its place") in err
    assert "sessions: --judge-url http://0.0.0.0" not in err
    assert err.rstrip().endswith("livejudge: stopped by Ctrl-C (Serve and Ray shut down)")
