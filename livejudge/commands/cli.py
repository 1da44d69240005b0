"""`livejudge` command line: parse → config → Session. Thin on purpose.

Commands: replay, score (here); attach, demo (livejudge.commands.attach); train, eval
(livejudge.commands.train). Run ``livejudge COMMAND --help`` for each.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from pathlib import Path

from livejudge import __version__
from livejudge.commands.train import register as register_training
from livejudge.commands.runner import (
    EXIT_CODES_HELP,
    EXIT_USAGE,
    CLIError,
    HelpFormatter,
    SignalExit,
    add_judge_args,
    add_output_args,
    add_session_args,
    check_distinct_sides,
    check_outputs,
    events_sink,
    judge_config,
    judge_from_config,
    judge_unavailable,
    output_config,
    raise_on_terminate,
    run_session,
    session_config,
    transcriber_from_config,
)
from livejudge.config import CallConfig, JudgeConfig, OutputConfig
from livejudge.session import SessionConfig

# Modules that add their own subcommands with ``register(subparsers)``; train/eval
# (livejudge.commands.train) are registered in build_parser with this CLI's formatter.
COMMAND_MODULES = [
    "livejudge.commands.attach",
    "livejudge.commands.report",
    "livejudge.commands.compare",
    "livejudge.commands.check",
    "livejudge.commands.probe",
    "livejudge.commands.serve_judge",
]


_Formatter = HelpFormatter


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line with a pointer to --help (not the whole usage block)."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _add_call_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", help="stereo recording of the call (user and agent on separate channels)")
    p.add_argument("--user", default=None, metavar="A.wav", help="the user's side as its own file (with --agent)")
    p.add_argument("--agent", default=None, metavar="B.wav", help="the agent's side as its own file (with --user)")
    p.add_argument("--user-channel", type=int, default=0, help="channel index of the user in FILE")
    p.add_argument("--agent-channel", type=int, default=1, help="channel index of the agent in FILE")
    from livejudge.timing.echo import ECHO_PROBE_S, ECHO_WHOLE_MAX_S  # the help says what the code does

    p.add_argument("--echo-gate", default="auto", choices=("auto", "on", "off"),
                   help="remove the agent's voice leaking into the user channel (speakerphone echo), using the "
                        "agent channel as reference; auto = when leakage is detected (correlation ≥ 0.4; "
                        f"in the first {ECHO_PROBE_S:g} s of calls over {ECHO_WHOLE_MAX_S:g} s); off = never gated, "
                        "leakage found is warned (echo_ungated)")


def call_config(args: argparse.Namespace) -> CallConfig:
    """The recorded-call flags (``_add_call_args``) as a CallConfig."""
    return CallConfig(file=args.file, user=args.user, agent=args.agent, user_channel=args.user_channel,
                      agent_channel=args.agent_channel, echo_gate=getattr(args, "echo_gate", "off"))


def _open_call(call: CallConfig):
    """The call as a CallReader: read block by block, so memory does not grow with the file."""
    from livejudge.audio import AudioFormatError, open_call

    if call.file is None and call.user is None and call.agent is None:
        raise CLIError("no input: give a stereo FILE, or --user A.wav --agent B.wav "
                       "(try examples/example_call.wav)")
    check_distinct_sides(call.user, call.agent)
    try:
        return open_call(call.file, user=call.user, agent=call.agent,
                         user_channel=call.user_channel, agent_channel=call.agent_channel)
    except AudioFormatError as exc:
        raise CLIError(str(exc)) from exc


def _parse_speed(text: str) -> float | None:
    if text == "max":
        return None
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--speed must be a number or 'max', got {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"--speed must be positive, got {text}")
    return v


def _run_file(args: argparse.Namespace, *, speed: float | None, judge_mode: str, progress: bool,
              kind: str = "score") -> int:
    """Parse the flags once into configs, then run the call from the file they name."""
    from livejudge.audio import AudioFormatError
    from livejudge.commands.gates import parse_gates

    output = output_config(args)
    parse_gates(output.fail_if)  # a bad --fail-if is a usage error before the call, not after it
    call_cfg = call_config(args)
    # so is an output path that cannot be written, or that is the recording
    check_outputs(output, (call_cfg.file, call_cfg.user, call_cfg.agent))
    session_cfg, judge_cfg = session_config(args, judge_mode), judge_config(args)  # flag errors before input ones
    reader = _open_call(call_cfg)  # read block by block: memory does not grow with the file
    try:
        from livejudge.sources.recording import UnmeasurableRecording, prepare_recording

        try:  # input health (issue 20), refusal, echo gate: livejudge/sources/recording.py
            prepared = prepare_recording(reader, call_cfg.echo_gate)
        except UnmeasurableRecording as exc:  # one line, exit 2, no result that would pretend otherwise
            raise CLIError(f"{call_cfg.file or call_cfg.user}: {exc}") from None
        except AudioFormatError as exc:  # undecodable from its first block (a traceback; a trial): nothing measured
            raise CLIError(str(exc)) from None
        return _run_call(call_cfg, session_cfg, judge_cfg, output, prepared,
                         speed=speed, progress=progress, failure=AudioFormatError, kind=kind)
    finally:
        reader.close()


def _files_info(file, user, agent) -> dict:
    """The result's ``source.file``/``file_resolved`` (and ``agent_file`` for a call given one side
    per file: ``file`` is then the user's), as ``batch.score_call`` records them."""
    path = file if file else user
    out = {"file": path, "file_resolved": str(Path(path).resolve()) if path else None}
    if not file and agent:
        out["agent_file"] = str(agent)
    return out


