"""`livejudge attach --input-wav`: the scripted caller against agents that end the call early or
drop the line, and the call flags checked before anything is dialled (a new user's trial).

* An agent that hangs up cleanly (close code 1000) with scripted turns left to play is a failed
  call (exit 1, one line), its unplayed turns marked; a hang-up after the last turn is a normal end.
* ``--reconnect``: the outage is said on stderr at the drop and at the reconnection, recorded in
  ``source.attach.outages`` and marked on the verdicts and gaps that span it.
* Bad input: an empty or silent ``--input-wav``, negative ``--silence-timeout-s``/``--jitter-s``/
  ``--pause-s``, ``--barge-in 1:…`` exit 2 with one line naming the flag or file.

Fake agents are plain ``websockets`` servers on 127.0.0.1 (Twilio wire) that read what they are
sent, as a real agent does, and speak on a timer.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("websockets")
from websockets.asyncio.server import serve  # noqa: E402

from livejudge.audio import SAMPLE_RATE, float32_to_mulaw, resample  # noqa: E402
from livejudge.commands.attach import free_port, mark_outages  # noqa: E402
from livejudge.commands.cli import main  # noqa: E402
from livejudge.sources.ws import AgentActivity, CallerTurn, ScriptedCaller  # noqa: E402
from livejudge.testing.dialogues import load_clip, trim  # noqa: E402

from test_attach_faults import _attach, _wav, fake_agent  # noqa: E402

REPLY = float32_to_mulaw(resample(trim(load_clip("espeak_reply_02"))[: int(0.8 * SAMPLE_RATE)], SAMPLE_RATE, 8000))
"""0.8 s of the agent's voice, μ-law 8 kHz (Twilio media payloads)."""


async def _say(ws) -> None:
    for i in range(0, len(REPLY), 160):
        await ws.send(json.dumps({"event": "media", "streamSid": "x",
                                  "media": {"payload": base64.b64encode(REPLY[i:i + 160]).decode()}}))
        await asyncio.sleep(0.02)


def _agent(*steps):
    """A handler that reads everything it is sent (in the background) and runs ``steps``: a number
    sleeps that many seconds, "say" speaks REPLY (0.8 s, paced), "close" closes with 1000,
    "abort" drops the TCP connection (no close frame), "hold" waits until the client leaves."""

    async def handler(ws):
        async def drain():
            with contextlib.suppress(Exception):
                async for _ in ws:
                    pass

        reader = asyncio.create_task(drain())
        for step in steps:
            if isinstance(step, (int, float)):
                await asyncio.sleep(step)
            elif step == "say":
                await _say(ws)
            elif step == "close":
                await ws.close(1000, "bye")
            elif step == "abort":
                handler.dropped.set()
                ws.transport.abort()
            elif step == "hold":
                await reader
        await reader

    handler.dropped = threading.Event()
    return handler


def _err_lines(capsys) -> list[str]:
    return [x for x in capsys.readouterr().err.strip().splitlines() if "narrowband" not in x]


# -------------------------------------------------------------------------- hang-up mid-script
def test_agent_hanging_up_mid_script_fails_and_marks_the_turns_not_played(tmp_path, capsys):
    """A trial: an agent that spoke once then closed with 1000 gave exit 0, `ended: agent closed`,
    no stderr line and no error, with 2 of 3 turns never played, and turn 2's speech_offset_s
    (12.08 s) past the end of a 10.1 s call."""
    wavs = [_wav(tmp_path, c) for c in ("cmu_cards_001", "cmu_numbers", "cmu_cards_003")]
    # turn 1 0.5–1.25 s; the reply 1.5–2.3 s; turn 2 (2.5 s long) from about 3.1 s; the close at about 4.3 s
    with fake_agent(_agent(1.5, "say", 2.0, "close", "hold")) as port:
        code, out, ev = _attach(tmp_path, port, "--input-wav", *wavs)
    err = _err_lines(capsys)
    doc = json.loads(out.read_text())
    assert code == 1, err
    assert doc["source"]["ended"] == "failed: closed_mid_script"
    last = err[-1]  # said once, last, after the summary
    assert last.startswith("livejudge: the agent closed the call (close code 1000: bye) after ")
    assert "with 2 of 3 scripted turns not played" in last and "cut off" in last
    assert sum("the agent closed the call" in x for x in err) == 1
    assert any("the agent closed the call" in e for e in doc["errors"])
    placed = doc["source"]["caller"]
    assert [p["clip"] for p in placed] == ["cmu_cards_001", "cmu_numbers"]
    assert placed[0]["played"] is True and "cut_at_s" not in placed[0]
    assert placed[1]["played"] is False and placed[1]["cut_at_s"] <= doc["duration_s"] + 0.05
    assert placed[1]["speech_offset_s"] is None  # its end was never sent: no offset past the call's end
    for p in placed:
        for k in ("speech_onset_s", "speech_offset_s"):
            assert p[k] is None or p[k] <= doc["duration_s"] + 0.05, p
    assert doc["source"]["caller_not_played"] == ["cmu_cards_003"]


