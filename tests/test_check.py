"""`livejudge check`: expectations at moments of recorded calls built from real clips.

The calls are the polite and rude agents of tests/test_verdicts.py (their planted moments are
the truth): exit codes 0/1/2, JUnit XML, expectations files (JSON and TOML), pinning verdicts of
a result and re-checking the same recording (same verdicts, same exit codes).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from livejudge.commands.check import Expectation, check, load_expectations, pin
from livejudge.commands.cli import main
from livejudge.timing.verdicts import Verdict

from livejudge.testing.verdict_calls import polite_call, rude_call


def planted_at(planted, kind, outcome):
    return next(t for k, o, t, _ in planted if k == kind and o == outcome)


@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    """Rude call (user on channel 0) and polite call (user on channel 1) as WAV files, with
    their planted moments, and the rude call's result document."""
    d = tmp_path_factory.mktemp("calls")
    rude, rude_planted = rude_call(noise_dbfs=-50.0)
    polite, polite_planted = polite_call(noise_dbfs=-50.0, noise_kind="babble")
    rude.write(d / "rude.wav")
    polite.write(d / "polite.wav", user_channel=1)
    assert main(["check", str(d / "rude.wav"), "--json", str(d / "rude.json")]) == 0
    return {"dir": d, "rude": d / "rude.wav", "polite": d / "polite.wav", "rude_json": d / "rude.json",
            "rude_planted": rude_planted, "polite_planted": polite_planted}


