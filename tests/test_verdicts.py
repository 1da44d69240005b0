"""Per-event verdicts (livejudge.timing.verdicts) against the truth of built calls.

Two calls are built from real clips with ``DialogueBuilder``: a polite agent (every moment
human-like) and a rude one (one planted misbehaviour per verdict class). Each planted moment's
time, outcome and measured value come from the placements (the truth), never from a detector.
They are run through a live Session (VAD → timeline → verdicts) under several line conditions
and both channel orders, and each verdict class is asserted against the truth.

Tolerances: a moment's time within ``T_TOL_S`` = 0.15 s (VAD onsets are back-dated to the first
voiced 30 ms frame), a measured time (yield, pause, silence, latency) within ``V_TOL_S`` = 0.15 s.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from livejudge.events import SpeechSegment as S
from livejudge.session import Session, SessionConfig, stream_call
from livejudge.testing.verdict_calls import LINE_CONDITIONS, MOMENT_TOL_S, VALUE_TOL_S, polite_call, rude_call
from livejudge.timing.turns import analyze
from livejudge.timing.verdicts import (
    OK_OUTCOMES,
    OUTCOMES,
    Verdict,
    VerdictConfig,
    metric_names,
    summarize_verdicts,
    verdict_text,
    verdicts,
)

T_TOL_S, V_TOL_S = MOMENT_TOL_S, VALUE_TOL_S
LINES = {k: v for k, v in LINE_CONDITIONS.items() if k != "echo-18"}  # echo: its own test below


def run_live(call, config: SessionConfig | None = None):
    """(verdicts published live, final verdicts, result) of a call streamed through a Session."""
    from livejudge.outputs.sinks import CallbackSink

    live: list[Verdict] = []
    s = Session(config or SessionConfig(), sinks=[CallbackSink(live.append, Verdict)])
    stream_call(s, call)
    result = s.close()
    return live, s.verdicts, result


def find(vs, kind, t_s):
    """The verdict of ``kind`` nearest ``t_s`` within T_TOL_S, or None."""
    near = [v for v in vs if v.kind == kind and abs(v.t_s - t_s) <= T_TOL_S]
    return min(near, key=lambda v: abs(v.t_s - t_s)) if near else None


def check_planted(vs, planted, label):
    for kind, outcome, t_s, value_s in planted:
        v = find(vs, kind, t_s)
        assert v is not None, f"{label}: no {kind} verdict near {t_s:.2f} s; got {[(x.kind, x.outcome, round(x.t_s, 2)) for x in vs]}"
        assert v.outcome == outcome, f"{label}: {kind} at {t_s:.2f} s is {v.outcome}, truth {outcome}"
        assert v.ok == (outcome in OK_OUTCOMES[kind])
        if value_s is None:
            assert v.value_s is None, f"{label}: {kind} at {t_s:.2f} s measured {v.value_s}, truth none"
        else:
            assert v.value_s == pytest.approx(value_s, abs=V_TOL_S), f"{label}: {kind} at {t_s:.2f} s"


# ----------------------------------------------------------------------------- the truth itself
def test_truth_segments_give_the_planted_verdicts():
    """The verdict rules on the truth segments (no detector): every planted verdict, exactly,
    and nothing flagged on the polite call."""
    for build, flagged_expected in ((polite_call, False), (rude_call, True)):
        d, planted = build()
        vs = verdicts(analyze(d.truth.segments()))
        check_planted(vs, planted, build.__name__ + " truth")
        assert any(not v.ok for v in vs) == flagged_expected


# ----------------------------------------------------------------------------- measured, live
@pytest.mark.parametrize("line", list(LINES))
def test_polite_agent_every_moment_human_like(line):
    d, planted = polite_call(**LINES[line])
    live, final, result = run_live(d.call)
    check_planted(final, planted, f"polite/{line}")
    flagged = [(v.kind, v.outcome, round(v.t_s, 2)) for v in final if not v.ok]
    assert flagged == [], f"polite/{line}: flagged {flagged}"
    assert set(live) == set(final)  # each verdict published live once, as it is in the end


@pytest.mark.parametrize("line", list(LINES))
def test_rude_agent_every_misbehaviour_flagged(line):
    d, planted = rude_call(**LINES[line])
    live, final, result = run_live(d.call)
    check_planted(final, planted, f"rude/{line}")
    kinds_flagged = {v.kind for v in final if not v.ok}
    assert kinds_flagged == {"barge_in", "backchannel", "pause", "talk_over", "dead_air", "restart", "latency"}
    assert set(live) == set(final)
    sm = result["summary"]
    assert sm["verdict_count"] == len(final) == len(result["verdicts"])
    assert sm["verdict_barge_in_talked_through_count"] == 2
    assert sm["verdict_backchannel_yielded_count"] == 2 and sm["verdict_backchannel_flagged_rate"] == 1.0
    assert sm["verdict_restart_restarted_count"] == 1 and sm["verdict_pause_cut_in_count"] == 1


@pytest.mark.parametrize("echo_db", [None, -18.0])
@pytest.mark.parametrize("user_channel", [0, 1])
def test_both_channel_orders_and_echo_from_a_file(tmp_path, user_channel, echo_db):
    """A stereo file with the user on either channel, with and without speakerphone echo of the
    agent in the user channel (removed by --echo-gate auto), scored by `livejudge check`."""
    import json

    from livejudge.commands.cli import main

    for build in (polite_call, rude_call):
        d, planted = build(noise_dbfs=-50.0, echo_gain_db=echo_db)
        path = d.write(tmp_path / "call.wav", user_channel=user_channel)
        out = tmp_path / "result.json"
        assert main(["check", str(path), "--user-channel", str(user_channel),
                     "--agent-channel", str(1 - user_channel), "--json", str(out)]) == 0
        doc = json.loads(out.read_text())
        assert doc["source"]["echo_gate"]["applied"] == (echo_db is not None)
        final = [Verdict.from_dict(v) for v in doc["verdicts"]]
        label = f"{build.__name__} user on {user_channel} echo {echo_db}"
        check_planted(final, planted, label)
        if build is polite_call:
            assert [v for v in final if not v.ok] == [], label


def test_verdicts_in_event_log_result_and_gates(tmp_path):
    import json

    from livejudge.commands.gates import call_metrics, evaluate, parse_gate
    from livejudge.outputs.sinks import JsonlSink

    d, _ = rude_call()
    log = tmp_path / "events.jsonl"
    s = Session(SessionConfig(), sinks=[JsonlSink(log)])
    stream_call(s, d.call)
    result = s.close()
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    logged = [x for x in lines if x.get("type") == "Verdict"]
    assert sorted((x["kind"], x["t_s"]) for x in logged) == sorted((v["kind"], v["t_s"]) for v in result["verdicts"])
    assert all(x["text"] and isinstance(x["ok"], bool) for x in logged)
    back = [Verdict.from_dict(v) for v in result["verdicts"]]  # the JSON form reads back
    assert [(v.key, v.outcome, v.ok) for v in back] == [(v.key, v.outcome, v.ok) for v in s.verdicts]
    m = call_metrics(result)
    assert m["verdict_barge_in_talked_through_count"] == 2.0
    g = evaluate([parse_gate("verdict_barge_in_talked_through_count>0"),
                  parse_gate("verdict_backchannel_flagged_rate>=0.5"),
                  parse_gate("verdict_latency_human_count>100")], m)
    assert [r.failed for r in g] == [True, True, False]


# ----------------------------------------------------------------------------- pure rules by hand
def test_rules_on_hand_made_segments():
    cfg = VerdictConfig()
    # barge-in at 2.0, agent stops at 3.3: a 1.3 s yield is slow (> yield_max_s 1.0)
    vs = verdicts(analyze([S("agent", 0, 3.3), S("user", 2.0, 5.0), S("agent", 5.4, 7.0)]), cfg)
    bi = find(vs, "barge_in", 2.0)
    assert (bi.outcome, bi.value_s, bi.ok) == ("slow_yield", pytest.approx(1.3), False)
    # talked through (the agent talks on past the caller's end): the value is the caller's turn
    # ("both talked 4.69 s" overstated an overlap the agent's own pauses shorten; a new user's trial)
    for agent_end, user_end, both in ((6.0, 4.0, 2.0), (9.0, 4.5, 2.5)):
        vs = verdicts(analyze([S("agent", 0, agent_end), S("user", 2.0, user_end)]), cfg)
        bi = find(vs, "barge_in", 2.0)
        assert (bi.outcome, bi.value_s, bi.ok) == ("talked_through", pytest.approx(both), False)
        assert verdict_text(bi).endswith(f"agent talked through the caller's {both:.2f} s turn [FLAG]")
    # a false yield's threshold is in its value's units: the "mm"'s length + the window (the value
    # 0.57 s from its onset showed beside a bare 0.50 that counts from its end; a new user's trial)
    vs = verdicts(analyze([S("agent", 0, 7.57), S("user", 7.0, 7.17), S("agent", 8.5, 10.0)]), cfg)
    bc = find(vs, "backchannel", 7.0)
    assert (bc.outcome, bc.value_s) == ("yielded", pytest.approx(0.57))
    assert bc.threshold_s == pytest.approx(0.17 + cfg.backchannel_yield_window_s) and bc.value_s <= bc.threshold_s
    held = verdicts(analyze([S("agent", 0, 9.0), S("user", 7.0, 7.17)]), cfg)
    bh = find(held, "backchannel", 7.0)
    assert bh.outcome == "held" and bh.value_s > bh.threshold_s == pytest.approx(0.17 + cfg.backchannel_yield_window_s)
    # a cut-in's value is how far into the pause the agent started, and its text says so
    cut = Verdict("pause", "cut_in", False, 10.92, 0.32, 11.72, cfg.resume_window_s, "HEURISTIC")
    assert verdict_text(cut).endswith("caller paused: agent cut in 0.32 s into the pause [FLAG]")
    # a 2.5 s caller silence with the agent silent is not a pause (pause_max_s 2.0): dead air
    vs = verdicts(analyze([S("user", 0, 1), S("user", 3.5, 4.5), S("agent", 5, 6)]), cfg)
    assert find(vs, "pause", 1.0) is None
    assert find(vs, "dead_air", 1.0).outcome == "agent_silent"
    # the agent spoke last and the caller took 2.5 s: dead air on the caller's side, not flagged
    vs = verdicts(analyze([S("user", 0, 1), S("agent", 1.3, 3.0), S("user", 5.5, 6.5)]), cfg)
    assert (find(vs, "dead_air", 3.0).outcome, find(vs, "dead_air", 3.0).ok) == ("caller_silent", True)
    # the agent answers and the caller only comes back 1.5 s into its reply: no cut-in (a transition)
    vs = verdicts(analyze([S("user", 0, 1), S("agent", 1.5, 4.0), S("user", 3.0, 4.5)]), cfg)
    assert find(vs, "pause", 1.0) is None
    # a wider resume window makes it one
    vs = verdicts(analyze([S("user", 0, 1), S("agent", 1.5, 4.0), S("user", 3.0, 4.5)]),
                  VerdictConfig(resume_window_s=2.0))
    assert find(vs, "pause", 1.0).outcome == "cut_in"


def test_a_slow_yield_after_a_short_stop_names_the_other_reading():
    """The agent stops 0.40 s into a barge-in, is quiet 0.40 s (under phrase_break_s 0.5 s) and
    says 0.5 s more: the turn rules read a phrase break and a 1.30 s slow yield, which a quick
    yield then a "sorry" also looks like. The verdict keeps its outcome and names the stop."""
    cfg = VerdictConfig()
    segs = [S("agent", 0, 2.4), S("agent", 2.8, 3.3), S("user", 2.0, 5.0), S("agent", 5.4, 7.0)]
    bi = find(verdicts(analyze(segs), cfg), "barge_in", 2.0)
    assert (bi.outcome, bi.value_s, bi.first_stop_s) == ("slow_yield", pytest.approx(1.3), pytest.approx(0.4))
    assert "went quiet 0.40 s in and spoke again: read as a phrase break" in verdict_text(bi)
    d = bi.to_dict()
    assert d["first_stop_s"] == pytest.approx(0.4) and Verdict.from_dict(d).first_stop_s == pytest.approx(0.4)
    # none: no pause (the test above), a pause under FIRST_STOP_PAUSE_S, a pause before the barge-in,
    # or a stop later than yield_max_s (no timelier reading)
    for segs in ([S("agent", 0, 3.3), S("user", 2.0, 5.0)],
                 [S("agent", 0, 2.4), S("agent", 2.6, 3.3), S("user", 2.0, 5.0)],
                 [S("agent", 0, 1.5), S("agent", 1.9, 3.3), S("user", 2.0, 5.0)],
                 [S("agent", 0, 3.2), S("agent", 3.6, 4.0), S("user", 2.0, 5.0)]):
        bi = find(verdicts(analyze(segs), cfg), "barge_in", 2.0)
        assert bi.outcome == "slow_yield" and bi.first_stop_s is None, (segs, bi)
        assert "first_stop_s" not in bi.to_dict() and "phrase break" not in verdict_text(bi)


def test_a_talk_through_the_caller_finished_in_a_pause_of_names_the_other_reading():
    """The agent stops 1.30 s into a barge-in; the caller ends 0.2 s later (under yielded_s 0.3 s)
    and the agent answers 0.3 s after that: read as talking on through a pause, which a slow
    yield and then an answer also looks like. A talk-through whose pauses all fall while the
    caller is still talking names nothing."""
    segs = [S("agent", 0, 3.3), S("user", 2.0, 3.5), S("agent", 3.8, 6.0)]
    bi = find(verdicts(analyze(segs)), "barge_in", 2.0)
    assert (bi.outcome, bi.first_stop_s) == ("talked_through", pytest.approx(1.3))
    assert "went quiet 1.30 s in, the caller finished in that pause" in verdict_text(bi)
    segs = [S("agent", 0, 2.6), S("agent", 3.0, 6.0), S("user", 2.0, 4.5)]
    bi = find(verdicts(analyze(segs)), "barge_in", 2.0)
    assert (bi.outcome, bi.first_stop_s) == ("talked_through", None) and "went quiet" not in verdict_text(bi)


def test_a_latency_verdict_settles_once_the_reply_is_a_turn_not_at_its_end():
    """A reply's gap is known once it has lasted backchannel_max_s (it is no backchannel) and the
    caller's turn has ended: a long reply does not hold its latency verdict back to its end."""
    cfg = VerdictConfig()
    vs = verdicts(analyze([S("user", 0, 2.0), S("agent", 2.5, 9.0)]), cfg)
    assert find(vs, "latency", 2.5).settle_s == pytest.approx(2.5 + cfg.backchannel_max_s)
    # a short reply settles at its end, as before
    vs = verdicts(analyze([S("user", 0, 2.0), S("agent", 2.5, 3.0)]), cfg)
    assert find(vs, "latency", 2.5).settle_s == pytest.approx(3.0)
    # an early start: not before the caller's turn has ended
    vs = verdicts(analyze([S("user", 0, 4.0), S("agent", 3.6, 9.0)]), cfg)
    assert find(vs, "latency", 3.6).settle_s == pytest.approx(4.6)


