"""End to end: `livejudge attach` on a speakerphone, against the example Pipecat agent.

The agent runs in a subprocess on 127.0.0.1 (as in test_attach_e2e.py). The sound devices are
fakes standing in for ``mic.Speaker`` and ``mic.MicSource`` (patched where attach looks them
up), joined by a fake room:

* the speakers "play" what the client writes, from its write time + 30 ms device latency, in
  order, and report each block with its play time (``on_played``, as mic.Speaker does with
  PortAudio's DAC time);
* the microphone delivers 20 ms blocks once captured: the scripted caller's voice (real
  recorded clips, turn 3 barging in) plus what the speakers played 50 ms earlier at −18 dB
  through a short room response.

With AEC (the default when a microphone and speakers are used) the user side must show what
the caller said and nothing else; with ``--no-aec`` the leakage makes false user events (so
the test can fail). Reference: the placed clips alone (``source.caller``), through WebRTC's
high-pass filter (AEC3 always runs it) and the same VAD.

Tolerances: BOUND_TOL_S = 40 ms (one 30 ms VAD frame plus AEC3's residual smearing of onsets);
BARGE_TOL_S = 60 ms (as test_attach_e2e.py).
"""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

pytest.importorskip("pipecat")
pytest.importorskip("websockets")
pytest.importorskip("livekit")

from livejudge.commands.attach import free_port, start_demo_agent, stop_agent  # noqa: E402
from livejudge.audio import SAMPLE_RATE, TwoChannelAudio  # noqa: E402
from livejudge.commands.cli import main  # noqa: E402
from livejudge.timing.echo import room_impulse_response, webrtc_highpass  # noqa: E402
from livejudge.session import Session, stream_call  # noqa: E402
from livejudge.sources import mic as mic_module  # noqa: E402
from livejudge.sources.ws import CallerTurn, ScriptedCaller  # noqa: E402
from livejudge.testing.dialogues import load_clip, trim  # noqa: E402

GAIN_DB, DELAY_S = -18.0, 0.05
BOUND_TOL_S = 0.04
BARGE_TOL_S = 0.06
SCRIPT = [("cmu_cards_005", None), ("librivox_austen_0930", None), ("cmu_cards_002", 1.2)]


def _turns() -> list[CallerTurn]:
    rng = np.random.default_rng(0)
    out = []
    for name, barge in SCRIPT:
        x = 0.9 * trim(load_clip(name))
        x = np.concatenate([x, np.zeros(int(0.05 * SAMPLE_RATE), np.float32)])
        x = (x + rng.standard_normal(x.size) * 10 ** (-65 / 20)).astype(np.float32)
        out.append(CallerTurn(x, name, barge))
    return out


class Room:
    """Speakers → microphone: the played timeline (session samples), delayed, attenuated, reverberated."""

    def __init__(self, gain_db: float, delay_s: float) -> None:
        self.played = np.zeros(90 * SAMPLE_RATE, np.float32)
        self.gain = 10 ** (gain_db / 20)
        self.delay = int(round(delay_s * SAMPLE_RATE))
        self.rir = room_impulse_response(seed=5).astype(np.float64)

    def echo(self, start: int, n: int) -> np.ndarray:
        a, b = start - self.delay - (self.rir.size - 1), start + n - self.delay
        seg = np.zeros(b - a)
        lo, hi = max(a, 0), min(max(b, 0), self.played.size)
        if hi > lo:
            seg[lo - a:hi - a] = self.played[lo:hi]
        return (self.gain * np.convolve(seg, self.rir, mode="valid")).astype(np.float32)


class FakeSpeakerphone:
    """Stands in for mic.Speaker: plays in order from write time + latency, reports what it plays."""

    latency_s = 0.03

    def __init__(self, room: Room) -> None:
        self.room = room
        self.on_played = None
        self._clock = None
        self._end = 0
        self.played_s = 0.0

    def set_clock(self, clock) -> None:
        self._clock = clock

    def write(self, x: np.ndarray) -> None:
        start = max(int(round((self._clock() + self.latency_s) * SAMPLE_RATE)), self._end)
        end = min(start + len(x), self.room.played.size)
        self.room.played[start:end] = x[: end - start]
        self._end = start + len(x)
        self.played_s += len(x) / SAMPLE_RATE
        if self.on_played is not None:
            self.on_played(x, start / SAMPLE_RATE)

    def flush(self) -> None:  # what was queued but not yet played is dropped
        cut = int(round((self._clock() + self.latency_s) * SAMPLE_RATE))
        if cut < self._end:
            self.room.played[cut:self._end] = 0.0
            self._end = cut

    def close(self) -> None:
        pass


