"""``LiveJudgeProcessor``: livejudge as a pass-through Pipecat pipeline stage.

For apps that prefer a stage to an observer, or want results *inside* the pipeline as frames
(to log them, or to show scores in a client UI through RTVI)::

    judge = LiveJudgeProcessor(rtvi=True, result_path="call.json")
    pipeline = Pipeline([transport.input(), stt, llm, tts, transport.output(), judge])

* Every frame is pushed on first, unchanged and in order, before livejudge looks at it; the
  look is a few ``isinstance`` checks and an O(1) append to a bounded queue (same core as
  ``LiveJudgeObserver``), so the stage never delays a frame (the one exception is the
  ``EndFrame``, see "End of call" below).
* Placement: right after ``transport.output()``. There, agent audio (``OutputAudioRawFrame``
  going downstream) is what the output transport has played, and the user's
  ``InputAudioRawFrame`` arrives if the processors in between pass it on (STT services do;
  speech-to-speech services such as OpenAI Realtime and Gemini Live *consume* it). For those
  pipelines tap with an observer and let the processor only emit::

      observer = LiveJudgeObserver()
      judge = LiveJudgeProcessor(observer=observer, rtvi=True)
      worker = PipelineWorker(Pipeline([..., transport.output(), judge]), observers=[observer])

* Timestamps are the pipeline clock when the frame reaches this stage (seconds since the
  pipeline started); user chunks are taken as ending and agent chunks as starting then
  (``TapConfig``), as in the observer.
* Results: ``LiveJudgeResultFrame`` (ours) for each event kind in ``emit``, and with
  ``rtvi=True`` also an ``RTVIServerMessageFrame`` whose data is
  ``{"type": "livejudge", "kind": ..., "t_s": ..., **fields}``, which Pipecat's RTVI observer
  sends to the client as a server message.
* End of call: on ``EndFrame`` the stage first finishes judging (drains its queue, judges the
  last window, writes ``result_path``; with an ``observer``, waits for the observer's close) and
  pushes the results that produces, then passes the ``EndFrame`` on, so results of the call's last seconds reach downstream stages instead of
  being cut off behind the ``EndFrame``. The wait is bounded by ``end_drain_s``; agent audio is
  never held (there is none after ``EndFrame``). ``CancelFrame`` passes on at once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Iterable

from pipecat.frames.frames import (
    CancelFrame,
    EndFrame,
    Frame,
    InputAudioRawFrame,
    OutputAudioRawFrame,
    StartFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.transports.base_output import BaseOutputTransport

from livejudge.events import event_to_dict
from livejudge.session import Session, SessionConfig
from livejudge.pipecat.frames import LiveJudgeResultFrame
from livejudge.pipecat.observer import (
    EVENTS, NOTE_FRAMES, LiveJudgeCore, LiveJudgeObserver, TapConfig, _LoopBridge, ended_by_frame,
)

_DOWN = FrameDirection.DOWNSTREAM
KINDS = {"on_judge_result": "judge", "on_turn": "turn", "on_transition": "transition",
         "on_barge_in": "barge_in", "on_backchannel": "backchannel"}


class LiveJudgeProcessor(FrameProcessor):
    """Pass-through stage that judges the conversation and can emit results as frames.

    Args:
        judge, config, display, events_path, result_path, report_path, tap, sinks, asr: as ``LiveJudgeObserver``
            (ignored when ``observer`` is given: that observer's session is used).
        observer: a ``LiveJudgeObserver`` that taps the audio; this stage then only emits.
        emit: event kinds pushed as frames: any of "judge", "turn", "transition", "barge_in",
            "backchannel" (default: judge, transition, barge_in). Empty = emit nothing.
        rtvi: also push an ``RTVIServerMessageFrame`` per emitted event.
        emit_direction: where result frames go (default downstream).
        end_drain_s: on ``EndFrame``, how long to wait (seconds) for the last results before
            passing the ``EndFrame`` on (default 10 s; judging continues in the background
            after that, and its results go to ``result_path`` but not downstream).
    Raises:
        ValueError: unknown ``emit`` kind, negative ``end_drain_s`` or bad config.
    """

    def __init__(self, judge: Any = "auto", config: SessionConfig | None = None,
                 display: bool | str = False, events_path: str | Path | None = None,
                 result_path: str | Path | None = None, *, observer: LiveJudgeObserver | None = None,
                 tap: TapConfig | None = None, sinks: list | tuple = (), report_path: str | Path | None = None,
                 asr: Any = "auto", emit: Iterable[str] = ("judge", "transition", "barge_in"), rtvi: bool = False,
                 emit_direction: FrameDirection = FrameDirection.DOWNSTREAM, end_drain_s: float = 10.0,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not end_drain_s >= 0:
            raise ValueError(f"end_drain_s must be ≥ 0 seconds, got {end_drain_s}")
        self.end_drain_s = float(end_drain_s)
        self.emit = set(emit)
        bad = self.emit - set(KINDS.values())
        if bad:
            raise ValueError(f"unknown emit kind(s) {sorted(bad)}; valid: {sorted(KINDS.values())}")
        self.rtvi = rtvi
        self.emit_direction = emit_direction
        self._observer = observer
        if observer is not None:
            self.core = observer.core
        else:
            self.core = LiveJudgeCore(judge, config, display, events_path, result_path, tap, sinks,
                                      title="pipecat processor", report_path=report_path, asr=asr)
        self._tapping = observer is None
        self._bridge = _LoopBridge(self)
        self.core.add_listener(self._bridge)
        self.core.add_listener(self._on_livejudge_event)
        for name in (*EVENTS, "on_closed"):
            self._register_event_handler(name)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._running = False
        self._placement_checked = False
        self._close_task: asyncio.Future | None = None
        self._tasks: set = set()

    @property
    def session(self) -> Session:
        return self.core.session

    # ------------------------------------------------------------ frames
    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if self._tapping and isinstance(frame, (EndFrame, CancelFrame)):
            self.core.mark_ended(ended_by_frame(frame))  # source.ended: the first one says why
            self.core.put_end(self.get_clock().get_time())
        if isinstance(frame, EndFrame) and self._running and direction is _DOWN:
            await self._drain_before_end()
        await self.push_frame(frame, direction)  # first, unchanged: never delay the agent (EndFrame: above)
        if isinstance(frame, StartFrame):
            self._loop = asyncio.get_running_loop()
            self._bridge.bind()
            self._running = True
            self.core.in_pipeline = True
            return
        if not self._tapping:
            if isinstance(frame, (EndFrame, CancelFrame)):
                self._running = False
            return
        if direction is not _DOWN:
            return
        if isinstance(frame, InputAudioRawFrame):
            self.core.put_audio("user", frame, self.get_clock().get_time())
        elif isinstance(frame, OutputAudioRawFrame):
            if not self._placement_checked:
                self._check_placement()
            self.core.put_audio("agent", frame, self.get_clock().get_time())
        elif isinstance(frame, NOTE_FRAMES):
            if frame.broadcast_sibling_id is None or direction is _DOWN:
                self.core.put_note(frame, self.get_clock().get_time())
        elif isinstance(frame, (EndFrame, CancelFrame)):
            self._running = False
            if self._close_task is None:
                self._close_task = asyncio.ensure_future(self.close())

    async def _drain_before_end(self) -> None:
        """Finish judging (bounded by ``end_drain_s``) and push the results that produces
        before the ``EndFrame`` goes on. The close keeps running if the wait times out. With an
        ``observer``, its close (which the EndFrame leaving the output transport starts) is waited
        for: under load the observer's worker lags the audio, and its events would otherwise come
        after this stage stopped emitting."""
        if self._tapping:
            if self._close_task is None:
                self._close_task = asyncio.ensure_future(self.close())
            task = self._close_task
        else:
            self._observer._schedule_close()
            task = self._observer._close_task
        try:
            await asyncio.wait_for(asyncio.shield(task), self.end_drain_s)
        except Exception:  # a timeout, or an error close() records in the result: the EndFrame goes on
            pass
        # events fired by the worker thread reach this loop through call_soon_threadsafe:
        # let those callbacks run, then wait for the pushes they started
        for _ in range(3):
            await asyncio.sleep(0)
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _check_placement(self) -> None:
        self._placement_checked = True
        p = self.previous
        while p is not None:
            if isinstance(p, BaseOutputTransport):
                return
            p = p.previous
        self.core.session._on_error(
            "LiveJudgeProcessor sees agent audio upstream of the output transport: agent times are "
            "generation times, not playout; place it after transport.output()")

    # ------------------------------------------------------------ results as frames
    def _on_livejudge_event(self, name: str, event: object) -> None:
        kind = KINDS.get(name)
        loop = self._loop
        if kind not in self.emit or loop is None or loop.is_closed() or not self._running:
            return
        try:
            loop.call_soon_threadsafe(self._spawn_push, kind, event)
        except RuntimeError:
            pass

    def _spawn_push(self, kind: str, event: object) -> None:
        if not self._running:
            return
        t = asyncio.ensure_future(self._push_result(kind, event))
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)

    async def _push_result(self, kind: str, event: Any) -> None:
        data = event_to_dict(event)
        data.pop("type", None)
        t_s = next((float(getattr(event, k)) for k in ("t_s", "onset_s", "to_onset_s") if hasattr(event, k)), 0.0)
        await self.push_frame(LiveJudgeResultFrame(kind=kind, t_s=t_s, data=data, event=event),
                              self.emit_direction)
        if self.rtvi:
            from pipecat.processors.frameworks.rtvi.frames import RTVIServerMessageFrame

            await self.push_frame(RTVIServerMessageFrame(data={"type": "livejudge", "kind": kind,
                                                               "t_s": round(t_s, 3), **data}),
                                  self.emit_direction)

    # ------------------------------------------------------------ output
    def result(self) -> dict:
        """The result document so far (see ``LiveJudgeObserver.result``)."""
        return self.core.result()

    async def close(self) -> dict:
        """Finish (judge the last window, write ``result_path``); idempotent. With an
        ``observer`` this waits for nothing and returns the observer's current result."""
        if not self._tapping:
            return self.core.result()
        doc, first = await self.core.close_once()
        if first:
            await self._call_event_handler("on_closed", doc)
        return doc

    async def cleanup(self) -> None:
        await super().cleanup()
        if self._tapping:
            if self._close_task is not None:
                await self._close_task
            else:
                self.core.mark_ended("end of pipeline")
                await self.close()
