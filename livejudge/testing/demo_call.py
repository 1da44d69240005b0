"""``livejudge demo``'s call in simulated time: the demo caller against a model of the example
agent's turn-taking, deterministic and without a clock (the live demo takes about a minute per
behaviour and its timing moves with the machine's load).

The caller is the demo's own (``livejudge.agents.demo_caller``, played by the same
``ScriptedCaller`` as ``livejudge demo``). The agent is a step-by-step model of
``livejudge.agents.demo``'s ``ReplyBrain`` with a ``--behaviour`` preset (``BEHAVIOURS``):

* its VAD is Pipecat's own: ``SileroVADAnalyzer`` with the preset's ``VADParams(start_secs,
  stop_secs)``, fed the caller's 20 ms chunks, started/stopped as Pipecat's ``VADController``
  reports them;
* on a VAD start it forgets a planned reply, and while it talks it yields (at once, or after
  ``min_interrupt_s`` if the caller is still sounding; never when ``rude``);
* on a VAD stop it plans its next reply ``think_s`` later; while it talks, ``polite`` takes the
  stop for a backchannel held through (no new reply) and ``rude`` stops for an utterance under
  ``RUDE_SHORT_S`` and starts over ``RUDE_RESUME_S`` later;
* its replies are the shipped ``espeak_reply_0N`` clips (``render_replies("clips")``), queued
  one after the other as Pipecat's output transport plays them; a yield drops the queue.

What the model leaves out: the wire (a few ms each way on one host), the 40 ms output chunks and
scheduling jitter (``jitter_s``: each reply lands up to that much late, drawn with
``seed``). It needs pipecat-ai (the Silero model ships in it).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import numpy as np

from livejudge.audio import SAMPLE_RATE, TwoChannelAudio


@dataclass
class SimulatedCall:
    """A simulated demo call.

    Attributes:
        call: both sides on the session clock (user = the caller, agent = the model's replies).
        placed: the caller's turns as ``ScriptedCaller.placed`` records them.
        log: the agent model's decisions, ``{"event", "t_s", ...}`` (the live agent's ``--log``
            names: vad_start, vad_stop, reply_cancelled, yield, held, reply_start).
        behaviour: the ``--behaviour`` preset, with its settings.
    """

    call: TwoChannelAudio
    placed: list[dict]
    log: list[dict] = field(default_factory=list)
    behaviour: dict = field(default_factory=dict)


class _AgentModel:
    """``ReplyBrain`` stepped chunk by chunk (see the module docstring)."""

    def __init__(self, settings: dict, replies: list[np.ndarray], rng: np.random.Generator, jitter_s: float):
        from pipecat.audio.vad.silero import SileroVADAnalyzer
        from pipecat.audio.vad.vad_analyzer import VADParams, VADState

        self.cfg = settings
        self.replies = replies
        self.rng, self.jitter_s = rng, jitter_s
        self.vad = SileroVADAnalyzer(sample_rate=SAMPLE_RATE,
                                     params=VADParams(start_secs=settings["vad_start_s"],
                                                      stop_secs=settings["vad_stop_s"]))
        self.vad.set_sample_rate(SAMPLE_RATE)
        self.S = VADState
        self.vad_state = VADState.QUIET
        self.n_reply = 0
        self.pending: tuple[float, float] | None = None  # (due time, extra) of the planned reply
        self.yield_checks: list[float] = []
        self.speaking_until = 0.0  # the agent's own belief (start of its last reply + its length)
        self.user_start = 0.0
        self.last_voice = -1e9
        self.queue: list[np.ndarray] = []  # reply audio not yet played, the head playing
        self.pos = 0  # samples of queue[0] played
        self.log: list[dict] = []

    def _late(self) -> float:
        return float(self.rng.uniform(0.0, self.jitter_s)) if self.jitter_s > 0 else 0.0

    def _event(self, event: str, t: float, **data) -> None:
        self.log.append({"event": event, "t_s": round(t, 4), **data})

    def _yield(self, t: float) -> None:
        self.speaking_until = 0.0
        self._event("yield", t)
        self.queue, self.pos = [], 0  # InterruptionFrame: the output drops what it holds

    async def hear(self, t: float, x: np.ndarray) -> None:
        """The caller's chunk starting at ``t`` (float32 16 kHz) reaches the agent."""
        from livejudge.agents.demo import RUDE_RESUME_S, RUDE_SHORT_S, VOICED_DBFS

        cfg = self.cfg
        if cfg["min_interrupt_s"] > 0 and x.size:
            if 20 * np.log10(np.sqrt(np.mean(x.astype(np.float64) ** 2)) + 1e-12) > VOICED_DBFS:
                self.last_voice = t
        pcm = (np.clip(x, -1, 32767 / 32768) * 32768).astype("<i2").tobytes()
        new = await self.vad.analyze_audio(pcm)
        if new == self.vad_state or new in (self.S.STARTING, self.S.STOPPING):
            return
        self.vad_state = new
        speaking = t < self.speaking_until
        if new == self.S.SPEAKING:  # VADUserStartedSpeakingFrame
            self.user_start = t
            self._event("vad_start", t, agent_speaking=speaking)
            if self.pending is not None:
                self.pending = None
                self._event("reply_cancelled", t)
            if speaking and not cfg.get("never_yield") and not cfg["rude"]:
                if cfg["min_interrupt_s"] > 0:
                    self.yield_checks.append(t + cfg["min_interrupt_s"])
                else:
                    self._yield(t)
            return
        # VADUserStoppedSpeakingFrame
        self._event("vad_stop", t, agent_speaking=speaking)
        said_s = t - self.user_start - cfg["vad_stop_s"]
        if speaking and cfg["rude"] and said_s < RUDE_SHORT_S:
            self._yield(t)  # rude: stops for a backchannel, then starts over
            if self.pending is None:
                self.pending = (t + cfg["think_s"] + RUDE_RESUME_S, RUDE_RESUME_S)
            return
        if speaking and cfg["min_interrupt_s"] > 0 and not cfg["rude"]:
            return  # a backchannel held through: no new reply
        if self.pending is None:
            self.pending = (t + cfg["think_s"], 0.0)

    def timers(self, t: float) -> None:
        """Fire the planned replies and yield checks due by ``t``."""
        from livejudge.agents.demo import VOICED_RECENT_S

        for due in [d for d in self.yield_checks if d <= t]:
            self.yield_checks.remove(due)
            if due < self.speaking_until and due - self.last_voice <= VOICED_RECENT_S:
                self._yield(due)
            else:
                self._event("held", due)
        if self.pending is not None and self.pending[0] + self._late() <= t:
            self.pending = None
            audio = self.replies[self.n_reply % len(self.replies)]
            self.n_reply += 1
            self.speaking_until = t + audio.size / SAMPLE_RATE
            self._event("reply_start", t, reply=(self.n_reply - 1) % len(self.replies) + 1,
                        duration_s=round(audio.size / SAMPLE_RATE, 4))
            self.queue.append(audio)  # played after what the output still holds

    def speak(self, n: int) -> np.ndarray:
        """The next ``n`` samples of agent audio (zeros when the output holds nothing)."""
        out = np.zeros(n, np.float32)
        i = 0
        while i < n and self.queue:
            head = self.queue[0]
            piece = head[self.pos:self.pos + n - i]
            out[i:i + piece.size] = piece
            i += piece.size
            self.pos += piece.size
            if self.pos >= head.size:
                self.queue.pop(0)
                self.pos = 0
        return out


