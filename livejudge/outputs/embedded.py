"""What the embeddings (the Pipecat observer's ``LiveJudgeCore``, the LiveKit tap) share: their
output files, the event log, the display on a worker thread, and finishing a call so that
nothing already measured is lost (a failed write is recorded, never raised)."""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import weakref
from pathlib import Path
from typing import Any

SIGNAL_CLOSE_TIMEOUT_S = 30.0
"""How long a SIGTERM/SIGHUP waits for each open tap to write its outputs before the process
ends, seconds (HEURISTIC: the last window's judge and the report take a few seconds on 2 cores)."""

_OPEN_TAPS: "weakref.WeakSet[EmbeddedOutputs]" = weakref.WeakSet()
_ARMED: dict[int, bool] = {}  # signal number -> our handler is installed
_AT_EXIT: list[bool] = []  # [True] once the exit hook is registered


def signal_label(signum: int) -> str:
    """How ``source.ended`` names a signal: "Ctrl-C" for SIGINT, else its name ("SIGTERM")."""
    return "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name


def interrupted(signum: int) -> str:
    """``source.ended`` of a call stopped by ``signum``: "interrupted (Ctrl-C)",
    "interrupted (SIGTERM)"... (as ``livejudge attach``/``replay`` say it)."""
    return f"interrupted ({signal_label(signum)})"


def sigterm_handled_by_app() -> bool:
    """Whether SIGTERM has a handler other than the default, SIG_IGN or livejudge's own (which
    records "interrupted (SIGTERM)" itself): then a framework's "interrupt signal" may be a
    SIGTERM as well as a Ctrl-C. Any thread."""
    try:
        h = signal.getsignal(signal.SIGTERM)
    except (ValueError, OSError):
        return False
    return callable(h) and h is not _close_taps_on_signal


def _close_taps_on_signal(signum: int, frame: Any) -> None:
    """SIGTERM/SIGHUP in a process that had no handler of its own: finish every open tap (its
    result, report and event log are written), then end the process by the same signal, as the
    default action would have."""
    for tap in list(_OPEN_TAPS):
        try:
            tap.mark_ended(interrupted(signum))
            tap.close_blocking(timeout_s=SIGNAL_CLOSE_TIMEOUT_S)
        except Exception:  # a tap that cannot finish must not keep the process alive
            pass
    signal.signal(signum, signal.SIG_DFL)
    _ARMED.pop(signum, None)
    os.kill(os.getpid(), signum)


def _close_taps_at_exit() -> None:
    """At interpreter exit, finish every tap still open that has a file to write. An app whose
    Ctrl-C ends in ``KeyboardInterrupt`` (``asyncio.run`` without a SIGINT handler of its own)
    wrote nothing: a trial's ``examples/livekit_embed.py``; design: a call cut off in any way
    still writes its result. ``source.ended`` says why: "interrupted (Ctrl-C)" after a
    KeyboardInterrupt, "failed: <exception type>" after another uncaught exception, else
    "process exit (never closed)"."""
    taps = [t for t in list(_OPEN_TAPS) if not t.closed
            and any(p is not None for p in (t.result_path, t.report_path, t._events_path))]
    if not taps:
        return
    exc = None
    if not hasattr(sys, "ps1"):  # in a REPL, the last exception shown is not why the process exits
        exc = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)  # the uncaught one, if any
    if isinstance(exc, KeyboardInterrupt):
        reason = interrupted(signal.SIGINT)
    elif isinstance(exc, BaseException) and not isinstance(exc, SystemExit):
        reason = f"failed: {type(exc).__name__}"
    else:
        reason = "process exit (never closed)"
    for tap in taps:
        try:
            tap.mark_ended(reason)
            tap.close_blocking(timeout_s=SIGNAL_CLOSE_TIMEOUT_S)
        except Exception:  # a tap that cannot finish must not keep the process alive
            pass


