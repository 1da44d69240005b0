"""Periodic judging off the audio path.

A session hands the scheduler a ``WindowSnapshot`` every ``interval_s`` of session time; one
worker thread runs the judge. The audio path never waits in ``"live"`` mode: each session
(``key``) has one pending slot, and a snapshot that arrives while its slot is still full
replaces the stale one (counted in ``dropped``). In ``"every"`` mode (offline scoring, where
no live audio can be held up) every window is judged: each session may have up to ``depth``
windows waiting or being judged (default 1: ``submit`` returns once the previous window is judged),
and ``submit`` waits only when that many are. A deeper queue (``EVERY_DEPTH``, what ``score``,
``check`` and ``batch`` use for recorded calls) lets the
audio path run ahead while the judge works through a slow window (an agent turn that settles
runs the encoder and the frame readout), so a recorded call's wall time approaches the larger of
the two threads' CPU times instead of their sum at every slow window (benchmarks/
judge_whisper_speed.py). Windows are judged in the order they were submitted, so results do
not depend on ``depth``.

One scheduler can serve several sessions (pass the same instance to each ``Session``): the
windows that are due together are judged in **one batched call** ``judge.judge([w1, w2, …])``
(up to ``max_batch``), which is what a GPU backbone wants.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Callable, Hashable, Literal, Protocol, Sequence

from livejudge.events import JudgeResult
from livejudge.timing.window import WindowSnapshot


class SupportsJudge(Protocol):
    def judge(self, windows: Sequence[WindowSnapshot]) -> list[JudgeResult]: ...


ResultCallback = Callable[[JudgeResult], None]
EVERY_DEPTH = 4
"""``depth`` for recorded calls in "every" mode (``SessionConfig.judge_depth`` as the CLI sets it):
windows of one session queued or being judged (HEURISTIC: a few 30 s windows, about 4 MB of audio
each, let the audio path run past a slow window)."""


class JudgeScheduler:
    """One worker thread that judges the newest window of each session, batched.

    Args:
        judge: anything with ``judge(windows) -> list[JudgeResult]``.
        on_result: default callback (worker thread) for results of submissions without one.
        mode: "live" (drop stale windows, never block) or "every" (judge all; submit blocks).
        on_error: called with a one-line message when the judge raises; judging goes on.
        max_batch: most windows per judge call.
        depth: "every" mode: most windows of one session waiting or being judged before
            ``submit`` waits (default 1; ``EVERY_DEPTH`` for recorded calls). Live mode keeps one.
    """

    def __init__(self, judge: SupportsJudge, on_result: ResultCallback | None = None,
                 mode: Literal["live", "every"] = "live",
                 on_error: Callable[[str], None] | None = None, max_batch: int = 16,
                 depth: int | None = None) -> None:
        if mode not in ("live", "every"):
            raise ValueError(f"scheduler mode must be 'live' or 'every', got {mode!r}")
        if max_batch < 1:
            raise ValueError(f"max_batch must be ≥ 1, got {max_batch}")
        depth = 1 if depth is None else int(depth)
        if depth < 1:
            raise ValueError(f"depth must be ≥ 1, got {depth}")
        self.depth = depth if mode == "every" else 1
        self.judge = judge
        self.on_result = on_result
        self.mode = mode
        self.on_error = on_error
        self.max_batch = max_batch
        self.dropped = 0
        self.judged = 0
        self.errors = 0
        self.batches = 0
        self.busy_s = 0.0
        self._dropped_by: dict[Hashable, int] = {}
        self._slots: dict[Hashable, deque[tuple[WindowSnapshot, ResultCallback | None]]] = {}
        """Per session, its windows waiting to be judged, oldest first (live mode: at most one)."""
        self._cond = threading.Condition()
        self._stop = False
        self._busy: set[Hashable] = set()
        self._users = 0
        self._thread: threading.Thread | None = None

    def start(self) -> "JudgeScheduler":
        with self._cond:
            self._users += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="livejudge-judge", daemon=True)
                self._thread.start()
        return self

    def dropped_for(self, key: Hashable = None) -> int:
        """Windows dropped for one session (``key``)."""
        return self._dropped_by.get(key, 0)

    def submit(self, snapshot: WindowSnapshot, on_result: ResultCallback | None = None,
               key: Hashable = None) -> None:
        """Queue a window for session ``key``. Live mode never blocks: a waiting older window
        of the same session is dropped."""
        with self._cond:
            if self.mode == "every":
                while self._pending(key) >= self.depth and not self._stop:
                    if self._thread is not None and not self._thread.is_alive():
                        break  # the worker is gone: waiting would hang the caller for ever
                    self._cond.wait(0.05)
            elif key in self._slots:
                self._slots.pop(key)
                self.dropped += 1
                self._dropped_by[key] = self._dropped_by.get(key, 0) + 1
            self._slots.setdefault(key, deque()).append((snapshot, on_result))
            self._cond.notify_all()

    def _pending(self, key: Hashable) -> int:
        """Windows of session ``key`` waiting or being judged (call with the lock held)."""
        return len(self._slots.get(key, ())) + (key in self._busy)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._slots and not self._stop:
                    self._cond.wait()
                if not self._slots and self._stop:
                    return
                keys = list(self._slots)[: self.max_batch]
                batch = [(k, *self._slots[k].popleft()) for k in keys]  # each session's oldest window
                for k in keys:
                    if not self._slots[k]:
                        del self._slots[k]
                self._busy.update(keys)
            t0 = time.perf_counter()
            try:
                results = self.judge.judge([snap for _, snap, _ in batch])
                self.judged += len(results)
                self.batches += 1
                for (_, _, cb), result in zip(batch, results):
                    fn = cb or self.on_result
                    if fn is not None:
                        fn(result)
            except Exception as exc:  # the call must go on; report each failure in one line
                self.errors += 1
                if self.on_error:
                    ends = ", ".join(f"{snap.end_s:.1f}s" for _, snap, _ in batch)
                    try:  # a failing error handler must not kill the worker (callers would wait on it)
                        self.on_error(f"judge failed on window ending {ends}: {type(exc).__name__}: {exc}")
                    except Exception:
                        pass
            finally:
                self.busy_s += time.perf_counter() - t0
                with self._cond:
                    self._busy.difference_update(keys)
                    self._cond.notify_all()

    def flush(self, key: Hashable = None, timeout_s: float | None = 30.0) -> None:
        """Wait until session ``key`` has nothing pending or being judged."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._cond:
            while key in self._slots or key in self._busy:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return
                self._cond.wait(remaining if remaining is not None else 0.1)

    def release(self, key: Hashable = None, drain: bool = True, timeout_s: float | None = 30.0) -> None:
        """A session is done with the scheduler: judge (or drop) its pending window, and stop
        the worker when no session uses it any more."""
        if not drain:
            with self._cond:
                n = len(self._slots.pop(key, ()))
                if n:
                    self.dropped += n
                    self._dropped_by[key] = self._dropped_by.get(key, 0) + n
        self.flush(key, timeout_s)
        with self._cond:
            self._users = max(0, self._users - 1)
            last = self._users == 0
        if last:
            self.stop(drain=drain, timeout_s=timeout_s)

    def stop(self, drain: bool = True, timeout_s: float | None = 30.0) -> None:
        """Stop the worker; with ``drain`` pending windows are judged first."""
        with self._cond:
            if not drain:
                self.dropped += sum(len(q) for q in self._slots.values())
                self._slots.clear()
            self._stop = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout_s)
