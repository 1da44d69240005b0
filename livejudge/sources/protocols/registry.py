"""The registry of websocket wire formats: a name ("pipecat", "twilio", "pipecat-eval") → its
``Protocol``.

It sits outside ``base`` so that the protocols import ``base`` and ``base`` imports none of
them back (issue 21: no import circles); ``livejudge.sources.protocols`` re-exports both names.
"""

from __future__ import annotations

from livejudge.sources.protocols.base import Protocol


def make_protocol(name: str, in_rate: int | None = None) -> Protocol:
    """The protocol called ``name`` ("pipecat", "twilio" or "pipecat-eval").

    Args:
        in_rate: user-audio rate in Hz; None = the protocol's own (Pipecat 16000, Twilio 8000).
    Raises:
        ValueError: unknown name, or a rate the protocol cannot use.
        ImportError: ``pipecat`` without pipecat-ai installed (message gives the pip command).
    """
    if name == "pipecat":
        from livejudge.sources.protocols.pipecat import PipecatProtocol

        return PipecatProtocol(in_rate=in_rate or 16000)
    if name == "twilio":
        from livejudge.sources.protocols.twilio import TwilioProtocol

        if in_rate not in (None, 8000):
            raise ValueError(f"--protocol twilio always sends μ-law at 8000 Hz; drop --in-rate {in_rate}")
        return TwilioProtocol()
    if name == "pipecat-eval":
        from livejudge.sources.protocols.pipecat_eval import PipecatEvalProtocol

        return PipecatEvalProtocol(in_rate=in_rate or 16000)
    raise ValueError(f"unknown --protocol {name!r}: use 'pipecat', 'twilio' or 'pipecat-eval'")


PROTOCOLS = ("pipecat", "twilio", "pipecat-eval")