def test_agent_hanging_up_after_the_last_turn_is_a_normal_end(tmp_path, capsys):
    # the one turn 0.5–1.25 s, the reply 1.5–2.3 s, the close at 2.6 s: every turn was played
    with fake_agent(_agent(1.5, "say", 0.3, "close", "hold")) as port:
        code, out, ev = _attach(tmp_path, port, "--input-wav", _wav(tmp_path))
    err = _err_lines(capsys)
    doc = json.loads(out.read_text())
    assert code == 0, err
    assert doc["source"]["ended"] == "agent closed"
    assert [p["played"] for p in doc["source"]["caller"]] == [True]
    assert doc["source"]["caller_not_played"] == []
    assert not any("closed the call" in x for x in err)


def test_scripted_caller_finish_marks_played_cut_and_unstarted_turns():
    turns = [CallerTurn(np.full(8000, 0.1, np.float32), name) for name in ("a", "b", "c")]
    caller = ScriptedCaller(turns, lead_s=0.0, pause_s=0.0, max_wait_s=0.1)
    n = SAMPLE_RATE // 50
    agent = AgentActivity()
    assert caller.not_played() == [0, 1, 2]
    k = 0
    while len(caller.placed) < 2:  # a (0–0.5 s), then b after the 0.1 s wait, cut 0.2 s into it
        caller.chunk(k, n, agent)
        k += 1
    for _ in range(10):
        caller.chunk(k, n, agent)
        k += 1
    end_s = k * n / SAMPLE_RATE
    assert caller.speaking and caller.not_played() == [1, 2]
    assert caller.finish(end_s) == ["c"]
    a, b = caller.placed
    assert a["played"] is True and "cut_at_s" not in a
    assert b["played"] is False and b["cut_at_s"] == pytest.approx(end_s)
    assert b["speech_offset_s"] is None and b["speech_onset_s"] == pytest.approx(b["start_s"], abs=0.02)


# -------------------------------------------------------------------------- flags and inputs
def _silent_wav(tmp_path, name: str, level: float = 0.0, n: int = 32000) -> str:
    p = tmp_path / name
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32) * level
    sf.write(str(p), x, SAMPLE_RATE, subtype="PCM_16")
    return str(p)


@pytest.mark.parametrize("case, needle", [
    ("empty", "holds no audio (0 samples)"),
    ("zeros", "is silent (all zeros"),
    ("quiet", "is silent (its loudest 20 ms is at -5"),  # white noise at -54 dBFS: no voice
    ("--silence-timeout-s -1", "--silence-timeout-s must be ≥ 0 seconds (0 = never), got -1"),
    ("--jitter-s -1", "--jitter-s must be ≥ 0 seconds, got -1"),
    ("--pause-s -1", "--pause-s must be ≥ 0 seconds, got -1"),
    ("--barge-in 1:1.0", "argument --barge-in: 1:1.0: TURN must be 2 or more (turn 1 opens the call"),
])
def test_bad_call_input_exits_2_with_one_line_before_dialling(tmp_path, capsys, case, needle):
    """Each of these was accepted: the call ran (20 s for an empty file, then blamed the agent), or
    the flag was ignored. Nobody answers on the port: exit 1 would mean it was dialled."""
    wav = _wav(tmp_path)
    if case == "empty":
        args = ["--input-wav", wav, _silent_wav(tmp_path, "empty.wav", n=0)]
    elif case == "zeros":
        args = ["--input-wav", wav, _silent_wav(tmp_path, "zeros.wav")]
    elif case == "quiet":
        args = ["--input-wav", _silent_wav(tmp_path, "quiet.wav", level=0.002)]
    else:
        args = ["--input-wav", wav, wav, *case.split()]
    try:
        code, out = _attach(tmp_path, free_port(), *args)[:2]
    except SystemExit as exc:  # argparse's own errors (--barge-in)
        code, out = exc.code, tmp_path / "out.json"
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert len(err) == 1 and needle in err[0], err
    if case in ("empty", "zeros", "quiet"):
        assert f"{case}.wav" in err[0]  # names the file
    assert "lead" not in err[0] and "the wait" not in err[0]  # flag names only
    assert not out.exists()


