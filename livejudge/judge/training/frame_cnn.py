"""Training and export of a head's frame readout (``livejudge.judge.model.frame_cnn``); needs torch (``livejudge[train]``).

The network (fixed in ``benchmarks/experiments/frame_lofo`` round 1, ``lofo.py``'s docstring): input
384 x T (per-component standardised with the fit frames) -> Conv1d(384,64,k) BN ReLU ->
Conv1d(64,64,k,dil 2) BN ReLU -> Conv1d(64,64,k,dil 4) BN ReLU -> mean+std pooling over time ->
dropout 0.3 -> Linear(128,1): one logit per dialogue, > 0 leaning human. ``k`` = 3 (receptive field
15 frames = 0.3 s on top of the encoder's own context) or 1 (the no-context ablation).
Training: ``epochs`` epochs, Adam lr 1e-3, weight decay 1e-3, batch 32, random crops of CROP = 150
frames (3 s, shorter inputs wrapped), class-weighted loss (``whisper_head.class_weights``).
``mask=True`` (v18, ``benchmarks/experiments/refit_v6/README.md``; off in every stored network) also
masks each standardised training crop as SpecAugment does (Park et al. 2019, "SpecAugment", Sec. 2:
time masking and frequency masking) with Whisper frames in place of mel bins: ``mask_crop``.
Used by the experiment (per outer fold, and once on every open row: ``wild.py``) and by ``export``,
which folds each batch norm into its convolution and writes the NumPy readout's tensors.
"""
from __future__ import annotations

import numpy as np

from livejudge.judge.model.frame_cnn import MIN_FRAMES  # fewer kept frames: not fitted on; scored as a neutral (zero) input

CROP = 150


