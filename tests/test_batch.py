"""Batch scoring: a directory / glob / manifest of calls, worker processes, broken files
skipped with their reason, one result per call, summary.json and summary.csv."""

import csv
import xml.etree.ElementTree as ET
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from livejudge.commands.batch import CallError, _out_names, discover_calls, score_call
from livejudge.commands.cli import main
from livejudge.testing.dialogues import example_dialogue

TOL_S = 0.04  # VAD frame plus back-dating, as in test_pipeline


@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    """4 good calls with a known timeline and 2 broken files."""
    d = tmp_path_factory.mktemp("calls")
    truth = {}
    for i in range(4):
        dia = example_dialogue(seed=i)
        dia.write(d / f"call_{i}.wav")
        truth[f"call_{i}.wav"] = dia.truth
    sf.write(str(d / "empty.wav"), np.zeros((0, 2), dtype="float32"), 16000)
    (d / "garbage.wav").write_bytes(b"RIFF\x00\x00\x00\x00not a wave file at all")
    return d, truth


def test_discover_directory_glob_and_manifest(calls, tmp_path, monkeypatch, capsys):
    d, _ = calls
    assert [p.name for p in discover_calls(d)] == sorted(p.name for p in d.glob("*.wav"))
    assert len(discover_calls(str(d / "call_*.wav"))) == 4
    m = d / "some.txt"
    m.write_text("# two calls\ncall_1.wav\n\ncall_3.wav  # the last one\n")
    assert [p.name for p in discover_calls(m)] == ["call_1.wav", "call_3.wav"]
    # a path written from the current directory (a new user's trial) is found there when the
    # manifest's folder has no such file; one beside the manifest wins
    rel = Path(d.name) / "call_2.wav"  # from d's parent
    m2 = tmp_path / "calls.txt"
    m2.write_text(f"{d / 'call_0.wav'}\n{rel}\n")
    monkeypatch.chdir(d.parent)
    assert discover_calls(m2) == [d / "call_0.wav", rel]
    (tmp_path / rel).parent.mkdir()
    (tmp_path / rel).write_bytes(b"")
    assert discover_calls(m2)[1] == tmp_path / rel
    # a line found nowhere is kept (skipped later as not found) and one stderr line says both
    # places it was looked for (its skip reason named only the manifest-relative path)
    capsys.readouterr()
    m3 = tmp_path / "lost.txt"
    m3.write_text("calls/nowhere.wav\n")
    assert discover_calls(m3) == [tmp_path / "calls" / "nowhere.wav"]
    err = capsys.readouterr().err
    assert "1 listed file(s) found neither beside the manifest" in err and str(d.parent) in err
    assert "calls/nowhere.wav" in err and err.count("\n") == 1
    with pytest.raises(CallError, match="matched no file"):
        discover_calls(str(tmp_path / "*.wav"))
    assert _out_names([d / "a" / "x.wav", d / "b" / "x.wav", d / "y.wav"]) == ["a_x.json", "b_x.json", "y.json"]


