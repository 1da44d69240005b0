"""`livejudge demo`'s caller and what the polite and rude agents show against it.

A new user's trial: the old demo caller never paused mid-turn nor said "mm", so the rude agent
had nothing to cut into; `compare polite.json rude.json` read rude as better (faster, 1 flagged
moment against polite's 5 slow replies). The caller now pauses and backchannels
(``livejudge.agents.demo_caller``); these tests run the demo call in simulated time
(``livejudge.testing.demo_call``: the demo's own ScriptedCaller against a model of the example
agent with Pipecat's Silero VAD, fixed seed, no clock) and check what each behaviour shows.
"""

from __future__ import annotations

import numpy as np
import pytest

from livejudge.agents.demo_caller import DEMO_PAUSES_S, DEMO_SCRIPT, demo_turns, turn_audio
from livejudge.audio import SAMPLE_RATE
from livejudge.sources.ws import AgentActivity, CallerTurn, ScriptedCaller

FLAGGED_RUDENESS = {("pause", "cut_in"), ("talk_over", "talk_over"), ("barge_in", "talked_through"),
                    ("backchannel", "yielded")}


def _rms_db(x: np.ndarray) -> float:
    return 20 * np.log10(np.sqrt(np.mean(x.astype(np.float64) ** 2)) + 1e-12)


def test_demo_caller_pauses_mid_turn_and_backchannels():
    assert DEMO_PAUSES_S and all(0.5 <= p <= 0.9 for p in DEMO_PAUSES_S)  # pause verdicts start at 0.5 s
    assert sum(not t.floor for t in DEMO_SCRIPT) >= 2  # the "mm"s
    for t in DEMO_SCRIPT:
        x = turn_audio(t)
        if not t.floor:
            assert t.barge_in_after_s is not None and x.size == int(round(t.max_s * SAMPLE_RATE))
            assert _rms_db(x) > -35  # a sound, not a silence
            continue
        from livejudge.testing.dialogues import load_clip, trim

        first = trim(load_clip(t.clips[0])).size
        for p in t.pauses_s:  # exact digital silence, speech right before and after
            n = int(round(p * SAMPLE_RATE))
            assert np.all(x[first:first + n] == 0.0), t
            assert _rms_db(x[first - 800:first]) > -45 and _rms_db(x[first + n:first + n + 1600]) > -45, t


def test_demo_turns_barge_in_counts_floor_turns():
    turns = demo_turns()
    assert [t.floor for t in turns] == [t.floor for t in DEMO_SCRIPT]
    assert [t.name.split(" ", 1)[1] for t in turns] == [t.label for t in DEMO_SCRIPT]
    moved = demo_turns({1: 0.7})  # --barge-in 1:0.7: floor turn 1 barges in; no other floor turn does
    floor = [t for t in moved if t.floor]
    assert floor[0].barge_in_after_s == 0.7 and all(t.barge_in_after_s is None for t in floor[1:])
    assert [t.barge_in_after_s for t in moved if not t.floor] == [t.barge_in_after_s for t in DEMO_SCRIPT if not t.floor]
    with pytest.raises(ValueError, match="the demo caller has 5 turns"):
        demo_turns({6: 1.0})


def test_turn_after_a_backchannel_counts_from_the_floor_turn():
    """ScriptedCaller: a turn after an "mm" (floor=False) waits for the agent to go quiet after the
    reply to the last floor turn, even when that reply began before the "mm" (no new onset)."""
    one = np.full(int(0.5 * SAMPLE_RATE), 0.1, np.float32)
    caller = ScriptedCaller([CallerTurn(one, "ask"), CallerTurn(one[:3200], "mm", 1.0, floor=False),
                             CallerTurn(one, "next")], pause_s=0.8)
    agent = AgentActivity()
    n = 320
    loud = np.full(n, 0.1, np.float32)
    reply = (1.2, 4.0)  # the agent talks 1.2–4.0 s, straight through the "mm"
    for k in range(int(8.0 / 0.02)):
        t = k * 0.02
        caller.chunk(k, n, agent)
        if reply[0] <= t < reply[1]:
            agent.update(t, loud)
    starts = [p["start_s"] for p in caller.placed]
    assert [p["clip"] for p in caller.placed] == ["ask", "mm", "next"]
    assert starts[1] == pytest.approx(reply[0] + 1.0, abs=0.021)
    assert caller.placed[1]["backchannel"] is True and "backchannel" not in caller.placed[0]
    assert starts[2] == pytest.approx(reply[1] + 0.8, abs=0.021)  # not max_wait_s after the "mm"


