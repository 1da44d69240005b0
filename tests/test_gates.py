"""CI gates: parsing, evaluation (per call and on batch medians), exit code 3, JUnit XML that
parsers accept."""

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from livejudge.commands.gates import (EXIT_GATE, Gate, batch_metrics, call_metrics, evaluate, junit_xml,
                             known_metrics, parse_gate)


def _doc(**summary):
    base = {"latency_p90_s": 1.5, "latency_p50_s": 0.6, "mean_p_human": 0.2, "barge_in_count": 3,
            "user_barge_in_count": 2, "agent_talk_over_count": 1, "latency_count": 4}
    base.update(summary)
    return {"duration_s": 30.0, "segments": [], "summary": base, "judge": [
        {"t_s": 2.0, "p_human": 0.2, "dimensions": {"rhythm": {"score": 2.0, "gated": False},
                                                     "stress": {"score": 3.0, "gated": True}}},
        {"t_s": 4.0, "p_human": 0.3, "dimensions": {"rhythm": {"score": 4.0, "gated": False}}}]}


def test_parse_gate_forms_and_errors():
    assert parse_gate("latency_p90_s>1.2") == Gate("latency_p90_s", ">", 1.2)
    assert parse_gate(" p_human_mean <= 0.3 ") == Gate("p_human_mean", "<=", 0.3)
    # echoed as written: 'latency_p50_s>1.0' came back as 'FAIL latency_p50_s>1' (a trial)
    assert parse_gate("latency_p50_s>1.0").text == "latency_p50_s>1.0" and Gate("x", ">", 1.0).text == "x>1"
    assert parse_gate("dim_rhythm<2.5e0").threshold == 2.5
    with pytest.raises(ValueError, match="METRIC OP NUMBER"):
        parse_gate("latency_p90_s > fast")
    with pytest.raises(ValueError, match="unknown metric 'latency_p99_s'.*latency_p90_s"):
        parse_gate("latency_p99_s>1")
    assert "mean_p_human" in known_metrics() and "dim_intonation" in known_metrics()


def test_call_metrics_and_evaluation():
    m = call_metrics(_doc())
    assert m["mean_p_human"] == 0.2 and m["dim_rhythm"] == 3.0 and m["dim_stress"] is None
    # each figure once (summary.json had mean_p_human and p_human_mean), counts as integers
    assert "p_human_mean" not in m and m["barge_in_count"] == 3 and type(m["barge_in_count"]) is int
    res = evaluate([parse_gate("latency_p90_s>1.2"), parse_gate("latency_p50_s>1.2"),
                    parse_gate("dim_stress<2"), parse_gate("barge_in_count>=3"), parse_gate("p_human_mean<0.3")], m)
    assert [r.failed for r in res] == [True, False, True, True, True]  # the alias resolved by evaluate
    assert "not measured" in res[2].reason and res[0].value == 1.5 and res[4].value == 0.2


def test_batch_medians_skip_unmeasured_calls():
    med = batch_metrics([{"a": 1.0, "b": None}, {"a": 3.0, "b": 2.0}, {"a": 10.0, "b": None}])
    assert med == {"a": 3.0, "b": 2.0}
    # counts: an integer where the median is whole, a float where it falls between two calls
    counts = batch_metrics([{"n": 2}, {"n": 3}, {"n": 7}])
    assert counts == {"n": 3} and type(counts["n"]) is int
    assert batch_metrics([{"n": 2}, {"n": 3}]) == {"n": 2.5}
    even = batch_metrics([{"n": 2}, {"n": 4}])
    assert even == {"n": 3} and type(even["n"]) is int