def test_summary_counts_rates_and_metric_names():
    vs = verdicts(analyze([S("agent", 0, 5), S("user", 2, 2.4),  # backchannel, held
                           S("agent", 6, 9), S("user", 7, 8.5)]))  # barge-in talked through
    sm = summarize_verdicts(vs)
    assert sm["verdict_backchannel_held_count"] == 1 and sm["verdict_backchannel_flagged_rate"] == 0.0
    assert sm["verdict_barge_in_talked_through_count"] == 1 and sm["verdict_barge_in_flagged_rate"] == 1.0
    assert sm["verdict_pause_flagged_rate"] is None  # no pause: not measured
    assert set(sm) == set(metric_names())
    for kind, outs in OUTCOMES.items():
        assert OK_OUTCOMES[kind] <= set(outs)


def test_bad_config_is_one_line_error():
    with pytest.raises(ValueError, match="dead_air_s"):
        VerdictConfig(dead_air_s=-1.0)
    with pytest.raises(ValueError, match="pause_min_s"):
        VerdictConfig(pause_min_s=3.0, pause_max_s=2.0)
    with pytest.raises(ValueError, match="bad verdict record"):
        Verdict.from_dict({"kind": "barge_in", "outcome": "exploded", "t_s": 1.0})


@pytest.mark.parametrize("gap_s, words", [
    (0.80, "latency 0.80 s: above the human mean 0.74 s [FLAG]"),
    (1.20, "latency 1.20 s: above the human mean 0.74 s, S2S range [FLAG]"),
])
def test_slow_latency_text_names_the_human_mean(gap_s, words):
    """The human band's edge is SPEARBench's human MEAN answer latency (0.742 s), so a 0.80 s
    reply is slower than the average person, not "slower than human"; "S2S range" is said only
    from the fastest S2S system's 0.959 s (Table III). Both replies fall in the ``s2s`` outcome."""
    from livejudge.timing.verdicts import verdict_text

    call = [S("user", 0.0, 1.5), S("agent", 1.5 + gap_s, 3.5)]
    lat = [v for v in verdicts(analyze(call)) if v.kind == "latency"]
    assert [v.outcome for v in lat] == ["s2s"] and lat[0].value_s == pytest.approx(gap_s)
    assert verdict_text(lat[0]).strip().endswith(words)
    # the threshold is the bound it crossed to be flagged (the report showed "1.26 | 2.72" for a flag)
    from livejudge.outputs.html_report import _threshold_cell

    assert _threshold_cell(lat[0].to_dict()) == "flag above 0.74 (human mean)"


