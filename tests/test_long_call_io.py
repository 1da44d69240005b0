"""Reading a call block by block (CallReader) gives exactly what load_call reads whole."""

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from livejudge.audio import AudioFormatError, BlockResampler, load_call, open_call, resample
from livejudge.session import Session, SessionConfig, stream_call
from livejudge.testing.dialogues import example_dialogue


@pytest.fixture(scope="module")
def dialogue():
    return example_dialogue(seed=4)


@pytest.mark.parametrize("rate", [8000, 11025, 16000, 22050, 44100, 48000])
def test_block_resampler_equals_whole_resample(rate):
    x = np.random.default_rng(rate).standard_normal(rate * 3 + 17).astype(np.float32) * 0.1
    want = resample(x, rate)
    for block in (331, 4096, rate):
        r = BlockResampler(rate)
        got = np.concatenate([r.push(x[i:i + block]) for i in range(0, len(x), block)] + [r.finish()])
        assert len(got) == len(want)
        assert np.array_equal(got, want), (rate, block, float(np.max(np.abs(got - want))))


@pytest.mark.parametrize("rate,user_channel", [(16000, 0), (48000, 1), (44100, 0), (8000, 1)])
def test_stereo_file_read_in_blocks_equals_load_call(tmp_path, dialogue, rate, user_channel):
    p = dialogue.write(tmp_path / "call.wav", sample_rate=rate, user_channel=user_channel)
    whole = load_call(p, user_channel=user_channel, agent_channel=1 - user_channel)
    with open_call(p, user_channel=user_channel, agent_channel=1 - user_channel) as reader:
        assert reader.n_samples == len(whole.user)
        assert reader.duration_s == pytest.approx(whole.duration_s)
        assert (reader.sample_rate_in, reader.channels) == (whole.sample_rate_in, whole.channels)
        blocks = list(reader.blocks(block_s=1.3))
    assert len(blocks) > 10  # really read in pieces
    assert all(len(u) == len(a) for u, a in blocks)
    assert np.array_equal(np.concatenate([b[0] for b in blocks]), whole.user)
    assert np.array_equal(np.concatenate([b[1] for b in blocks]), whole.agent)


