"""The judge as a service for many live sessions: Ray Serve with dynamic batching.

``livejudge serve-judge [--port 8000] [--judge auto]`` starts a Ray Serve application
whose one deployment wraps ``load_judge(...)``. Requests (LJW1, ``livejudge.distributed.remote``)
arrive over HTTP through the Serve proxy on 127.0.0.1 (any language can send them), each
carrying one or more WindowSnapshots; every window is handed to the batched method
``judge_batch`` (``@serve.batch``), which judges the windows of many sessions that arrive
within ``batch_wait_timeout_s`` in one ``Judge.judge`` call of at most ``max_batch_size``
windows — what a GPU backbone wants. Sessions reach it with ``--judge-url URL`` or
``judge_url=`` (``RemoteJudge``), behind their usual ``JudgeScheduler``.

``GET <url>/info`` answers the judge's ``info()``, the batching settings and counters (``batches``,
``windows`` judged, ``skipped``: windows still queued when their client's ``timeout_s`` ran
out, which the service does not judge — under overload it spends its time on windows someone
still waits for).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

APP_NAME = "livejudge-judge"
ROUTE = "/judge"
DEFAULT_PORT = 8000
DEFAULT_MAX_BATCH = 16
"""Most windows per ``Judge.judge`` call in the service."""
DEFAULT_BATCH_WAIT_S = 0.01
"""How long the first window of a batch waits for others, seconds (10 ms: small next to a
2 s judging interval, long enough to gather windows that arrive together)."""
INSTALL_HINT = "serve-judge needs Ray Serve: pip install 'livejudge[ray]'"


def import_serve():
    """``ray.serve``, or ImportError with the one-line install hint."""
    try:
        from ray import serve
    except ImportError:
        raise ImportError(INSTALL_HINT) from None
    return serve


def judge_deployment(max_batch_size: int = DEFAULT_MAX_BATCH, batch_wait_timeout_s: float = DEFAULT_BATCH_WAIT_S,
                     num_cpus: float = 1.0, num_gpus: float = 0.0, num_replicas: int = 1,
                     max_ongoing_requests: int = 512):
    """The Serve deployment class (built here so that importing this module needs no Ray).

    Args:
        max_batch_size, batch_wait_timeout_s: ``@serve.batch`` settings (windows, seconds).
        num_cpus, num_gpus: resources of each replica (a GPU backbone wants ``num_gpus=1``).
        num_replicas: replicas behind the proxy (each loads its own judge).
        max_ongoing_requests: requests one replica takes at once (must exceed the batch size,
            or batches can never fill).
    Raises:
        ImportError: Ray Serve missing (install hint).
    """
    serve = import_serve()
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response

    @serve.deployment(name="JudgeService", num_replicas=num_replicas, max_ongoing_requests=max_ongoing_requests,
                      ray_actor_options={"num_cpus": num_cpus, "num_gpus": num_gpus})
    class JudgeService:
        def __init__(self, kind: str = "auto", head: str | None = None, device: str = "cpu",
                     model: str | None = None) -> None:
            from livejudge.judge.model.judge import load_judge

            kwargs: dict[str, Any] = {"head": head, "device": device}
            if model is not None:
                kwargs["model"] = model
            self.judge = load_judge(kind, **kwargs)
            self.batches = 0
            self.windows = 0
            self.skipped = 0  # windows queued past their client's timeout, not judged
            self.info = {**self.judge.info(), "max_batch_size": max_batch_size,
                         "batch_wait_timeout_s": batch_wait_timeout_s}

        @serve.batch(max_batch_size=max_batch_size, batch_wait_timeout_s=batch_wait_timeout_s)
        async def judge_batch(self, items: list) -> list[dict | None]:
            """items: (WindowSnapshot, expires_at monotonic s or None); None back for an expired one."""
            from livejudge.distributed.remote import result_to_wire

            now = time.monotonic()
            live = [i for i, (_, exp) in enumerate(items) if exp is None or now < exp]
            self.skipped += len(items) - len(live)
            out: list[dict | None] = [None] * len(items)
            if live:
                # in a thread: the replica keeps accepting requests (the next batch fills meanwhile)
                results = await asyncio.to_thread(self.judge.judge, [items[i][0] for i in live])
                self.batches += 1
                self.windows += len(live)
                for i, r in zip(live, results, strict=True):
                    out[i] = result_to_wire(r)
            return out

        async def __call__(self, request: Request) -> Response:
            from livejudge.distributed.remote import WireError, decode_request

            if request.method == "GET":
                return JSONResponse({**self.info, "batches": self.batches, "windows": self.windows,
                                     "skipped": self.skipped})
            t0 = time.perf_counter()
            try:
                windows, timeout_s = decode_request(await request.body())
            except WireError as exc:
                return Response(str(exc), status_code=400, media_type="text/plain")
            # a window still queued when its client has given up is skipped (load shedding)
            expires = None if timeout_s is None else time.monotonic() + timeout_s - (time.perf_counter() - t0)
            results = await asyncio.gather(*(self.judge_batch((w, expires)) for w in windows))
            return Response(json.dumps({"results": results, "info": self.info,
                                        "service_s": time.perf_counter() - t0}),
                            media_type="application/json")

    return JudgeService


def start_ray(ray_address: str | None = None) -> None:
    """Start a local Ray (``ray_address`` None) or join the cluster at ``ray_address`` (``auto``,
    ``ray://host:port``), unless this process is already connected. The stop-signal handlers in
    place before it are in place after it (``ray_batch.guarded_init``): Ray's own aborts the driver
    without stopping Serve or its agents.

    Raises:
        ImportError: Ray Serve missing (install hint). Ray's own errors (no cluster at the address).
    """
    import_serve()
    import ray

    if ray.is_initialized():
        return
    from livejudge.distributed.ray_batch import guarded_init  # a SIGTERM while Ray starts: shut it down

    if ray_address:
        guarded_init(ray, address=ray_address, log_to_driver=False, logging_level="ERROR")
    else:
        guarded_init(ray, include_dashboard=False, log_to_driver=False, logging_level="ERROR")


def cluster_capacity() -> dict[str, float]:
    """The CPUs and GPUs of the Ray cluster this process is connected to (``ray.cluster_resources``),
    as ``{"CPU": float, "GPU": float}`` (0.0 for a kind it has none of)."""
    import ray

    res = ray.cluster_resources()
    return {"CPU": float(res.get("CPU", 0.0)), "GPU": float(res.get("GPU", 0.0))}


def stop_service() -> None:
    """Shut down Serve (its applications, proxy and controller), then disconnect from Ray and stop
    the local Ray that ``start_ray`` started (its raylet, GCS and agents). Nothing happens when this
    process is not connected to Ray. Serve failing to shut down (its controller already gone) does
    not keep Ray running: Ray is stopped all the same."""
    try:
        import ray
        from ray import serve
    except ImportError:
        return
    if not ray.is_initialized():
        return
    try:
        serve.shutdown()
    except Exception:  # noqa: BLE001  (Serve half-gone: still stop Ray and its agents)
        pass
    ray.shutdown()


def start_service(*, port: int = DEFAULT_PORT, host: str = "127.0.0.1", kind: str = "auto",
                  head: str | None = None, device: str = "cpu", model: str | None = None,
                  max_batch_size: int = DEFAULT_MAX_BATCH, batch_wait_timeout_s: float = DEFAULT_BATCH_WAIT_S,
                  num_cpus: float = 1.0, num_gpus: float = 0.0, num_replicas: int = 1,
                  name: str = APP_NAME, route: str = ROUTE, ray_address: str | None = None) -> str:
    """Start (or join) Ray, start Serve's HTTP proxy on ``host:port`` and deploy the judge.

    Returns:
        the service URL, e.g. ``http://127.0.0.1:8000/judge`` (pass it as ``--judge-url``).
    Raises:
        ImportError: Ray Serve missing. Whatever ``load_judge`` raises in the replica comes back
        as a Ray deployment error naming it.
    """
    serve = import_serve()
    start_ray(ray_address)
    import logging

    # Serve's INFO lines: serve.run finds the instance serve.start just began and says "Connecting to
    # existing Serve app ... New http_options will not be applied", which read as a stale service (a trial)
    logging.getLogger("ray.serve").setLevel(logging.WARNING)
    serve.start(http_options={"host": host, "port": port})
    cls = judge_deployment(max_batch_size, batch_wait_timeout_s, num_cpus, num_gpus, num_replicas)
    serve.run(cls.bind(kind, head, device, model), name=name, route_prefix=route, blocking=False)
    return f"http://{host}:{port}{route}"
