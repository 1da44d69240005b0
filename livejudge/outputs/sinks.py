"""Simple sinks: a JSONL event log and a callback adapter."""

from __future__ import annotations

import datetime as _dt
import threading
from pathlib import Path
from typing import Callable

from livejudge.events import AudioChunk, event_to_dict
from livejudge.outputs.guard import json_text


def event_record(event: object) -> dict:
    """JSON-ready dict of a session event (events.* dataclasses or session.Note)."""
    from livejudge.session import Note

    if isinstance(event, Note):
        return {"type": "Note", "kind": event.kind, "t_s": round(event.t_s, 4), **event.data}
    return event_to_dict(event)


class JsonlSink:
    """Appends one JSON object per event to a file, so a call cut off mid-way still leaves its
    event log. The first line is a header with the wall-clock start; ``on_close`` adds a
    closing ``summary`` line.

    Each line goes to the file in one unbuffered ``write`` of the whole line (no Python
    buffer), so even SIGKILL leaves a valid JSONL file up to the last complete line.

    A write that fails mid-call (a full disk) cuts the file back to its last whole line, stops the
    log there and raises OSError once, naming the line it stops after (the session keeps that in
    ``errors``); ``write_error`` then holds the same words, so the command can exit 1. Later
    events are dropped quietly: the log had ended with half a line, no summary and 99 copies of
    the error in the result, exit 0 (a trial).

    Raises:
        OSError: the file cannot be created, or its header line cannot be written.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f = self.path.open("wb", buffering=0)
        self._lock = threading.Lock()
        self._lines = 0
        self._whole_bytes = 0
        self.write_error: str | None = None
        self._why = ""
        try:
            self._write({"type": "header",
                         "started_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")})
        except OSError:  # the plain reason (no line was written: nothing "stops after" one)
            self._f.close()
            raise OSError(self._why) from None

    def _write(self, obj: dict) -> None:
        line = (json_text(obj, indent=None) + "\n").encode("utf-8")  # strict JSON: no NaN
        with self._lock:
            if self._f.closed:
                return
            view = memoryview(line)
            try:
                while view:  # a raw write may be partial (rare, e.g. a full pipe): finish the line
                    n = self._f.write(view)
                    if not n:
                        break
                    view = view[n:]
            except OSError as exc:
                try:  # no half line at the end of the log
                    self._f.truncate(self._whole_bytes)
                except OSError:
                    pass
                self._f.close()
                why = self._why = exc.strerror or str(exc)
                self.write_error = (f"the event log {self.path} stops after line {self._lines} ({why}): the events "
                                    "after it were not written; the result holds the whole call")
                raise OSError(self.write_error) from None
            self._lines += 1
            self._whole_bytes += len(line)

    def on_event(self, event: object) -> None:
        if isinstance(event, AudioChunk):
            return
        self._write(event_record(event))

    def on_close(self, result: dict) -> None:
        # how the call ended, as the result's source.ended: an embedded call's log (Pipecat, LiveKit)
        # cut by Ctrl-C read as a complete call (a trial); attach's also notes "interrupted"
        ended = (result.get("source") or {}).get("ended")
        self._write({"type": "summary", **result.get("summary", {}), **({"ended": ended} if ended else {})})
        with self._lock:
            self._f.close()


class CallbackSink:
    """Calls ``fn(event)`` for each event of the given types (all when ``types`` is empty)."""

    def __init__(self, fn: Callable[[object], None], *types: type,
                 on_close: Callable[[dict], None] | None = None) -> None:
        self.fn, self.types, self._on_close = fn, types, on_close

    def on_event(self, event: object) -> None:
        if not self.types or isinstance(event, self.types):
            self.fn(event)

    def on_close(self, result: dict) -> None:
        if self._on_close:
            self._on_close(result)
