"""benchmarks/judge_lofo.py ``is_narrowband``: the diagnostic that reads the head comparison
without people whose source is 8 kHz (a bandwidth cue when nearly every machine clip is wideband)
must tell an 8 kHz-sampled recording from a wideband one, on real speech and on noise."""

import importlib.util
import sys
from pathlib import Path

import numpy as np

from livejudge.audio import resample
from livejudge.testing.dialogues import load_clip

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
try:
    _spec = importlib.util.spec_from_file_location("judge_lofo", ROOT / "benchmarks" / "judge_lofo.py")
    jl = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(jl)
finally:
    sys.path.remove(str(ROOT / "benchmarks"))


def _via_8k(x16: np.ndarray) -> np.ndarray:
    """16 kHz -> 8 kHz -> 16 kHz: what an 8 kHz source looks like after the pipeline's resampling."""
    return resample(resample(x16, 16000, 8000), 8000, 16000)


def test_real_speech_is_wideband_until_it_passes_through_8_khz():
    x = load_clip("librivox_austen_0870")
    assert not jl.is_narrowband(x)
    assert jl.is_narrowband(_via_8k(x))


def test_noise_and_a_noise_floor_do_not_fool_it():
    rng = np.random.default_rng(0)
    noise = rng.standard_normal(16000).astype(np.float32) * 0.01
    assert not jl.is_narrowband(noise)
    assert jl.is_narrowband(_via_8k(noise))
    # an 8 kHz talker (about -24 dBFS) with a faint wideband hiss added after the line (-80 dBFS) stays
    # narrowband; with a hiss at -40 dBFS the band above 4.5 kHz is no longer empty: wideband
    x = _via_8k(load_clip("librivox_austen_0870"))[:16000]
    assert jl.is_narrowband(x + noise * 0.01)
    assert not jl.is_narrowband(x + noise)
    assert not jl.is_narrowband(np.zeros(100))  # too short to say


def test_a_voice_is_judged_on_the_clips_dialogues_use(tmp_path):
    """narrowband_voices counts only clips of MIN_CLIP_S or longer, as build_calls uses: two short
    8 kHz clips do not outvote one usable wideband clip."""
    import soundfile as sf

    x = load_clip("librivox_austen_0870")
    rows = []
    for i, (y, dur) in enumerate([(x, 3.0), (_via_8k(x), 0.5), (_via_8k(x), 0.5)]):
        f = tmp_path / f"c{i}.wav"
        sf.write(f, y, 16000)
        rows.append({"label": "human", "speaker": "v", "abspath": str(f), "duration_s": dur})
    assert jl.narrowband_voices(rows) == set()
    rows[0]["duration_s"] = 0.5  # now no usable clip at all: no vote, not narrowband
    assert jl.narrowband_voices(rows) == set()
    for r in rows[1:]:
        r["duration_s"] = 2.0
    assert jl.narrowband_voices(rows) == {"v"}
