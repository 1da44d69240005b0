"""The attach client: talk to a running voice agent over a websocket and feed one Session.

```
user source ──20 ms chunks, absolute deadlines──▶ protocol.encode ──▶ websocket ──▶ agent
     │ (capture time)                                                      │
     ▼                                                                     ▼
  Session.push("user")      Session.push("agent") ◀── JitterPlayer ◀── protocol.decode
                               (playout time)       (flushed on interruption)
```

Timing rules (design.md "one clock"):

* The session clock starts at 0 when the first connection opens (``time.perf_counter``).
* User chunk ``k`` is stamped ``k × chunk_s``: the sender sleeps to the absolute deadline
  ``t0 + k × chunk_s`` (never ``sleep(chunk_s)``), so it cannot drift; while the caller is
  quiet it keeps sending silence, like an open microphone.
* Agent audio is stamped with its playout time: a burst starts when its first message
  arrives (plus the jitter buffer and device latency when playing) and continues
  sample-contiguously; an ``interruption``/``clear`` drops what has not been played yet.
  With ``playback=False`` no jitter delay is added, so the stamp is the arrival time.
* Protocol status messages become ``Session.note`` records and never move a timestamp.
* Echo (speakerphone): with an ``EchoCanceller`` (``livejudge.timing.echo``) the microphone audio is
  cleaned before it is sent to the agent and pushed to the Session. Its far end is what was
  played: reported by the output device with its DAC time when the device can
  (``on_played``), else the agent audio at its playout stamp.

Faults end the call with ``AttachError`` (one line, what to do next); the caller (the
CLI's ``run_session``) still closes the Session and writes the partial result.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Protocol as TypingProtocol
from urllib.parse import urlparse, urlunparse

import numpy as np

from livejudge.audio import SAMPLE_RATE, StreamResampler, resample
from livejudge.sources.protocols.base import AgentAudio, Interruption, Mark, Protocol, ProtocolError, Status

VOICE_DBFS = -40.0
"""RMS level (dB re full scale, per 20 ms) above which a chunk counts as voiced for the
scripted caller's turn logic and the silence watchdog. A heuristic, not the judged VAD."""
DRY_MIN_S = 0.05
"""The shortest gap counted as the agent's audio running dry mid-speech (``JitterPlayer.ran_dry``),
seconds: shorter ones are arrival jitter a caller's jitter buffer (``--jitter-s``, 60 ms) hides."""

CLOSE_TIMEOUT_S = 1.0
"""How long the websocket close handshake may wait for the agent, seconds (websockets'
``close_timeout``, 10 s by default): an agent that stops reading before it closes had its hang-up
seen, and the call ended, 10 s late (the caller's audio went on meanwhile)."""