def run(args, capsys):
    code = main(["check", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


# ----------------------------------------------------------------------------- exit codes
def test_pass_and_fail_at_planted_moments(calls, capsys):
    rp, pp = calls["rude_planted"], calls["polite_planted"]
    polite = [calls["polite"], "--user-channel", 1, "--agent-channel", 0]
    t = planted_at(pp, "barge_in", "yielded")  # the polite agent yields in 0.4 s
    code, out, _ = run([*polite, "--at", t, "--expect", "yield", "--within", 0.8], capsys)
    assert code == 0 and out.startswith("PASS"), out
    code, out, _ = run([*polite, "--at", t, "--expect", "yield", "--within", 0.2], capsys)
    assert code == 3 and "later than 0.2 s" in out, out  # 0.4 s yield > 0.2 s
    code, out, _ = run([*polite, "--at", planted_at(pp, "backchannel", "held"), "--expect", "hold"], capsys)
    assert code == 0, out
    code, out, _ = run([*polite, "--at", planted_at(pp, "pause", "waited"), "--expect", "yield"], capsys)
    assert code == 0, out
    t = planted_at(rp, "barge_in", "talked_through")
    code, out, _ = run([calls["rude"], "--at", t, "--expect", "yield"], capsys)
    assert code == 3 and "talked through" in out, out
    code, out, _ = run([calls["rude"], "--at", planted_at(rp, "backchannel", "yielded"), "--expect", "hold"], capsys)
    assert code == 3 and "yielded" in out, out
    code, out, _ = run([calls["rude"], "--at", planted_at(rp, "pause", "cut_in"), "--expect", "yield"], capsys)
    assert code == 3 and "cut in" in out, out
    # no caller moment near: a failure naming the nearest one
    code, out, err = run([calls["rude"], "--at", 1.0, "--expect", "yield"], capsys)
    assert code == 3 and "no caller moment" in out and "nearest" in out, out
    # its next step is the tolerance, not "fix the agent" (a re-check); and not "pin it again",
    # which --at/--expect never pinned (the last read)
    assert "widen --tolerance-s" in err and "fix the agent" not in err and "pin it again" not in err
    # nothing was pinned, so nothing "moved": the time itself is what to check (a re-check)
    assert "no caller moment near --at: take the time from the numbered list" in err and "moved" not in err
    # from a pinned file, a moment not found may be pinned again from this recording
    f = calls["dir"] / "moved.json"
    f.write_text(json.dumps({"livejudge_expectations": 1, "call": "rude.wav",
                             "expect": [{"at_s": 1.0, "expect": "yield"}]}))
    code, out, err = run(["--expectations", f], capsys)
    assert code == 3 and "no caller moment" in out, out
    assert "widen --tolerance-s, or pin it again from this recording" in err and "fix the agent" not in err


@pytest.mark.parametrize("args, needle", [
    (["--at", 3.0], "go together"),
    # the flags' names, not the expectation file's keys (a trial read "at_s must be …")
    (["--at", 3.0, "--expect", "hold", "--within", 0.5], "--within goes with --expect 'yield'"),
    (["--at", -3.0, "--expect", "yield"], "livejudge: --at must be a time ≥ 0 seconds, got -3.0"),
    (["--at", 3.0, "--expect", "yield", "--within", -1.0], "livejudge: --within must be ≥ 0 seconds, got -1.0"),
    (["--expectations", "missing.json"], "cannot read expectations file"),
    (["--yield-max-s", -1, "--at", 3.0, "--expect", "yield"], "--yield-max-s"),
    (["--event", 1], "--event goes with --pin-from"),
])
def test_usage_errors_exit_2_with_one_line(calls, capsys, args, needle):
    code, out, err = run([calls["rude"], *args], capsys)
    assert code == 2, (out, err)
    assert needle in err and len(err.strip().splitlines()) == 1, err


def test_input_errors_exit_2(calls, capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = run([calls["rude"], "--expectations", bad], capsys)
    assert code == 2 and "not valid JSON" in err
    bad.write_text(json.dumps({"expect": [{"at_s": 3.0, "expect": "stop"}]}))
    code, _, err = run([calls["rude"], "--expectations", bad], capsys)
    assert code == 2 and "expect[0]" in err and "'yield' or 'hold'" in err
    code, _, err = run([tmp_path / "nope.wav", "--at", 1.0, "--expect", "yield"], capsys)
    assert code == 2 and "nope.wav" in err
    code, _, err = run(["--at", 1.0, "--expect", "yield"], capsys)
    assert code == 2 and "no call" in err
    # a moment past the recording's end is bad input (exit 2), not a failed moment (exit 3): a
    # truncated recording read as a regression in a new user's trial
    dur = json.loads(calls["rude_json"].read_text())["duration_s"]
    code, _, err = run([calls["rude"], "--at", round(dur + 5.0, 1), "--expect", "yield"], capsys)
    assert code == 2 and "past the end of the recording" in err and f"({dur:.2f} s long)" in err
    code, _, err = run(["--pin-from", calls["rude_json"], "--event", 999], capsys)
    assert code == 2 and "out of range" in err
    n_latency = next(i for i, v in enumerate(json.loads(calls["rude_json"].read_text())["verdicts"])
                     if v["kind"] == "latency")
    code, _, err = run(["--pin-from", calls["rude_json"], "--event", n_latency], capsys)
    assert code == 2 and "only caller moments" in err
    code, _, err = run(["--pin-from", calls["rude_json"]], capsys)
    assert code == 2 and "nothing to pin" in err


# ----------------------------------------------------------------------------- files and JUnit
def test_expectations_file_json_and_toml_with_junit(calls, capsys, tmp_path):
    rp = calls["rude_planted"]
    moments = [(planted_at(rp, "barge_in", "yielded"), "yield", 0.6),    # passes (0.3 s)
               (planted_at(rp, "barge_in", "talked_through"), "yield", None),  # fails
               (planted_at(rp, "backchannel", "yielded"), "hold", None)]  # fails
    doc = {"livejudge_expectations": 1, "call": "rude.wav", "tolerance_s": 0.3,
           "expect": [{"at_s": t, "expect": e, **({"within_s": w} if w else {})} for t, e, w in moments]}
    j = calls["dir"] / "exp.json"
    j.write_text(json.dumps(doc))
    toml = calls["dir"] / "exp.toml"
    toml.write_text("call = \"rude.wav\"\ntolerance_s = 0.3\n" + "".join(
        f"\n[[expect]]\nat_s = {t}\nexpect = \"{e}\"\n" + (f"within_s = {w}\n" if w else "") for t, e, w in moments))
    for f in (j, toml):
        xml = tmp_path / f"{f.suffix[1:]}.xml"
        code, out, _ = run(["--expectations", f, "--junit", xml], capsys)  # the call comes from the file
        assert code == 3
        assert [line[:4] for line in out.splitlines()] == ["PASS", "FAIL", "FAIL"], out
        suite = ET.parse(xml).getroot().find("testsuite")
        assert (suite.get("tests"), suite.get("failures")) == ("3", "2")
        cases = suite.findall("testcase")
        assert [c.find("failure") is not None for c in cases] == [False, True, True]
        assert "talked through" in cases[1].find("failure").get("message")
    assert load_expectations(j)["expect"] == load_expectations(toml)["expect"]


# ----------------------------------------------------------------------------- pinning round trip
def test_pin_from_round_trip_same_verdicts_same_exit_codes(calls, capsys, tmp_path):
    result = json.loads(calls["rude_json"].read_text())
    flagged_moments = [i for i, v in enumerate(result["verdicts"])
                       if v["kind"] in ("barge_in", "backchannel", "pause") and not v["ok"]]
    ok_moments = [i for i, v in enumerate(result["verdicts"])
                  if v["kind"] in ("barge_in", "backchannel", "pause") and v["ok"]]
    assert len(flagged_moments) == 5 and len(ok_moments) == 1  # 2 talked through, 2 false yields, 1 cut-in; 1 yield

    expected = tmp_path / "expected.json"
    code, out, _ = run(["--pin-from", calls["rude_json"], "--flagged", *sum((["--event", i] for i in ok_moments), []),
                        "-o", expected], capsys)
    assert code == 0
    code, out, err = run([calls["rude"], "--expectations", expected], capsys)
    assert code == 3  # pinned as a person would act: every flagged moment fails, the good one passes
    # the next step is said (a trial read "FAIL …: yielded" with none): fix the agent, or pin again
    assert "a FAIL is the agent doing otherwise than the file pins: fix the agent, or, where the change is " \
           "wanted, pin the call again" in err
    assert [line[:4] for line in out.splitlines()].count("FAIL") == 5
    assert [line[:4] for line in out.splitlines()].count("PASS") == 1

    observed = tmp_path / "observed.json"
    code, _, _ = run(["--pin-from", calls["rude_json"], "--pin", "observed", "--flagged",
                      *sum((["--event", i] for i in ok_moments), []), "-o", observed], capsys)
    assert code == 0
    again = tmp_path / "again.json"
    code, out, err = run([calls["rude"], "--expectations", observed, "--json", again], capsys)
    assert code == 0 and out.count("PASS") == 6, out  # a snapshot of the same recording holds
    assert "a FAIL is" not in err
    for line in out.splitlines():  # each line names its moment once ("backchannel at 6.22 s: held")
        label, _, reason = line[6:].partition(": ")
        assert not reason.startswith(label), line
    # the same recording, scored again: the same verdicts
    same = [(v["kind"], v["outcome"], v["t_s"], v["value_s"]) for v in json.loads(again.read_text())["verdicts"]]
    assert same == [(v["kind"], v["outcome"], v["t_s"], v["value_s"]) for v in result["verdicts"]]
    # and the result document itself as CALL gives the same answers as the recording
    code2, out2, _ = run([calls["rude_json"], "--expectations", observed], capsys)
    assert (code2, out2) == (code, out)
    code2, out2, _ = run([calls["rude_json"], "--expectations", expected], capsys)
    assert code2 == 3 and out2.count("FAIL") == 5


def test_listing_numbers_the_pinnable_moments(calls, capsys):
    """One line per moment (a reply after dead air, or a start over the caller, is one line,
    numbered with both verdicts); every verdict's index, the number --event takes, is on exactly
    one line."""
    code, out, err = run([calls["rude_json"]], capsys)
    assert code == 0
    lines = out.splitlines()
    vs = json.loads(calls["rude_json"].read_text())["verdicts"]
    nums = [[int(x) for x in line.split()[0].rstrip("*").split(",")] for line in lines]
    assert sorted(sum(nums, [])) == list(range(len(vs))) and nums[0] == [0]
    joined = [n for n in nums if len(n) > 1]  # the rude agent's dead air before a reply, its talk-overs
    kinds = [sorted(vs[i]["kind"] for i in n) for n in joined]
    assert ["dead_air", "latency"] in kinds and ["latency", "pause"] in kinds  # rude's dead air, its cut-ins
    assert all(k[0] == "latency" or k == ["dead_air", "latency"] for k in kinds)  # each around one reply's latency
    assert all(set(k) <= {"dead_air", "latency", "pause", "talk_over", "restart"} and k.count("latency") == 1 for k in kinds)
    for n in joined:  # a talk-over joins the negative latency of the same start
        if "talk_over" in {vs[i]["kind"] for i in n}:
            lat, over = sorted(n, key=lambda i: vs[i]["kind"])
            assert vs[lat]["value_s"] < 0 and abs(vs[lat]["t_s"] - vs[over]["t_s"]) <= 1e-3
    assert len(lines) == len(vs) - len(joined)
    assert sum("*" in line.split()[0] for line in lines) == 6  # barge-ins, backchannels, pause
    flagged_moments = sum(1 for n in nums if any(not vs[i]["ok"] for i in n))
    assert (f"livejudge: {len(lines)} moments, {flagged_moments} flagged ({len(vs)} verdicts, "
            f"{sum(not v['ok'] for v in vs)} flagged; one event judged twice (a reply after dead air or after "
            "yielding, a start in the caller's pause or over their speech) is one moment") in err


def test_check_is_pure_on_verdicts():
    vs = [Verdict("barge_in", "yielded", True, 10.0, 0.45, 12.0),
          Verdict("backchannel", "held", True, 10.3, 2.0, 11.0)]
    r = check(Expectation(10.05, "yield", 0.5), vs)  # nearest: the barge-in
    assert r.passed and r.verdict is vs[0]
    r = check(Expectation(10.05, "hold", kind="backchannel"), vs)
    assert r.passed and r.verdict is vs[1]
    r = check(Expectation(10.05, "yield", 0.4), vs)
    assert not r.passed and "later than 0.4 s" in r.reason
    assert not check(Expectation(11.0, "yield"), vs, tolerance_s=0.2).passed
    # a slow yield passes "yield" without --within, and the line says it is flagged (a trial read "PASS …
    # slow yield" as a pass of a flagged moment)
    slow = [Verdict("barge_in", "slow_yield", False, 10.0, 1.2, 12.0)]
    r = check(Expectation(10.05, "yield"), slow)
    assert r.passed and "it yielded after 1.20 s, as expected, though the verdicts flag it; add --within S" in r.reason
    assert not check(Expectation(10.05, "yield", 0.8), slow).passed
    doc = pin({"verdicts": [v.to_dict() for v in vs], "verdict_config": {"yield_max_s": 0.8}}, [0, 1])
    assert [(e["expect"], e.get("within_s")) for e in doc["expect"]] == [("yield", 0.8), ("hold", None)]


def test_pinned_expectations_find_the_recording_from_any_folder(tmp_path, monkeypatch):
    """`score` stores the recording's path as given (relative to where it ran); `--pin-from -o`
    writes it relative to the expectations file, so the file re-checks from any folder (a new
    user's run failed with 'audio file not found' before)."""
    import shutil

    rec_dir, out_dir, elsewhere = tmp_path / "calls", tmp_path / "ci" / "expect", tmp_path / "else"
    for d in (rec_dir, out_dir, elsewhere):
        d.mkdir(parents=True)
    shutil.copy(Path(__file__).resolve().parents[1] / "examples" / "example_call.wav", rec_dir / "call.wav")
    monkeypatch.chdir(tmp_path)
    assert main(["score", "calls/call.wav", "--judge", "none", "--json", "calls/r.json", "--display", "none"]) == 0
    assert main(["check", "--pin-from", "calls/r.json", "--flagged", "-o", str(out_dir / "e.json")]) == 0
    doc = json.loads((out_dir / "e.json").read_text())
    assert doc["call"] == "../../calls/call.wav"
    monkeypatch.chdir(elsewhere)
    rc = main(["check", "--expectations", str(out_dir / "e.json")])
    assert rc in (0, 3)  # checked (pass, or 3: an expectation failed), not a usage/input error (2)
    # pinned from another folder (the helper's case): the result's absolute path finds the call
    monkeypatch.chdir(elsewhere)
    assert main(["check", "--pin-from", str(tmp_path / "calls" / "r.json"), "--flagged", "-o", "e2.json"]) == 0
    assert (elsewhere / json.loads((elsewhere / "e2.json").read_text())["call"]).resolve() == (rec_dir / "call.wav")
    assert main(["check", "--expectations", "e2.json"]) in (0, 3)
    # a result whose recording is gone: a one-line error (exit 2), not a file that can never run
    r = json.loads((rec_dir / "r.json").read_text())
    r["source"]["file"], r["source"]["file_resolved"] = "gone/call.wav", str(tmp_path / "gone" / "call.wav")
    (elsewhere / "r_gone.json").write_text(json.dumps(r))
    assert main(["check", "--pin-from", "r_gone.json", "--flagged", "-o", "e3.json"]) == 2
    assert not (elsewhere / "e3.json").exists()


def test_expectations_pinned_from_a_live_calls_result_name_its_recording(calls, tmp_path, monkeypatch, capsys):
    """A trial: `check --pin-from probe.json --flagged -o pinned.json` (a probe run with --record
    probe.wav), then `check --expectations pinned.json`: "no call: give a recording …", exit 2. The
    pinned file named no call, as attach and probe keep the recording as ``source.record``, not
    ``source.file``. It now names the --record file, found from any folder as score's is."""
    import shutil

    rec_dir, elsewhere = tmp_path / "run", tmp_path / "else"
    rec_dir.mkdir()
    elsewhere.mkdir()
    shutil.copy(calls["rude"], rec_dir / "probe.wav")
    r = json.loads(calls["rude_json"].read_text())
    r["source"] = {"kind": "attach", "url": "ws://127.0.0.1:8765", "record": "probe.wav",
                   "record_resolved": str(rec_dir / "probe.wav")}  # as attach writes it, run from rec_dir
    (rec_dir / "probe.json").write_text(json.dumps(r))
    monkeypatch.chdir(elsewhere)
    assert main(["check", "--pin-from", str(rec_dir / "probe.json"), "--flagged", "-o", "pinned.json"]) == 0
    doc = json.loads((elsewhere / "pinned.json").read_text())
    assert (elsewhere / doc["call"]).resolve() == (rec_dir / "probe.wav").resolve()
    capsys.readouterr()
    assert main(["check", "--expectations", "pinned.json"]) == 3  # the rude call's flagged moments fail
    out = capsys.readouterr().out
    assert out.count("FAIL") == len(doc["expect"]) > 0


def test_flagged_says_what_it_left_out(calls, capsys, tmp_path):
    """--flagged pins caller moments only: when every flagged moment is agent-side (latency, dead
    air) it says so and names the --fail-if gates, not "give ... or --flagged"; when it pins
    some, one stderr line says how many flagged moments it left out and why."""
    result = json.loads(calls["rude_json"].read_text())
    vs = result["verdicts"]
    agent_side = [v for v in vs if v["kind"] not in ("barge_in", "backchannel", "pause")]
    assert any(v["kind"] == "latency" and not v["ok"] for v in agent_side)
    only = tmp_path / "agent_side.json"
    only.write_text(json.dumps({**result, "verdicts": agent_side}))
    code, out, err = run(["--pin-from", only, "--flagged"], capsys)
    n_flag = sum(1 for line in run([only], capsys)[1].splitlines() if "FLAG" in line)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "give --event N" not in err
    assert f"--flagged: the {n_flag} flagged moments are all agent-side (" in err, err
    assert "cannot be pinned as caller expectations" in err
    assert "--fail-if 'verdict_latency_s2s_count>0'" in err and "docs/ci-gates.md" in err
    # the suggested gates pass on a call with no such moment at all (a flagged-rate gate was
    # "not measured" there, so it failed a clean call: a trial) and fail on this one
    import re

    from livejudge.commands.gates import evaluate, parse_gate
    from livejudge.timing.verdicts import summarize_verdicts

    gates = [parse_gate(g) for g in re.findall(r"--fail-if '([^']+)'", err)]
    assert gates and not any("rate" in g.metric for g in gates)
    assert not any(r.failed for r in evaluate(gates, summarize_verdicts([])))
    assert any(r.failed for r in evaluate(gates, summarize_verdicts(Verdict.from_dict(v) for v in agent_side)))

    code, out, err = run(["--pin-from", calls["rude_json"], "--flagged"], capsys)
    assert code == 0 and len(json.loads(out)["expect"]) == 5
    n_all = sum(1 for line in run([calls["rude_json"]], capsys)[1].splitlines() if "FLAG" in line)
    assert err.count("\n") == 1, err
    assert f"--flagged: {n_all - 5} of the {n_all} flagged moments not pinned: agent-side" in err, err

    clean = tmp_path / "clean.json"
    clean.write_text(json.dumps({**result, "verdicts": [v for v in vs if v["ok"]]}))
    # a clean call: exit 0 with an expectations document holding none (a CI loop pinning every
    # call stopped with exit 2 on the clean one); checking it lists the moments, passes, and
    # still writes --junit's file (0 tests)
    exp = tmp_path / "clean_exp.json"
    code, out, err = run(["--pin-from", clean, "--flagged", "-o", exp], capsys)
    assert code == 0 and json.loads(exp.read_text())["expect"] == [], err
    assert "the call has no flagged moments, so the expectations hold none" in err
    junit = tmp_path / "clean.xml"
    code, out, err = run([clean, "--expectations", exp, "--junit", junit], capsys)
    assert code == 0 and "holds no expectations" in err and "0 of 0 passed" in err
    assert 'tests="0"' in junit.read_text()


def test_help_reads_without_doubled_words(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = capsys.readouterr().out
    # every example is whole on its line at 80 columns (one wrapped mid-command: a trial)
    examples = [line for line in text.splitlines() if line.startswith("    livejudge check")]
    assert len(examples) == 5 and all(len(line) <= 80 for line in examples)
    assert all(line.split()[-1] != "--junit" for line in examples)
    words = text.split()
    assert "the moments `check` can pin)" in " ".join(words)
    assert not [(a, b) for a, b in zip(words, words[1:]) if a.lower() == b.lower() and a.isalpha()]


# ----------------------------------------------------------------------------- a hung agent
def test_a_pause_the_agent_never_spoke_after_is_not_measured(tmp_path, capsys):
    """A dead or hung agent "waits" through every caller pause: `check --expect yield` at a pause
    passed on such a call (probe had the same fault, fixed before; check had not been). Built
    from real clips: the agent answers once, then the caller pauses mid-turn and the agent never
    speaks again. The same pause on a call where the agent answers afterwards still passes."""
    from livejudge.testing.dialogues import DialogueBuilder

    def call(agent_answers: bool) -> tuple[Path, float]:
        b = DialogueBuilder(noise_dbfs=-55.0, seed=5)
        b.user("cmu_cards_005")
        b.agent("espeak_reply_01", gap_s=0.5)
        u2 = b.user("cmu_cards_002", gap_s=0.7)
        b.user("cmu_cards_003", at_s=u2.offset_s + 0.8)  # the caller pauses 0.8 s mid-turn
        if agent_answers:
            b.agent("espeak_reply_04", gap_s=0.5)
        p = tmp_path / f"answers_{agent_answers}.wav"
        b.build().write(p)
        return p, u2.offset_s

    hung, pause_at = call(False)
    xml = tmp_path / "hung.xml"
    code, out, err = run([hung, "--at", round(pause_at, 2), "--expect", "yield", "--junit", xml], capsys)
    assert code == 3, (out, err)
    assert out.startswith("ERROR") and "did not speak after this moment" in out, out
    assert "0 of 1 expectation(s) passed (1 not measured" in err
    suite = ET.parse(xml).getroot().find("testsuite")
    assert (suite.get("failures"), suite.get("errors")) == ("0", "1")
    assert suite.find("testcase").find("error").get("type") == "NotMeasured"

    answered, pause_at = call(True)
    code, out, _ = run([answered, "--at", round(pause_at, 2), "--expect", "yield"], capsys)
    assert code == 0 and out.startswith("PASS") and "pause" in out, out


def test_a_barge_in_the_calls_end_cut_is_not_measured(tmp_path, capsys):
    """A trial: `check --at T --expect yield` at a barge-in the recording's end cut (no verdict
    there, a ``barge_in_cut_by_end`` note) read "FAIL … no caller moment within ±0.5 s". It is now
    ERROR, not measured, a JUnit error, exit 3, from the recording and from its result JSON."""
    from dataclasses import replace as dc_replace

    from livejudge.testing.dialogues import DialogueBuilder

    b = DialogueBuilder(noise_dbfs=-55.0, seed=5, tail_s=0.0)
    b.user("cmu_cards_005")
    b.agent("espeak_reply_02", gap_s=0.5)
    bi = b.user("cmu_goforward", barge_in_after_s=1.0, agent_yield_s=None)
    d = b.build()
    n = int((bi.onset_s + 0.5) * 16000)  # the call ends 0.5 s into the overlap
    cut = dc_replace(d, call=dc_replace(d.call, user=d.call.user[:n], agent=d.call.agent[:n]))
    wav, js, xml = tmp_path / "cut.wav", tmp_path / "cut.json", tmp_path / "cut.xml"
    cut.write(wav)
    for call in (wav, js):
        args = [call, "--at", round(bi.onset_s, 2), "--expect", "yield", "--junit", xml]
        code, out, err = run(args + (["--json", js] if call == wav else []), capsys)
        assert code == 3 and out.startswith("ERROR") and "the call ended during this caller moment" in out, (out, err)
        assert f"(barge-in at {bi.onset_s:.2f} s)" in out and "no caller moment" not in out, out  # not "nearest: …"
        assert "(1 not measured: cut by the call's end" in err
        suite = ET.parse(xml).getroot().find("testsuite")
        assert (suite.get("failures"), suite.get("errors")) == ("0", "1")


def test_a_moment_with_no_verdict_just_before_the_calls_end_is_not_measured_not_failed():
    """A probe stopped 1.3 s after its backchannel read "FAIL backchannel: no backchannel within
    ±0.5 s" in probe and check alike (a trial): the call ended before the agent's going on past
    the "mm" could be heard. Under END_MARGIN_S before the end it is not measured; earlier, with
    the call going on, the same missing verdict is a failure."""
    from livejudge.commands.check import END_MARGIN_S, Expectation, check_call

    e = Expectation(7.36, "hold", None, "backchannel", "backchannel")
    (cut,) = check_call([e], [], {"duration_s": 7.36 + 1.34, "segments": []})
    assert cut.status == "error" and cut.error.startswith("the call ended 1.34 s after this moment")
    (late,) = check_call([e], [], {"duration_s": 7.36 + END_MARGIN_S + 0.5, "segments": []})
    assert late.status == "fail" and late.error is None and "no backchannel within" in late.reason
    # its reason no longer names another moment beside "ended after this moment" (a trial read two reasons)
    assert "nearest" not in cut.reason and cut.reason == "nothing judged within ±0.5 s of 7.36 s", cut.reason


def test_a_moment_past_the_end_of_a_stopped_calls_result_is_not_measured(calls, capsys, tmp_path):
    """A trial checked a result of an 870 s call stopped at 86.3 s at 200 s and read "past the end of
    the recording (86.34 s long)", exit 2. The recording is longer; the result stops early: the moment
    is not measured (exit 3), and the moments inside it are checked as before."""
    doc = json.loads(calls["rude_json"].read_text())
    doc["source"]["ended"] = "interrupted (Ctrl-C)"
    stopped = tmp_path / "stopped.json"
    stopped.write_text(json.dumps(doc))
    dur = doc["duration_s"]
    code, out, err = run([stopped, "--at", round(dur + 50.0, 1), "--expect", "yield"], capsys)
    assert code == 3, (out, err)
    assert f"not measured: the result covers only the first {dur:.2f} s (the call was cut short" in out, out
    assert "the gates" not in out  # the reason alone: the gates' sentence is not check's
    assert "past the end of the recording" not in err


def test_check_of_a_probe_cut_before_its_recording_is_readable_fails_on_the_moments_not_played(tmp_path, capsys):
    """A probe cut at 2 s left a 0.96 s recording and four moments not played; check exited 2
    ("too short") without naming them (a trial). It now names them and exits 3."""
    import soundfile as sf

    sf.write(str(tmp_path / "r.wav"), np.zeros((int(0.96 * 16000), 2), np.float32), 16000)
    (tmp_path / "e.json").write_text(json.dumps({
        "livejudge_expectations": 1, "call": "r.wav", "expect": [{"at_s": 0.95, "expect": "yield", "kind": "pause",
                                                                  "name": "filler start at 0.95 s"}],
        "not_played": [{"name": "backchannel", "expect": "hold", "kind": "backchannel"}]}))
    assert main(["check", "--expectations", str(tmp_path / "e.json")]) == 3
    err = capsys.readouterr().err
    assert "too short" in err or "under 1 s" in err
    assert "0 of 2 expectation(s) passed (2 not measured: 1 the recording cannot be read, 1 not played by" in err


def test_a_run_that_fails_before_its_junit_leaves_a_red_file_not_the_last_green_one(tmp_path, capsys):
    """A trial: `check good.wav --junit j.xml` passed; `check mono.wav --junit j.xml` then exited 2
    ("is mono") and left j.xml as it was, all passing, so a CI page read the failed run green
    (`score mono.wav --fail-if … --junit j.xml` the same). A run that ends by an error or a stop
    before writing its JUnit now writes one error case with the reason and the exit code; a file
    the run wrote itself is kept."""
    import xml.etree.ElementTree as ET

    import soundfile as sf

    from livejudge.testing.dialogues import load_clip

    j = tmp_path / "ci" / "j.xml"
    j.parent.mkdir()
    j.write_text('<?xml version="1.0"?><testsuites><testsuite name="old" tests="3" failures="0" errors="0"/>'
                 "</testsuites>")
    mono = tmp_path / "mono.wav"
    sf.write(str(mono), load_clip("cmu_cards_001"), 16000)
    for argv in (["check", str(mono), "--at", "1.0", "--expect", "yield", "--junit", str(j)],
                 ["score", str(mono), "--judge", "none", "--fail-if", "latency_p90_s>2", "--junit", str(j)]):
        code = main(argv)
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert code == 2 and "mono" in err
        suite = ET.parse(j).getroot().find("testsuite")
        assert (suite.get("name"), suite.get("tests"), suite.get("errors")) == (f"livejudge {argv[0]}", "1", "1")
        error = suite.find("testcase/error")
        assert error.get("type") == "CommandFailed" and error.get("message") == "exit 2: " + err.removeprefix("livejudge: ")
    # a command line the parser refuses (a re-check: `--fail_if`, a typo that drops the gate) too
    j.write_text("<testsuites/>")
    for argv in (["score", str(mono), "--fail_if", "latency_p90_s>0", "--junit", str(j)],
                 ["check", str(mono), "--expect", "maybe", f"--junit={j}"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        capsys.readouterr()
        suite = ET.parse(j).getroot().find("testsuite")
        assert (suite.get("name"), suite.get("errors")) == (f"livejudge {argv[0]}", "1")
        assert "the command line was refused before the command ran" in suite.find("testcase/error").get("message")
    # a --junit path that is another flag's too (the refusal may be that clash) is left as it was
    j.write_text("kept")
    assert main(["score", str(mono), "--judge", "none", "--json", str(j), "--junit", str(j)]) == 2
    assert j.read_text() == "kept"
    # no file before: the failed run still leaves one to read
    j2 = tmp_path / "new" / "j2.xml"
    assert main(["check", str(mono), "--at", "1.0", "--expect", "yield", "--junit", str(j2)]) == 2
    assert ET.parse(j2).getroot().find("testsuite").get("errors") == "1"


def test_flags_a_result_does_not_read_are_named(calls, capsys):
    """A trial: check RESULT.json --yield-max-s 0.2 (and --user-channel 1, --vad-aggressiveness 3)
    read the result's verdicts as scored, without a word of the flags. A note now names them; a
    check without them says nothing."""
    doc = json.loads(calls["rude_json"].read_text())
    at = next(v["t_s"] for v in doc["verdicts"] if v["kind"] == "barge_in")
    code, _, err = run([calls["rude_json"], "--at", at, "--expect", "yield", "--yield-max-s", 0.2,
                        "--user-channel", 1], capsys)
    assert "note: --user-channel, --yield-max-s not applied: a result's verdicts are read as it was scored" in err, err
    code, _, err = run([calls["rude_json"], "--at", at, "--expect", "yield"], capsys)
    assert "not applied" not in err
