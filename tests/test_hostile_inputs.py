"""Hostile and unlucky inputs (issue 21), each a test that failed before its fix: output paths
that cannot be written or that are the recording, a full disk after the call, two writers,
a clock jump of hours, samples of 1e30, glob characters in a real file name, a token in the
runner URL, symlink loops and a stopped batch, a pipe as input, malformed documents for
compare/report, and escape sequences from file names and agents.

Exit codes as the CLI states them (livejudge.commands.runner): 2 bad input or usage (refused
before the call), 1 failed (here: an output could not be written where asked; the result went
to a fallback file), 130 Ctrl-C.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import threading
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from livejudge.commands.cli import main
from livejudge.session import Session, SessionConfig
from livejudge.testing.dialogues import example_dialogue

SUMMARY_LINE = "latency p50"  # the summary printed after a call was scored


def _strict(text: str):
    """json.loads that refuses NaN/Infinity (what other JSON readers do)."""
    def bad(name):
        raise ValueError(f"non-standard JSON constant {name}")
    return json.loads(text, parse_constant=bad)


@pytest.fixture(scope="module")
def call(tmp_path_factory):
    d = tmp_path_factory.mktemp("in")
    dia = example_dialogue(seed=2)
    wav = dia.write(d / "call.wav")
    return wav, dia


def _score(*argv: str) -> int:
    return main(["score", *argv, "--judge", "none", "--asr", "off"])


# ------------------------------------------------------------------ unwritable --json
@pytest.mark.parametrize("kind", ["directory", "proc", "long_name"])
def test_unwritable_json_path_is_refused_before_the_call(call, tmp_path, capsys, kind):
    out = {"directory": tmp_path,
           "proc": Path("/proc/livejudge-result.json"),
           "long_name": tmp_path / ("x" * 300 + ".json")}[kind]
    code = _score(str(call[0]), "--json", str(out))
    err = capsys.readouterr().err
    assert code == 2, err
    assert SUMMARY_LINE not in err  # refused before anything was scored
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert {"directory": "is a directory", "proc": "cannot create a file", "long_name": "bytes"}[kind] in err


def test_full_disk_after_the_call_writes_a_fallback_and_exits_1(call, tmp_path, capsys, monkeypatch):
    from livejudge.outputs import guard

    real = guard.write_text_atomic
    target = tmp_path / "r.json"

    def full(path, text):
        if Path(path) == target:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(path, text)

    monkeypatch.setattr(guard, "write_text_atomic", full)
    code = _score(str(call[0]), "--json", str(target))
    err = capsys.readouterr().err
    assert code == 1, err
    line = next(x for x in err.splitlines() if "cannot write the result" in x)
    assert "No space left on device" in line and "written to" in line
    fallback = Path(line.split("written to ", 1)[1].split(" instead")[0])
    doc = _strict(fallback.read_text())
    assert doc["duration_s"] == pytest.approx(call[1].call.duration_s, abs=0.05)
    fallback.unlink()


def test_two_writers_of_one_path_never_fail_and_leave_a_whole_file(tmp_path):
    from livejudge.outputs.report import write_json

    target = tmp_path / "shared.json"
    docs = [{"writer": i, "payload": list(range(20000)), "errors": []} for i in range(2)]
    failures: list[BaseException] = []

    def writer(doc):
        try:
            for _ in range(40):
                write_json(doc, target)
        except BaseException as exc:  # noqa: BLE001 (collected and asserted on)
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(d,)) for d in docs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert _strict(target.read_text())["writer"] in (0, 1)
    assert [p.name for p in tmp_path.iterdir()] == ["shared.json"]  # no temp file left behind


# ------------------------------------------------------------------ outputs equal to the input
@pytest.mark.parametrize("flag", ["--json", "--events", "--report", "--junit"])
@pytest.mark.parametrize("form", ["same", "symlink", "relative"])
def test_an_output_that_is_the_recording_is_refused_before_scoring(call, tmp_path, capsys, monkeypatch, flag, form):
    wav = tmp_path / "rec.wav"
    wav.write_bytes(call[0].read_bytes())
    before = wav.read_bytes()
    if form == "symlink":
        (tmp_path / "link.wav").symlink_to(wav)
        out = str(tmp_path / "link.wav")
    elif form == "relative":
        (tmp_path / "sub").mkdir()
        monkeypatch.chdir(tmp_path / "sub")
        out = "../rec.wav"
    else:
        out = str(wav)
    code = _score(str(wav), flag, out)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "is the input recording" in err and SUMMARY_LINE not in err
    assert wav.read_bytes() == before


# ------------------------------------------------------------------ Session.advance far ahead
def test_advance_far_ahead_has_bounded_memory():
    """advance(1200) allocated 1200 s × 16 kHz × 4 B × 2 channels at once (≈150 MB, and
    advance(36000) 4.6 GB); now silence goes in 10 s blocks: peak under 40 MB."""
    s = Session(SessionConfig())
    tracemalloc.start()
    try:
        s.advance(1200.0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert s.now_s == pytest.approx(1200.0 - s.config.max_lag_s, abs=0.01)
    assert peak < 40e6, f"peak {peak / 1e6:.0f} MB"
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="finite"):
            s.advance(bad)
    s.close()


# ------------------------------------------------------------------ samples of 1e30
def test_huge_samples_in_a_float_file_are_clipped_and_said(call, tmp_path, capsys):
    """1e30 in a float WAV blanked every judge window (no P(human) at all) without a word;
    now such samples are clipped, one line says so, and the windows are judged."""
    x, rate = sf.read(str(call[0]), dtype="float32")
    x[rate * 3: rate * 3 + 200] = 1e30
    wav = tmp_path / "huge.wav"
    sf.write(str(wav), x, rate, subtype="FLOAT")
    out = tmp_path / "huge.json"
    assert main(["score", str(wav), "--json", str(out), "--asr", "off", "--interval-s", "5"]) == 0
    doc = _strict(out.read_text())
    assert any("clipped" in w["message"] and "huge.wav" in w["message"] and w["code"] == "bad_samples"
               for w in doc["source"]["input_health"])
    assert sum(w["p_human"] is not None for w in doc["judge"]) >= 3


def test_nan_and_inf_samples_in_a_float_file_are_zeroed_and_counted_once(call, tmp_path, capsys):
    """NaN and ±inf in a float WAV were set to 0 without a word, and the clipped-sample count
    added up the call's two reads: now one line per problem, each counting the file's samples
    once, and the timing stays that of the clean file."""
    x, rate = sf.read(str(call[0]), dtype="float32")
    x[rate * 3: rate * 3 + 300, 0] = np.nan
    x[rate * 5: rate * 5 + 7, 1] = np.inf
    x[rate * 6: rate * 6 + 11, 1] = 1e30
    wav = tmp_path / "nan.wav"
    sf.write(str(wav), x, rate, subtype="FLOAT")
    out, clean = tmp_path / "nan.json", tmp_path / "clean.json"
    assert main(["score", str(wav), "--json", str(out), "--judge", "none", "--asr", "off"]) == 0
    err = capsys.readouterr().err
    assert err.count("nan.wav holds 307 samples that are not numbers (NaN or ±inf), set to 0") == 1, err
    assert err.count("nan.wav holds 11 samples beyond ±4") == 1, err
    doc = _strict(out.read_text())
    # input-health warnings (a gate on their count passed such a file: a trial), not errors
    assert sum("not numbers" in w["message"] for w in doc["source"]["input_health"]) == 1
    assert doc["summary"]["input_health_warning_count"] == 2 and not doc["errors"]
    assert "livejudge: warning: nan.wav holds 307 samples" in err
    assert main(["score", str(call[0]), "--json", str(clean), "--judge", "none", "--asr", "off"]) == 0
    ref = _strict(clean.read_text())
    assert doc["summary"]["latency_count"] == ref["summary"]["latency_count"]


@pytest.mark.parametrize("seconds", [5, 130])
def test_an_all_nan_file_is_refused_naming_the_nan(tmp_path, capsys, seconds):
    """A float file of NaN only was refused as "both channels are silent" (its samples set to 0
    first), the NaN unnamed: now the one line names it, at a short length and past the 120 s
    level probe (whose later search reads to the end)."""
    wav = tmp_path / "allnan.wav"
    sf.write(str(wav), np.full((16000 * seconds, 2), np.nan, dtype=np.float32), 16000, subtype="FLOAT")
    assert main(["score", str(wav), "--judge", "none", "--asr", "off"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert f"allnan.wav holds {16000 * seconds * 2} samples that are not numbers (NaN or ±inf)" in err[0]
    assert "both channels are silent: nothing can be measured" in err[0]


def test_a_pair_of_nan_files_is_refused_naming_the_nan(tmp_path, capsys):
    """Given as --user/--agent files, the NaN went unnamed even where the stereo file's was named:
    the pair's readers stopped at the call's length and never reached the end, where the count is
    taken."""
    for name in ("u.wav", "a.wav"):
        sf.write(str(tmp_path / name), np.full(16000 * 5, np.nan, dtype=np.float32), 16000, subtype="FLOAT")
    assert main(["score", "--user", str(tmp_path / "u.wav"), "--agent", str(tmp_path / "a.wav"),
                 "--judge", "none", "--asr", "off"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "u.wav holds 80000 samples that are not numbers (NaN or ±inf)" in err[0], err
    assert "both channels are silent: nothing can be measured" in err[0]


def test_huge_pushed_samples_are_clipped_and_json_is_strict():
    from livejudge.judge.model.judge import load_judge
    from livejudge.outputs.guard import json_text

    dia = example_dialogue(seed=2)
    s = Session(SessionConfig(judge_mode="every", interval_s=5.0), judge=load_judge("acoustic"))
    user, agent = dia.call.user.copy(), dia.call.agent.copy()
    agent[16000 * 8: 16000 * 8 + 50] = 1e30
    for k in range(0, len(user), 16000):
        s.push("user", user[k:k + 16000], k / 16000)
        s.push("agent", agent[k:k + 16000], k / 16000)
    doc = s.close()
    assert any("beyond ±4" in e and "clipped" in e for e in doc["errors"])
    _strict(json_text(doc))
    assert sum(w["p_human"] is not None for w in doc["judge"]) >= 3
    # and whatever a document holds, the JSON written is strict: NaN → null, said in errors
    bad = _strict(json_text({"x": float("nan"), "y": [1.0, float("inf")], "errors": []}))
    assert bad["x"] is None and bad["y"] == [1.0, None] and "2 non-finite" in bad["errors"][0]


# ------------------------------------------------------------------ glob characters in a real name
def test_an_existing_file_named_like_a_glob_is_that_file(call, tmp_path, capsys):
    wav = tmp_path / "call [1].wav"
    wav.write_bytes(call[0].read_bytes())
    out = tmp_path / "r.json"
    assert _score(str(wav), "--json", str(out)) == 0, capsys.readouterr().err
    assert _strict(out.read_text())["source"]["file"] == str(wav)


# ------------------------------------------------------------------ --runner URL token
def test_runner_url_token_is_never_printed_or_stored(tmp_path, capsys, monkeypatch):
    from livejudge.commands import attach
    from livejudge.sources import runner_probe

    seen = {}
    monkeypatch.setattr(runner_probe, "pick_route", lambda url, route, origin=None: runner_probe.Route(
        "eval", "ws://127.0.0.1:1/ws?token=SECRET123", "pipecat-eval", "the eval route"))
    monkeypatch.setattr(attach, "_source", lambda args, turns=None: None)

    def fake_run_call(args, url, source, *, title, extra_info=None, **kw):
        seen.update(title=title, info=extra_info, shown=kw.get("url_shown"))
        return 0

    monkeypatch.setattr(attach, "_run_call", fake_run_call)
    assert main(["attach", "--runner", "http://127.0.0.1:7860/?token=SECRET123", "--judge", "none"]) == 0
    err = capsys.readouterr().err
    assert "SECRET123" not in err and "token=REDACTED" in err
    assert "SECRET123" not in json.dumps(seen)


# ------------------------------------------------------------------ batches
def test_batch_glob_does_not_follow_symlink_loops(call, tmp_path):
    from livejudge.commands.batch import discover_calls

    (tmp_path / "calls" / "a").mkdir(parents=True)
    (tmp_path / "calls" / "a" / "c1.wav").write_bytes(call[0].read_bytes())
    (tmp_path / "calls" / "a" / "back").symlink_to("..")  # a loop
    (tmp_path / "calls" / "again").symlink_to(".")  # another
    files = discover_calls(str(tmp_path / "calls" / "**" / "*.wav"))
    assert [f.name for f in files] == ["c1.wav"]


def test_a_stopped_batch_writes_its_summary(call, tmp_path, capsys, monkeypatch):
    from livejudge.commands import batch

    d = tmp_path / "calls"
    d.mkdir()
    for i in range(3):
        (d / f"c{i}.wav").write_bytes(call[0].read_bytes())
    real = batch.score_call

    def stop_on_second(path, options=None):
        if Path(path).name == "c1.wav":
            raise KeyboardInterrupt
        return real(path, options)

    monkeypatch.setattr(batch, "score_call", stop_on_second)
    out = tmp_path / "out"
    code = main(["score", str(d), "--out-dir", str(out), "--judge", "none", "--asr", "off"])
    err = capsys.readouterr().err
    assert code == 130, err
    sm = json.loads((out / "summary.json").read_text())
    # every call is listed: the one scored, the one in flight (interrupted), the one never started
    assert sm["n_calls"] == 3 and sm["n_scored"] == 1 and "after 1 of 3 calls" in sm["stopped"]
    assert [c["status"] for c in sm["calls"]] == ["ok", "interrupted", "not_started"]
    assert (out / "summary.csv").read_text().count("\n") == 4  # header + every call
    assert "batch stopped (Ctrl-C after 1 of 3 calls had finished" in err and "summary written to" in err


# ------------------------------------------------------------------ a pipe as input
def test_score_reads_a_pipe(call, tmp_path, capsys):
    """``livejudge score <(cat call.wav)``: a FIFO, not seekable (it crashed on seek)."""
    fifo = tmp_path / "pipe.wav"
    os.mkfifo(fifo)
    data = call[0].read_bytes()

    def feed():
        with open(fifo, "wb") as f:
            f.write(data)

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    out = tmp_path / "r.json"
    code = _score(str(fifo), "--json", str(out))
    t.join(10)
    assert code == 0, capsys.readouterr().err
    doc = _strict(out.read_text())
    assert doc["duration_s"] == pytest.approx(call[1].call.duration_s, abs=0.05)
    assert doc["summary"]["latency_count"] == len(call[1].truth.response_latencies_s)


# ------------------------------------------------------------------ malformed documents
@pytest.fixture(scope="module")
def good_doc(call, tmp_path_factory):
    out = tmp_path_factory.mktemp("doc") / "good.json"
    assert _score(str(call[0]), "--json", str(out)) == 0
    return json.loads(out.read_text())


def _bad_docs(good: dict) -> dict[str, str]:
    deep = "[" * 200000 + "]" * 200000
    wrong = dict(good, summary="abc")
    segs = dict(good, segments=5)
    far = json.loads(json.dumps(good))
    far["transitions"][0]["gap_s"] = 1e12
    nan = json.dumps(good).replace('"duration_s": ' + json.dumps(good["duration_s"]), '"duration_s": NaN', 1)
    listed = json.loads(json.dumps(good))
    listed["summary"]["mean_p_human"] = [1]  # a hand edit: `report` crashed with a traceback (a trial)
    return {"deep": deep, "wrong_summary": json.dumps(wrong), "wrong_segments": json.dumps(segs),
            "gap_1e12": json.dumps(far), "nan": nan, "summary_value_a_list": json.dumps(listed)}


@pytest.mark.parametrize("command", ["compare", "report"])
@pytest.mark.parametrize("case", ["deep", "wrong_summary", "wrong_segments", "gap_1e12", "nan",
                                  "summary_value_a_list"])
def test_malformed_documents_are_one_line_errors(good_doc, tmp_path, capsys, command, case):
    bad = tmp_path / "bad.json"
    bad.write_text(_bad_docs(good_doc)[case])
    good = tmp_path / "good.json"
    good.write_text(json.dumps(good_doc))
    argv = ["compare", str(good), str(bad)] if command == "compare" else ["report", str(bad), "-o",
                                                                            str(tmp_path / "r.html")]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "bad.json" in err
    assert {"deep": "nested too deeply", "wrong_summary": "summary must be an object",
            "wrong_segments": "segments must be a list", "gap_1e12": "gap_s = 1e+12 is outside",
            "nan": "NaN is not a JSON number",
            "summary_value_a_list": "summary.mean_p_human must be a number, got list"}[case] in err


# ------------------------------------------------------------------ escape sequences
ESC_NAME = "bad\x1b]0;pwned\x07\x1b[2J.wav"


def test_file_names_with_escape_sequences_are_printed_escaped(tmp_path, capsys):
    bad = tmp_path / ESC_NAME
    bad.write_bytes(b"RIFF\x00\x00\x00\x00not a wave file")
    code = _score(str(bad), "--json", str(tmp_path / "r.json"))
    err = capsys.readouterr().err
    assert code == 2
    assert "\x1b" not in err and "\x07" not in err
    assert "bad\\x1b]0;pwned\\x07\\x1b[2J.wav" in err


@contextmanager
def _closing_agent(reason: str):
    websockets = pytest.importorskip("websockets")
    from websockets.asyncio.server import serve

    from livejudge.commands.attach import free_port

    port = free_port()
    loop = asyncio.new_event_loop()
    ready, stop = threading.Event(), None

    async def handler(ws):
        await ws.close(code=1013, reason=reason)

    async def run():
        nonlocal stop
        stop = asyncio.Event()
        async with serve(handler, "127.0.0.1", port):
            ready.set()
            await stop.wait()

    th = threading.Thread(target=lambda: loop.run_until_complete(run()), daemon=True)
    th.start()
    assert ready.wait(5) and websockets
    try:
        yield port
    finally:
        loop.call_soon_threadsafe(stop.set)
        th.join(5)


def test_an_agents_close_reason_reaches_the_terminal_escaped(tmp_path, capsys):
    from livejudge.audio import SAMPLE_RATE
    from livejudge.testing.dialogues import load_clip, trim

    wav = tmp_path / "u.wav"
    sf.write(str(wav), 0.9 * trim(load_clip("cmu_cards_001")), SAMPLE_RATE, subtype="PCM_16")
    with _closing_agent("busy\x1b[2J\x1b]0;pwned\x07") as port:
        code = main(["attach", "--ws-url", f"ws://127.0.0.1:{port}", "--protocol", "twilio", "--no-playback",
                     "--judge", "none", "--display", "none", "--input-wav", str(wav),
                     "--json", str(tmp_path / "o.json")])
    err = capsys.readouterr().err
    assert code == 1
    assert "busy" in err and "\x1b" not in err and "\x07" not in err
    assert "\\x1b[2J" in err
    assert np.isfinite(_strict((tmp_path / "o.json").read_text())["duration_s"])


def test_a_device_or_an_endless_pipe_is_refused_not_copied_without_end(tmp_path, capsys, monkeypatch):
    """`score /dev/zero` copied the device to a temp file without end (a trial: it hung until a
    timeout, the copy growing in /tmp). A device is refused; a pipe is read to MAX_SPOOL_BYTES."""
    import os
    import threading

    import livejudge.audio as audio

    assert main(["score", "/dev/zero", "--judge", "none", "--json", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "/dev/zero is a device, not an audio file or a pipe" in err[0], err
    monkeypatch.setattr(audio, "MAX_SPOOL_BYTES", 1 << 20)
    fifo = tmp_path / "endless.wav"
    os.mkfifo(fifo)

    def feed():
        try:
            with open(fifo, "wb") as f:
                for _ in range(3):
                    f.write(b"\0" * (1 << 20))
        except BrokenPipeError:
            pass

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    assert main(["score", str(fifo), "--judge", "none", "--json", str(tmp_path / "r.json")]) == 2
    t.join(timeout=10)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "gave more than 1 MiB" in err[0] and "a stream without end" in err[0], err
    assert not [p for p in os.listdir(__import__("tempfile").gettempdir()) if p.startswith("livejudge-pipe-")
                and os.path.getsize(os.path.join(__import__("tempfile").gettempdir(), p)) >= 1 << 20]


def test_a_directory_named_like_a_call_is_called_a_directory(tmp_path, capsys):
    """A trial's `dir.wav` (a directory) read "cannot read … (a pipe, copied to a temp file …):
    Is a directory" from check, "--json/--events are per call" from score, and "'audio' file not
    found" from a manifest: each now says it is a directory, in one line, exit 2."""
    from livejudge.commands.train import run_in_process

    d = tmp_path / "dir.wav"
    d.mkdir()
    assert main(["check", str(d), "--at", "16.1", "--expect", "yield", "--within", "0.5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "dir.wav is a directory, not a call's audio file" in err[0], err
    assert main(["score", str(d), "--json", str(tmp_path / "x.json")]) == 2
    assert "is a directory, so it is scored as a batch of its calls" in capsys.readouterr().err
    m = tmp_path / "m.jsonl"
    m.write_text(json.dumps({"audio": str(d), "label": "human"}) + "\n")
    code, said = run_in_process("eval", m, "--head", "whisper-fitted")
    assert code == 2 and "'audio' is a directory, not an audio file" in said


def test_a_csv_manifest_is_told_the_format(tmp_path):
    """A CSV manifest read "line 1: not valid JSON" with no word of the format (benchmarks ship CSV
    manifests of another kind): the line now says a manifest is JSON Lines."""
    from livejudge.commands.train import run_in_process

    m = tmp_path / "m.csv"
    m.write_text("audio,label\ncall.wav,human\n")
    code, said = run_in_process("train", m, "--out", tmp_path / "h")
    assert code == 2 and "a manifest is JSON Lines, one object per line" in said and "not CSV" in said


def test_a_wav_cut_to_its_first_bytes_is_called_truncated(tmp_path, capsys, call):
    """A trial's WAV cut to 50 bytes read "the call lasts 0.00 s, under 1 s" only: the refusal
    now names the cut, from the header's length (one line, exit 2)."""
    wav = tmp_path / "cut.wav"
    wav.write_bytes(Path(call[0]).read_bytes()[:2000])
    assert main(["score", str(wav), "--judge", "none"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cut.wav is truncated: its header says" in err[0] and "under 1 s" in err[0], err


def test_one_file_as_both_sides_is_named(call, tmp_path, capsys):
    """A trial finding, now one line and exit 2 that names the real problem: `--user X --agent X`
    was read as "the two channels carry the same signal … a mono recording copied to both?"."""
    wav = str(call[0])
    assert main(["score", "--user", wav, "--agent", str(Path(wav).parent / ".." / Path(wav).parent.name / "call.wav"),
                 "--judge", "none"]) == 2
    assert capsys.readouterr().err.strip() == (f"livejudge: --user and --agent name the same file ({wav}): give the "
                                               "caller's recording to --user and the agent's to --agent")
    manifest = tmp_path / "pairs.csv"  # a batch row naming one file as both sides: that call skipped, why said
    manifest.write_text(f"{wav},{wav}\n")
    main(["score", str(manifest), "--out-dir", str(tmp_path / "out"), "--judge", "none"])
    capsys.readouterr()
    (row,) = json.loads((tmp_path / "out" / "summary.json").read_text())["calls"]
    assert row["status"] == "skipped" and "as both the user's and the agent's file" in row["reason"], row
    empty = tmp_path / "empty.wav"
    sf.write(str(empty), np.zeros((0, 2), np.float32), 16000)  # truly empty: the old words stand
    assert main(["score", str(empty), "--judge", "none"]) == 2
    assert "has no audio samples (an empty recording)" in capsys.readouterr().err


def _unfinished(src: Path, dst: Path) -> Path:
    """``src`` with its data chunk's size (and the RIFF size) set to 0, as a recorder killed before it
    closed the file leaves them."""
    data = bytearray(src.read_bytes())
    at = data.index(b"data")
    data[at + 4:at + 8] = b"\0\0\0\0"
    data[4:8] = b"\0\0\0\0"
    dst.write_bytes(bytes(data))
    return dst


@pytest.mark.parametrize("subtype,rate", [("PCM_16", 16000), ("PCM_24", 48000), ("FLOAT", 16000),
                                          ("ULAW", 8000), ("PCM_U8", 8000)])
def test_a_wav_whose_header_was_never_finished_is_read_to_the_end_of_its_bytes(call, tmp_path, capsys, subtype, rate):
    """A WAV whose data chunk says 0 bytes while megabytes of samples follow (a recorder killed before
    it closed the file) was refused (exit 2) with a sox command to repair it: a call cut off lost
    its result. It is now read as its fmt chunk describes it, to the end of its bytes, and scored
    exactly as the finished file is, with an ``unfinished_header`` warning (the recorder may have
    stopped early); the same for one side given as --user."""
    from livejudge.audio import resample

    x, sr = sf.read(str(call[0]), dtype="float32")
    y = np.stack([resample(x[:, 0], sr, rate), resample(x[:, 1], sr, rate)], axis=1) if rate != sr else x
    whole = tmp_path / "whole.wav"
    sf.write(str(whole), y, rate, subtype=subtype)
    bad = _unfinished(whole, tmp_path / "unfinished.wav")
    assert sf.info(str(bad)).frames == 0  # what libsndfile reads of it
    assert _score(str(whole), "--json", str(tmp_path / "whole.json")) == 0
    capsys.readouterr()
    assert _score(str(bad), "--json", str(tmp_path / "bad.json")) == 0
    err = capsys.readouterr().err
    assert "unfinished.wav's header was never finished" in err and f"its {len(y) / rate:.1f} s of samples" in err, err
    a, b = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("whole", "bad"))
    same = (lambda sm: {k: v for k, v in sm.items() if k != "input_health_warning_count"})
    assert same(a["summary"]) == same(b["summary"]) and a["duration_s"] == b["duration_s"]
    assert b["summary"]["input_health_warning_count"] == a["summary"]["input_health_warning_count"] + 1
    assert [w["code"] for w in b["source"]["input_health"]] == \
        [w["code"] for w in a["source"]["input_health"]] + ["unfinished_header"]
    if subtype != "PCM_16":
        return
    # one side of such a file (a re-check of the refusal had read it as a silent caller, latency n=0)
    user, agent = tmp_path / "user.wav", tmp_path / "agent.wav"
    sf.write(str(user), y[:, 0], rate, subtype=subtype)
    sf.write(str(agent), y[:, 1], rate, subtype=subtype)
    _unfinished(user, user)
    assert _score("--user", str(user), "--agent", str(agent), "--json", str(tmp_path / "sides.json")) == 0
    sides = json.loads((tmp_path / "sides.json").read_text())
    assert same(sides["summary"]) == same(a["summary"]), capsys.readouterr().err
    assert "unfinished_header" in [w["code"] for w in sides["source"]["input_health"]]
