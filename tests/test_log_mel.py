"""The NumPy log-Mel front end equals faster-whisper's FeatureExtractor (the encoder was trained on it)."""

import numpy as np
import pytest

from livejudge.judge.features.log_mel import log_mel, mel_filters


def test_mel_filters_shape_and_normalisation():
    m = mel_filters()
    assert m.shape == (80, 201) and m.dtype == np.float32
    assert (m >= 0).all() and (m.sum(axis=1) > 0).all()  # every band has a triangle
    with pytest.raises(ValueError):
        m[0, 0] = 1.0  # read-only: cached and shared


@pytest.mark.parametrize("n", [641, 16000, 16000 * 7 + 123])
def test_equals_faster_whisper(n):
    fw = pytest.importorskip("faster_whisper.feature_extractor")
    import soundfile as sf

    from livejudge.testing.dialogues import clips_dir

    x, sr = sf.read(clips_dir() / "human" / "cmu_cards_001.wav", dtype="float32")
    assert sr == 16000
    x = np.resize(x, n).astype(np.float32)
    want = fw.FeatureExtractor(feature_size=80)(x)
    got = log_mel(x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=2e-5)


def test_rejects_stereo_and_tiny():
    with pytest.raises(ValueError, match="1-D"):
        log_mel(np.zeros((2, 1000), np.float32))
    with pytest.raises(ValueError, match="longer"):
        log_mel(np.zeros(10, np.float32), padding=0)