def test_a_manifest_with_any_ending_or_a_header_row_is_read_as_one(calls, tmp_path):
    """A trial: a list of calls named ``calls_manifest`` (no ending) or ``calls.tsv`` was decoded as
    audio ("convert it with ffmpeg"), and a CSV whose header was ``audio_path,label`` made
    "audio_path" a missing call (exit 1). A text file whose first lines name audio files is a
    manifest, whatever its name; a first row that names no audio file and no existing file, in a
    comma or tab separated file, is a header."""
    from livejudge.commands.batch import is_batch_input, looks_like_manifest

    d, _ = calls
    plain = tmp_path / "calls_manifest"
    plain.write_text(f"{d / 'call_0.wav'}\n{d / 'call_1.wav'}\n")
    tsv = tmp_path / "calls.tsv"
    tsv.write_text(f"path\tlabel\n{d / 'call_2.wav'}\tgood\n")
    csv = tmp_path / "m.csv"
    csv.write_text(f"audio_path,label\n{d / 'call_3.wav'},good\n")
    assert [p.name for p in discover_calls(plain)] == ["call_0.wav", "call_1.wav"] and is_batch_input(str(plain))
    assert [p.name for p in discover_calls(tsv)] == ["call_2.wav"]
    assert [p.name for p in discover_calls(csv)] == ["call_3.wav"]
    # a plain list keeps a comma in a path (a re-check: "agent, v2/c.wav" was cut at the comma);
    # a header after comments and a blank line is still a header; comments before the first path
    # do not hide an ending-less manifest
    odd = tmp_path / "agent, v2"
    odd.mkdir()
    (odd / "c.wav").write_bytes((d / "call_0.wav").read_bytes())
    comma = tmp_path / "comma.txt"
    comma.write_text("agent, v2/c.wav\n")
    assert discover_calls(comma) == [odd / "c.wav"]
    late = tmp_path / "late.csv"
    late.write_text(f"# calls\n\naudio_path,label\n{d / 'call_1.wav'},good\n")
    assert [p.name for p in discover_calls(late)] == ["call_1.wav"]
    commented = tmp_path / "commented_list"
    commented.write_text("".join(f"# note {k}\n" for k in range(8)) + f"{d / 'call_2.wav'}\n")
    assert looks_like_manifest(commented) and [p.name for p in discover_calls(commented)] == ["call_2.wav"]
    # audio and JSON are never manifests, nor is a text file that names no audio
    assert not looks_like_manifest(d / "call_0.wav") and not is_batch_input(str(d / "call_0.wav"))
    notes = tmp_path / "notes"
    notes.write_text("a note\nnothing here names a call\n")
    assert not looks_like_manifest(notes) and discover_calls(notes) == [notes]
    js = tmp_path / "r.json"
    js.write_text('{"a": "x.wav"}\n')
    assert not looks_like_manifest(js)


