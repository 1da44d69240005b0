"""The eval wire codec against pipecat-ai's own serializers (no runner, no network: fast)."""

from __future__ import annotations

import asyncio
import base64
import json

import numpy as np
import pytest

pytest.importorskip("pipecat")

from livejudge.sources.protocols import AgentAudio, Interruption, ProtocolError, Status, make_protocol  # noqa: E402


def _proto():
    return make_protocol("pipecat-eval")


def test_bot_audio_from_pipecats_eval_serializer():
    from pipecat.evals.serializer import EvalSerializer
    from pipecat.frames.frames import OutputAudioRawFrame

    ser = EvalSerializer()
    ser.set_capture_audio(True)  # what eval-connect's capture_bot_audio turns on in the bot
    x = (np.sin(np.arange(960) / 5) * 0.5).astype(np.float32)
    pcm = (x * 32767).astype("<i2").tobytes()
    wire = asyncio.run(ser.serialize(OutputAudioRawFrame(audio=pcm, sample_rate=24000, num_channels=1)))
    (item,) = _proto().decode(wire)
    assert isinstance(item, AgentAudio) and item.sample_rate == 24000 and item.samples.size == 960
    assert np.max(np.abs(item.samples - x)) < 2 / 32768


def test_user_audio_is_what_pipecats_rtvi_client_sends():
    from pipecat.frames.frames import OutputAudioRawFrame
    from pipecat.serializers.rtvi_client import RTVIClientSerializer

    x = (np.cos(np.arange(320) / 7) * 0.25).astype(np.float32)
    ours = json.loads(_proto().encode_audio(x))
    pcm = base64.b64decode(ours["data"]["base64Audio"])
    theirs = json.loads(asyncio.run(RTVIClientSerializer().serialize(
        OutputAudioRawFrame(audio=pcm, sample_rate=16000, num_channels=1))))
    assert ours["label"] == theirs["label"] == "rtvi-ai" and ours["type"] == theirs["type"] == "raw-audio"
    assert ours["data"] == theirs["data"]
    assert np.max(np.abs(np.frombuffer(pcm, "<i2") / 32768 - x)) < 1.01 / 32768


def test_handshake_and_cancel_messages_parse_as_pipecat_does():
    from pipecat.evals.serializer import EvalSerializer, parse_eval_connect
    from pipecat.frames.frames import CancelWorkerFrame

    p = _proto()
    flags = parse_eval_connect(json.loads(p.connect_message()))
    assert flags is not None and flags.capture_bot_audio and not flags.skip_tts
    assert isinstance(asyncio.run(EvalSerializer().deserialize(p.closing()[0])), CancelWorkerFrame)
    ready = json.loads(p.client_ready_message())
    assert ready["type"] == "client-ready" and ready["data"]["version"].count(".") == 2


def test_interruption_and_notes():
    p = _proto()
    (it,) = p.decode(json.dumps({"label": "rtvi-ai", "type": "bot-interrupted"}))
    assert isinstance(it, Interruption)
    (st,) = p.decode(json.dumps({"label": "rtvi-ai", "type": "bot-tts-text", "data": {"text": "hi"}}))
    assert isinstance(st, Status) and st.kind == "rtvi.bot-tts-text" and st.data == {"data": {"text": "hi"}}


@pytest.mark.parametrize("message, words", [
    (b"\x0a\x03abc\xff", "--protocol pipecat"),
    (json.dumps({"event": "media", "media": {}}), "--protocol twilio"),
    ("not json", "RTVI JSON"),
    (json.dumps({"label": "rtvi-ai", "type": "eval-bot-audio", "data": {"audio": "AAAA"}}), "sampleRate"),
])
def test_wrong_wire_names_the_fix(message, words):
    with pytest.raises(ProtocolError, match=words.replace("-", r"\-")):
        _proto().decode(message)


def test_a_bot_that_closes_before_bot_ready_names_the_wire_format():
    """A plain websocket agent attached with --protocol pipecat-eval closes the connection before
    bot-ready: the error now names the likely mismatch, as the other wire formats do (a trial)."""
    from websockets.exceptions import ConnectionClosedOK
    from websockets.frames import Close

    from livejudge.sources.protocols.pipecat_eval import HandshakeError

    class Closed:
        async def send(self, _):
            pass

        async def recv(self):
            raise ConnectionClosedOK(Close(1000, ""), Close(1000, ""), True)

    with pytest.raises(HandshakeError, match=r"close code 1000\); is --protocol pipecat-eval its wire format\?"):
        asyncio.run(_proto().handshake(Closed()))
