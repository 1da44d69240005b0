"""Qwen2.5-Omni thinker backbone (GPU; ``pip install 'livejudge[gpu]'``).

The Turing-test paper (§6.2.1, App. E.2–E.3) encodes the whole dialogue audio with Qwen2.5-Omni-7B and reads
two things from the first (prefill) step: the mean of the token-level hidden states and the
hidden state of the last token; the ODL head fuses them. This module does that for one or
several ``WindowSnapshot``s:

1. The window's two channels are summed to one mono dialogue track
   (``WindowSnapshot.mono_mix()``, float32, 16 kHz = the Whisper feature extractor's rate).
2. Log-mel features (``WhisperFeatureExtractor`` with the checkpoint's settings: 128 mels,
   hop 160 → 100 frames/s), computed per window with ``padding="longest"`` instead of the
   processor's fixed 300 s padding (same model output, ~20× cheaper; notes-deps §2).
3. A chat-formatted prompt: ``<|im_start|>user\\n<|audio_bos|>`` + N × ``<|AUDIO|>`` +
   ``<|audio_eos|>`` + the understanding prompt + ``<|im_end|>\\n<|im_start|>assistant\\n``,
   with N = ((frames − 1)//2 + 1 − 2)//2 + 1 audio tokens (the audio encoder's two stride-2
   stages; 25 tokens/s, 250 for 10 s). Several windows are left-padded into one batch.
4. One forward of the thinker's encoder stack (audio tower → language model, ``use_cache=False``).
   Its ``last_hidden_state`` is ``hidden_states[-1]`` of the full thinker forward with
   ``output_hidden_states=True`` (after the final RMSNorm); calling the inner model skips the
   152k-vocabulary lm_head over every position and the other 28 layers' kept activations.
5. Readouts, shape (hidden_size,) float32: ``"mean"`` = attention-mask-weighted mean over all
   positions (the Turing-test paper's "first-step mean pooling"); ``"last"`` = the last non-pad position
   (the final ``\\n`` after ``assistant``; "last-token representation").

Only the thinker is loaded: ``Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained`` on
the full Omni checkpoint reads the nested ``thinker_config`` and, through transformers'
checkpoint conversion mapping, strips the released ``thinker.`` prefix; ``talker.*`` and
``token2wav.*`` weights are never materialised. After loading, the vision tower and the lm_head
(unused here) are deleted: about 2.4 GB less GPU memory for the 7B thinker.

The processor class (``Qwen2_5OmniProcessor``) is not used: it needs torchvision for its video
processor. The tokenizer and feature extractor are loaded from the same model path.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from livejudge.timing.window import WindowSnapshot
from livejudge.judge.model.dimensions import DIMENSION_IDS
from livejudge.judge.features.backbones.base import Embedding, Evidence

DEFAULT_MODEL = "Qwen/Qwen2.5-Omni-7B"
"""The paper's backbone (the Turing-test paper, App. E.2). ``Qwen/Qwen2.5-Omni-3B`` is the lighter option."""

UNDERSTANDING_PROMPT = (
    "Listen to this conversation between two speakers. Focus on the speaker who responds to "
    "the other one. Judge how they speak and what they say: rhythm and pauses, intonation, "
    "stress, fillers, breathing and other vocal sounds, accent, emotion, and conversational "
    "style. Is the responding speaker a human or a machine?"
)
"""The fixed "Understanding" prompt (the Turing-test paper, App. E.5, Tables 18–19 name the prompt but the
paper text does not give its wording; this wording is ours). A head is only valid with the
prompt it was trained with, so another prompt changes ``QwenOmniBackbone.name`` (a hash
suffix) and a head trained on this one will not load with it."""

SAMPLE_RATE_HZ = 16000
"""Sampling rate of Qwen2.5-Omni's Whisper feature extractor (and of livejudge's audio)."""

MIN_WINDOW_S = 0.5
"""Shorter windows are padded with trailing silence to this length (the audio encoder needs
at least a few frames; 0.5 s = 50 frames = 13 audio tokens)."""