@pytest.fixture(scope="module")
def demo_results():
    pytest.importorskip("pipecat")
    from livejudge.testing.demo_call import score_simulated, simulate_demo_call

    return {b: score_simulated(simulate_demo_call(b, seed=0)) for b in ("polite", "rude")}


def _pairs(result: dict) -> list[tuple[str, str]]:
    return [(v["kind"], v["outcome"]) for v in result["verdicts"]]


def test_rude_demo_agent_cuts_in_and_is_flagged_more_than_polite(demo_results):
    polite, rude = demo_results["polite"], demo_results["rude"]
    rude_pairs = _pairs(rude)
    assert ("pause", "cut_in") in rude_pairs or ("talk_over", "talk_over") in rude_pairs
    assert ("backchannel", "yielded") in rude_pairs  # it stops for the caller's "mm"
    assert rude["summary"]["verdict_flagged_moment_count"] > polite["summary"]["verdict_flagged_moment_count"]
    assert len([p for p in rude_pairs if p in FLAGGED_RUDENESS]) >= 3


def test_polite_demo_agent_is_slow_but_never_cuts_in(demo_results):
    polite = demo_results["polite"]
    pairs = _pairs(polite)
    assert not [p for p in pairs if p in FLAGGED_RUDENESS]
    assert pairs.count(("pause", "waited")) == len(DEMO_PAUSES_S)  # every thinking pause waited out
    assert pairs.count(("backchannel", "held")) == sum(not t.floor for t in DEMO_SCRIPT)
    assert ("barge_in", "yielded") in pairs
    lat = [v for v in polite["verdicts"] if v["kind"] == "latency"]
    assert lat and all(v["outcome"] == "s2s" and 1.0 <= v["value_s"] <= 1.4 for v in lat)  # slow, as documented
    assert polite["summary"]["verdict_flagged_moment_count"] == len(lat)  # its only flags


def test_compare_reads_rude_as_worse_despite_its_latency(demo_results, tmp_path):
    import json

    from livejudge.commands.compare import compare

    paths = []
    for b in ("polite", "rude"):
        p = tmp_path / f"{b}.json"
        p.write_text(json.dumps(demo_results[b]))
        paths.append(p)
    doc = compare(paths)
    rows = {r["metric"]: r for r in doc["rows"]}
    assert rows["latency_p50_s"]["verdicts"][1] == "better"  # closer to the human band (its source's rule)
    assert rows["verdict_flagged_moment_count"]["verdicts"][1] == "worse"
    assert rows["verdict_pause_cut_in_count"]["values"][0] == 0
    assert doc["notes"] and "rude.json" in doc["notes"][0] and "answers sooner but has more flagged moments" in doc["notes"][0]
    # a new user's trial: rude's latency mean (its talk-overs count negative) and its dropped reply
    # (counted as an agent backchannel) read "better"; neither row has a verdict now
    assert rows["latency_mean_s"]["values"][1] < rows["latency_mean_s"]["values"][0]
    assert rows["latency_mean_s"]["verdicts"] == ["", ""]
    assert rows["agent_backchannel_count"]["values"] == [0, 1]
    assert rows["agent_backchannel_count"]["verdicts"] == ["", ""]
    assert rows["user_backchannel_count"]["values"] == [2, 2] and rows["user_backchannel_count"]["verdicts"] == ["", ""]
    # the caller interrupts once; rude's cut-ins into its pauses add barge-ins (the caller going on)
    assert rows["user_barge_in_count"]["values"][0] == 1 < rows["user_barge_in_count"]["values"][1]


def test_demo_says_what_each_behaviour_should_show(capsys):
    import argparse

    from livejudge.agents.demo import BEHAVIOUR_SHOWS, BEHAVIOURS
    from livejudge.commands.attach import _say_what_to_expect

    assert set(BEHAVIOUR_SHOWS) == set(BEHAVIOURS)
    _say_what_to_expect(argparse.Namespace(behaviour="polite", never_yield=False, think_s=None))
    err = capsys.readouterr().err
    assert "slow but never cuts in" in err and "livejudge compare polite.json rude.json" in err
    # the rude run names polite first too, the README's order (it said "compare rude.json polite.json")
    _say_what_to_expect(argparse.Namespace(behaviour="rude", never_yield=False, think_s=None))
    assert "livejudge compare polite.json rude.json" in capsys.readouterr().err
    _say_what_to_expect(argparse.Namespace(behaviour="stock", never_yield=False, think_s=None))
    assert "livejudge compare stock.json rude.json" in capsys.readouterr().err
    _say_what_to_expect(argparse.Namespace(behaviour="rude", never_yield=False, think_s=0.5))  # not the preset
    assert capsys.readouterr().err == ""