def _run_call(call_cfg: CallConfig, config: SessionConfig, judge_cfg: JudgeConfig, output: OutputConfig, prepared,
              *, speed: float | None, progress: bool, failure: type[BaseException], kind: str = "score") -> int:
    from livejudge.session import Session, stream_call

    from livejudge.commands.gates import check_gates_measurable, parse_gates

    call, gate_info = prepared.call, prepared.gate_info
    unavailable: list = []
    judge = judge_from_config(judge_cfg, recorded=True, unavailable=unavailable)
    check_gates_measurable(parse_gates(output.fail_if), judge, judge_off=judge_cfg.kind == "none")  # before the call
    sinks = [s for s in (events_sink(output),) if s is not None]
    info = {"sample_rate_in": call.sample_rate_in, "channels": call.channels,
            "kind": kind,  # the command: replay --speed max was titled "score" on its meter (a trial)
            # one side per file: the user's file, and agent_file (a trial's result named neither), as a batch does
            **_files_info(call_cfg.file, call_cfg.user, call_cfg.agent),
            "speed": "max" if speed is None else speed, "echo_gate": gate_info}
    transcriber = transcriber_from_config(judge_cfg, output.report, judge) if judge is not None else None
    info["asr"] = transcriber is not None
    session = Session(config, judge=judge, sinks=sinks, info=info, transcriber=transcriber)
    judge_unavailable(session, unavailable)
    prepared.start(session)
    name = Path(call_cfg.file).name if call_cfg.file else f"{Path(call_cfg.user).name} + {Path(call_cfg.agent).name}"
    title = f"{info['kind']} {name}"

    def body(stop) -> None:
        if progress and call.duration_s > 60 and sys.stderr.isatty():
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            with Progress(TextColumn("scoring"), BarColumn(), TextColumn("{task.completed:.0f}/{task.total:.0f} s"),
                          TimeRemainingColumn(), transient=True) as bar:
                task = bar.add_task("score", total=call.duration_s)
                stream_call(session, call, speed=speed, stop=stop,
                            on_progress=lambda t: bar.update(task, completed=t))
        elif progress and call.duration_s > 60:  # piped (CI): a plain line now and then, never silent for
            # minutes (a trial: a 60-minute call printed nothing for 158 s, which CI services stop)
            stream_call(session, call, speed=speed, stop=stop,
                        on_progress=PlainProgress(name, call.duration_s))
        else:
            stream_call(session, call, speed=speed, stop=stop)
        prepared.finish(session)  # a cut-off file, samples clipped or zeroed: input-health warnings

    return run_session(session, body, title=title, output=output, failure=failure)


PLAIN_PROGRESS_S = 30.0
"""Seconds of wall time between two progress lines of a long ``score`` whose stderr is not a terminal."""


