"""End to end: the example Pipecat agent in a subprocess on 127.0.0.1, `livejudge attach` in-process.

The truth comes from outside livejudge's VAD:
* the user's speech bounds: the scripted caller places trimmed clips (speech_bounds + 5 ms
  fades, digital noise floor after), so each turn's offset is an exact sample position;
* the agent's decisions: its own log, stamped with ``time.monotonic()``. Agent and client run
  on one host and CLOCK_MONOTONIC is shared, so ``t_mono − t0_monotonic`` (the session clock's
  zero, exported in ``source.attach``) puts them on the session clock without using anything
  livejudge measured from the audio.

Tolerances: LATENCY_TOL_S = 60 ms (up to one 30 ms VAD frame at each end of the gap, with scheduling
jitter of a few ms); YIELD_TOL_S = 80 ms (the client releases agent audio up to 20 ms ahead of
its playout time, so up to 20 ms beyond the cut can reach the Session before the interruption
flushes the rest, plus a 30 ms VAD frame holding the cut, plus scheduling); RECORD_TOL_S =
20 ms (issue 3).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("pipecat")
pytest.importorskip("websockets")

from livejudge.commands.attach import free_port, start_demo_agent, stop_agent  # noqa: E402
from livejudge.audio import SAMPLE_RATE, resample  # noqa: E402
from livejudge.commands.cli import main  # noqa: E402
from livejudge.agents.demo import render_replies  # noqa: E402
from livejudge.testing.dialogues import load_clip, speech_bounds, trim  # noqa: E402

THINK_S = 0.5
LATENCY_TOL_S = 0.06
YIELD_TOL_S = 0.08
RECORD_TOL_S = 0.02
SCRIPT = [("cmu_cards_005", None), ("librivox_austen_0930", None), ("cmu_cards_002", 1.2)]


def _write_turns(tmp_path) -> list[str]:
    rng = np.random.default_rng(0)
    paths = []
    for name, _ in SCRIPT:
        x = 0.9 * trim(load_clip(name))  # headroom for the noise floor (no clipping)
        x = np.concatenate([x, np.zeros(int(0.05 * SAMPLE_RATE), np.float32)])
        x = x + (rng.standard_normal(x.size) * 10 ** (-65 / 20)).astype(np.float32)
        p = tmp_path / f"{name}.wav"
        sf.write(str(p), x, SAMPLE_RATE, subtype="FLOAT")
        paths.append(str(p))
    return paths


def _call(tmp_path, protocol: str):
    port = free_port()
    log = tmp_path / f"agent_{protocol}.jsonl"
    agent = start_demo_agent(port, think_s=THINK_S, log=str(log), protocol=protocol,
                             extra=["--tts", "clips", "--behaviour", "stock"])  # timing under Pipecat's stock VAD
    out, rec, ev = tmp_path / "out.json", tmp_path / "call.wav", tmp_path / "events.jsonl"
    wavs = _write_turns(tmp_path)
    try:
        code = main(["attach", "--ws-url", f"ws://127.0.0.1:{port}", "--protocol", protocol,
                     "--input-wav", *wavs, "--barge-in", "3:1.2", "--no-playback",
                     "--json", str(out), "--events", str(ev), "--record", str(rec),
                     "--judge", "none", "--display", "none", "--duration-s", "45"])
    finally:
        stop_agent(agent)
    assert code == 0
    result = json.loads(out.read_text())
    # the recording's absolute path, for `check --pin-from` run from another folder
    assert Path(result["source"]["record_resolved"]) == rec.resolve()
    alog = [json.loads(line) for line in log.read_text().splitlines()]
    assert ev.read_text().count("\n") > 5  # the event log was written too
    return result, alog, rec, wavs


def _check_call(result, alog, rec, wavs, protocol: str) -> dict:
    placed = result["source"]["caller"]
    assert [p["clip"] for p in placed] == [n for n, _ in SCRIPT]
    assert result["source"]["ended"] == "script done"
    t0 = result["source"]["attach"]["t0_monotonic"]
    for e in alog:
        e["t_s"] = e["t_mono"] - t0  # the agent's decision on the session clock
    vad_stops = [e["t_s"] for e in alog if e["event"] == "vad_stop"]
    replies = [e for e in alog if e["event"] == "reply_start"]
    audio_out = [e for e in alog if e["event"] == "audio_out"]
    yields = [e["t_s"] for e in alog if e["event"] == "yield"]
    responses = [t for t in result["transitions"] if t["from"] == "user" and t["to"] == "agent"]
    out = {"latency_err_ms": [], "yield_err_ms": None, "record_lag_ms": [], "think_realised_ms": [],
           "detect_delay_ms": []}

    # 1. response latency = think time + the agent's own end-of-turn detection delay
    reply_lead_s = [speech_bounds(load_clip(f"espeak_reply_{i:02d}"))[0] / SAMPLE_RATE for i in range(1, 6)]
    n_checked = 0
    for turn, (name, _) in zip(placed, SCRIPT):
        off = turn["start_s"] + trim(load_clip(name)).size / SAMPLE_RATE  # the trimmed clip's last sample
        stop = next((v for v in vad_stops if v > off), None)
        tr = next((t for t in responses if abs(t["from_offset_s"] - off) < 0.1), None)
        if stop is None or tr is None:
            continue
        reply = next(r for r in replies if r["t_s"] >= stop)
        sent = next(e for e in audio_out if e["reply"] == reply["reply"])
        detect_delay_s = stop - off  # independent: agent log vs the placed audio
        think_s = sent["t_s"] - stop  # realised: configured think + the agent's output path
        # sanity only (the expectation below uses the realised value): the agent's output path adds
        # a few ms, more when the 2 cores are busy with the test run itself
        assert THINK_S <= think_s <= THINK_S + 0.3, (reply, sent, think_s)
        out["think_realised_ms"].append(round(think_s * 1000, 1))
        out["detect_delay_ms"].append(round(detect_delay_s * 1000, 1))
        expected = detect_delay_s + think_s + reply_lead_s[reply["reply"] - 1]
        out["latency_err_ms"].append(round((tr["gap_s"] - expected) * 1000, 1))
        assert abs(tr["gap_s"] - expected) <= LATENCY_TOL_S, (protocol, turn, tr, detect_delay_s, expected)
        n_checked += 1
    assert n_checked == 3, (responses, vad_stops, placed)

    # 2. the scripted barge-in is found, with the agent's own yield time
    barge = placed[2]
    assert barge["barge_in"]
    found = [b for b in result["barge_ins"] if b["by"] == "user"]
    assert len(found) == 1, result["barge_ins"]
    assert abs(found[0]["onset_s"] - barge["start_s"]) <= LATENCY_TOL_S
    assert len(yields) == 1
    expected_yield = yields[0] - barge["start_s"]
    assert found[0]["yield_s"] is not None
    out["yield_err_ms"] = round((found[0]["yield_s"] - expected_yield) * 1000, 1)
    assert abs(found[0]["yield_s"] - expected_yield) <= YIELD_TOL_S, (found, expected_yield)

    # 3. the recording holds what was sent and received, aligned on the session clock
    audio, rate = sf.read(str(rec), dtype="float32", always_2d=True)
    assert rate == SAMPLE_RATE and audio.shape[1] == 2
    for turn, wav in zip(placed, wavs):
        x, _ = sf.read(wav, dtype="float32")
        a = int(round(turn["start_s"] * SAMPLE_RATE))
        assert np.max(np.abs(audio[a:a + x.size, 0] - x)) <= 1.01 / 32768  # the sent samples, to PCM16 rounding
    out_rate = 8000 if protocol == "twilio" else 24000
    clips, _ = render_replies("clips", out_rate)
    agent = audio[:, 1]
    for r in audio_out:
        ref = resample(clips[r["reply"] - 1], out_rate, SAMPLE_RATE)[: int(1.0 * SAMPLE_RATE)]
        t_exp = r["t_s"]
        lo = int((t_exp - 0.2) * SAMPLE_RATE)
        seg = agent[lo: lo + ref.size + int(0.4 * SAMPLE_RATE)]
        corr = np.correlate(seg, ref, mode="valid")
        lag = int(np.argmax(corr))
        t_found = (lo + lag) / SAMPLE_RATE
        norm = corr[lag] / (np.linalg.norm(ref) * np.linalg.norm(seg[lag:lag + ref.size]) + 1e-12)
        assert norm > 0.9, (r, norm)
        out["record_lag_ms"].append(round((t_found - t_exp) * 1000, 1))
        assert abs(t_found - t_exp) <= RECORD_TOL_S, (r, t_found, t_exp)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["pipecat", "twilio"])
def test_attach_example_agent(tmp_path, protocol, capsys, tried_twice):
    """A real-time leg paced by wall clock: agent subprocess, websocket and client share the test
    machine's two cores with the test run itself. On a busy CI box a call now and then misses a
    bound by scheduling alone (the agent's `audio_out` stamp 39.8 ms from its samples in the
    recording once in about ten clean-clone runs, bound 20 ms), so the call is tried twice with a
    fresh agent and port and the same assertions (``tried_twice``)."""

    def call(attempt):
        d = tmp_path / f"try{attempt}"
        d.mkdir()
        result, alog, rec, wavs = _call(d, protocol)
        return result, _check_call(result, alog, rec, wavs, protocol)

    result, figures = tried_twice(protocol, call)
    overhead = result["source"]["attach"]["arrival_to_session_ms"]
    with capsys.disabled():
        print(f"\n[{protocol}] agent EOT delay (ms): {figures['detect_delay_ms']}; realised think (ms): "
              f"{figures['think_realised_ms']}; latency error vs agent log (ms): {figures['latency_err_ms']}; "
              f"yield error {figures['yield_err_ms']} ms; record lag (ms): {figures['record_lag_ms']}; "
              f"arrival→Session (ms): {overhead}")


@pytest.mark.slow
def test_demo_command_runs_headless(tmp_path, capsys):
    """`livejudge demo` end to end (agent subprocess + scripted caller), cut at 9 s. It says its
    agent's voice is one the default head was fitted on (a new user read its P(human) as validity)."""
    out = tmp_path / "demo.json"
    code = main(["demo", "--no-playback", "--duration-s", "9", "--judge", "none", "--display", "none",
                 "--json", str(out), "--agent-log", str(tmp_path / "agent.jsonl")])
    assert code == 0
    assert "speaks with espeak-ng, a voice family the default head was fitted on" in capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert doc["source"]["ended"] == "duration" and doc["source"]["kind"] == "attach"
    assert doc["source"]["input_health"] == []  # a live route is checked too (issue 20): both sides sound
    assert doc["summary"]["latency_count"] >= 1  # the agent answered the first human turn
    assert 0.3 < doc["summary"]["latency_mean_s"] < 1.5