def test_a_manifest_line_found_nowhere_names_both_places_in_the_summary(calls, tmp_path, monkeypatch, capsys):
    """summary.json's skip reason for a manifest line found nowhere names both places it was looked
    for, as the stderr line before the batch does (two trials read only the manifest-relative path)."""
    d, _ = calls
    m = tmp_path / "m" / "calls.txt"
    m.parent.mkdir()
    m.write_text(f"{d / 'call_0.wav'}\nghost/nowhere.wav\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    # a skipped call exits 1 after everything is written (CI noticed no lost call at exit 0), and
    # --allow-skipped accepts it
    assert main(["score", str(m), "--out-dir", str(out), "--judge", "none", "--asr", "off"]) == 1
    err = capsys.readouterr().err
    assert "exit 1: 1 of 2 calls skipped" in " ".join(err.split()) and "--allow-skipped" in err
    assert (out / "summary.json").exists() and (out / "call_0.json").exists()
    assert main(["score", str(m), "--out-dir", str(out), "--judge", "none", "--asr", "off", "--allow-skipped"]) == 0
    rows = {Path(r["file"]).name: r for r in json.loads((out / "summary.json").read_text())["calls"]}
    why = rows["nowhere.wav"]["reason"]
    assert why.startswith("audio file not found") and f"listed in {m} as ghost/nowhere.wav" in why
    assert str(tmp_path / "ghost" / "nowhere.wav") in why and rows["call_0.wav"]["status"] == "ok"


def test_a_batch_that_scored_no_call_is_red_in_junit_with_allow_skipped(tmp_path, capsys):
    """A trial: every call skipped with --allow-skipped exited 2 ("no call could be scored") and left
    a JUnit file with tests="0" failures="0" errors="0" beside skipped cases: green to a CI page that
    reads only the file. With no call scored, skipped calls are errors whatever --allow-skipped says."""
    d = tmp_path / "allbad"
    d.mkdir()
    for k in range(2):
        (d / f"bad_{k}.wav").write_bytes(b"not audio at all" * 10)
    junit = tmp_path / "j.xml"
    assert main(["score", str(d), "--out-dir", str(tmp_path / "out"), "--judge", "none", "--allow-skipped",
                 "--junit", str(junit)]) == 2
    text = junit.read_text()
    assert 'errors="2"' in text, text
    assert "no call could be scored" in capsys.readouterr().err


def test_score_call_raises_one_line_errors(calls):
    d, _ = calls
    with pytest.raises(CallError, match="no audio samples"):
        score_call(d / "empty.wav")
    with pytest.raises(CallError, match="cannot decode"):
        score_call(d / "garbage.wav")


def test_a_mono_call_in_a_batch_gets_a_fix_a_batch_can_follow(tmp_path):
    """A trial: a batch skipped a mono file with "pass a stereo file or --user A.wav --agent B.wav",
    flags a batch does not take. In a batch the reason names the manifest's two-file rows; a single
    score keeps its flags."""
    import soundfile as sf

    from livejudge.audio import AudioFormatError, open_call
    from livejudge.testing.dialogues import load_clip

    mono = tmp_path / "user.wav"
    sf.write(str(mono), load_clip("cmu_cards_001"), 16000)
    with pytest.raises(CallError) as e:
        score_call(mono)
    msg = str(e.value)
    assert msg.startswith(f"{mono} is mono; a call needs two channels: a batch reads one stereo file per call")
    assert "--user A.wav" not in msg and "`user.wav,agent.wav` of a .csv manifest" in msg
    with pytest.raises(AudioFormatError, match="--user A.wav --agent B.wav$"):
        open_call(mono)


@pytest.mark.slow  # starts two worker processes (about 20 s on 2 busy cores)
def test_batch_with_two_jobs_skips_broken_files(calls, tmp_path, capsys):
    d, truth = calls
    out = tmp_path / "results"
    code = main(["score", str(d), "--out-dir", str(out), "--jobs", "2", "--asr", "off", "--interval-s", "10",
                 "--fail-if", "latency_p90_s>30", "--junit", str(tmp_path / "j.xml")])
    err = capsys.readouterr().err
    assert code == 1, err  # two calls skipped: the gate passed, the batch still says a call was lost
    assert "skipped" in err and "empty.wav" in err and "garbage.wav" in err and "exit 1: 2 of 6 calls" in err
    sm = json.loads((out / "summary.json").read_text())
    assert (sm["n_calls"], sm["n_scored"], sm["n_skipped"], sm["jobs"]) == (6, 4, 2, 2)
    rows = {r["file"].rsplit("/", 1)[-1]: r for r in sm["calls"]}
    assert "no audio samples" in rows["empty.wav"]["reason"] and "cannot decode" in rows["garbage.wav"]["reason"]
    p50s = []
    for name, t in truth.items():
        r = json.loads((out / name.replace(".wav", ".json")).read_text())
        got, want = sorted(x["gap_s"] for x in r["transitions"] if x["from"] == "user" and x["to"] == "agent"), \
            sorted(t.response_latencies_s)
        assert len(got) == len(want) and np.allclose(got, want, atol=TOL_S), (name, got, want)
        assert rows[name]["metrics"]["latency_p50_s"] == r["summary"]["latency_p50_s"]
        assert r["judge"] and r["summary"]["mean_p_human"] is not None
        assert r["source"]["ended"] == "end of input"  # as a single score says why the call ended
        p50s.append(r["summary"]["latency_p50_s"])
    assert sm["medians"]["latency_p50_s"] == pytest.approx(float(np.median(p50s)))
    # the judge and its validity line, as every call's result names them, in the summary and on
    # stderr (a new user's trial: a batch printed none)
    first = json.loads((out / "call_0.json").read_text())["judge_info"]
    assert sm["judge_info"]["summary"] == first["summary"] and sm["judge_info"]["validated"] == first["validated"]
    assert f"livejudge: {first['validated']} (judge {first['summary']};" in err
    ps = sorted(json.loads((out / n.replace(".wav", ".json")).read_text())["summary"]["mean_p_human"] for n in truth)
    # the median with the calls' range, not read as every call's figure; a range whose ends print
    # the same ("0.00–0.00", a trial) says so in words
    rng = (f"(range {ps[0]:.2f}–{ps[-1]:.2f})" if f"{ps[0]:.2f}" != f"{ps[-1]:.2f}" else "(the same in every call)")
    assert f"the calls' mean P(human) {sm['medians']['mean_p_human']:.2f} {rng}" in " ".join(err.split())
    with open(out / "summary.csv") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 6 and {r["status"] for r in table} == {"ok", "skipped"}
    assert "latency_p90_s" in table[0] and "dim_rhythm" in table[0]


def test_batch_gate_on_medians_fails_with_exit_3(calls, tmp_path, capsys):
    d, _ = calls
    out = tmp_path / "r"
    code = main(["score", str(d / "call_*.wav"), "--out-dir", str(out), "--judge", "none", "--asr", "off",
                 "--fail-if", "latency_p50_s>0.1"])
    assert code == 3
    assert "medians over 4 scored calls" in capsys.readouterr().err


def test_batch_of_only_broken_files_is_exit_2(calls, tmp_path):
    d, _ = calls
    m = tmp_path / "bad.txt"
    m.write_text(f"{d / 'empty.wav'}\n{d / 'garbage.wav'}\n{d / 'missing.wav'}\n")
    assert main(["score", str(m), "--out-dir", str(tmp_path / "o"), "--judge", "none"]) == 2
    sm = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert sm["n_scored"] == 0 and "not found" in sm["calls"][2]["reason"]


def test_single_file_score_still_writes_one_result(calls, tmp_path):
    d, _ = calls
    assert main(["score", str(d / "call_0.wav"), "--judge", "none", "--json", str(tmp_path / "one.json")]) == 0
    assert json.loads((tmp_path / "one.json").read_text())["summary"]["latency_count"] > 0
    assert main(["score", str(d / "empty.wav"), "--judge", "none"]) == 2


def test_a_text_file_naming_no_audio_is_one_line_and_writes_no_results(tmp_path, monkeypatch, capsys):
    """``livejudge score notes.txt`` (a .txt is read as a manifest): when none of its lines names a
    file that exists, one line and exit 2, and no results folder (a trial found livejudge-results/
    written for a text file of prose)."""
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\nsome notes about the call\n")
    monkeypatch.chdir(tmp_path)
    assert main(["score", str(notes), "--judge", "none", "--asr", "off"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "read as a manifest" in err and "'hello'" in err
    assert not (tmp_path / "livejudge-results").exists()


def test_a_manifest_of_prose_with_lines_too_long_for_a_file_name_is_one_line(tmp_path, capsys):
    """A README copied to a .txt (a trial) raised OSError "File name too long" from the path check:
    now the same one line as any manifest that names no audio."""
    prose = tmp_path / "prose.txt"
    prose.write_text("* `whisper-fitted` 0.4.0 " + "word " * 200 + "\nshort line\n")
    assert main(["score", str(prose), "--judge", "none", "--asr", "off"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "read as a manifest" in err


def test_a_folder_of_mp3_calls_is_a_batch(calls, tmp_path):
    """A folder batch read only WAV/FLAC/OGG/AIFF although one MP3 call scores (a trial)."""
    from livejudge.commands.batch import discover_calls

    d, _ = calls
    mp3 = tmp_path / "mp3s"
    mp3.mkdir()
    (mp3 / "c.mp3").write_bytes(b"")
    assert [p.name for p in discover_calls(mp3)] == ["c.mp3"]


def test_a_gate_fails_when_a_scored_call_did_not_measure_its_metric(calls, tmp_path, capsys):
    """One good call and two whose agent is silent: the latency median comes from the one call
    that has replies, so 'latency_p90_s>2' passed the batch (a trial). Now the gate fails, naming
    the calls that did not measure it, the summary says how many calls each median is over, the
    JUnit file fails those calls, and compare says so beside the batch's medians."""
    from livejudge.commands.compare import compare

    d, truth = calls
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    x, rate = sf.read(str(d / "call_0.wav"), dtype="float32")
    sf.write(str(mixed / "good.wav"), x, rate)
    for name in ("mute_a.wav", "mute_b.wav"):
        y = x.copy()
        y[:, 1] = 0.0
        sf.write(str(mixed / name), y, rate)
    out, junit = tmp_path / "res", tmp_path / "j.xml"
    code = main(["score", str(mixed), "--out-dir", str(out), "--judge", "none", "--asr", "off",
                 "--fail-if", "latency_p90_s>30", "--fail-if", "barge_in_count>99", "--junit", str(junit)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 3, err
    assert "FAIL latency_p90_s>30: latency_p90_s was not measured on 2 of 3 scored calls (mute_a.wav, mute_b.wav)" in err
    assert "barge_in_count>99" not in err.split("FAIL", 1)[1]  # a count measured (0) on every call still passes
    sm = json.loads((out / "summary.json").read_text())
    assert sm["n_scored"] == 3 and sm["measured_calls"]["latency_p90_s"] == 1
    assert sm["measured_calls"]["barge_in_count"] == 3
    good = json.loads((out / "good.json").read_text())["summary"]["latency_p90_s"]
    assert sm["medians"]["latency_p90_s"] == pytest.approx(good)
    assert f"p90 {good:.2f}s (from 1 of 3 calls)" in err
    root = ET.fromstring(junit.read_text().split("\n", 1)[1])
    cases = {Path(tc.get("name")).name: tc for tc in root.iter("testcase") if tc.get("classname") == "livejudge.calls"}
    assert cases["mute_a.wav"].find("failure") is not None and cases["good.wav"].find("failure") is None
    assert "latency_p90_s" in cases["mute_b.wav"].find("failure").get("message")
    doc = compare([out / "good.json", out])
    assert any(n.startswith("B (res): medians over fewer than its 3 calls") and "response latency p90 (s) 1 of 3" in n
               for n in doc["notes"]), doc["notes"]
    assert doc["settings_differ"] == []  # the batch records its settings: the same as the call's


def test_gate_each_fails_a_batch_on_one_call_the_median_passes(calls, tmp_path, capsys):
    """Three calls, one with a DC offset on its user channel: the median of
    input_health_warning_count is 0, so 'input_health_warning_count>0' passes the batch (a noted
    gap). With --gate-each the gate reads every call: exit 3 naming that call and its count, and
    the JUnit file fails that call alone."""
    d, _ = calls
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for i in range(3):
        x, rate = sf.read(str(d / f"call_{i}.wav"), dtype="float32")
        if i == 1:
            x[:, 0] += 0.05  # 5x the DC_LEVEL heuristic
        sf.write(str(mixed / f"c{i}.wav"), x, rate, subtype="FLOAT")
    common = ["score", str(mixed), "--judge", "none", "--asr", "off", "--fail-if", "input_health_warning_count>0",
              "--fail-if", "latency_p90_s>30"]
    assert main(common + ["--out-dir", str(tmp_path / "med")]) == 0
    sm = json.loads((tmp_path / "med" / "summary.json").read_text())
    per_call = {Path(r["file"]).name: r["metrics"]["input_health_warning_count"] for r in sm["calls"]}
    assert per_call["c1.wav"] >= 1 and per_call["c0.wav"] == per_call["c2.wav"] == 0
    capsys.readouterr()
    junit = tmp_path / "each.xml"
    code = main(common + ["--out-dir", str(tmp_path / "each"), "--gate-each", "--junit", str(junit)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 3, err
    assert "1 of 2 gate(s) failed (each of 3 scored calls)" in err
    kept = json.loads((tmp_path / "each" / "summary.json").read_text())["gates"]  # in summary.json too (a trial)
    assert kept["scope"] == "each of 3 scored calls"
    assert [(g["gate"], g["failed"]) for g in kept["results"]] == [("input_health_warning_count>0", True),
                                                                  ("latency_p90_s>30", False)]
    # the calls each gate failed on, with their own values (the value beside it is the median)
    assert [(Path(f["file"]).name, f["value"]) for f in kept["results"][0]["failed_on"]] == [("c1.wav", per_call["c1.wav"])]
    assert kept["results"][0]["value"] == 0 and kept["results"][1]["failed_on"] == []
    assert f"FAIL input_health_warning_count>0: failed on 1 of 3 scored calls: c1.wav ({per_call['c1.wav']})" in err
    assert "latency_p90_s>30" not in err.split("FAIL", 1)[1]
    root = ET.fromstring(junit.read_text().split("\n", 1)[1])
    cases = {Path(tc.get("name")).name: tc for tc in root.iter("testcase") if tc.get("classname") == "livejudge.calls"}
    # the call's own value and the warning itself (a trial's case named only the gate)
    assert cases["c1.wav"].find("failure").get("message").startswith(
        f"gate(s) failed on this call: input_health_warning_count>0 (input_health_warning_count = {per_call['c1.wav']} "
        "(> 0): the user channel has a DC offset")
    assert cases["c0.wav"].find("failure") is None and cases["c2.wav"].find("failure") is None
    # every gate passing on every call: the pass line names the scope
    capsys.readouterr()
    assert main(["score", str(mixed), "--judge", "none", "--asr", "off", "--out-dir", str(tmp_path / "ok"),
                 "--gate-each", "--fail-if", "latency_p90_s>30"]) == 0
    assert "1 of 1 gate(s) passed (each of 3 scored calls)" in " ".join(capsys.readouterr().err.split())


def test_a_folder_batch_names_the_calls_in_its_subfolders_it_leaves_out(calls, tmp_path, capsys):
    """A folder is read one level deep: `score coll/` scored one call and said nothing of
    coll/a/x.wav (a trial). Now one line names how many it left out and the glob that takes
    them; a folder with only subfolders of calls says the same in its error."""
    import shutil

    d, _ = calls
    coll = tmp_path / "coll"
    (coll / "a").mkdir(parents=True)
    shutil.copy(d / "call_0.wav", coll / "top.wav")
    shutil.copy(d / "call_1.wav", coll / "a" / "x.wav")
    assert main(["score", str(coll), "--out-dir", str(tmp_path / "o"), "--judge", "none", "--asr", "off"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert f"{coll}: 1 audio file(s) in its subfolders are not scored" in err and f"'{coll}/**/*.wav'" in err
    only = tmp_path / "only"
    (only / "b").mkdir(parents=True)
    shutil.copy(d / "call_2.wav", only / "b" / "y.wav")
    with pytest.raises(CallError, match=r"its subfolders hold 1: score them with a quoted glob"):
        discover_calls(only)
    assert main(["score", f"{only}/**/*.wav", "--out-dir", str(tmp_path / "o2"), "--judge", "none", "--asr", "off"]) == 0


def test_a_reused_out_dir_names_the_results_this_batch_did_not_write(calls, tmp_path, capsys):
    """Reusing an --out-dir left the earlier batch's per-call results beside a new summary that
    does not list them, without a word (a trial). One stderr line and the summary's
    ``stale_results`` now name them; they are kept. Scoring the same calls again names none."""
    import shutil

    d, _ = calls
    first, second = tmp_path / "v1", tmp_path / "v2"
    first.mkdir()
    second.mkdir()
    for i in (0, 1):
        shutil.copy(d / f"call_{i}.wav", first / f"call_{i}.wav")
    shutil.copy(d / "call_2.wav", second / "call_2.wav")
    out = tmp_path / "out"
    (tmp_path / "out").mkdir()
    (out / "notes.json").write_text('{"mine": true}')  # not a result: not spoken of
    common = ["--out-dir", str(out), "--judge", "none", "--asr", "off"]
    assert main(["score", str(first), *common]) == 0
    assert "this batch did not write" not in capsys.readouterr().err
    assert main(["score", str(first), *common]) == 0  # the same calls again: each result rewritten
    assert "this batch did not write" not in capsys.readouterr().err
    assert "stale_results" not in json.loads((out / "summary.json").read_text())
    assert main(["score", str(second), *common]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if "did not write" in line]
    assert err == [f"livejudge: note: {out} holds 2 earlier result(s) this batch did not write (call_0.json, "
                   "call_1.json): kept, but not its calls (summary.json lists them under stale_results); remove "
                   "them or use a new --out-dir"]
    sm = json.loads((out / "summary.json").read_text())
    assert sm["stale_results"] == ["call_0.json", "call_1.json"] and [Path(r["file"]).name for r in sm["calls"]] == ["call_2.wav"]
    assert (out / "call_0.json").exists() and (out / "call_1.json").exists() and (out / "notes.json").exists()


def test_a_manifest_of_two_file_calls_is_scored_as_score_user_agent_is(tmp_path, capsys):
    """A trial: calls recorded one side per file could be scored only one at a time. A .csv
    manifest row ``user.wav,agent.wav`` is now one call: each is measured as ``score --user U
    --agent A`` measures it (the built call's latencies within TOL_S of the truth), named by its
    user file; a header row and a missing agent file (skipped with its reason) are handled."""
    import soundfile as sf

    d = tmp_path / "calls"
    d.mkdir()
    truths = {}
    for k in range(2):
        dlg = example_dialogue(seed=k)
        sf.write(str(d / f"c{k}_user.wav"), dlg.call.user, 16000)
        sf.write(str(d / f"c{k}_agent.wav"), dlg.call.agent, 16000)
        truths[f"c{k}_user"] = sorted(dlg.truth.response_latencies_s)
    m = d / "calls.csv"
    sf.write(str(d / "c2_user.wav"), example_dialogue(seed=2).call.user, 16000)
    example_dialogue(seed=3).write(d / "stereo.wav")
    example_dialogue(seed=4).write(d / "stereo2.wav")
    m.write_text("user,agent\nc0_user.wav,c0_agent.wav\nc1_user.wav,c1_agent.wav\nc2_user.wav,gone.wav\n"
                 "stereo.wav\nstereo2.wav,c1_agent.wav\n")
    out = tmp_path / "res"
    code = main(["score", str(m), "--out-dir", str(out), "--judge", "none", "--asr", "off"])
    err = capsys.readouterr().err
    assert code == 1, err  # the row with a missing agent file is skipped, the batch says so
    sm = json.loads((out / "summary.json").read_text())
    assert (sm["n_calls"], sm["n_scored"], sm["n_skipped"]) == (5, 3, 2)  # stereo.wav on its own row is scored
    for name, want in truths.items():
        r = json.loads((out / f"{name}.json").read_text())
        assert r["channels"] == {"user": str(d / f"{name}.wav"),
                                           "agent": str(d / f"{name.replace('user', 'agent')}.wav")}
        got = sorted(x["gap_s"] for x in r["transitions"] if x["from"] == "user" and x["to"] == "agent")
        assert len(got) == len(want) and np.allclose(got, want, atol=TOL_S), (name, got, want)
    skipped = [c for c in sm["calls"] if c["status"] == "skipped"]
    assert len(skipped) == 2 and "gone.wav" in skipped[0]["reason"]
    # a stereo file given as a call's user side: the fix a manifest can follow, not --user/--agent's
    assert "a manifest row `user.wav,agent.wav` takes one side per file" in skipped[1]["reason"], skipped[1]
    assert "--user-channel" not in skipped[1]["reason"]
    # a single `score --user --agent` names both files as the batch does (it named neither; a trial)
    one = tmp_path / "one.json"
    assert main(["score", "--user", str(d / "c0_user.wav"), "--agent", str(d / "c0_agent.wav"), "--judge", "none",
                 "--asr", "off", "--json", str(one), "--display", "none"]) == 0
    src = json.loads(one.read_text())["source"]
    assert (src["file"], src["agent_file"]) == (str(d / "c0_user.wav"), str(d / "c0_agent.wav"))
    from livejudge.outputs.html_report import render_html

    assert "<h1>livejudge report · c0_user.wav + c0_agent.wav</h1>" in render_html(json.loads(one.read_text()))
    r0 = json.loads((out / "c0_user.json").read_text())["source"]
    assert (r0["file"], r0["agent_file"]) == (src["file"], src["agent_file"])
    # one user file with two agent files is two calls of one name: refused before anything is scored
    m.write_text("c0_user.wav,c0_agent.wav\nc0_user.wav,c1_agent.wav\n")
    assert main(["score", str(m), "--out-dir", str(tmp_path / "res2"), "--judge", "none", "--asr", "off"]) == 2
    assert "c0_user.wav is listed with two agent files (with c0_agent.wav and with c1_agent.wav)" in \
        capsys.readouterr().err
    m.write_text("c0_user.wav\nc0_user.wav,c1_agent.wav\n")  # alone and in a pair: two calls of one name
    assert main(["score", str(m), "--out-dir", str(tmp_path / "res3"), "--judge", "none", "--asr", "off"]) == 2
    assert "(on a row of its own and with c1_agent.wav)" in capsys.readouterr().err