class PlainProgress:
    """``stream_call``'s ``on_progress`` for a stderr that is not a terminal: one line every
    ``PLAIN_PROGRESS_S`` of wall time, "livejudge: scoring NAME: 600/3600 s (17 %), about 2 min left"
    (the time left from the pace so far)."""

    def __init__(self, name: str, total_s: float, every_s: float = PLAIN_PROGRESS_S) -> None:
        import time

        self.name, self.total_s, self.every_s = name, float(total_s), float(every_s)
        self._t0 = self._last = time.monotonic()

    def __call__(self, t_s: float) -> None:
        import time

        now = time.monotonic()
        if now - self._last < self.every_s or t_s <= 0:
            return
        self._last = now
        left_s = (now - self._t0) * max(0.0, self.total_s - t_s) / t_s
        left = f"about {left_s / 60:.0f} min left" if left_s >= 90 else f"about {left_s:.0f} s left"
        from livejudge.outputs.guard import clean

        try:
            print(clean(f"livejudge: scoring {self.name}: {t_s:.0f}/{self.total_s:.0f} s "
                        f"({100 * t_s / self.total_s:.0f} %), {left}"), file=sys.stderr, flush=True)
        except (OSError, ValueError):  # stderr closed: the result is what matters
            pass


def cmd_replay(args: argparse.Namespace) -> int:
    # unpaced (--speed max) there is no live audio to protect: judge every window, as score does
    mode = "every" if args.speed is None else "live"
    return _run_file(args, speed=args.speed, judge_mode=mode, progress=False, kind="replay")


def cmd_score(args: argparse.Namespace) -> int:
    from livejudge.commands.batch import cmd_score_batch, is_batch_input

    if is_batch_input(args.file) or args.out_dir is not None or getattr(args, "ray", None) is not None:
        return cmd_score_batch(args)
    batch_only = [f for f, on in (("--jobs", getattr(args, "jobs", 1) != 1),
                                  ("--gate-each", getattr(args, "gate_each", False))) if on]
    if batch_only:  # ignored without a word on one file (a trial)
        print(f"livejudge: note: {' and '.join(batch_only)} {'apply' if len(batch_only) > 1 else 'applies'} to a "
              "batch (a folder, a manifest or --out-dir); one call is scored alone", file=sys.stderr)
    return _run_file(args, speed=None, judge_mode="every", progress=True)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="livejudge",
        description="Judge a conversation with a speech-to-speech voice agent while it happens: "
                    "turn timing from the audio, and the ODL human-likeness judge.",
        formatter_class=_Formatter, epilog=EXIT_CODES_HELP,
    )
    from livejudge.judge.model.head import head_label
    from livejudge.judge.model.judge import DEFAULT_WHISPER_HEAD

    # the package's version and the default judge head's are separate (a head ships on its own):
    # a new user read "livejudge 0.1.0" beside "whisper-fitted 0.2.0" as a mismatch
    parser.add_argument("--version", action="version",
                        version=f"livejudge {__version__} (default judge head: {head_label(DEFAULT_WHISPER_HEAD)})")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("replay", help="stream a recorded call through the pipeline in real time, with the meter",
                       formatter_class=_Formatter, epilog=EXIT_CODES_HELP,
                       description="Replay a recorded call as if it were live: VAD, turn timing and the judge, "
                                   "with the live meter. Example: livejudge replay examples/example_call.wav")
    _add_call_args(p)
    p.add_argument("--speed", type=_parse_speed, default=1.0, help="1 = real time, 2 = twice as fast, max = no pacing")
    add_session_args(p)
    add_judge_args(p)
    add_output_args(p)
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("score", help="run the same pipeline as fast as possible and write the result",
                       formatter_class=_Formatter, epilog=EXIT_CODES_HELP,
                       description="Score a recorded call (every window judged). "
                                   "Example: livejudge score call.wav --json result.json\n"
                                   "Many calls: livejudge score calls/ --out-dir results/ --jobs 2 "
                                   "(a directory, a glob or a manifest file)")
    _add_call_args(p)
    from livejudge.commands.batch import add_batch_args

    add_batch_args(p)
    add_session_args(p)
    add_judge_args(p)
    add_output_args(p)
    p.set_defaults(func=cmd_score, display="none")
    for action in p._actions:  # score prints no meter unless asked
        if action.dest == "display":
            action.default = "none"

    register_training(sub, formatter_class=_Formatter)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