@pytest.mark.parametrize("gap_s, outcome, near", [
    (0.70, "human", True),    # 42 ms under the edge: the truth may be above it
    (0.78, "s2s", True),      # 38 ms over: flagged, but noise could have put it there
    (0.80, "s2s", False),     # 58 ms over: beyond the 55 ms p95 error
    (0.60, "human", False),
    (1.20, "s2s", False),
])
def test_a_latency_within_the_timing_error_of_its_edge_says_so(gap_s, outcome, near):
    """A latency within MEASURED_TIMING_ERROR (55 ms, p95 on noisy built calls) of the human
    edge keeps its outcome and says it is that close, in the JSON and its line (a flag 10 ms over
    the edge read as certain as one a second over; a noted defect)."""
    from livejudge.timing.metrics import MEASURED_TIMING_ERROR

    call = [S("user", 0.0, 1.5), S("agent", 1.5 + gap_s, 3.5)]
    v = next(v for v in verdicts(analyze(call)) if v.kind == "latency")
    assert v.outcome == outcome and v.within_timing_error is near
    assert v.to_dict()["within_timing_error"] is near
    words = (f"({abs(gap_s - 0.742) * 1000:.0f} ms from the 0.74 s edge, inside the "
             f"{MEASURED_TIMING_ERROR.latency_p95_abs_s * 1000:.0f} ms p95 timing error)")
    assert (words in verdict_text(v)) is near, verdict_text(v)
    # a yield time: its own error (107 ms) around yield_max_s
    cfg = VerdictConfig()
    for stop, near_y in ((3.05, True), (3.0 + cfg.yield_max_s + 0.2, False)):
        bi = find(verdicts(analyze([S("agent", 0, stop), S("user", 2.0, 5.0), S("agent", 5.4, 7.0)]), cfg),
                  "barge_in", 2.0)
        assert bi.within_timing_error is near_y, (stop, bi)
    # a round trip through the result keeps it (from_dict reads the fields it is made of)
    assert Verdict.from_dict(v.to_dict()).within_timing_error is near
    # the summary's count that a gate can use to leave such flags out
    sm = summarize_verdicts(verdicts(analyze(call)))
    flagged = outcome == "s2s"
    assert sm["verdict_flagged_moment_count"] == int(flagged)
    assert sm["verdict_flagged_moment_beyond_error_count"] == int(flagged and not near)


