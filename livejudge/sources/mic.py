"""Microphone and speaker through ``sounddevice`` (PortAudio), imported only when used.

Without the PortAudio library ``import sounddevice`` raises OSError; without a device,
opening a stream raises ``sounddevice.PortAudioError``. Both become ``DeviceError`` with one
line that suggests the headless flags (``--input-wav``, ``--no-playback``).

Capture time: each 20 ms block from the microphone is stamped with PortAudio's
``inputBufferAdcTime`` mapped onto the session clock (falling back to the callback time
minus the block length when the host API reports 0).
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from typing import AsyncIterator, Callable

import numpy as np

from livejudge.audio import SAMPLE_RATE

HEADLESS_HINT = "use --input-wav FILE for a scripted caller and --no-playback to skip the speakers"


class DeviceError(RuntimeError):
    """No usable audio device or PortAudio library; the message says what to do instead."""


def _sd():
    try:
        import sounddevice as sd
    except OSError as exc:  # PortAudio library not found
        raise DeviceError(f"no audio devices: {exc} (install libportaudio2, or {HEADLESS_HINT})") from None
    except ImportError:
        raise DeviceError(f"sounddevice is not installed (pip install sounddevice), or {HEADLESS_HINT}") from None
    return sd


def list_devices() -> str:
    """PortAudio's device table as text (what ``--list-devices`` prints). Raises DeviceError."""
    sd = _sd()
    devices = sd.query_devices()
    if len(devices) == 0:
        raise DeviceError(f"PortAudio found no audio devices; {HEADLESS_HINT}")
    return str(devices)


def _device(arg: str | None):
    if arg is None or arg == "":
        return None
    return int(arg) if arg.lstrip("-").isdigit() else arg


class MicSource:
    """The user's microphone as a user source for ``AttachClient`` (float32 16 kHz, 20 ms blocks).

    Args:
        device: PortAudio device index or name substring (None = system default).
    Raises:
        DeviceError: no PortAudio, no such device, or it cannot record at 16 kHz mono.
    """

    done = False  # a microphone never finishes by itself

    def __init__(self, device: str | None = None, chunk_s: float = 0.02) -> None:
        self._sd = _sd()
        self.device = _device(device)
        self.chunk_s = chunk_s
        self._q: "queue.Queue[tuple[float, np.ndarray]]" = queue.Queue(maxsize=500)
        self._stream = None
        self._clock: Callable[[], float] = time.perf_counter
        self._offset: float | None = None  # session time − stream time
        try:  # fail before connecting to the agent, not mid-call
            self._sd.check_input_settings(device=self.device, samplerate=SAMPLE_RATE, channels=1, dtype="float32")
        except Exception as exc:  # sounddevice.PortAudioError, ValueError for a bad device
            raise DeviceError(f"cannot use the microphone ({exc}); pick one with --input-device "
                              f"(see --list-devices), or {HEADLESS_HINT}") from None

    def start(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        n = int(round(self.chunk_s * SAMPLE_RATE))

        def callback(indata, frames, time_info, status) -> None:  # PortAudio thread
            now_session = self._clock()
            adc = getattr(time_info, "inputBufferAdcTime", 0.0) or 0.0
            if adc and self._stream is not None:
                if self._offset is None:
                    self._offset = now_session - self._stream.time
                t_s = adc + self._offset
            else:
                t_s = now_session - frames / SAMPLE_RATE
            try:
                self._q.put_nowait((max(0.0, t_s), indata[:, 0].astype(np.float32).copy()))
            except queue.Full:
                pass

        try:
            self._stream = self._sd.InputStream(samplerate=SAMPLE_RATE, channels=1, dtype="float32",
                                                blocksize=n, device=self.device, callback=callback)
            self._stream.start()
        except Exception as exc:  # sounddevice.PortAudioError, ValueError for a bad device
            raise DeviceError(f"cannot open the microphone ({exc}); pick one with --input-device "
                              f"(see --list-devices), or {HEADLESS_HINT}") from None

    async def chunks(self, chunk_s: float, agent) -> AsyncIterator[tuple[float, np.ndarray]]:
        while True:
            try:
                yield self._q.get_nowait()
            except queue.Empty:
                await asyncio.sleep(0.005)

    def close(self) -> None:
        if self._stream is not None:
            try:
                self._stream.stop()
                self._stream.close()
            finally:
                self._stream = None


class Speaker:
    """Plays agent audio (float32 16 kHz) on an output device; ``flush`` empties its queue.

    ``latency_s`` is PortAudio's reported output latency, added to playout stamps.

    ``on_played(samples, t_s)``, when set (the echo canceller's far end), is called from the
    audio thread with each block that was really output (float32 16 kHz) and the session time
    its first sample reaches the DAC (PortAudio's ``outputBufferDacTime`` mapped onto the
    clock given with ``set_clock``; callback time + ``latency_s`` when the host reports 0).
    Silent blocks are not reported.

    Raises:
        DeviceError: no PortAudio or no usable output device.
    """

    def __init__(self, device: str | None = None) -> None:
        sd = _sd()
        self._buf: list[np.ndarray] = []
        self._lock = threading.Lock()
        self.on_played: Callable[[np.ndarray, float], None] | None = None
        self._clock: Callable[[], float] | None = None
        self._offset: float | None = None  # session time − stream time

        def callback(outdata, frames, time_info, status) -> None:
            out = np.zeros(frames, dtype=np.float32)
            filled = 0
            with self._lock:
                while filled < frames and self._buf:
                    head = self._buf[0]
                    k = min(frames - filled, head.size)
                    out[filled:filled + k] = head[:k]
                    filled += k
                    if k == head.size:
                        self._buf.pop(0)
                    else:
                        self._buf[0] = head[k:]
            outdata[:, 0] = out
            if filled and self.on_played is not None and self._clock is not None:
                now = self._clock()
                dac = getattr(time_info, "outputBufferDacTime", 0.0) or 0.0
                if dac and self._stream is not None:
                    if self._offset is None:  # the callback's own time on PortAudio's clock, if given
                        cur = getattr(time_info, "currentTime", 0.0) or self._stream.time
                        self._offset = now - cur
                    t_s = dac + self._offset
                else:
                    t_s = now + self.latency_s
                try:
                    self.on_played(out, t_s)
                except Exception:  # never break the audio thread
                    pass

        self._stream = None
        self.latency_s = 0.0
        try:
            self._stream = sd.OutputStream(samplerate=SAMPLE_RATE, channels=1, dtype="float32",
                                           device=_device(device), callback=callback, latency="low")
            self._stream.start()
        except Exception as exc:
            raise DeviceError(f"cannot open the speakers ({exc}); pick one with --output-device "
                              f"(see --list-devices), or {HEADLESS_HINT}") from None
        self.latency_s = float(self._stream.latency or 0.0)

    def set_clock(self, clock: Callable[[], float]) -> None:
        """The session clock (seconds) that ``on_played`` stamps are given on."""
        self._clock = clock

    def write(self, samples: np.ndarray) -> None:
        with self._lock:
            self._buf.append(np.asarray(samples, dtype=np.float32))

    def flush(self) -> None:
        with self._lock:
            self._buf.clear()

    def close(self) -> None:
        try:
            self._stream.stop()
            self._stream.close()
        except Exception:
            pass