class AttachError(Exception):
    """A fault that ends the call. ``kind`` names it for tests and the result's notes:
    "unreachable", "forbidden", "busy", "handshake", "tls", "dropped", "agent_silent", "protocol",
    "too_big", "closed_early" (closed before any agent audio: the message names the likely cause),
    "closed_mid_script" (a clean close, 1000/1001, while scripted turns were left to play)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


# ---------------------------------------------------------------------------------- config
REDACTED = "REDACTED"


def redact_url(url: str) -> str:
    """``url`` safe to print, log and store: every query value and any password replaced by
    ``REDACTED`` (a token in the query string, e.g. ``?token=…``, is a credential)."""
    try:
        p = urlparse(url)
        # name=REDACTED per parameter; a bare part (``?SECRET``) is all value
        query = "&".join(f"{part.split('=', 1)[0]}={REDACTED}" if "=" in part else REDACTED
                         for part in p.query.split("&") if part)
        netloc = p.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:{REDACTED}@{host}" if ":" in userinfo else f"{REDACTED}@{host}"
        return urlunparse(p._replace(netloc=netloc, query=query, fragment=""))
    except ValueError:
        return "<unparseable url>"


_TCHAR = set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def parse_header(text: str) -> tuple[str, str]:
    """``'Name: value'`` → (name, value) for ``--header``.

    Raises:
        ValueError: no colon, a name that is not an HTTP token (RFC 9110 §5.1), or a value
            with a line break. The message names the header, never its value.
    """
    name, sep, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not name:
        raise ValueError("--header wants 'Name: value', e.g. --header 'Authorization: Bearer $TOKEN'")
    if not set(name) <= _TCHAR:
        raise ValueError(f"--header name {name[:40]!r} is not a valid HTTP header name")
    if any(c in value for c in "\r\n\0"):
        raise ValueError(f"--header {name}: the value contains a line break")
    return name, value


@dataclass(frozen=True)
class WireLimits:
    """Bounds on what an agent may send (untrusted input).

    Attributes:
        max_message_bytes: larger websocket messages close the connection (code 1009).
        max_message_audio_s: agent audio in one message above this is dropped (counted, noted).
        max_buffered_s: agent audio queued ahead of its playout time above this is dropped
            (an agent sending far faster than real time), counted and noted.
    """

    max_message_bytes: int = 16 * 2**20
    max_message_audio_s: float = 60.0
    max_buffered_s: float = 120.0


@dataclass(frozen=True)
class AttachConfig:
    """Settings of one attach call.

    Attributes:
        url: ws:// or wss:// address of the agent.
        chunk_s: user chunk length, seconds (20 ms, one transport frame).
        origin: Origin header to send (agents with an Origin allow-list answer 403 without it).
        jitter_s: jitter buffer before a burst of agent audio starts playing, seconds
            (only with playback; with ``playback=False`` audio is stamped at arrival).
        output_latency_s: device output latency added to playout stamps, seconds.
        duration_s: end the call after this much session time (None = no limit).
        silence_timeout_s: fault when nobody has spoken for this long (0 = never).
        end_quiet_s: once a scripted caller is done, end after the agent has been quiet
            this long, seconds.
        reconnect: how many times to reconnect after a lost or refused connection.
        backoff_s: first reconnect delay, seconds (doubles each try, at most 8 s).
        open_timeout_s: websocket handshake timeout, seconds.
        headers: extra HTTP headers of the handshake, e.g. (("Authorization", "Bearer …"),).
            Only their names are ever printed, logged or stored.
        ca_file: PEM file of the CA that signed a wss:// agent's certificate (private CA,
            self-signed); None = the system's trust store.
        insecure: wss:// without certificate verification (explicit opt-in).
        limits: WireLimits on incoming messages.
    """

    url: str
    chunk_s: float = 0.02
    origin: str | None = None
    jitter_s: float = 0.06
    output_latency_s: float = 0.0
    duration_s: float | None = None
    silence_timeout_s: float = 20.0
    end_quiet_s: float = 2.0
    reconnect: int = 0
    backoff_s: float = 0.5
    open_timeout_s: float = 5.0
    headers: tuple[tuple[str, str], ...] = ()
    ca_file: str | None = None
    insecure: bool = False
    limits: WireLimits = field(default_factory=WireLimits)

    @property
    def display_url(self) -> str:
        """The URL with query values and passwords redacted (for every output)."""
        return redact_url(self.url)

    @property
    def header_names(self) -> list[str]:
        return [n for n, _ in self.headers]

    def validate(self) -> "AttachConfig":
        try:
            p = urlparse(self.url)
            p.port  # noqa: B018  (raises ValueError on a bad port)
        except ValueError:
            raise ValueError(f"--ws-url must look like ws://host:port/path, got {self.display_url!r}") from None
        if p.scheme not in ("ws", "wss") or not p.hostname:
            raise ValueError(f"--ws-url must look like ws://host:port/path, got {self.display_url!r}")
        if (self.ca_file or self.insecure) and p.scheme != "wss":
            raise ValueError("--ca-file and --insecure apply to wss:// URLs only")
        if self.ca_file and self.insecure:
            raise ValueError("give --ca-file or --insecure, not both")
        if self.ca_file:
            self.ssl_context()  # fail now on a missing or unreadable CA file
        for name, value in self.headers:
            parse_header(f"{name}: {value}")
        if not 0.005 <= self.chunk_s <= 0.1:
            raise ValueError(f"chunk length must be 5–100 ms, got {self.chunk_s * 1000:.0f} ms")
        if self.duration_s is not None and self.duration_s <= 0:
            raise ValueError(f"--duration-s must be positive, got {self.duration_s}")
        if self.reconnect < 0:
            raise ValueError("--reconnect must be ≥ 0")
        if not self.silence_timeout_s >= 0:  # NaN too
            raise ValueError(f"--silence-timeout-s must be ≥ 0 seconds (0 = never), got {self.silence_timeout_s:g}")
        if not self.jitter_s >= 0:
            raise ValueError(f"--jitter-s must be ≥ 0 seconds, got {self.jitter_s:g}")
        return self

    def ssl_context(self):
        """The TLS context for wss:// (None for ws://): verified against the system trust store
        or ``ca_file``; with ``insecure`` no verification. Raises ValueError: bad ``ca_file``."""
        import ssl

        if urlparse(self.url).scheme != "wss":
            return None
        if self.insecure:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            return ctx
        try:
            return ssl.create_default_context(cafile=self.ca_file)
        except FileNotFoundError:
            raise ValueError(f"--ca-file {self.ca_file} not found") from None
        except (ssl.SSLError, OSError) as exc:
            raise ValueError(f"--ca-file {self.ca_file} is not a readable PEM certificate file ({exc})") from None


# ---------------------------------------------------------------------------------- player
def voiced_block(blk: np.ndarray) -> bool:
    """Whether a block of float32 16 kHz samples (20 ms in use) is voiced: RMS above ``VOICE_DBFS``
    (an energy HEURISTIC; ``AgentActivity`` and ``JitterPlayer.buffered_voice`` both read it)."""
    return bool(blk.size) and 20 * np.log10(np.sqrt(np.mean(blk.astype(np.float64) ** 2)) + 1e-12) > VOICE_DBFS


class JitterPlayer:
    """Schedules received agent audio on the session clock (pure: time is passed in).

    ``on_audio`` appends float32 16 kHz samples that arrived at ``arrival_s``; ``pump(now_s)``
    releases ``(t_s, samples)`` blocks whose playout time has come (up to ``lookahead_s``
    early), contiguous within a burst; ``flush`` drops everything not yet released.

    ``ran_dry`` lists ``(at_s, gap_s)`` for each time the agent's audio ran out while the agent
    was audibly talking (the last 20 ms released was voiced, ``voiced_block``: an energy
    HEURISTIC) and went on after a gap of ``gap_s`` ≥ ``DRY_MIN_S`` at ``at_s`` (session
    seconds, without ``latency_s``): the agent's stream stalled mid-speech, and a caller heard
    the gap, which the timing then reads as the agent's pause. A stall while the agent was
    between words is not seen (the tail was unvoiced), so this undercounts.

    Args:
        prebuffer_s: delay from a burst's first arrival to its playout, seconds (jitter buffer).
        latency_s: constant added to every stamp (device output latency), seconds.
        lookahead_s: how far ahead of ``now_s`` audio may be released, seconds.
    """

    def __init__(self, prebuffer_s: float = 0.0, latency_s: float = 0.0, lookahead_s: float = 0.02) -> None:
        self.prebuffer_s = prebuffer_s
        self.latency_s = latency_s
        self.lookahead_s = lookahead_s
        self._buf: deque[np.ndarray] = deque()
        self._buffered = 0  # samples
        self._cursor: int | None = None  # session sample index where the next buffered sample plays
        self._marks: deque[tuple[int, Mark]] = deque()  # (buffered-sample position, mark)
        self._released = 0  # samples released since start (for marks)
        self._queued_total = 0
        self.arrivals: deque[tuple[float, int]] = deque()  # (arrival_s, queued_total at first sample)
        self.first_samples: list[tuple[float, float]] = []  # last pump: (arrival_s, playout_s) per message
        self.ran_dry: list[tuple[float, float]] = []  # (at_s, gap_s): ran out mid-speech (see above)
        self._tail_voiced = False  # the last 20 ms released was voiced

    @property
    def buffered_s(self) -> float:
        return self._buffered / SAMPLE_RATE

    def buffered_voice(self) -> bool:
        """Whether the audio queued and not yet released holds a voiced 20 ms block (RMS above
        ``VOICE_DBFS``, the energy heuristic ``AgentActivity`` uses). A route that streams
        continuously (WebRTC sends silence frames between replies) can keep a standing backlog of
        silence queued, so "nothing queued" may never come while "no voice queued" does."""
        step = SAMPLE_RATE // 50
        return any(voiced_block(x[i:i + step]) for x in self._buf for i in range(0, len(x), step))

    def on_audio(self, samples: np.ndarray, arrival_s: float) -> None:
        x = np.asarray(samples, dtype=np.float32).reshape(-1)
        if not x.size:
            return
        start = int(round((arrival_s + self.prebuffer_s) * SAMPLE_RATE))
        if self._buffered == 0 and (self._cursor is None or self._cursor < start):
            if self._cursor is not None and self._tail_voiced and start - self._cursor >= DRY_MIN_S * SAMPLE_RATE:
                self.ran_dry.append((self._cursor / SAMPLE_RATE, (start - self._cursor) / SAMPLE_RATE))
            self._cursor = start  # a new burst (or an underrun): play from its arrival
        self.arrivals.append((arrival_s, self._queued_total))
        self._queued_total += x.size
        self._buf.append(x)
        self._buffered += x.size

    def on_mark(self, mark: Mark) -> None:
        """Remember a mark at the end of the audio queued so far (Twilio semantics)."""
        self._marks.append((self._released + self._buffered, mark))

    def pump(self, now_s: float) -> tuple[list[tuple[float, np.ndarray]], list[Mark]]:
        """Release the audio due by ``now_s`` (+ lookahead) and the marks it completes.

        Returns:
            (blocks, marks): blocks are (t_s of first sample, float32 16 kHz samples).
            ``first_samples`` then lists (arrival_s, playout_s without latency_s) of each
            message whose first sample was released.
        """
        out: list[tuple[float, np.ndarray]] = []
        self.first_samples: list[tuple[float, float]] = []
        if self._cursor is not None and self._buffered:
            due = int(round((now_s + self.lookahead_s) * SAMPLE_RATE)) - self._cursor
            while due > 0 and self._buf:
                head = self._buf[0]
                n = min(due, head.size)
                out.append(((self._cursor / SAMPLE_RATE) + self.latency_s, head[:n]))
                while self.arrivals and self.arrivals[0][1] < self._released + n:
                    arr, idx = self.arrivals.popleft()
                    self.first_samples.append((arr, (self._cursor + idx - self._released) / SAMPLE_RATE))
                if n == head.size:
                    self._buf.popleft()
                else:
                    self._buf[0] = head[n:]
                self._cursor += n
                self._buffered -= n
                self._released += n
                due -= n
            step = SAMPLE_RATE // 50
            tail = out[-1][1] if out else np.zeros(0, np.float32)
            if tail.size < step and len(out) > 1:
                tail = np.concatenate([out[-2][1], tail])
            if out:
                self._tail_voiced = voiced_block(tail[-step:])
        done = []
        while self._marks and self._marks[0][0] <= self._released:
            done.append(self._marks.popleft()[1])
        return out, done

    def end_burst(self) -> None:
        """The audio stops on purpose (an interruption, a lost connection): the next gap is not
        counted in ``ran_dry``."""
        self._tail_voiced = False

    def flush(self) -> float:
        """Drop unplayed audio (interruption). Returns how much was dropped, seconds."""
        dropped = self._buffered
        self.end_burst()  # cut on purpose: what follows is a new reply, not a stall
        self._buf.clear()
        self._buffered = 0
        self._queued_total = self._released
        self.arrivals.clear()
        # marks past the cut are acknowledged at once, as Twilio does on "clear"
        for i, (pos, m) in enumerate(self._marks):
            self._marks[i] = (min(pos, self._released), m)
        return dropped / SAMPLE_RATE



# ---------------------------------------------------------------------------------- user side
@dataclass(frozen=True)
class CallerTurn:
    """One scripted user turn.

    Attributes:
        samples: float32 mono 16 kHz, shape (n_samples,).
        name: label for the report (file stem).
        barge_in_after_s: start this long after the agent starts its reply (a barge-in);
            None = wait until the agent has finished and ``pause_s`` has passed.
        floor: False for a backchannel ("mm" into the agent's reply): it asks for no reply, so
            the next turn's timing counts from the last turn that took the floor, not from it.
    """

    samples: np.ndarray
    name: str
    barge_in_after_s: float | None = None
    floor: bool = True


@dataclass
class AgentActivity:
    """What the client has seen of the agent's voice (energy heuristic, ``VOICE_DBFS``)."""

    onset_s: float | None = None      # start of the current/last voiced burst
    last_voice_s: float | None = None  # end of the last voiced 20 ms block
    onsets: list = field(default_factory=list)  # every burst onset, seconds

    def update(self, t_s: float, x: np.ndarray, quiet_gap_s: float = 0.3) -> None:
        step = SAMPLE_RATE // 50
        for i in range(0, len(x), step):
            blk = x[i:i + step]
            if voiced_block(blk):
                t = t_s + i / SAMPLE_RATE
                if self.last_voice_s is None or t - self.last_voice_s > quiet_gap_s:
                    self.onset_s = t
                    self.onsets.append(t)
                self.last_voice_s = t + blk.size / SAMPLE_RATE

    def first_onset_after(self, t_s: float) -> float | None:
        """The first burst onset after ``t_s`` (the start of the agent's reply), or None."""
        return next((o for o in self.onsets if o > t_s), None)


class ScriptedCaller:
    """A scripted human caller made of recorded turns (``--input-wav``).

    Several turns: turn 1 starts at ``lead_s``; each later turn starts ``pause_s`` after the
    agent's reply ends (or ``max_wait_s`` after the previous turn if the agent never
    answers), or — for a barge-in turn — ``barge_in_after_s`` after the reply starts.
    ``continuous=True`` plays the turns back to back as one recording (one file holding
    all turns) from ``lead_s``, whatever the agent does.

    A turn with ``floor=False`` (a backchannel) asks for no reply: the turn after it counts from
    the end of the last floor turn (its barge-in from the agent's first onset after that end; a
    turn after the reply waits until the agent has spoken since then and gone quiet ``pause_s``).

    ``placed`` records each turn's start and the true speech bounds of its clip
    (``livejudge.testing.dialogues.speech_bounds``), seconds on the session clock: the ground truth
    of what the user said and when.
    """

    def __init__(self, turns: list[CallerTurn], *, pause_s: float = 0.8, lead_s: float = 0.5,
                 max_wait_s: float = 8.0, continuous: bool = False) -> None:
        if not turns:
            raise ValueError("a scripted caller needs at least one turn")
        from livejudge.testing.dialogues import speech_bounds  # noqa: F401  (imported now, not mid-call)
        if not pause_s >= 0:  # NaN too
            raise ValueError(f"--pause-s must be ≥ 0 seconds, got {pause_s:g}")
        if not lead_s >= 0:
            raise ValueError(f"lead_s (when the first turn starts) must be ≥ 0 seconds, got {lead_s:g}")
        if not max_wait_s > 0:
            raise ValueError(f"max_wait_s (the longest wait for a reply) must be positive, got {max_wait_s:g}")
        self.turns = turns
        self.pause_s, self.lead_s, self.max_wait_s = pause_s, lead_s, max_wait_s
        if continuous:
            self.turns = [CallerTurn(np.concatenate([t.samples for t in turns]), "+".join(t.name for t in turns))]
        self._i = 0  # next turn to start
        self._cur: tuple[int, int] | None = None  # (turn index, start sample) while speaking
        self._last_end_s: float | None = None
        self._floor_end_s: float | None = None  # end of the last turn with floor=True
        self.placed: list[dict] = []

    @property
    def done(self) -> bool:
        return self._i >= len(self.turns) and self._cur is None

    @property
    def last_end_s(self) -> float | None:
        return self._last_end_s

    @property
    def speaking(self) -> bool:
        """Whether a turn is being played now."""
        return self._cur is not None

    def not_played(self) -> list[int]:
        """Indices of the turns not played to their end so far: the one being spoken, if any, and
        every turn not yet started."""
        cur = [] if self._cur is None else [self._cur[0]]
        return cur + list(range(self._i, len(self.turns)))

    def finish(self, end_s: float) -> list[str]:
        """Mark ``placed`` at the end of the call (``end_s``, seconds on the session clock): each
        entry gets ``played`` (True: the whole clip was sent); a turn cut off by the end gets
        ``cut_at_s`` and its ``speech_onset_s``/``speech_offset_s`` set to None where they fall
        after ``end_s`` (that speech was never sent). Returns the names of the turns never started."""
        cut = None if self._cur is None else self._cur[0]
        for j, p in enumerate(self.placed):
            p["played"] = j != cut
            if j == cut:
                p["cut_at_s"] = round(end_s, 4)
                for k in ("speech_onset_s", "speech_offset_s"):
                    if p.get(k) is not None and p[k] > end_s:
                        p[k] = None
        return [t.name for t in self.turns[self._i:]]

    def _due(self, now_s: float, agent: AgentActivity) -> bool:
        if self._i == 0:
            return now_s + 1e-9 >= self.lead_s
        assert self._last_end_s is not None
        waited = now_s - self._last_end_s
        if waited + 1e-9 >= self.max_wait_s:
            return True
        anchor = self._floor_end_s if self._floor_end_s is not None else self._last_end_s
        turn = self.turns[self._i]
        eps = 1e-9  # chunk times are k·chunk_s floats
        if turn.barge_in_after_s is not None:
            reply_onset = agent.first_onset_after(anchor)
            return reply_onset is not None and now_s + eps >= reply_onset + turn.barge_in_after_s
        if anchor == self._last_end_s:  # no backchannel since: the reply began after the turn
            replied = agent.first_onset_after(anchor) is not None
        else:  # the reply may have begun before the backchannel: the agent spoke since the floor turn
            replied = agent.last_voice_s is not None and agent.last_voice_s > anchor
        return (replied and agent.last_voice_s is not None
                and now_s - agent.last_voice_s + eps >= self.pause_s and waited + eps >= self.pause_s)

    def chunk(self, k: int, n: int, agent: AgentActivity) -> np.ndarray:
        """Samples ``[k·n, (k+1)·n)`` of the user's side (float32 16 kHz; zeros when quiet)."""
        start = k * n
        now_s = start / SAMPLE_RATE
        if self._cur is None and self._i < len(self.turns) and self._due(now_s, agent):
            from livejudge.testing.dialogues import speech_bounds

            t = self.turns[self._i]
            try:
                a, b = speech_bounds(t.samples)
            except ValueError:
                a, b = 0, len(t.samples)
            self._cur = (self._i, start)
            self.placed.append({"clip": t.name, "start_s": round(now_s, 4),
                                "speech_onset_s": round((start + a) / SAMPLE_RATE, 4),
                                "speech_offset_s": round((start + b) / SAMPLE_RATE, 4),
                                "barge_in": t.barge_in_after_s is not None,
                                **({} if t.floor else {"backchannel": True})})
            self._i += 1
        out = np.zeros(n, dtype=np.float32)
        if self._cur is not None:
            idx, s0 = self._cur
            x = self.turns[idx].samples
            off = start - s0
            piece = x[off:off + n]
            out[: piece.size] = piece
            if off + n >= x.size:
                self._cur = None
                self._last_end_s = (s0 + x.size) / SAMPLE_RATE
                if self.turns[idx].floor:
                    self._floor_end_s = self._last_end_s
        return out


class UserSource(TypingProtocol):
    """Where the user's audio comes from: a scripted caller or a microphone."""

    def start(self, clock: Callable[[], float]) -> None: ...

    async def chunks(self, chunk_s: float, agent: AgentActivity) -> AsyncIterator[tuple[float, np.ndarray]]: ...

    @property
    def done(self) -> bool: ...

    def close(self) -> None: ...


class ScriptedSource:
    """Plays a ``ScriptedCaller`` in real time, chunk ``k`` at deadline ``t0 + k·chunk_s``."""

    def __init__(self, caller: ScriptedCaller) -> None:
        self.caller = caller
        self._clock: Callable[[], float] = time.perf_counter

    def start(self, clock: Callable[[], float]) -> None:
        self._clock = clock

    @property
    def done(self) -> bool:
        return self.caller.done

    async def chunks(self, chunk_s: float, agent: AgentActivity) -> AsyncIterator[tuple[float, np.ndarray]]:
        n = int(round(chunk_s * SAMPLE_RATE))
        k = int(np.ceil(self._clock() / chunk_s - 1e-9))  # resume on the grid after a reconnect
        while True:
            delay = k * chunk_s - self._clock()
            if delay > 0:
                await asyncio.sleep(delay)
            yield k * chunk_s, self.caller.chunk(k, n, agent)
            k += 1

    def close(self) -> None:
        pass


# ---------------------------------------------------------------------------------- recording
class Recorder:
    """Writes what was sent (user) and played/received (agent), placed on the session clock, to a
    two-channel WAV as the call goes: channel 0 user, channel 1 agent, 16 kHz, PCM16.

    The file is written while the call runs, not at its end, so a call cut off in any way (SIGKILL
    and power cuts included) leaves a valid WAV of what came before: audio older than
    ``HOLDBACK_S`` behind the newest placed sample goes to the file at least every
    ``FLUSH_EVERY_S``, through an unbuffered file, and the header's lengths are rewritten after
    every write (the standard library's ``wave.Wave_write.writeframes`` keeps ``nframes`` correct).
    So a SIGKILL loses at most the last ``HOLDBACK_S + FLUSH_EVERY_S`` seconds, and memory stays
    bounded (about ``HOLDBACK_S + FLUSH_EVERY_S`` seconds of both channels) however long the call.

    A block placed more than ``HOLDBACK_S`` before the newest sample (the session clock never does
    this in a live call) is written only from the end of the file on; the part that came too late
    is counted in ``late_s`` and not recorded. Samples are clipped to [-1, 32767/32768]. A write
    that fails (a full disk) stops the recording, not the call: ``error`` says where and why.

    Args:
        path: the WAV to write (created on the first block or on ``close``; parents are made).
    """

    HOLDBACK_S = 3.0  # how long a sample stays writable after a later one was placed
    FLUSH_EVERY_S = 1.0

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.late_s = 0.0
        self.error: str | None = None  # set when writing failed (a full disk): the call went on unrecorded
        self._file: Any = None
        self._wav: Any = None
        self._written = 0  # samples already in the file
        self._buf = np.zeros((0, 2), dtype=np.float32)  # samples from self._written on
        self._newest = 0  # one past the newest placed sample

    @property
    def written_s(self) -> float:
        """Seconds of audio in the file so far (0.0: a call that ended before anything was placed)."""
        return self._written / SAMPLE_RATE

    def _open(self) -> None:
        import wave

        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("wb", buffering=0)  # no Python buffer: a SIGKILL keeps each write
        self._wav = wave.open(self._file, "wb")
        self._wav.setnchannels(2)
        self._wav.setsampwidth(2)
        self._wav.setframerate(SAMPLE_RATE)

    def _flush(self, upto: int) -> None:
        """Write samples [written, upto) to the file: buffered ones, then silence."""
        if upto <= self._written:
            return
        if self._wav is None:
            self._open()
        while self._written < upto:
            n = min(upto - self._written, 10 * SAMPLE_RATE)
            block = np.zeros((n, 2), dtype=np.float32)
            k = min(n, len(self._buf))
            block[:k] = self._buf[:k]
            self._buf = self._buf[k:]
            pcm = np.round(np.clip(block, -1.0, 32767 / 32768) * 32768).astype("<i2")
            self._wav.writeframes(pcm.tobytes())  # rewrites the header's lengths too
            self._written += n

    def add(self, channel: str, t_s: float, x: np.ndarray) -> None:
        """Place float32 mono 16 kHz samples ``x`` of ``channel`` ("user" or "agent") at session time
        ``t_s`` (seconds); a later block overwrites what an earlier one placed at the same samples."""
        if self.error is not None:
            return
        try:
            self._add(0 if channel == "user" else 1, t_s, x)
        except OSError as exc:  # a full disk must not end the call: the recording stops, the call goes on
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        self.error = f"recording stopped at {self._written / SAMPLE_RATE:.1f} s: {exc}"
        self._buf = np.zeros((0, 2), dtype=np.float32)
        try:
            if self._wav is not None:
                self._wav.close()  # a last try at the header; what was written stays valid
        except OSError:
            pass
        finally:
            if self._file is not None:
                self._file.close()

    def _add(self, col: int, t_s: float, x: np.ndarray) -> None:
        x = np.asarray(x, dtype=np.float32).reshape(-1)
        s = int(round(t_s * SAMPLE_RATE))
        if s < self._written:
            cut = min(self._written - s, len(x))
            self.late_s += cut / SAMPLE_RATE
            x, s = x[cut:], self._written
        if not len(x):
            return
        end = s + len(x)
        newest = max(self._newest, end)
        hold = int(self.HOLDBACK_S * SAMPLE_RATE)
        if newest - self._written > hold + int(self.FLUSH_EVERY_S * SAMPLE_RATE):
            # never past this block's start; a jump ahead writes silence in blocks, not a buffer
            self._flush(min(s, newest - hold))
        if end - self._written > len(self._buf):
            grown = np.zeros((end - self._written, 2), dtype=np.float32)
            grown[:len(self._buf)] = self._buf
            self._buf = grown
        self._buf[s - self._written:end - self._written, col] = x
        self._newest = newest

    def close(self) -> Path:
        """Write what is left and close the file (an empty WAV when nothing was placed); returns the path."""
        if self.error is not None or (self._file is not None and self._file.closed):
            return self.path
        try:
            self._flush(self._newest)
            if self._wav is None:
                self._open()
            self._wav.close()
            self._file.close()
        except OSError as exc:
            self._fail(exc)
        return self.path


# ---------------------------------------------------------------------------------- client
def _close_info(exc: Exception) -> tuple[int, str]:
    rcvd = getattr(exc, "rcvd", None)
    if rcvd is not None:
        return int(rcvd.code), str(rcvd.reason or "")
    sent = getattr(exc, "sent", None)
    if sent is not None and sent.code == 1009:  # we closed it: a message over WireLimits.max_message_bytes
        return 1009, str(sent.reason or "message too big")
    return 1006, "no close frame (connection lost)"


def _say(message: str) -> None:
    """One ``livejudge: …`` line on stderr, mid-call (a closed stderr or broken pipe is ignored)."""
    import sys

    try:
        from livejudge.outputs.guard import clean

        print(f"livejudge: {clean(message)}", file=sys.stderr)
    except (OSError, ValueError):
        pass


@dataclass
class AttachStats:
    """Measured by the client itself, reported in the result's ``source.attach``."""

    connects: int = 0
    messages_in: int = 0
    audio_in_s: float = 0.0
    sent_s: float = 0.0
    interruptions: int = 0
    dropped_audio_s: float = 0.0
    dropped_messages: int = 0  # agent audio messages refused by WireLimits
    refused_audio_s: float = 0.0
    push_delay_s: list[float] = field(default_factory=list)  # agent message arrival → Session.push, wall
    t0_monotonic: float | None = None
    # connection outages after the call began (--reconnect): [start_s, end_s, reconnected], session clock
    outages: list[list] = field(default_factory=list)
    # (at_s, gap_s): the agent's audio ran out mid-speech (JitterPlayer.ran_dry, a HEURISTIC)
    ran_dry: list[tuple[float, float]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = np.asarray(self.push_delay_s) * 1000
        return {
            "connects": self.connects, "messages_in": self.messages_in,
            "agent_audio_in_s": round(self.audio_in_s, 3), "user_audio_sent_s": round(self.sent_s, 3),
            "interruptions": self.interruptions, "flushed_audio_s": round(self.dropped_audio_s, 3),
            "dropped_messages": self.dropped_messages, "dropped_message_audio_s": round(self.refused_audio_s, 3),
            "t0_monotonic": self.t0_monotonic,
            "outages": [{"start_s": round(a, 3), "end_s": round(b, 3), "s": round(b - a, 3), "reconnected": ok}
                        for a, b, ok in self.outages],
            "agent_audio_ran_dry": {
                "n": len(self.ran_dry), "s": round(float(sum(g for _, g in self.ran_dry)), 3),
                "max_s": round(max((g for _, g in self.ran_dry), default=0.0), 3),
                "first": [{"at_s": round(a, 3), "gap_s": round(g, 3)} for a, g in self.ran_dry[:10]],
                "heuristic": "the last 20 ms played before the gap was voiced (RMS above VOICE_DBFS)"},
            "arrival_to_session_ms": None if not d.size else {
                "n": int(d.size), "p50": round(float(np.percentile(d, 50)), 3),
                "p95": round(float(np.percentile(d, 95)), 3), "max": round(float(d.max()), 3)},
        }


class AttachClient:
    """Runs one attached call (see module docstring). Use ``run()`` from a thread or ``arun()``.

    Args:
        session: the Session both channels are fed into.
        config: AttachConfig.
        protocol_factory: makes a fresh Protocol per connection (e.g. ``lambda: make_protocol("pipecat")``).
        source: the user's side (ScriptedSource or mic.MicSource).
        output: an audio output with ``write(samples)`` and ``latency_s`` (mic.Speaker) or None.
        recorder: a Recorder for ``--record`` or None.
        stop: set it to end the call cleanly (Ctrl-C in the CLI).
        echo: an ``livejudge.timing.echo.EchoCanceller`` between the microphone and the Session/agent,
            or None. Its far end comes from ``output.on_played(samples, t_s)`` when the output
            has that hook (mic.Speaker: what the device really played, at its DAC time), else
            from the agent audio at its playout stamp.
    """

    def __init__(self, session: Any, config: AttachConfig, protocol_factory: Callable[[], Protocol],
                 source: Any, output: Any = None, recorder: Recorder | None = None,
                 stop: threading.Event | None = None, echo: Any = None) -> None:
        self.session = session
        self.config = config.validate()
        self.protocol_factory = protocol_factory
        self.source = source
        self.output = output
        self.recorder = recorder
        self.stop = stop or threading.Event()
        self.echo = echo
        self._far_from_output = echo is not None and output is not None and hasattr(output, "on_played")
        if self._far_from_output:
            output.on_played = echo.far
        latency = config.output_latency_s + (getattr(output, "latency_s", 0.0) if output else 0.0)
        self.player = JitterPlayer(prebuffer_s=config.jitter_s if output is not None else 0.0,
                                   latency_s=latency)
        self.agent = AgentActivity()
        self.stats = AttachStats(ran_dry=self.player.ran_dry)  # the same list: the player appends
        self._t0: float | None = None
        self._user_last_voice_s = 0.0
        self._conn_t_s = 0.0  # when the current connection opened, session clock
        self._conn_end_s: float | None = None  # when the last connection ended, session clock
        self._in_outage = False  # the line went down mid-call and is not back yet
        self._resamplers: dict[int, StreamResampler] = {}
        self._out_resampler: StreamResampler | None = None
        # import scipy.signal now: done lazily on the first agent message it stalls the loop ~0.8 s
        resample(np.zeros(480, dtype=np.float32), 24000)

    # -- clock ------------------------------------------------------------------------------
    def now_s(self) -> float:
        return 0.0 if self._t0 is None else time.perf_counter() - self._t0

    @property
    def end_s(self) -> float:
        """When the last connection ended (session clock, seconds): what the caller sent stops there."""
        return self._conn_end_s if self._conn_end_s is not None else self.now_s()

    # -- public -----------------------------------------------------------------------------
    def run(self) -> str:
        """Blocking ``arun``; returns why the call ended ("script done", "duration", "stopped",
        "agent closed"). Raises AttachError on faults."""
        return asyncio.run(self.arun())

    async def arun(self) -> str:
        tries = 0
        try:
            while True:
                try:
                    return await self._one_connection()
                except AttachError as exc:
                    # a connection lost (1006, no close frame) before the agent's first audio is retried
                    # too: a restarting agent or a proxy's reset (the last notes' item); a close the agent
                    # chose before any audio is a wire or route fault, which retrying cannot mend
                    lost = exc.kind == "dropped" or (exc.kind == "closed_early"
                                                     and getattr(exc, "close_code", None) == 1006)
                    retry = (exc.kind in ("unreachable", "busy") or lost) and tries < self.config.reconnect
                    if not retry or self.stop.is_set():
                        raise
                    delay = min(8.0, self.config.backoff_s * 2 ** tries)
                    tries += 1
                    why = str(exc).replace("; result so far written", "")
                    self._note("ws.reconnect", attempt=tries, after_s=delay, reason=why)
                    if self._t0 is not None and not self._in_outage:
                        # the line went down mid-call: said now, and timed, so the silence it leaves
                        # is not read as the agent's or the caller's (source.attach.outages)
                        start = self._conn_end_s if self._conn_end_s is not None else self.now_s()
                        self.stats.outages.append([start, start, False])
                        self._in_outage = True
                        self.player.end_burst()  # the gap to come is the outage's, not a stall's
                        self.session._on_error(f"{why}; reconnecting (--reconnect {self.config.reconnect}, "
                                               f"first try in {delay:g} s)")
                    await self._sleep_or_stop(delay)
                    if self.stop.is_set():
                        return "stopped"
        finally:
            if self._in_outage:  # the call ended while the line was down
                self.stats.outages[-1][1] = max(self.stats.outages[-1][0], self.now_s())
                self._in_outage = False
            self.session.info["attach"] = self.stats.to_dict()
            if self.echo is not None:
                self.session.info.setdefault("aec", {}).update(
                    {"far_end": "device playout" if self._far_from_output else "playout stamps",
                     "latency_ms": round(self.echo.latency_s * 1000, 1), **self.echo.stats.to_dict()})
            if hasattr(self.source, "close"):
                self.source.close()

    # -- internals --------------------------------------------------------------------------
    def _note(self, kind: str, **data: Any) -> None:
        self.session.note(kind, self.now_s(), **data)

    async def _sleep_or_stop(self, delay: float) -> None:
        end = time.perf_counter() + delay
        while not self.stop.is_set() and time.perf_counter() < end:
            await asyncio.sleep(min(0.05, end - time.perf_counter()))

    async def _connect(self):
        import ssl

        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI

        url = self.config.url
        shown = self.config.display_url  # never print the query (tokens) or header values
        host = urlparse(url).hostname or ""
        local = host in ("localhost", "127.0.0.1", "::1")
        kwargs: dict[str, Any] = {"open_timeout": self.config.open_timeout_s, "compression": None,
                                  "max_size": self.config.limits.max_message_bytes, "ping_interval": None,
                                  "close_timeout": CLOSE_TIMEOUT_S}
        if local:
            kwargs["proxy"] = None
        if self.config.origin:
            kwargs["origin"] = self.config.origin
        if self.config.headers:
            kwargs["additional_headers"] = list(self.config.headers)
        ctx = self.config.ssl_context()
        if ctx is not None:
            kwargs["ssl"] = ctx
        try:
            return await connect(url, **kwargs)
        except InvalidStatus as exc:
            status = exc.response.status_code
            if status == 403:
                from livejudge.sources.diagnose import forbidden  # token or Origin: asks the runner, if it is one

                msg = (await asyncio.to_thread(forbidden, url, self.config.origin)).replace(url, shown)
                if self.config.headers:
                    msg += f"; or the credentials sent in --header {', '.join(self.config.header_names)} were refused"
                raise AttachError(msg, "forbidden") from None
            if status == 401:
                sent = (f"the --header {', '.join(self.config.header_names)} sent was not accepted"
                        if self.config.headers else "pass them with --header 'Authorization: Bearer TOKEN'")
                raise AttachError(f"{shown} wants credentials (HTTP 401 Unauthorized): {sent}", "forbidden") from None
            raise AttachError(f"{shown} refused the websocket handshake with HTTP {status}; check the path "
                              "of --ws-url", "handshake") from None
        except InvalidURI:
            raise AttachError(f"--ws-url {shown!r} is not a valid websocket address", "handshake") from None
        except InvalidHandshake as exc:
            raise AttachError(f"{shown} did not complete a websocket handshake ({type(exc).__name__}); is it a "
                              "websocket endpoint?", "handshake") from None
        except ssl.SSLCertVerificationError as exc:
            why = getattr(exc, "verify_message", None) or exc.reason or "verification failed"
            raise AttachError(f"TLS certificate of {host} not trusted: {why}; pass --ca-file PATH for a private "
                              "or self-signed CA, or --insecure to skip verification (test setups only)",
                              "tls") from None
        except ssl.SSLError as exc:
            raise AttachError(f"TLS handshake with {host} failed ({exc.reason or exc}); is it a wss:// endpoint?",
                              "tls") from None
        except (OSError, asyncio.TimeoutError, TimeoutError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else (str(exc) or "timed out")
            raise AttachError(f"cannot reach the agent at {shown}: {why} (is it running? check host and port)",
                              "unreachable") from None

    async def _handshake(self, ws, protocol: Protocol) -> list:
        """The protocol's opening exchange (eval wire: wait for bot-ready), before the clock starts."""
        t = time.perf_counter()
        try:
            return await protocol.handshake(ws)
        except ProtocolError as exc:
            await self._close(ws, protocol)
            code = getattr(exc, "close_code", None)
            if getattr(exc, "closed", False):
                from livejudge.sources.diagnose import early_close

                why = await asyncio.to_thread(early_close, self.config.url, protocol.name, code or 1006,
                                              time.perf_counter() - t)
                err = AttachError((why or str(exc)).replace(self.config.url, self.config.display_url), "closed_early")
                err.close_code = code or 1006  # type: ignore[attr-defined]  (1006: retried with --reconnect)
                raise err from None
            raise AttachError(str(exc), "handshake") from None

    async def _one_connection(self) -> str:
        ws = await self._connect()
        protocol = self.protocol_factory()
        hello = await self._handshake(ws, protocol)
        first = self._t0 is None
        if first:
            self._t0 = time.perf_counter()
            # the session clock's zero on this host's monotonic clock (export only: lets a
            # process on the same host, e.g. a test agent, map its own log onto the session clock)
            self.stats.t0_monotonic = time.monotonic() - (time.perf_counter() - self._t0)
            self.source.start(self.now_s)
            if self.output is not None and hasattr(self.output, "set_clock"):
                self.output.set_clock(self.now_s)
        self.stats.connects += 1
        self._note("ws.connected", url=self.config.display_url, protocol=protocol.name, in_rate=protocol.in_rate)
        for it in hello:
            self._note(it.kind, **it.data)
        self._conn_audio_s, self._conn_t_s = self.stats.audio_in_s, self.now_s()
        if self._in_outage:
            out = self.stats.outages[-1]
            out[1], out[2] = self._conn_t_s, True
            self._in_outage = False
            self.player.end_burst()  # what the buffer held has played out by now: the gap is the outage's
            self._note("ws.reconnected", outage_start_s=round(out[0], 3), outage_s=round(out[1] - out[0], 3))
            _say(f"reconnected at t={out[1]:.1f}s after {out[1] - out[0]:.1f} s without the agent "
                 f"({out[0]:.1f}–{out[1]:.1f} s: recorded in source.attach.outages; the verdicts and gaps "
                 "spanning it are marked, not the agent's or the caller's silence)")
        self._out_resampler = StreamResampler(SAMPLE_RATE, protocol.in_rate) if protocol.in_rate != SAMPLE_RATE else None
        done = asyncio.get_running_loop().create_future()

        def finish(result: Any) -> None:
            if not done.done():
                if isinstance(result, BaseException):
                    done.set_exception(result)
                else:
                    done.set_result(result)

        tasks = [asyncio.create_task(self._sender(ws, protocol, finish)),
                 asyncio.create_task(self._receiver(ws, protocol, finish)),
                 asyncio.create_task(self._ticker(ws, protocol, finish))]
        for t in tasks:
            t.add_done_callback(lambda t: finish(t.exception()) if not t.cancelled() and t.exception() else None)
        end_s: float | None = None
        try:
            try:
                reason = await done
            except AttachError as exc:
                if exc.kind != "closed_early":
                    raise
                from livejudge.sources.diagnose import closed_before_audio

                code = int(getattr(exc, "close_code", 1006))
                why = await asyncio.to_thread(
                    closed_before_audio, self.config.url, protocol.name, code, self.now_s() - self._conn_t_s,
                    self.stats.messages_in)
                err = AttachError(why.replace(self.config.url, self.config.display_url), "closed_early")
                err.close_code = code  # type: ignore[attr-defined]  (1006: retried with --reconnect)
                raise err from None
        finally:
            end_s = self._conn_end_s = self.now_s()
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self._close(ws, protocol)
        self._pump(end_s)  # whatever was due when the call ended (closing may take seconds)
        self._note("ws.ended", reason=reason)
        return reason

    async def _close(self, ws, protocol: Protocol) -> None:
        try:
            for m in protocol.closing():
                await asyncio.wait_for(ws.send(m), 1.0)
            await asyncio.wait_for(ws.close(), 2.0)
        except Exception:
            pass

    async def _sender(self, ws, protocol: Protocol, finish) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            for m in protocol.opening():
                await ws.send(m)
            async for t_s, x in self.source.chunks(self.config.chunk_s, self.agent):
                if self.echo is not None:
                    # the far end due so far goes in first, then the microphone is cleaned
                    await self._pump_and_ack(ws, protocol)
                    t_s, x = self.echo.process(x, t_s)
                    if not x.size:
                        continue
                y = self._out_resampler(x) if self._out_resampler is not None else x
                await ws.send(protocol.encode_audio(y))
                self.session.push("user", x, t_s)
                self.stats.sent_s += len(x) / SAMPLE_RATE
                if self.recorder is not None:
                    self.recorder.add("user", t_s, x)
                if x.size and 20 * np.log10(np.sqrt(np.mean(x.astype(np.float64) ** 2)) + 1e-12) > VOICE_DBFS:
                    self._user_last_voice_s = t_s + len(x) / SAMPLE_RATE
        except ConnectionClosed as exc:
            finish(self._closed_error(exc))

    def _closed_error(self, exc: Exception) -> Exception | str:
        code, reason = _close_info(exc)
        t = self.now_s()
        self._note("ws.closed", code=code, reason=reason)
        if code == 1013:
            return AttachError(f"the agent is busy (close code 1013{': ' + reason if reason else ''}): it serves "
                               "one client at a time; end the other call, or retry with --reconnect N", "busy")
        if code == 1009:  # we closed it (WireLimits.max_message_bytes), whatever came before
            return AttachError(f"the agent sent a message larger than {self.config.limits.max_message_bytes} bytes "
                               f"at t={t:.1f}s (close code 1009); result so far written", "too_big")
        if self.stats.audio_in_s == getattr(self, "_conn_audio_s", None):
            # closed before any agent audio on this connection: a fault whatever the code
            # 1006 is no close frame: a drop, not a close (the text closed_before_audio gives it, too)
            how = "the connection to the agent dropped" if code == 1006 else "the agent closed the connection"
            err = AttachError(f"{how} (close code {code}) before sending any audio", "closed_early")
            err.close_code = code  # type: ignore[attr-defined]
            return err
        if code in (1000, 1001):
            caller = getattr(self.source, "caller", None)
            left = caller.not_played() if hasattr(caller, "not_played") else []
            if left:  # a scripted call the agent hung up on: not a normal end (a headless run must not pass)
                n = len(caller.turns)
                cut = " (the turn being spoken was cut off)" if getattr(caller, "speaking", False) else ""
                return AttachError(f"the agent closed the call (close code {code}{': ' + reason if reason else ''}) "
                                   f"after {t:.1f} s with {len(left)} of {n} scripted turns not played{cut}; "
                                   "result so far written", "closed_mid_script")
            return "agent closed"
        return AttachError(f"connection dropped at t={t:.1f}s (close code {code}"
                           f"{': ' + reason if reason else ''}); result so far written"
                           f"{'' if self.config.reconnect else '; use --reconnect N to retry'}", "dropped")

    async def _receiver(self, ws, protocol: Protocol, finish) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            async for message in ws:
                arrival = self.now_s()
                self.stats.messages_in += 1
                try:
                    items = protocol.decode(message)
                except ProtocolError as exc:
                    finish(AttachError(f"unexpected message from the agent: {exc}", "protocol"))
                    return
                except Exception as exc:  # a decoder bug must still end the call with one line
                    finish(AttachError(f"cannot decode a message from the agent ({type(exc).__name__}: "
                                       f"{str(exc)[:200]})", "protocol"))
                    return
                for it in items:
                    if isinstance(it, AgentAudio):
                        self._on_agent_audio(it, arrival)
                    elif isinstance(it, Interruption):
                        dropped = self.player.flush()
                        self.stats.interruptions += 1
                        self.stats.dropped_audio_s += dropped
                        if self.output is not None:
                            self.output.flush()
                        self.session.note(it.kind, arrival, flushed_s=round(dropped, 4))
                    elif isinstance(it, Mark):
                        self.player.on_mark(it)
                    elif isinstance(it, Status):
                        self.session.note(it.kind, arrival, **it.data)
                await self._pump_and_ack(ws, protocol)
                if self.config.duration_s is not None and self.now_s() >= self.config.duration_s:
                    finish("duration")  # holds even when messages arrive faster than the ticker runs
                    return
                await asyncio.sleep(0)  # let the ticker and the sender run between messages
        except ConnectionClosed as exc:
            finish(self._closed_error(exc))
            return
        finish(self._closed_error(_Closed(ws.close_code, ws.close_reason)))

    def _on_agent_audio(self, it: AgentAudio, arrival: float) -> None:
        """Queue one message's agent audio for playout, within ``config.limits``."""
        lim = self.config.limits
        dur_s = len(it.samples) / it.sample_rate
        if dur_s > lim.max_message_audio_s:
            self._drop_audio(arrival, dur_s, f"{dur_s:.1f} s of audio in one message (limit "
                                             f"{lim.max_message_audio_s:.0f} s)")
            return
        if self.player.buffered_s + dur_s > lim.max_buffered_s:
            self._drop_audio(arrival, dur_s, f"more than {lim.max_buffered_s:.0f} s of audio queued ahead of "
                                             "playout (the agent sends faster than real time)")
            return
        x = it.samples
        if it.sample_rate != SAMPLE_RATE:
            rs = self._resamplers.get(it.sample_rate)
            if rs is None:
                if len(self._resamplers) >= 8:  # an agent hopping between rates: bounded state
                    self._resamplers.clear()
                rs = self._resamplers[it.sample_rate] = StreamResampler(it.sample_rate)
            x = rs(x)
        self.stats.audio_in_s += len(x) / SAMPLE_RATE
        dry = len(self.player.ran_dry)
        self.player.on_audio(x, arrival)
        if len(self.player.ran_dry) > dry and dry < 3:  # counted always; noted for the first few
            at_s, gap_s = self.player.ran_dry[-1]
            self.session.note("ws.agent_audio_ran_dry", at_s, gap_s=round(gap_s, 3))

    def _drop_audio(self, arrival: float, dur_s: float, why: str) -> None:
        self.stats.dropped_messages += 1
        self.stats.refused_audio_s += dur_s
        if self.stats.dropped_messages <= 3:  # counted always; noted for the first few
            self.session.note("ws.audio_dropped", arrival, seconds=round(dur_s, 3), reason=why)
        if self.stats.dropped_messages == 1:
            self.session._on_error(f"agent audio dropped: {why} (counted in source.attach.dropped_messages)")

    def _pump(self, now_s: float | None = None) -> list[Mark]:
        blocks, marks = self.player.pump(self.now_s() if now_s is None else now_s)
        for t_s, x in blocks:
            self.session.push("agent", x, t_s)
            self.agent.update(t_s, x)
            if self.recorder is not None:
                self.recorder.add("agent", t_s, x)
            if self.echo is not None and not self._far_from_output:
                self.echo.far(x, t_s)
            if self.output is not None:
                self.output.write(x)
        if blocks:
            now = self.now_s()
            for arrival_s, playout_s in self.player.first_samples:
                # how late a message's first sample reached the Session, counted from when it was
                # both received and due (audio that arrives early waits for its playout time)
                self.stats.push_delay_s.append(max(0.0, now - max(arrival_s, playout_s)))
        return marks

    async def _pump_and_ack(self, ws, protocol: Protocol) -> None:
        for m in self._pump():
            ack = protocol.mark_played(m)
            if ack is not None:
                await ws.send(ack)

    async def _ticker(self, ws, protocol: Protocol, finish) -> None:
        """10 ms playout clock and watchdogs (duration, end of script, silence, stop)."""
        tick = 0.01
        k = int(self.now_s() / tick) + 1
        cfg = self.config
        while True:
            delay = k * tick - self.now_s()
            if delay > 0:
                await asyncio.sleep(delay)
            k += 1
            await self._pump_and_ack(ws, protocol)
            now = self.now_s()
            self.session.advance(now)
            if self.stop.is_set():
                finish("stopped")
                return
            if cfg.duration_s is not None and now >= cfg.duration_s:
                finish("duration")
                return
            if getattr(self.source, "done", False):
                last_agent = self.agent.last_voice_s or 0.0
                end_user = getattr(getattr(self.source, "caller", None), "last_end_s", None) or 0.0
                quiet_from = max(last_agent, end_user)
                replied = last_agent > end_user
                # no voice left to play (not "nothing queued": a continuous stream's silence frames
                # can stay queued; a CI run of the WebRTC probe waited out the silence timeout so)
                if (replied and now - quiet_from >= cfg.end_quiet_s and not self.player.buffered_voice()) or \
                        (not replied and cfg.silence_timeout_s
                         and now - max(end_user, self._conn_t_s) >= cfg.silence_timeout_s):
                    if not replied:
                        finish(self._silent_error(now - max(end_user, self._conn_t_s)))
                    else:
                        finish("script done")
                    return
            if cfg.silence_timeout_s:  # from the (re)connection at the earliest: an outage is not silence
                quiet = now - max(self.agent.last_voice_s or 0.0, self._user_last_voice_s, self._conn_t_s)
                if quiet >= cfg.silence_timeout_s:
                    finish(self._silent_error(quiet))
                    return

    def _silent_error(self, quiet_s: float) -> AttachError:
        self._note("agent_silent", quiet_s=round(quiet_s, 2))
        return AttachError(f"the agent has said nothing for {quiet_s:.0f} s (got {self.stats.messages_in} messages, "
                           f"{self.stats.audio_in_s:.1f} s of audio): is its pipeline running and sending audio on "
                           "this protocol? (--silence-timeout-s to wait longer)", "agent_silent")


class _Closed(Exception):
    """The receive loop ended without an exception: the agent closed the connection."""

    def __init__(self, code: int | None, reason: str | None) -> None:
        super().__init__("closed")
        self.rcvd = None if code is None else type("Close", (), {"code": code, "reason": reason or ""})()


def load_turns(paths: list[str], barge_in: dict[int, float] | None = None) -> list[CallerTurn]:
    """Scripted caller turns from audio files (any rate/channels → float32 mono 16 kHz).

    Args:
        barge_in: 1-based turn number → seconds after the agent's reply starts.
    Raises:
        AudioFormatError: missing or undecodable file, a file with no samples, or a silent one (no
            20 ms block above ``VOICE_DBFS``): the agent would have nothing to answer, and the call
            would end blaming it ("the agent has said nothing for 20 s").
    """
    from livejudge.audio import AudioFormatError, load_audio, to_mono

    turns = []
    for i, p in enumerate(paths, 1):
        data, rate = load_audio(p)
        x = resample(to_mono(data), rate).astype(np.float32)
        if not x.size:
            raise AudioFormatError(f"--input-wav {p} holds no audio (0 samples)")
        loudest = loudest_block_dbfs(x)
        if loudest <= VOICE_DBFS:
            level = "all zeros" if not np.any(x) else f"its loudest 20 ms is at {loudest:.0f} dBFS"
            raise AudioFormatError(f"--input-wav {p} is silent ({level}; livejudge counts a caller as speaking above "
                                   f"{VOICE_DBFS:.0f} dBFS): the agent would have nothing to answer")
        turns.append(CallerTurn(x, Path(p).stem, (barge_in or {}).get(i)))
    return turns


def loudest_block_dbfs(x: np.ndarray) -> float:
    """RMS level of the loudest 20 ms block of float32 16 kHz samples ``x``, dB re full scale
    (about -240 for digital silence)."""
    step = SAMPLE_RATE // 50
    n = -(-len(x) // step) * step
    y = np.zeros(n, np.float64)
    y[: len(x)] = x
    rms = np.sqrt(np.mean(y.reshape(-1, step) ** 2, axis=1))
    return float(20 * np.log10(rms.max() + 1e-12))


__all__ = ["AgentActivity", "AttachClient", "AttachConfig", "AttachError", "AttachStats", "CallerTurn",
           "JitterPlayer", "Recorder", "ScriptedCaller", "ScriptedSource", "WireLimits", "load_turns",
           "parse_header", "redact_url"]
