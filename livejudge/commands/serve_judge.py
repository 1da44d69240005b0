"""``livejudge serve-judge``: the judge as a Ray Serve service (``livejudge.distributed.service``).

The flags are parsed here, in the commands room; the service module takes plain values
(``start_service``) and imports neither argparse nor the CLI (issue 21).
"""

from __future__ import annotations

import argparse
import sys
import time

from livejudge.commands.runner import HelpFormatter
from livejudge.config import DEFAULT_QWEN_MODEL
from livejudge.distributed.service import DEFAULT_BATCH_WAIT_S, DEFAULT_MAX_BATCH, DEFAULT_PORT, start_service
from livejudge.errors import CLIError


def cmd_serve_judge(args: argparse.Namespace) -> int:
    """``livejudge serve-judge``: start the service and keep it up until Ctrl-C / SIGTERM."""
    if args.max_batch < 1:
        raise CLIError(f"--max-batch must be at least 1, got {args.max_batch}")
    if args.batch_wait_ms < 0:
        raise CLIError(f"--batch-wait-ms must be ≥ 0, got {args.batch_wait_ms}")
    try:
        url = start_service(port=args.port, host=args.host, kind=args.judge, head=args.head, device=args.device,
                            model=args.qwen_model if args.judge == "qwen-omni" else None,
                            max_batch_size=args.max_batch, batch_wait_timeout_s=args.batch_wait_ms / 1000.0,
                            num_cpus=args.replica_cpus, num_gpus=args.replica_gpus, num_replicas=args.replicas,
                            ray_address=args.ray_address)
    except ImportError as exc:
        raise CLIError(str(exc)) from None
    print(f"livejudge: judge service ({args.judge}) at {url} — sessions: --judge-url {url}; Ctrl-C stops it",
          file=sys.stderr, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        from ray import serve

        serve.shutdown()
        import ray

        ray.shutdown()
    return 0


def register(sub) -> None:
    """Add ``livejudge serve-judge`` to the CLI's subparsers."""
    p = sub.add_parser("serve-judge", help="serve the judge to many live sessions (Ray Serve, livejudge[ray])",
                       formatter_class=HelpFormatter,
                       description="Start the judge as a Ray Serve service with dynamic batching: windows from "
                                   "many sessions are judged in shared batches. Sessions use it with "
                                   "--judge-url http://127.0.0.1:PORT/judge (attach, replay, score) or "
                                   "judge_url= (Pipecat observer).",
                       epilog="exit codes: 0 stopped with Ctrl-C · 2 bad input or usage (one line says what: "
                              "a flag out of range, Ray missing) · 1 anything else that stops the service")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="HTTP port of the Serve proxy")
    p.add_argument("--host", default="127.0.0.1", help="address the proxy listens on (0.0.0.0 exposes it)")
    from livejudge.judge.model.head import head_label
    from livejudge.judge.model.judge import DEFAULT_WHISPER_HEAD

    p.add_argument("--judge", default="auto", choices=("auto", "acoustic", "whisper", "qwen-omni"),
                   help="judge backbone (auto: as livejudge score picks it, whisper with livejudge[asr], else "
                        f"acoustic; whisper: the shipped head {head_label(DEFAULT_WHISPER_HEAD)})")
    p.add_argument("--head", default=None, metavar="HEAD_DIR", help="head checkpoint (default: the backbone's shipped head)")
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
