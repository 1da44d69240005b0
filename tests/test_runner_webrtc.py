"""SmallWebRTC end to end: examples/runner_bot.py under Pipecat's runner, `livejudge attach --webrtc`.

Same truth as test_runner_eval.py (the bot's own log on CLOCK_MONOTONIC, placed user clips),
with one more term that is measured, not hidden: the delay Opus + RTP + aiortc's audio jitter
buffer add on the bot → client leg (``source.webrtc.added_delay_ms``, measured in-process by
``measure_added_delay``). Expected response latency = audio_out − true user offset + reply
lead + added delay, within LATENCY_TOL_S = 40 ms; yield within 150 ms (see below). The uplink's codec/jitter delay is inside
the bot's log already (its VAD hears the user later), so it needs no term.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

pytest.importorskip("pipecat")
pytest.importorskip("uvicorn")
pytest.importorskip("aiortc")

from livejudge.commands.attach import free_port, stop_agent  # noqa: E402
from livejudge.commands.cli import main  # noqa: E402
from livejudge.sources.runner_probe import pick_route, start_runner_bot  # noqa: E402
from livejudge.sources.webrtc import measure_added_delay  # noqa: E402

from test_runner_eval import check_call, read_log, write_turns  # noqa: E402


def test_added_delay_is_measured():
    d = asyncio.run(measure_added_delay(n_clicks=4))
    # aiortc prefetches 4 × 20 ms packets before it decodes; plus one 20 ms Opus frame
    assert d["n"] == 4 and 60 <= d["added_delay_ms"] <= 200, d


def _webrtc_call(tmp_path, capsys) -> tuple[dict, float]:
    """One scripted call over SmallWebRTC, checked against the bot's log; (figures, added_s)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = tmp_path / "bot.jsonl"
    proc = start_runner_bot(port, log=str(log), extra=["--tts", "clips", "--behaviour", "stock"])
    wavs = write_turns(tmp_path)
    out = tmp_path / "out.json"
    since = time.monotonic()
    try:
        assert pick_route(f"http://127.0.0.1:{port}", "webrtc").name == "webrtc"
        code = main(["attach", "--webrtc", f"http://127.0.0.1:{port}", "--input-wav", *wavs, "--barge-in", "3:1.2",
                     "--no-playback", "--json", str(out), "--judge", "none", "--display", "none",
                     "--duration-s", "45"])
    finally:
        stop_agent(proc)
    assert code == 0, capsys.readouterr().err
    result = json.loads(out.read_text())
    added_s = result["source"]["webrtc"]["added_delay_ms"] / 1000
    alog = read_log(log, result["source"]["attach"]["t0_monotonic"], since)
    for e in alog:  # the bot → client leg, as measured: the expected playout of what the bot sent
        e["t_s"] += added_s
    # yield: the bot's SmallWebRTC track is not flushed on interruption; up to one 40 ms output
    # chunk queued in it (plus its 10 ms framing) still plays after the bot's "yield" line
    figures = check_call(result, alog, yield_tol_s=0.15)
    kinds = {n["kind"] for n in result["framework_events"]}
    assert {"rtvi.bot-ready", "rtvi.bot-started-speaking"} <= kinds
    return figures, added_s


@pytest.mark.slow
def test_webrtc_matches_bot_log(tmp_path, capsys, tried_twice):
    """A real-time WebRTC leg on the test machine: Opus, RTP and aiortc's jitter buffer on
    localhost, paced by wall clock. On a busy 2-core CI machine a call now and then misses the
    bounds by scheduling alone (110 ms on a first reply once in eight clean-clone runs, the
    jitter buffer's delay that call differing from the one measured before it), so the call is
    tried twice with fresh ports and the same assertions (``tried_twice``)."""
    figures, added_s = tried_twice("runner webrtc", lambda attempt: _webrtc_call(tmp_path / f"try{attempt}", capsys))
    with capsys.disabled():
        print(f"\n[runner webrtc] codec+jitter added {added_s * 1000:.1f} ms; latency error vs bot log + added "
              f"delay (ms): {figures['latency_err_ms']}; yield error {figures['yield_err_ms']} ms")


@pytest.mark.slow
def test_a_bot_killed_mid_call_fails_the_call_within_seconds(tmp_path, capsys):
    """A trial: `kill -9` on the runner bot during a --webrtc call exited 0 about 29 s later (ICE's
    consent timeout) with ended "agent closed", every scripted turn "played" into the dead peer. The
    link now asks whether the runner still accepts connections once the bot's track stalls
    (``STALL_PROBE_S``; a live bot streams silence between replies), so the call fails (exit 1,
    "failed: dropped") within seconds of the kill, and a track that ends without the bot's
    peerLeft is a drop, not a hang-up."""
    import signal
    import threading

    from livejudge.sources.webrtc import STALL_PROBE_S

    port = free_port()
    proc = start_runner_bot(port, extra=["--tts", "clips", "--behaviour", "stock"])
    wavs = write_turns(tmp_path)
    out = tmp_path / "out.json"
    events = tmp_path / "events.jsonl"
    killed = {}

    def agent_heard() -> bool:
        """Whether the event log (written line by line, unbuffered) holds the bot's speech: the
        WebRTC call is connected and the bot answering. A fixed 4 s from the start had killed the
        bot before a busy CI machine connected, and the call read "failed: unreachable"."""
        try:
            lines = events.read_text().splitlines()
        except OSError:
            return False
        for line in lines:
            try:
                if json.loads(line).get("channel") == "agent":
                    return True
            except ValueError:
                pass  # a line being written
        return False

    def kill_when_the_call_runs():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not agent_heard():
            time.sleep(0.1)
        killed["t"], killed["heard"] = time.monotonic(), agent_heard()
        proc.send_signal(signal.SIGKILL)

    t = threading.Thread(target=kill_when_the_call_runs, daemon=True)
    t.start()
    try:
        code = main(["attach", "--webrtc", f"http://127.0.0.1:{port}", "--input-wav", *wavs, "--no-playback",
                     "--json", str(out), "--events", str(events), "--judge", "none", "--display", "none", "--duration-s", "60"])
        ended_at = time.monotonic()
    finally:
        stop_agent(proc)
    err = capsys.readouterr().err
    assert killed.get("heard"), f"the bot was never heard within 60 s; nothing was killed mid-call: {err}"
    assert code == 1, err
    doc = json.loads(out.read_text())
    assert doc["source"]["ended"] == "failed: dropped", doc["source"]["ended"]
    assert "refuses connections: the bot process died" in " ".join(doc["errors"]), doc["errors"]
    # the stall probe's period plus its check, far inside ICE's 30 s (generous for a busy CI machine)
    assert ended_at - killed["t"] < STALL_PROBE_S + 8.0, ended_at - killed["t"]