def test_every_threshold_says_which_side_is_flagged_and_values_agree_with_it():
    """The report showed "0.57 | 0.90 its end + false-yield window" for a flagged false yield and
    "0.32 | 1.00 caller resumed within" for a flagged cut-in, so a value below its threshold read
    flagged in one row and fine in the next (a new user's trial). Each threshold now says the
    side it flags, and on every verdict of the polite and rude calls (truth segments) the value
    lies on that side exactly when the verdict is flagged."""
    import re

    from livejudge.outputs.html_report import _threshold_cell
    from livejudge.timing.verdicts import threshold_text

    for kind, outs in OUTCOMES.items():
        for o in outs:
            assert (threshold_text(kind, o, 1.0) != "–") == (kind != "restart"), (kind, o)
    cfg = VerdictConfig()
    d = Verdict("pause", "cut_in", False, 1.0, 0.32, 1.6, cfg.resume_window_s, "HEURISTIC").to_dict()
    assert _threshold_cell(d) == f"flag at or below 0.74 into it, the caller back within {cfg.resume_window_s:.2f}"
    d = Verdict("pause", "waited", True, 1.0, 0.8, 1.8, cfg.pause_min_s, "HEURISTIC").to_dict()
    assert _threshold_cell(d) == f"judged from {cfg.pause_min_s:.2f} (min pause)"
    assert _threshold_cell({**d, "threshold_s": None}) == "–"
    seen = set()
    for build in (polite_call, rude_call):
        d, _ = build()
        for v in verdicts(analyze(d.truth.segments())):
            text = threshold_text(v.kind, v.outcome, v.threshold_s)
            m = re.match(r"flag (above|at or below|below) (-?[0-9.]+)", text)
            if m and v.value_s is not None:
                bound = float(m.group(2))
                side = {"above": v.value_s > bound, "at or below": v.value_s <= bound,
                        "below": v.value_s < bound}[m.group(1)]
                assert side == (not v.ok), (v, text)
                seen.add((v.kind, v.outcome))
            elif text.startswith("judged from"):
                assert v.value_s >= float(text.split()[2]), (v, text)
                seen.add((v.kind, v.outcome))
    assert {("barge_in", "yielded"), ("backchannel", "yielded"), ("backchannel", "held"), ("pause", "cut_in"),
            ("pause", "waited"), ("latency", "s2s"), ("talk_over", "talk_over")} <= seen


