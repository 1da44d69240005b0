"""A judge in another process: the wire format of the judge service and ``RemoteJudge``, its
client (standard library + numpy only: a session needs no Ray to use a service).

Wire format ``LJW1`` (one HTTP POST to the service URL, ``Content-Type:
application/x-livejudge-windows``), chosen so that any language can write it:

    b"LJW1" | uint32 little-endian: header length H | H bytes of UTF-8 JSON header | audio

The header is ``{"windows": [w, ...]}``, each ``w`` holding ``start_s``, ``end_s`` (session
seconds), ``sample_rate`` (Hz, 16000), ``n_user``, ``n_agent`` (samples) and the window's events
as lists of objects with the dataclass fields of ``livejudge.events`` (``segments``,
``turns``, ``transitions``, ``barge_ins``, ``backchannels``, ``transcripts``). The audio
follows in window order: the user's samples then the agent's, float32 little-endian, mono,
16 kHz — 64 kB per second per channel, so a 30 s window is about 1.9 MB.

An optional header key ``timeout_s`` says how long the client waits: the service skips a
window still queued after that long (nobody would read its result) and answers ``null`` for it.

The answer is JSON: ``{"results": [r, ...], "info": {...}}``, one ``r`` (or ``null``) per window in order
with the ``JudgeResult`` fields at full precision (``t_s``, ``window_start_s``,
``window_end_s``, ``p_human``, ``compute_s`` and ``dimensions``: id → the ``DimensionScore``
fields); ``info`` is the served judge's ``Judge.info()``. ``GET <url>/info`` returns the
info alone. JSON floats round-trip exactly (shortest repr), so a remote result equals the
in-process one for the same windows.
"""

from __future__ import annotations

import json
import struct
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any, Callable

import numpy as np

from livejudge.events import (
    Backchannel,
    BargeIn,
    DimensionScore,
    JudgeResult,
    SpeechSegment,
    Transition,
    Turn,
    TurnTranscript,
)
from livejudge.timing.window import WindowSnapshot

MAGIC = b"LJW1"
CONTENT_TYPE = "application/x-livejudge-windows"
EVENT_FIELDS = {"segments": SpeechSegment, "turns": Turn, "transitions": Transition, "barge_ins": BargeIn,
                "backchannels": Backchannel, "transcripts": TurnTranscript}
"""WindowSnapshot field → event class of its items."""
DEFAULT_TIMEOUT_S = 2.0
"""Longest wait for one judge answer before the windows count as unjudged, seconds."""
DEFAULT_RETRY_S = 1.0
"""After a failure, windows are counted unjudged without asking the service for this long, seconds
(a dead service then costs nothing per window; a slow one at most one timeout per ``retry_s``)."""


class WireError(ValueError):
    """A request or answer that does not follow the LJW1 format (one line naming the problem)."""


class JudgeUnavailable(RuntimeError):
    """The judge service did not answer in time, refused, or failed (one line, with the URL)."""


class NotAJudgeService(JudgeUnavailable):
    """Something answered at the URL, but not as a livejudge judge service (an HTTP error status, or
    an answer that is not the judge's info): a wrong URL, not an outage."""


# ----------------------------------------------------------------------------- wire format
def encode_windows(windows: Sequence[WindowSnapshot], timeout_s: float | None = None) -> bytes:
    """WindowSnapshots → one LJW1 request body (see the module docstring); ``timeout_s``: how
    long the client will wait, so the service can skip windows nobody waits for any more."""
    header, blobs = [], []
    for w in windows:
        user = np.ascontiguousarray(w.user, dtype="<f4")
        agent = np.ascontiguousarray(w.agent, dtype="<f4")
        item: dict[str, Any] = {"start_s": float(w.start_s), "end_s": float(w.end_s),
                                "sample_rate": int(w.sample_rate), "n_user": int(user.size), "n_agent": int(agent.size)}
        for name in EVENT_FIELDS:
            item[name] = [asdict(e) for e in getattr(w, name)]
        header.append(item)
        blobs += [user.tobytes(), agent.tobytes()]
    doc: dict[str, Any] = {"windows": header}
    if timeout_s is not None:
        doc["timeout_s"] = float(timeout_s)
    head = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    return b"".join([MAGIC, struct.pack("<I", len(head)), head, *blobs])


def decode_windows(body: bytes) -> list[WindowSnapshot]:
    """One LJW1 request body → WindowSnapshots (float32 audio, events as dataclasses).

    Raises:
        WireError: as ``decode_request``.
    """
    return decode_request(body)[0]