def simulate_demo_call(behaviour: str = "polite", *, seed: int = 0, turns=None, pause_s: float = 0.8,
                       jitter_s: float = 0.02, chunk_s: float = 0.02, tail_s: float = 1.0,
                       max_s: float = 180.0) -> SimulatedCall:
    """The demo call against the agent model with the ``behaviour`` preset, in simulated time.

    Args:
        behaviour: "polite", "stock" or "rude" (``livejudge.agents.demo.BEHAVIOURS``).
        seed: draws the agent's lateness (``jitter_s``).
        turns: the caller's turns (``CallerTurn`` list); default the demo's (``demo_turns()``).
        pause_s: the caller's pause after the agent's reply (``livejudge demo --pause-s``).
        chunk_s: the caller's chunk, seconds (the attach client's 20 ms).
        tail_s: how long the call goes on once the caller is done and the agent quiet.
        max_s: the longest call, seconds.
    Returns:
        ``SimulatedCall``.
    Raises:
        ValueError: an unknown behaviour. ImportError: pipecat-ai is not installed.
    """
    from livejudge.agents.demo import behaviour_settings, render_replies
    from livejudge.agents.demo_caller import demo_turns
    from livejudge.sources.ws import AgentActivity, ScriptedCaller

    from loguru import logger

    settings = behaviour_settings(behaviour)
    replies, _ = render_replies("clips", SAMPLE_RATE)
    caller = ScriptedCaller(list(turns) if turns is not None else demo_turns(), pause_s=pause_s)
    logger.disable("pipecat")
    try:
        agent = _AgentModel(settings, replies, np.random.default_rng(seed), jitter_s)
    finally:
        logger.enable("pipecat")
    seen = AgentActivity()
    n = int(round(chunk_s * SAMPLE_RATE))
    user: list[np.ndarray] = []
    said: list[np.ndarray] = []

    async def run() -> None:
        quiet_since = None
        for k in range(int(max_s / chunk_s)):
            t = k * chunk_s
            u = caller.chunk(k, n, seen)
            await agent.hear(t, u)
            agent.timers(t)
            a = agent.speak(n)
            seen.update(t, a)
            user.append(u)
            said.append(a)
            idle = caller.done and not agent.queue and agent.pending is None
            quiet_since = (quiet_since if quiet_since is not None else t) if idle else None
            if quiet_since is not None and t - quiet_since >= tail_s:
                break

    from loguru import logger  # pipecat logs every VAD setting at DEBUG: not wanted in a test's output

    logger.disable("pipecat")
    try:
        asyncio.run(run())
    finally:
        logger.enable("pipecat")
    call = TwoChannelAudio(np.concatenate(user), np.concatenate(said), SAMPLE_RATE,
                           {"user": "demo caller", "agent": f"model of the demo agent ({behaviour})"})
    return SimulatedCall(call, caller.placed, agent.log, {"behaviour": behaviour, **settings})


def score_simulated(sim: SimulatedCall, config=None) -> dict:
    """The result document of a simulated call (``livejudge score``'s pipeline, no judge)."""
    from livejudge.session import Session, SessionConfig, stream_call

    s = Session(config or SessionConfig(judge_mode="every"), judge=None,
                info={"kind": "simulated demo", "demo_agent": sim.behaviour, "caller": sim.placed})
    stream_call(s, sim.call)
    return s.close()


__all__ = ["SimulatedCall", "score_simulated", "simulate_demo_call"]
