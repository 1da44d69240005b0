"""Build the v3 open dialogues (judge_lofo.build_calls, same args) and extract AGENT-channel features.

The builder's ``build`` is wrapped so that each dialogue, right after it is built (identical audio),
is reduced to its features and its audio dropped (memory). Frames used: those inside the true agent
turn spans (truth.placed, channel 'agent', kind 'turn') whose energy is within 35 dB of the loudest
frame of those spans (speech frames; drops pauses inside a trimmed clip).

Output: $LFCC_OUT/feats.npz with
  lfcc_stats (n, 120): mean+std over speech frames of LFCC-60
  lfb_stats  (n, 120): mean+std over speech frames of 60 linear-band log energies (0-8 kHz) [variant]
  frames: object array of (T_i, 20) float16 static LFCC of speech frames (for the CNN)
  timing: seconds of agent-channel audio and seconds spent in the front end
"""
import os, sys, time
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder (common.py, lfcc.py)
import common  # noqa: E402  (puts the repo root on sys.path)
import lfcc as L

FB60 = L.linear_fbank(60)
T_FE = [0.0, 0.0, 0.0]  # audio seconds, lfcc seconds (power spectrum + lfcc), all-features seconds


def features(d):
    a = d.call.agent.astype(np.float64)
    t0 = time.perf_counter()
    S = L.power_spectrum(a)
    C = L.lfcc(a, S=S)
    t1 = time.perf_counter()
    e = L.frame_energy_db(a)
    t = np.arange(len(C)) * L.HOP / L.SR + L.WIN / (2 * L.SR)
    inspan = np.zeros(len(C), bool)
    for p in d.truth.placed:
        if p.channel == "agent" and p.kind == "turn":
            inspan |= (t >= p.onset_s) & (t < p.offset_s)
    sel = inspan & (e > e[inspan].max() - 35.0)
    B = np.log(S[sel] @ FB60.T + 1e-10)
    Cs = C[sel]
    rec = dict(lfcc_stats=np.concatenate([Cs.mean(0), Cs.std(0)]),
               lfb_stats=np.concatenate([B.mean(0), B.std(0)]),
               frames=Cs[:, :20].astype(np.float16), n_span=int(inspan.sum()), n_sel=int(sel.sum()))
    t2 = time.perf_counter()
    T_FE[0] += len(a) / L.SR
    T_FE[1] += t1 - t0
    T_FE[2] += t2 - t0
    return rec


REC, calls, meta, sealed, aug, key, wall = common.extract_each(
    features, progress=lambda: f"{T_FE[0]:.0f} s agent audio, front end {T_FE[1]:.1f} s")
fr = np.empty(len(REC), object)
fr[:] = [r["frames"] for r in REC]
np.savez(common.FEATS, lfcc_stats=np.stack([r["lfcc_stats"] for r in REC]),
         lfb_stats=np.stack([r["lfb_stats"] for r in REC]), frames=fr,
         n_span=np.array([r["n_span"] for r in REC]), n_sel=np.array([r["n_sel"] for r in REC]),
         key=key, audio_s=T_FE[0], lfcc_s=T_FE[1], all_s=T_FE[2], wall_s=wall)
print(f"done: {len(REC)} dialogues, key {key}, wall {wall:.0f} s; agent audio {T_FE[0]:.0f} s; "
      f"LFCC-60 {T_FE[1]:.1f} s ({1000*T_FE[1]/T_FE[0]:.2f} ms per audio second, RTF {T_FE[1]/T_FE[0]:.4f}); "
      f"all features {T_FE[2]:.1f} s; frames kept {np.sum([r['n_sel'] for r in REC])}/{np.sum([r['n_span'] for r in REC])} in spans")
