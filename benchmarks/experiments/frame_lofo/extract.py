"""Build the v4 open dialogues (judge_lofo.build_calls, same arguments) and keep the Whisper tiny.en
encoder frames of the agent's speech (issue 19: frame-level features for a temporal model).

Each dialogue is reduced right after it is built (identical audio to judge_lofo's) and its audio
dropped. Per true agent turn (truth.placed, channel 'agent', kind 'turn'): the agent channel from
onset to offset is encoded at its own length (as the live backbone does: 20 ms frames, d = 384), by
``layers.Encoder`` (the shipped CTranslate2 weights run in torch float32, every stage kept; its last
stage equals CTranslate2's float32 output to 6e-4 of a range of 10, ``layers.check``; the live backbone runs CTranslate2 int8); frames whose 20 ms energy is within 35 dB of the turn's loudest frame are
kept (speech; pauses and the noise floor dropped). The live backbone selects voiced frames with the
VAD instead; the energy rule here is the LFCC experiment's (``lfcc_lofo/extract.py``).

Output: $FRAME_OUT/whisper_frames.npz with
  frames  object array, per dialogue float16 (T_i, 384): kept frames of all agent turns, in order,
          of the LAST stage (what the live backbone reads)
  turn    object array, per dialogue int16 (T_i,): the turn index of each frame
  moments (n, 6, 1536) float32: per stage (layers.Encoder.encode_layers: 0 = conv+positions,
          1-4 = after each block, 5 = final layer norm), per turn the four moments
          (``whisper.pool_frames``) pooled over turns by voiced time (``whisper.pool_turns``);
          stage 5 is the shipped readout of the same frames
  key, wall_s, audio_s, encode_s
and $FRAME_OUT/whisper_frames_l{1,2}.npz: ``frames`` of stages 1 and 2 (for a network on an earlier layer).

v20 (``../refit_v6/README.md``, "v20"): ``FRAME_MODEL_BIN`` names another CTranslate2 Whisper
``model.bin`` (Whisper base: d = 512, 6 blocks) and ``FRAME_BLOCKS`` runs only its first blocks
(stages 0..FRAME_BLOCKS, no final layer norm); ``frames`` then holds the last stage run and
``moments`` one row per stage run, and ``FRAME_KEEP`` (comma-separated) names the stages stored
as whisper_frames_l{s}.npz. Unset, every output is as above (tiny.en, all stages, KEEP 1,2).
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fl  # noqa: E402
import layers  # noqa: E402
from livejudge.judge.features.backbones.whisper import FRAME_S, MAX_CHUNK_S, pool_frames, pool_turns  # noqa: E402
from livejudge.judge.features.log_mel import log_mel  # noqa: E402

SR = 16000
HOP = int(FRAME_S * SR)
ENC = layers.Encoder(os.environ.get("FRAME_MODEL_BIN") or None)
BLOCKS = int(os.environ["FRAME_BLOCKS"]) if os.environ.get("FRAME_BLOCKS") else None
KEEP = tuple(int(s) for s in os.environ.get("FRAME_KEEP", "1,2").split(","))  # earlier stages stored too
N_STAGES = (ENC.n_layers + 2) if BLOCKS is None else BLOCKS + 1
D = ENC.w["conv1/weight"].shape[0]


def encode(x):
    """[stage] float32 (n_frames, D) of one turn (30 s pieces, as WhisperEncoder.encode)."""
    chunk = int(MAX_CHUNK_S * SR)
    parts = []
    for a in range(0, len(x), chunk):
        piece = x[a:a + chunk]
        if len(piece) < 640:
            piece = np.pad(piece, (0, 640 - len(piece)))
        m = log_mel(piece)
        parts.append(ENC.encode_layers(m[:, :m.shape[1] - m.shape[1] % 2], blocks=BLOCKS))
    return [np.concatenate([p[s] for p in parts]) for s in range(len(parts[0]))]
T = [0.0, 0.0]  # agent turn audio seconds, encoder seconds


def features(d):
    a = d.call.agent.astype(np.float32)
    frames, turns, reads = [], [], []
    early = {s: [] for s in KEEP}
    for k, p in enumerate(q for q in d.truth.placed if q.channel == "agent" and q.kind == "turn"):
        x = a[int(p.onset_s * SR):int(p.offset_s * SR)]
        if len(x) < 640:
            continue
        t0 = time.perf_counter()
        st = encode(x)
        T[1] += time.perf_counter() - t0
        T[0] += len(x) / SR
        n = min(len(st[-1]), len(x) // HOP)
        e = 10 * np.log10(np.mean(x[:n * HOP].astype(np.float64).reshape(n, HOP) ** 2, axis=1) + 1e-12)
        sel = e > e.max() - 35.0
        reads.append([pool_frames(f[:n], sel) for f in st])
        frames.append(st[-1][:n][sel].astype(np.float16))
        for s in KEEP:
            early[s].append(st[s][:n][sel].astype(np.float16))
        turns.append(np.full(int(sel.sum()), k, np.int16))
    mom = (np.stack([pool_turns([r[s] for r in reads])[0] for s in range(N_STAGES)]) if reads
           else np.zeros((N_STAGES, 4 * D), np.float32))

    def cat(fs):
        return np.concatenate(fs) if fs else np.zeros((0, D), np.float16)
    return dict(frames=cat(frames), turn=np.concatenate(turns) if turns else np.zeros(0, np.int16), moments=mom,
                **{f"l{s}": cat(early[s]) for s in KEEP})


REC, calls, meta, sealed, aug, key, wall = fl.common.extract_each(
    features, setup_fn=fl.setup, progress=lambda: f"{T[0]:.0f} s agent speech, encoder {T[1]:.0f} s")
fr = np.empty(len(REC), object)
fr[:] = [r["frames"] for r in REC]
tu = np.empty(len(REC), object)
tu[:] = [r["turn"] for r in REC]
for s in KEEP:
    e = np.empty(len(REC), object)
    e[:] = [r[f"l{s}"] for r in REC]
    np.savez(fl.OUT / f"whisper_frames_l{s}.npz", frames=e, key=key)
np.savez(fl.FEATS, frames=fr, turn=tu, moments=np.stack([r["moments"] for r in REC]), key=key,
         wall_s=wall, audio_s=T[0], encode_s=T[1])
print(f"done: {len(REC)} dialogues, key {key}, wall {wall:.0f} s, agent speech {T[0]:.0f} s, encoder {T[1]:.0f} s, "
      f"frames kept {sum(len(r['frames']) for r in REC)}")