ONE_CALL_COMMANDS = ("score", "check", "replay")
"""Commands that read one recorded call (FILE, or --user/--agent); ``score`` also takes a folder, glob or manifest."""


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def _file_state(path: str | None) -> tuple | None:
    """What tells a file rewritten since (inode, size, modification time in ns), or None (no file)."""
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _junit_of_a_failed_run(args: argparse.Namespace, before: tuple | None, message: str, code: int) -> None:
    """A command that ended by an error or a stop before writing its ``--junit`` file gets one that
    reads red (``gates.failed_run_junit_xml``): an earlier run's file, left in place, read green
    after an exit 2 (a trial). A file this run wrote (a cut call's own) is kept; one that cannot be
    written (the error may be about that path) is left alone."""
    path = getattr(args, "junit", None)
    if not path or _file_state(path) != before:  # none asked, or this run wrote it
        return
    _write_red_junit(path, _other_paths(args, "junit"), getattr(args, "command", None) or "livejudge", message, code)


def _other_paths(args: argparse.Namespace, name: str) -> list[str]:
    """Every string argument of the run but ``name``'s (the inputs and the other outputs), for the
    same-file checks before an output is written or removed."""
    out: list = []
    for key, value in vars(args).items():
        if key != name:
            out += value if isinstance(value, list) else [value]
    return [v for v in out if isinstance(v, str)]


def _write_red_junit(path: str, others: list[str], command: str, message: str, code: int | None) -> None:
    """``gates.failed_run_junit_xml`` written to ``path``, unless ``path`` is "-" or names the same
    file as one of ``others`` (the run's other paths: an input, ``--json``…; the error may be that
    clash). A path that cannot be written is left alone: the error may be about it."""
    from livejudge.commands.gates import failed_run_junit_xml
    from livejudge.outputs.guard import same_file

    if path == "-" or any(v not in ("", "-") and same_file(v, path) for v in others):
        return
    if os.path.exists(path) and not os.path.isfile(path):  # a pipe or device: opening it could block for ever
        return
    from livejudge.outputs.guard import head_has

    if os.path.isfile(path) and os.path.getsize(path) and not head_has(path, (b"<testsuite", b"<?xml")):
        return  # not a JUnit file (a recording named by mistake?): the command's own check refuses it
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(failed_run_junit_xml(command, message, code), encoding="utf-8")
    except OSError:
        pass


def _outputs_of_a_run_under_way(args: argparse.Namespace) -> None:
    """Before the command runs, its ``--junit`` file reads red: "did not finish", and an earlier
    ``--json`` or ``--report`` file (a livejudge document no other argument names) is removed, so a run killed where
    nothing can write (SIGKILL, the out-of-memory killer) leaves no earlier run's passing files to
    be read as its own (a trial: after ``kill -9`` the last run's green JUnit file and its result
    were still there). The command writes both when it ends, or stops; ``_junit_of_a_failed_run``
    the JUnit file when it fails."""
    from livejudge.outputs.guard import head_has, input_folders, same_file

    # the --report of an earlier run too: a failed re-run left it beside its red JUnit file (a re-check)
    for dest, marks in (("json_out", (b'"livejudge_version"', b'{\n  "columns": [')),
                        ("report", (b"<title>livejudge report",))):
        stale = getattr(args, dest, None)
        # only a livejudge document: a --json path naming a recording by mistake removed it before the
        # check that refuses it could run (found while mending a trial's "--json other.wav")
        if isinstance(stale, str) and stale not in ("", "-") and os.path.isfile(stale) and head_has(stale, marks) \
                and not any(v not in ("", "-") and same_file(v, stale) for v in _other_paths(args, dest)) \
                and not any(same_file(os.path.dirname(os.path.abspath(stale)), d)  # nor a file of an input folder
                            for d in input_folders(_other_paths(args, dest))):
            try:
                os.unlink(stale)
            except OSError:  # not ours to remove: the command's own check says why
                pass
    path = getattr(args, "junit", None)
    if path:
        _write_red_junit(path, _other_paths(args, "junit"), getattr(args, "command", None) or "livejudge",
                         "the run did not finish: it was killed before it could write this file (SIGKILL, or out "
                         "of memory?)", None)


