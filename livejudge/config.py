"""The command line's settings as frozen dataclasses: parsed once at the edge, then passed down.

``livejudge.commands`` turns the argparse ``Namespace`` into these (``commands.runner``:
``judge_config``, ``output_config``, ``call_config``; ``commands.attach``: ``source_config``)
and nothing below the commands room ever sees a ``Namespace`` (issue 21;
``tests/test_import_graph.py`` checks it). They live at the centre, beside ``session``, so
sources, outputs and the judge loaders can import them without importing the commands room.

The pipeline's own settings are ``livejudge.session.SessionConfig`` (window, interval, VAD,
turns). Every field here is named after its flag (``--judge-url`` → ``JudgeConfig.url``,
``--no-playback`` → ``SourceConfig.playback`` negated); units are in the names (seconds, Hz).
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_QWEN_MODEL = "Qwen/Qwen2.5-Omni-7B"


@dataclass(frozen=True)
class JudgeConfig:
    """Which judge and which speech recognition (``--judge``, ``--head``, ``--device``,
    ``--qwen-model``, ``--judge-url``, ``--asr``, ``--asr-model``).

    Attributes:
        kind: "auto", "acoustic", "whisper", "qwen-omni" or "none" (no judge: timing only).
        head: head checkpoint directory, or None for the kind's shipped head.
        device: torch device of the backbone: "auto", "cpu", "cuda", "cuda:1"...
        qwen_model: Qwen2.5-Omni model id or local path (kind "qwen-omni").
        url: a judge service (``livejudge serve-judge``) to judge on instead of here, or None.
        asr: "auto", "on" or "off": transcribe the agent's turns for the text dimensions.
        asr_model: local faster-whisper model directory, or None for the default.
    """

    kind: str = "auto"
    head: str | None = None
    device: str = "auto"
    qwen_model: str = DEFAULT_QWEN_MODEL
    url: str | None = None
    asr: str = "auto"
    asr_model: str | None = None


@dataclass(frozen=True)
class OutputConfig:
    """Where the result goes (``--json``, ``--events``, ``--report``, ``--display``,
    ``--fail-if``, ``--junit``).

    Attributes:
        json_out: result document path, "-" for stdout, or None.
        events: event log path (JSON lines), or None.
        report: HTML report path, or None.
        display: live meter: "auto", "rich", "plain" or "none".
        fail_if: ``--fail-if`` gate texts, e.g. ("latency_p90_s>1.2",).
        junit: JUnit XML path for the gate results, or None.
        announce_json: say where the result was written (off when the file is a command's own
            scratch copy, e.g. ``probe`` without ``--json``).
        announce_junit: say where the gates' JUnit file was written (off for ``probe``, which
            puts that file into its own ``--junit`` and says where that went).
    """

    json_out: str | None = None
    events: str | None = None
    report: str | None = None
    display: str = "auto"
    fail_if: tuple[str, ...] = ()
    junit: str | None = None
    announce_json: bool = True
    announce_junit: bool = True


@dataclass(frozen=True)
class CallConfig:
    """A recorded call (``score``/``replay``: FILE or ``--user``/``--agent``, the channels,
    ``--echo-gate``).

    Attributes:
        file: stereo recording, or None with ``user``/``agent``.
        user, agent: each side as its own file, or None.
        user_channel, agent_channel: channel indices in ``file``.
        echo_gate: "auto", "on" or "off": remove agent leakage from the user channel.
    """

    file: str | None = None
    user: str | None = None
    agent: str | None = None
    user_channel: int = 0
    agent_channel: int = 1
    echo_gate: str = "auto"


@dataclass(frozen=True)
class SourceConfig:
    """A live call (``attach``/``demo``): the agent, the wire, the caller and the audio devices.

    Attributes:
        ws_url: the agent's websocket, or None (``--runner``/``--webrtc``).
        runner: a bot served by Pipecat's development runner (http URL), or None.
        route: with ``runner``: "auto", "eval", "ws-client" or "webrtc".
        protocol: wire format: "pipecat", "twilio", "pipecat-eval" (or "webrtc" once chosen).
        in_rate: rate of the user audio sent, Hz; None = the protocol's own.
        origin: Origin header, or None.
        headers: extra handshake headers as given ("NAME: VALUE"; never printed or stored).
        ca_file: CA certificate(s) for wss://, or None for the system store.
        insecure: wss:// without certificate verification.
        reconnect: reconnections after a lost, refused or busy connection.
        input_wav: scripted caller files (turns), or () for the microphone.
        pause_s: scripted caller's pause after the agent's reply, seconds.
        barge_in: ((turn, seconds after the agent starts), ...) for the scripted caller.
        duration_s: end the call after this long, seconds, or None.
        silence_timeout_s: fail when nobody has spoken this long, seconds (0 = never).
        record: write both sides here (16 kHz stereo), or None.
        playback: play the agent's audio on the speakers.
        jitter_s: jitter buffer before agent audio plays, seconds.
        aec: acoustic echo cancellation when a microphone is used with playback.
        input_device, output_device: PortAudio index or name, or None for the default.
        demo: the call is ``livejudge demo``'s (no speakers → runs without playback).
    """

    ws_url: str | None = None
    runner: str | None = None
    route: str = "auto"
    protocol: str = "pipecat"
    in_rate: int | None = None
    origin: str | None = None
    headers: tuple[str, ...] = ()
    ca_file: str | None = None
    insecure: bool = False
    reconnect: int = 0
    input_wav: tuple[str, ...] = ()
    pause_s: float = 0.8
    barge_in: tuple[tuple[int, float], ...] = ()
    duration_s: float | None = None
    silence_timeout_s: float = 20.0
    record: str | None = None
    playback: bool = True
    jitter_s: float = 0.06
    aec: bool = True
    input_device: str | None = None
    output_device: str | None = None
    demo: bool = False
