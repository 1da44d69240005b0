"""Twilio Media Streams as seen from Twilio's side, so telephony bots can be attached.

Reference: Twilio "Media Streams – WebSocket Messages" (bidirectional streams). Every message
is a JSON text frame. We play Twilio: send ``connected``, ``start`` (mediaFormat
audio/x-mulaw, 8000 Hz, mono), then ``media`` with base64 G.711 μ-law 8 kHz payloads (track
"inbound", ``chunk`` counter, ``timestamp`` in ms since the stream started) and finally
``stop``. The bot sends ``media`` (its audio, μ-law 8 kHz), ``mark`` (echo the name back once
the audio before it has played) and ``clear`` (drop unplayed audio: its barge-in handling).
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid

import numpy as np

from livejudge.audio import float32_to_mulaw, mulaw_to_float32
from livejudge.sources.protocols.base import AgentAudio, Incoming, Interruption, Mark, Message, Protocol, ProtocolError, Status

TWILIO_RATE = 8000
"""G.711 μ-law sample rate of Twilio media streams, Hz."""

MAX_NAME_CHARS = 200
"""Longest event/mark name kept, characters."""

MAX_STATUS_CHARS = 10_000
"""Status messages longer than this are logged by their keys only (they are notes, never timed)."""


def _short(value: object) -> str:
    """A value for an error message: its JSON type and at most 40 characters."""
    kind = {dict: "object", list: "array", str: "string", int: "number", float: "number",
            bool: "boolean", type(None): "null"}.get(type(value), type(value).__name__)
    return f"{kind} {json.dumps(value)[:40]}" if value is not None else "nothing"


class TwilioProtocol(Protocol):
    """Twilio-style media stream client (see module docstring)."""

    name = "twilio"
    in_rate = TWILIO_RATE

    def __init__(self, stream_sid: str | None = None, call_sid: str | None = None) -> None:
        self.stream_sid = stream_sid or "MZ" + uuid.uuid4().hex
        self.call_sid = call_sid or "CA" + uuid.uuid4().hex
        self._chunk = 0
        self._sent_samples = 0

    def opening(self) -> list[Message]:
        return [
            json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"}),
            json.dumps({
                "event": "start", "sequenceNumber": "1", "streamSid": self.stream_sid,
                "start": {"streamSid": self.stream_sid, "callSid": self.call_sid,
                          "accountSid": "AC" + "0" * 32, "tracks": ["inbound"],
                          "customParameters": {"client": "livejudge"},
                          "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": TWILIO_RATE,
                                          "channels": 1}},
            }),
        ]

    def encode_audio(self, samples: np.ndarray) -> str:
        self._chunk += 1
        ts_ms = int(self._sent_samples * 1000 // TWILIO_RATE)
        self._sent_samples += len(samples)
        return json.dumps({
            "event": "media", "sequenceNumber": str(self._chunk + 1), "streamSid": self.stream_sid,
            "media": {"track": "inbound", "chunk": str(self._chunk), "timestamp": str(ts_ms),
                      "payload": base64.b64encode(float32_to_mulaw(samples)).decode("ascii")},
        })

    def decode(self, message: Message) -> list[Incoming]:
        """One Twilio JSON message → items. Every field used is type-checked.

        Raises:
            ProtocolError: not UTF-8 JSON, not an object, or a field of the wrong type
                (``event`` not a string, ``media``/``mark`` not objects, ``payload`` not a
                base64 string, ``mark.name`` not a string); the message names the field.
        """
        if isinstance(message, (bytes, bytearray, memoryview)):
            try:
                message = bytes(message).decode("utf-8")
            except UnicodeDecodeError:
                raise ProtocolError("binary message on a Twilio media stream (expected JSON text); "
                                    "is this a Pipecat protobuf bot? try --protocol pipecat") from None
        if not isinstance(message, str):
            raise ProtocolError(f"Twilio message must be JSON text, got {type(message).__name__}")
        try:
            msg = json.loads(message)
        except (ValueError, RecursionError):
            raise ProtocolError(f"not JSON: {message[:60]!r} (Twilio media streams send JSON text)") from None
        if not isinstance(msg, dict):
            raise ProtocolError("Twilio message is not a JSON object")
        event = msg.get("event")
        if not isinstance(event, str):
            raise ProtocolError(f"Twilio message without a string \"event\" field (got {_short(event)})")
        if event == "media":
            media = msg.get("media")
            if not isinstance(media, dict):
                raise ProtocolError(f"Twilio media message: \"media\" must be an object, got {_short(media)}")
            payload = media.get("payload", "")
            if not isinstance(payload, str):
                raise ProtocolError(f"Twilio media message: \"payload\" must be a base64 string, got {_short(payload)}")
            try:
                raw = base64.b64decode(payload, validate=True)
            except (binascii.Error, ValueError):
                raise ProtocolError("Twilio media payload is not valid base64") from None
            return [AgentAudio(mulaw_to_float32(raw), TWILIO_RATE)] if raw else []
        if event == "clear":
            return [Interruption("twilio.clear")]
        if event == "mark":
            mark = msg.get("mark")
            if not isinstance(mark, dict):
                raise ProtocolError(f"Twilio mark message: \"mark\" must be an object, got {_short(mark)}")
            name = mark.get("name", "")
            if not isinstance(name, (str, int, float)) or isinstance(name, bool):
                raise ProtocolError(f"Twilio mark message: \"name\" must be a string, got {_short(name)}")
            return [Mark(str(name)[:MAX_NAME_CHARS])]
        data = {k: v for k, v in msg.items() if k not in ("event", "media")}
        if len(message) > MAX_STATUS_CHARS:  # logged, not timed: keep the result small
            data = {"keys": sorted(str(k)[:100] for k in data)[:50], "truncated_chars": len(message)}
        return [Status(f"twilio.{event[:MAX_NAME_CHARS]}", data)]

    def mark_played(self, mark: Mark) -> str:
        return json.dumps({"event": "mark", "streamSid": self.stream_sid, "mark": {"name": mark.name}})

    def closing(self) -> list[Message]:
        return [json.dumps({"event": "stop", "streamSid": self.stream_sid,
                            "stop": {"callSid": self.call_sid, "accountSid": "AC" + "0" * 32}})]