def test_call_flags_are_checked_before_the_runner_is_probed(tmp_path, capsys, monkeypatch):
    from livejudge.sources import runner_probe

    def no_dial(*a, **k):
        raise AssertionError("dialled before the flags were checked")

    monkeypatch.setattr(runner_probe, "pick_route", no_dial)
    code = main(["attach", "--runner", "http://127.0.0.1:9", "--input-wav", _wav(tmp_path), "--no-playback",
                 "--judge", "none", "--display", "none", "--silence-timeout-s", "-1"])
    assert code == 2 and "--silence-timeout-s must be ≥ 0" in capsys.readouterr().err


# -------------------------------------------------------------------------- reconnect
@contextlib.contextmanager
def _server(handler, port: int):
    """``serve(handler)`` on 127.0.0.1:``port`` in a thread, until the block ends (the agent killed)."""
    loop = asyncio.new_event_loop()
    ready, box = threading.Event(), {}

    async def run():
        box["stop"] = asyncio.Event()
        async with serve(handler, "127.0.0.1", port):
            ready.set()
            await box["stop"].wait()

    th = threading.Thread(target=lambda: loop.run_until_complete(run()), daemon=True)
    th.start()
    assert ready.wait(5)
    try:
        yield
    finally:
        loop.call_soon_threadsafe(box["stop"].set)
        th.join(5)


@pytest.mark.slow  # about 9 s in real time: a drop, 1.5 s with no agent, a reconnection
def test_reconnect_outage_is_said_recorded_and_marked(tmp_path, capsys):
    """A trial killed and restarted the agent mid-call with --reconnect 5: nothing was said, and the
    outage read `dead air 8.13 s (caller's turn) [ok]` and an 8.13 s gap, with `errors []`."""
    port = free_port()
    first = _agent(1.5, "say", 0.2, "abort")  # turn 1 0.5–1.25 s, the reply 1.5–2.3 s, the drop at 2.5 s
    box = {}
    wavs = [_wav(tmp_path, "cmu_cards_001"), _wav(tmp_path, "cmu_cards_003")]
    call = threading.Thread(target=lambda: box.update(r=_attach(
        tmp_path, port, "--reconnect", "5", "--duration-s", "8", "--input-wav", *wavs)))
    with _server(first, port):
        call.start()
        assert first.dropped.wait(10)
    time.sleep(1.5)  # the agent is down: the client's retries are refused
    with _server(_agent(2.0, "say", "hold"), port):
        call.join(30)
    code, out, ev = box["r"]
    err = _err_lines(capsys)
    doc = json.loads(out.read_text())
    assert code == 0, err
    drop = next(i for i, x in enumerate(err) if "connection dropped at t=" in x)
    assert "reconnecting (--reconnect 5" in err[drop]
    back = next(i for i, x in enumerate(err) if "reconnected at t=" in x)
    assert back > drop and "without the agent" in err[back]
    summary = next(i for i, x in enumerate(err) if "latency p50" in x)
    assert "the connection was down" in err[summary - 2] or "the connection was down" in err[summary - 1]
    (o,) = doc["source"]["attach"]["outages"]
    assert o["reconnected"] is True and 2.3 < o["start_s"] < 2.9 and o["s"] > 1.4
    assert doc["source"]["attach"]["connects"] == 2
    assert any("connection dropped" in e for e in doc["errors"])
    kinds = [e["kind"] for e in doc["framework_events"]]
    assert "ws.reconnected" in kinds
    # whatever spans the outage says so; nothing else is marked
    for v in doc["verdicts"]:
        end = v["t_s"] if v["kind"] == "latency" else v["t_s"] + max(v["value_s"] or 0, 0)
        start = v["t_s"] - max(v["value_s"] or 0, 0) if v["kind"] == "latency" else v["t_s"]
        spans = start < o["end_s"] and end > o["start_s"]
        assert ("outage" in v) == spans, v
        if spans:
            assert "connection outage" in v["text"]
    gaps = [t for t in doc["transitions"] if t["from_offset_s"] < o["end_s"] and t["to_onset_s"] > o["start_s"]]
    assert gaps and all("outage" in t for t in gaps)
    assert any("outage" in v for v in doc["verdicts"]) or gaps


