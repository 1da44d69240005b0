"""What the embeddings (the Pipecat observer's ``LiveJudgeCore``, the LiveKit tap) share: their
output files, the event log, the display on a worker thread, and finishing a call so that
nothing already measured is lost (a failed write is recorded, never raised)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any


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
        self.result_path = Path(result_path) if result_path is not None else None
        self.report_path = Path(report_path) if report_path is not None else None
        if self.report_path is not None:
            from livejudge.outputs.html_report import require_matplotlib

            require_matplotlib()
        all_sinks = list(sinks)
        if events_path is not None:
            from livejudge.outputs.sinks import JsonlSink

            all_sinks.append(JsonlSink(events_path))
        self._display = None
        self._display_mode = display
        self._title = title
        self._final: dict | None = None
        self._closed = threading.Event()
        return all_sinks

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
                self.session._on_error(f"{label}: {type(exc).__name__}: {exc}")
        return False

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
        return self._final if self._final is not None else self.result()
