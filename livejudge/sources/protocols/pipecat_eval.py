"""Pipecat's eval wire: how ``pipecat eval`` reaches any bot served by Pipecat's development runner.

The runner's ``/ws`` route reads the first message; an RTVI ``client-message`` of type
``eval-connect`` makes ``create_transport`` build the bot's ``eval`` transport
(``EvalFastAPIWebsocketTransport`` with ``EvalSerializer``), which nearly every Pipecat
example defines. We play the harness's side, with pipecat-ai's own message models
(``pipecat.evals.serializer``, ``pipecat.processors.frameworks.rtvi.models``), imported
without running a pipeline:

1. ``eval-connect`` with ``capture_bot_audio=true`` (so the bot forwards its audio), then
   RTVI ``client-ready``; wait for ``bot-ready`` (the bot's pipeline is running). Audio sent
   earlier would queue and reach the bot's VAD in a burst, so the session clock starts
   only after ``bot-ready``.
2. User audio: RTVI ``raw-audio`` messages (base64 s16le, ``sampleRate``, ``numChannels``),
   one per 20 ms chunk, paced in real time by the attach client; the bot's
   ``RTVIProcessor`` feeds them to its input transport (VAD, STT) like microphone audio.
3. Bot audio: ``eval-bot-audio`` (base64 s16le at ``sampleRate``), written by the bot's
   output transport as it plays (40 ms chunks, paced in real time), so the client times it
   at arrival/playout exactly as on the protobuf wire.
4. ``bot-interrupted``: the bot cut its reply (barge-in handled): drop unplayed audio.
5. Every other RTVI message (``bot-started-speaking``, ``user-stopped-speaking``,
   ``bot-tts-text``, ``user-transcription``, metrics…) is a note, for comparison only:
   RTVI messages carry no timestamps and lag the audio.
6. ``eval-cancel`` before closing: the bot's serializer turns it into a
   ``CancelWorkerFrame``, so its pipeline ends cleanly.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from typing import Any

import numpy as np

from livejudge.audio import AudioFormatError, check_rate, float32_to_pcm16, pcm16_to_float32
from livejudge.sources.protocols.base import AgentAudio, Incoming, Interruption, Message, Protocol, ProtocolError, Status

INSTALL_HINT = "--protocol pipecat-eval needs pipecat-ai: pip install 'livejudge[pipecat]'"

BOT_READY_TIMEOUT_S = 15.0
"""How long to wait for ``bot-ready`` after ``client-ready``, seconds (Pipecat's harness
allows about as long; a bot loading Silero and its services takes 1–3 s)."""


def load_eval_models():
    """``(serializer module, RTVI models module)`` from pipecat-ai, imported without its banner.

    Raises:
        ImportError: pipecat-ai (with its eval package) is not installed; the message says how.
    """
    from livejudge.sources.protocols.pipecat import import_pipecat_quietly

    rtvi, serializer = import_pipecat_quietly(("pipecat.processors.frameworks.rtvi.models",
                                               "pipecat.evals.serializer"), INSTALL_HINT)
    return serializer, rtvi


class HandshakeError(ProtocolError):
    """The bot did not answer the eval handshake; ``closed`` tells whether it closed the socket
    (``close_code`` then holds the code, 1006 when no close frame came)."""

    def __init__(self, message: str, closed: bool = False, close_code: int | None = None) -> None:
        super().__init__(message)
        self.closed = closed
        self.close_code = close_code


class PipecatEvalProtocol(Protocol):
    """The eval wire of Pipecat's runner (see module docstring).

    Args:
        in_rate: rate of the user audio sent, Hz (stated in each message; the bot's input
            transport runs at its pipeline rate, 16000 in Pipecat's examples).
        ready_timeout_s: how long to wait for ``bot-ready``, seconds.
    Raises:
        ImportError: pipecat-ai missing.
        ValueError: a rate outside 8–192 kHz.
    """

    name = "pipecat-eval"

    def __init__(self, in_rate: int = 16000, ready_timeout_s: float = BOT_READY_TIMEOUT_S) -> None:
        self.in_rate = check_rate(in_rate, "--in-rate")  # AudioFormatError is a ValueError
        self.ready_timeout_s = ready_timeout_s
        self._ser, self._rtvi = load_eval_models()
        self._label = self._rtvi.MESSAGE_LABEL
        self._next_id = 0
        self.bot_ready: dict[str, Any] | None = None

    # -- messages ----------------------------------------------------------------------------
    def _id(self) -> str:
        self._next_id += 1
        return f"lj-{self._next_id}"

    def connect_message(self) -> str:
        """``eval-connect`` asking the bot to forward its audio (pipecat's own builder)."""
        flags = self._ser.EvalConnectionFlags(skip_tts=False, capture_bot_audio=True, capture_bot_images=False)
        return self._ser.eval_connect_message(flags)

    def client_ready_message(self) -> str:
        data = self._rtvi.ClientReadyData(version=self._rtvi.PROTOCOL_VERSION,
                                          about=self._rtvi.AboutClientData(library="livejudge"))
        return self._rtvi.Message(type="client-ready", id="client-ready", data=data.model_dump()).model_dump_json()

    def cancel_message(self) -> str:
        """``eval-cancel``: the bot cancels its pipeline and its session ends."""
        return self._rtvi.Message(type="client-message", id=self._id(),
                                  data={"t": self._ser.EVAL_CANCEL_MESSAGE_TYPE, "d": {}}).model_dump_json()

    def is_bot_ready(self, message: Message) -> dict | None:
        try:
            d = json.loads(message)
        except (TypeError, ValueError):
            return None
        if isinstance(d, dict) and d.get("label") == self._label and d.get("type") == "bot-ready":
            return d
        return None

    # -- Protocol ----------------------------------------------------------------------------
    async def handshake(self, ws: Any) -> list[Incoming]:
        """Send ``eval-connect`` and ``client-ready``; return once ``bot-ready`` arrives.

        Args:
            ws: an open ``websockets`` client connection.
        Returns:
            Status items for the messages received before ``bot-ready`` (and for it).
        Raises:
            HandshakeError: the bot closed the connection, or sent no ``bot-ready`` in time.
        """
        from websockets.exceptions import ConnectionClosed

        items: list[Incoming] = []
        try:
            await ws.send(self.connect_message())
            await ws.send(self.client_ready_message())
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self.ready_timeout_s
            while True:
                left = deadline - loop.time()
                if left <= 0:
                    raise HandshakeError(f"the bot sent no RTVI bot-ready within {self.ready_timeout_s:.0f} s "
                                         "of client-ready: is RTVI enabled in its PipelineWorker (the default)?")
                try:
                    message = await asyncio.wait_for(ws.recv(), left)
                except asyncio.TimeoutError:
                    continue
                ready = self.is_bot_ready(message)
                if ready is not None:
                    self.bot_ready = ready
                    items.append(Status("rtvi.bot-ready", {"data": ready.get("data")}))
                    return items
                items.extend(i for i in self.decode(message) if isinstance(i, Status))
        except ConnectionClosed as exc:
            rcvd = getattr(exc, "rcvd", None)
            code = int(rcvd.code) if rcvd is not None else 1006
            # the likely mismatch, as the other wire formats name it (a trial: no hint for a plain websocket agent)
            raise HandshakeError(f"the bot closed the connection before bot-ready (close code {code}); is "
                                 "--protocol pipecat-eval its wire format? (the Pipecat runner's /ws eval route; a "
                                 "bot with its own websocket transport speaks --protocol pipecat)",
                                 closed=True, close_code=code) from None

    def encode_audio(self, samples: np.ndarray) -> str:
        return json.dumps({"label": self._label, "type": "raw-audio", "id": self._id(),
                           "data": {"base64Audio": base64.b64encode(float32_to_pcm16(samples)).decode("ascii"),
                                    "sampleRate": self.in_rate, "numChannels": 1}})

    def decode(self, message: Message) -> list[Incoming]:
        if isinstance(message, bytes):
            try:
                message = message.decode("utf-8")
            except UnicodeDecodeError:
                raise ProtocolError("binary message on the eval wire (expected RTVI JSON text); is this "
                                    "/ws-client with protobuf frames? try --protocol pipecat") from None
        try:
            msg = json.loads(message)
        except (ValueError, RecursionError):
            raise ProtocolError(f"not JSON: {message[:60]!r} (the eval wire sends RTVI JSON)") from None
        if not isinstance(msg, dict):
            raise ProtocolError("eval-wire message is not a JSON object")
        if msg.get("label") != self._label:
            if "event" in msg:
                raise ProtocolError(f"got a {msg.get('event')!r} event, not RTVI: this looks like a telephony "
                                    "media stream; try --protocol twilio")
            return [Status("rtvi.unlabelled", {"message": str(msg)[:200]})]
        kind = str(msg.get("type", ""))[:100]
        data = msg.get("data") or {}
        if kind == self._ser.EVAL_BOT_AUDIO_TYPE:
            if not isinstance(data, dict):
                raise ProtocolError(f"eval-bot-audio: \"data\" must be an object, got {type(data).__name__}")
            audio = data.get("audio", "")
            if not isinstance(audio, str):
                raise ProtocolError(f"eval-bot-audio: \"audio\" must be a base64 string, got {type(audio).__name__}")
            try:
                raw = base64.b64decode(audio, validate=True)
            except (binascii.Error, ValueError):
                raise ProtocolError("eval-bot-audio payload is not valid base64") from None
            if not data.get("sampleRate"):
                raise ProtocolError("eval-bot-audio without a sampleRate")
            try:
                rate = check_rate(data.get("sampleRate"), "eval-bot-audio sampleRate")
            except AudioFormatError as exc:
                raise ProtocolError(str(exc)) from None
            if len(raw) % 2:
                raise ProtocolError(f"eval-bot-audio of {len(raw)} bytes is not whole s16le samples")
            return [AgentAudio(pcm16_to_float32(raw), rate)] if raw else []
        if kind == "bot-interrupted":
            return [Interruption("rtvi.bot-interrupted")]
        if len(message) > 10_000:  # a note, never timed: keep the result small
            data = {"truncated_chars": len(message)}
        return [Status(f"rtvi.{kind}", {"data": data} if data else {})]

    def closing(self) -> list[Message]:
        return [self.cancel_message()]
