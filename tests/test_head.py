"""Head checkpoints: exact save → load round trip, and one clear message per mismatch."""

import json
from pathlib import Path

import pytest
import torch

from livejudge.judge.model.dimensions import DIMENSION_IDS
from livejudge.judge.model.head import (
    CONFIG_FILE, WEIGHTS_FILE, BackboneInfo, HeadConfig, HeadError, load_head, save_head,
)
from livejudge.judge.model.odl import JudgeHead


def make(tmp_path, readout="fused", dim=12):
    torch.manual_seed(3)
    head = JudgeHead(dim, readout=readout)
    with torch.no_grad():
        for p in head.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    src = head.readout.sources[0]
    head.readout.set_normalisation(src, torch.randn(dim), torch.rand(dim) + 0.5)
    head.set_z_normalisation(torch.randn(18), torch.rand(18) + 0.5)
    readouts = ("mean", "last") if readout in ("fused", "mean", "last") else ("features",)
    cfg = HeadConfig(name="t", version="1.2.3", provenance="trained",
                     backbone=BackboneInfo("fake-bb", dim, readouts), readout=readout,
                     evidence_min={"rhythm": 2.0}, training={"stage1": {"n": {"train": 5}}})
    path = save_head(tmp_path / "h", head, cfg)
    return head, cfg, path


@pytest.mark.parametrize("readout", ["fused", "mean", "last", "features"])
def test_round_trip_exact(tmp_path, readout):
    head, cfg, path = make(tmp_path, readout)
    loaded, cfg2 = load_head(path, expected_backbone="fake-bb", expected_dim=12)
    assert cfg2 == cfg
    head.eval()
    x = {"mean": torch.randn(4, 12), "last": torch.randn(4, 12), "features": torch.randn(4, 12)}
    a, b = head(x), loaded(x)
    for f in ("z", "probs", "logits", "p_human", "scores", "contributions"):
        assert torch.equal(getattr(a, f), getattr(b, f)), f
    doc = json.loads((path / CONFIG_FILE).read_text())
    assert doc["format_version"] == 1 and doc["dimensions"] == list(DIMENSION_IDS)
    assert len(doc["normalisation"]["z_mean"]) == 18


def test_backbone_mismatch_message(tmp_path):
    _, _, path = make(tmp_path)
    with pytest.raises(HeadError) as e:
        load_head(path, expected_backbone="acoustic-v1")
    assert str(e.value) == ("head was trained for backbone fake-bb, but the judge uses acoustic-v1: "
                            "pass --head for acoustic-v1 or --judge fake-bb")


def test_size_mismatch(tmp_path):
    _, _, path = make(tmp_path)
    with pytest.raises(HeadError, match="expects embedding size 12 but the backbone gives 3584"):
        load_head(path, expected_dim=3584)


def edit_config(path, **changes):
    doc = json.loads((path / CONFIG_FILE).read_text())
    doc.update(changes)
    (path / CONFIG_FILE).write_text(json.dumps(doc))


@pytest.mark.parametrize("change, message", [
    ({"dimensions": ["memory_consistency", "charm"] + list(DIMENSION_IDS[2:])}, "unknown dimension 'charm'"),
    ({"provenance": "guess"}, "provenance must be one of prior, trained"),
    ({"readout": "max"}, "unknown readout 'max'"),
    ({"format_version": 9}, "format_version 9 is not supported"),
    ({"evidence_min": {"accent": -1}}, "evidence_min\\['accent'\\] must be"),
    ({"feature_names": ["a", "b"]}, "2 feature_names for embedding_dim 12"),
    ({"backbone": {"name": "fake-bb", "embedding_dim": 10, "readouts": ["mean", "last"]}},
     "tensor odl.proj.weight has shape \\(18, 12\\), config implies \\(18, 10\\)"),
    ({"readout": "mean"}, "unexpected tensors \\['readout.fusion_logits'\\]"),
    ({"dimensions": list(DIMENSION_IDS[:17])}, "has shape"),
])
def test_config_problems(tmp_path, change, message):
    _, _, path = make(tmp_path)
    edit_config(path, **change)
    with pytest.raises(HeadError, match=message):
        load_head(path)


def test_missing_things(tmp_path):
    with pytest.raises(HeadError, match="head directory not found"):
        load_head(tmp_path / "nope")
    _, _, path = make(tmp_path)
    (path / WEIGHTS_FILE).unlink()
    with pytest.raises(HeadError, match="missing weights.safetensors"):
        load_head(path)
    _, _, path = make(tmp_path)
    (path / CONFIG_FILE).write_text("{not json")
    with pytest.raises(HeadError, match="not valid JSON \\(line 1"):
        load_head(path)
    doc = {"name": "x"}
    (path / CONFIG_FILE).write_text(json.dumps(doc))
    with pytest.raises(HeadError, match="lacks 'backbone'"):
        load_head(path)


def test_messages_are_one_line(tmp_path):
    _, _, path = make(tmp_path)
    edit_config(path, readout="max")
    with pytest.raises(HeadError) as e:
        load_head(path)
    assert "\n" not in str(e.value)


def test_a_shipped_head_by_name_from_any_directory(tmp_path, monkeypatch):
    """`--head livejudge/judge/heads/whisper-fitted` worked only inside a clone (a trial); a shipped
    head's bare name now finds it in the installed package, a path is still a path, and an unknown
    name lists the shipped ones."""
    from livejudge.judge.model.head import SHIPPED_HEADS_DIR, HeadError, shipped_head_path

    monkeypatch.chdir(tmp_path)
    assert shipped_head_path("whisper-fitted") == SHIPPED_HEADS_DIR / "whisper-fitted"
    (tmp_path / "whisper-fitted").mkdir()  # a folder of that name holding no head (an --out-dir) hides nothing
    assert shipped_head_path("whisper-fitted") == SHIPPED_HEADS_DIR / "whisper-fitted"
    (tmp_path / "whisper-fitted" / "config.json").write_text("{}")  # a head of that name here: used, and said
    assert shipped_head_path("whisper-fitted") == tmp_path / "whisper-fitted"
    (tmp_path / "whisper-fitted" / "config.json").unlink()
    assert shipped_head_path("nope") == Path("nope")
    from livejudge.judge.model.head import read_checkpoint

    with pytest.raises(HeadError, match="or the name of a head livejudge ships: acoustic-fitted, acoustic-prior, whisper-fitted"):
        read_checkpoint("nope")
    (tmp_path / "whisper-fitted").rmdir()
    cfg = read_checkpoint("whisper-fitted")[0]  # by name, from a directory outside the clone
    assert cfg.name == "whisper-fitted"
