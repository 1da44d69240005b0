"""`livejudge attach` and `livejudge demo`: judge a live call with a websocket voice agent.

attach: ``livejudge attach --ws-url ws://localhost:8765`` talks to the agent from your
microphone and speakers (or ``--input-wav``/``--no-playback`` headless) and shows the meter.
demo:   ``livejudge demo`` starts the shipped example agent (``livejudge.agents.demo``, a real
Pipecat pipeline) on a free local port and calls it with a scripted human caller made of
the shipped human recordings that pauses mid-turn, says "mm" and interrupts once
(``livejudge.agents.demo_caller``).

With a microphone and speakers, attach cancels the agent's voice leaking from the speakers into
the microphone (WebRTC AEC3, ``livejudge.timing.echo.EchoCanceller``; ``--no-aec`` turns it off).

Both feed the same Session, meter and result document as ``livejudge score``/``replay``
(``livejudge.commands.runner.run_session``), so a call cut short by a fault or Ctrl-C still writes
its result (``--json``) and event log (``--events``); faults exit with code 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from livejudge.commands.runner import (
    EXIT_OK,
    CLIError,
    add_judge_args,
    add_output_args,
    add_session_args,
    check_outputs,
    events_sink,
    judge_config,
    judge_from_config,
    judge_unavailable,
    output_config,
    run_session,
    session_config,
    transcriber_from_config,
)
from livejudge.config import JudgeConfig, OutputConfig, SourceConfig
from livejudge.session import SessionConfig

def _barge_spec(text: str) -> tuple[int, float]:
    try:
        turn, after = text.split(":")
        t, a = int(turn), float(after)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--barge-in wants TURN:SECONDS like 3:1.5, got {text!r}") from None
    if t < 2:  # turn 1 opens the call (ScriptedCaller starts it at its lead): nothing to barge into
        raise argparse.ArgumentTypeError(f"{text}: TURN must be 2 or more (turn 1 opens the call, there is no "
                                         "agent reply to barge into yet)")
    if not a >= 0:
        raise argparse.ArgumentTypeError(f"{text}: SECONDS must be ≥ 0")
    return t, a


def _add_call_flags(p: argparse.ArgumentParser, demo: bool = False) -> None:
    g = p.add_argument_group("call")
    if not demo:
        g.add_argument("--ws-url", default=None, metavar="URL",
                       help="the agent's websocket, e.g. ws://localhost:8765 (required unless --runner or --list-devices)")
        g.add_argument("--runner", default=None, metavar="URL",
                       help="a bot served by Pipecat's development runner (python bot.py), e.g. http://localhost:7860: "
                            "probes its routes and uses the first that works (eval wire, /ws-client, SmallWebRTC)")
        g.add_argument("--webrtc", default=None, metavar="URL",
                       help="SmallWebRTC, as the runner's browser client does: same as --runner URL --route webrtc "
                            "(needs pip install 'livejudge[webrtc]')")
        g.add_argument("--route", default="auto", choices=("auto", "eval", "ws-client", "webrtc"),
                       help="with --runner: the route to use (auto = the first that works)")
        g.add_argument("--protocol", default="pipecat", choices=("pipecat", "twilio", "pipecat-eval"),
                       help="wire format: Pipecat protobuf frames, Twilio media-stream JSON (μ-law 8 kHz), or "
                            "pipecat-eval (the eval wire of Pipecat's runner on /ws: RTVI raw-audio/eval-bot-audio)")
        g.add_argument("--in-rate", type=int, default=None,
                       help="rate of the user audio sent, Hz (default: pipecat 16000, twilio 8000)")
        g.add_argument("--origin", default=None, help="Origin header (for agents with an Origin allow-list)")
        g.add_argument("--header", dest="headers", action="append", default=None, metavar="'NAME: VALUE'",
                       help="extra handshake header, repeatable, e.g. 'Authorization: Bearer $TOKEN' "
                            "(values are never printed, logged or stored; a token in the URL query is redacted)")
        g.add_argument("--ca-file", default=None, metavar="PEM",
                       help="CA certificate(s) to verify a wss:// agent with (private CA, self-signed); "
                            "default: the system trust store")
        g.add_argument("--insecure", action="store_true",
                       help="wss:// without certificate verification (test setups only)")
        g.add_argument("--reconnect", type=int, default=0, metavar="N",
                       help="reconnect up to N times after a lost, refused or busy connection (backoff 0.5 s, doubling)")
        g.add_argument("--input-wav", nargs="+", default=None, metavar="FILE",
                       help="scripted caller instead of the microphone: several files = turns, each "
                            "starting --pause-s after the agent's reply; one file = played as is")
    g.add_argument("--pause-s", type=float, default=0.8, help="scripted caller: pause after the agent's reply, seconds")
    g.add_argument("--barge-in", type=_barge_spec, action="append", default=None, metavar="TURN:SECONDS",
                   help="scripted caller: start turn TURN that long after the agent starts replying")
    g.add_argument("--duration-s", type=float, default=None, help="end the call after this long, seconds")
    g.add_argument("--silence-timeout-s", type=float, default=20.0,
                   help="fail when nobody has spoken for this long, seconds (0 = never)")
    g.add_argument("--record", default=None, metavar="CALL.wav",
                   help="write both sides, aligned on the session clock (ch 0 user, ch 1 agent, 16 kHz, PCM16), "
                        "as the call goes: a killed call leaves a valid WAV")
    d = p.add_argument_group("audio devices")
    d.add_argument("--no-playback", action="store_true", help="do not play the agent (agent audio timed at arrival)")
    d.add_argument("--jitter-s", type=float, default=0.06, help="jitter buffer before agent audio plays, seconds")
    d.add_argument("--no-aec", action="store_true",
                   help="turn off acoustic echo cancellation (WebRTC AEC3, on by default when the microphone "
                        "is used with playback: removes the agent's voice leaking from the speakers into the mic)")
    if not demo:
        d.add_argument("--input-device", default=None, help="microphone: PortAudio index or name (--list-devices)")
    d.add_argument("--output-device", default=None, help="speakers: PortAudio index or name (--list-devices)")
    d.add_argument("--list-devices", action="store_true", help="print the audio devices and exit")


def register(subparsers) -> None:
    """Add the ``attach`` and ``demo`` subcommands to the ``livejudge`` parser."""
    from livejudge.commands.runner import EXIT_CODES_HELP
    from livejudge.commands.runner import HelpFormatter as _Formatter

    p = subparsers.add_parser(
        "attach", help="judge a live call with a voice agent (its websocket, the Pipecat dev runner, or WebRTC)",
        formatter_class=_Formatter, epilog=EXIT_CODES_HELP,
        description="Talk to a running voice agent and judge the call live. "
                    "Example: livejudge attach --ws-url ws://localhost:8765 "
                    "(headless: --input-wav a.wav b.wav --no-playback --json out.json)")
    _add_call_flags(p)
    add_session_args(p)
    add_judge_args(p)
    add_output_args(p)
    p.set_defaults(func=cmd_attach)

    p = subparsers.add_parser(
        "demo", help="start the example Pipecat agent and call it with a scripted human caller",
        formatter_class=_Formatter, epilog=EXIT_CODES_HELP,
        description="Zero-setup demo: starts livejudge's example agent (a real Pipecat pipeline with "
                    "Silero VAD, offline) on a free local port and attaches to it with recorded human "
                    "speech, showing the live meter. Needs pip install 'livejudge[pipecat]'.")
    g = p.add_argument_group("demo agent")
    from livejudge.agents.demo import BEHAVIOURS, DEFAULT_BEHAVIOUR

    g.add_argument("--behaviour", choices=tuple(BEHAVIOURS), default=DEFAULT_BEHAVIOUR,
                   help="the agent's turn-taking: polite (slow, about 1.2 s, but waits out pauses, holds "
                        "through 'mm-hmm', yields when interrupted), stock (Pipecat's stock VADParams()), rude "
                        "(fast, about 0.3 s, because it cuts into pauses; stops for 'mm', talks through "
                        "interruptions)")
    g.add_argument("--think-s", type=float, default=None,
                   help="the agent's pause before answering, seconds (default: the --behaviour preset's)")
    g.add_argument("--never-yield", action="store_true", help="the agent talks over barge-ins")
    g.add_argument("--agent-log", default=None, metavar="FILE.jsonl", help="the agent's own decision log")
    g.add_argument("--runner", action="store_true",
                   help="run the example bot under Pipecat's development runner (examples/runner_bot.py) and "
                        "attach with --runner (needs pip install 'livejudge[runner]')")
    _add_call_flags(p, demo=True)
    add_session_args(p)
    add_judge_args(p)
    add_output_args(p)
    p.set_defaults(func=cmd_demo, protocol="pipecat", in_rate=None, origin=None, reconnect=0,
                   input_device=None, input_wav=None, ws_url=None, route="auto",
                   headers=None, ca_file=None, insecure=False)


def source_config(args: argparse.Namespace) -> SourceConfig:
    """The call flags of ``attach``/``demo`` (``_add_call_flags``) as a SourceConfig (demo's
    ``--runner`` is a switch, not a URL: ``runner`` stays None; ``_demo_runner`` sets it)."""
    runner = args.runner if isinstance(args.runner, str) and args.runner else None
    return SourceConfig(
        ws_url=args.ws_url, runner=args.webrtc if getattr(args, "webrtc", None) else runner,
        route="webrtc" if getattr(args, "webrtc", None) else args.route, protocol=args.protocol,
        in_rate=args.in_rate, origin=args.origin, headers=tuple(args.headers or ()), ca_file=args.ca_file,
        insecure=bool(args.insecure), reconnect=args.reconnect, input_wav=tuple(args.input_wav or ()),
        pause_s=args.pause_s, barge_in=tuple(args.barge_in or ()), duration_s=args.duration_s,
        silence_timeout_s=args.silence_timeout_s, record=args.record, playback=not args.no_playback,
        jitter_s=args.jitter_s, aec=not args.no_aec, input_device=args.input_device,
        output_device=args.output_device, demo=getattr(args, "command", None) == "demo")


# ------------------------------------------------------------------------------------ commands
def _list_devices() -> int:
    from livejudge.sources.mic import DeviceError, list_devices

    try:
        print(list_devices())
    except DeviceError as exc:
        raise CLIError(str(exc)) from None
    return EXIT_OK


def _source(src: SourceConfig, turns=None):
    """ScriptedSource for --input-wav / the demo, else the microphone. Raises CLIError."""
    from livejudge.audio import AudioFormatError
    from livejudge.sources.ws import ScriptedCaller, ScriptedSource, load_turns

    if turns is None and src.input_wav:
        barge = dict(src.barge_in)
        try:
            turns = load_turns(list(src.input_wav), barge)
        except AudioFormatError as exc:
            raise CLIError(str(exc)) from None
        bad = [t for t in barge if t > len(turns)]
        if bad:
            raise CLIError(f"--barge-in names turn {bad[0]} but only {len(turns)} --input-wav files were given")
    if turns is not None:
        try:
            caller = ScriptedCaller(turns, pause_s=src.pause_s, continuous=len(turns) == 1)
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        return ScriptedSource(caller)
    from livejudge.sources.mic import DeviceError, MicSource

    try:
        return MicSource(src.input_device)
    except DeviceError as exc:
        raise CLIError(str(exc)) from None


def _speaker(src: SourceConfig):
    if not src.playback:
        return None
    from livejudge.sources.mic import HEADLESS_HINT, DeviceError, Speaker

    try:
        return Speaker(src.output_device)
    except DeviceError as exc:
        if src.demo and src.output_device is None:
            # the demo's caller is scripted: without speakers it still runs, timed at arrival
            # the reason alone: the device error's hint names --input-wav, which demo does not take (a trial)
            why = str(exc).replace(f", or {HEADLESS_HINT}", "").split(";")[0]
            print(f"livejudge: no speakers here ({why}); the demo runs without "
                  "playback (agent audio timed at arrival, as with --no-playback)", file=sys.stderr)
            return None
        raise CLIError(str(exc)) from None


def _echo_canceller(src: SourceConfig, source, output):
    """(EchoCanceller or None, the result's ``source.aec`` record). AEC is on when a microphone
    is used with playback (a speakerphone can leak the agent into the mic) unless --no-aec.
    Raises CLIError when it should be on but livekit is missing."""
    from livejudge.sources.ws import ScriptedSource

    mic = not isinstance(source, ScriptedSource)
    if not src.aec:
        return None, {"on": False, "why": "--no-aec"}
    if not mic:
        return None, {"on": False, "why": "scripted caller (no microphone)"}
    if output is None:
        return None, {"on": False, "why": "no playback"}
    from livejudge.timing.echo import EchoCanceller, EchoError

    try:
        return EchoCanceller(), {"on": True, "engine": "WebRTC AEC3 (livekit)"}
    except EchoError as exc:
        raise CLIError(str(exc)) from None


@dataclasses.dataclass(frozen=True)
class _Call:
    """One live call's parsed settings: the source, the pipeline, the judge and the outputs."""

    source: SourceConfig
    session: SessionConfig
    judge: JudgeConfig
    output: OutputConfig


def _parse(args: argparse.Namespace) -> _Call:
    """``attach``/``demo``'s flags, parsed once. Raises CLIError (a bad ``--fail-if``, pipeline flag)."""
    from livejudge.commands.gates import parse_gates

    call = _Call(source_config(args), session_config(args, "live"), judge_config(args), output_config(args))
    parse_gates(call.output.fail_if)
    _check_call_flags(call.source)
    return call


def _check_call_flags(src: SourceConfig) -> None:
    """The call's numbers, before anything is dialled (``--runner`` opens a test connection first).
    Raises CLIError (exit 2, one line in flag names)."""
    checks = (("--pause-s", src.pause_s, "≥ 0 seconds"), ("--jitter-s", src.jitter_s, "≥ 0 seconds"),
              ("--silence-timeout-s", src.silence_timeout_s, "≥ 0 seconds (0 = never)"),
              ("--duration-s", src.duration_s, "positive, seconds"), ("--reconnect", src.reconnect, "≥ 0"))
    for flag, value, want in checks:
        if value is None:
            continue
        ok = value > 0 if flag == "--duration-s" else value >= 0  # NaN fails both
        if not ok:
            raise CLIError(f"{flag} must be {want}, got {value:g}")


def _run_call(call: _Call, url: str, source, *, title: str, extra_info: dict | None = None,
              client_cls=None, protocol_factory=None, url_shown: str | None = None) -> int:
    from livejudge.session import Session
    from livejudge.sources.protocols import make_protocol
    from livejudge.sources.ws import AttachClient, AttachConfig, AttachError, Recorder, parse_header

    src = call.source
    # a bad --json/--events/--report/--record path, or one that is an --input-wav: exit 2 before dialling
    check_outputs(call.output, tuple(src.input_wav), {"--record": src.record})
    client_cls = client_cls or AttachClient  # sources.webrtc passes its SmallWebRTC client
    protocol_factory = protocol_factory or (lambda: make_protocol(src.protocol, src.in_rate))
    try:
        protocol_factory()  # fail early: missing pipecat, bad rate
        headers = tuple(parse_header(h) for h in src.headers)
        config = AttachConfig(url=url, origin=src.origin, jitter_s=src.jitter_s, duration_s=src.duration_s,
                              silence_timeout_s=src.silence_timeout_s, reconnect=src.reconnect,
                              headers=headers, ca_file=src.ca_file, insecure=src.insecure).validate()
    except (ValueError, ImportError) as exc:
        raise CLIError(str(exc)) from None
    unavailable: list = []
    judge = judge_from_config(call.judge, unavailable=unavailable)  # before the speaker and the recording: a
    # wrong --judge-url is exit 2
    output = _speaker(src)
    echo, aec_info = _echo_canceller(src, source, output)
    recorder = Recorder(src.record) if src.record else None  # written as the call goes
    from livejudge.commands.gates import check_gates_measurable, parse_gates

    check_gates_measurable(parse_gates(call.output.fail_if), judge, judge_off=call.judge.kind == "none")  # before the call
    outages = OutageMarks()  # first: the result is marked before the event log's summary is written
    sinks = [s for s in (outages, events_sink(call.output)) if s is not None]
    info = {"sample_rate_in": src.in_rate or (8000 if src.protocol == "twilio" else 16000),
            "channels": {"user": "sent (microphone or --input-wav)", "agent": "received from the websocket"},
            "kind": "attach", "url": url_shown or config.display_url, "protocol": src.protocol,
            "playback": output is not None, "aec": aec_info, "headers": config.header_names,
            "tls": None if config.ssl_context() is None else
            ("unverified (--insecure)" if config.insecure else "verified"),
            **(extra_info or {})}
    transcriber = transcriber_from_config(call.judge, call.output.report, judge) if judge is not None else None
    info["asr"] = transcriber is not None
    session = Session(call.session, judge=judge, sinks=sinks, info=info, transcriber=transcriber)
    judge_unavailable(session, unavailable)
    client = client_cls(session, config, protocol_factory, source, output=output, recorder=recorder, echo=echo)
    outages.stats = client.stats

    def body(stop) -> None:
        client.stop = stop
        try:
            reason = client.run()
        except KeyboardInterrupt:
            client.stop.set()
            raise
        finally:
            caller = getattr(source, "caller", None)
            if caller is not None:
                if hasattr(caller, "finish"):  # played or cut off; the turns never started
                    session.info["caller_not_played"] = caller.finish(client.end_s)
                session.info["caller"] = caller.placed
            if output is not None:
                output.close()
            if recorder is not None:
                session.info["record"] = str(recorder.close())
                # where a later `check --pin-from` finds it, wherever it runs (the path above is as given)
                session.info["record_resolved"] = str(Path(session.info["record"]).resolve())
                if recorder.error is not None:
                    session.info["record_error"] = recorder.error
                    session.errors.append(f"--record: {recorder.error}")  # errors was [] (a re-check)
                    print(f"livejudge: {recorder.error} (the call itself was measured to its end)", file=sys.stderr)
                if recorder.late_s:
                    session.info["record_late_s"] = round(recorder.late_s, 3)
        session.info["ended"] = reason
        caller = getattr(source, "caller", None)
        cut = [t for t in getattr(caller, "placed", ()) if t.get("played") is False]
        left = len(session.info.get("caller_not_played") or ()) + len(cut)
        if left and reason in ("duration", "script done"):  # a failure says it itself; a stop too
            # --duration-s ending the script mid-turn exited 0 with no word of it (a trial); the gates
            # of such a call are no pass (gates.cut_short)
            print(f"livejudge: the call ended ({reason}) with {left} of {len(caller.turns)} scripted turn(s) not played "
                  "to their end (source.caller); raise --duration-s to play the whole script", file=sys.stderr)
        elif left and reason == "stopped":  # Ctrl-C exits 0 (a person ending a call) and had said nothing of them
            names = [str(n) for n in session.info.get("caller_not_played") or ()] + [str(t.get("clip")) for t in cut]
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            print(f"livejudge: stopped with {left} of {len(caller.turns)} scripted turn(s) not played to their end "
                  f"({shown}; source.caller): the result covers the part played, and a --fail-if gate on it fails "
                  "as cut short", file=sys.stderr)

    try:
        code = run_session(session, body, title=title, output=call.output, interrupt_code=EXIT_OK,
                           failure=AttachError)
    finally:
        if recorder is not None and Path(src.record).exists():
            if recorder.error is not None:  # "recording stopped at 1.0 s", then "call recorded to" (a trial)
                print(f"livejudge: {src.record} holds only the first {_recorded_s(src.record, recorder.written_s):.1f} "
                      "s of the call (the recording stopped; see above): exit 1", file=sys.stderr)
            elif recorder.written_s > 0:
                print(f"livejudge: call recorded to {src.record}", file=sys.stderr)
            else:  # "call recorded to" a 44-byte file read as a recording to re-check (a trial)
                print(f"livejudge: {src.record} holds no audio: the call ended before either side spoke",
                      file=sys.stderr)
    # a recording cut by a full disk is an output not written as asked, as --json's and --events' are
    return 1 if code == 0 and recorder is not None and recorder.error is not None else code


def _recorded_s(path: str, written_s: float) -> float:
    """Seconds of audio a cut ``--record`` file holds: its bytes after the 44-byte header, at 16 kHz
    16-bit stereo (the full disk may have taken part of the last write, so the recorder's own count,
    ``written_s``, said 4.0 s of a file holding 3.2 s: a re-check); ``written_s`` where the file
    cannot be read (``/dev/full``)."""
    try:
        if Path(path).is_file():
            from livejudge.audio import SAMPLE_RATE  # the recorder's: 16-bit stereo after a 44-byte header

            return min(written_s, max(0, Path(path).stat().st_size - 44) / (4 * SAMPLE_RATE))
    except OSError:
        pass
    return written_s


class OutageMarks:
    """A Session sink that says (stderr) when the agent's audio ran dry mid-speech
    (``stats.ran_dry``), and marks, in the result, what a lost connection (``--reconnect``) did to
    the timing: the silence of an outage is neither the agent's nor the caller's, yet the Session
    sees only that nobody spoke. Each verdict and transition whose span overlaps an outage of
    ``stats.outages`` (``AttachStats``) gets ``outage: {start_s, end_s}`` and a ``note`` (a
    verdict's ``text`` says it too); ``line`` is the sentence said (stderr) before the summary. The timing
    itself is left as measured (a gap across an outage is still that long on the session clock).
    """

    def __init__(self) -> None:
        self.stats = None
        self.line = ""

    def on_event(self, event: object) -> None:
        pass

    def on_close(self, result: dict) -> None:
        dry = getattr(self.stats, "ran_dry", None) or []
        if dry:  # said, not marked: a caller heard these gaps, so the timing that reads them stands
            print(f"livejudge: the agent's audio ran dry {len(dry)} time(s) while it was talking "
                  f"({sum(g for _, g in dry):.2f} s in all, longest {max(g for _, g in dry):.2f} s, first at "
                  f"{dry[0][0]:.1f} s; source.attach.agent_audio_ran_dry, a HEURISTIC): its stream stalled, "
                  "and the timing reads each gap as the agent's pause", file=sys.stderr)
        spans = [(a, b) for a, b, _ in (getattr(self.stats, "outages", None) or []) if b > a]
        if not spans:
            return
        marked = mark_outages(result, spans)
        total = sum(b - a for a, b in spans)
        where = ", ".join(f"{a:.1f}–{b:.1f} s" for a, b in spans)
        self.line = (f"the connection was down {total:.1f} s in all ({where}; source.attach.outages): "
                     f"{marked} verdict(s) and gap(s) spanning it are marked 'outage' in the result, "
                     "their silence is not the agent's or the caller's")
        # said here, just before the summary line (runner.run_session prints it, and a failure last)
        print(f"livejudge: {self.line}", file=sys.stderr)


def mark_outages(result: dict, spans: list[tuple[float, float]]) -> int:
    """Mark the result's verdicts and transitions overlapping an outage ``(start_s, end_s)`` (pure but
    for mutating ``result``; see ``OutageMarks``). Returns how many were marked."""

    def hit(a: float, b: float):
        return next(((s, e) for s, e in spans if a < e and b > s), None)

    n = 0
    for v in result.get("verdicts") or []:
        t = v.get("t_s")
        if t is None:
            continue
        d = max(v.get("value_s") or 0.0, 0.0)
        # a latency's t_s is the agent's onset and its value the gap before it; every other kind's
        # t_s starts what its value measures (docs in timing/verdicts.py)
        o = hit(t - d, t) if v.get("kind") == "latency" else hit(t, t + d)
        if o is not None:
            note = f"spans a connection outage ({o[0]:.2f}–{o[1]:.2f} s): not the agent's or the caller's timing"
            v.update(outage={"start_s": round(o[0], 3), "end_s": round(o[1], 3)}, note=note)
            if isinstance(v.get("text"), str):
                v["text"] += f" (connection outage {o[0]:.1f}–{o[1]:.1f} s)"
            n += 1
    for tr in result.get("transitions") or []:
        a, b = tr.get("from_offset_s"), tr.get("to_onset_s")
        if a is None or b is None:
            continue
        o = hit(min(a, b), max(a, b))
        if o is not None:
            tr.update(outage={"start_s": round(o[0], 3), "end_s": round(o[1], 3)},
                      note="the gap spans a connection outage: time without the agent, not a pause")
            n += 1
    return n


def cmd_attach(args: argparse.Namespace) -> int:
    if args.list_devices:
        return _list_devices()
    call = _parse(args)
    src = call.source
    if src.runner:
        return _attach_runner(call, _source(src))
    if not src.ws_url:
        raise CLIError("--ws-url is required: the agent's websocket, e.g. --ws-url ws://localhost:8765 "
                       "(or --runner http://localhost:7860 for a bot run by Pipecat's runner; or try `livejudge demo`)")
    source = _source(src)
    from livejudge.sources.ws import redact_url

    return _run_call(call, src.ws_url, source, title=f"attach {redact_url(src.ws_url)}")


def _unreachable(call: _Call, url_shown: str, reason: str, *, title: str, extra_info: dict | None = None) -> int:
    """A call that could not start (no runner, no route into the bot): the result, event log and
    report are written with ``ended: "failed: unreachable"`` and the reason, and it exits 1, as
    an unreachable ``--ws-url`` does (a trial: ``--runner`` to nothing exited 2 and wrote nothing,
    so a CI job lost the JSON it reads)."""
    from livejudge.session import Session
    from livejudge.sources.ws import AttachError

    info = {"channels": {"user": "sent (microphone or --input-wav)", "agent": "received from the runner's bot"},
            "kind": "attach", "url": url_shown, "runner": {"url": url_shown, "route": None}, **(extra_info or {})}
    sinks = [s for s in (events_sink(call.output),) if s is not None]
    session = Session(call.session, judge=None, sinks=sinks, info=info)

    def body(stop) -> None:
        raise AttachError(reason, "unreachable")

    return run_session(session, body, title=title, output=call.output, interrupt_code=EXIT_OK, failure=AttachError)


def _with_protocol(call: _Call, protocol: str) -> _Call:
    return dataclasses.replace(call, source=dataclasses.replace(call.source, protocol=protocol))


def _attach_runner(call: _Call, source, extra_info: dict | None = None, title: str | None = None) -> int:
    """--runner: pick a route into the runner-served bot and call it (see sources/runner_probe.py)."""
    from livejudge.sources.runner_probe import RouteError, pick_route
    from livejudge.sources.ws import redact_url

    src = call.source
    if src.ws_url:
        raise CLIError("give either --runner or --ws-url, not both")
    check_outputs(call.output, tuple(src.input_wav), {"--record": src.record})  # exit 2 before dialling
    from livejudge.sources.diagnose import check_runner_url, http_base

    try:
        note = check_runner_url(src.runner, "--webrtc" if src.route == "webrtc" else "--runner")
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if note:
        print(f"livejudge: {note}", file=sys.stderr)
    try:
        route = pick_route(src.runner, None if src.route == "auto" else src.route, origin=src.origin)
    except RouteError as exc:  # the line failed, as an unreachable --ws-url: a result saying so, exit 1
        return _unreachable(call, redact_url(src.runner), str(exc),
                            title=title or f"attach --runner {redact_url(src.runner)}", extra_info=extra_info)
    except (ValueError, ImportError) as exc:
        raise CLIError(str(exc)) from None

    shown = redact_url(route.url)
    # a ?token=… in the URL is a credential: never printed or stored; an unused path is not shown
    runner = redact_url(http_base(src.runner) if note else src.runner)
    print(f"livejudge: runner at {runner}: using {route.why} at {shown}", file=sys.stderr)
    info = {"runner": {"url": runner, "route": route.name}, **(extra_info or {})}
    if route.name == "webrtc":
        from livejudge.sources.webrtc import webrtc_route

        rtc = webrtc_route(route.url)
        return _run_call(_with_protocol(call, rtc.protocol), rtc.placeholder_url, source,
                         title=title or f"attach --runner {runner} (webrtc)",
                         extra_info={**rtc.info, **info}, client_cls=rtc.client_cls,
                         protocol_factory=rtc.protocol_factory, url_shown=shown)
    return _run_call(_with_protocol(call, route.protocol), route.url, source,
                     title=title or f"attach --runner {runner} ({route.name})", extra_info=info, url_shown=shown)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago on ``host``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def start_demo_agent(port: int, *, think_s: float | None = 0.5, never_yield: bool = False, log: str | None = None,
                     protocol: str = "pipecat", extra: list[str] | None = None,
                     timeout_s: float = 60.0) -> subprocess.Popen:
    """Start ``python -m livejudge.agents.demo`` on 127.0.0.1:``port`` and wait until it listens
    (``think_s=None``: the agent's own default, or its ``--behaviour`` preset in ``extra``).

    Raises:
        CLIError: it exited or did not get ready within ``timeout_s`` (its last stderr line shown).
    """
    cmd = [sys.executable, "-m", "livejudge.agents.demo", "--host", "127.0.0.1", "--port", str(port),
           *(["--think-s", str(think_s)] if think_s is not None else []), "--protocol", protocol, "--once",
           *(extra or [])]
    if never_yield:
        cmd.append("--never-yield")
    if log:
        cmd += ["--log", log]
    from livejudge.agents.child import popen_child

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # its own session: a terminal's Ctrl-C stops livejudge, which then ends the call and the agent
    proc = popen_child(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + timeout_s
    assert proc.stdout is not None
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                err = (proc.stderr.read() if proc.stderr else "").strip().splitlines()
                raise CLIError(f"the demo agent exited: {err[-1] if err else 'no message'}", 1)
            if sel.select(timeout=0.2):
                line = proc.stdout.readline()
                if line.startswith("LIVEJUDGE_AGENT_READY"):
                    return proc
    except BaseException:  # Ctrl-C or SIGTERM while it starts: leave no agent behind
        stop_agent(proc)
        raise
    stop_agent(proc)
    raise CLIError(f"the demo agent did not start within {timeout_s:.0f} s", 1)


def stop_agent(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def cmd_demo(args: argparse.Namespace) -> int:
    if args.list_devices:
        return _list_devices()
    import importlib.util

    if importlib.util.find_spec("pipecat") is None:  # checked without importing (its import logs a banner)
        raise CLIError("livejudge demo runs a Pipecat agent: pip install 'livejudge[pipecat]'")
    from livejudge.agents.demo_caller import demo_turns

    call = _parse(args)
    try:
        turns = demo_turns(dict(args.barge_in) if args.barge_in else None)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    source = _source(call.source, turns)
    port = free_port()
    print(DEMO_VOICE_NOTE, file=sys.stderr)
    _say_what_to_expect(args)
    if args.runner:  # demo's --runner is a switch: run the bot under Pipecat's runner
        return _demo_runner(call, args, source, port)
    agent = _demo_agent_info(args)
    print(f"livejudge: starting the example Pipecat agent on ws://127.0.0.1:{port} ({_describe(agent)})…",
          file=sys.stderr)
    proc = start_demo_agent(port, think_s=args.think_s, never_yield=args.never_yield, log=args.agent_log,
                            extra=["--behaviour", args.behaviour])
    try:
        return _run_call(call, f"ws://127.0.0.1:{port}", source, title=f"demo ({agent['behaviour']} agent)",
                         extra_info={"demo_agent": agent})
    finally:
        stop_agent(proc)


DEMO_VOICE_NOTE = ("livejudge: the example agent speaks with espeak-ng, a voice family the default head was fitted "
                   "on: its low P(human) shows the meter at work, not how the judge does on your agent's voice "
                   "(docs/judge.md)")
"""Said once at the demo's start (a new user read the demo's P(human) as evidence of the judge's validity)."""


def _demo_agent_info(args: argparse.Namespace) -> dict:
    """The demo agent's behaviour preset with ``--think-s``/``--never-yield`` applied (result's ``demo_agent``)."""
    from livejudge.agents.demo import behaviour_settings

    return {"behaviour": args.behaviour, **behaviour_settings(args.behaviour, think_s=args.think_s),
            "never_yield": args.never_yield}


def _say_what_to_expect(args: argparse.Namespace) -> None:
    """Say what the --behaviour preset should show (a new user compared polite and rude by latency
    alone and took rude for the better agent). Nothing with --think-s or --never-yield (not a preset)."""
    from livejudge.agents.demo import BEHAVIOUR_SHOWS

    if args.never_yield or args.think_s is not None:
        return
    other = "rude" if args.behaviour != "rude" else "polite"
    # polite is the baseline (the first column), as in the README, whichever ran first
    first, second = (other, args.behaviour) if other == "polite" else (args.behaviour, other)
    print(f"livejudge: the caller pauses mid-turn, says \"mm\" and interrupts once; the {args.behaviour} agent "
          f"is {BEHAVIOUR_SHOWS[args.behaviour]}. To see the difference, keep this call with --json "
          f"{args.behaviour}.json, run again with --behaviour {other} --json {other}.json, then: livejudge compare "
          f"{first}.json {second}.json",
          file=sys.stderr)


def _describe(agent: dict) -> str:
    return (f"{agent['behaviour']}: think {agent['think_s']:.2f} s after a {agent['vad_stop_s']:.1f} s silence"
            + (", never yields" if agent["never_yield"] else ""))


def _demo_runner(call: _Call, args: argparse.Namespace, source, port: int) -> int:
    """`demo --runner`: examples/runner_bot.py under Pipecat's runner, attached with --runner."""
    from livejudge.sources.runner_probe import start_runner_bot

    agent = _demo_agent_info(args)
    extra = (["--behaviour", args.behaviour] + (["--think-s", str(args.think_s)] if args.think_s is not None else [])
             + (["--never-yield"] if args.never_yield else []))
    print(f"livejudge: starting examples/runner_bot.py under Pipecat's runner on http://127.0.0.1:{port} "
          f"({_describe(agent)})…", file=sys.stderr)
    try:
        proc = start_runner_bot(port, log=args.agent_log, extra=extra)
    except (RuntimeError, FileNotFoundError) as exc:
        raise CLIError(str(exc), 1) from None
    call = dataclasses.replace(call, source=dataclasses.replace(call.source, runner=f"http://127.0.0.1:{port}"))
    try:
        return _attach_runner(call, source, title="demo · example bot under Pipecat's runner",
                              extra_info={"demo_agent": {**agent, "runner_bot": True}})
    finally:
        stop_agent(proc)
