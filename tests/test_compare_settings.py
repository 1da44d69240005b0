"""compare notes unlike settings for batches as for calls, and tells two heads of one name apart;
compare and score's plain display end quietly when their reader closes stdout (``| head``);
output paths that are directories suggest a name of the right kind. All on the example call."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from livejudge.commands.cli import main
from livejudge.commands.compare import compare

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "example_call.wav"
QUICK = ["--asr", "off"]


@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    """A folder holding the example call twice (a two-call batch)."""
    d = tmp_path_factory.mktemp("v1")
    for name in ("a.wav", "b.wav"):
        shutil.copy(EXAMPLE, d / name)
    return d


def _batch(calls, out, *flags):
    assert main(["score", str(calls), "--out-dir", str(out), *QUICK, *flags]) == 0
    return out


def test_batches_scored_with_different_settings_are_noted(calls, tmp_path, capsys):
    """A trial scored one folder three ways (defaults; --hangover-s 0.6 --dead-air-s 1.0; --judge
    none), and `compare` of the batches printed no note, `settings_differ` [], while the same calls
    compared as single results got one. The summary now records the settings every call shared, and
    compare reads them for a batch column as for a call; a summary from before says they are unknown."""
    base = _batch(calls, tmp_path / "rv1", "--judge", "acoustic")
    hang = _batch(calls, tmp_path / "rv1_hang", "--judge", "acoustic", "--hangover-s", "0.6", "--dead-air-s", "1.0")
    none = _batch(calls, tmp_path / "rv1_none", "--judge", "none")
    capsys.readouterr()

    sm = json.loads((base / "summary.json").read_text())
    st = sm["settings"]
    digest = hashlib.sha256((ROOT / "livejudge/judge/heads/acoustic-fitted/weights.safetensors").read_bytes()).hexdigest()[:16]
    assert st["config"]["vad"]["hangover_s"] == 0.3 and st["verdict_config"]["dead_air_s"] == 2.0
    assert st["asr"] is False and st["echo_gate"] == "auto" and st["judge_weights"] == digest
    assert st["judge"].endswith(f"acoustic-fitted {sm['judge_info']['head_version']}")
    assert sm["judge_info"]["head_digest"] == digest and "settings_mixed" not in sm
    assert all("settings" not in row for row in sm["calls"])  # per call only while the summary is made
    hs = json.loads((hang / "summary.json").read_text())["settings"]
    assert hs["config"]["vad"]["hangover_s"] == 0.6 and hs["verdict_config"]["dead_air_s"] == 1.0
    assert json.loads((none / "summary.json").read_text())["settings"]["judge"] is None

    assert compare([base, hang])["settings_differ"] == ["pipeline config", "verdict thresholds"]
    assert compare([base, none])["settings_differ"] == [
        "judge (B scored without one: no P(human) or dimensions there)"]
    alike = compare([base / "a.json", base])  # a call and the batch it is in: measured alike
    assert alike["settings_differ"] == [] and alike["settings_unknown"] == []
    assert main(["compare", str(base), str(hang)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("measured with different settings: pipeline config (vad.hangover_s), verdict thresholds (dead_air_s); part of "
            "each change comes from the settings") in out

    # a summary written before batches recorded their settings: said, not silently nothing
    old = tmp_path / "old"
    old.mkdir()
    doc = json.loads((hang / "summary.json").read_text())
    del doc["settings"]
    (old / "summary.json").write_text(json.dumps(doc))
    got = compare([base, old])
    assert got["settings_differ"] == [] and got["settings_unknown"] == [str(old)]
    assert any(n.startswith("B (old): its summary.json records no settings") and "unknown" in n for n in got["notes"])


def test_a_batch_whose_calls_were_measured_differently_says_so(tmp_path):
    """A setting the calls of one batch did not share is listed in ``settings_mixed`` and left out
    of ``settings``; compare names it with the batch it is mixed in."""
    from livejudge.commands.batch import ScoreOptions, _row_of_doc, score_call, write_summary
    from livejudge.session import SessionConfig

    rows = []
    for gate in ("auto", "off"):
        doc = score_call(EXAMPLE, ScoreOptions(config=SessionConfig(judge_mode="every"), judge="none", echo_gate=gate))
        rows.append({"file": f"{gate}.wav", "reason": None, "wall_s": 0.0, **_row_of_doc(doc, None)})
    out = tmp_path / "mixed"
    out.mkdir()
    sm = write_summary(rows, out, jobs=1, wall_s=0.0)
    assert sm["settings_mixed"] == ["echo_gate"] and "echo_gate" not in sm["settings"]
    assert sm["settings"]["asr"] is False and sm["settings"]["judge"] is None
    call = tmp_path / "call.json"
    call.write_text(json.dumps(doc))
    assert compare([call, out])["settings_differ"] == ["echo gate (--echo-gate) (not the same for every call of B)"]


def _head_copy(dst: Path, bias_shift: float) -> Path:
    """The shipped acoustic head under its own name and version, its classifier's human bias moved
    by ``bias_shift`` (a head retrained into one folder: same name, other weights)."""
    from safetensors.numpy import load_file, save_file

    shutil.copytree(ROOT / "livejudge/judge/heads/acoustic-fitted", dst)
    if bias_shift:
        t = load_file(str(dst / "weights.safetensors"))
        t["classifier.bias"] = t["classifier.bias"] + [0.0, bias_shift]
        save_file(t, str(dst / "weights.safetensors"))
    return dst


def test_two_heads_of_one_name_are_told_apart_by_their_weights(tmp_path, monkeypatch, capsys):
    """Retraining into the same --out gave "mine 0.1.0" again, judge_info had no weights digest,
    and compare printed mean P(human) "better" on identical audio with no note. judge_info now
    carries the head's weights digest (sha256, first 16 hex digits), and compare's judge setting
    reads it: other weights under one name are "a different head"."""
    import livejudge.commands.compare as C
    from livejudge.judge.training.blend import weights_digest

    h1, h2 = _head_copy(tmp_path / "h1", 0.0), _head_copy(tmp_path / "h2", 1.5)
    docs = {}
    for name, head in (("one", h1), ("two", h2), ("again", h1)):
        assert main(["score", str(EXAMPLE), "--judge", "acoustic", "--head", str(head), *QUICK,
                     "--display", "none", "--json", str(tmp_path / f"{name}.json")]) == 0
        docs[name] = json.loads((tmp_path / f"{name}.json").read_text())["judge_info"]
    capsys.readouterr()
    assert docs["one"]["head_digest"] == weights_digest(h1) and docs["two"]["head_digest"] == weights_digest(h2)
    assert docs["one"]["head_digest"] != docs["two"]["head_digest"]
    assert (docs["one"]["head"], docs["one"]["head_version"]) == (docs["two"]["head"], docs["two"]["head_version"])

    got = compare([tmp_path / "one.json", tmp_path / "two.json"])
    label = f"{docs['one']['head']} {docs['one']['head_version']}"
    assert got["settings_differ"] == [f"judge (a different head: weights differ under one name, {label}: "
                                      f"A {weights_digest(h1)}, B {weights_digest(h2)})"]
    p = {r["metric"]: r for r in got["rows"]}["mean_p_human"]
    assert p["values"][1] > p["values"][0]  # the moved bias shows; the note says whose doing it is
    # and no better/worse between two instruments' readings (a later trial: "+1.00, better")
    assert p["verdicts"][1] == "" and all(r["verdicts"][1] == "" for r in got["rows"] if r["metric"].startswith("dim_"))
    timing = {r["metric"]: r for r in got["rows"]}["latency_p50_s"]
    assert timing["verdicts"][1] != ""  # the timing rows are the same instrument: judged as ever
    assert compare([tmp_path / "one.json", tmp_path / "again.json"])["settings_differ"] == []
    assert main(["compare", str(tmp_path / "one.json"), str(tmp_path / "two.json")]) == 0
    assert "a different head: weights differ" in " ".join(capsys.readouterr().out.split())
    # the measured between-call spread is one head's: not applied across two heads of one name
    spread = {"judge": f"{docs['one']['backbone']} / {label}", "tolerance": {"mean_p_human": 0.5}, "n_voices": 3,
              "source": "test"}
    monkeypatch.setattr(C, "judge_spread", lambda: spread)
    assert compare([tmp_path / "one.json", tmp_path / "again.json"])["judge_tolerance"] == {"mean_p_human": 0.5}
    assert compare([tmp_path / "one.json", tmp_path / "two.json"])["judge_tolerance"] == {}

    # a column scored without a judge beside the two heads: still no better/worse between the heads
    # (a trial: "A 0.00, B –, C 0.32 (+0.32, better)", the note naming only B's missing judge)
    assert main(["score", str(EXAMPLE), "--judge", "none", *QUICK, "--display", "none",
                 "--json", str(tmp_path / "none.json")]) == 0
    capsys.readouterr()
    for order in (["one", "none", "two"], ["none", "one", "two"]):
        got = compare([tmp_path / f"{n}.json" for n in order])
        rows = {r["metric"]: r for r in got["rows"]}
        assert all(v == "" for r in rows.values() if r["metric"] == "mean_p_human" or r["metric"].startswith("dim_")
                   for v in r["verdicts"][1:]), order
        note = next(d for d in got["settings_differ"] if d.startswith("judge"))
        assert "scored without one" in note and "the judged columns differ too" in note, note
        assert rows["latency_p50_s"]["verdicts"][1:] != ["", ""]  # timing: judged as ever


def test_the_default_whisper_head_names_its_weights_and_frame_readout():
    """The shipped whisper head's digest is its weights file's (as benchmarks/judge_wild.py's
    head_weights_sha256_16), and its frame readout's is given beside the readout."""
    from livejudge.judge.model.judge import DEFAULT_WHISPER_HEAD, load_judge

    info = load_judge("whisper").info()
    sha = lambda f: hashlib.sha256((DEFAULT_WHISPER_HEAD / f).read_bytes()).hexdigest()[:16]  # noqa: E731
    assert info["head_digest"] == sha("weights.safetensors")
    assert info["frame_readout"]["digest"] == sha("frame_cnn.safetensors")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Two results of the example call (no judge: quick)."""
    d = tmp_path_factory.mktemp("results")
    assert main(["score", str(EXAMPLE), "--judge", "none", *QUICK, "--display", "none", "--json", str(d / "r1.json")]) == 0
    shutil.copy(d / "r1.json", d / "r2.json")
    return d


def _closed_stdout(args: list[str], cwd: Path) -> tuple[int, str]:
    """Run ``livejudge ARGS`` with a stdout whose reader has already gone (as ``| head`` once it has
    its lines): (exit code, stderr)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    p = subprocess.Popen([sys.executable, "-c", "from livejudge.commands.cli import entry; entry()", *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env)
    p.stdout.close()  # the reader is gone before the first line is written
    err = p.stderr.read().decode()
    return p.wait(timeout=120), err


def test_compare_into_a_closed_pipe_writes_its_files_and_exits_0(results, tmp_path):
    """`compare r1 r2 --json c1.json --html c1.html | head -3` exited 1 with no message and wrote
    neither file (rich exits 1 on a broken pipe, before the files were written). The files come
    first now, and a closed stdout ends the table quietly with exit 0."""
    r1, r2 = results / "r1.json", results / "r2.json"
    code, err = _closed_stdout(["compare", str(r1), str(r2), "--json", "c1.json", "--html", "c1.html"], tmp_path)
    assert code == 0, err
    assert json.loads((tmp_path / "c1.json").read_text())["columns"][1]["name"] == str(r2)
    assert "<table>" in (tmp_path / "c1.html").read_text()
    assert "Traceback" not in err and "Broken pipe" not in err
    assert "comparison written to c1.json" in err and "HTML table written to c1.html" in err
    code, err = _closed_stdout(["compare", str(r1), str(r2), "--json", "-"], tmp_path)  # the JSON on stdout too
    assert code == 0 and "Traceback" not in err and "Broken pipe" not in err, err


def test_score_with_plain_lines_into_a_closed_pipe_stops_the_display_quietly(tmp_path):
    """`score call.wav --display plain | head` printed "sink PlainLines failed: [Errno 32] Broken
    pipe" three times. A closed stdout now stops the plain display quietly; the result is written."""
    code, err = _closed_stdout(["score", str(EXAMPLE), "--judge", "none", *QUICK, "--display", "plain",
                                "--json", "r.json"], tmp_path)
    assert code == 0, err
    assert "PlainLines" not in err and "Broken pipe" not in err and "Traceback" not in err, err
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["latency_count"] >= 1
    assert "result written to r.json" in err


def test_plain_lines_stop_at_the_first_closed_write(results):
    """In process: the display tries its stream once after the reader went away, and the call
    records no error for it."""
    from livejudge.events import Transition
    from livejudge.outputs.meter import PlainLines
    from livejudge.outputs.report import load_json_document

    class Gone:
        writes = 0

        def write(self, s):
            Gone.writes += 1
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

    doc = load_json_document(results / "r1.json")
    tr = doc["transitions"][0]

    class _Session:  # what on_event reads of a session for an event line
        now_s = 10.0

    lines = PlainLines(_Session(), stream=Gone(), events=True)
    event = Transition(tr["from"], tr["to"], tr["from_offset_s"], tr["to_onset_s"])  # the call's first reply
    for _ in range(3):
        lines.on_event(event)
    assert lines.closed and Gone.writes == 1


def test_a_directory_given_for_an_html_output_suggests_an_html_name(results, tmp_path, capsys):
    """`report x.json -o DIR` suggested DIR/result.json for an HTML report (a trial)."""
    out = tmp_path / "reports"
    out.mkdir()
    assert main(["report", str(results / "r1.json"), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"give a file path inside it, e.g. {out / 'r1.html'}" in err and "result.json" not in err
    assert main(["compare", str(results / "r1.json"), str(results / "r2.json"), "--html", str(out)]) == 2
    assert f"e.g. {out / 'compare.html'}" in capsys.readouterr().err


def test_batches_over_other_calls_are_noted(calls, tmp_path, capsys):
    """A trial compared a batch of three calls with one of two of them: "latency p50 +0.28, worse"
    with no note that the medians were over other calls. compare now names the calls one batch
    has and the other lacks; batches of the same calls get no such note."""
    full = _batch(calls, tmp_path / "full", "--judge", "none")
    fewer_calls = tmp_path / "fewer"
    fewer_calls.mkdir()
    shutil.copy(calls / "a.wav", fewer_calls / "a.wav")
    fewer = _batch(fewer_calls, tmp_path / "fewer_out", "--judge", "none")
    again = _batch(calls, tmp_path / "again", "--judge", "none")
    capsys.readouterr()
    got = compare([full, fewer])
    notes = [n for n in got["notes"] if "other calls" in n]
    assert len(notes) == 1 and "1 of A's 2 not in it (b.wav)" in notes[0], got["notes"]
    assert all("_call_files" not in c["settings"] for c in got["columns"])
    assert not [n for n in compare([full, again])["notes"] if "other calls" in n]
    assert compare([full, again])["settings_differ"] == []
