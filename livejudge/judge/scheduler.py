"""Periodic judging off the audio path.

The session hands the scheduler a ``WindowSnapshot`` every ``interval_s`` of session time; a
single worker thread runs the judge on it. The audio path never waits in ``"live"`` mode: the
scheduler keeps one pending slot, and a snapshot that arrives while the slot is still full
replaces the stale one (counted in ``dropped``). In ``"every"`` mode (offline scoring, where no
live audio can be held up) ``submit`` waits for the worker so every window is judged.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Literal, Protocol, Sequence

from ..events import JudgeResult
from ..window import WindowSnapshot


class SupportsJudge(Protocol):
    def judge(self, windows: Sequence[WindowSnapshot]) -> list[JudgeResult]: ...


class JudgeScheduler:
    """One worker thread that judges the newest window.

    Args:
        judge: anything with ``judge(windows) -> list[JudgeResult]``.
        on_result: called in the worker thread with each JudgeResult.
        mode: "live" (drop stale windows, never block) or "every" (judge all, submit blocks).
        on_error: called with a one-line message when the judge raises; judging goes on.
    """

    def __init__(self, judge: SupportsJudge, on_result: Callable[[JudgeResult], None],
                 mode: Literal["live", "every"] = "live",
                 on_error: Callable[[str], None] | None = None) -> None:
        if mode not in ("live", "every"):
            raise ValueError(f"scheduler mode must be 'live' or 'every', got {mode!r}")
        self.judge = judge
        self.on_result = on_result
        self.mode = mode
        self.on_error = on_error
        self.dropped = 0
        self.judged = 0
        self.errors = 0
        self.busy_s = 0.0
        self._slot: WindowSnapshot | None = None
        self._cond = threading.Condition()
        self._stop = False
        self._busy = False
        self._thread: threading.Thread | None = None

    def start(self) -> "JudgeScheduler":
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="livejudge-judge", daemon=True)
            self._thread.start()
        return self

    def submit(self, snapshot: WindowSnapshot) -> None:
        """Queue a window. Live mode: never blocks; a waiting older window is dropped."""
        with self._cond:
            if self.mode == "every":
                while (self._slot is not None or self._busy) and not self._stop:
                    self._cond.wait(0.05)
            elif self._slot is not None:
                self.dropped += 1
            self._slot = snapshot
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._slot is None and not self._stop:
                    self._cond.wait()
                if self._slot is None and self._stop:
                    return
                snap, self._slot = self._slot, None
                self._busy = True
            t0 = time.perf_counter()
            try:
                result = self.judge.judge([snap])[0]
                self.judged += 1
                self.on_result(result)
            except Exception as exc:  # the call must go on; report once per failure
                self.errors += 1
                if self.on_error:
                    self.on_error(f"judge failed on window ending {snap.end_s:.1f}s: {type(exc).__name__}: {exc}")
            finally:
                self.busy_s += time.perf_counter() - t0
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def stop(self, drain: bool = True, timeout_s: float | None = 30.0) -> None:
        """Stop the worker; with ``drain`` the pending window is judged first."""
        with self._cond:
            if not drain and self._slot is not None:
                self._slot = None
                self.dropped += 1
            self._stop = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout_s)
