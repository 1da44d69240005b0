"""Websocket wire formats the attach client speaks (see ``base.Protocol``)."""

from livejudge.sources.protocols.base import (PROTOCOLS, AgentAudio, Incoming, Interruption, Mark, Message, Protocol, ProtocolError,
                   Status, make_protocol)

__all__ = ["PROTOCOLS", "AgentAudio", "Incoming", "Interruption", "Mark", "Message", "Protocol",
           "ProtocolError", "Status", "make_protocol"]