def test_two_files_of_different_rates_and_lengths(tmp_path, dialogue):
    u, a = dialogue.call.user, dialogue.call.agent[: len(dialogue.call.agent) * 2 // 3]
    sf.write(tmp_path / "u.wav", resample(u, 16000, 24000), 24000, subtype="FLOAT")
    sf.write(tmp_path / "a.wav", resample(a, 16000, 8000), 8000, subtype="FLOAT")
    whole = load_call(user=tmp_path / "u.wav", agent=tmp_path / "a.wav")
    with open_call(user=tmp_path / "u.wav", agent=tmp_path / "a.wav") as reader:
        got = reader.read_all()
        assert reader.n_samples == len(whole.user)
    assert np.array_equal(got.user, whole.user) and np.array_equal(got.agent, whole.agent)
    assert got.channels == whole.channels and got.sample_rate_in == whole.sample_rate_in


def test_errors_are_load_calls_one_liners(tmp_path, dialogue):
    mono = tmp_path / "mono.wav"
    sf.write(mono, dialogue.call.user, 16000)
    stereo = dialogue.write(tmp_path / "st.wav")
    empty = tmp_path / "empty.wav"
    sf.write(empty, np.zeros((0, 2), dtype=np.float32), 16000)
    cases = [
        ((empty,), {}),
        ((mono,), {}),
        ((stereo,), {"user_channel": 2}),
        ((stereo,), {"user_channel": 1, "agent_channel": 1}),
        ((tmp_path / "missing.wav",), {}),
        ((stereo,), {"user": mono}),
        ((None,), {"user": mono}),
    ]
    for args, kw in cases:
        with pytest.raises(AudioFormatError) as want:
            load_call(*args, **kw)
        with pytest.raises(AudioFormatError) as got:
            open_call(*args, **kw)
        assert str(got.value) == str(want.value) and "\n" not in str(got.value)
    (tmp_path / "junk.wav").write_bytes(b"RIFF0000WAVEjunk" * 10)
    with pytest.raises(AudioFormatError, match="cannot decode"):
        open_call(tmp_path / "junk.wav")


def test_streamed_file_gives_the_same_result_as_the_call_in_memory(tmp_path, dialogue):
    p = dialogue.write(tmp_path / "call.wav", sample_rate=48000)
    results = []
    for source in (load_call(p), open_call(p)):
        s = Session(SessionConfig())
        stream_call(s, source)
        r = s.close()
        r.pop("created_utc")
        results.append(r)
    assert results[0] == results[1]
    assert len(results[0]["transitions"]) == len(dialogue.truth.transitions)


def test_score_reads_the_file_block_by_block(tmp_path, dialogue, monkeypatch):
    from livejudge import audio
    from livejudge.commands import cli

    p = dialogue.write(tmp_path / "call.wav", sample_rate=44100)
    whole = load_call(p)
    s = Session(SessionConfig(judge_mode="every"))
    stream_call(s, whole)
    want = s.close()

    def no_whole_read(*a, **k):
        raise AssertionError("score must not read the whole file")

    monkeypatch.setattr(audio, "load_call", no_whole_read)
    monkeypatch.setattr(audio, "load_audio", no_whole_read)
    out = tmp_path / "r.json"
    assert cli.main(["score", str(p), "--judge", "none", "--json", str(out)]) == 0
    got = json.loads(out.read_text())
    for key in ("segments", "turns", "transitions", "barge_ins", "backchannels", "overlaps", "duration_s"):
        assert got[key] == want[key], key
    assert got["sample_rate_in"] == 44100


def test_ring_buffer_slices_equal_a_plain_array():
    from livejudge.timing.window import ChannelBuffer

    rng = np.random.default_rng(0)
    for _ in range(100):
        buf = ChannelBuffer(rng.uniform(0.02, 0.5))
        ref = np.zeros(3_000_000, dtype=np.float32)
        end = 0
        for _ in range(40):  # forward writes with silence gaps, wrapping the ring many times
            start = end + int(rng.integers(0, 4000)) * int(rng.random() < 0.3)
            x = rng.standard_normal(int(rng.integers(1, 12000))).astype(np.float32)
            buf.write(x, start / 16000)
            ref[start:start + len(x)] = x
            end = start + len(x)
            a = int(rng.integers(0, end + 10))
            b = a + int(rng.integers(0, 9000))
            want = np.zeros(b - a, dtype=np.float32)
            lo, hi = max(a, end - buf.capacity), min(b, end)
            if hi > lo:
                want[lo - a:hi - a] = ref[lo:hi]
            assert np.array_equal(buf.read(a / 16000, b / 16000), want)


def test_head_is_the_start_and_blocks_start_over(tmp_path, dialogue):
    p = dialogue.write(tmp_path / "call.wav", sample_rate=22050)
    whole = load_call(p)
    with open_call(p) as reader:
        h = reader.head(10.0)
        assert np.array_equal(h.user, whole.user[:160000]) and np.array_equal(h.agent, whole.agent[:160000])
        again = reader.read_all()
    assert np.array_equal(again.user, whole.user)


def test_echo_gate_on_a_long_call_probes_its_start_and_streams_when_clean(tmp_path, dialogue, monkeypatch):
    from livejudge.timing import echo
    from livejudge.audio import CallReader
    from livejudge.timing.echo import add_leakage

    monkeypatch.setattr(echo, "ECHO_WHOLE_MAX_S", 30.0)  # the call (~45 s) counts as long
    monkeypatch.setattr(echo, "ECHO_PROBE_S", 20.0)
    clean = dialogue.write(tmp_path / "clean.wav")
    with open_call(clean) as reader:
        source, info = echo.gate_source(reader, "auto")
        assert source is reader and info["applied"] is False and info["probed_s"] == 20.0
        assert info["detected"] is False
    leaky = tmp_path / "leaky.wav"
    mic = add_leakage(dialogue.call.user, dialogue.call.agent, gain_db=-18.0, delay_s=0.05)
    sf.write(leaky, np.stack([mic, dialogue.call.agent], axis=1), 16000, subtype="FLOAT")
    with open_call(leaky) as reader:
        source, info = echo.gate_source(reader, "auto")
        assert not isinstance(source, CallReader) and info["applied"] is True  # gated whole
        assert len(source.user) == reader.n_samples
    with open_call(clean) as reader:
        src, off = echo.gate_source(reader, "off")  # never gated; leakage still looked for (echo_ungated)
        assert src is reader and off["mode"] == "off" and off["applied"] is False and "detected" in off


def test_truncated_file_is_scored_and_says_so(tmp_path, capsys):
    """New-user defect: a WAV cut short (header says 43.8 s, bytes hold half) was scored as a
    complete call with no word of it. Now an input-health warning says so (stderr, the result),
    and a gate on their count fails it (a later trial: it passed `input_health_warning_count>0`)."""
    import json

    from livejudge.commands.cli import main

    src = Path(__file__).resolve().parents[1] / "examples" / "example_call.wav"
    data = src.read_bytes()
    cut = tmp_path / "cut.wav"
    cut.write_bytes(data[: len(data) // 2])  # header intact, half the samples
    out = tmp_path / "r.json"
    assert main(["score", str(cut), "--judge", "none", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    full_s = sf.info(str(src)).duration
    ws = doc["source"]["input_health"]
    assert any(w["code"] == "truncated_file" and "cut.wav is truncated" in w["message"]
               and f"{full_s:.1f} s" in w["message"] for w in ws), ws
    assert doc["source"]["truncated"] is True and doc["summary"]["input_health_warning_count"] >= 1
    assert "livejudge: warning: cut.wav is truncated" in capsys.readouterr().err
    assert main(["score", str(cut), "--judge", "none", "--fail-if", "input_health_warning_count>0"]) == 3  # a gate failed
    whole = tmp_path / "whole.json"
    assert main(["score", str(src), "--judge", "none", "--json", str(whole)]) == 0
    assert json.loads(whole.read_text())["errors"] == []


def test_a_truncated_file_is_cut_short_for_gates_compare_and_the_report(tmp_path, capsys):
    """A trial: a file cut to half passed two gates its whole call fails (exit 0, a green JUnit
    file), and compare called its fewer flags "better". Its lost end is treated as a stopped call's:
    the gates' passing line says it is not a pass (JUnit: an error, exit 1), compare's count rows
    get a note and no verdict, and the report says so at the top."""
    import json

    from livejudge.commands.cli import main
    from livejudge.commands.gates import cut_short

    src = Path(__file__).resolve().parents[1] / "examples" / "example_call.wav"
    data = src.read_bytes()
    cut = tmp_path / "cut.wav"
    cut.write_bytes(data[: len(data) // 2])
    out, junit, whole = tmp_path / "r.json", tmp_path / "j.xml", tmp_path / "whole.json"
    code = main(["score", str(cut), "--judge", "none", "--json", str(out), "--junit", str(junit),
                 "--fail-if", "latency_p90_s>30"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "the recording is truncated (read to" in err and "which is not a pass" in err, err
    assert 'errors="1"' in junit.read_text()
    doc = json.loads(out.read_text())
    assert cut_short(doc).startswith("the recording is truncated")
    assert doc["gates"][0]["failed"] is False and doc["gates"][0]["cut_short"] == cut_short(doc)
    assert main(["score", str(src), "--judge", "none", "--json", str(whole)]) == 0
    assert cut_short(json.loads(whole.read_text())) is None
    capsys.readouterr()
    cmp_out = tmp_path / "cmp.json"
    assert main(["compare", str(whole), str(out), "--json", str(cmp_out)]) == 0
    cmp = json.loads(cmp_out.read_text())
    notes = cmp["notes"]
    assert any("the call was cut short (truncated file: it ends before its header says)" in n for n in notes), notes
    # no row of the cut call gets better/worse: its p90 "1.98 → 1.09, better" lost the slow reply (a re-check)
    rows = {r["metric"]: r for r in cmp["rows"]}
    assert rows["latency_p90_s"]["verdicts"][1] == "" and rows["verdict_flagged_moment_count"]["verdicts"][1] == ""
    capsys.readouterr()
    assert main(["compare", str(whole), str(out), "--fail-if-worse", "latency_p90_s"]) == 3
    assert "cannot be compared" in capsys.readouterr().err
    from livejudge.outputs.html_report import render_html

    assert "This recording is truncated" in render_html(doc)
    assert "This recording is truncated" not in render_html(json.loads(whole.read_text()))


def test_check_warns_a_truncated_file_as_score_does(tmp_path, capsys):
    """`check` ran its own copy of score's preparation and missed the last step: a file cut to
    half its length was checked with no word of it. All recorded-call commands now share
    livejudge/sources/recording.py."""
    from livejudge.commands.cli import main

    src = Path(__file__).resolve().parents[1] / "examples" / "example_call.wav"
    data = src.read_bytes()
    cut = tmp_path / "cut.wav"
    cut.write_bytes(data[: len(data) // 2])
    main(["check", str(cut), "--at", "16.1", "--expect", "yield", "--within", "0.5"])
    assert "livejudge: warning: cut.wav is truncated" in capsys.readouterr().err


def _transitions_before_the_cut_match_the_truth(doc: dict) -> None:
    """Every transition of the example call's truth file that starts over 1 s before the scored
    part ends is measured, in order, within ±40 ms (at least three of them)."""
    root = Path(__file__).resolve().parents[1] / "examples"
    truth = json.loads((root / "example_call.truth.json").read_text())["transitions"]
    before = [t for t in truth if t["to_onset_s"] < doc["duration_s"] - 1.0]
    got = doc["transitions"]
    assert len(before) >= 3 and len(got) >= len(before)
    for t, g in zip(before, got):
        assert (t["from"], t["to"]) == (g["from"], g["to"]) and abs(t["gap_s"] - g["gap_s"]) <= 0.04, (t, g)


@pytest.mark.parametrize("command", ["score", "replay"])
def test_a_flac_damaged_part_way_is_scored_up_to_the_damage_and_says_so(tmp_path, capsys, command):
    """A trial: the example call as FLAC, cut in half, was a traceback ("flac decoder lost sync"),
    exit 1, no result, while a WAV cut the same way is scored with a truncated_file warning. The
    FLAC is now read up to the damage, every transition before it measured as in the truth file
    (±40 ms), with a truncated_file warning that says where decoding stopped."""
    root = Path(__file__).resolve().parents[1] / "examples"
    x, sr = sf.read(str(root / "example_call.wav"))
    whole = tmp_path / "call.flac"
    sf.write(str(whole), x, sr)
    data = whole.read_bytes()
    cut = tmp_path / "cut.flac"
    cut.write_bytes(data[: len(data) // 2])
    out = tmp_path / "r.json"
    from livejudge.commands.cli import main

    extra = ["--speed", "max", "--display", "none"] if command == "replay" else []
    assert main([command, str(cut), "--judge", "none", "--json", str(out), *extra]) == 0
    err = capsys.readouterr().err
    doc = json.loads(out.read_text())
    (w,) = [w for w in doc["source"]["input_health"] if w["code"] == "truncated_file"]
    assert w["message"].startswith("cut.flac is damaged: it could not be decoded past ")
    assert "the rest is not scored" in w["message"] and w["message"] in err
    assert doc["source"]["truncated"] is True and 15.0 < doc["duration_s"] < x.shape[0] / sr / 2 + 0.5
    _transitions_before_the_cut_match_the_truth(doc)
    # a file that cannot be decoded from its start is still refused in one line
    bad = tmp_path / "head.flac"
    bad.write_bytes(data[:200])
    assert main([command, str(bad), "--judge", "none", *extra]) == 2
    assert "cannot decode" in capsys.readouterr().err


@pytest.mark.parametrize("subtype, rate", [("VORBIS", 16000), ("OPUS", 48000)])
def test_an_ogg_cut_short_is_scored_to_its_end_with_a_truncated_warning(tmp_path, capsys, subtype, rate):
    """The last read of the hardening trial: an OGG call cut in half was scored as a whole 21 s call,
    exit 0, with no word, because libsndfile reads a cut Ogg file as a shorter whole one. Its last
    page is now read for the end-of-stream flag (RFC 3533): the call is scored to where it ends,
    every transition before it as in the truth file (±40 ms), with a truncated_file warning. A whole
    OGG gets no warning; one cut a byte short of its end is cut."""
    from scipy.signal import resample_poly

    from livejudge.audio import ogg_ends_cut
    from livejudge.commands.cli import main

    root = Path(__file__).resolve().parents[1] / "examples"
    x, sr = sf.read(str(root / "example_call.wav"))
    if rate != sr:
        x = resample_poly(x, rate // sr, 1, axis=0)
    whole = tmp_path / "call.ogg"
    sf.write(str(whole), x, rate, format="OGG", subtype=subtype)
    data = whole.read_bytes()
    assert not ogg_ends_cut(whole)
    cut = tmp_path / "cut.ogg"
    cut.write_bytes(data[: len(data) // 2])
    assert ogg_ends_cut(cut)
    out = tmp_path / "r.json"
    assert main(["score", str(cut), "--judge", "none", "--json", str(out)]) == 0
    err = capsys.readouterr().err
    doc = json.loads(out.read_text())
    (w,) = [w for w in doc["source"]["input_health"] if w["code"] == "truncated_file"]
    assert w["message"].startswith("cut.ogg is truncated: it ends without its Ogg end-of-stream page")
    assert w["message"] in err and "the rest is missing" in w["message"]
    assert doc["source"]["truncated"] is True and 15.0 < doc["duration_s"] < x.shape[0] / rate / 2 + 0.5
    _transitions_before_the_cut_match_the_truth(doc)
    # the whole file: no warning
    assert main(["score", str(whole), "--judge", "none", "--json", str(out)]) == 0
    capsys.readouterr()
    doc = json.loads(out.read_text())
    assert not [w for w in doc["source"]["input_health"] if w["code"] == "truncated_file"]
    # cut one byte short of its end: the last page is not whole
    cut.write_bytes(data[:-1])
    assert ogg_ends_cut(cut)


def test_a_batch_with_a_truncated_call_is_not_a_pass(tmp_path, capsys):
    """A re-check: a batch of the example and the example cut to 60 % of its bytes passed its gates
    (exit 0, no JUnit error), while the cut file alone exits 1. The batch now says the gates read
    part of that call only: "which is not a pass", a JUnit error, cut_short in summary.json, exit 1."""
    import json

    from livejudge.commands.cli import main

    src = Path(__file__).resolve().parents[1] / "examples" / "example_call.wav"
    d = tmp_path / "calls"
    d.mkdir()
    (d / "whole.wav").write_bytes(src.read_bytes())
    data = src.read_bytes()
    (d / "cut.wav").write_bytes(data[: int(len(data) * 0.6)])
    junit, out = tmp_path / "j.xml", tmp_path / "out"
    code = main(["score", str(d), "--out-dir", str(out), "--judge", "none", "--fail-if", "latency_p90_s>5",
                 "--junit", str(junit)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "1 of the 2 scored calls is a truncated recording (cut.wav)" in err and "which is not a pass" in err
    text = junit.read_text()
    assert "CallCutShort" in text and 'name="livejudge calls" tests="2" failures="0" errors="1"' in text, text
    gates = json.loads((out / "summary.json").read_text())["gates"]["results"]
    assert gates[0]["failed"] is False and gates[0]["cut_short"].startswith("1 of the 2 scored calls")
    rows = {Path(r["file"]).name: r for r in json.loads((out / "summary.json").read_text())["calls"]}
    assert rows["cut.wav"]["status"] == "ok" and rows["cut.wav"]["reason"].startswith("a truncated recording")
    assert rows["whole.wav"]["reason"] is None
    assert "a truncated recording" in (out / "summary.csv").read_text()
    # compare of this batch: its medians hold the cut call, so no row of it gets a verdict (a re-check)
    capsys.readouterr()
    cmp_out = tmp_path / "cmp.json"
    assert main(["compare", str(out), str(out / "whole.json"), "--json", str(cmp_out)]) == 0
    cmp = json.loads(cmp_out.read_text())
    assert any("1 of its calls is a truncated recording (cut.wav)" in n for n in cmp["notes"]), cmp["notes"]
    assert all(v == "" for r in cmp["rows"] for v in r["verdicts"][1:]), [r["verdicts"] for r in cmp["rows"]]