def test_a_late_start_into_a_pause_is_judged_by_its_latency_alone():
    """The agent started 1.83 s into a caller's pause and the caller went on: "latency 1.83 s:
    slower [FLAG]" and "cut into the caller's pause [FLAG]" for one start, so no start could pass
    (a new user's trial). A start later than the human band's edge (0.742 s) into the silence took a
    turn a person would have taken too: only its latency is judged. An early one is still a cut-in."""
    early = [S("user", 0.0, 1.0), S("agent", 1.4, 4.5), S("user", 1.7, 4.0), S("agent", 5.0, 7.0)]
    late = [S("user", 0.0, 1.0), S("agent", 1.9, 4.5), S("user", 2.2, 4.0), S("agent", 5.0, 7.0)]
    ve = [(v.kind, v.outcome) for v in verdicts(analyze(early)) if v.kind in ("pause", "latency")]
    vl = [(v.kind, v.outcome) for v in verdicts(analyze(late)) if v.kind in ("pause", "latency")]
    assert ve == [("pause", "cut_in"), ("latency", "human")]
    assert vl == [("latency", "s2s")]


def test_within_timing_error_uses_the_lines_measured_error():
    """A 0.86 s reply on a telephone line, 118 ms above the 0.742 s human edge: outside the wideband
    55 ms p95 error, inside the narrowband 298 ms (the line carries no word-final fricative, so
    latencies read long); the verdict's line round-trips through its dict."""
    from livejudge.timing.metrics import MEASURED_TIMING_ERROR, MEASURED_TIMING_ERROR_NARROWBAND
    from livejudge.timing.verdicts import Verdict, on_line, verdict_text

    v = Verdict("latency", "s2s", False, 10.0, 0.86, 10.9, 0.742, "SPEARBench")
    assert v.line == "wideband" and not v.within_timing_error
    assert v.timing_error_s == MEASURED_TIMING_ERROR.latency_p95_abs_s
    assert on_line([v], ["agent"])[0].line == "wideband"  # a latency runs from the caller's end
    (n,) = on_line([v], ["user"])
    assert n.within_timing_error and n.timing_error_s == MEASURED_TIMING_ERROR_NARROWBAND.latency_p95_abs_s
    assert "inside the 298 ms p95 timing error of a narrowband line" in verdict_text(n)
    d = n.to_dict()
    assert d["line"] == "narrowband" and d["within_timing_error"] is True
    assert Verdict.from_dict(d).line == "narrowband" and "line" not in v.to_dict()
    assert Verdict.from_dict(v.to_dict()).line == "wideband"
    with pytest.raises(ValueError, match="unknown line"):
        Verdict.from_dict({**d, "line": "satellite"})
    y = Verdict("barge_in", "slow_yield", False, 5.0, 1.1, 6.0, 1.0, "HEURISTIC")
    assert on_line([y], ["agent"])[0].timing_error_s == MEASURED_TIMING_ERROR_NARROWBAND.yield_p95_abs_s
    assert on_line([y], ["user"])[0].line == "wideband"  # a yield runs to the agent's end