def test_junit_xml_is_accepted_by_parsers(tmp_path):
    res = evaluate([parse_gate("latency_p90_s>1.2"), parse_gate("p_human_mean<0.1")], call_metrics(_doc()))
    calls = [{"file": "a.wav", "status": "ok"}, {"file": "b.wav", "status": "error", "reason": "no audio samples"}]
    text = junit_xml(res, suite="medians over 1 calls", calls=calls)
    root = ET.fromstring(text.split("\n", 1)[1])
    suites = root.findall("testsuite")
    assert suites[0].get("failures") == "1" and len(suites[0].findall("testcase")) == 2
    fail = suites[0].find("testcase/failure")
    assert fail is not None and "latency_p90_s = 1.5" in fail.get("message")
    assert suites[1].find("testcase[@name='b.wav']/skipped").get("message") == "no audio samples"
    junitparser = pytest.importorskip("junitparser")
    p = tmp_path / "j.xml"
    p.write_text(text)
    xml = junitparser.JUnitXml.fromfile(str(p))
    cases = [c for s in xml for c in s]
    assert len(cases) == 4
    results = {c.name: [type(r).__name__ for r in c.result] for c in cases}
    assert results["latency_p90_s>1.2"] == ["Failure"] and results["p_human_mean<0.1"] == []
    assert results["b.wav"] == ["Skipped"]
    # without --allow-skipped the batch exits 1, and a lost call is an error CI pages show red
    err = ET.fromstring(junit_xml(res, suite="s", calls=calls, skipped_is_error=True).split("\n", 1)[1])
    calls_suite = err.findall("testsuite")[1]
    assert calls_suite.get("errors") == "1" and calls_suite.get("skipped") == "0"
    assert calls_suite.find("testcase[@name='b.wav']/error").get("message") == "no audio samples"


def test_score_gate_exit_code_3_and_junit(tmp_path, capsys):
    from livejudge.commands.cli import main
    from livejudge.testing.dialogues import example_dialogue

    wav = example_dialogue(seed=0).write(tmp_path / "call.wav")
    args = ["score", str(wav), "--judge", "none", "--asr", "off", "--json", str(tmp_path / "r.json")]
    assert main(args + ["--fail-if", "latency_p90_s>0.1", "--fail-if", "latency_count<1",
                        "--junit", str(tmp_path / "j.xml")]) == EXIT_GATE
    err = capsys.readouterr().err
    assert "1 of 2 gate(s) failed" in err and "FAIL latency_p90_s>0.1" in err
    r = json.loads((tmp_path / "r.json").read_text())  # the result is written whatever the gate says
    # and it keeps the gate outcomes (a trial found them only on stderr and in JUnit)
    assert [(g["gate"], g["failed"]) for g in r["gates"]] == [("latency_p90_s>0.1", True), ("latency_count<1", False)]
    root = ET.parse(tmp_path / "j.xml").getroot()
    assert root.find("testsuite").get("failures") == "1"
    p90 = r["summary"]["latency_p90_s"]
    capsys.readouterr()
    assert main(args + ["--fail-if", f"latency_p90_s>{p90 + 0.01}"]) == 0
    # said, for a CI log, without reading as if the fail-if condition held (a later trial)
    assert f"1 of 1 gate(s) passed ({wav}): none of --fail-if latency_p90_s>{p90 + 0.01} held" in capsys.readouterr().err
    # --judge none asked for: a P(human) or dimension gate could never pass, refused before the call
    # (it was scored, then failed "not measured"; a re-check)
    capsys.readouterr()
    for gate in ("p_human_mean<0.3", "dim_rhythm<2"):
        assert main(args + ["--fail-if", gate]) == 2
        assert f"--fail-if '{gate}'" in capsys.readouterr().err
    assert main(["score", str(wav.parent), "--out-dir", str(tmp_path / "b"), "--judge", "none", "--asr", "off",
                 "--fail-if", "p_human_mean<0.3"]) == 2 and not (tmp_path / "b" / "summary.json").exists()
    assert main(args + ["--fail-if", "latency_p99_s>1"]) == 2  # a typo is a usage error