MIN_AGENT_SPEECH_S = 1.0
"""Evidence gate (livejudge's choice, not from the paper): with less agent speech than this in a
window, every dimension is gated to the neutral 3 by ``Judge`` (the model hears the whole mix,
so any dimension can be judged once the agent has said something)."""

SILENCE_RMS = 10 ** (-45.0 / 20.0)
"""RMS below which a 30 ms frame counts as silent in the energy fallback of ``agent_speech_s``
(−45 dBFS; a heuristic, used only when the window carries no VAD segments)."""

_INSTALL_HINT = "pip install 'livejudge[gpu]'"
_NO_CUDA = "--device cuda but no CUDA device: use --device cpu (slow) or --judge acoustic"


# --------------------------------------------------------------------------- pure helpers


def num_audio_tokens(n_frames: int) -> int:
    """Number of ``<|AUDIO|>`` placeholders for ``n_frames`` log-mel frames (100 frames/s).

    The audio encoder has a stride-2 convolution and a stride-2 average pool:
    ((n − 1)//2 + 1 − 2)//2 + 1 (transformers ``_get_feat_extract_output_lengths``,
    Qwen2.5-Omni). 1000 frames (10 s) → 250 tokens.

    Raises:
        ValueError: n_frames < 3 (no audio token would come out).
    """
    if n_frames < 3:
        raise ValueError(f"need at least 3 log-mel frames (30 ms of audio), got {n_frames}")
    return ((n_frames - 1) // 2 + 1 - 2) // 2 + 1


def build_prompt_text(n_tokens: int, prompt: str = UNDERSTANDING_PROMPT) -> str:
    """The chat text with ``n_tokens`` audio placeholders (Qwen2.5-Omni chat format).

    ``<|im_start|>user\\n<|audio_bos|>`` + ``<|AUDIO|>`` × n_tokens + ``<|audio_eos|>`` +
    prompt + ``<|im_end|>\\n<|im_start|>assistant\\n``. No system message.
    """
    return ("<|im_start|>user\n<|audio_bos|>" + "<|AUDIO|>" * n_tokens + "<|audio_eos|>"
            + prompt + "<|im_end|>\n<|im_start|>assistant\n")


def backbone_name(model: str | os.PathLike) -> str:
    """Stable backbone id stored in head checkpoints.

    "qwen2.5-omni-7b" / "qwen2.5-omni-3b" for the released checkpoints (hub id, a directory
    named like them, or a hub-cache snapshot of them); "qwen2.5-omni:<directory name>" for any
    other local checkpoint.
    """
    text = str(model).rstrip("/\\")
    m = re.search(r"models--qwen--qwen2\.5-omni-(7b|3b)(?:[/\\]|$)", text, re.IGNORECASE)
    base = os.path.basename(text)
    if m is None:
        m = re.fullmatch(r"qwen2\.5-omni-(7b|3b)", base, re.IGNORECASE)
    if m is not None:
        return f"qwen2.5-omni-{m.group(1).lower()}"
    return f"qwen2.5-omni:{base}"


def agent_speech_s(window: WindowSnapshot) -> float:
    """Seconds of agent speech inside the window.

    From the window's agent VAD segments clipped to [start_s, end_s) when the window has any
    segments (either channel). A window with no segments at all (VAD not run) falls back to an
    energy heuristic: 30 ms agent frames with RMS above ``SILENCE_RMS`` (−45 dBFS).
    """
    if window.segments:
        total = 0.0
        for seg in window.segments_of("agent"):
            total += max(0.0, min(seg.offset_s, window.end_s) - max(seg.onset_s, window.start_s))
        return total
    frame = int(0.03 * window.sample_rate)
    x = np.asarray(window.agent, dtype=np.float32)
    n = len(x) // frame
    if n == 0:
        return 0.0
    rms = np.sqrt(np.mean(x[: n * frame].reshape(n, frame) ** 2, axis=1))
    return float(np.count_nonzero(rms > SILENCE_RMS)) * frame / window.sample_rate


def masked_mean(hidden, mask):
    """Attention-mask-weighted mean over positions.

    Args:
        hidden: torch tensor (batch, seq, dim).
        mask: torch tensor (batch, seq), 1 = real token, 0 = padding.
    Returns:
        float32 tensor (batch, dim).
    """
    import torch

    keep = mask.bool().unsqueeze(-1)
    # where(), not a product: whatever a kernel leaves in padded rows (even NaN) cannot leak in;
    # float32 accumulation even when the model runs in bf16.
    h = torch.where(keep, hidden.float(), torch.zeros((), dtype=torch.float32, device=hidden.device))
    return h.sum(dim=1) / keep.sum(dim=1).clamp_min(1).to(torch.float32)


def last_position(hidden, mask):
    """Hidden state at the last non-pad position of each row (works for left or right padding).

    Args/returns as ``masked_mean``.
    """
    import torch

    seq = mask.shape[1]
    idx = seq - 1 - torch.flip(mask.long(), dims=[1]).argmax(dim=1)
    return hidden[torch.arange(hidden.shape[0], device=hidden.device), idx].float()


# --------------------------------------------------------------------------- loading


def _import_transformers():
    """Import the thinker class, with one-line errors for the known failure modes."""
    if importlib.util.find_spec("transformers") is None:
        raise ImportError(f"the qwen-omni judge needs transformers: {_INSTALL_HINT}")
    try:
        from transformers import (AutoTokenizer, Qwen2_5OmniThinkerForConditionalGeneration,
                                  WhisperFeatureExtractor)
    except (ImportError, RuntimeError) as exc:
        if importlib.util.find_spec("torchvision") is not None:
            raise RuntimeError(
                "transformers cannot import the Qwen2.5-Omni thinker because the installed "
                "torchvision does not match torch: pip uninstall torchvision "
                f"(livejudge does not need it) [{type(exc).__name__}: {str(exc).splitlines()[0]}]"
            ) from exc
        raise ImportError(
            f"transformers has no usable Qwen2.5-Omni thinker ({exc}): {_INSTALL_HINT}"
        ) from exc
    return AutoTokenizer, Qwen2_5OmniThinkerForConditionalGeneration, WhisperFeatureExtractor


def _hub_offline() -> bool:
    val = os.environ.get("HF_HUB_OFFLINE", "").strip().lower()
    return val in ("1", "true", "yes", "on")


def _looks_like_hub_id(model: str) -> bool:
    return (re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", model) is not None
            and not model.startswith((".", "~")))


def resolve_model(model: str | os.PathLike) -> str:
    """Check that ``model`` can be loaded; return what to pass to ``from_pretrained``.

    A local directory must hold ``config.json``. A hub id ("org/name") is used as is; with
    ``HF_HUB_OFFLINE`` set it must already be in the local Hugging Face cache.

    Raises:
        FileNotFoundError: path missing / not a checkpoint, or hub id not cached while offline.
    """
    text = str(model)
    path = Path(text).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise FileNotFoundError(
                f"{text} is not a Qwen2.5-Omni checkpoint (no config.json): "
                "pass the model directory with --qwen-model")
        return str(path)
    if not _looks_like_hub_id(text):
        raise FileNotFoundError(f"model directory {text} does not exist: pass a local path with --qwen-model")
    if _hub_offline():
        cached = None
        try:
            from huggingface_hub import try_to_load_from_cache

            cached = try_to_load_from_cache(text, "config.json")
        except Exception:  # noqa: BLE001 - any cache lookup failure means "not cached"
            cached = None
        if not isinstance(cached, str):
            raise FileNotFoundError(
                f"model {text} not found locally and the hub is offline: pass a local path with --qwen-model")
    return text


def _resolve_device(device: str):
    import torch

    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(_NO_CUDA)
    if dev.type not in ("cuda", "cpu"):
        raise ValueError(f"device must be 'cuda', 'cuda:N' or 'cpu', got {device!r}")
    return dev


@contextlib.contextmanager
def _quiet_transformers():
    """Silence transformers' config-validation warnings while loading (the released Omni config
    trips its token-id range check on the talker's vocabulary; harmless for the thinker)."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)


def _default_attn(dev) -> str:
    if dev.type == "cuda" and importlib.util.find_spec("flash_attn") is not None:
        return "flash_attention_2"
    return "sdpa"


# --------------------------------------------------------------------------- backbone


class QwenOmniBackbone:
    """Qwen2.5-Omni thinker hidden states of a window (``Backbone`` protocol).

    Args:
        model: hub id ("Qwen/Qwen2.5-Omni-7B", "Qwen/Qwen2.5-Omni-3B") or a local directory with
            the full Omni checkpoint (or a thinker-only one) plus tokenizer and
            ``preprocessor_config.json``.
        device: "cuda", "cuda:N" or "cpu".
        dtype: torch dtype; default bfloat16 on CUDA, float32 on CPU.
        attn: attention implementation; default "flash_attention_2" on CUDA when ``flash_attn``
            is importable, else "sdpa".
        prompt: the text after the audio (default ``UNDERSTANDING_PROMPT``).
        max_window_s: longest audio per window, seconds (default 300 = the extractor's
            chunk_length). Longer windows keep their most recent ``max_window_s`` (warning).
        max_batch: windows per forward; larger batches are split.

    Attributes:
        name: "qwen2.5-omni-7b", "qwen2.5-omni-3b" or "qwen2.5-omni:<dir name>", plus
            "#prompt-<sha1[:8]>" when ``prompt`` is not the default.
        embedding_dim: text hidden size (3584 for 7B, 2048 for 3B).
        readouts: ("mean", "last").
        evidence_min: {dimension id: MIN_AGENT_SPEECH_S} (seconds of agent speech).

    Raises:
        ImportError: transformers missing (install hint).
        RuntimeError: CUDA requested but unavailable; torchvision installed and breaking the import.
        FileNotFoundError: weights not found (see ``resolve_model``).
        ValueError: bad device string, or a tokenizer that lacks Qwen2.5-Omni's audio tokens.
    """

    readouts: tuple[str, ...] = ("mean", "last")
    evidence_min: dict[str, float] = {d: MIN_AGENT_SPEECH_S for d in DIMENSION_IDS}
    """Default gating thresholds (seconds of agent speech) used by ``Judge`` when the head
    does not set its own."""

    def __init__(self, model: str | os.PathLike = DEFAULT_MODEL, device: str = "cuda",
                 dtype: Any = None, attn: str | None = None, prompt: str = UNDERSTANDING_PROMPT,
                 max_window_s: float = 300.0, max_batch: int = 16) -> None:
        AutoTokenizer, Thinker, WhisperFeatureExtractor = _import_transformers()
        import torch

        if max_window_s <= MIN_WINDOW_S:
            raise ValueError(f"max_window_s must exceed {MIN_WINDOW_S} s, got {max_window_s}")
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        self.device = _resolve_device(device)
        source = resolve_model(model)
        self.dtype = dtype if dtype is not None else (
            torch.bfloat16 if self.device.type == "cuda" else torch.float32)
        self.attn = attn or _default_attn(self.device)
        self.prompt = prompt
        self.max_window_s = float(max_window_s)
        self.max_batch = int(max_batch)
        self.name = backbone_name(model)
        if prompt != UNDERSTANDING_PROMPT:
            self.name += "#prompt-" + hashlib.sha1(prompt.encode("utf-8")).hexdigest()[:8]

        try:
            with _quiet_transformers():
                tokenizer = AutoTokenizer.from_pretrained(source)
                feature_extractor = WhisperFeatureExtractor.from_pretrained(source)
                load_kwargs: dict[str, Any] = dict(dtype=self.dtype, attn_implementation=self.attn)
                if self.device.type == "cuda" and importlib.util.find_spec("accelerate") is not None:
                    # Straight onto the GPU, no 16 GB CPU copy first (device_map needs accelerate,
                    # part of livejudge[gpu]); without it: load on the CPU, then move.
                    load_kwargs["device_map"] = {"": str(self.device)}
                thinker, info = Thinker.from_pretrained(source, output_loading_info=True, **load_kwargs)
        except OSError as exc:
            raise FileNotFoundError(
                f"could not load Qwen2.5-Omni from {source} ({str(exc).splitlines()[0]}): "
                "pass a local path with --qwen-model") from exc
        # The vision tower and lm_head are deleted below, so a checkpoint may lack them.
        missing = sorted(k for k in info.get("missing_keys", ())
                         if not k.startswith(("model.visual.", "lm_head.")))
        if missing:
            raise ValueError(
                f"{source} is not a Qwen2.5-Omni thinker checkpoint: {len(missing)} weights missing "
                f"(e.g. {missing[0]})")
        self._setup(thinker, tokenizer, feature_extractor, source=str(source))

    @classmethod
    def from_parts(cls, thinker, tokenizer, feature_extractor, name: str, dtype: Any = None,
                   prompt: str = UNDERSTANDING_PROMPT, max_window_s: float = 300.0,
                   max_batch: int = 16) -> "QwenOmniBackbone":
        """Wrap an already built thinker (e.g. random 7B-shaped weights for benchmarks/judge_gpu.py).

        The thinker must already be on its device in ``dtype``; its vision tower and lm_head are
        deleted. Same inputs, forward and readouts as a loaded backbone.
        """
        self = cls.__new__(cls)
        self.device = next(thinker.parameters()).device
        self.dtype = dtype if dtype is not None else next(thinker.parameters()).dtype
        self.attn = getattr(thinker.config, "_attn_implementation", None) or "sdpa"
        self.prompt = prompt
        self.max_window_s = float(max_window_s)
        self.max_batch = int(max_batch)
        self.name = name
        self._setup(thinker, tokenizer, feature_extractor, source=name)
        return self

    def _setup(self, thinker, tokenizer, feature_extractor, source: str) -> None:
        self.tokenizer = tokenizer
        self.feature_extractor = feature_extractor
        if feature_extractor.sampling_rate != SAMPLE_RATE_HZ:
            raise ValueError(
                f"feature extractor at {source} expects {feature_extractor.sampling_rate} Hz; "
                f"Qwen2.5-Omni uses {SAMPLE_RATE_HZ} Hz")
        cfg = thinker.config
        audio_id = tokenizer.convert_tokens_to_ids("<|AUDIO|>")
        if audio_id != cfg.audio_token_id:
            raise ValueError(
                f"tokenizer's <|AUDIO|> id {audio_id} != model's audio_token_id "
                f"{cfg.audio_token_id}: tokenizer and weights come from different checkpoints")
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = "<|endoftext|>"
        tokenizer.padding_side = "left"

        # Keep only what the embedding needs: audio tower + language model.
        if hasattr(thinker.model, "visual"):
            del thinker.model.visual
        if hasattr(thinker, "lm_head"):
            del thinker.lm_head
        self._model = thinker.model.eval().to(self.device)
        self.embedding_dim = int(cfg.text_config.hidden_size)

    # ------------------------------------------------------------------ inputs

    def _clip_audio(self, window: WindowSnapshot) -> np.ndarray:
        if window.sample_rate != SAMPLE_RATE_HZ:
            raise ValueError(
                f"window audio is {window.sample_rate} Hz; livejudge windows must be {SAMPLE_RATE_HZ} Hz")
        mono = window.mono_mix()
        max_n = int(round(self.max_window_s * SAMPLE_RATE_HZ))
        if len(mono) > max_n:
            warnings.warn(f"window of {len(mono) / SAMPLE_RATE_HZ:.1f} s exceeds max_window_s="
                          f"{self.max_window_s:g}; the judge keeps the most recent {self.max_window_s:g} s",
                          stacklevel=3)
            mono = mono[-max_n:]
        min_n = int(round(MIN_WINDOW_S * SAMPLE_RATE_HZ))
        if len(mono) < min_n:
            mono = np.pad(mono, (0, min_n - len(mono)))
        return mono

    def prepare(self, windows: Sequence[WindowSnapshot]) -> dict[str, Any]:
        """Model inputs for a batch of windows (left-padded), as CPU torch tensors.

        Returns:
            dict with ``input_ids`` and ``attention_mask`` (int64, (B, L)); ``input_features``
            (float32, (B, 128, F_max), log-mel, 100 frames/s); ``feature_attention_mask``
            (int64, (B, F_max)); and ``n_audio_tokens`` (list of B ints).

        Raises:
            ValueError: empty batch, or a window not at 16 kHz.
        """
        import torch

        if not windows:
            raise ValueError("prepare() needs at least one window")
        feats, n_frames, texts = [], [], []
        for w in windows:
            audio = self._clip_audio(w)
            # Per window, so a window's features do not depend on what it is batched with.
            out = self.feature_extractor(
                audio, sampling_rate=SAMPLE_RATE_HZ, padding="longest",
                return_attention_mask=True, return_tensors="np")
            f = int(out["attention_mask"][0].sum())
            feats.append(out["input_features"][0][:, :f])
            n_frames.append(f)
            texts.append(build_prompt_text(num_audio_tokens(f), self.prompt))
        f_max = max(n_frames)
        n_mels = feats[0].shape[0]
        input_features = np.zeros((len(windows), n_mels, f_max), dtype=np.float32)
        feature_mask = np.zeros((len(windows), f_max), dtype=np.int64)
        for i, (f, n) in enumerate(zip(feats, n_frames)):
            input_features[i, :, :n] = f
            feature_mask[i, :n] = 1
        tok = self.tokenizer(texts, padding="longest", return_tensors="pt", padding_side="left")
        return {
            "input_ids": tok["input_ids"],
            "attention_mask": tok["attention_mask"],
            "input_features": torch.from_numpy(input_features),
            "feature_attention_mask": torch.from_numpy(feature_mask),
            "n_audio_tokens": [num_audio_tokens(n) for n in n_frames],
        }

    # ------------------------------------------------------------------ forward

    def hidden_states(self, inputs: dict[str, Any]):
        """Last-layer hidden states (after the final RMSNorm) for prepared inputs.

        Returns:
            (hidden, attention_mask): tensors on the model's device; hidden (B, L, hidden_size)
            in the model dtype, attention_mask (B, L).
        """
        import torch

        dev = self.device
        with torch.inference_mode():
            out = self._model(
                input_ids=inputs["input_ids"].to(dev),
                attention_mask=inputs["attention_mask"].to(dev),
                input_features=inputs["input_features"].to(dev, self.dtype),
                feature_attention_mask=inputs["feature_attention_mask"].to(dev),
                use_cache=False,
            )
        return out.last_hidden_state, inputs["attention_mask"].to(dev)

    def embed(self, windows: Sequence[WindowSnapshot]) -> list[Embedding]:
        """Embed windows, ``max_batch`` per forward (left-padded).

        Returns:
            One Embedding per window, same order: vectors {"mean", "last"} float32
            (embedding_dim,); evidence = seconds of agent speech for every dimension (the
            model hears the whole mix, so only near-silent windows lack evidence);
            features = {"agent_speech_s", "audio_tokens", "seq_len"}.
        """
        results: list[Embedding] = []
        for a in range(0, len(windows), self.max_batch):
            chunk = list(windows[a:a + self.max_batch])
            inputs = self.prepare(chunk)
            hidden, mask = self.hidden_states(inputs)
            mean = masked_mean(hidden, mask).cpu().numpy()
            last = last_position(hidden, mask).cpu().numpy()
            seq_len = mask.sum(dim=1).cpu().tolist()
            del hidden
            for i, w in enumerate(chunk):
                speech_s = agent_speech_s(w)
                ev = Evidence(amount=speech_s, unit="s")
                results.append(Embedding(
                    vectors={"mean": mean[i].astype(np.float32), "last": last[i].astype(np.float32)},
                    evidence={d: ev for d in DIMENSION_IDS},
                    features={"agent_speech_s": speech_s,
                              "audio_tokens": float(inputs["n_audio_tokens"][i]),
                              "seq_len": float(seq_len[i])},
                ))
        return results