def test_a_verdict_still_open_at_the_end_of_the_call_round_trips():
    """A call that ended (an agent hanging up) while a barge-in's verdict could still change has
    settle_s inf: written as NaN→null with an error note, and Verdict.from_dict then refused the
    record (float(None)), so `check`/`probe` broke on that result (a helper's trial)."""
    import json
    import math

    from livejudge.timing.verdicts import Verdict

    v = Verdict("barge_in", "yielded", True, 5.0, 0.4, math.inf, 1.0, "HEURISTIC")
    d = v.to_dict()
    assert d["settle_s"] is None
    w = Verdict.from_dict(json.loads(json.dumps(d)))
    assert w.settle_s == math.inf and w == v


@pytest.mark.parametrize("cut_after_s", [0.4, 0.6])
def test_a_barge_in_the_recording_ends_inside_is_not_judged(cut_after_s):
    """A caller says something over the agent and the recording ends with both still talking (a
    hang-up mid-overlap), sooner than ``yield_max_s`` (1 s) after the barge-in: the agent had no
    time to yield or to talk through the caller's turn. It read "talked_through" (a flagged moment
    and ``yield_none_count`` 1). Built from real clips; the same call recorded to its end is the
    control (the agent talks through: flagged), and so is the call cut 1.5 s into the overlap: an
    agent still talking then had not yielded in time, which the end does not change."""
    from livejudge.testing.dialogues import DialogueBuilder

    b = DialogueBuilder(noise_dbfs=-55.0, seed=5, tail_s=0.0)
    b.user("cmu_cards_005")
    b.agent("espeak_reply_02", gap_s=0.5)
    bi = b.user("cmu_goforward", barge_in_after_s=1.0, agent_yield_s=None)  # the agent talks on
    full = b.build().call
    _, final, result = run_live(full)
    assert [v.outcome for v in final if v.kind == "barge_in"] == ["talked_through"]
    assert result["summary"]["yield_none_count"] == 1 and result["summary"]["barge_in_cut_by_end_count"] == 0

    n = int((bi.onset_s + cut_after_s) * 16000)
    _, final, result = run_live(replace(full, user=full.user[:n], agent=full.agent[:n]))
    assert [v for v in final if v.kind in ("barge_in", "restart")] == []
    sm = result["summary"]
    assert (sm["user_barge_in_count"], sm["yield_none_count"], sm["yield_mean_s"]) == (1, 0, None)
    assert sm["barge_in_cut_by_end_count"] == 1
    notes = [e for e in result["framework_events"] if e["kind"] == "barge_in_cut_by_end"]
    assert len(notes) == 1 and abs(notes[0]["t_s"] - bi.onset_s) <= MOMENT_TOL_S, notes
    assert [(b.get("cut_by_end"), b["yield_s"]) for b in result["barge_ins"]] == [(True, None)]

    n = int((bi.onset_s + 1.5) * 16000)
    _, final, result = run_live(replace(full, user=full.user[:n], agent=full.agent[:n]))
    late = [v for v in final if v.kind == "barge_in"]  # both ended with the file: which one first is noise
    assert len(late) == 1 and late[0].outcome in ("talked_through", "slow_yield") and not late[0].ok, late
    assert not [e for e in result["framework_events"] if e["kind"] == "barge_in_cut_by_end"]


