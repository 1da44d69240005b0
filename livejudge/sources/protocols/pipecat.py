"""The Pipecat websocket wire: one protobuf ``pipecat.Frame`` per binary message.

Uses pipecat-ai's own generated module ``pipecat.frames.protobufs.frames_pb2`` (the schema
behind ``ProtobufFrameSerializer``), so the codec is Pipecat's, not a re-implementation; it
needs no pipeline and no event loop. Works with bots on ``SingleClientWebsocketServerTransport``
and with bots behind Pipecat's development runner / FastAPI websocket transport that use
``ProtobufFrameSerializer``.

Wire facts (pipecat-ai 1.14, checked against its source):
* user audio goes out as ``Frame.audio`` (s16le bytes, sample_rate, num_channels); the bot
  does not resample it, so send at the bot's input rate (``--in-rate``);
* bot audio arrives the same way at the bot's output rate, ~40 ms per message, paced in
  real time (one message ahead);
* ``Frame.interruption`` arrives when the bot handles a user barge-in: drop unplayed audio;
* ``text``, ``transcription`` and ``message`` (JSON, e.g. RTVI) carry no timestamps; they are
  logged as notes only.
"""

from __future__ import annotations

import json

import numpy as np

from livejudge.audio import AudioFormatError, check_rate, float32_to_pcm16, pcm16_to_float32
from livejudge.sources.protocols.base import AgentAudio, Incoming, Interruption, Message, Protocol, ProtocolError, Status

MAX_CHANNELS = 32
"""Most interleaved channels accepted in one audio frame."""

MAX_TEXT_CHARS = 10_000
"""Text/JSON kept per status message (notes are logged, never timed)."""

INSTALL_HINT = "--protocol pipecat needs pipecat-ai: pip install 'livejudge[pipecat]'"


def import_pipecat_quietly(names: tuple[str, ...], hint: str) -> list:
    """Import pipecat-ai modules by name without its loguru banner.

    Raises:
        ImportError: a module is missing; the message starts with ``hint`` (how to install).
    """
    import importlib

    try:
        from loguru import logger

        logger.disable("pipecat")
        try:
            return [importlib.import_module(n) for n in names]
        finally:
            logger.enable("pipecat")
    except ImportError as exc:
        raise ImportError(f"{hint} ({exc})") from exc


def load_frames_pb2():
    """pipecat-ai's protobuf module, imported without its loguru banner.

    Raises:
        ImportError: pipecat-ai is not installed (the message says how to install it).
    """
    (frames_pb2,) = import_pipecat_quietly(("pipecat.frames.protobufs.frames_pb2",), INSTALL_HINT)
    return frames_pb2


class PipecatProtocol(Protocol):
    """Pipecat protobuf frames (see module docstring).

    Args:
        in_rate: sample rate of the user audio sent, Hz (the bot's ``audio_in_sample_rate``).
    Raises:
        ImportError: pipecat-ai missing.
        ValueError: a rate outside 8–192 kHz.
    """

    name = "pipecat"

    def __init__(self, in_rate: int = 16000) -> None:
        self.in_rate = check_rate(in_rate, "--in-rate")  # AudioFormatError is a ValueError
        self._pb = load_frames_pb2()

    def encode_audio(self, samples: np.ndarray) -> bytes:
        f = self._pb.Frame()
        f.audio.audio = float32_to_pcm16(samples)
        f.audio.sample_rate = self.in_rate
        f.audio.num_channels = 1
        return f.SerializeToString()

    def decode(self, message: Message) -> list[Incoming]:
        """One binary protobuf frame → items.

        Raises:
            ProtocolError: not a Pipecat frame; an audio frame with an odd byte count, a
                channel count outside 1–``MAX_CHANNELS``, a byte count that is not whole
                frames, or a sample rate outside 8–192 kHz (the message names the value).
        """
        if isinstance(message, str):
            # Pipecat's protobuf transport only sends binary; a text message is someone else's JSON.
            return [Status("pipecat.text_message", {"text": message[:MAX_TEXT_CHARS]})]
        if not isinstance(message, (bytes, bytearray, memoryview)):
            raise ProtocolError(f"Pipecat message must be bytes, got {type(message).__name__}")
        try:
            f = self._pb.Frame.FromString(bytes(message))
        except Exception as exc:  # google.protobuf.message.DecodeError
            raise ProtocolError(f"not a Pipecat protobuf frame ({exc}); is the bot using "
                                f"ProtobufFrameSerializer? try --protocol twilio for JSON media streams") from exc
        kind = f.WhichOneof("frame")
        if kind == "audio":
            a = f.audio
            ch = int(a.num_channels or 1)
            if not 1 <= ch <= MAX_CHANNELS:
                raise ProtocolError(f"Pipecat audio frame declares {ch} channels (1–{MAX_CHANNELS} supported)")
            try:
                rate = check_rate(int(a.sample_rate), "Pipecat audio frame sample_rate")
            except AudioFormatError as exc:
                raise ProtocolError(str(exc) + ("" if a.sample_rate else " (the frame has no sample_rate)")) from None
            n = len(a.audio)
            if n % (2 * ch):
                raise ProtocolError(f"Pipecat audio frame of {n} bytes is not whole s16le frames of {ch} "
                                    f"channel{'s' if ch > 1 else ''} ({2 * ch} bytes each)")
            x = pcm16_to_float32(a.audio)
            if ch > 1:
                x = x.reshape(-1, ch).mean(axis=1).astype(np.float32)
            return [AgentAudio(x, rate)]
        if kind == "interruption":
            return [Interruption("pipecat.interruption")]
        if kind == "text":
            return [Status("pipecat.text", {"text": f.text.text[:MAX_TEXT_CHARS]})]
        if kind == "transcription":
            return [Status("pipecat.transcription", {"text": f.transcription.text[:MAX_TEXT_CHARS],
                                                     "user_id": f.transcription.user_id[:200]})]
        if kind == "message":
            raw = f.message.data
            data: object
            if len(raw) > MAX_TEXT_CHARS:
                data = raw[:MAX_TEXT_CHARS]
            else:
                try:
                    data = json.loads(raw)
                except (ValueError, RecursionError):
                    data = raw[:200]
            label = data.get("type", "message") if isinstance(data, dict) else "message"
            return [Status(f"pipecat.message.{str(label)[:100]}", {"message": data})]
        return []
