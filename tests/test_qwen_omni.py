"""Qwen2.5-Omni backbone end to end with a tiny random thinker (no downloads, CPU).

The checkpoint is written by ``livejudge.testing.qwen.make_tiny_qwen_omni`` in the released
layout (full Omni config.json, ``thinker.``-prefixed weights plus talker/token2wav stand-ins,
tokenizer, Whisper feature extractor) and loaded through ``QwenOmniBackbone``'s real path.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
pytest.importorskip("transformers", reason="Qwen2.5-Omni backbone needs transformers (livejudge[gpu])")

import torch  # noqa: E402

from livejudge.events import SpeechSegment  # noqa: E402
from livejudge.judge.features.backbones import qwen_omni as qo  # noqa: E402
from livejudge.judge.features.backbones.base import Backbone  # noqa: E402
from livejudge.judge.model.dimensions import DIMENSION_IDS  # noqa: E402
from livejudge.testing.qwen import TINY_HIDDEN_SIZE, make_tiny_qwen_omni  # noqa: E402
from livejudge.timing.window import WindowSnapshot  # noqa: E402

SR = 16000


def noise_window(duration_s: float, seed: int, start_s: float = 0.0, segments=()) -> WindowSnapshot:
    rng = np.random.default_rng(seed)
    n = int(round(duration_s * SR))
    user = (0.05 * rng.standard_normal(n)).astype(np.float32)
    agent = (0.05 * rng.standard_normal(n)).astype(np.float32)
    return WindowSnapshot(start_s, start_s + duration_s, user, agent, segments=tuple(segments))


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_qwen_omni(tmp_path_factory.mktemp("ckpt") / "tiny-omni", seed=0)


@pytest.fixture(scope="module")
def backbone(tiny_dir):
    torch.manual_seed(0)
    return qo.QwenOmniBackbone(str(tiny_dir), device="cpu")


# ----------------------------------------------------------------------------- pure helpers


def test_audio_token_count_formula():
    # 100 log-mel frames per second, 25 audio tokens per second after two stride-2 stages.
    assert qo.num_audio_tokens(1000) == 250
    assert qo.num_audio_tokens(3000) == 750
    assert qo.num_audio_tokens(6000) == 1500
    assert qo.num_audio_tokens(999) == 250
    assert qo.num_audio_tokens(3) == 1
    with pytest.raises(ValueError, match="at least 3"):
        qo.num_audio_tokens(2)


def test_backbone_name_from_model():
    assert qo.backbone_name("Qwen/Qwen2.5-Omni-7B") == "qwen2.5-omni-7b"
    assert qo.backbone_name("Qwen/Qwen2.5-Omni-3B") == "qwen2.5-omni-3b"
    assert qo.backbone_name("/models/Qwen2.5-Omni-7B/") == "qwen2.5-omni-7b"
    assert qo.backbone_name(
        "/root/.cache/huggingface/hub/models--Qwen--Qwen2.5-Omni-3B/snapshots/abc123") == "qwen2.5-omni-3b"
    assert qo.backbone_name("/models/Qwen2.5-Omni-7B-finetuned") == "qwen2.5-omni:Qwen2.5-Omni-7B-finetuned"
    assert qo.backbone_name("/tmp/tiny-omni") == "qwen2.5-omni:tiny-omni"


def test_agent_speech_from_segments_is_clipped_to_the_window():
    segs = [SpeechSegment("agent", 8.0, 12.0), SpeechSegment("agent", 13.0, 14.5),
            SpeechSegment("user", 10.0, 19.0)]
    w = noise_window(10.0, 1, start_s=10.0, segments=segs)  # window [10, 20)
    assert qo.agent_speech_s(w) == pytest.approx(2.0 + 1.5)


def test_agent_speech_energy_fallback_without_segments():
    n = 4 * SR
    agent = np.zeros(n, dtype=np.float32)
    agent[SR:3 * SR] = 0.1 * np.sin(2 * np.pi * 220 * np.arange(2 * SR) / SR)  # 2 s of tone
    w = WindowSnapshot(0.0, 4.0, np.zeros(n, dtype=np.float32), agent)
    assert qo.agent_speech_s(w) == pytest.approx(2.0, abs=0.06)  # within two 30 ms frames


# ----------------------------------------------------------------------------- loading


def test_loads_only_the_thinker_from_the_released_layout(backbone, tiny_dir):
    from transformers import Qwen2_5OmniThinkerForConditionalGeneration

    from livejudge.testing.qwen import build_tiny_tokenizer, tiny_thinker_config

    assert isinstance(backbone, Backbone)
    assert backbone.name == "qwen2.5-omni:tiny-omni"
    assert backbone.embedding_dim == TINY_HIDDEN_SIZE
    assert backbone.readouts == ("mean", "last")
    assert backbone.dtype == torch.float32 and backbone.attn == "sdpa"
    keys = list(backbone._model.state_dict())
    assert not any(k.startswith(("visual.", "talker", "token2wav")) for k in keys)
    assert any(k.startswith("audio_tower.") for k in keys) and any(k.startswith("language_model.") for k in keys)
    # The loaded weights are the checkpoint's (released "thinker." names mapped back), not a re-init.
    torch.manual_seed(0)
    ref = Qwen2_5OmniThinkerForConditionalGeneration(tiny_thinker_config(build_tiny_tokenizer())).model
    ref_sd = ref.state_dict()
    for k, v in backbone._model.state_dict().items():
        assert torch.equal(v, ref_sd[k]), k


# ----------------------------------------------------------------------------- processor input


def test_processor_input_for_a_10_s_window(backbone):
    inputs = backbone.prepare([noise_window(10.0, 2)])
    tok = backbone.tokenizer
    audio_id = tok.convert_tokens_to_ids("<|AUDIO|>")
    ids = inputs["input_ids"][0]
    assert inputs["input_features"].shape == (1, 128, 1000)
    assert inputs["input_features"].dtype == torch.float32
    assert int(inputs["feature_attention_mask"].sum()) == 1000
    assert inputs["n_audio_tokens"] == [250]
    assert int((ids == audio_id).sum()) == 250
    text = tok.decode(ids)
    assert text.startswith("<|im_start|>user\n<|audio_bos|><|AUDIO|>")
    assert text.endswith("<|audio_eos|>" + qo.UNDERSTANDING_PROMPT + "<|im_end|>\n<|im_start|>assistant\n")
    assert bool(inputs["attention_mask"].all())


def test_batch_is_left_padded_with_per_window_features(backbone):
    inputs = backbone.prepare([noise_window(10.0, 3), noise_window(4.0, 4)])
    assert inputs["n_audio_tokens"] == [250, 100]
    mask = inputs["attention_mask"]
    assert int(mask[0].sum()) - int(mask[1].sum()) == 150
    assert bool(mask[1, :150].eq(0).all()) and bool(mask[1, 150:].eq(1).all())  # left padding
    assert int(inputs["feature_attention_mask"][1].sum()) == 400
    assert bool(inputs["input_features"][1, :, 400:].eq(0).all())
    single = backbone.prepare([noise_window(4.0, 4)])
    assert torch.equal(single["input_features"][0], inputs["input_features"][1, :, :400])


def test_short_window_is_padded_to_the_minimum(backbone):
    inputs = backbone.prepare([noise_window(0.1, 5)])
    assert int(inputs["feature_attention_mask"].sum()) == int(qo.MIN_WINDOW_S * 100)


def test_window_longer_than_max_keeps_the_most_recent_audio(tiny_dir):
    bb = qo.QwenOmniBackbone(str(tiny_dir), device="cpu", max_window_s=2.0)
    with pytest.warns(UserWarning, match="most recent 2 s"):
        inputs = bb.prepare([noise_window(3.0, 6)])
    assert int(inputs["feature_attention_mask"].sum()) == 200


# ----------------------------------------------------------------------------- forward + readouts


def test_readout_shapes_and_evidence(backbone):
    embs = backbone.embed([noise_window(3.0, 7), noise_window(2.0, 8)])
    assert len(embs) == 2
    for e in embs:
        assert set(e.vectors) == {"mean", "last"}
        for v in e.vectors.values():
            assert v.shape == (TINY_HIDDEN_SIZE,) and v.dtype == np.float32 and np.isfinite(v).all()
        assert not np.allclose(e.vectors["mean"], e.vectors["last"])
        assert tuple(e.evidence) == DIMENSION_IDS
        assert {ev.unit for ev in e.evidence.values()} == {"s"}
    assert embs[0].evidence["rhythm"].amount == pytest.approx(3.0, abs=0.03)
    assert embs[1].features["audio_tokens"] == 50.0


def test_last_hidden_state_equals_thinker_hidden_states_last(backbone, tiny_dir):
    """The inner-model forward gives hidden_states[-1] of the full thinker forward."""
    from transformers import Qwen2_5OmniThinkerForConditionalGeneration

    thinker = Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(str(tiny_dir)).eval()
    inputs = backbone.prepare([noise_window(3.0, 9), noise_window(1.5, 10)])
    with torch.inference_mode():
        out = thinker(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"],
                      input_features=inputs["input_features"],
                      feature_attention_mask=inputs["feature_attention_mask"],
                      output_hidden_states=True, use_cache=False)
    hidden, _ = backbone.hidden_states(inputs)
    assert len(out.hidden_states) == 3  # embeddings + 2 layers
    torch.testing.assert_close(hidden, out.hidden_states[-1], rtol=1e-5, atol=1e-5)
    with torch.inference_mode():
        logits = thinker.lm_head(hidden)
    torch.testing.assert_close(logits, out.logits, rtol=1e-4, atol=1e-4)


def test_mean_is_the_masked_mean_and_last_is_the_last_real_token(backbone):
    windows = [noise_window(3.0, 11), noise_window(1.0, 12)]
    inputs = backbone.prepare(windows)
    hidden, mask = backbone.hidden_states(inputs)
    embs = backbone.embed(windows)
    for i, e in enumerate(embs):
        real = hidden[i][mask[i].bool()]
        np.testing.assert_allclose(e.vectors["mean"], real.mean(dim=0).numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(e.vectors["last"], real[-1].numpy(), rtol=1e-5, atol=1e-6)
    # The shorter window is left-padded: an unmasked mean would differ.
    assert not np.allclose(embs[1].vectors["mean"], hidden[1].mean(dim=0).numpy(), atol=1e-4)


def test_masked_readouts_pure():
    hidden = torch.arange(2 * 4 * 3, dtype=torch.float32).reshape(2, 4, 3)
    mask = torch.tensor([[0, 0, 1, 1], [1, 1, 1, 0]])
    torch.testing.assert_close(qo.masked_mean(hidden, mask)[0], hidden[0, 2:].mean(0))
    torch.testing.assert_close(qo.masked_mean(hidden, mask)[1], hidden[1, :3].mean(0))
    torch.testing.assert_close(qo.last_position(hidden, mask), torch.stack([hidden[0, 3], hidden[1, 2]]))
    poisoned = hidden.clone()
    poisoned[0, 0] = float("nan")  # a padded row
    torch.testing.assert_close(qo.masked_mean(poisoned, mask), qo.masked_mean(hidden, mask))


def test_batched_embeddings_equal_unbatched(backbone):
    windows = [noise_window(d, 20 + i) for i, d in enumerate((10.0, 4.0, 7.3))]
    batched = backbone.embed(windows)
    for w, b in zip(windows, batched):
        alone = backbone.embed([w])[0]
        for r in ("mean", "last"):
            np.testing.assert_allclose(b.vectors[r], alone.vectors[r], rtol=1e-4, atol=1e-5)
    # max_batch splits a batch into several forwards with the same result.
    backbone.max_batch, saved = 2, backbone.max_batch
    try:
        split = backbone.embed(windows)
    finally:
        backbone.max_batch = saved
    for s, b in zip(split, batched):
        np.testing.assert_allclose(s.vectors["mean"], b.vectors["mean"], rtol=1e-4, atol=1e-5)


def test_other_prompt_changes_the_name(tiny_dir):
    bb = qo.QwenOmniBackbone(str(tiny_dir), device="cpu", prompt="Is the second speaker a person?")
    assert bb.name.startswith("qwen2.5-omni:tiny-omni#prompt-") and len(bb.name) == len("qwen2.5-omni:tiny-omni#prompt-") + 8


# ----------------------------------------------------------------------------- head on top


def test_fused_head_through_judge(backbone, tmp_path):
    from livejudge.events import JudgeResult
    from livejudge.judge.model.head import load_head, new_config, save_head
    from livejudge.judge.model.judge import Judge
    from livejudge.judge.model.odl import JudgeHead

    torch.manual_seed(1)
    head = JudgeHead(TINY_HIDDEN_SIZE, readout="fused")
    cfg = new_config(backbone, name="tiny-qwen-test", provenance="trained", readout="fused",
                     notes="random weights, test only")
    save_head(tmp_path / "head", head, cfg)
    head2, cfg2 = load_head(tmp_path / "head", expected_backbone=backbone.name,
                            expected_dim=backbone.embedding_dim)
    judge = Judge(backbone, head2, cfg2)

    speaking = noise_window(5.0, 30, start_s=20.0, segments=[SpeechSegment("agent", 21.0, 24.0)])
    silent = noise_window(5.0, 31, start_s=25.0, segments=[SpeechSegment("user", 25.0, 29.0)])
    results = judge.judge([speaking, silent])
    assert len(results) == 2 and all(isinstance(r, JudgeResult) for r in results)
    r, s = results
    assert tuple(r.dimensions) == DIMENSION_IDS and len(r.dimensions) == 18
    assert 0.0 <= r.p_human <= 1.0 and (r.window_start_s, r.window_end_s) == (20.0, 25.0)
    assert not any(d.gated for d in r.dimensions.values())
    assert all(1.0 <= d.score <= 5.0 and d.evidence == pytest.approx(3.0) for d in r.dimensions.values())
    # No agent speech: below MIN_AGENT_SPEECH_S, every dimension gated to the neutral 3.
    assert all(d.gated and d.score == 3.0 and d.contribution == 0.0 for d in s.dimensions.values())

    # The same head applied by hand to the backbone's vectors gives the same P(human).
    emb = backbone.embed([speaking])[0]
    with torch.no_grad():
        out = head2({k: torch.from_numpy(v)[None] for k, v in emb.vectors.items()})
    assert r.p_human == pytest.approx(float(out.p_human[0]), abs=1e-5)


def test_load_judge_factory_builds_the_qwen_backbone(backbone, tiny_dir, tmp_path):
    from livejudge.judge.model.head import new_config, save_head
    from livejudge.judge.model.judge import load_judge
    from livejudge.judge.model.odl import JudgeHead

    save_head(tmp_path / "h", JudgeHead(TINY_HIDDEN_SIZE, readout="mean"),
              new_config(backbone, name="tiny-mean", readout="mean"))
    judge = load_judge("qwen-omni", head=tmp_path / "h", device="cpu", model=str(tiny_dir))
    assert judge.backbone.name == backbone.name
    (res,) = judge.judge([noise_window(2.0, 40)])
    assert len(res.dimensions) == 18


# ----------------------------------------------------------------------------- errors


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_requested_without_cuda(tiny_dir):
    with pytest.raises(RuntimeError, match=r"^--device cuda but no CUDA device: use --device cpu"):
        qo.QwenOmniBackbone(str(tiny_dir), device="cuda")


def test_missing_weights_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(FileNotFoundError, match="not found locally and the hub is offline: pass a local path with --qwen-model"):
        qo.resolve_model("Qwen/Qwen2.5-Omni-7B")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        qo.resolve_model(str(tmp_path / "nowhere" / "model"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no config.json"):
        qo.resolve_model(str(tmp_path / "empty"))


def test_transformers_missing_or_broken_by_torchvision(monkeypatch):
    # A transformers without the thinker class (as when a mismatched torchvision breaks its import).
    monkeypatch.setitem(sys.modules, "transformers", types.ModuleType("transformers"))
    installed: set[str] = set()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name in installed else None)

    installed.update({"transformers"})
    with pytest.raises(ImportError, match=r"no usable Qwen2.5-Omni thinker .*pip install 'livejudge\[gpu\]'"):
        qo._import_transformers()
    installed.update({"torchvision"})
    with pytest.raises(RuntimeError, match="torchvision does not match torch: pip uninstall torchvision"):
        qo._import_transformers()
    installed.clear()
    with pytest.raises(ImportError, match=r"needs transformers: pip install 'livejudge\[gpu\]'"):
        qo._import_transformers()


# ----------------------------------------------------------------------------- benchmark script


def test_gpu_benchmark_script_runs_in_tiny_cpu_mode(tmp_path, capsys):
    """Keeps benchmarks/judge_gpu.py runnable; times are printed, never asserted."""
    import importlib.util as iu
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "judge_gpu.py"
    spec = iu.spec_from_file_location("judge_gpu_bench", path)
    mod = iu.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "bench.json"
    rc = mod.main(["--tiny", "--device", "cpu", "--windows", "2,10", "--batches", "1,2",
                   "--iters", "1", "--warmup", "0", "--json", str(out)])
    assert rc == 0
    doc = json.loads(out.read_text())
    assert doc["meta"]["name"] == "tiny-random" and doc["env"]["device"] == "cpu"
    cells = {(r["window_s"], r["batch"]): r for r in doc["results"]}
    assert set(cells) == {(2.0, 1), (2.0, 2), (10.0, 1), (10.0, 2)}
    # 10 s → 250 audio tokens + the chat template and prompt; 2 s → 50 audio tokens.
    assert cells[(10.0, 1)]["seq_len"] - cells[(2.0, 1)]["seq_len"] == 200
    assert all(r["ms_per_window_p50"] > 0 and r["finite_embeddings"] for r in cells.values())
    assert "ms/win p50" in capsys.readouterr().out
