"""Diagnoses that name the real cause when a call to a Pipecat bot fails.

A websocket fault alone says little: Pipecat's development runner answers a refused token
and a refused Origin with the same HTTP 403, and closes the socket at once (1006, or 1011
from its ASGI server) when the bot cannot build a transport for the route, which looks like
a dropped network connection. These functions ask the runner itself (``GET /status``,
``POST /start``: both side-effect free for the websocket routes, ``/start`` only mints a
token) and turn the fault into one line that says what to do.

All functions are synchronous and make at most two HTTP requests with a short timeout; call
them off the event loop (``asyncio.to_thread``).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlparse, urlunparse

HTTP_TIMEOUT_S = 1.5
"""Timeout of each diagnostic HTTP request, seconds."""

EARLY_CLOSE_S = 1.5
"""A close this soon after the connection opened, with no agent audio, counts as "right after
connecting" (the runner closes within milliseconds when it cannot build a transport)."""


@dataclass(frozen=True, slots=True)
class RunnerInfo:
    """What ``GET /status`` of a Pipecat development runner said.

    Attributes:
        base_url: http(s)://host:port of the runner.
        transports: the transports its ``/start`` accepts (all, or the one given with ``-t``).
    """

    base_url: str
    transports: tuple[str, ...]


def http_base(url: str) -> str:
    """``ws://h:p/path`` or ``http://h:p/path`` → ``http://h:p`` (wss → https)."""
    p = urlparse(url)
    scheme = {"ws": "http", "wss": "https"}.get(p.scheme, p.scheme or "http")
    return urlunparse((scheme, p.netloc, "", "", "", ""))


def check_runner_url(url: str, flag: str = "--runner") -> str | None:
    """Refuse a runner address that cannot be dialled, before anything is: no ``http://`` scheme
    (``127.0.0.1:7860`` read as the scheme "127.0.0.1" and reported "no runner answers GET
    http:///status", exit 1, with the bot running; a trial), no host, a port outside 1–65535.
    Returns a note when the address has a path, which is not used (the runner's routes are at its
    root), else None. Raises ValueError naming ``flag`` and the fix."""
    p = urlparse(url)
    if p.scheme not in ("http", "https", "ws", "wss") or not p.netloc:
        shown = url.split("?", 1)[0] + ("?…" if "?" in url else "")  # a ?token=… is a credential
        raise ValueError(f"{flag} must look like http://host:port (the runner's address, e.g. http://localhost:7860), "
                         f"got {shown!r}")
    try:
        port = p.port
    except ValueError:
        port = -1
    if not p.hostname or port == -1 or port == 0:
        raise ValueError(f"{flag} {http_base(url)!r}: the host or port is not valid (a port is 1–65535); e.g. "
                         "http://localhost:7860")
    if p.path.rstrip("/"):
        return (f"{flag}: the path {p.path} is not used: the runner's routes (/status, /api/offer, /ws) are read at "
                f"{http_base(url)}")
    return None


def _opener():
    # a local runner must not go through an HTTP proxy from the environment
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def http_json(url: str, body: dict | None = None, timeout_s: float = HTTP_TIMEOUT_S) -> tuple[int, object]:
    """GET (or POST ``body`` as JSON) and parse the answer.

    Returns:
        (HTTP status, parsed JSON or the text, "" when empty); status 0 when unreachable.
    """
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="GET" if body is None else "POST",
                                 headers={"Content-Type": "application/json"} if body is not None else {})
    try:
        with _opener().open(req, timeout=timeout_s) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read() or b""
    except (OSError, ValueError):
        return 0, ""
    text = raw.decode("utf-8", "replace")
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def probe_runner(url: str) -> RunnerInfo | None:
    """The Pipecat development runner serving ``url`` (any ws/http address on it), or None."""
    return probe_runner_status(url)[0]


