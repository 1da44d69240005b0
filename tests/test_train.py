"""Two-stage training recovers a known ODL + classifier; manifests; the embedding cache.

The synthetic test raises the ODL learning rate to 1e-2 (the paper's 1e-5 suits 3584-d
Qwen hidden states and would need thousands of epochs on 32-d data) and uses 2000 calls.
"""

import json

import numpy as np
import pytest
import torch

from livejudge.judge.features.backbones.base import Embedding, Evidence
from livejudge.judge.training.evaluate import (
    binary_metrics, dimension_accuracy, evaluate_predictions, predict, rating_group, roc_auc,
)
from livejudge.judge.model.odl import JudgeHead
from livejudge.judge.training.train import (
    EmbeddingCache, ManifestError, TrainConfig, TrainError, cache_key, manifest_arrays, read_manifest,
    train_head,
)

D, K = 32, 18


def true_head() -> JudgeHead:
    """A known head: z = W x + b with x ~ N(0, I); scales 4–10; classifier weights N(0, 0.6²)."""
    g = torch.Generator().manual_seed(0)
    h = JudgeHead(D, readout="features", dropout=0.0)
    with torch.no_grad():
        h.odl.proj.weight.copy_(torch.randn(K, D, generator=g) * 2.0 / D ** 0.5)
        h.odl.proj.bias.copy_(torch.randn(K, generator=g) * 0.3)
        h.odl.log_scale.copy_(torch.log(4.0 + 6.0 * torch.rand(K, generator=g)))
        h.classifier.weight.copy_(torch.randn(2, K, generator=g) * 0.6)
        h.classifier.bias.zero_()
    # population mean/std of z for x ~ N(0, I)
    h.set_z_normalisation(h.odl.proj.bias.detach(), h.odl.proj.weight.detach().norm(dim=1))
    return h.eval()


