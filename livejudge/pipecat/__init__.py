"""livejudge inside a Pipecat agent: ``LiveJudgeObserver`` (one line, nothing in the pipeline
changes) and ``LiveJudgeProcessor`` (a pass-through stage that can emit results as frames).

Needs the optional extra: ``pip install 'livejudge[pipecat]'`` (pipecat-ai ≥ 1.14).
"""

try:
    import pipecat  # noqa: F401
    from pipecat.observers.base_observer import BaseObserver  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "livejudge.pipecat needs pipecat-ai: pip install 'livejudge[pipecat]' "
        f"(import failed: {exc})"
    ) from exc

from livejudge.pipecat.frames import LiveJudgeResultFrame
from livejudge.pipecat.observer import EVENTS, LiveJudgeCore, LiveJudgeObserver, TapConfig, framework_comparison
from livejudge.pipecat.processor import LiveJudgeProcessor

__all__ = [
    "EVENTS", "LiveJudgeCore", "LiveJudgeObserver", "LiveJudgeProcessor", "LiveJudgeResultFrame",
    "TapConfig", "framework_comparison",
]
