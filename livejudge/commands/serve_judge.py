"""``livejudge serve-judge``: the judge as a Ray Serve service (``livejudge.distributed.service``).

The flags are parsed here, in the commands room; the service module takes plain values
(``start_service``) and imports neither argparse nor the CLI (issue 21).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time

from livejudge.commands.runner import STOP_SIGNALS, HelpFormatter, print_validity, raise_on_terminate
from livejudge.config import DEFAULT_QWEN_MODEL
from livejudge.distributed.service import (
    DEFAULT_BATCH_WAIT_S,
    DEFAULT_MAX_BATCH,
    DEFAULT_PORT,
    cluster_capacity,
    start_ray,
    start_service,
    stop_service,
)
from livejudge.errors import CLIError


def wait_for_stop() -> None:
    """Block until a stop signal interrupts (KeyboardInterrupt, or ``SignalExit`` for SIGTERM/SIGHUP)."""
    while True:
        time.sleep(3600)


def service_info(url: str) -> dict:
    """The served judge's ``info()`` (GET ``<url>/info``), or ``{}`` when the service does not answer."""
    from livejudge.distributed.remote import JudgeUnavailable, RemoteJudge

    try:
        return RemoteJudge(url).fetch_info(timeout_s=10.0)
    except JudgeUnavailable:
        return {}


def capacity_problem(replicas: int, replica_cpus: float, replica_gpus: float,
                     capacity: dict[str, float]) -> tuple[str, str] | None:
    """What the replicas ask for beyond the Ray cluster's ``capacity`` (``cluster_capacity``), or
    None when it fits: (what they need against what it has, the per-replica flag to lower). Serve
    keeps a replica it cannot place pending without an error: ``--replicas 4`` on a 2-CPU machine
    started nothing and said nothing for minutes (a trial)."""
    for kind, per, flag in (("CPU", replica_cpus, "--replica-cpus"), ("GPU", replica_gpus, "--replica-gpus")):
        need, have = replicas * per, float(capacity.get(kind, 0.0))
        if need > have + 1e-9:
            return (f"--replicas {replicas} × {flag} {per:g} need {need:g} {kind}(s) and the Ray cluster has "
                    f"{have:g}", flag)
    return None


def listen_note(host: str, url: str) -> str:
    """The startup line's address advice: a service bound to every interface (``0.0.0.0``, ``::``)
    is reached at this machine's own address, not at the wildcard the line would otherwise print."""
    if host in ("0.0.0.0", "::", ""):
        here = url.replace(f"//{host}:", "//127.0.0.1:", 1) if host != "::" else url.replace("//:::", "//[::1]:", 1)
        return (f"listening on every interface: sessions on this machine use --judge-url {here}, others "
                "this machine's address in its place")
    return f"sessions: --judge-url {url}"