def make_net(k: int, d_in: int = 384):
    """The temporal CNN of the module docstring, kernel ``k``, over ``d_in`` encoder components
    (384: Whisper tiny.en, every shipped network; 512: Whisper base, v20's candidate)."""
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()

            def blk(i, o, d):
                return nn.Sequential(nn.Conv1d(i, o, k, dilation=d, padding=(k // 2) * d), nn.BatchNorm1d(o), nn.ReLU())
            self.f = nn.Sequential(blk(d_in, 64, 1), blk(64, 64, 2), blk(64, 64, 4))
            self.out = nn.Sequential(nn.Dropout(0.3), nn.Linear(128, 1))

        def forward(self, x):
            h = self.f(x)
            return self.out(torch.cat([h.mean(2), h.std(2)], 1))[:, 0]
    return Net()


TIME_MASKS, TIME_MASK_MAX, COMPONENT_DROP = 2, 15, 0.1
"""``mask_crop``'s settings (v18): two time masks of 0-15 frames (up to 0.3 s each) and each of the
384 components zeroed with probability 0.1; SpecAugment's LibriSpeech policy uses two masks of each
kind (Park et al. 2019, Table 1). Chosen before any run, not tuned."""


def mask_crop(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """float32 (384, T) standardised crop -> the same array, masked in place: TIME_MASKS spans of
    0..TIME_MASK_MAX frames set to 0 (the fit frames' mean) at every component, then each component
    set to 0 over the whole crop with probability COMPONENT_DROP."""
    t = x.shape[1]
    for _ in range(TIME_MASKS):
        w = int(rng.integers(0, TIME_MASK_MAX + 1))
        s = int(rng.integers(0, max(t - w, 0) + 1))
        x[:, s:s + w] = 0.0
    x[rng.random(x.shape[0]) < COMPONENT_DROP, :] = 0.0
    return x


def centre_dialogue(x: np.ndarray) -> np.ndarray:
    """(T, 384) frames -> float16 (T, 384) minus their own mean frame (v17: the per-dialogue
    mean normalisation of cepstral mean normalisation, Atal 1974, applied to encoder frames; removes
    what is constant over a dialogue, such as the channel's and the voice's average). Empty input
    is returned unchanged."""
    if len(x) == 0:
        return x
    f = x.astype(np.float32)
    return (f - f.mean(0)).astype(np.float16)


def train(FR, y: np.ndarray, fit: np.ndarray, seed: int, k: int = 3, epochs: int = 12, mask: bool = False):
    """(net, mu, sd): the network fitted on dialogues ``fit`` (indices into ``FR``, per dialogue
    float16 (T_i, D) frames, D = 384 for tiny.en, and ``y``, 1 = human); dialogues with fewer than
    MIN_FRAMES frames are skipped. ``mu``/``sd`` float32 (D,): the fit frames' per-component
    standardisation; the network's first layer is D wide. ``mask``:
    SpecAugment-style masks on every training crop (``mask_crop``; module docstring)."""
    import torch
    import torch.nn as nn
    from livejudge.judge.training.whisper_head import class_weights

    fit = np.array([i for i in fit if len(FR[i]) >= MIN_FRAMES])
    allf = np.concatenate([FR[i] for i in fit]).astype(np.float32)
    mu, sd = allf.mean(0), allf.std(0) + 1e-6
    del allf
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    net = make_net(k, len(mu))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-3)
    w = class_weights(y[fit])

    def crop(x):
        n = len(x)
        if n <= CROP:
            return np.pad(x, ((0, CROP - n), (0, 0)), mode="wrap")
        s = int(rng.integers(n - CROP + 1))
        return x[s:s + CROP]

    for _ in range(epochs):
        net.train()
        perm = rng.permutation(len(fit))
        for b in range(0, len(perm), 32):
            ii = fit[perm[b:b + 32]]
            xs = [standardise(crop(FR[i]), mu, sd) for i in ii]
            if mask:
                xs = [mask_crop(x, rng) for x in xs]
            xb = torch.as_tensor(np.stack(xs))
            yb = torch.as_tensor(y[ii], dtype=torch.float32)
            wb = torch.as_tensor(w[perm[b:b + 32]], dtype=torch.float32)
            loss = (wb * nn.functional.binary_cross_entropy_with_logits(net(xb), yb, reduction="none")).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return net, mu, sd


def standardise(x: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """float32 (384, T) network input from (T, 384) frames."""
    return ((x.astype(np.float32) - mu) / sd).T


def scores(net, mu, sd, frames) -> np.ndarray:
    """float64 (n,) logits, one per dialogue's frames (all of them, no crop)."""
    import torch

    net.eval()
    out = []
    with torch.no_grad():
        for x in frames:
            x = x if len(x) >= MIN_FRAMES else np.zeros((MIN_FRAMES, len(mu)), np.float16)  # no speech kept: a neutral input
            out.append(float(net(torch.as_tensor(standardise(x, mu, sd)[None]))[0]))
    return np.array(out)


def export(checkpoints: list[dict], out_dir, stage: int, weight: float = 0.5) -> dict:
    """Write a head's frame readout: ``frame_cnn.safetensors`` in ``out_dir``, returns its config section.

    Args:
        checkpoints: per member, ``{"state": state_dict of make_net(3, d), "mu", "sd": (d,), "a", "c":
            its Platt step}`` (as ``benchmarks/experiments/frame_lofo/wild.py train`` saves them).
        stage: the encoder blocks the frames come from. weight: the blend weight (module
            ``livejudge.judge.model.frame_cnn``).
    Returns:
        the ``frame_readout`` section for the head's config.json.
    """
    from pathlib import Path

    from safetensors.numpy import save_file

    from livejudge.judge.model.frame_cnn import DILATIONS, FILE

    tensors = {}
    for i, ck in enumerate(checkpoints):
        sd = {k: v.detach().cpu().numpy().astype(np.float64) for k, v in ck["state"].items()}
        for j in range(len(DILATIONS)):
            w, b = sd[f"f.{j}.0.weight"], sd[f"f.{j}.0.bias"]
            g, be = sd[f"f.{j}.1.weight"], sd[f"f.{j}.1.bias"]
            rm, rv = sd[f"f.{j}.1.running_mean"], sd[f"f.{j}.1.running_var"]
            k = g / np.sqrt(rv + 1e-5)  # BatchNorm1d eval: (x - mean) / sqrt(var + eps) * gamma + beta
            tensors[f"m{i}.conv{j}.weight"] = (w * k[:, None, None]).astype(np.float32)
            tensors[f"m{i}.conv{j}.bias"] = ((b - rm) * k + be).astype(np.float32)
        tensors[f"m{i}.out.weight"] = sd["out.1.weight"].astype(np.float32)
        tensors[f"m{i}.out.bias"] = sd["out.1.bias"].astype(np.float32)
        tensors[f"m{i}.mu"] = np.asarray(ck["mu"], np.float32)
        tensors[f"m{i}.sd"] = np.asarray(ck["sd"], np.float32)
        tensors[f"m{i}.platt"] = np.array([ck["a"], ck["c"]], np.float32)
    save_file(tensors, str(Path(out_dir) / FILE))
    from livejudge.judge.training.head_files import share_head_files

    share_head_files(out_dir, (FILE,))  # safetensors writes 0600: readable by others as config.json is
    return {"kind": "temporal-cnn", "stage": int(stage), "weight": float(weight), "members": len(checkpoints),
            "keep_db": 35.0}
