"""Websocket wire formats the attach client speaks (see ``base.Protocol``)."""

from livejudge.sources.protocols.base import (AgentAudio, Incoming, Interruption, Mark, Message, Protocol, ProtocolError,
                                              Status)
from livejudge.sources.protocols.registry import PROTOCOLS, make_protocol

__all__ = ["PROTOCOLS", "AgentAudio", "Incoming", "Interruption", "Mark", "Message", "Protocol",
           "ProtocolError", "Status", "make_protocol"]