def _ignore_while_stopping() -> dict:
    """Further stop signals while Serve and Ray shut down: one line, and the shutdown goes on
    (a second SIGTERM cut it short and left Ray's agents running). Async-signal safe (``os.write``).
    Returns the previous handlers (restore them with ``signal.signal``)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    told: list[int] = []

    def handler(signum, frame):
        if not told:
            told.append(signum)
            os.write(2, b"livejudge: still stopping the judge service (Serve, then Ray); please wait\n")

    return {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}


def preflight(args: argparse.Namespace) -> None:
    """What can be checked before Ray starts, each a one-line CLIError (exit 2): flags out of range,
    the port taken, the head or the judge that cannot load (the whisper and acoustic judges are
    loaded once here, under a second; for qwen-omni the head and the model's files). These came
    back as 30–50 lines of Ray traceback with exit 1, the path never named (a trial)."""
    if not 1 <= args.port <= 65535:
        raise CLIError(f"--port must be 1–65535, got {args.port}")
    if args.replicas < 1:
        raise CLIError(f"--replicas must be at least 1, got {args.replicas}")
    if args.replica_cpus < 0 or args.replica_gpus < 0:
        raise CLIError(f"--replica-cpus and --replica-gpus must be ≥ 0, got {args.replica_cpus:g} and "
                       f"{args.replica_gpus:g}")
    import socket

    try:
        with socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((args.host, args.port))
    except OSError as exc:
        import errno

        if exc.errno == errno.EADDRINUSE:
            raise CLIError(f"port {args.port} on {args.host} is in use (another service, or a judge service "
                           "already running?): pick another --port") from None
        raise CLIError(f"cannot listen on {args.host}:{args.port} ({exc.strerror or exc}): check --host and "
                       "--port") from None
    from livejudge.judge.model.head import HeadError
    from livejudge.judge.model.judge import JudgeError, check_qwen_head, load_judge, resolve_kind

    try:
        kind = resolve_kind(args.judge, args.head)
        if kind != "qwen-omni":
            load_judge(kind, args.head)  # cheap on the CPU; the replica loads its own
        else:
            from livejudge.judge.features.backbones.qwen_omni import resolve_model

            check_qwen_head(args.head, args.qwen_model)
            resolve_model(args.qwen_model)
    except (HeadError, JudgeError, FileNotFoundError, OSError, ValueError) as exc:
        raise CLIError(f"the judge service cannot load its judge: {exc}") from None


def cmd_serve_judge(args: argparse.Namespace) -> int:
    """``livejudge serve-judge``: start the service and keep it up until Ctrl-C, SIGTERM or SIGHUP.

    Each of them shuts down Serve, then Ray (its raylet, GCS and agents: nothing is left running),
    and exits 0 (Ctrl-C), 143 (SIGTERM) or 129 (SIGHUP; ``livejudge.errors``). Ray's own SIGTERM
    handler, which aborts the process without that shutdown, is replaced once Ray has started.

    Raises:
        CLIError: a flag out of range, or Ray Serve missing (install hint).
        SignalExit: SIGTERM or SIGHUP, after the shutdown (``cli.main`` turns it into 143 or 129).
    """
    if args.max_batch < 1:
        raise CLIError(f"--max-batch must be at least 1, got {args.max_batch}")
    if args.batch_wait_ms < 0:
        raise CLIError(f"--batch-wait-ms must be ≥ 0, got {args.batch_wait_ms}")
    preflight(args)
    try:
        try:
            start_ray(args.ray_address)
        except ImportError as exc:
            raise CLIError(str(exc)) from None
        except ConnectionError as exc:
            raise CLIError(f"no Ray cluster answers at --ray-address {args.ray_address} ({exc}): start one "
                           "(ray start --head) or drop --ray-address for a local Ray") from None
        raise_on_terminate()  # Ray's handler aborts on SIGTERM, leaving its agents running: take it back
        problem = capacity_problem(args.replicas, args.replica_cpus, args.replica_gpus, cluster_capacity())
        if problem and not args.ray_address:
            raise CLIError(f"{problem[0]}: Serve waits for them without end; lower --replicas or {problem[1]}")
        if problem:  # a cluster may grow (an autoscaler): say it, and wait
            print(f"livejudge: warning: {problem[0]}: the service starts when nodes join (an autoscaler), else "
                  f"never; lower --replicas or {problem[1]}", file=sys.stderr, flush=True)
        try:
            url = start_service(port=args.port, host=args.host, kind=args.judge, head=args.head, device=args.device,
                                model=args.qwen_model if args.judge == "qwen-omni" else None,
                                max_batch_size=args.max_batch, batch_wait_timeout_s=args.batch_wait_ms / 1000.0,
                                num_cpus=args.replica_cpus, num_gpus=args.replica_gpus, num_replicas=args.replicas,
                                ray_address=args.ray_address)
        except (RuntimeError, ValueError, OSError) as exc:  # Serve's deployment errors: the first line, not 40
            first = next((ln for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
            raise CLIError(f"the judge service did not start: {first[:300]} (Ray's logs: "
                           "/tmp/ray/session_latest/logs)", 1) from None
        info = service_info(url)
        who = f"{info['head']} {info.get('head_version') or ''}".strip() if info.get("head") else args.judge
        print(f"livejudge: judge service ({who}) at {url} — {listen_note(args.host, url)}; "
              "Ctrl-C or SIGTERM stops it", file=sys.stderr, flush=True)
        print_validity(info)
        wait_for_stop()
    except KeyboardInterrupt:
        stopped = True
    else:
        stopped = False
    finally:
        old = _ignore_while_stopping()
        try:
            stop_service()
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)
    if stopped:  # SIGTERM/SIGHUP get main's "stopped by SIGTERM"; Ctrl-C had no line at all (a trial)
        print("livejudge: stopped by Ctrl-C (Serve and Ray shut down)", file=sys.stderr)
    return 0


def register(sub) -> None:
    """Add ``livejudge serve-judge`` to the CLI's subparsers."""
    p = sub.add_parser("serve-judge", help="serve the judge to many live sessions (Ray Serve, livejudge[ray])",
                       formatter_class=HelpFormatter,
                       description="Start the judge as a Ray Serve service with dynamic batching: windows from "
                                   "many sessions are judged in shared batches. Sessions use it with "
                                   "--judge-url http://127.0.0.1:PORT/judge (attach, probe, replay, score) or "
                                   "judge_url= (Pipecat observer).",
                       epilog="exit codes: 0 stopped with Ctrl-C · 143 stopped by SIGTERM · 129 by SIGHUP (each "
                              "after shutting down Serve, then the Ray it started: no Ray process is left "
                              "behind) · 2 bad input or usage (one line says what: a flag out of range, Ray "
                              "missing) · 1 anything else that stops the service")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="HTTP port of the Serve proxy")
    p.add_argument("--host", default="127.0.0.1", help="address the proxy listens on (0.0.0.0 exposes it)")
    from livejudge.judge.model.head import head_label
    from livejudge.judge.model.judge import DEFAULT_ACOUSTIC_HEAD, DEFAULT_WHISPER_HEAD

    p.add_argument("--judge", default="auto", choices=("auto", "acoustic", "whisper", "qwen-omni"),
                   help="judge backbone. auto: the whisper judge (from the core install, as livejudge score "
                        "picks it; no livejudge[asr] needed), or the kind of --head's backbone; where it cannot "
                        "load, the service does not start. whisper: the shipped head "
                        f"{head_label(DEFAULT_WHISPER_HEAD)}; acoustic: {head_label(DEFAULT_ACOUSTIC_HEAD)}, NOT "
                        "valid on neural TTS")
    p.add_argument("--head", default=None, metavar="HEAD_DIR", help="head checkpoint directory or a shipped head's name (default: the backbone's shipped head)")
    p.add_argument("--device", default="cpu", help="torch device of the backbone in each replica (cuda for qwen-omni)")
    p.add_argument("--qwen-model", default=DEFAULT_QWEN_MODEL, help="model id or path (--judge qwen-omni)")
    p.add_argument("--max-batch", type=int, default=DEFAULT_MAX_BATCH, help="most windows per judge call")
    p.add_argument("--batch-wait-ms", type=float, default=DEFAULT_BATCH_WAIT_S * 1000,
                   help="how long a batch waits to fill, ms")
    p.add_argument("--replicas", type=int, default=1, help="judge replicas (each loads the model)")
    p.add_argument("--replica-cpus", type=float, default=1.0, help="CPUs reserved per replica")
    p.add_argument("--replica-gpus", type=float, default=0.0, help="GPUs per replica (1 for qwen-omni)")
    p.add_argument("--ray-address", default=None, metavar="ADDRESS",
                   help="join a Ray cluster (auto, ray://host:port) instead of starting a local Ray")
    p.set_defaults(func=cmd_serve_judge)
