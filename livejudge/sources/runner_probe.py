"""Find what a Pipecat development runner offers and pick a route livejudge can use.

Pipecat's runner (``pipecat.runner.run.main``, what ``python bot.py`` starts) serves, on one
port (7860 by default):

* ``GET /status`` → ``{"status": "ready", "transports": [...]}``;
* ``/ws``: telephony media streams and Pipecat's eval harness (first message decides);
* ``/ws-client``: a plain websocket, for bots whose ``transport_params`` has a
  ``websocket`` entry (protobuf serializer);
* ``POST /api/offer``: SmallWebRTC, what the browser client at ``/client`` uses;
* ``POST /start``: session set-up, and websocket tokens when ``--ws-auth token``.

A route is only known to work once the bot built a transport for it, which happens per
connection, so ``pick_route`` tries them in order (eval wire, ``/ws-client`` protobuf,
SmallWebRTC) with a short test connection each and keeps the first that completes.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from livejudge.sources.diagnose import (RunnerInfo, fetch_token, http_base, probe_runner, probe_runner_status,
                                        with_token)

ROUTE_ORDER = ("eval", "ws-client", "webrtc")
"""Routes tried by ``--runner``, best first: the eval wire carries audio as PCM (no codec)
and the bot's RTVI events; ``/ws-client`` needs a ``websocket`` entry; SmallWebRTC adds Opus
and a jitter buffer."""


@dataclass(frozen=True, slots=True)
class Route:
    """A way into a runner-served bot.

    Attributes:
        name: "eval", "ws-client" or "webrtc".
        url: the websocket address (eval, ws-client) or the runner's base URL (webrtc).
        protocol: livejudge's ``--protocol`` for websocket routes ("pipecat-eval", "pipecat"),
            or "webrtc".
        why: how it was chosen, for the user.
    """

    name: str
    url: str
    protocol: str
    why: str = ""


def ws_base(runner: RunnerInfo) -> str:
    return runner.base_url.replace("https://", "wss://", 1).replace("http://", "ws://", 1)


def route_url(runner: RunnerInfo, name: str) -> str:
    """The address of route ``name`` on ``runner``, with a fresh token when the runner wants one."""
    if name == "webrtc":
        return runner.base_url
    path = "/ws" if name == "eval" else "/ws-client"
    url = ws_base(runner) + path
    token = fetch_token(runner, "ws" if name == "eval" else "ws-client")
    return with_token(url, token) if token else url


async def _try_eval(url: str, timeout_s: float, origin: str | None = None) -> str | None:
    """None if the bot completes the eval handshake on ``url``, else why not."""
    from websockets.asyncio.client import connect

    from livejudge.sources.protocols.pipecat_eval import HandshakeError, PipecatEvalProtocol

    proto = PipecatEvalProtocol(ready_timeout_s=timeout_s)
    try:
        async with connect(url, proxy=None, open_timeout=timeout_s, max_size=None, origin=origin) as ws:
            await proto.handshake(ws)
            for m in proto.closing():
                await ws.send(m)
        return None
    except HandshakeError as exc:
        return str(exc)
    except Exception as exc:  # refused handshake, unreachable
        return f"{type(exc).__name__}: {exc}"


async def _try_ws_client(url: str, timeout_s: float, origin: str | None = None) -> str | None:
    """None if ``/ws-client`` stays open (the bot built a 'websocket' transport), else why not."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    try:
        async with connect(url, proxy=None, open_timeout=timeout_s, max_size=None, origin=origin) as ws:
            try:
                await asyncio.wait_for(ws.recv(), 0.8)
            except asyncio.TimeoutError:
                return None  # still open: a transport was built
            except ConnectionClosed as exc:
                rcvd = getattr(exc, "rcvd", None)
                return (f"closed at once (close code {rcvd.code if rcvd else 1006}): the bot could not build a "
                        "transport for it (its bot() has no 'websocket' entry? the runner's log says); try --route eval")
            return None
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


def _has_webrtc_client() -> bool:
    import importlib.util

    return importlib.util.find_spec("aiortc") is not None


class RouteError(ValueError):
    """No runner answers, or no route into its bot worked: the call could not start (a fault of
    the line, exit 1 with a result saying so, as an unreachable ``--ws-url``), not a usage error."""


