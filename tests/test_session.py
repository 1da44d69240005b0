"""Session mechanics: the judge never blocks live audio, silent channels, outputs on any exit."""

import json
import threading
import time

import numpy as np
import pytest

from livejudge.events import JudgeResult, SpeechSegment, Transition
from livejudge.commands.runner import run_session
from livejudge.session import Session, SessionConfig, stream_call
from livejudge.outputs.sinks import JsonlSink
from livejudge.testing.dialogues import example_dialogue


class SlowJudge:
    """A fake judge that takes ``delay_s`` per window (stands in for a slow GPU)."""

    def __init__(self, delay_s: float, gate: threading.Event | None = None):
        self.delay_s, self.gate, self.seen = delay_s, gate, []

    def judge(self, windows):
        if self.gate is not None:
            self.gate.wait(5)
        time.sleep(self.delay_s)
        self.seen.extend(w.end_s for w in windows)
        return [JudgeResult(w.end_s, w.start_s, w.end_s, 0.5, {}) for w in windows]

    def info(self):
        return {"backbone": "fake", "provenance": "prior"}


def test_live_mode_drops_stale_windows_and_never_blocks_audio():
    gate = threading.Event()  # the judge is stuck until the audio is all pushed
    judge = SlowJudge(0.0, gate)
    s = Session(SessionConfig(interval_s=1.0), judge=judge)
    x = np.zeros(160, dtype=np.float32)
    for i in range(1000):  # 10 s of audio in 10 ms chunks: 10 windows come due
        s.push("user", x, i * 0.01)
        s.push("agent", x, i * 0.01)
    # all pushes returned while the judge was blocked: the audio path did not wait
    gate.set()
    r = s.close()
    assert r["summary"]["dropped_windows"] >= 7
    assert r["summary"]["judged_windows"] + r["summary"]["dropped_windows"] >= 10
    assert judge.seen[-1] == pytest.approx(10.0, abs=0.02)  # the newest window was judged