def probe_runner_status(url: str) -> tuple[RunnerInfo | None, int]:
    """(``probe_runner``'s answer, the HTTP status of ``GET /status``: 0 when nothing answered)."""
    base = http_base(url)
    status, doc = http_json(base + "/status")
    if status == 200 and isinstance(doc, dict) and doc.get("status") == "ready" and "transports" in doc:
        return RunnerInfo(base, tuple(str(t) for t in doc.get("transports") or ())), status
    return None, status


def route_of(url: str) -> str:
    """The runner route a websocket address points at: "ws" (telephony/eval), "ws-client"
    (plain websocket, protobuf) or "" (anything else)."""
    path = urlparse(url).path.rstrip("/")
    first = path.split("/")[1] if path.count("/") >= 1 and path else ""
    return first if first in ("ws", "ws-client") else ""


def start_transport_for(route: str) -> str:
    """The ``/start`` transport that mints tokens for a route (``twilio`` for ``/ws``)."""
    return "websocket" if route == "ws-client" else "twilio"


def fetch_token(runner: RunnerInfo, route: str) -> str | None:
    """A one-time websocket token from ``POST /start`` (None when the runner does not use tokens).

    Runner facts (pipecat-ai 1.14 ``runner/run.py``): with ``--ws-auth token`` (or
    ``PIPECAT_WEBSOCKET_AUTH=token``) ``/ws`` and ``/ws-client`` refuse a handshake without a
    valid HMAC token (HTTP 403); ``POST /start`` with ``{"transport": "twilio"}`` (for ``/ws``)
    or ``"websocket"`` (for ``/ws-client``) returns one in ``token``, valid 300 s, one use,
    passed as ``?token=``, ``Authorization: Bearer`` or a last path segment.
    """
    status, doc = http_json(runner.base_url + "/start", {"transport": start_transport_for(route)})
    if status == 200 and isinstance(doc, dict) and doc.get("token"):
        return str(doc["token"])
    return None


def with_token(url: str, token: str) -> str:
    """``url`` with ``?token=`` added (the runner reads it from the query)."""
    p = urlparse(url)
    q = (p.query + "&" if p.query else "") + "token=" + token
    return urlunparse((p.scheme, p.netloc, p.path, p.params, q, p.fragment))


def forbidden(url: str, origin: str | None) -> str:
    """The one-line cause of an HTTP 403 on the websocket handshake to ``url``."""
    runner = probe_runner(url)
    if runner is None:
        hint = ("pass the Origin it allows, e.g. --origin http://localhost" if not origin
                else f"--origin {origin} is not on its allow-list")
        return (f"{url} refused the websocket handshake with HTTP 403 Forbidden: the agent checks the Origin "
                f"header; {hint}")
    route = route_of(url)
    if not route:  # the runner answers 403 for a path it has no websocket at (a trial blamed the Origin)
        ws_base = runner.base_url.replace("http", "ws", 1)
        return (f"{url} refused the websocket handshake with HTTP 403: the Pipecat runner at {runner.base_url} has "
                f"no websocket at {urlparse(url).path or '/'} (its routes: /ws, /ws-client); use --ws-url "
                f"{ws_base}/ws, or --runner {runner.base_url}, which picks the route")
    if "token=" in urlparse(url).query:
        return (f"{urlparse(url).path} on {runner.base_url} refused the websocket handshake with HTTP 403 although a "
                f"token was given: runner tokens are one-use and expire after 300 s (get a fresh one with POST "
                f"{runner.base_url}/start, or use --runner {runner.base_url}), or the Origin is not on its "
                f"allow-list (--origin)")
    token = fetch_token(runner, route) if route else None
    if token is not None:
        return (f"{url} refused the websocket handshake with HTTP 403: this Pipecat runner requires a session "
                f"token (--ws-auth token / PIPECAT_WEBSOCKET_AUTH=token). Get one with POST {runner.base_url}/start "
                f"{{\"transport\": \"{start_transport_for(route)}\"}} and add ?token=… to --ws-url, or use "
                f"--runner {runner.base_url}, which does this for you")
    who = f"--origin {origin} is not on it" if origin else "pass one of them with --origin, e.g. --origin http://localhost"
    return (f"{url} refused the websocket handshake with HTTP 403: this Pipecat runner needs no token, so it is "
            f"its Origin allow-list (--allowed-origins / PIPECAT_ALLOWED_ORIGINS); {who}")