@pytest.mark.parametrize("cut_after_s", [0.5, 0.6, 0.7])
def test_a_short_caller_utterance_the_recording_ends_after_is_not_judged(cut_after_s):
    """A trial cut the example call 0.5–0.7 s after the caller's barge-in at 30.36 s: the caller's
    cut turn was short enough to be a backchannel inside the agent's, and the agent's speech
    ending with the recording read "agent yielded to a backchannel" (flagged; `check --expect
    yield` passed). A backchannel whose host turn ran to the end within the false-yield window of
    it is not judged (``Timeline.backchannel_cut_by_end``), and a note says so."""
    from livejudge.testing import example_dialogue

    d = example_dialogue(seed=0)
    n = int((30.36 + cut_after_s) * 16000)
    _, final, result = run_live(replace(d.call, user=d.call.user[:n], agent=d.call.agent[:n]))
    late = [v for v in final if v.t_s > 30.0 and v.kind in ("backchannel", "barge_in")]
    assert late == [], late
    notes = [e for e in result["framework_events"] if e["kind"].endswith("_cut_by_end")]
    assert len(notes) == 1 and abs(notes[0]["t_s"] - 30.36) <= MOMENT_TOL_S, notes


@pytest.mark.parametrize("cut_s, decided", [(16.6, False), (17.4, True)])
def test_the_events_of_a_barge_in_the_end_cut_say_what_the_result_says(cut_s, decided):
    """A trial ended a Pipecat pipeline (EndFrame) at 16.6 s of the example call, 0.53 s after the
    caller's barge-in at 16.07 s: `on_barge_in` and the event log said "yield_s 0.42", the result's
    ``barge_ins`` said ``yield_s: None, cut_by_end: true``, and the event had no way to say so. The
    final events now carry ``cut_by_end`` (and no yield) where the result does; a cut late enough
    for the barge-in to be decided (the control) gives the same yield in both."""
    from livejudge.events import BargeIn
    from livejudge.outputs.sinks import CallbackSink
    from livejudge.testing import example_dialogue

    d = example_dialogue(seed=0)
    n = int(cut_s * 16000)
    events: list[BargeIn] = []
    s = Session(SessionConfig(), sinks=[CallbackSink(events.append, BargeIn)])
    stream_call(s, replace(d.call, user=d.call.user[:n], agent=d.call.agent[:n]))
    result = s.close()
    ev = [e for e in events if abs(e.onset_s - 16.07) <= MOMENT_TOL_S]
    doc = [b for b in result["barge_ins"] if abs(b["onset_s"] - 16.07) <= MOMENT_TOL_S]
    assert len(ev) == 1 and len(doc) == 1, (events, result["barge_ins"])
    assert ev[0].cut_by_end == bool(doc[0].get("cut_by_end")) == (not decided)
    assert ev[0].yield_s == doc[0]["yield_s"]
    if decided:
        assert abs(ev[0].yield_s - 0.42) <= 0.05  # the truth file's yield, within the VAD's bounds
    else:
        assert ev[0].yield_s is None
    # every barge-in event and the result agree, cut or not
    assert [(e.onset_s, e.yield_s, e.cut_by_end) for e in events] == [
        (b["onset_s"], b["yield_s"], bool(b.get("cut_by_end"))) for b in result["barge_ins"]]


@pytest.mark.parametrize("cut_s", [6.30, 6.38, 6.40, 6.44])
def test_no_segment_ends_after_the_call_and_a_caller_mm_the_end_cut_stays_a_barge_in(cut_s):
    """A trial cut the example call 0.16–0.18 s into the caller's "mm" at 6.22 s (the agent talking
    over it): the VAD's last, zero-padded frame put the caller's offset up to a frame past the
    call's end (6.41 s in a 6.40 s call), so the "mm" outlasted the agent's cut turn and read as
    neither a barge-in nor a backchannel, only a turn. No segment now ends after the last sample,
    and the "mm" is a barge-in the end cut, not judged."""
    from livejudge.testing import example_dialogue

    d = example_dialogue(seed=0)
    n = int(round(cut_s * 16000))
    _, _, result = run_live(replace(d.call, user=d.call.user[:n], agent=d.call.agent[:n]))
    assert max(sg["offset_s"] for sg in result["segments"]) <= n / 16000 + 1e-6
    bi = [b for b in result["barge_ins"] if abs(b["onset_s"] - 6.22) <= MOMENT_TOL_S]
    assert [(b["yield_s"], b.get("cut_by_end")) for b in bi] == [(None, True)], result["barge_ins"]