def test_every_mode_judges_all_windows_on_the_grid():
    judge = SlowJudge(0.001)
    d = example_dialogue(seed=1)
    s = Session(SessionConfig(interval_s=2.0, judge_mode="every"), judge=judge)
    stream_call(s, d.call)
    r = s.close()
    ends = [j["window_end_s"] for j in r["judge"]]
    expected = [2.0 * k for k in range(1, int(d.call.duration_s // 2) + 1)]
    assert ends[: len(expected)] == pytest.approx(expected)
    assert r["summary"]["dropped_windows"] == 0
    assert r["judge"][-1]["window_end_s"] == pytest.approx(d.call.duration_s, abs=0.02)  # final window
    w = r["judge"][-1]
    assert w["window_end_s"] - w["window_start_s"] == pytest.approx(30.0)


def test_silent_channel_is_filled_so_segments_close_on_time():
    # agent sends audio only while it speaks (like a websocket bot); the user streams always
    d = example_dialogue(seed=0)
    s = Session(SessionConfig())
    agent_on = np.abs(d.call.agent) > 0.01
    for i in range(0, len(d.call.user), 320):
        t = i / 16000
        s.push("user", d.call.user[i:i + 320], t)
        if agent_on[i:i + 320].any():
            s.push("agent", d.call.agent[i:i + 320], t)
    r = s.close()
    truth = [round(t.gap_s, 2) for t in d.truth.transitions]
    assert [round(t["gap_s"], 2) for t in r["transitions"]] == pytest.approx(truth, abs=0.07)


def test_late_and_repeated_samples_are_dropped_and_gaps_are_silence():
    s = Session(SessionConfig())
    one = np.full(1600, 0.1, dtype=np.float32)
    s.push("user", one, 0.0)
    s.push("user", one, 0.05)  # half repeats: only the new 0.05 s is taken
    assert s._end["user"] == 1600 + 800
    s.push("user", one, 1.0)  # a gap: 0.85 s of silence inserted
    assert s._end["user"] == 16000 + 1600
    with pytest.raises(ValueError, match="'user' or 'agent'"):
        s.push("bot", one, 0.0)


def test_events_log_and_result_survive_a_failure(tmp_path):
    from livejudge.config import OutputConfig

    output = OutputConfig(display="none", json_out=str(tmp_path / "r.json"))

    d = example_dialogue(seed=2)
    log = tmp_path / "events.jsonl"
    s = Session(SessionConfig(), sinks=[JsonlSink(log)])

    def body(stop):
        n = len(d.call.user) // 2
        for i in range(0, n, 320):
            s.push("user", d.call.user[i:i + 320], i / 16000)
            s.push("agent", d.call.agent[i:i + 320], i / 16000)
        raise ConnectionError("connection dropped mid-call")

    code = run_session(s, body, title="t", output=output, failure=ConnectionError)
    assert code == 1
    r = json.loads((tmp_path / "r.json").read_text())
    assert r["duration_s"] == pytest.approx(d.call.duration_s / 2, abs=0.05)
    assert len(r["transitions"]) >= 3
    assert r["framework_events"][-1]["kind"] == "failed"
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "summary"
    assert any(x["type"] == "Transition" for x in lines)
    assert any(x["type"] == "SpeechSegment" for x in lines)
    # close() twice gives the same document
    assert s.close() is s.close()


@pytest.mark.parametrize("line", [{}, {"noise_dbfs": -45.0, "noise_kind": "babble", "room_rt60_s": 0.3,
                                   "breath_dbfs": -45.0}])
def test_settled_events_are_published_once_and_match_the_final_timeline(line):
    """Published (settled) events never change later, also with the adaptive VAD's refined
    onsets on a noisy, reverberant line (its refinement reaches back ``ONSET_LOOKBACK_S``)."""
    from livejudge.events import Turn

    got = []

    class Collect:
        def on_event(self, e):
            got.append(e)

        def on_close(self, r):
            pass

    d = example_dialogue(seed=3, **line)
    s = Session(SessionConfig(), sinks=[Collect()])
    stream_call(s, d.call)
    r = s.close()
    final = s.timeline  # after close: every segment flushed
    tr = [e for e in got if isinstance(e, Transition)]
    assert len(tr) == len(set(tr)) == len(r["transitions"])
    assert set(tr) == set(final.transitions)
    turns = [e for e in got if isinstance(e, Turn)]
    assert len(turns) == len(set(turns)) and set(turns) == set(final.turns)
    assert len([e for e in got if isinstance(e, SpeechSegment)]) == len(r["segments"])


def test_each_settled_agent_turn_is_transcribed_once_and_joins_later_windows():
    from livejudge.events import TurnTranscript

    class FakeASR:
        """Says how long each turn's audio was, in a worker-less, immediate way."""

        def __init__(self):
            self.turns = []

        def submit(self, turn, audio, callback):
            callback(self.transcribe(turn, audio))

        def transcribe(self, turn, audio):
            self.turns.append(turn)
            return TurnTranscript(turn.channel, turn.onset_s, turn.offset_s, f"{len(audio) / 16000:.2f}", 1)

        def close(self, wait=True):
            pass

    asr = FakeASR()
    seen = []
    judge = SlowJudge(0.0)
    judge.judge_orig = judge.judge
    judge.judge = lambda ws: (seen.extend(ws), judge.judge_orig(ws))[1]
    d = example_dialogue(seed=0)
    s = Session(SessionConfig(judge_mode="every"), judge=judge, transcriber=asr)
    stream_call(s, d.call)
    r = s.close()
    agent_turns = [t for t in r["turns"] if t["channel"] == "agent"]
    assert [(t.onset_s, t.offset_s) for t in asr.turns] == [(t["onset_s"], t["offset_s"]) for t in agent_turns]
    # the audio handed over is exactly the turn
    assert [float(t.text) for t in s.transcripts] == pytest.approx(
        [t["offset_s"] - t["onset_s"] for t in agent_turns], abs=0.002)
    assert len(seen[-1].transcripts) == len([t for t in agent_turns if t["offset_s"] > seen[-1].start_s])


def test_offline_scoring_gives_every_window_the_transcripts_a_live_replay_would_have():
    """First-run defect (issue 12): ``score`` judged every window but the last without text,
    because the ASR worker answered after the (fast) windows had been snapshotted. In "every"
    mode a settled turn is transcribed at once, so each window after it holds its text."""
    from livejudge.events import TurnTranscript

    class LateASR:  # a worker that answers 0.3 s of wall time later, as a real one would
        def __init__(self):
            self.timers = []

        def submit(self, turn, audio, callback):
            t = threading.Timer(0.3, lambda: callback(self.transcribe(turn, audio)))
            t.start()
            self.timers.append(t)

        def transcribe(self, turn, audio):
            return TurnTranscript(turn.channel, turn.onset_s, turn.offset_s, "hello there", 2)

        def close(self, wait=True):
            for t in self.timers:
                t.join()

    seen = []
    judge = SlowJudge(0.0)
    judge.judge_orig = judge.judge
    judge.judge = lambda ws: (seen.extend(ws), judge.judge_orig(ws))[1]
    d = example_dialogue(seed=0)
    s = Session(SessionConfig(judge_mode="every"), judge=judge, transcriber=LateASR())
    stream_call(s, d.call)
    r = s.close()
    first_agent_end_s = min(t["offset_s"] for t in r["turns"] if t["channel"] == "agent")
    # the first agent turn (ends ~10 s) is settled ~2.1 s later (merge pause + backchannel limit +
    # VAD hangover); from then on every window overlapping it or a later agent turn holds text
    later = [w for w in seen[:-1] if w.end_s >= first_agent_end_s + 3.0]
    assert len(later) >= 10
    assert all(w.transcripts for w in later), [(w.end_s, len(w.transcripts)) for w in later]
    assert max(len(w.transcripts) for w in later) >= 3


def test_one_scheduler_batches_windows_of_several_sessions():
    from livejudge.judge.model.scheduler import JudgeScheduler

    gate = threading.Event()
    batches = []

    class BatchJudge(SlowJudge):
        def judge(self, windows):
            gate.wait(5)
            batches.append(len(windows))
            return super().judge(windows)

    sched = JudgeScheduler(BatchJudge(0.0))
    sessions = [Session(SessionConfig(interval_s=1.0), scheduler=sched) for _ in range(3)]
    x = np.zeros(160, dtype=np.float32)
    for i in range(101):  # 1.01 s: each session's first window comes due
        for s in sessions:
            s.push("user", x, i * 0.01)
            s.push("agent", x, i * 0.01)
    gate.set()
    results = [s.close() for s in sessions]
    # the first call took one window; the other two sessions' windows, due while it ran, came as one batch
    assert max(batches) >= 2
    assert all(len(r["judge"]) >= 1 for r in results)
    assert sum(batches) == sum(len(r["judge"]) for r in results)


def test_errors_stay_bounded_when_a_sink_fails_on_every_event(capsys):
    from livejudge.session import MAX_ERRORS

    class Broken:
        def on_event(self, ev):
            raise RuntimeError("disk full")

        def on_close(self, result):
            pass

    s = Session(SessionConfig(), judge=None, sinks=[Broken()])
    for k in range(3 * MAX_ERRORS):
        s.note("tick", float(k) * 0.01)
    r = s.close()
    assert len(r["errors"]) == MAX_ERRORS
    assert r["errors"][0].startswith("sink Broken failed: disk full")
    assert r["errors"][-1].startswith(f"... and {3 * MAX_ERRORS - (MAX_ERRORS - 1)} more error(s)")
    assert capsys.readouterr().err.count("livejudge: sink Broken failed") == 3  # stderr: the first three


def test_a_broken_stderr_and_sink_never_hang_offline_scoring(monkeypatch):
    """New-user trial: `livejudge score ... 2>&1 | head` hung for ever (SIGTERM ignored): a sink
    failing on the closed pipe reported its error by printing to that same pipe, which raised in
    the judge worker, killed it, and left `every` mode waiting on it."""
    import sys

    class BrokenPipe:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")

    class PipeSink:
        def on_event(self, ev):
            raise BrokenPipeError(32, "Broken pipe")

        def on_close(self, result):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stderr", BrokenPipe())
    s = Session(SessionConfig(judge_mode="every"), judge=SlowJudge(0.0), sinks=[PipeSink()])
    done = {}
    t = threading.Thread(target=lambda: (stream_call(s, example_dialogue(seed=1).call),
                                         done.setdefault("r", s.close())), daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), "offline scoring hung on a broken pipe"
    r = done["r"]
    assert len(r["judge"]) >= 20  # every window judged: the worker survived
    assert any("Broken pipe" in e for e in r["errors"])


def test_every_mode_with_depth_runs_ahead_of_a_stuck_judge_and_keeps_every_window_in_order():
    """judge_depth (SessionConfig; the CLI's EVERY_DEPTH for recorded calls): up to that many windows
    queue ahead of the judge before the audio path waits; none is dropped and results keep the
    submission order, so a result does not depend on the depth."""
    from livejudge.judge.model.scheduler import JudgeScheduler

    gate = threading.Event()
    judge = SlowJudge(0.0, gate)
    sched = JudgeScheduler(judge, mode="every", depth=3).start()
    from livejudge.timing.window import WindowSnapshot

    def snap(t):
        z = np.zeros(16000, np.float32)
        return WindowSnapshot(start_s=t - 1.0, end_s=t, sample_rate=16000, user=z, agent=z, segments=())
    got = []
    t0 = time.monotonic()
    for t in (1.0, 2.0, 3.0):  # the judge is stuck on the first: three fit (one busy or waiting, two waiting)
        sched.submit(snap(t), got.append)
    assert time.monotonic() - t0 < 1.0  # none of the three waited for the stuck judge
    late = threading.Thread(target=sched.submit, args=(snap(4.0), got.append))
    late.start()
    time.sleep(0.2)
    assert late.is_alive()  # the fourth waits: three are pending
    gate.set()
    late.join(5)
    sched.release(drain=True)
    assert [r.t_s for r in got] == [1.0, 2.0, 3.0, 4.0] and sched.dropped == 0
    with pytest.raises(ValueError, match="depth must be ≥ 1"):
        JudgeScheduler(judge, mode="every", depth=0)
    assert JudgeScheduler(judge, mode="live", depth=4).depth == 1  # live mode keeps one slot


def test_every_mode_depth_drops_every_queued_window_when_stopped_without_draining():
    from livejudge.judge.model.scheduler import JudgeScheduler
    from livejudge.timing.window import WindowSnapshot

    gate = threading.Event()
    sched = JudgeScheduler(SlowJudge(0.0, gate), mode="every", depth=4).start()
    z = np.zeros(1600, np.float32)
    for t in (1.0, 2.0, 3.0, 4.0):
        sched.submit(WindowSnapshot(start_s=t - 0.1, end_s=t, sample_rate=16000, user=z, agent=z, segments=()))
    time.sleep(0.1)  # the worker has taken the first; three wait
    sched.release(drain=False, timeout_s=0.1)
    assert sched.dropped == 3
    gate.set()


def test_a_sessions_judge_depth_is_checked():
    with pytest.raises(ValueError, match="judge_depth must be at least 1"):
        SessionConfig(judge_depth=0).validate()


def test_framework_notes_are_bounded_and_what_is_left_out_is_counted(monkeypatch, tmp_path):
    """A trial's agent sent 200,000 text frames: framework_events held 200,004 entries (a 38 MB
    result, a 35 MB event log). Notes beyond MAX_NOTES are counted per kind in one note at close,
    in the result and the event log alike."""
    import livejudge.session as session_mod
    from livejudge.outputs.sinks import JsonlSink
    from livejudge.session import Session

    monkeypatch.setattr(session_mod, "MAX_NOTES", 50)
    log = tmp_path / "e.jsonl"
    s = Session(sinks=[JsonlSink(log)])
    for i in range(120):
        s.note("bot_text", text=f"frame {i}")
    s.note("interruption")
    doc = s.close()
    ev = doc["framework_events"]
    assert [e["kind"] for e in ev[:50]] == ["bot_text"] * 50 and len(ev) == 51
    assert ev[-1]["kind"] == "notes_dropped" and ev[-1]["by_kind"] == {"bot_text": 70, "interruption": 1}
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    kinds = [x.get("kind") for x in lines if x.get("type") == "note" or "by_kind" in x or x.get("kind") == "bot_text"]
    assert kinds.count("bot_text") == 50 and "notes_dropped" in kinds, kinds[-3:]


@pytest.mark.parametrize("lag_s", [0.5, 1.0, 2.0])
def test_a_channel_pushed_behind_the_other_is_not_lost_in_silence(lag_s):
    """A trial's own transport pushed the user channel 0.5 s or more behind the agent: the session
    filled the user's time with silence (max_lag_s 0.5 s) and dropped the real audio when it came,
    so the whole user turn was lost, the latencies gone, and errors empty. Now it loses at most the
    first late stretch, says so once, and waits longer from then on: the timing equals the call
    pushed in step (the built dialogue's truth) within 10 ms."""
    from livejudge.session import MAX_LAG_CAP_S
    from livejudge.testing.dialogues import example_dialogue

    d = example_dialogue(seed=0)
    u, a = d.call.user, d.call.agent

    def run(lag):
        s = Session()
        n, L = 320, int(lag * 16000)
        for i in range(0, len(a) + L, n):
            if i < len(a):
                s.push("agent", a[i:i + n], i / 16000)
            j = i - L
            if 0 <= j < len(u):
                s.push("user", u[j:j + n], j / 16000)
        return s.close()

    ref, got = run(0.0), run(lag_s)
    assert ref["errors"] == [] and "dropped_audio_s" not in ref["source"]
    lat = lambda doc: [t["gap_s"] for t in doc["transitions"] if (t["from"], t["to"]) == ("user", "agent")]  # noqa: E731
    assert len(lat(got)) == len(lat(ref)) == len(d.truth.response_latencies_s)
    assert np.allclose(lat(got), lat(ref), atol=0.01)
    dropped = got["source"]["dropped_audio_s"]["user"]
    assert dropped <= lag_s  # the first late stretch at most, not the call
    assert lag_s <= got["source"]["max_lag_s"] <= min(MAX_LAG_CAP_S, lag_s + 0.2)
    if dropped >= 0.1:
        assert len(got["errors"]) == 1 and "user audio arrived after the session had filled" in got["errors"][0]
        assert f"{dropped:.2f} s of it dropped in all" in got["errors"][0]  # the total, not the first 0.1 s


def test_a_time_given_as_text_is_refused():
    s = Session()
    with pytest.raises(ValueError, match="t_s must be a number of seconds, got '0.02'"):
        s.push_audio("user", np.zeros(160, np.float32), 8000, "0.02")
    s.push("user", np.zeros(160, np.float32), np.float64(0.0))  # numpy numbers are numbers
    s.close()