def _route_advice(runner: RunnerInfo, route: str, protocol: str) -> str:
    base = runner.base_url
    ws_base = base.replace("http", "ws", 1)
    if route == "ws-client":
        return (f"the runner could not build a 'websocket' transport for this bot (its transport_params has no "
                f"'websocket' entry with ProtobufFrameSerializer, which Pipecat's examples do not define). Try "
                f"the eval wire: --ws-url {ws_base}/ws --protocol pipecat-eval, or --runner {base}")
    if route == "ws" and protocol == "twilio":
        return ("the runner could not build a Twilio transport for this bot: Pipecat's runner creates "
                "TwilioFrameSerializer with auto hang-up, which needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN in "
                "the bot's environment (any values work locally), and a 'twilio' entry in its transport_params. "
                f"Or use the eval wire: --ws-url {ws_base}/ws --protocol pipecat-eval")
    if route == "ws" and protocol == "pipecat-eval":
        return (f"the runner could not build an 'eval' transport for this bot (its transport_params has no "
                f"'eval' entry: EvalTransportParams(audio_in_enabled=True, audio_out_enabled=True)). Try "
                f"SmallWebRTC (what the browser client uses): --runner {base}")
    if route == "ws":
        return (f"/ws is the runner's telephony and eval route, which expects JSON text first (eval-connect or "
                f"a Twilio start event), not --protocol {protocol}: use --protocol pipecat-eval, or --runner {base}")
    return f"check the route; --runner {base} finds a working one"


def early_close(url: str, protocol: str, code: int, t_s: float) -> str | None:
    """The cause of a close right after connecting, when ``url`` is served by Pipecat's runner.

    Args:
        code: the websocket close code (1006 = no close frame).
        t_s: seconds between the connection opening and the close.
    Returns:
        One line naming the cause and the route to try, or None when ``url`` is not a runner
        (the caller keeps its generic message).
    """
    runner = probe_runner(url)
    if runner is None:
        return None
    route = route_of(url)
    return (f"the bot closed the connection {t_s:.1f} s after it opened (close code {code}), before sending any "
            f"audio: {_route_advice(runner, route, protocol)}")


def mismatch_hint(url: str, protocol: str) -> str:
    """A likely wire-format mismatch between ``protocol`` and the route of ``url`` ("" if none)."""
    route = route_of(url)
    if route == "ws-client" and protocol != "pipecat":
        return (f"--protocol {protocol} on /ws-client is a likely mismatch: the runner's /ws-client speaks Pipecat "
                "protobuf frames (--protocol pipecat); Twilio and the eval wire go to /ws")
    if route == "ws" and protocol == "pipecat":
        return ("--protocol pipecat on /ws is a likely mismatch: the runner's /ws expects JSON text (use "
                "--protocol pipecat-eval, or twilio for a telephony bot)")
    return ""


def closed_before_audio(url: str, protocol: str, code: int, t_s: float, messages_in: int) -> str:
    """One line for an agent that ended the call before sending any audio (a fault: exit 1)."""
    cause = early_close(url, protocol, code, t_s) if t_s <= EARLY_CLOSE_S else None
    if cause is not None:
        return cause
    hint = mismatch_hint(url, protocol)
    # 1006 is no close frame at all: the connection was lost, not closed (a trial read "closed")
    how = ("the connection to the agent dropped" if code == 1006 else "the agent closed the connection")
    return (f"{how} after {t_s:.1f} s (close code {code}) without sending any audio "
            f"({messages_in} messages){'; ' + hint if hint else '; is --protocol ' + protocol + ' its wire format?'}")
