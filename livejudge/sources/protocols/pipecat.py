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

from ...audio import float32_to_pcm16, pcm16_to_float32
from .base import AgentAudio, Incoming, Interruption, Message, Protocol, ProtocolError, Status

INSTALL_HINT = "--protocol pipecat needs pipecat-ai: pip install 'livejudge[pipecat]'"


def load_frames_pb2():
    """pipecat-ai's protobuf module, imported without its loguru banner.

    Raises:
        ImportError: pipecat-ai is not installed (the message says how to install it).
    """
    try:
        from loguru import logger

        logger.disable("pipecat")
        try:
            from pipecat.frames.protobufs import frames_pb2
        finally:
            logger.enable("pipecat")
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return frames_pb2


class PipecatProtocol(Protocol):
    """Pipecat protobuf frames (see module docstring).

    Args:
        in_rate: sample rate of the user audio sent, Hz (the bot's ``audio_in_sample_rate``).
    Raises:
        ImportError: pipecat-ai missing.
        ValueError: a non-positive rate.
    """

    name = "pipecat"

    def __init__(self, in_rate: int = 16000) -> None:
        if in_rate <= 0:
            raise ValueError(f"--in-rate must be positive, got {in_rate}")
        self.in_rate = int(in_rate)
        self._pb = load_frames_pb2()

    def encode_audio(self, samples: np.ndarray) -> bytes:
        f = self._pb.Frame()
        f.audio.audio = float32_to_pcm16(samples)
        f.audio.sample_rate = self.in_rate
        f.audio.num_channels = 1
        return f.SerializeToString()

    def decode(self, message: Message) -> list[Incoming]:
        if isinstance(message, str):
            # Pipecat's protobuf transport only sends binary; a text message is someone else's JSON.
            return [Status("pipecat.text_message", {"text": message[:200]})]
        try:
            f = self._pb.Frame.FromString(message)
        except Exception as exc:  # google.protobuf.message.DecodeError
            raise ProtocolError(f"not a Pipecat protobuf frame ({exc}); is the bot using "
                                f"ProtobufFrameSerializer? try --protocol twilio for JSON media streams") from exc
        kind = f.WhichOneof("frame")
        if kind == "audio":
            a = f.audio
            ch = max(1, int(a.num_channels or 1))
            x = pcm16_to_float32(a.audio)
            if ch > 1:
                x = x[: len(x) // ch * ch].reshape(-1, ch).mean(axis=1).astype(np.float32)
            if a.sample_rate <= 0:
                raise ProtocolError("Pipecat audio frame without a sample_rate")
            return [AgentAudio(x, int(a.sample_rate))]
        if kind == "interruption":
            return [Interruption("pipecat.interruption")]
        if kind == "text":
            return [Status("pipecat.text", {"text": f.text.text})]
        if kind == "transcription":
            return [Status("pipecat.transcription", {"text": f.transcription.text,
                                                     "user_id": f.transcription.user_id})]
        if kind == "message":
            try:
                data = json.loads(f.message.data)
            except ValueError:
                data = f.message.data[:200]
            label = data.get("type", "message") if isinstance(data, dict) else "message"
            return [Status(f"pipecat.message.{label}", {"message": data})]
        return []
