"""RemoteJudge and the LJW1 wire format without Ray: windows round-trip exactly; a malformed
body is refused in one line; a slow service never holds up a live session's audio, and its
unjudged windows are counted and said once."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from livejudge.distributed.remote import (
    JudgeUnavailable,
    RemoteJudge,
    WireError,
    decode_windows,
    encode_windows,
    result_from_wire,
    result_to_wire,
)
from livejudge.judge.model.judge import load_judge
from livejudge.session import Session, SessionConfig, stream_call
from livejudge.testing.dialogues import example_dialogue


@pytest.fixture(scope="module")
def windows():
    d = example_dialogue(seed=2)
    s = Session(SessionConfig(judge_mode="every"))
    stream_call(s, d.call)
    return [s.snapshot(t) for t in (10.0, 30.0, 40.0)]


def test_windows_and_results_round_trip_exactly(windows):
    got = decode_windows(encode_windows(windows))
    for a, b in zip(windows, got, strict=True):
        assert (a.start_s, a.end_s, a.sample_rate) == (b.start_s, b.end_s, b.sample_rate)
        assert a.user.tobytes() == b.user.tobytes() and a.agent.tobytes() == b.agent.tobytes()
        assert (a.segments, a.turns, a.transitions, a.barge_ins, a.backchannels) == \
            (b.segments, b.turns, b.transitions, b.barge_ins, b.backchannels)
    assert sum(len(w.turns) for w in got) >= 5 and any(w.barge_ins for w in got)
    results = load_judge("acoustic").judge(windows)
    back = [result_from_wire(json.loads(json.dumps(result_to_wire(r)))) for r in results]
    assert back == results  # floats survive JSON exactly


def test_malformed_requests_are_refused_in_one_line(windows):
    body = encode_windows(windows[:1])
    with pytest.raises(WireError, match="LJW1"):
        decode_windows(b"GARBAGE" + body)
    with pytest.raises(WireError, match="past the end"):
        decode_windows(body[:-4])
    with pytest.raises(WireError, match="after the last window"):
        decode_windows(body + b"\0\0\0\0")
    with pytest.raises(ValueError, match="http://"):
        RemoteJudge("127.0.0.1:8000/judge")


class _SlowHandler(BaseHTTPRequestHandler):
    delay_s = 3.0

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(self.delay_s)
        self.send_response(503)
        self.end_headers()

    def log_message(self, *a):
        pass


def test_slow_service_never_blocks_live_audio(windows):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/judge"
    try:
        rj = RemoteJudge(url, timeout_s=0.3, retry_s=60.0)
        with pytest.raises(JudgeUnavailable, match="no answer within the timeout"):
            rj.judge(windows[:2])
        assert rj.judge(windows[2:]) == []  # quiet during the outage, but counted
        assert rj.unavailable_windows == 3 and rj.info()["judge_unavailable_windows"] == 3

        # a live session streamed as fast as possible: pushes never wait for the judge
        d = example_dialogue(seed=1)
        s = Session(SessionConfig(judge_mode="live", interval_s=2.0), judge=RemoteJudge(url, timeout_s=1.5))
        worst = 0.0
        for i in range(0, len(d.call.user), 320):
            t0 = time.perf_counter()
            s.push("user", d.call.user[i:i + 320], i / 16000)
            s.push("agent", d.call.agent[i:i + 320], i / 16000)
            worst = max(worst, time.perf_counter() - t0)
        doc = s.close()
        assert worst < 1.0  # the 1.5 s judge timeout never reached the audio path
        n_windows = int(doc["duration_s"] // 2.0) + 1  # every 2 s, plus the final window
        unjudged = doc["judge_info"]["judge_unavailable_windows"]
        assert doc["judge"] == [] and unjudged >= 1
        assert unjudged + doc["summary"]["dropped_windows"] == n_windows
        assert len([e for e in doc["errors"] if "unavailable" in e]) == 1
        assert doc["summary"]["latency_count"] >= 3  # timing measured throughout
    finally:
        server.shutdown()


class _DiesAfter(BaseHTTPRequestHandler):
    """A judge service (the acoustic judge) that answers its first ``limit`` windows, then 503."""

    judge = None
    limit = 6
    served = 0

    def _send(self, doc: dict) -> None:
        body = json.dumps(doc).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._send(self.judge.info())

    def do_POST(self):
        from livejudge.distributed.remote import decode_request

        windows, _ = decode_request(self.rfile.read(int(self.headers["Content-Length"])))
        if type(self).served + len(windows) > self.limit:
            self.send_response(503)
            self.end_headers()
            return
        type(self).served += len(windows)
        self._send({"results": [result_to_wire(r) for r in self.judge.judge(windows)], "info": self.judge.info()})

    def log_message(self, *a):
        pass


def test_a_service_dying_mid_call_is_counted_in_the_summary_and_gated(tmp_path, capsys):
    """A new user's trial: the judge service died 8 s into a call; the summary line said "mean
    P(human) 0.00 · windows 6 judged (5 without evidence), 0 dropped" and the 16 windows never
    judged were only in judge_info. They are now counted in the summary line and the summary
    (``judge_unavailable_windows``, a gate metric), and a P(human) gate fails such a call."""
    from livejudge.commands.cli import main

    _DiesAfter.judge, _DiesAfter.served = load_judge("acoustic"), 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _DiesAfter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/judge"
    try:
        wav = example_dialogue(seed=0).write(tmp_path / "call.wav")
        out = tmp_path / "r.json"
        code = main(["score", str(wav), "--judge-url", url, "--asr", "off", "--json", str(out),
                     "--fail-if", "judge_unavailable_windows>0", "--fail-if", "p_human_mean>2",
                     "--fail-if", "latency_p90_s>100"])
    finally:
        server.shutdown()
    assert code == 3
    doc = json.loads(out.read_text())
    sm = doc["summary"]
    n = sm["judged_windows"] + sm["judge_unavailable_windows"]
    assert sm["judged_windows"] == 6 and sm["judge_unavailable_windows"] == n - 6 > 6
    assert doc["judge_info"]["judge_unavailable_windows"] == sm["judge_unavailable_windows"]
    assert sm["mean_p_human"] is not None  # the document keeps the figure; the gate does not trust it
    err = capsys.readouterr().err
    assert (f"· windows 6 judged ({sm['no_evidence_windows']} without evidence), {n - 6} not judged "
            "(judge service unavailable; gate it with --fail-if 'judge_unavailable_windows>0'), 0 dropped") in err
    assert "most were not judged, so a --fail-if on P(human) fails" in err
    assert f"FAIL judge_unavailable_windows>0: judge_unavailable_windows = {n - 6} (> 0)" in err
    assert f"FAIL p_human_mean>2: p_human_mean was not measured: the judge service could not judge {n - 6}" in err
    assert "FAIL latency_p90_s" not in err and len([e for e in doc["errors"] if "unavailable" in e]) == 1
    # the report's card says it too
    from livejudge.outputs.html_report import render_html

    assert f"{n - 6} not judged (judge service unavailable)" in render_html(doc)


class _NotAJudge(BaseHTTPRequestHandler):
    """A web server that is not a judge service: 404 on every path but /page, which is HTML, and
    /json, which is a JSON object that is not a judge's info."""

    def do_GET(self):
        body = b'{"ok": 1}' if self.path.startswith("/json") else b"<html>hello</html>"
        self.send_response(200 if self.path.startswith(("/page", "/json")) else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *a):
        pass


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_wrong_or_dead_judge_url_on_a_recorded_call_is_exit_2_before_scoring(tmp_path, capsys):
    """A trial: `score call.wav --judge-url http://…/wrong` said "did not answer: HTTP 404" and went on,
    exit 0, "windows 0 judged, 22 not judged"; a batch against a dead URL read "4 of 4 calls scored"
    with no P(human), exit 0, and the note four times. For a recorded call nothing is lost by asking
    again, so a URL with no judge service, or a service that does not answer, is now one line and
    exit 2 before anything is scored; a live call refuses only the wrong URL (an outage may end)."""
    from livejudge.commands.cli import main

    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotAJudge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    dead = f"http://127.0.0.1:{_free_port()}/judge"
    calls = tmp_path / "calls"
    calls.mkdir()
    for i in range(2):
        example_dialogue(seed=i).write(calls / f"c{i}.wav")
    wav = calls / "c0.wav"
    try:
        for url, said in ((f"{base}/wrong", f"{base}/wrong answered GET {base}/wrong/info with HTTP 404 Not Found: "
                                            "no livejudge judge service there (serve-judge prints its URL, which ends "
                                            "in /judge): fix --judge-url"),
                          (f"{base}/page", "with something other than JSON: no livejudge judge service there"),
                          (f"{base}/json", "with JSON that is not a judge's info (no backbone): no livejudge judge "
                                           "service there"),
                          (dead, f"judge service at {dead} did not answer: [Errno 111] Connection refused: start it "
                                 "(livejudge serve-judge) or fix --judge-url; nothing was scored")):
            for argv in (["score", str(wav), "--json", str(tmp_path / "r.json")],
                         ["score", str(calls), "--out-dir", str(tmp_path / "out")],
                         ["replay", str(wav), "--speed", "max", "--display", "none"]):
                code = main([*argv, "--judge-url", url, "--asr", "off"])
                err = capsys.readouterr().err
                assert code == 2 and said in err and err.count("\n") == 1, (argv, err)
            assert not (tmp_path / "r.json").exists() and not (tmp_path / "out" / "summary.json").exists()
        # a live call: the wrong URL is refused before dialling; a dead service is a note, and the call goes on
        import soundfile as sf

        from livejudge.testing.dialogues import load_clip

        caller = tmp_path / "caller.wav"
        sf.write(str(caller), load_clip("cmu_cards_001"), 16000)
        live = ["--display", "none", "--no-playback", "--input-wav", str(caller)]
        code = main(["attach", "--ws-url", "ws://127.0.0.1:9", "--judge-url", f"{base}/wrong", *live])
        err = capsys.readouterr().err
        assert code == 2 and "no livejudge judge service there" in err and "ws://127.0.0.1:9" not in err
        main(["attach", "--ws-url", f"ws://127.0.0.1:{_free_port()}", "--judge-url", dead, *live])
        err = capsys.readouterr().err
        assert f"note: judge service at {dead} did not answer" in err and "timing is measured" in err
    finally:
        server.shutdown()