def sample(head: JudgeHead, n: int, seed: int, missing: float = 0.2):
    """Embeddings, ratings drawn from the head's P(Y_k = i) (20 % missing), labels from P(human)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, D)).astype(np.float32)
    with torch.no_grad():
        out = head({"features": torch.from_numpy(x)})
    cum = out.probs.numpy().astype(np.float64).cumsum(-1)
    ratings = np.minimum((rng.random((n, K))[..., None] > cum).sum(-1) + 1, 5)
    ratings[rng.random(ratings.shape) < missing] = 0
    labels = (rng.random(n) < out.p_human.numpy()).astype(np.int64)
    return x, ratings, labels


@pytest.fixture(scope="module")
def synthetic():
    truth = true_head()
    x, r, y = sample(truth, 2000, seed=1)
    split = np.array(["train"] * 1200 + ["val"] * 400 + ["test"] * 400)
    res = train_head({"features": x}, r, y, split, config=TrainConfig(odl_lr=1e-2, progress=False, seed=0))
    return truth, x, r, y, split, res


def test_training_recovers_known_head(synthetic):
    truth, x, r, y, split, res = synthetic
    te = split == "test"
    emb = {"features": x[te]}
    d_true = evaluate_predictions(predict(truth, emb), r[te], y[te], None, truth.dimensions)
    d_fit = evaluate_predictions(predict(res.head, emb), r[te], y[te], None, truth.dimensions)
    # binary accuracy within 3 points of what the true parameters reach (both ≈ 0.87)
    assert d_fit["binary"]["accuracy"] >= d_true["binary"]["accuracy"] - 0.03
    assert d_fit["binary"]["roc_auc"] >= d_true["binary"]["roc_auc"] - 0.03
    # per-dimension tables agree with the true head's tables
    for m in ("exact", "grouped", "within_one"):
        a = np.array([d_true["dimensions"][k][m] for k in truth.dimensions])
        b = np.array([d_fit["dimensions"][k][m] for k in truth.dimensions])
        assert np.abs(a - b).mean() <= 0.04, m
        assert np.abs(a - b).max() <= 0.12, m
    # and an untrained head does not: the comparison can fail
    torch.manual_seed(5)
    raw = JudgeHead(D, readout="features")
    d_raw = evaluate_predictions(predict(raw, emb), r[te], y[te], None, truth.dimensions)
    a = np.array([d_true["dimensions"][k]["exact"] for k in truth.dimensions])
    c = np.array([d_raw["dimensions"][k]["exact"] for k in truth.dimensions])
    assert np.abs(a - c).mean() > 0.1
    print(f"\nsynthetic recovery (N=2000: 1200 train / 400 val / 400 test, d={D}, K={K}, odl_lr=1e-2): "
          f"accuracy true {d_true['binary']['accuracy']:.4f} trained {d_fit['binary']['accuracy']:.4f}; "
          f"ROC-AUC true {d_true['binary']['roc_auc']:.4f} trained {d_fit['binary']['roc_auc']:.4f}")
    for m in ("exact", "grouped", "within_one"):
        a = np.array([d_true["dimensions"][k][m] for k in truth.dimensions])
        b = np.array([d_fit["dimensions"][k][m] for k in truth.dimensions])
        print(f"  {m:10s}: true mean {a.mean():.3f}, trained mean {b.mean():.3f}, "
              f"mean |diff| {np.abs(a - b).mean():.3f}, max |diff| {np.abs(a - b).max():.3f}")
    # the learned scales follow the true ones
    assert np.corrcoef(truth.odl.scale.detach(), res.head.odl.scale.detach())[0, 1] > 0.9


def test_summary_says_what_was_fitted(synthetic):
    *_, res = synthetic
    s = res.summary
    assert s["n"] == {"train": 1200, "val": 400, "test": 400}
    assert s["stage1"]["status"] == "fitted" and "1200 rated training calls" in s["stage1"]["fitted_on"]
    assert "from random initialisation" in s["stage1"]["fitted_on"]
    assert "400 rated validation calls" in s["stage1"]["fitted_on"]
    assert s["stage2"]["status"] == "fitted" and "labels of 1200 training calls" in s["stage2"]["fitted_on"]
    assert s["hyperparameters"]["linear_batch_size"] == 128 and s["hyperparameters"]["odl_lr"] == 1e-2
    json.dumps(s)  # JSON-ready
    # early stopping picked the best validation epoch
    h = res.history["stage1"]
    best = min(v for _, _, v in h)
    assert s["stage1"]["best_loss"] == pytest.approx(best, abs=1e-6)


def test_labels_only_keeps_init_odl(synthetic):
    truth, x, r, y, split, res = synthetic
    out = train_head({"features": x}, None, y, split, init_head=res.head,
                     config=TrainConfig(progress=False, seed=1))
    assert out.summary["stage1"]["status"] == "kept"
    assert "kept from the initial head" in out.summary["stage1"]["fitted_on"]
    assert torch.equal(out.head.odl.proj.weight, res.head.odl.proj.weight)
    assert out.summary["stage2"]["status"] == "fitted"
    with pytest.raises(TrainError, match="pass --init-head DIR"):
        train_head({"features": x}, None, y, split, config=TrainConfig(progress=False))


def test_ratings_only_keeps_init_classifier_and_its_standardisation(synthetic):
    truth, x, r, y, split, res = synthetic
    out = train_head({"features": x}, r, None, split, init_head=res.head,
                     config=TrainConfig(odl_lr=1e-2, odl_epochs=3, progress=False))
    assert out.summary["stage1"]["status"] == "fitted"
    assert "started from the initial head" in out.summary["stage1"]["fitted_on"]
    assert out.summary["stage2"]["status"] == "kept"
    assert torch.equal(out.head.classifier.weight, res.head.classifier.weight)
    assert torch.equal(out.head.z_mean, res.head.z_mean) and torch.equal(out.head.z_std, res.head.z_std)


def test_train_input_errors():
    x = np.zeros((10, 4), np.float32)
    with pytest.raises(TrainError, match="ratings have shape"):
        train_head({"features": x}, np.zeros((10, 3), int), None, config=TrainConfig(progress=False))
    with pytest.raises(TrainError, match="readout 'fused' needs embeddings"):
        train_head({"mean": x}, None, None, readout="fused", config=TrainConfig(progress=False))
    with pytest.raises(TrainError, match="unknown split values"):
        train_head({"features": x}, None, None, ["x"] * 10, config=TrainConfig(progress=False))


def test_evaluation_metrics_by_hand():
    assert rating_group(np.array([1, 2, 3, 4, 5])).tolist() == [0, 0, 1, 2, 2]
    pred = np.array([[1, 3], [4, 5], [3, 3]])
    ref = np.array([[2, 0], [5, 5], [5, 0]])
    t = dimension_accuracy(pred, ref, ["a", "b"])
    assert t["a"] == {"exact": 0.0, "grouped": 2 / 3, "within_one": 2 / 3, "n": 3}
    assert t["b"] == {"exact": 1.0, "grouped": 1.0, "within_one": 1.0, "n": 1}
    # ROC-AUC with ties, against scipy's Mann–Whitney U
    from scipy.stats import mannwhitneyu
    rng = np.random.default_rng(0)
    s, lab = rng.integers(0, 4, 60).astype(float), rng.integers(0, 2, 60)
    u = mannwhitneyu(s[lab == 1], s[lab == 0]).statistic
    assert roc_auc(s, lab) == pytest.approx(u / ((lab == 1).sum() * (lab == 0).sum()))
    assert roc_auc([0.1, 0.9], [0, 1]) == 1.0 and roc_auc([0.5, 0.5], [0, 1]) == 0.5
    assert roc_auc([0.1, 0.2], [1, 1]) is None
    b = binary_metrics([0.9, 0.2, 0.6, 0.4, 0.7], [1, 0, 0, 1, -1], ["hh", "hm", "hm", "hh", "hh"])
    assert b["n"] == 4 and b["accuracy"] == 0.5
    assert b["by_kind"] == {"hh": {"accuracy": 0.5, "n": 2}, "hm": {"accuracy": 0.5, "n": 2}}
    assert b["roc_auc"] == 0.75


def write(p, lines):
    p.write_text("\n".join(json.dumps(x) if not isinstance(x, str) else x for x in lines) + "\n")
    return p


def test_manifest_parsing(tmp_path):
    (tmp_path / "a.wav").write_bytes(b"x")
    (tmp_path / "u.wav").write_bytes(b"y")
    m = write(tmp_path / "m.jsonl", [
        {"audio": "a.wav", "ratings": {"rhythm": 2}, "label": "machine", "split": "val", "kind": "hm"},
        "# comment",
        "",
        {"user": "u.wav", "agent": "a.wav", "label": "human"},
    ])
    es = read_manifest(m)
    assert [e.line for e in es] == [1, 4] and es[0].audio == tmp_path / "a.wav"
    R, y, s, k = manifest_arrays(es)
    assert R[0, 7] == 2 and R.sum() == 2 and y.tolist() == [0, 1] and s.tolist() == ["val", "train"]
    assert k.tolist() == ["hm", ""]


@pytest.mark.parametrize("line, message", [
    ("{oops", "line 2: not valid JSON"),
    ({"audio": "missing.wav"}, "line 2: 'audio' file not found"),
    ({"audio": "a.wav", "ratings": {"rhythm": 7}}, "line 2: ratings\\['rhythm'\\] = 7 is not an integer 1–5"),
    ({"audio": "a.wav", "ratings": {"charm": 3}}, "line 2: unknown dimension 'charm'"),
    ({"audio": "a.wav", "label": "robot"}, "line 2: 'label' must be \"human\" or \"machine\""),
    ({"audio": "a.wav", "split": "dev"}, "line 2: 'split' must be train, val or test"),
    ({"user": "a.wav"}, "line 2: needs 'audio'"),
    ({"audio": "a.wav", "agent": "a.wav"}, "line 2: give either 'audio' or 'user' \\+ 'agent'"),
    ({"audio": "a.wav", "user_channel": 1}, "line 2: 'user_channel' and 'agent_channel' must differ"),
    ({"audio": "a.wav", "speaker": "x"}, "line 2: unknown keys \\['speaker'\\]"),
])
def test_manifest_errors(tmp_path, line, message):
    (tmp_path / "a.wav").write_bytes(b"x")
    m = write(tmp_path / "m.jsonl", [{"audio": "a.wav"}, line])
    with pytest.raises(ManifestError, match=message):
        read_manifest(m)


def test_cache_keys_and_round_trip(tmp_path):
    (tmp_path / "a.wav").write_bytes(b"abc")
    (tmp_path / "b.wav").write_bytes(b"abc")
    (tmp_path / "c.wav").write_bytes(b"abd")
    m = write(tmp_path / "m.jsonl", [{"audio": "a.wav"}, {"audio": "b.wav"}, {"audio": "c.wav"}])
    a, b, c = read_manifest(m)
    assert cache_key(a, "bb") == cache_key(b, "bb")          # same content, other name
    assert cache_key(a, "bb") != cache_key(c, "bb")          # other content
    assert cache_key(a, "bb") != cache_key(a, "other-bb")    # other backbone
    cache = EmbeddingCache(tmp_path / "cache")
    emb = Embedding({"mean": np.arange(3, dtype=np.float32)}, {"rhythm": Evidence(2.5, "s", "")}, {"f0": 1.0})
    assert cache.get("bb", "k") is None
    cache.put("bb/v1", "k", emb)
    got = cache.get("bb/v1", "k")
    assert np.array_equal(got.vectors["mean"], emb.vectors["mean"])
    assert got.evidence == emb.evidence and got.features == {"f0": 1.0}


def test_embed_entries_uses_the_cache(tmp_path):
    from pathlib import Path

    from livejudge.judge.training.train import embed_entries

    audio = Path(__file__).resolve().parents[1] / "livejudge" / "data" / "audio"
    m = write(tmp_path / "m.jsonl", [{"audio": str(audio / "human" / "cmu_cards_001.wav")},
                                     {"audio": str(audio / "machine" / "espeak_reply_01.wav")},
                                     {"user": str(audio / "human" / "cmu_numbers.wav"),
                                      "agent": str(audio / "machine" / "espeak_reply_02.wav")}])
    entries = read_manifest(m)

    class Counting:
        name, embedding_dim, readouts = "count-bb", 2, ("features",)
        seen: list = []

        def embed(self, windows):
            self.seen.extend(windows)
            return [Embedding({"features": np.array([w.duration_s, float(np.abs(w.agent).sum())], np.float32)})
                    for w in windows]

    bb = Counting()
    cache = EmbeddingCache(tmp_path / "c")
    first = embed_entries(entries, bb, cache, progress=False, batch_size=2)
    assert len(bb.seen) == 3
    # a mono file is the agent side with a silent user channel
    assert float(np.abs(bb.seen[0].user).sum()) == 0.0 and float(np.abs(bb.seen[0].agent).sum()) > 0
    assert float(np.abs(bb.seen[2].user).sum()) > 0  # the pair keeps both roles
    again = embed_entries(entries, bb, cache, progress=False)
    assert len(bb.seen) == 3  # nothing recomputed
    for a, b in zip(first, again):
        assert np.array_equal(a.vectors["features"], b.vectors["features"])


def test_embed_entries_with_a_transcriber_caches_apart_and_passes_transcripts(tmp_path):
    from pathlib import Path

    from livejudge.events import TurnTranscript
    from livejudge.judge.training.train import embed_entries

    audio = Path(__file__).resolve().parents[1] / "livejudge" / "data" / "audio"
    m = write(tmp_path / "m.jsonl", [{"user": str(audio / "human" / "cmu_numbers.wav"),
                                      "agent": str(audio / "machine" / "espeak_reply_02.wav")}])
    entries = read_manifest(m)

    class FakeASR:
        calls = 0

        def transcribe(self, turn, audio):
            FakeASR.calls += 1
            return TurnTranscript(turn.channel, turn.onset_s, turn.offset_s, "sure thing", 2)

    class Counting:
        name, embedding_dim, readouts = "count-bb", 1, ("features",)
        seen: list = []

        def embed(self, windows):
            self.seen.extend(windows)
            return [Embedding({"features": np.array([len(w.transcripts)], np.float32)}) for w in windows]

    bb, cache = Counting(), EmbeddingCache(tmp_path / "c")
    plain = embed_entries(entries, bb, cache, progress=False)
    with_asr = embed_entries(entries, bb, cache, progress=False, transcriber=FakeASR())
    assert len(bb.seen) == 2  # the transcribed embedding is not read from the plain cache entry
    assert plain[0].vectors["features"][0] == 0.0
    n_agent_turns = len(bb.seen[1].turns_of("agent"))
    assert n_agent_turns >= 1 and FakeASR.calls == n_agent_turns
    assert with_asr[0].vectors["features"][0] == n_agent_turns
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == ["count-bb", "count-bb_asr"]
