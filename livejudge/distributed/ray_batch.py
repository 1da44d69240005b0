"""Ray as a backend of batch scoring: ``livejudge score calls/ --out-dir results/ --ray [ADDRESS]``.

This module runs tasks on Ray and knows nothing about calls: the batch runner
(``livejudge.commands.batch.run_batch_ray``) chooses it as its backend and hands it the
per-call function (``batch._attempt`` around ``batch.score_call`` — the very function the
``--jobs N`` process pool runs), then writes the result documents and the same
``summary.json``/``summary.csv`` as ``--jobs``. It does not import the batch runner back
(issue 21: no import circles).

Failures: the task function returns a rejected call as a value (not retried: it would fail
the same way). Any exception, or a worker process that dies, is retried once
(``max_retries=1``, ``retry_exceptions=True``) and then reported to the caller with the
exception; the batch always goes on.

Where: no address starts a local Ray for the run (``num_cpus`` = ``--jobs`` when given, else
the CPU count; no dashboard) and shuts it down after; ``auto`` or ``ray://host:port`` joins
an existing cluster, whose nodes must have livejudge installed and see the call paths
(a shared filesystem: the tasks open the files where they run; results come back to the
driver, which writes them).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import Any

INSTALL_HINT = "--ray needs Ray: pip install 'livejudge[ray]'"
RETRIES = 1
"""Retries of a task after a transient failure (an exception, or a dead worker)."""


def import_ray():
    """``ray``, or ImportError with the one-line install hint."""
    try:
        import ray
    except ImportError:
        raise ImportError(INSTALL_HINT) from None
    return ray


def init_ray(address: str | None, num_cpus: int | None = None) -> bool:
    """Connect to ``address`` ("auto", "ray://host:port") or start a local Ray (``num_cpus``).

    Returns:
        True when this call started Ray (and the caller should ``ray.shutdown()`` it).
    Raises:
        ImportError: Ray is not installed (install hint). ConnectionError: no cluster at ``address``.
    """
    ray = import_ray()
    if ray.is_initialized():
        return False
    if address in (None, "", "local"):
        guarded_init(ray, num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    else:
        try:
            guarded_init(ray, address=address, log_to_driver=False, logging_level="ERROR")
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ConnectionError(f"cannot reach the Ray cluster at {address}: {exc} (start one with "
                                  "`ray start --head`, or drop the address for a local Ray)") from None
    return True


def _ray_descendants(root: int) -> list[int]:
    """The Ray processes below ``root`` (children, and theirs), from ``/proc`` (Linux; elsewhere
    none): process ids whose command line names Ray (``ray::DashboardAgent``, ``raylet``,
    ``gcs_server``…)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for d in names:
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), ()):
            todo.append(c)
            try:
                with open(f"/proc/{c}/cmdline", "rb") as f:
                    cmd = f.read()
            except OSError:
                continue
            if b"ray" in cmd:
                out.append(c)
    return out


def _end_survivors(pids: list[int], grace_s: float = 3.0) -> None:
    """SIGKILL those of ``pids`` still running ``grace_s`` after ``ray.shutdown``: a start cut by a
    signal left the raylet's dashboard and runtime-env agents running (re-parented to PID 1, deaf
    to SIGTERM; a re-check). Only processes this one started (``_ray_descendants``) are touched."""
    import signal
    import time

    deadline = time.monotonic() + grace_s
    left = list(pids)
    while left and time.monotonic() < deadline:
        left = [p for p in left if _running(p)]
        if left:
            time.sleep(0.1)
    for p in left:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except (OSError, IndexError):
        return False


class RayStartInterrupted(RuntimeError):
    """A stop signal came while Ray was starting: what it had started is shut down, and the signal
    was handed to the handler the caller had installed (which may have raised instead)."""


