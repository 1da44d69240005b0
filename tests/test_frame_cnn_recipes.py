"""livejudge.judge.training.frame_cnn's v17/v18 recipes (benchmarks/experiments/refit_v6/README.md,
"v17 and v18"): ``centre_dialogue`` takes a dialogue's mean frame off, ``mask_crop`` masks a crop as
its docstring says, and both leave the default training path as it was."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from livejudge.judge.training import frame_cnn as F  # noqa: E402


def test_centre_dialogue_removes_the_constant_and_keeps_the_variation():
    rng = np.random.default_rng(0)
    wiggle = rng.standard_normal((80, 384)).astype(np.float32)
    wiggle -= wiggle.mean(0)
    offset = rng.uniform(-4, 4, 384).astype(np.float32)  # a channel's or voice's constant
    out = F.centre_dialogue((wiggle + offset).astype(np.float16))
    assert out.dtype == np.float16 and out.shape == (80, 384)
    # float16 rounding of values up to ~8: within 0.01
    np.testing.assert_allclose(out.astype(np.float32), wiggle, atol=0.01)
    assert np.abs(out.astype(np.float32).mean(0)).max() < 0.01
    empty = np.zeros((0, 384), np.float16)
    assert F.centre_dialogue(empty) is empty


def test_mask_crop_masks_at_most_two_spans_and_about_a_tenth_of_components():
    rng = np.random.default_rng(3)
    dropped, spans = [], []
    for _ in range(200):
        x = F.mask_crop(np.ones((384, F.CROP), np.float32), rng)
        whole_rows = (x == 0).all(1)
        dropped.append(whole_rows.mean())
        cols = (x[~whole_rows] == 0).all(0)  # time-masked frames, read on the kept components
        spans.append(int(cols.sum()))
        assert set(np.unique(x)) <= {0.0, 1.0}
    assert 0.08 < np.mean(dropped) < 0.12  # COMPONENT_DROP 0.1, 200 crops x 384 components
    assert max(spans) <= F.TIME_MASKS * F.TIME_MASK_MAX
    assert np.mean(spans) == pytest.approx(F.TIME_MASKS * F.TIME_MASK_MAX / 2, abs=3)  # two U{0..15} spans, overlaps rare


def test_training_without_mask_is_unchanged_and_mask_changes_the_fit():
    rng = np.random.default_rng(1)
    y = np.array([0, 1] * 8)
    FR = [(rng.standard_normal((60, 384)) + 0.5 * y[i]).astype(np.float16) for i in range(16)]
    fit = np.arange(16)
    a = F.scores(*F.train(FR, y, fit, 0, 3, 2), FR[:4])
    b = F.scores(*F.train(FR, y, fit, 0, 3, 2, mask=False), FR[:4])
    c = F.scores(*F.train(FR, y, fit, 0, 3, 2, mask=True), FR[:4])
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_network_width_follows_the_frames_and_tiny_stays_384():
    """v20 (refit_v6/README.md): Whisper base's 512-wide frames train a network whose first layer
    is 512 wide; tiny.en's 384-wide frames still build the shipped shape, and a dialogue with no
    kept frame scores as the neutral zero input of its own width."""
    rng = np.random.default_rng(2)
    y = np.array([0, 1] * 6)
    for d in (384, 512):
        FR = [(rng.standard_normal((60, d)) + 0.5 * y[i]).astype(np.float16) for i in range(12)]
        net, mu, sd = F.train(FR, y, np.arange(12), 0, 3, 1)
        assert net.f[0][0].in_channels == d and mu.shape == (d,)
        s = F.scores(net, mu, sd, FR[:2] + [np.zeros((0, d), np.float16)])
        assert s.shape == (3,) and np.isfinite(s).all()
    assert F.make_net(3).f[0][0].in_channels == 384
