"""The interface between the attach client and an agent's websocket wire format.

A protocol turns the user's audio into messages and the agent's messages into typed
incoming items. It never decides timing: the attach client stamps everything with the
session clock from the audio (when it was captured, when it was played or arrived).
Status messages (text, transcripts, marks, RTVI events) become ``Status`` items, which the
client records with ``Session.note`` for comparison only.

Audio on the internal side is float32 mono 16 kHz (``livejudge.audio.SAMPLE_RATE``); each
protocol converts at its own edge (s16le at ``in_rate`` for Pipecat, G.711 μ-law 8 kHz for
Twilio).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Union

import numpy as np

Message = Union[str, bytes]


class ProtocolError(ValueError):
    """A message that does not follow the protocol; the text names what was wrong."""


@dataclass(frozen=True, slots=True)
class AgentAudio:
    """Agent audio as it arrived.

    Attributes:
        samples: float32 mono, shape (n_samples,), at ``sample_rate`` Hz, in [-1, 1].
        sample_rate: Hz, as declared by the message (Pipecat) or fixed by the protocol (Twilio).
    """

    samples: np.ndarray
    sample_rate: int


@dataclass(frozen=True, slots=True)
class Interruption:
    """The agent asks the client to drop audio it has not played yet (barge-in handling).

    ``kind`` is the wire name ("pipecat.interruption", "twilio.clear").
    """

    kind: str


@dataclass(frozen=True, slots=True)
class Mark:
    """Twilio ``mark``: the agent wants ``name`` echoed back once the audio before it has played."""

    name: str


@dataclass(frozen=True, slots=True)
class Status:
    """Anything else the agent said (text, transcript, JSON message, stop): logged, never timed."""

    kind: str
    data: dict = field(default_factory=dict)


Incoming = Union[AgentAudio, Interruption, Mark, Status]


class Protocol(ABC):
    """One wire format. Instances hold per-connection state; make a new one per connection.

    Attributes:
        name: "pipecat" or "twilio".
        in_rate: sample rate (Hz) of the user audio sent to the agent.
    """

    name: str = ""
    in_rate: int = 16000

    def opening(self) -> list[Message]:
        """Messages to send right after the websocket opens (e.g. Twilio ``connected``/``start``)."""
        return []

    @abstractmethod
    def encode_audio(self, samples: np.ndarray) -> Message:
        """One chunk of user audio → one message.

        Args:
            samples: float32 mono, shape (n_samples,), already at ``self.in_rate`` Hz.
        """

    @abstractmethod
    def decode(self, message: Message) -> list[Incoming]:
        """One received message → the items it carries (possibly none).

        Raises:
            ProtocolError: the message is not valid for this protocol.
        """

    async def handshake(self, ws) -> list[Incoming]:
        """Exchange run after the websocket opens and before the session clock starts (the eval
        wire waits for the bot's RTVI ``bot-ready``). Returns Status items to note at t=0.

        Raises:
            ProtocolError: the agent did not complete it (the text names why).
        """
        return []

    def mark_played(self, mark: Mark) -> Message | None:
        """The message acknowledging that the audio before ``mark`` was played (Twilio only)."""
        return None

    def closing(self) -> list[Message]:
        """Messages to send before closing the websocket (e.g. Twilio ``stop``)."""
        return []