def test_mark_outages_marks_only_what_spans_the_outage():
    result = {
        "verdicts": [
            {"kind": "dead_air", "t_s": 2.8, "value_s": 3.9, "text": "   2.8 dead air 3.90 s (caller's turn) [ok]"},
            {"kind": "latency", "t_s": 7.0, "value_s": 1.5, "text": "latency"},  # gap 5.5–7.0: spans it
            {"kind": "latency", "t_s": 9.0, "value_s": 0.5, "text": "latency"},  # gap 8.5–9.0: after it
            {"kind": "barge_in", "t_s": 1.0, "value_s": 0.4, "text": "barge-in"},  # before it
        ],
        "transitions": [{"from": "agent", "to": "user", "from_offset_s": 2.76, "to_onset_s": 6.66, "gap_s": 3.9},
                        {"from": "user", "to": "agent", "from_offset_s": 1.2, "to_onset_s": 1.9, "gap_s": 0.7}],
    }
    assert mark_outages(result, [(3.1, 6.0)]) == 3
    marked = [("outage" in v) for v in result["verdicts"]]
    assert marked == [True, True, False, False]
    assert result["verdicts"][0]["outage"] == {"start_s": 3.1, "end_s": 6.0}
    assert result["verdicts"][0]["text"].endswith("(connection outage 3.1–6.0 s)")
    assert "outage" in result["transitions"][0] and "outage" not in result["transitions"][1]


def test_agent_hanging_up_during_a_barge_in_is_not_read_as_a_yield(tmp_path, capsys):
    """A trial: an agent that hung up mid-reply while the caller was barging in read as a slow
    yield (its audio stopping with the call is not a yield). The call's end, under
    ``yield_max_s`` after the barge-in, cut it
    (``Timeline.cut_by_end``): no barge-in verdict, the yield stats leave it out, a
    ``barge_in_cut_by_end`` note says so, and a ``yield_mean_s … if measured`` gate passes."""
    wavs = [_wav(tmp_path, c) for c in ("cmu_cards_001", "cmu_numbers")]
    # turn 1 0.5–1.25 s; the agent speaks 1.5–3.1 s; turn 2 (2.5 s) barges in 1.0 s into it and
    # the agent closes at 3.1 s, under yield_max_s (1 s) after the barge-in
    with fake_agent(_agent(1.5, "say", "say", "close", "hold")) as port:
        code, out, ev = _attach(tmp_path, port, "--input-wav", *wavs, "--barge-in", "2:1.0",
                                "--fail-if", "yield_mean_s>0.8 if measured")
    err = _err_lines(capsys)
    doc = json.loads(out.read_text())
    assert doc["source"]["ended"] == "failed: closed_mid_script", err  # the caller's turn 2 was cut
    assert doc["summary"]["user_barge_in_count"] == 1, doc["barge_ins"]
    assert [v for v in doc["verdicts"] if v["kind"] in ("barge_in", "restart")] == []
    assert doc["summary"]["yield_mean_s"] is None and doc["summary"]["yield_none_count"] == 0
    cut = [e for e in doc["framework_events"] if e["kind"] == "barge_in_cut_by_end"]
    assert len(cut) == 1 and abs(cut[0]["t_s"] - doc["barge_ins"][0]["onset_s"]) < 1e-6
    assert not any("yield_mean_s" in x and "FAIL" in x for x in err), err