class SpeakerphoneMic:
    """Stands in for mic.MicSource: the scripted caller's voice plus the room's echo, delivered
    in 20 ms blocks once captured, stamped with their capture time."""

    def __init__(self, room: Room, caller: ScriptedCaller) -> None:
        self.room, self.caller = room, caller
        self._clock = None

    @property
    def done(self) -> bool:
        return self.caller.done

    def start(self, clock) -> None:
        self._clock = clock

    async def chunks(self, chunk_s: float, agent):
        n = int(round(chunk_s * SAMPLE_RATE))
        k = int(np.ceil(self._clock() / chunk_s - 1e-9))
        while True:
            delay = (k + 1) * chunk_s - self._clock()
            if delay > 0:
                await asyncio.sleep(delay)
            yield k * chunk_s, self.caller.chunk(k, n, agent) + self.room.echo(k * n, n)
            k += 1

    def close(self) -> None:
        pass


def _call(tmp_path, monkeypatch, *extra: str, duration_s: float = 45.0) -> dict:
    room = Room(GAIN_DB, DELAY_S)
    caller = ScriptedCaller(_turns(), pause_s=0.8)
    speaker = FakeSpeakerphone(room)
    monkeypatch.setattr(mic_module, "MicSource", lambda device=None: SpeakerphoneMic(room, caller))
    monkeypatch.setattr(mic_module, "Speaker", lambda device=None: speaker)
    port = free_port()
    agent = start_demo_agent(port, think_s=0.5, extra=["--tts", "clips", "--behaviour", "stock"])
    out = tmp_path / f"out{len(extra)}.json"
    try:
        code = main(["attach", "--ws-url", f"ws://127.0.0.1:{port}", "--json", str(out), "--judge", "none",
                     "--display", "none", "--duration-s", str(duration_s), *extra])
    finally:
        stop_agent(agent)
    assert code == 0
    assert speaker.played_s > 1.0  # the agent really talked through the speakers
    return json.loads(out.read_text())


def _user(result: dict) -> dict:
    return {"segments": [(s["onset_s"], s["offset_s"]) for s in result["segments"] if s["channel"] == "user"],
            "barge_ins": [b["onset_s"] for b in result["barge_ins"] if b["by"] == "user"],
            "backchannels": [b["onset_s"] for b in result["backchannels"] if b["channel"] == "user"]}


def _reference(placed: list[dict], n_s: float) -> list[tuple[float, float]]:
    """User segments of the placed clips alone (no echo), through WebRTC's high-pass filter."""
    turns = {t.name: t.samples for t in _turns()}
    user = np.zeros(int(n_s * SAMPLE_RATE) + SAMPLE_RATE, np.float32)
    for p in placed:
        a = int(round(p["start_s"] * SAMPLE_RATE))
        x = turns[p["clip"]]
        user[a:a + x.size] = x[: user.size - a]
    call = TwoChannelAudio(user=webrtc_highpass(user), agent=np.zeros_like(user), sample_rate_in=SAMPLE_RATE,
                           channels={"user": 0, "agent": 1})
    s = Session()
    stream_call(s, call)
    return [(g["onset_s"], g["offset_s"]) for g in s.close()["segments"] if g["channel"] == "user"]


@pytest.mark.slow
def test_speakerphone_attach_with_and_without_aec(tmp_path, monkeypatch, capsys):
    with_aec = _call(tmp_path, monkeypatch)
    aec = with_aec["source"]["aec"]
    assert aec["on"] and aec["far_end"] == "device playout" and aec["late_far_audio_s"] == 0
    assert with_aec["summary"]["latency_count"] >= 2  # the agent answered (its voice was on the speakers)
    placed = with_aec["source"]["caller"]
    assert [p["clip"] for p in placed] == [n for n, _ in SCRIPT]
    got = _user(with_aec)
    ref = _reference(placed, with_aec["duration_s"])
    assert len(got["segments"]) == len(ref), (got["segments"], ref)
    for (a0, b0), (a1, b1) in zip(got["segments"], ref):
        assert abs(a0 - a1) <= BOUND_TOL_S + 1e-6 and abs(b0 - b1) <= BOUND_TOL_S + 1e-6, ((a0, b0), (a1, b1))
    assert got["backchannels"] == []
    assert len(got["barge_ins"]) == 1 and abs(got["barge_ins"][0] - placed[2]["start_s"]) <= BARGE_TOL_S

    without = _call(tmp_path, monkeypatch, "--no-aec", duration_s=15.0)  # the first two turns are enough
    assert without["source"]["aec"] == {"on": False, "why": "--no-aec"}
    bad = _user(without)
    ref2 = _reference(without["source"]["caller"], without["duration_s"])
    false_events = (len(bad["segments"]) - len(ref2)) + len(bad["backchannels"]) + max(0, len(bad["barge_ins"]) - 1)
    assert false_events > 0, (bad, ref2)
    with capsys.disabled():
        print(f"\n[speakerphone {GAIN_DB:.0f} dB, {DELAY_S * 1000:.0f} ms] AEC: user segments "
              f"{len(got['segments'])} (reference {len(ref)}), barge-ins {len(got['barge_ins'])}, backchannels "
              f"{len(got['backchannels'])}; suppression median {aec['suppression_db_median']} dB, "
              f"{aec['cost_per_frame_us']} µs/10 ms frame. --no-aec: user segments {len(bad['segments'])} "
              f"(reference {len(ref2)}), barge-ins {len(bad['barge_ins'])}, backchannels {len(bad['backchannels'])}")