def _junit_of_a_usage_error(raw: list[str]) -> None:
    """A command line the parser refused (exit 2: an unknown flag, a typo such as ``--fail_if``, a
    bad choice) gets a red ``--junit`` file, as ``_junit_of_a_failed_run`` gives a run that failed:
    the parser stops before any command runs, and an earlier run's passing file was left to be read
    as this one's (a re-check). The path is read from the raw arguments (``--junit X`` or
    ``--junit=X``); one that is also another argument is left alone."""
    path, at = None, None
    for i, tok in enumerate(raw):
        if tok == "--junit" and i + 1 < len(raw):
            path, at = raw[i + 1], i + 1
        elif tok.startswith("--junit="):
            path, at = tok.split("=", 1)[1], None
    if not path:
        return
    command = raw[0] if raw and not raw[0].startswith("-") else "livejudge"
    others = [t for i, t in enumerate(raw) if i != at and not t.startswith("-")]
    _write_red_junit(path, others, command,
                     "the command line was refused before the command ran (its error is on stderr)", EXIT_USAGE)


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    parser = build_parser()
    raw = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _parse(parser, raw)
    except SystemExit as exc:
        if exc.code == EXIT_USAGE:
            _junit_of_a_usage_error(raw)
        raise
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    return _run(args)


def _parse(parser: argparse.ArgumentParser, raw: list[str]) -> argparse.Namespace:
    """The parsed arguments; an unknown one is a usage error naming the subcommand and which
    other subcommand takes the flag, if any does (SystemExit 2, as argparse's own)."""
    args, extra = parser.parse_known_args(raw)
    if extra:  # name the subcommand, and which other one takes the flag, if any does
        cmd = getattr(args, "command", None)
        subs = _subparsers(parser)
        sub = subs.get(cmd) if cmd else None
        flag = next((a for a in extra if a.startswith("-")), None)
        owners = [name for name, p in subs.items()
                  if flag is not None and name != cmd and flag.split("=")[0] in p._option_string_actions]
        hint = f"; {flag} belongs to {', '.join('livejudge ' + o for o in owners[:3])}" if owners else ""
        if flag is None and cmd in ONE_CALL_COMMANDS:  # a second call given where one is read
            hint = (f"; livejudge {cmd} takes one call" + ("" if cmd != "score" else
                    ": to score several, pass their folder or a quoted glob (livejudge score 'calls/*.wav' --out-dir DIR)"))
        (sub or parser).error(f"unrecognized arguments: {' '.join(extra)}{hint}")
    return args


def _run(args: argparse.Namespace) -> int:
    """Run the parsed command: its exit code, with one line for an error or a stop."""
    old_handlers = raise_on_terminate()  # SIGTERM/SIGHUP outside a call: unwind (finally blocks run)
    _outputs_of_a_run_under_way(args)
    junit_before = _file_state(getattr(args, "junit", None))
    try:
        return int(args.func(args) or 0)
    except CLIError as exc:  # messages quote file names and agents' words: no raw control characters
        from livejudge.outputs.guard import clean

        print(f"livejudge: {clean(exc)}", file=sys.stderr)
        _junit_of_a_failed_run(args, junit_before, clean(exc), exc.code)
        return exc.code
    except KeyboardInterrupt:
        print("livejudge: interrupted", file=sys.stderr)
        _junit_of_a_failed_run(args, junit_before, "interrupted (Ctrl-C)", 130)
        return 130
    except SignalExit as exc:
        print(f"livejudge: stopped by {exc}", file=sys.stderr)
        _junit_of_a_failed_run(args, junit_before, f"stopped by {exc}", exc.code)
        return exc.code
    finally:
        for sig, handler in old_handlers.items():
            signal.signal(sig, handler)


def entry() -> None:
    """Console entry point: ``main``, then exit ignoring further stop signals, so a late Ctrl-C
    cannot interrupt the interpreter's own shutdown (library finalizers) with a traceback. A Ctrl-C
    before ``main`` runs its command (building the parser imports each subcommand's modules) exits
    130 with one line too."""
    try:
        code = main()
    except KeyboardInterrupt:
        print("livejudge: interrupted", file=sys.stderr)
        code = 130
    from livejudge.commands.runner import STOP_SIGNALS

    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    sys.exit(code)


if __name__ == "__main__":
    entry()
