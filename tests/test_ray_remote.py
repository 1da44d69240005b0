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
