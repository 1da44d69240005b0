"""Streaming voice activity detection per channel.

The default detector is WebRTC's GMM VAD (package ``webrtcvad-wheels``, import ``webrtcvad``)
with an energy floor in front of it, because WebRTC reads faint noise as speech. The stream
turns per-frame decisions into ``SpeechSegment`` events whose bounds are acoustic:

* onset  = start of the first voiced frame of a run that lasts ≥ ``min_speech_s``;
* offset = end of the last voiced frame, back-dated past the hangover (the segment is only
  *emitted* after ``hangover_s`` of silence, but its offset is where speech stopped).

So reported bounds are within one VAD frame (10/20/30 ms) of the speech's true onset/offset.
Any detector that yields one boolean per fixed-length frame can sit behind ``FrameClassifier``
(e.g. Silero, whose ONNX model ships inside pipecat-ai).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .audio import SAMPLE_RATE
from .events import Channel, SpeechSegment


class FrameClassifier(Protocol):
    """Decides speech / non-speech for one frame of ``frame_len`` samples (float32, 16 kHz)."""

    frame_len: int

    def is_speech(self, frame: np.ndarray) -> bool: ...


@dataclass(frozen=True)
class VADConfig:
    """Settings of the streaming VAD.

    Attributes:
        aggressiveness: WebRTC mode 0–3 (3 = most aggressive at rejecting non-speech).
        frame_ms: 10, 20 or 30 (WebRTC's allowed frame lengths).
        hangover_s: silence needed to end a segment, seconds (decision delay, not bound shift).
        min_speech_s: shortest voiced run that opens a segment, seconds (rejects clicks).
        energy_floor_dbfs: frames quieter than this RMS level (dB re full scale) are non-speech.
    """

    aggressiveness: int = 1
    frame_ms: int = 30
    hangover_s: float = 0.3
    min_speech_s: float = 0.06
    energy_floor_dbfs: float = -50.0

    def validate(self) -> "VADConfig":
        if self.aggressiveness not in (0, 1, 2, 3):
            raise ValueError(f"VAD aggressiveness must be 0–3, got {self.aggressiveness}")
        if self.frame_ms not in (10, 20, 30):
            raise ValueError(f"VAD frame must be 10, 20 or 30 ms (WebRTC), got {self.frame_ms}")
        if self.hangover_s < 0 or self.min_speech_s < 0:
            raise ValueError("VAD hangover_s and min_speech_s must be ≥ 0")
        return self


class WebRtcClassifier:
    """WebRTC VAD behind an RMS energy floor (see module docstring)."""

    def __init__(self, config: VADConfig) -> None:
        import webrtcvad

        self.frame_len = SAMPLE_RATE * config.frame_ms // 1000
        self._vad = webrtcvad.Vad(config.aggressiveness)
        self._floor = 10.0 ** (config.energy_floor_dbfs / 20.0)

    def is_speech(self, frame: np.ndarray) -> bool:
        rms = float(np.sqrt(np.mean(frame.astype(np.float64) ** 2)))
        if rms < self._floor:
            return False
        pcm = (np.clip(frame, -1.0, 32767 / 32768) * 32768.0).astype("<i2").tobytes()
        return self._vad.is_speech(pcm, SAMPLE_RATE)


class StreamingVAD:
    """Frame-by-frame VAD over one channel's stream on the session clock.

    ``push`` accepts chunks of any length (float32, 16 kHz); samples are assumed contiguous
    from ``start_s`` (the first push's time). Returns the segments that closed during the push.
    """

    def __init__(self, channel: Channel, config: VADConfig | None = None,
                 classifier: FrameClassifier | None = None, start_s: float = 0.0) -> None:
        self.channel = channel
        self.config = (config or VADConfig()).validate()
        self.classifier = classifier or WebRtcClassifier(self.config)
        self.frame_len = self.classifier.frame_len
        self.frame_s = self.frame_len / SAMPLE_RATE
        self._pending = np.zeros(0, dtype=np.float32)
        self._frames_done = 0
        self._start_s = start_s
        self._hang_frames = int(round(self.config.hangover_s / self.frame_s))
        self._min_frames = max(1, int(round(self.config.min_speech_s / self.frame_s)))
        # run state
        self._run_start: int | None = None  # first voiced frame of the current candidate run
        self._run_voiced = 0
        self._last_voiced: int | None = None  # last voiced frame index
        self._open = False

    @property
    def time_s(self) -> float:
        """Session time up to which frames have been classified."""
        return self._start_s + self._frames_done * self.frame_s

    @property
    def open_onset_s(self) -> float | None:
        """Onset of the segment in progress (speech now), or None."""
        if self._open and self._run_start is not None:
            return self._start_s + self._run_start * self.frame_s
        return None

    @property
    def last_voiced_s(self) -> float | None:
        """End of the last voiced frame of the open segment, or None."""
        if self._open and self._last_voiced is not None:
            return self._start_s + (self._last_voiced + 1) * self.frame_s
        return None

    def push(self, samples: np.ndarray) -> list[SpeechSegment]:
        x = np.asarray(samples, dtype=np.float32)
        if self._pending.size:
            x = np.concatenate([self._pending, x])
        n_frames = len(x) // self.frame_len
        out: list[SpeechSegment] = []
        for k in range(n_frames):
            frame = x[k * self.frame_len:(k + 1) * self.frame_len]
            seg = self._step(self.classifier.is_speech(frame))
            if seg is not None:
                out.append(seg)
        self._pending = x[n_frames * self.frame_len:].copy()
        return out

    def _step(self, voiced: bool) -> SpeechSegment | None:
        i = self._frames_done
        self._frames_done += 1
        if voiced:
            if self._run_start is None:
                self._run_start = i
                self._run_voiced = 0
            self._run_voiced += 1
            self._last_voiced = i
            if not self._open and self._run_voiced >= self._min_frames:
                self._open = True
            return None
        if self._run_start is None:
            return None
        assert self._last_voiced is not None
        silent = i - self._last_voiced
        if not self._open:
            # candidate run too short: forget it once a silence as long as the hangover passes
            if silent > self._hang_frames:
                self._run_start = None
            return None
        if silent >= self._hang_frames:
            return self._close()
        return None

    def _close(self) -> SpeechSegment:
        assert self._run_start is not None and self._last_voiced is not None
        seg = SpeechSegment(
            channel=self.channel,
            onset_s=round(self._start_s + self._run_start * self.frame_s, 6),
            offset_s=round(self._start_s + (self._last_voiced + 1) * self.frame_s, 6),
        )
        self._run_start = None
        self._last_voiced = None
        self._open = False
        return seg

    def flush(self) -> list[SpeechSegment]:
        """End of stream: close an open segment at its last voiced frame."""
        if self._pending.size:
            pad = np.zeros(self.frame_len - len(self._pending), dtype=np.float32)
            segs = self.push(pad)
        else:
            segs = []
        if self._open:
            segs.append(self._close())
        self._run_start = None
        return segs


def detect_segments(samples: np.ndarray, channel: Channel, config: VADConfig | None = None,
                    start_s: float = 0.0) -> list[SpeechSegment]:
    """Run the streaming VAD over a whole array (float32, 16 kHz) and return all segments."""
    vad = StreamingVAD(channel, config, start_s=start_s)
    return vad.push(samples) + vad.flush()
