"""The verdict thresholds as command-line flags, shared by every command that scores a call
(``runner.add_session_args``) and by ``livejudge check``; its own module so that neither imports
the other."""

from __future__ import annotations

import argparse
from dataclasses import replace

from livejudge.errors import CLIError
from livejudge.timing.verdicts import VerdictConfig


def add_verdict_args(p: argparse.ArgumentParser) -> None:
    """The verdict thresholds as flags (all HEURISTIC; see livejudge.timing.verdicts)."""
    d = VerdictConfig()
    g = p.add_argument_group("verdicts (HEURISTIC thresholds; latency bands are sourced)")
    g.add_argument("--yield-max-s", type=float, default=None,
                   help=f"a yield to a barge-in later than this is slow (default: {d.yield_max_s})")
    g.add_argument("--backchannel-yield-s", type=float, default=None,
                   help="the agent stopping within this after a caller backchannel ended yielded to it "
                        f"(default: {d.backchannel_yield_window_s})")
    g.add_argument("--pause-min-s", type=float, default=None,
                   help=f"shortest caller pause judged (default: {d.pause_min_s})")
    g.add_argument("--pause-max-s", type=float, default=None,
                   help=f"longest caller silence still a pause (default: {d.pause_max_s})")
    g.add_argument("--resume-window-s", type=float, default=None,
                   help="an agent start in a caller silence cut in if the caller resumes within this "
                        f"(default: {d.resume_window_s})")
    g.add_argument("--talk-over-grace-s", type=float, default=None,
                   help="an agent start inside caller speech ending within this is an early start "
                        f"(default: {d.talk_over_grace_s})")
    g.add_argument("--dead-air-s", type=float, default=None,
                   help=f"mutual silence longer than this is dead air (default: {d.dead_air_s})")


_FLAG_FIELDS = {"yield_max_s": "yield_max_s", "backchannel_yield_s": "backchannel_yield_window_s",
                "pause_min_s": "pause_min_s", "pause_max_s": "pause_max_s",
                "resume_window_s": "resume_window_s", "talk_over_grace_s": "talk_over_grace_s",
                "dead_air_s": "dead_air_s"}


def verdict_config_from_args(args: argparse.Namespace, base: VerdictConfig | None = None) -> VerdictConfig:
    """``base`` (default ``VerdictConfig()``) with the flags that were given. Raises CLIError."""
    given = {f: getattr(args, a) for a, f in _FLAG_FIELDS.items() if getattr(args, a, None) is not None}
    try:
        return replace(base or VerdictConfig(), **given)
    except ValueError as exc:
        flag = next((("--" + a.replace("_", "-")) for a, f in _FLAG_FIELDS.items() if f in str(exc)), "")
        raise CLIError(f"{flag + ': ' if flag else ''}{exc}") from None