def decode_request(body: bytes) -> tuple[list[WindowSnapshot], float | None]:
    """One LJW1 request body → (WindowSnapshots, the client's ``timeout_s`` or None).

    Raises:
        WireError: wrong magic, truncated body, bad header or audio lengths that do not add up.
    """
    if len(body) < 8 or body[:4] != MAGIC:
        raise WireError("not a livejudge window request: the body must start with b'LJW1' (livejudge.distributed.remote)")
    (n,) = struct.unpack("<I", body[4:8])
    if 8 + n > len(body):
        raise WireError(f"truncated request: header of {n} bytes but only {len(body) - 8} follow")
    try:
        doc = json.loads(body[8:8 + n].decode("utf-8"))
        header = doc["windows"]
        timeout_s = None if doc.get("timeout_s") is None else float(doc["timeout_s"])
    except (ValueError, KeyError, TypeError) as exc:
        raise WireError(f"bad request header: {exc}") from None
    pos = 8 + n
    out = []
    try:
        for item in header:
            chans = []
            for key in ("n_user", "n_agent"):
                k = int(item[key])
                if k < 0 or pos + 4 * k > len(body):
                    raise WireError(f"audio of {k} samples runs past the end of the request")
                chans.append(np.frombuffer(body, dtype="<f4", count=k, offset=pos).astype(np.float32))
                pos += 4 * k
            events = {name: tuple(cls(**e) for e in item.get(name, ())) for name, cls in EVENT_FIELDS.items()}
            out.append(WindowSnapshot(start_s=float(item["start_s"]), end_s=float(item["end_s"]), user=chans[0],
                                      agent=chans[1], sample_rate=int(item["sample_rate"]), **events))
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, WireError):
            raise
        raise WireError(f"bad window in request: {type(exc).__name__}: {exc}") from None
    if pos != len(body):
        raise WireError(f"request has {len(body) - pos} bytes after the last window's audio")
    return out, timeout_s


def result_to_wire(r: JudgeResult) -> dict:
    """JudgeResult → JSON-able dict at full precision (not ``to_dict``, which rounds)."""
    return {"t_s": r.t_s, "window_start_s": r.window_start_s, "window_end_s": r.window_end_s,
            "classifier_p_human": r.classifier_p_human, "compute_s": r.compute_s,
            "evidence_share": r.evidence_share, "frame_p_human": r.frame_p_human,
            "frame_contribution": r.frame_contribution,
            "dimensions": {k: asdict(v) for k, v in r.dimensions.items()}}


def result_from_wire(d: dict) -> JudgeResult:
    """Inverse of ``result_to_wire``. Raises WireError on a malformed answer."""
    try:
        return JudgeResult(t_s=float(d["t_s"]), window_start_s=float(d["window_start_s"]),
                           window_end_s=float(d["window_end_s"]),
                           classifier_p_human=float(d["classifier_p_human"]),
                           compute_s=float(d.get("compute_s", 0.0)),
                           evidence_share=float(d.get("evidence_share", 1.0)),
                           frame_p_human=None if d.get("frame_p_human") is None else float(d["frame_p_human"]),
                           frame_contribution=float(d.get("frame_contribution", 0.0)),
                           dimensions={k: DimensionScore(**v) for k, v in d.get("dimensions", {}).items()})
    except (KeyError, TypeError, ValueError) as exc:
        raise WireError(f"bad judge result from the service: {type(exc).__name__}: {exc}") from None