def test_an_agent_that_stops_reading_before_it_hangs_up_ends_the_call_at_its_close(tmp_path, capsys):
    """A trial: an agent that stopped reading the caller's audio and then closed (1000) had its
    hang-up seen 10 s late (websockets' close handshake waited its default ``close_timeout`` for
    a reply the agent never read), and the call ran on meanwhile: duration 14.8 s for a close at
    about 5.3 s. ``CLOSE_TIMEOUT_S`` bounds that wait (1 s)."""
    from livejudge.sources.ws import CLOSE_TIMEOUT_S

    async def handler(ws):  # never reads: websockets stops reading its socket once its queue is full
        await asyncio.sleep(1.5)
        await _say(ws)
        await asyncio.sleep(3.0)
        await ws.close(1000, "bye")  # about 5.3 s into the call

    wavs = [_wav(tmp_path, c) for c in ("cmu_cards_001", "cmu_numbers", "cmu_cards_003")]
    with fake_agent(handler) as port:
        code, out, ev = _attach(tmp_path, port, "--input-wav", *wavs)
    doc = json.loads(out.read_text())
    assert code == 1 and doc["source"]["ended"] == "failed: closed_mid_script"
    closed = [e for e in doc["framework_events"] if e["kind"] == "ws.closed"]
    assert len(closed) == 1 and closed[0]["code"] == 1000
    # the close handshake's bound, plus a second of scheduling slack on a loaded 2-core machine
    assert closed[0]["t_s"] < 5.3 + CLOSE_TIMEOUT_S + 1.0, closed
    assert doc["duration_s"] < 5.3 + CLOSE_TIMEOUT_S + 1.0


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux) to stand for a full disk")
def test_a_recording_the_disk_cut_is_said_once_and_the_call_exits_1(tmp_path, capsys):
    """A trial: `attach --record` on a full disk said "recording stopped at 1.0 s: [Errno 28]…" and
    then "call recorded to …/rec.wav" (a file of 0.6 s of a 23 s call), exit 0. The last line now
    says how much the file holds, and the run exits 1, as for --json or --events not written as
    asked; the call itself is measured to its end."""
    with fake_agent(_agent(1.5, "say", 3.5, "say", 0.3, "close", "hold")) as port:
        code, out, ev = _attach(tmp_path, port, "--input-wav", _wav(tmp_path), "--record", "/dev/full")
    err = _err_lines(capsys)
    doc = json.loads(out.read_text())
    assert code == 1, err
    assert "recording stopped at" in doc["source"]["record_error"] and doc["duration_s"] > 3.5
    assert doc["errors"] == [f"--record: {doc['source']['record_error']}"]  # it had been [] (a re-check)
    # a file the disk cut part-way through a write holds less than the recorder handed it (a re-check on
    # a 200 KB tmpfs: "holds only the first 4.0 s" of a file holding 3.2 s): the bytes decide
    from livejudge.commands.attach import _recorded_s

    cut = tmp_path / "cut.wav"
    cut.write_bytes(b"\0" * (44 + 4 * int(3.2 * 16000)))
    assert _recorded_s(str(cut), 4.04) == pytest.approx(3.2) and _recorded_s("/dev/full", 4.04) == 4.04
    assert not any("call recorded to" in x for x in err), err
    assert any(x.startswith("livejudge: /dev/full holds only the first ") and x.endswith("s of the call (the "
               "recording stopped; see above): exit 1") for x in err), err
    assert doc["summary"]["latency_count"] >= 1


def test_a_connection_lost_before_any_audio_is_called_dropped_not_closed(tmp_path, capsys):
    """A trial: a TCP drop before any audio read "the agent closed the connection after 3.0 s (close
    code 1006)"; 1006 means no close frame came, the connection was lost. Said so now; a close
    with a code is still "closed"."""
    from livejudge.sources.diagnose import closed_before_audio

    with fake_agent(_agent(1.0, "abort")) as port:
        code, out, ev = _attach(tmp_path, port, "--input-wav", _wav(tmp_path))
    err = _err_lines(capsys)
    assert code == 1 and any("the connection to the agent dropped after " in x and "(close code 1006)" in x
                             for x in err), err
    assert not any("the agent closed the connection" in x for x in err), err
    url = "ws://127.0.0.1:9/x"
    assert closed_before_audio(url, "twilio", 1000, 3.0, 2).startswith("the agent closed the connection after 3.0 s")
