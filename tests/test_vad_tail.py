"""Issue 20 (5a): a quiet voiced tail after the last stressed syllable stays in the segment.

The tail is built from each clip's own last pitch period (``with_voiced_tail``): −27 → −42 dBFS
over 200 ms after a −12 dBFS peak (the tail is speech: within 30 dB of the peak). Before the
fix, after a long stretch of speech (too few quiet sub-frames left in the VAD's 6 s store) the
refinement's noise threshold was read off speech, and on a room line the tail was cut 100–150 ms
early (−150 ms at −45 dBFS). Tolerance: |offset error| ≤ 40 ms (one 30 ms VAD frame + 10 ms).
Room tails and a final fricative's reverb must still be cut: see tests/test_realistic.py and
benchmarks/vad_bounds.py for those.
"""

import pytest

from livejudge.testing.dialogues import DialogueBuilder, speech_bounds, with_voiced_tail
from livejudge.timing.vad import detect_segments

TOL_S = 0.040


@pytest.mark.parametrize("clip", ["espeak_reply_01", "espeak_reply_04"])
@pytest.mark.parametrize("noise_dbfs", [-60.0, -50.0, -40.0])
@pytest.mark.parametrize("rt60_s", [None, 0.3])
def test_quiet_voiced_tail_is_kept(clip, noise_dbfs, rt60_s):
    y = with_voiced_tail(clip)
    b = DialogueBuilder(noise_dbfs=noise_dbfs, seed=1, room_rt60_s=rt60_s)
    placed = b.user(y)
    d = b.build()
    # the truth holds the tail (within 30 dB of the peak) to its last 30 ms
    assert speech_bounds(y)[1] >= len(y) - 1600 - 480
    segs = detect_segments(d.call.user, "user")
    assert segs, "no speech found"
    assert abs(segs[-1].offset_s - placed.offset_s) <= TOL_S, (segs[-1].offset_s, placed.offset_s)
    assert abs(segs[0].onset_s - placed.onset_s) <= TOL_S
