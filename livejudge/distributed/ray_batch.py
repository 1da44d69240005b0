"""Batch scoring on Ray: ``livejudge score calls/ --out-dir results/ --ray [ADDRESS]``.

Each call is one Ray task running ``livejudge.commands.batch.score_call`` — the very function the
``--jobs N`` process pool runs — so a result equals the local path's (apart from timing
fields such as ``compute_ms``). The driver writes the result documents and the same
``summary.json``/``summary.csv`` as ``--jobs``.

Failures: a call ``score_call`` rejects (``CallError``: missing, empty, undecodable, mono)
is reported at once, not retried (it would fail the same way). Any other exception, or a
worker process that dies, is retried once (``max_retries=1``, ``retry_exceptions=True``)
and then reported with its reason; the batch always goes on.

Where: no address starts a local Ray for the run (``num_cpus`` = ``--jobs`` when given, else
the CPU count; no dashboard) and shuts it down after; ``auto`` or ``ray://host:port`` joins
an existing cluster, whose nodes must have livejudge installed and see the call paths
(a shared filesystem: the tasks open the files where they run; results come back to the
driver, which writes them).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from livejudge.commands.batch import (
    CallError,
    ScoreOptions,
    _out_names,
    _progress,
    _report_row,
    score_call,
    write_summary,
)

INSTALL_HINT = "--ray needs Ray: pip install 'livejudge[ray]'"
RETRIES = 1
"""Retries of a call after a transient failure (an exception other than CallError, or a dead worker)."""


def import_ray():
    """``ray``, or ImportError with the one-line install hint."""
    try:
        import ray
    except ImportError:
        raise ImportError(INSTALL_HINT) from None
    return ray


def _attempt(score_fn: Callable[[str, ScoreOptions], dict], path: str, options: ScoreOptions) -> dict:
    """Task body: the result document, or ``{"call_error": reason}`` for a rejected call
    (a value, so Ray does not retry it); other exceptions propagate (Ray retries once)."""
    t0 = time.perf_counter()
    try:
        doc = score_fn(path, options)
    except CallError as exc:
        return {"call_error": str(exc), "wall_s": time.perf_counter() - t0}
    return {"doc": doc, "wall_s": time.perf_counter() - t0}


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
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    else:
        try:
            ray.init(address=address, log_to_driver=False, logging_level="ERROR")
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ConnectionError(f"cannot reach the Ray cluster at {address}: {exc} "
                                  "(start one with `ray start --head`, or drop the address for a local Ray)") from None
    return True


def run_batch_ray(files: list[Path], out_dir: str | Path, options: ScoreOptions, *, address: str | None = None,
                  num_cpus: int | None = None, progress: bool = True,
                  score_fn: Callable[[str, ScoreOptions], dict] = score_call) -> dict:
    """Score ``files`` as Ray tasks into ``out_dir``; write summary.json/.csv (as ``run_batch``).

    Args:
        files: the calls (paths visible to every Ray node).
        address: None for a local Ray started for the run, else "auto" or "ray://host:port".
        num_cpus: CPUs of the local Ray (None: all); ignored with an address.
        score_fn: the per-call function (default ``batch.score_call``; tests pass a faulty one).
    Returns:
        the summary document of ``run_batch`` with ``jobs`` = the CPUs Ray offered and
        ``ray`` = {"address", "retries"}; each row as ``run_batch``'s, plus ``attempts`` for a
        call whose task failed (retried once).
    Raises:
        ImportError: Ray missing. ConnectionError: no cluster at ``address``.
    """
    from livejudge.commands.gates import call_metrics
    from livejudge.outputs.report import write_json

    ray = import_ray()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    names = _out_names(files)
    started = init_ray(address, num_cpus)
    t0 = time.perf_counter()
    rows: list[dict | None] = [None] * len(files)
    cpus = 0
    bar = _progress(len(files)) if progress else None
    try:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        task = ray.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=True)(_attempt)
        fn_ref = ray.put(score_fn)
        opt_ref = ray.put(options)
        pending = {task.remote(fn_ref, str(f), opt_ref): i for i, f in enumerate(files)}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            for ref in ready:
                i = pending.pop(ref)
                path = str(files[i])
                row: dict[str, Any] = {"file": path, "status": "skipped", "reason": None, "result": None,
                                       "metrics": None}
                try:
                    got = ray.get(ref)
                except Exception as exc:  # failed on its retry too (task error or dead worker)
                    cause = getattr(exc, "cause", None) or exc
                    row["reason"] = f"failed after {RETRIES + 1} attempts: {type(cause).__name__}: {_first_line(cause)}"
                    row["attempts"] = RETRIES + 1
                    row["wall_s"] = None
                else:
                    if "call_error" in got:
                        row["reason"] = got["call_error"]
                    else:
                        doc = got["doc"]
                        out_path = str(out / names[i])
                        write_json(doc, out_path)
                        row.update(status="ok", result=out_path, metrics=call_metrics(doc),
                                   errors=list(doc.get("errors") or []))
                    row["wall_s"] = round(got["wall_s"], 3)
                rows[i] = row
                _report_row(row, bar)
    finally:
        if bar is not None:
            bar[0].stop()
        if started:
            ray.shutdown()
    return write_summary(rows, out, jobs=cpus, wall_s=time.perf_counter() - t0,
                         ray={"address": address or "local", "retries": RETRIES})


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else ""