def test_the_embeddings_refuse_a_judge_url_with_no_judge_service_and_warn_on_a_dead_one():
    """The last note: the Pipecat observer and the LiveKit tap took any judge_url without asking it,
    so a wrong one showed only as a call of unjudged windows at its end (a trial: "HTTP 501" per
    window). They now ask the service for its info, as `attach --judge-url` does: no judge service
    at the URL is a ValueError at construction; a service that does not answer is a warning (it may
    come up), and the call is measured."""
    from livejudge.distributed.remote import embedded_remote_judge

    pytest.importorskip("pipecat")
    from livejudge.pipecat import LiveJudgeObserver

    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotAJudge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    dead = f"http://127.0.0.1:{_free_port()}/judge"
    try:
        with pytest.raises(ValueError, match=rf"^livejudge.pipecat: {base}/wrong answered GET {base}/wrong/info "
                                             r"with HTTP 404 Not Found: no livejudge judge service there .*fix judge_url"):
            LiveJudgeObserver(judge_url=f"{base}/wrong", asr="off")
        with pytest.raises(ValueError, match="something other than JSON: no livejudge judge service there"):
            LiveJudgeObserver(judge=f"{base}/page", asr="off")
        said: list[str] = []
        judge = embedded_remote_judge(dead, "livejudge.livekit.attach", said.append)
        assert said == [f"judge service at {dead} did not answer: [Errno 111] Connection refused; timing is "
                        "measured, windows it cannot judge are counted"]
        assert judge.url == dead
        obs = LiveJudgeObserver(judge_url=dead, asr="off")  # a dead service: constructed, and it warns
        assert isinstance(obs.core.session.judge, RemoteJudge) and obs.core.session.judge.url == dead
        import asyncio

        asyncio.run(obs.close())
    finally:
        server.shutdown()