def test_gates_on_a_call_cut_short_are_no_pass(tmp_path, capsys, monkeypatch):
    """A trial's `timeout -s TERM 4 livejudge score long.wav --junit j.xml --fail-if ...` stopped
    after 24 s of 635 s and wrote a JUnit file with 0 failures, 0 errors, and stderr said "1 of 1
    gate(s) passed": a CI page showed the stopped call green. Now the JUnit file holds an error
    and stderr says the gates held only on the part measured."""
    from livejudge import session as session_mod
    from livejudge.commands.cli import main
    from livejudge.commands.gates import cut_short
    from livejudge.testing.dialogues import example_dialogue

    wav = example_dialogue(seed=0).write(tmp_path / "call.wav")
    real = session_mod.stream_call

    def stopped_half_way(session, call, **kw):  # as Ctrl-C in the middle of the call
        kw["stop"] = None
        half = type(call)(call.user[: len(call.user) // 2], call.agent[: len(call.agent) // 2],
                          call.sample_rate_in, call.channels) if hasattr(call, "user") else call
        real(session, half, **kw)
        raise KeyboardInterrupt

    monkeypatch.setattr(session_mod, "stream_call", stopped_half_way)
    j = tmp_path / "j.xml"
    code = main(["score", str(wav), "--judge", "none", "--asr", "off", "--echo-gate", "on", "--fail-if", "latency_p90_s>5",
                 "--junit", str(j), "--json", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == 130, err
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["source"]["ended"] == "interrupted (Ctrl-C)" and doc["duration_s"] < 30
    suite = ET.parse(j).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "0", "1")
    case = suite.find("testcase[@name='the call was measured to its end']")
    assert case.find("error").get("type") == "CallCutShort" and "interrupted (Ctrl-C) after" in case.find("error").get("message")
    assert "gate(s) passed" not in err and "which is not a pass" in err
    # a live call ended by Ctrl-C is a call's normal end; a failed one is cut short
    assert cut_short({"source": {"kind": "attach", "ended": "interrupted (Ctrl-C)"}, "duration_s": 40.0}) is None
    assert "failed: agent" in cut_short({"source": {"kind": "attach", "ended": "failed: agent"}, "duration_s": 4.0})
    assert cut_short({"source": {"kind": "score", "ended": "end of input"}}) is None
    # a later trial: attach stopped by a CI timeout's SIGTERM, and one whose --duration-s ended the
    # script mid-turn, both wrote green JUnit files
    assert "interrupted (SIGTERM) after 16.0 s" in cut_short(
        {"source": {"kind": "attach", "ended": "interrupted (SIGTERM)"}, "duration_s": 16.0})
    unfinished = {"source": {"kind": "attach", "ended": "duration", "caller": [{"played": True}, {"played": False}],
                             "caller_not_played": ["cmu_numbers"]}, "duration_s": 12.0}
    assert "the caller's script did not finish (duration after 12.0 s, 2 scripted turn(s)" in cut_short(unfinished)
    assert cut_short({"source": {"kind": "attach", "ended": "script done", "caller": [{"played": True}]}}) is None
    # inside a Pipecat pipeline the observer cannot tell Ctrl-C from SIGTERM: a normal stop
    assert cut_short({"source": {"kind": "pipecat", "ended": "interrupted (Ctrl-C or SIGTERM)"}}) is None
    # the reason alone, for a caller that says its own consequence (check: "not measured")
    from livejudge.commands.gates import cut_short_reason

    failed = {"source": {"kind": "attach", "ended": "failed: agent"}, "duration_s": 4.0}
    assert cut_short_reason(failed) == "the call was cut short (failed: agent after 4.0 s)"
    assert cut_short(failed) == cut_short_reason(failed) + ": the gates read only the part before it"
    assert cut_short(unfinished) == cut_short_reason(unfinished) + ": the gates read only the part played"
    assert cut_short_reason({"source": {"kind": "score", "ended": "end of input"}}) is None


def test_a_gate_says_why_a_metric_was_not_measured_and_if_measured_lets_it_pass(tmp_path, capsys):
    """A trial's batch gate 'yield_mean_s>0.5' failed "not measured on 3 of 4 scored calls" and
    --gate-each failed a call with no barge-in at all, with nothing saying why, and no way to let a
    call without a barge-in pass. The reason now names the cause; 'if measured' passes such calls."""
    from livejudge.commands.cli import main
    from livejudge.commands.gates import parse_gate
    from livejudge.testing.dialogues import example_dialogue

    g = parse_gate("yield_mean_s>0.5 if measured")
    assert g.if_measured and g.text == "yield_mean_s>0.5 if measured" and not parse_gate("yield_mean_s>0.5").if_measured
    r = evaluate([parse_gate("yield_mean_s>0.5"), g], {"user_barge_in_count": 0, "verdict_barge_in_talked_through_count": 0})
    assert r[0].failed and r[0].reason == ("yield_mean_s was not measured: no caller barge-in that the agent yielded "
                                           "to (user_barge_in_count 0, talked through 0) (to let such a call pass: "
                                           "'yield_mean_s>0.5 if measured')")
    assert not r[1].failed and "passes ('if measured')" in r[1].reason
    assert evaluate([g], {"yield_mean_s": 0.7})[0].failed  # measured: gated as ever
    # an agent that talked through every barge-in has no yield time either: not a pass (a later trial)
    # the one barge-in was cut by the call's end (no barge-in verdict either way): not measured, passes
    cut = {"user_barge_in_count": 1, **{f"verdict_barge_in_{o}_count": 0 for o in ("yielded", "slow_yield", "talked_through")}}
    assert not evaluate([g], cut)[0].failed and evaluate([parse_gate("yield_mean_s>0.5")], cut)[0].failed
    # the reason names the cut, from the result's count (it said only "talked through 0": the last note)
    said = evaluate([parse_gate("yield_mean_s>0.5")], {**cut, "barge_in_cut_by_end_count": 1})[0].reason
    assert "(user_barge_in_count 1, talked through 0, cut by the call's end before it was decided 1)" in said, said
    through = evaluate([g], {"user_barge_in_count": 1, "verdict_barge_in_talked_through_count": 1})[0]
    assert through.failed and "the call had the moments, so 'if measured' does not pass it" in through.reason
    # only for metrics a good call may lack: a missing latency or dimension is always a failure
    for text in ("latency_p90_s>1 if measured", "dim_code_switching<2 if measured", "mean_p_human<0.5 if measured"):
        with pytest.raises(ValueError, match="'if measured' is for metrics a good call may lack"):
            parse_gate(text)
    assert parse_gate("verdict_barge_in_flagged_rate>0.5 if measured").if_measured
    # a latency gate stays strict and gets no such hint: a silent agent must fail it
    lat = evaluate([parse_gate("latency_p90_s>1")], {"latency_count": 0})[0]
    assert lat.failed and "no reply to the caller to time (latency_count 0)" in lat.reason and "if measured" not in lat.reason
    # a batch: two calls, one with a yielded-to barge-in (seed 0 of the built dialogues has one), one without
    d = tmp_path / "calls"
    d.mkdir()
    example_dialogue(seed=0).write(d / "a.wav")
    x = example_dialogue(seed=0)
    cut = int(6.0 * 16000)  # the first 6 s: replies, no barge-in
    import soundfile as sf
    sf.write(str(d / "b.wav"), np.stack([x.call.user[:cut], x.call.agent[:cut]], axis=1), 16000)
    base = ["score", str(d), "--out-dir", str(tmp_path / "out"), "--judge", "none", "--asr", "off", "--gate-each"]
    assert main(base + ["--fail-if", "yield_mean_s>5"]) == EXIT_GATE
    err = capsys.readouterr().err
    # a.wav measured its yield; b.wav's reason is named (a trial read only "(not measured)")
    assert ("failed on 1 of 2 scored calls: b.wav (not measured: no caller barge-in that the agent yielded to "
            "(user_barge_in_count 0, talked through 0))") in err
    assert main(base + ["--fail-if", "yield_mean_s>5 if measured"]) == 0, capsys.readouterr().err


def test_unknown_metric_hint_puts_the_nearest_name_first():
    """'latency_p90' listed six 'latency…' names (a new user's trial); the nearest spelling comes
    first, and a name held whole inside others ('p_human') finds them instead of every 'p…'."""
    from livejudge.commands.gates import parse_gate

    with pytest.raises(ValueError, match=r"did you mean latency_p90_s[,?]"):
        parse_gate("latency_p90>1.2")
    with pytest.raises(ValueError) as exc:
        parse_gate("p_human<0.5")
    hint = str(exc.value).split("did you mean ")[1].split("?")[0].split(", ")
    assert hint and all("p_human" in k for k in hint), hint


def test_a_misspelt_dimension_gate_finds_the_dimension_and_the_docs_list_every_id():
    """A trial gated 'dim_breathing<3' (the meter shows "breathing/mouth") and was offered the first
    six dimensions. The hint now finds the dimension by its label; with no match it lists every id,
    and docs/ci-gates.md lists them all (read here, so the list cannot drift)."""
    import re
    from pathlib import Path

    from livejudge.commands.gates import parse_gate
    from livejudge.judge.model.dimensions import DIMENSIONS

    with pytest.raises(ValueError, match=r"did you mean dim_micro_physiological_noise\?"):
        parse_gate("dim_breathing<3")
    with pytest.raises(ValueError, match=r"did you mean dim_sycophant_behavior\?"):
        parse_gate("dim_sycophancy>4")
    with pytest.raises(ValueError) as exc:
        parse_gate("dim_xyz<1")
    assert all(d.id in str(exc.value) for d in DIMENSIONS) and "\n" not in str(exc.value)
    doc = (Path(__file__).resolve().parents[1] / "docs" / "ci-gates.md").read_text()
    para = doc[doc.index("`dim_<id>` (mean score"):doc.index("shipped head measures")]
    assert re.findall(r"`([a-z_]+)`", para.replace("`dim_<id>`", "")) == [d.id for d in DIMENSIONS]


def test_every_command_help_ends_with_its_exit_codes(capsys):
    """docs/cli.md says every command's --help ends with the exit codes; compare, report, train,
    eval and serve-judge did not (a new user's trial)."""
    from livejudge.commands.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, parser in sub.choices.items():
        text = parser.format_help().strip()
        tail = " ".join(text[text.rfind("exit codes:"):].split()) if "exit codes:" in text else ""
        assert tail and "2 bad input or usage" in tail, name


def test_every_command_help_fits_80_columns(monkeypatch):
    """A new user's trial read `compare --help` at 80 columns: a 499-character description line and
    a 230-character exit-codes line. Descriptions and epilogs now wrap at the width, keeping their
    own line breaks (runner.HelpFormatter)."""
    from livejudge.commands.cli import build_parser

    monkeypatch.setenv("COLUMNS", "80")
    top = build_parser()
    sub = next(a for a in top._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, parser in [("livejudge", top), *sub.choices.items()]:
        long = [x for x in parser.format_help().splitlines() if len(x) > 80]
        assert not long, (name, long[:2])


def test_a_gate_on_a_dimension_the_head_never_measures_says_it_can_never_pass():
    """A gate on a dimension the head does not measure failed as "was not measured", which read
    as a fault of the call (a trial gated on dim_memory_consistency<2)."""
    from livejudge.commands.gates import gate_call

    doc = _doc()
    doc["judge_info"] = {"dimensions": {"groups": [["rhythm"]],
                                        "not_measured": {"memory_consistency": "the head reads no text"}}}
    res = gate_call([parse_gate("dim_memory_consistency<2"), parse_gate("dim_stress<2"), parse_gate("dim_rhythm<2")], doc)
    assert [r.failed for r in res] == [True, True, False]
    assert "never measured by this judge's head (the head reads no text), so this gate can never pass" in res[0].reason
    assert res[1].reason.startswith("dim_stress was not measured: no judged window scored this dimension")  # measured by the head, gated in this call's windows
    # a dimension sharing one learned score with others: its failed gate names them (a trial read
    # "dim_accent = 1.87" as evidence about accent alone); a passed one is unchanged
    doc["judge_info"]["dimensions"]["groups"] = [["rhythm", "intonation", "stress"]]
    fail, ok = gate_call([parse_gate("dim_rhythm<4"), parse_gate("dim_rhythm<2")], doc)
    assert fail.reason == ("dim_rhythm = 3 (< 4); one learned score shared with dim_intonation, dim_stress (the head "
                           "cannot tell them apart)")
    assert not ok.failed and ok.reason == "dim_rhythm = 3"


def test_a_gate_the_loaded_head_can_never_pass_is_refused_before_the_call(tmp_path, capsys):
    """A trial's --fail-if 'dim_memory_consistency<2' scored the whole call and then exited 3 (a
    gate that could never pass is a usage error, knowable once the judge has loaded): now exit 2
    before any call is scored, single or batch, naming the head; a measured dimension still runs."""
    from pathlib import Path

    from livejudge.commands.cli import main
    from livejudge.judge.model.judge import load_judge

    judge = load_judge("whisper")
    never = next(iter(judge.view["not_measured"]))
    measured = judge.view["groups"][0][0]
    wav = Path(__file__).resolve().parents[1] / "examples" / "example_call.wav"
    batch = tmp_path / "calls"
    batch.mkdir()
    (batch / "a.wav").write_bytes(wav.read_bytes())
    for argv in (["score", str(wav)], ["score", str(batch), "--out-dir", str(tmp_path / "out")]):
        assert main([*argv, "--judge", "whisper", "--fail-if", f"dim_{never}<2"]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert (f"--fail-if 'dim_{never}<2': dim_{never} is never measured by the head {judge.config.name} "
                f"{judge.config.version}") in err and "drop it" in err
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.json"))  # nothing scored
    assert main(["score", str(wav), "--judge", "whisper", "--fail-if", f"dim_{measured}<0"]) == 0


def test_a_gate_can_fail_a_call_whose_channels_look_wrong(tmp_path, capsys):
    """input_health_warning_count counts source.input_health, so a CI gate can refuse a call
    whose channels look wrong (a trial: a swap read the caller as the agent, P(human) 0.92)."""
    import numpy as np
    import soundfile as sf

    from livejudge.commands.cli import main
    from livejudge.testing.dialogues import example_dialogue

    wav = example_dialogue(seed=0).write(tmp_path / "call.wav")
    x, rate = sf.read(str(wav), dtype="float32")
    sf.write(str(tmp_path / "dc.wav"), x + np.float32(0.05), rate)  # a DC offset on both channels
    args = ["--judge", "none", "--asr", "off", "--fail-if", "input_health_warning_count>0"]
    assert main(["score", str(wav), "--json", str(tmp_path / "ok.json"), *args]) == 0
    assert json.loads((tmp_path / "ok.json").read_text())["summary"]["input_health_warning_count"] == 0
    assert main(["score", str(tmp_path / "dc.wav"), "--json", str(tmp_path / "dc.json"), *args]) == 3
    doc = json.loads((tmp_path / "dc.json").read_text())
    assert doc["summary"]["input_health_warning_count"] == len(doc["source"]["input_health"]) == 2
    assert "FAIL input_health_warning_count>0: input_health_warning_count = 2" in capsys.readouterr().err
    # one kind of warning: the DC offset fails its own gate and passes the swap's (there was no gate per code)
    per_code = ["--judge", "none", "--asr", "off", "--fail-if", "input_health_channel_swap_count>0"]
    assert main(["score", str(tmp_path / "dc.wav"), *per_code]) == 0
    assert main(["score", str(tmp_path / "dc.wav"), *per_code, "--fail-if", "input_health_dc_offset_count>1"]) == 3
    err = capsys.readouterr().err
    assert "FAIL input_health_dc_offset_count>1: input_health_dc_offset_count = 2 (> 1): the user channel" in err
    assert "FAIL input_health_channel_swap" not in err


def test_every_input_health_code_has_a_gate_metric():
    """Each code a ``HealthWarning`` is built with (read from the sources) is in ``WARNING_CODES``,
    so ``input_health_<code>_count`` exists for it; a per-code gate shows only its own warnings,
    and an older result that counted warnings without listing them leaves the counts unmeasured."""
    import re
    from pathlib import Path

    import livejudge
    from livejudge.commands.gates import call_metrics, gate_call, health_metric_names
    from livejudge.timing.health import WARNING_CODES

    src = "\n".join(p.read_text(encoding="utf-8") for p in Path(livejudge.__file__).parent.rglob("*.py"))
    built = set(re.findall(r'HealthWarning\(\s*"([a-z_]+)"', src))
    built |= set(re.findall(r'code="([a-z_]+)"', src)) & set(re.findall(r'"([a-z_]+)"', src))
    assert len(built) >= 10 and built <= set(WARNING_CODES), built - set(WARNING_CODES)
    assert set(health_metric_names()) <= set(known_metrics())
    doc = {"summary": {"input_health_warning_count": 2}, "source": {"input_health": [
        {"code": "dc_offset", "message": "the user channel has a DC offset"},
        {"code": "channel_swap", "message": "the channels look swapped"}]}}
    m = call_metrics(doc)
    assert (m["input_health_dc_offset_count"], m["input_health_channel_swap_count"], m["input_health_clipping_count"]
            ) == (1, 1, 0)
    r, = gate_call([parse_gate("input_health_channel_swap_count>0")], doc)
    assert r.failed and r.reason == "input_health_channel_swap_count = 1 (> 0): the channels look swapped"
    # a batch row keeps each warning's code beside its message: --gate-each shows the gate's own
    from livejudge.commands.gates import evaluate_each

    row = {"file": "a.wav", "metrics": m, "input_health": [w["message"] for w in doc["source"]["input_health"]],
           "input_health_codes": ["dc_offset", "channel_swap"]}
    _, failed_on = evaluate_each([parse_gate("input_health_dc_offset_count>0")], [row])
    bad, = failed_on["input_health_dc_offset_count>0"]
    assert bad["reason"] == "input_health_dc_offset_count = 1 (> 0): the user channel has a DC offset"
    old = call_metrics({"summary": {"input_health_warning_count": 1}})
    assert old["input_health_dc_offset_count"] is None
    assert call_metrics({"summary": {"input_health_warning_count": 0}})["input_health_dc_offset_count"] == 0


def test_a_call_most_of_whose_windows_the_judge_service_never_judged():
    """A new user's trial: the judge service died 8 s into a call; 6 windows judged, 16 not. The
    count is a gate metric, and a P(human) gate fails ("not measured", saying why) instead of
    passing on the one window with evidence; a short outage leaves P(human) measured."""
    from livejudge.commands.gates import gate_call

    assert "judge_unavailable_windows" in known_metrics()
    doc = _doc(judged_windows=6, judge_unavailable_windows=16)
    m = call_metrics(doc)
    assert m["judge_unavailable_windows"] == 16 and type(m["judge_unavailable_windows"]) is int
    assert m["mean_p_human"] is None and m["dim_rhythm"] is None
    assert m["latency_p90_s"] == 1.5  # timing was measured throughout
    res = gate_call([parse_gate("judge_unavailable_windows>0"), parse_gate("p_human_mean<0.1"),
                     parse_gate("dim_rhythm<1"), parse_gate("latency_p90_s>2")], doc)
    assert [r.failed for r in res] == [True, True, True, False]
    assert res[0].reason == "judge_unavailable_windows = 16 (> 0)"
    assert res[1].reason.startswith("p_human_mean was not measured: the judge service could not judge 16 windows "
                                    "and judged 6 (judge_unavailable_windows)")
    short = call_metrics(_doc(judged_windows=20, judge_unavailable_windows=2))
    assert short["mean_p_human"] == 0.2 and short["dim_rhythm"] == 3.0 and short["judge_unavailable_windows"] == 2
    short_doc = _doc(judged_windows=20, judge_unavailable_windows=2)
    assert not gate_call([parse_gate("p_human_mean<0.1")], short_doc)[0].failed


def test_a_batch_gate_with_unmeasured_calls_says_whether_the_median_fails_too():
    """A trial fixed the one call that did not measure yield_mean_s and was still red: the reason
    gave the median of the others (0.45 over a 0.4 bound) without saying it fails too."""
    from livejudge.commands.gates import evaluate_batch, parse_gate

    rows = [{"file": "a.wav", "metrics": {"yield_mean_s": 0.45}}, {"file": "b.wav", "metrics": {"yield_mean_s": 0.5}},
            {"file": "c.wav", "metrics": {"yield_mean_s": None, "user_barge_in_count": 1}}]
    fail, = evaluate_batch([parse_gate("yield_mean_s>0.4")], rows)
    assert fail.failed and fail.reason.endswith("the median of the 2 that measured it is 0.475, which fails too (> 0.4)")
    held, = evaluate_batch([parse_gate("yield_mean_s>0.6")], rows)
    # "which holds" read as "the condition holds", the opposite (a trial)
    assert held.failed and held.reason.endswith("the median of the 2 that measured it is 0.475, which would pass "
                                                "(yield_mean_s > 0.6 does not hold)")


def test_an_input_health_gate_names_the_warnings():
    """A trial's failed input-health gate said only "input_health_warning_count = 1 (> 0)": a
    swap and a DC offset the high-pass removed read alike."""
    from livejudge.commands.gates import gate_call, parse_gate

    doc = {"summary": {"input_health_warning_count": 1}, "source": {"input_health": [
        {"code": "dc_offset", "message": "the user channel has a DC offset of +0.051 full scale"}]}}
    r, = gate_call([parse_gate("input_health_warning_count>0")], doc)
    assert r.failed and r.reason == ("input_health_warning_count = 1 (> 0): the user channel has a DC offset of "
                                     "+0.051 full scale")
    ok, = gate_call([parse_gate("input_health_warning_count>1")], doc)
    assert not ok.failed and ok.reason == "input_health_warning_count = 1"


def test_a_call_that_did_not_measure_a_gated_metric_says_why_in_its_junit_case():
    """A re-check: in median mode, a call's JUnit case read only "not measured in this call:
    yield_mean_s"; it now carries why, as the --gate-each line does."""
    from livejudge.commands.gates import unmeasured_by_call

    rows = [{"file": "a.wav", "metrics": {"user_barge_in_count": 0, "yield_mean_s": None}},
            {"file": "b.wav", "metrics": {"user_barge_in_count": 1, "yield_mean_s": 0.4}}]
    assert unmeasured_by_call([parse_gate("yield_mean_s>1")], rows) == {"a.wav": [
        "yield_mean_s (no caller barge-in that the agent yielded to (user_barge_in_count 0, talked through 0))"]}
    xml = junit_xml([], suite="medians", calls=[{"file": "a.wav", "status": "ok"}, {"file": "b.wav", "status": "ok"}],
                    unmeasured=unmeasured_by_call([parse_gate("yield_mean_s>1")], rows))
    assert "not measured in this call: yield_mean_s (no caller barge-in" in xml


def test_evidence_coverage_is_a_gate_metric_that_needs_the_judge():
    """A trial: every numeric summary key was accepted as a gate but ``evidence_coverage`` ("unknown
    metric"), though ci-gates.md says any number in the summary. It gates, and needs the judge."""
    from livejudge.commands.gates import call_metrics, needs_judge, parse_gates, evaluate

    g, = parse_gates(["evidence_coverage<0.5"])
    assert needs_judge(g)
    doc = {"duration_s": 40.0, "summary": {"evidence_coverage": 0.4}}
    res, = evaluate([g], call_metrics(doc))
    assert res.failed and res.value == 0.4