# ----------------------------------------------------------------------------- client
class RemoteJudge:
    """``judge(windows) -> list[JudgeResult]`` answered by a judge service over HTTP.

    Drop-in for ``Judge`` where ``JudgeScheduler``/``Session`` take one: the scheduler's worker
    thread makes the call, so a slow or absent service never holds up audio (live mode drops
    stale windows as with an in-process judge).

    When the service does not answer within ``timeout_s``, refuses, or fails, the windows of
    that call are counted in ``unavailable_windows`` and the call returns no results; the
    first failure of an outage raises ``JudgeUnavailable`` once (the scheduler puts it in the
    session's ``errors``), later ones are silent until the service answers again. For
    ``retry_s`` after a failure windows are counted without asking. ``info()`` carries the
    served judge's info plus ``service`` (the URL) and ``judge_unavailable_windows``, so the
    result document says how many windows went unjudged.

    Args:
        url: the service endpoint, e.g. ``http://127.0.0.1:8000/judge`` (``livejudge serve-judge``).
        timeout_s: longest wait per request, seconds (default 2).
        retry_s: quiet period after a failure, seconds (default 1).
    Raises:
        ValueError: a URL that is not http(s)://.
    """

    def __init__(self, url: str, timeout_s: float = DEFAULT_TIMEOUT_S, retry_s: float = DEFAULT_RETRY_S) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"--judge-url must be an http:// URL such as http://127.0.0.1:8000/judge, got {url!r}")
        if timeout_s <= 0:
            raise ValueError(f"judge service timeout must be positive, got {timeout_s}")
        self.url = url.rstrip("/")
        self.timeout_s = float(timeout_s)
        self.retry_s = float(retry_s)
        self.unavailable_windows = 0
        self.judged_windows = 0
        self.outages = 0
        self.latencies_s: list[float] = []  # request round trips, seconds (bounded below)
        self._down = False
        self._retry_at = 0.0
        self._info: dict | None = None
        self._lock = threading.Lock()

    def fetch_info(self, timeout_s: float | None = None) -> dict:
        """The served judge's ``info()`` (GET ``<url>/info``).

        Raises:
            NotAJudgeService: the URL answered with an HTTP error status, or with something other
                than a judge's info (a JSON object naming its ``backbone``).
            JudgeUnavailable: no answer (refused, unknown host, timed out).
        """
        wrong = (f"{self.url} answered GET {self.url}/info with {{}}: no livejudge judge service there "
                 "(serve-judge prints its URL, which ends in /judge)")
        try:
            with urllib.request.urlopen(self.url + "/info", timeout=timeout_s or self.timeout_s) as resp:
                info = json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise NotAJudgeService(wrong.format(_reason(exc))) from None
        except ValueError:  # not JSON
            raise NotAJudgeService(wrong.format("something other than JSON")) from None
        except OSError as exc:
            raise JudgeUnavailable(f"judge service at {self.url} did not answer: {_reason(exc)}") from None
        if not isinstance(info, dict) or "backbone" not in info:  # any JSON file passed (a re-check)
            raise NotAJudgeService(wrong.format("JSON that is not a judge's info (no backbone)"))
        self._info = dict(info)
        return self._info

    def info(self) -> dict:
        """What the result document shows (no network: the last info the service sent)."""
        base = dict(self._info) if self._info else {"backbone": "unknown (service not reached)"}
        base.update(service=self.url, judge_unavailable_windows=self.unavailable_windows)
        return base

    def judge(self, windows: Sequence[WindowSnapshot]) -> list[JudgeResult]:
        """Judge ``windows`` on the service; see the class docstring for failures.

        Returns:
            one JudgeResult per window in order, or ``[]`` when the service could not judge them.
        Raises:
            JudgeUnavailable: once per outage (the first failure), naming the URL and the reason.
        """
        if not windows:
            return []
        now = time.monotonic()
        with self._lock:
            if self._down and now < self._retry_at:
                self.unavailable_windows += len(windows)
                return []
        body = encode_windows(windows, self.timeout_s)
        req = urllib.request.Request(self.url, data=body, method="POST", headers={"Content-Type": CONTENT_TYPE})
        t0 = time.perf_counter()
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                doc = json.loads(resp.read().decode("utf-8"))
            if len(doc["results"]) != len(windows):
                raise WireError(f"the service answered {len(doc['results'])} results for {len(windows)} windows")
            if any(r is None for r in doc["results"]):  # skipped: queued past our timeout
                raise TimeoutError("the service skipped windows queued past the client's timeout")
            results = [result_from_wire(r) for r in doc["results"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            with self._lock:
                self.unavailable_windows += len(windows)
                self._retry_at = time.monotonic() + self.retry_s
                first = not self._down
                self._down = True
                if first:
                    self.outages += 1
            if first:
                raise JudgeUnavailable(
                    f"judge service at {self.url} unavailable ({_reason(exc)}): timing is still measured; "
                    "windows it cannot judge are counted in judge_info.judge_unavailable_windows") from None
            return []
        with self._lock:
            self._down = False
            self.judged_windows += len(results)
            if len(self.latencies_s) < 100_000:
                self.latencies_s.append(time.perf_counter() - t0)
            if isinstance(doc.get("info"), dict):
                self._info = doc["info"]
        return results


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    if isinstance(exc, TimeoutError) or "timed out" in str(exc):
        return "no answer within the timeout"
    return f"{type(exc).__name__}: {exc}"


def asked_remote_judge(url: str) -> tuple[RemoteJudge, JudgeUnavailable | None]:
    """A ``RemoteJudge`` for ``url`` whose service was asked for its info (``fetch_info``), and the
    ``JudgeUnavailable`` of a service that did not answer (None when it did): what that means is
    the caller's to say (a recorded call refuses it, a live one goes on).

    Raises:
        ValueError: a URL that is not http(s)://.
        NotAJudgeService: something answers at the URL, but no judge service does.
    """
    judge = RemoteJudge(url)
    try:
        judge.fetch_info()
    except NotAJudgeService:
        raise
    except JudgeUnavailable as exc:
        return judge, exc
    return judge, None


def embedded_remote_judge(url: str, where: str, warn: Callable[[str], None]) -> RemoteJudge:
    """A ``RemoteJudge`` for an embedding's ``judge_url`` (the Pipecat observer, the LiveKit tap),
    its service asked for its info first, as ``livejudge attach --judge-url`` does
    (``commands.runner.remote_judge``): a URL where something answers but no judge service does is
    a ValueError now, not a call of unjudged windows found at its end (the last note); a service
    that does not answer is one ``warn`` line, since it may come up during the call.

    Raises:
        ValueError: a URL that is not http(s)://, or no judge service at it (the message names
            ``where`` and says to fix ``judge_url``).
    """
    try:
        judge, down = asked_remote_judge(url)
    except NotAJudgeService as exc:
        raise ValueError(f"{where}: {exc}: fix judge_url") from None
    if down is not None:
        warn(f"{down}; timing is measured, windows it cannot judge are counted")
    return judge