def pick_route(runner_url: str, prefer: str | None = None, timeout_s: float = 15.0,
               origin: str | None = None) -> Route:
    """Probe the runner at ``runner_url`` and return the first route that works.

    Args:
        prefer: "eval", "ws-client" or "webrtc" to try only that one.
        timeout_s: per-try handshake timeout, seconds (a bot's first session loads its models).
        origin: Origin header for the test connections (runners with --allowed-origins).
    Raises:
        RouteError: no runner there, or no route worked (the message lists each try and why).
    """
    runner, status = probe_runner_status(runner_url)
    if runner is None and status:  # a server answered, but not as a runner (a trial read "is the bot running?")
        raise RouteError(f"no Pipecat development runner answers GET {http_base(runner_url)}/status: the server there "
                         f"answered HTTP {status}, not as Pipecat's runner; is this the bot's address (python bot.py "
                         "listens on http://localhost:7860)?")
    if runner is None:
        raise RouteError(f"no Pipecat development runner answers GET {http_base(runner_url)}/status: is the bot "
                         "running (python bot.py, which listens on http://localhost:7860)?")
    tried = []
    order = (prefer,) if prefer else ROUTE_ORDER
    offered = set(runner.transports)
    for name in order:
        if name == "webrtc":
            if "webrtc" not in offered:
                tried.append("webrtc: not among the runner's transports")
                continue
            if not _has_webrtc_client():
                tried.append("webrtc: needs aiortc (pip install 'livejudge[webrtc]')")
                continue
            return Route("webrtc", runner.base_url, "webrtc", "SmallWebRTC (/api/offer)")
        if name == "ws-client" and "websocket" not in offered:
            tried.append("ws-client: not among the runner's transports")
            continue
        url = route_url(runner, name)
        fail = asyncio.run(_try_eval(url, timeout_s, origin) if name == "eval"
                           else _try_ws_client(url, timeout_s, origin))
        if fail is None:
            # the test connection used the token: mint a fresh one for the call
            url = route_url(runner, name)
            proto = "pipecat-eval" if name == "eval" else "pipecat"
            return Route(name, url, proto, "eval wire (/ws)" if name == "eval" else "protobuf frames (/ws-client)")
        tried.append(f"{name}: {fail}")
    raise RouteError(f"no route into the bot at {runner.base_url} worked: " + "; ".join(tried))


# ------------------------------------------------------------------------------ example bot
def example_bot_path() -> Path:
    """``examples/runner_bot.py`` of this checkout.

    Raises:
        FileNotFoundError: livejudge was installed without its examples folder.
    """
    p = Path(__file__).resolve().parents[2] / "examples" / "runner_bot.py"
    if not p.exists():
        raise FileNotFoundError(f"{p} is missing: `demo --runner` runs the example bot from a source checkout "
                                "(git clone the repository)")
    return p


def start_runner_bot(port: int, *, log: str | None = None, extra: list[str] | None = None,
                     env: dict[str, str] | None = None, timeout_s: float = 60.0,
                     script: str | Path | None = None) -> subprocess.Popen:
    """Start the example bot under Pipecat's runner on 127.0.0.1:``port``; wait for ``/status``.

    Args:
        extra: more flags for the bot/runner (``--think-s``, ``--ws-auth token``…).
        env: replaces the environment variables named in it (e.g. TWILIO_* for the Twilio route).
    Raises:
        RuntimeError: the bot exited or did not answer within ``timeout_s`` (its last stderr line).
    """
    script = Path(script) if script else example_bot_path()
    root = str(Path(__file__).resolve().parents[2])
    cmd = [sys.executable, str(script), "--host", "127.0.0.1", "--port", str(port), "--quiet", *(extra or [])]
    if log:
        cmd += ["--log", log]
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1",
                "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p),
                **(env or {})}
    for k, v in list(full_env.items()):
        if v is None:
            del full_env[k]
    errf = open(os.devnull if log is None else log + ".stderr", "w")
    from livejudge.agents.child import popen_child

    # its own session: a terminal's Ctrl-C stops livejudge, which then ends the call and the bot
    proc = popen_child(cmd, stdout=subprocess.DEVNULL, stderr=errf, env=full_env, cwd=str(script.parent))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            last = ""
            if log:
                lines = Path(log + ".stderr").read_text(errors="replace").strip().splitlines()
                last = lines[-1] if lines else ""
            raise RuntimeError(f"the example runner bot exited (code {proc.returncode}): {last or 'no message'}")
        if probe_runner(f"http://127.0.0.1:{port}") is not None:
            return proc
        time.sleep(0.2)
    proc.terminate()
    raise RuntimeError(f"the example runner bot did not answer on port {port} within {timeout_s:.0f} s")
