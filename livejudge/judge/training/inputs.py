"""Input health of a manifest's rows before ``livejudge train`` fits them or ``livejudge eval`` scores them.

``score`` refuses a recording from which nothing can be measured; ``train`` and ``eval`` used to
fit and score such rows silently: with the agent channel zeroed in every human row a head learned
silence against speech (ROC-AUC 1.000 on its own test rows), and a 0.8 s call and an all-zero call
were fitted with no word (a new user's trial). ``screen_rows`` runs the same check on every row
(``livejudge.timing.health.check_recording`` on ``livejudge.audio.open_call``, the first
``LEVEL_PROBE_S`` seconds of each call, the channel-swap test off: about 30 ms per call) and sorts
the rows into:

* refused rows: nothing can be measured (``health.unmeasurable``: both channels silent, one signal
  on both, under ``MIN_CALL_S``), or one channel is silent (``REFUSED_CODES``). ``train``/``eval``
  stop with one line naming the manifest, the line, the file and the problem (exit 2), unless
  ``--skip-bad-rows`` leaves them out; then the count and the reasons are printed and recorded.
* rows with other warnings (a noisy line, clipping, a DC offset, files of unequal length, extra
  channels): fitted and scored, and listed.

A mono ``audio`` row is the responder's (agent's) side alone (``train.load_entry``): its user
channel is silent by design, so only the agent side is checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

REFUSED_CODES = ("silent_channel", "too_short")
"""Input-health codes for which a row is not fitted or scored (besides ``health.unmeasurable``)."""
SKIP_FLAG = "--skip-bad-rows"
"""The flag of ``train`` and ``eval`` that leaves refused rows out instead of stopping."""
CHECK_NOTE = ("livejudge.timing.health.check_recording on each row's first {probe:.0f} s (channel-swap test "
              "off; livejudge check runs it)")
"""How the rows were checked, for the records ``RowScreen.record`` returns."""

_FLAG_WORDS = (("--user-channel", "'user_channel'"), ("--agent-channel", "'agent_channel'"))


def manifest_words(message: str) -> str:
    """A message of ``livejudge.audio``/``livejudge.timing.health`` in a manifest's terms: the
    command-line flags ``--user-channel``/``--agent-channel`` become the row's fields
    ``'user_channel'``/``'agent_channel'``."""
    for flag, key in _FLAG_WORDS:
        message = message.replace(flag, key)
    return message


@dataclass(frozen=True)
class RowHealth:
    """The input health of one manifest row.

    Attributes:
        line: the row's 1-based line in the manifest.
        file: the row's audio (``audio``, or ``user + agent``), as a path string.
        warnings: the ``HealthWarning``s found (most serious first).
        problem: one line, why the row is not fitted or scored (``REFUSED_CODES``,
            ``health.unmeasurable``), in the manifest's terms; None when it can be.
    """

    line: int
    file: str
    warnings: tuple = ()
    problem: str | None = None

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"line": self.line, "file": self.file}
        if self.problem is not None:
            out["problem"] = self.problem
        out["warnings"] = [{"code": w.code, "channel": w.channel, "message": manifest_words(w.message)}
                           for w in self.warnings]
        return out


def row_file(entry: Any) -> str:
    """A manifest entry's audio for a message: its ``audio`` path, or ``USER + AGENT``."""
    if entry.audio is not None:
        return str(entry.audio)
    return f"{entry.user} + {entry.agent}"


def _is_mono(path: Path) -> bool:
    import soundfile as sf

    try:
        return int(sf.info(str(path)).channels) == 1
    except Exception:  # undecodable: open_call says why, in its words
        return False


def check_entry(entry: Any) -> RowHealth:
    """The input health of one ``train.ManifestEntry`` from its first ``LEVEL_PROBE_S`` seconds.

    Returns:
        RowHealth; ``problem`` is set for a row that must not be fitted or scored.
    Raises:
        livejudge.audio.AudioFormatError: the file(s) cannot be opened or decoded, or a channel
            index is out of range (the message as ``open_call`` words it).
    """
    from livejudge.audio import TwoChannelAudio, open_call
    from livejudge.timing.health import LEVEL_PROBE_S, check_recording, silent_from_nan, unmeasurable

    where = row_file(entry)
    if entry.audio is not None and _is_mono(entry.audio):
        # the responder's side alone: read it as both "files" of a pair (open_call's checks and
        # decoding, the first seconds only) and check it beside a silent user channel
        with open_call(user=entry.audio, agent=entry.audio) as reader:
            agent = (reader.head(LEVEL_PROBE_S) if reader.duration_s > LEVEL_PROBE_S else reader.read_all()).agent
            rate = reader.sample_rate_in
            nan = list(reader.not_numbers)
        call = TwoChannelAudio(user=np.zeros_like(agent), agent=agent, sample_rate_in=rate,
                               channels={"user": None, "agent": str(entry.audio)})
        ws = [w for w in check_recording(call, swap_test=False)[0] if w.channel != "user"]
        problem = None
        for w in ws:
            if w.code == "silent_channel" and nan:  # NaN set to 0 reads silent: name the NaN
                problem = silent_from_nan(nan, "the file is")
                break
            if w.code == "silent_channel":
                problem = (f"the file is silent (loudest frame {w.value:.0f} dBFS): a mono 'audio' file is the "
                           "agent's side alone, so nothing can be measured; check the file, or give the call as a "
                           "stereo 'audio' or as 'user' + 'agent'")
                break
            if w.unmeasurable or w.code in REFUSED_CODES:
                problem = manifest_words(w.message)
                break
        return RowHealth(entry.line, where, tuple(ws), problem)
    if entry.audio is not None:
        reader = open_call(entry.audio, user_channel=entry.user_channel, agent_channel=entry.agent_channel)
    else:
        reader = open_call(user=entry.user, agent=entry.agent)
    with reader:
        ws = check_recording(reader, swap_test=False)[0]
    problem = unmeasurable(ws, truncated=reader.truncated, not_numbers=reader.not_numbers)
    if problem is None:
        problem = next((w.message for w in ws if w.code in REFUSED_CODES), None)
    return RowHealth(entry.line, where, tuple(ws), manifest_words(problem) if problem else None)


