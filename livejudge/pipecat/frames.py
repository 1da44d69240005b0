"""livejudge's own Pipecat frame: results pushed into a pipeline by ``LiveJudgeProcessor``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipecat.frames.frames import SystemFrame


@dataclass
class LiveJudgeResultFrame(SystemFrame):
    """A livejudge event, pushed by ``LiveJudgeProcessor`` so the app can log or show it.

    A ``SystemFrame`` so interruptions never drop it; processors that do not know it pass it on.

    Parameters:
        kind: "judge" (a judged window), "turn", "transition" (``gap_s`` of a user→agent
            transition is the response latency), "barge_in" or "backchannel".
        t_s: session time of the event, seconds on the pipeline clock (0 = pipeline start):
            the window end for "judge", the onset for timing events.
        data: JSON-ready fields (``livejudge.events.event_to_dict``; for "judge": t_s,
            window_start_s, window_end_s, p_human, compute_ms, dimensions).
        event: the livejudge event object itself (frozen dataclass), for Python consumers.
    """

    kind: str
    t_s: float
    data: dict = field(default_factory=dict)
    event: Any = None

    def __str__(self) -> str:
        extra = f", p_human: {self.data.get('p_human')}" if self.kind == "judge" else ""
        return f"{self.name}(kind: {self.kind}, t: {self.t_s:.3f}s{extra})"