def arm_signal_close(tap: "EmbeddedOutputs") -> None:
    """Write ``tap``'s outputs on SIGTERM/SIGHUP where nothing else would: a Pipecat worker
    runner handles SIGINT only unless ``handle_sigterm=True``, so a ``kill`` or a container stop
    ended the process with nothing written (a trial; design: a call cut off in any way still
    writes its result). Installs the handler only from the main thread and only for a signal
    whose handler is the default (an application's own handler, asyncio's included, is left
    alone: it cancels the pipeline, and the tap finishes on the CancelFrame). Also registers,
    once, an exit hook that finishes any tap still open when the interpreter exits (a Ctrl-C
    that ended in ``KeyboardInterrupt``: ``_close_taps_at_exit``)."""
    _OPEN_TAPS.add(tap)
    if not _AT_EXIT:
        atexit.register(_close_taps_at_exit)
        _AT_EXIT.append(True)
        # what finishing a tap imports, imported now rather than while the interpreter exits: a
        # module first imported then runs code from strings (dataclasses, namedtuple), which
        # clears CPython's record of an uncaught Ctrl-C, and the app exited 1 instead of by
        # SIGINT once livejudge had a result to write (a trial); tests/test_livekit_embed.py
        import livejudge.outputs.files  # noqa: F401
        import livejudge.outputs.guard  # noqa: F401
        import livejudge.timing.echo  # noqa: F401
    if threading.current_thread() is not threading.main_thread():
        return
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is None or _ARMED.get(sig):
            continue
        try:
            if signal.getsignal(sig) is signal.SIG_DFL:
                signal.signal(sig, _close_taps_on_signal)
                _ARMED[sig] = True
        except (ValueError, OSError):
            pass


def disarm_signal_close(tap: "EmbeddedOutputs") -> None:
    """``tap`` is finished: forget it, and put back the default handlers once no tap is open."""
    _OPEN_TAPS.discard(tap)
    if _OPEN_TAPS or threading.current_thread() is not threading.main_thread():
        return
    for sig in list(_ARMED):
        try:
            if signal.getsignal(sig) is _close_taps_on_signal:
                signal.signal(sig, signal.SIG_DFL)
        except (ValueError, OSError):
            pass
        _ARMED.pop(sig, None)


DISPLAY_MODES = (True, False, None, "auto", "rich", "plain", "none")
"""What an embedding's ``display`` takes: True ("auto": the meter on a terminal, else plain lines),
"rich", "plain", False/None/"none" (no display)."""


def check_embed_options(*, where: str, display: Any = False, config: Any = None, config_type: type | None = None,
                        options: Any = None, options_type: type | None = None, options_name: str = "options",
                        fail_if: Any = ()) -> None:
    """The options an embedding takes, checked before anything starts: one line naming the option
    and the fix (a trial's ``fail_if="latency_p90_s>1.2"`` read "bad --fail-if 'l'", ``config="fast"``
    and ``options={...}`` were bare AttributeErrors, ``display="bogus"`` was silently plain lines).

    Raises:
        ValueError: an option of the wrong type or value.
    """
    if isinstance(fail_if, (str, bytes)) or not isinstance(fail_if, (list, tuple)):
        raise ValueError(f"{where}: fail_if takes a list of gates, e.g. fail_if=['latency_p90_s>1.2'], "
                         f"got {type(fail_if).__name__} {fail_if!r}")
    if display not in DISPLAY_MODES:
        raise ValueError(f"{where}: display must be True, False, 'auto', 'rich', 'plain' or 'none', got {display!r}")
    for name, value, kind in (("config", config, config_type), (options_name, options, options_type)):
        if value is not None and kind is not None and not isinstance(value, kind):
            raise ValueError(f"{where}: {name} must be a {kind.__module__}.{kind.__name__} "
                             f"(e.g. {name}={kind.__name__}(...)), got {type(value).__name__} {value!r:.60}")


def gates_for_embedding(where: str, fail_if) -> list:
    """``fail_if``'s gates parsed (``commands.gates.parse_gate``), the error worded for the
    embedding ("fail_if" where the CLI says "--fail-if"). Raises ValueError."""
    from livejudge.commands.gates import parse_gate

    try:
        return [parse_gate(g) for g in fail_if]
    except ValueError as exc:
        raise ValueError(f"{where}: " + str(exc).replace("bad --fail-if", "bad fail_if gate")) from None


