"""Issue 20 (5d): speakerphone echo in recordings, without the canceller's reference.

Built calls (``example_dialogue``, real clips, known timeline) whose user channel holds the
agent's voice through a small loudspeaker and a room (``DialogueBuilder(echo_speakerphone=True)``:
300–3800 Hz, soft clipping, RT60 0.3 s), at −12, −18 dB (50 ms) and −24 dB (150 ms); written as a stereo
WAV with the user on channel 0 or 1 and read back the way ``score`` reads it (``open_call`` +
``gate_source``; the agent channel is the reference). Before the fix (40 ms of echo-path taps)
the room's reverb after each agent phrase was not gated: phantom user segments, false
backchannels. Asserted: no user segment outside the placed user speech; backchannels, barge-ins
and transitions as found on the same call without echo (counts equal, onsets within 30 ms).
"""

import numpy as np
import pytest
import soundfile as sf

from livejudge.audio import open_call
from livejudge.session import snapshot_of_call
from livejudge.testing.dialogues import example_dialogue
from livejudge.timing.echo import gate_source

TOL_S = 0.03


def _score(call, tmp_path, user_first: bool):
    path = tmp_path / f"call_{int(user_first)}.wav"
    cols = (call.user, call.agent) if user_first else (call.agent, call.user)
    sf.write(path, np.stack(cols, axis=1), 16000, subtype="PCM_16")
    reader = open_call(path, user_channel=0 if user_first else 1, agent_channel=1 if user_first else 0)
    try:
        gated, info = gate_source(reader, "auto", log=False)
        call2 = gated if hasattr(gated, "user") and not hasattr(gated, "blocks") else gated.read_all()
        return snapshot_of_call(call2), info
    finally:
        reader.close()


@pytest.fixture(scope="module")
def references():
    return {seed: snapshot_of_call(example_dialogue(seed=seed, noise_dbfs=-55.0).call) for seed in (1, 2)}


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("gain_db,delay_s", [(-12.0, 0.05), (-18.0, 0.05), (-24.0, 0.15)])
@pytest.mark.parametrize("user_first", [True, False])
def test_speakerphone_echo_leaves_no_phantom_user_speech(references, tmp_path, seed, gain_db, delay_s, user_first):
    # before (40 ms of taps): seeds 1 and 2 at −12/−18 dB gave 1–13 phantom user segments
    # and up to 9 false backchannels
    reference = references[seed]
    d = example_dialogue(seed=seed, noise_dbfs=-55.0, echo_gain_db=gain_db, echo_delay_s=delay_s,
                         echo_speakerphone=True)
    snap, info = _score(d.call, tmp_path, user_first)
    assert info["applied"], info
    user_truth = [p for p in d.truth.placed if p.channel == "user"]
    phantom = [s for s in snap.segments if s.channel == "user"
               and not any(p.onset_s < s.offset_s and p.offset_s > s.onset_s for p in user_truth)]
    assert phantom == []
    for key in ("backchannels", "barge_ins", "transitions"):
        got, want = getattr(snap, key), getattr(reference, key)
        assert len(got) == len(want), (key, got, want)
    for g, w in zip(snap.backchannels, reference.backchannels):
        assert g.channel == w.channel and abs(g.onset_s - w.onset_s) <= TOL_S
    for g, w in zip(snap.barge_ins, reference.barge_ins):
        assert g.by == w.by and abs(g.onset_s - w.onset_s) <= TOL_S
    for g, w in zip(snap.transitions, reference.transitions):
        assert (g.from_channel, g.to_channel) == (w.from_channel, w.to_channel)
        assert abs(g.to_onset_s - w.to_onset_s) <= TOL_S and abs(g.gap_s - w.gap_s) <= TOL_S