def guarded_init(ray, **kwargs) -> None:
    """``ray.init(**kwargs)`` with the caller's stop-signal handlers in place afterwards
    (``_stop_handlers_kept``), and a stop signal during the start handled as the caller's.

    While it starts, Ray's own SIGTERM handler (``sys.exit(15)``) is in force: a SIGTERM 2–8 s into
    ``score --ray`` or ``serve-judge`` exited 15 with no line and no summary, and left Ray's
    dashboard and runtime-env agents running (a re-check). Here that exit is caught, Ray is shut
    down, and the signal is raised again under the caller's handler.

    Raises:
        RayStartInterrupted: a stop signal came during the start and the caller's handler returned
            (a batch's handler only records the stop); a handler that raises (``SignalExit``,
            KeyboardInterrupt) raises instead.
        Whatever ``ray.init`` raises.
    """
    import signal

    stopped = None
    with _stop_handlers_kept():
        try:
            ray.init(**kwargs)
        except SystemExit as exc:  # Ray's SIGTERM handler, while Ray was starting
            stopped = exc.code if isinstance(exc.code, int) and exc.code > 0 else int(signal.SIGTERM)
            started = _ray_descendants(os.getpid())  # its GCS and raylet, and the raylet's agents
            try:
                ray.shutdown()  # as far as it had started
            except Exception:  # noqa: BLE001  (half-started: stop what can be stopped)
                pass
            _end_survivors(started)
    if stopped is not None:
        signal.raise_signal(stopped)  # the caller's own handler now decides (143, a batch's summary)
        raise RayStartInterrupted(f"stopped by {signal.Signals(stopped).name} while Ray was starting")


@contextmanager
def _stop_handlers_kept():
    """Put back, after ``ray.init``, the Python handlers SIGTERM, SIGINT and SIGHUP had before it.
    ``ray.init`` replaces SIGTERM's with its own (``sys.exit``), and its core worker's fatal-signal
    handler then prints "*** SIGTERM received" and ends the driver: a ``--ray`` batch stopped by
    SIGTERM (``docker stop``, a CI timeout) wrote no summary and exited 1 (a trial), while the
    batch's own handler, installed before Ray started, writes the summary and exits 143. Main
    thread only (signals can be set nowhere else)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    sigs = [s for s in (signal.SIGTERM, signal.SIGINT, getattr(signal, "SIGHUP", None)) if s is not None]
    before = {s: signal.getsignal(s) for s in sigs}
    try:
        yield
    finally:
        for s, handler in before.items():
            if handler is not None and signal.getsignal(s) is not handler:
                signal.signal(s, handler)


def run_tasks_ray(fn: Callable[..., Any], items: Sequence[tuple], *,
                  on_done: Callable[[int, Any, BaseException | None], None],
                  address: str | None = None, num_cpus: int | None = None,
                  should_stop: Callable[[], bool] | None = None) -> int:
    """Run ``fn(*item)`` for every item as a Ray task (1 CPU each, retried ``RETRIES`` times
    after an exception or a dead worker); call ``on_done(index, value, None)`` as each one
    finishes, or ``on_done(index, None, error)`` when it failed on its last attempt too.

    Args:
        fn: a picklable function (a module-level one, or a closure Ray ships by value).
        items: the argument tuples, one per task; each argument is sent once per task.
        address: None for a local Ray started for the run (and shut down after), else "auto"
            or "ray://host:port".
        num_cpus: CPUs of the local Ray (None: all); ignored with an address.
        should_stop: polled at least once a second; when it returns True the tasks not yet back
            (running or queued) are cancelled (``ray.cancel(force=True)``: their workers are killed)
            and it returns at once, those tasks never reported to ``on_done``.
    Returns:
        the CPUs the Ray cluster offered.
    Raises:
        ImportError: Ray missing (install hint). ConnectionError: no cluster at ``address``.
    """
    ray = import_ray()
    started = init_ray(address, num_cpus)
    try:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        task = ray.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=True)(fn)
        shared: dict[int, Any] = {}  # id(argument) -> its object ref: an argument every task
        pending = {}                 # shares (the options, the per-call function) is put once
        for i, item in enumerate(items):
            refs = []
            for arg in item:
                if isinstance(arg, (str, int, float)):
                    refs.append(arg)
                    continue
                if id(arg) not in shared:
                    shared[id(arg)] = ray.put(arg)
                refs.append(shared[id(arg)])
            pending[task.remote(*refs)] = i
        while pending:
            if should_stop is not None and should_stop():
                for ref in pending:
                    try:
                        ray.cancel(ref, force=True)
                    except Exception:  # already finished, or the cluster is going: nothing left to stop
                        pass
                break
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            for ref in ready:
                i = pending.pop(ref)
                try:
                    value = ray.get(ref)
                except Exception as exc:  # failed on its retry too (task error or dead worker)
                    on_done(i, None, getattr(exc, "cause", None) or exc)
                else:
                    on_done(i, value, None)
    finally:
        if started:
            ray.shutdown()
    return cpus


def failure_reason(exc: BaseException) -> str:
    """One line for a task that failed on every attempt: ``failed after 2 attempts: OSError: disk gone``."""
    return f"failed after {RETRIES + 1} attempts: {type(exc).__name__}: {_first_line(exc)}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else ""