class EmbeddedOutputs:
    """Mixin for a tap that owns a ``Session`` (``self.session``) and a worker thread.

    Subclasses call ``_init_outputs`` in ``__init__`` (before building the Session: it returns
    the sinks to give it) and ``_finish_outputs(doc)`` once, on the worker, at the end.
    """

    result_path: Path | None
    report_path: Path | None
    session: Any

    def _init_outputs(self, *, result_path: str | Path | None, report_path: str | Path | None,
                      events_path: str | Path | None, sinks: list | tuple, display: Any, title: str) -> list:
        """Check the outputs now (a missing report extra fails before the call, with its install
        hint) and return the sinks for the Session (``sinks`` plus the JSONL event log)."""
        from livejudge.outputs.guard import check_output_paths

        # a path that cannot be written is said now, not when the call closes (a trial's
        # result_path="/proc/nope/call.json" was accepted, and the whole call's result was lost)
        check_output_paths({"result_path": result_path, "report_path": report_path, "events_path": events_path},
                           examples={"result_path": "call.json", "report_path": "call.html",
                                     "events_path": "events.jsonl"})
        self.result_path = Path(result_path) if result_path is not None else None
        self.report_path = Path(report_path) if report_path is not None else None
        if self.report_path is not None:
            from livejudge.outputs.html_report import require_matplotlib

            require_matplotlib()
        all_sinks = list(sinks)
        if events_path is not None:
            from livejudge.outputs.sinks import JsonlSink

            all_sinks.append(JsonlSink(events_path))
        self._events_path = events_path
        self._display = None
        self._display_mode = display
        self._title = title
        self._final: dict | None = None
        self._closed = threading.Event()
        arm_signal_close(self)
        return all_sinks

    def mark_ended(self, reason: str) -> bool:
        """Record why the call ended (the result's ``source.ended``): "end of pipeline",
        "session closed (job_shutdown)", ``interrupted(signal.SIGINT)`` ("interrupted (Ctrl-C)"),
        "failed: ...". The first reason recorded wins (a Ctrl-C's "interrupted (Ctrl-C)" is not
        overwritten by the session close that follows it); call it before closing. Any thread.

        Returns:
            bool: True when this reason was recorded, False when one was already.
        """
        reason = str(reason)
        return self.session.info.setdefault("ended", reason) is reason

    def _drain(self, q, close_item: int, label: str) -> bool:
        """Handle every queued item in order (``self._handle``); a bad item is one error line,
        never the end of the tap. On ``close_item`` call ``self._finish()`` and return True."""
        while q:
            item = q.popleft()
            if item[0] == close_item:
                self._finish()
                return True
            try:
                self._handle(item)
            except Exception as exc:  # one bad frame never stops the tap
                self._item_error(f"{label}: {type(exc).__name__}: {exc}")
        return False

    def _item_error(self, message: str) -> None:
        """One error line per distinct failure of an item, its count said at the close
        (``_close_session``): every frame of a 4 kHz transport failing alike had filled the
        result's errors with 100 copies of one line (a trial)."""
        seen = self.__dict__.setdefault("_item_errors", {})
        seen[message] = seen.get(message, 0) + 1
        if seen[message] == 1:
            self.session._on_error(f"{message} (that item was dropped)")

    def _count_item_errors(self) -> None:
        """The first line of each repeated item error, in the result's errors, says for how many
        items it happened in all, and so does one line on stderr (it had said only the first)."""
        errors = self.session.errors
        for message, n in (self.__dict__.get("_item_errors") or {}).items():
            first = f"{message} (that item was dropped)"
            if n > 1 and first in errors:
                errors[errors.index(first)] = line = f"{message} (for {n} items in all; each was dropped)"
                try:
                    from livejudge.outputs.guard import clean

                    print(f"livejudge: {clean(line)}", file=sys.stderr)
                except (OSError, ValueError):  # stderr closed: the result keeps the line
                    pass

    def _start_display(self) -> None:
        """Start the meter (or plain lines) once; a display that fails to start is one error line
        and the call goes on without it."""
        if not self._display_mode or self._display is not None:
            return
        from livejudge.outputs.meter import make_display

        mode = "auto" if self._display_mode is True else str(self._display_mode)
        try:
            self._display = make_display(self.session, title=self._title, mode=mode,
                                         report=str(self.report_path) if self.report_path else None)
            if self._display is not None:
                self.session.add_sink(self._display)
                self._display.start()
        except Exception as exc:  # the call goes on without a display
            self._display_mode = False
            self.session._on_error(f"display {mode!r} failed to start: {exc}")

    def _close_session(self, before=None) -> None:
        """Close the Session (judging the last window), after ``before()`` when given; a failure
        is one error line, and the outputs are still written."""
        try:
            if before is not None:
                before()
            self._count_item_errors()  # before the close builds the result
            self.session.close()
        except Exception as exc:
            self.session._on_error(f"closing the session failed: {exc}")

    def _finish_outputs(self, doc: dict | None) -> None:
        """Write the result and report files of ``doc`` (None: a failure before it was built),
        keep it as the final document, stop the display and mark the tap closed, whatever fails."""
        try:
            if doc is not None:
                from livejudge.outputs.files import write_call_files

                write_call_files(doc, self.session, self.result_path, self.report_path)
                self._final = doc
        finally:
            if self._display is not None:
                try:
                    self._display.stop()
                except Exception:
                    pass
            self._closed.set()

    @property
    def closed(self) -> bool:
        """True once the call is finished and its outputs written."""
        return self._closed.is_set()

    def _wait_closed(self, timeout_s: float | None) -> dict:
        if not self._closed.wait(timeout_s):
            raise TimeoutError(f"livejudge did not finish within {timeout_s} s")
        disarm_signal_close(self)
        return self._final if self._final is not None else self.result()
