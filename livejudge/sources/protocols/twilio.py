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

from ...audio import float32_to_mulaw, mulaw_to_float32
from .base import AgentAudio, Incoming, Interruption, Mark, Message, Protocol, ProtocolError, Status

TWILIO_RATE = 8000
"""G.711 μ-law sample rate of Twilio media streams, Hz."""


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
        if isinstance(message, bytes):
            try:
                message = message.decode("utf-8")
            except UnicodeDecodeError:
                raise ProtocolError("binary message on a Twilio media stream (expected JSON text); "
                                    "is this a Pipecat protobuf bot? try --protocol pipecat") from None
        try:
            msg = json.loads(message)
        except ValueError:
            raise ProtocolError(f"not JSON: {message[:60]!r} (Twilio media streams send JSON text)") from None
        if not isinstance(msg, dict):
            raise ProtocolError("Twilio message is not a JSON object")
        event = msg.get("event")
        if event == "media":
            payload = (msg.get("media") or {}).get("payload", "")
            try:
                raw = base64.b64decode(payload, validate=True)
            except (binascii.Error, ValueError):
                raise ProtocolError("Twilio media payload is not valid base64") from None
            return [AgentAudio(mulaw_to_float32(raw), TWILIO_RATE)] if raw else []
        if event == "clear":
            return [Interruption("twilio.clear")]
        if event == "mark":
            return [Mark(str((msg.get("mark") or {}).get("name", "")))]
        return [Status(f"twilio.{event}", {k: v for k, v in msg.items() if k not in ("event", "media")})]

    def mark_played(self, mark: Mark) -> str:
        return json.dumps({"event": "mark", "streamSid": self.stream_sid, "mark": {"name": mark.name}})

    def closing(self) -> list[Message]:
        return [json.dumps({"event": "stop", "streamSid": self.stream_sid,
                            "stop": {"callSid": self.call_sid, "accountSid": "AC" + "0" * 32}})]