@dataclass
class RowScreen:
    """What ``screen_rows`` found.

    Attributes:
        kept: the entries to fit or score (every row unless ``--skip-bad-rows`` left some out).
        skipped: the refused rows left out (``--skip-bad-rows``), with their problem.
        warned: the kept rows with input-health warnings (fitted or scored anyway).
        checked: how many rows were checked.
    """

    kept: list
    skipped: list[RowHealth] = field(default_factory=list)
    warned: list[RowHealth] = field(default_factory=list)
    checked: int = 0

    def record(self) -> dict:
        """JSON-ready: {"check", "checked", "skipped": [row], "warned": [row]} (row: ``RowHealth.to_dict``),
        for a head's ``training["input_health"]`` and eval's JSON."""
        from livejudge.timing.health import LEVEL_PROBE_S

        return {"check": CHECK_NOTE.format(probe=LEVEL_PROBE_S), "checked": self.checked,
                "skipped": [r.to_dict() for r in self.skipped], "warned": [r.to_dict() for r in self.warned]}

    def lines(self, done: str = "fitted", limit: int = 10) -> list[str]:
        """What to print: the rows left out and the rows ``done`` ("fitted", "scored") with warnings,
        one line each (at most ``limit`` of each, then a count); empty when every row was clean."""
        out: list[str] = []
        if self.skipped:
            out.append(f"left out {len(self.skipped)} of {self.checked} rows ({SKIP_FLAG}): "
                       + _code_counts(self.skipped, refused=True))
            out += [f"  line {r.line} {_short(r.file)}: {r.problem}" for r in self.skipped[:limit]]
            if len(self.skipped) > limit:
                out.append(f"  … and {len(self.skipped) - limit} more")
        if self.warned:
            n = len(self.kept)
            out.append(f"input health: {len(self.warned)} of {n} rows {done} with warnings: "
                       + _code_counts(self.warned))
            out += [f"  line {r.line} {_short(r.file)}: "
                    + "; ".join(manifest_words(w.message) for w in r.warnings) for r in self.warned[:limit]]
            if len(self.warned) > limit:
                out.append(f"  … and {len(self.warned) - limit} more")
        return out


def _short(file: str) -> str:
    """A row's file(s) by name only (``RowHealth.file``), for the listing."""
    return " + ".join(Path(f).name for f in file.split(" + "))


def _code_counts(rows: Sequence[RowHealth], refused: bool = False) -> str:
    counts: dict[str, int] = {}
    for r in rows:
        codes = {w.code for w in r.warnings if not refused or w.unmeasurable or w.code in REFUSED_CODES}
        for c in sorted(codes) or ["unmeasurable"]:
            counts[c] = counts.get(c, 0) + 1
    return ", ".join(f"{c} {n}" for c, n in counts.items())


def screen_rows(entries: Sequence[Any], manifest: str | Path, *, skip_bad: bool = False) -> RowScreen:
    """Check every row (``check_entry``) before anything is fitted or scored.

    Args:
        entries: ``train.ManifestEntry`` rows (those to fit or score).
        manifest: the manifest's path, for the messages.
        skip_bad: leave refused rows out (``--skip-bad-rows``) instead of raising.
    Returns:
        RowScreen (the rows kept, the rows left out, the rows with warnings).
    Raises:
        train.ManifestError: one line, "MANIFEST line N: FILE: problem; fix", for a row that cannot
            be opened (a missing channel, an undecodable file: never skipped), for the first refused
            row unless ``skip_bad`` (with how many rows are refused and ``--skip-bad-rows``), or when
            ``skip_bad`` leaves no row.
    """
    from livejudge.audio import AudioFormatError
    from livejudge.judge.training.train import ManifestError

    screen = RowScreen(kept=[], checked=len(entries))
    refused: list[RowHealth] = []
    for e in entries:
        try:
            h = check_entry(e)
        except AudioFormatError as exc:
            raise ManifestError(f"{manifest} line {e.line}: {manifest_words(str(exc))}") from None
        if h.problem is not None:
            refused.append(h)
            continue
        screen.kept.append(e)
        if h.warnings:
            screen.warned.append(h)
    if refused and not skip_bad:
        first = refused[0]
        more = (f" ({len(refused)} rows are refused, lines {', '.join(str(r.line) for r in refused[:8])}"
                f"{', …' if len(refused) > 8 else ''})" if len(refused) > 1 else "")
        raise ManifestError(f"{manifest} line {first.line}: {first.file}: {first.problem}{more}; fix or remove "
                            f"the row, or pass {SKIP_FLAG} to leave such rows out")
    screen.skipped = refused
    if not screen.kept:
        raise ManifestError(f"{manifest}: every row was left out by {SKIP_FLAG} ({len(refused)} rows; line "
                            f"{refused[0].line}: {refused[0].problem}): fix the recordings")
    return screen
