"""Batch scoring: many recorded calls, one result per call, and a summary over calls.

``livejudge score calls/ --out-dir results/ --jobs 2`` (a directory, a glob such as
``'calls/*.wav'``, or a manifest: a text file with one audio path per line, a relative path read
from the manifest's folder or, when no file is there, from the current directory; ``#`` for
comments; a ``.csv`` row ``user.wav,agent.wav`` is a call recorded one side per file). Each call is scored by ``score_call`` — a plain, importable
function of (path, ScoreOptions) that returns the result document, so any executor can run
it (here a ``concurrent.futures.ProcessPoolExecutor``; with ``--ray``, ``run_batch_ray`` chooses
the Ray backend ``livejudge.distributed.ray_batch``, which runs tasks and never imports this
module back). A file that cannot be scored is
reported with its reason and skipped; it never aborts the batch, but the batch then exits 1
(``--allow-skipped``: 0), so a CI job that scores a folder notices a call it lost.

Outputs in ``--out-dir`` (checked before any call is scored: ``check_out_dir``): ``<name>.json``
per scored call (a name cut to ``MAX_RESULT_NAME_BYTES`` with a hash), ``summary.json`` (every
call with its status, reason or metrics, the medians over the scored calls, the ``settings`` every
scored call shared, for ``compare``, and ``stale_results``: result files of an earlier run left in
``--out-dir``, kept and named) and
``summary.csv`` (one row per call). A file that cannot be written there (a full disk) goes to the
temp directory instead, as a single ``score --json`` does, and the batch exits 1.

A stop signal (Ctrl-C, SIGTERM, SIGHUP) stops a batch within seconds (``STOP_GRACE_S``): the calls
in flight end early with partial results, workers are ended (none outlives the batch), the summary
covers every call (``interrupted``, ``not_started``) and the exit code is 130, 143 or 129.
"""

from __future__ import annotations

import argparse
import csv
import glob
import hashlib
import io
import json
import os
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from livejudge.audio import AUDIO_SUFFIXES  # noqa: F401  (what libsndfile reads; re-exported, its home is audio)
from livejudge.config import DEFAULT_QWEN_MODEL, JudgeConfig
from livejudge.session import SessionConfig

MANIFEST_SUFFIXES = (".txt", ".lst", ".list", ".manifest", ".csv", ".tsv")


def looks_like_manifest(p: Path) -> bool:
    """Whether an existing file with no manifest ending (``calls_manifest``, ``calls.paths``) is a
    list of calls: UTF-8 text (no NUL in its first 4 KB) whose first lines name an audio file
    (``AUDIO_SUFFIXES``), in a first column separated by a comma or a tab. A trial's
    ``calls_manifest`` was decoded as audio and refused with "convert it with ffmpeg". Audio and
    JSON endings are never manifests."""
    from livejudge.audio import looks_like_audio

    if p.suffix.lower() in MANIFEST_SUFFIXES and looks_like_audio(p):
        return False  # a recording named calls.txt is a call: read as a manifest it was a traceback (a re-check)
    if p.suffix.lower() in AUDIO_SUFFIXES + MANIFEST_SUFFIXES + (".json", ".jsonl"):
        return p.suffix.lower() in MANIFEST_SUFFIXES
    try:
        with open(p, "rb") as f:
            head = f.read(4096)
        text = head.decode("utf-8")
    except (OSError, UnicodeDecodeError):  # a cut multi-byte character at 4 KB is rare; audio is common
        return False
    if "\0" in text:
        return False
    lines = [ln for ln in (raw.split("#", 1)[0].strip() for raw in text.splitlines()) if ln][:6]
    return any(_path_cell(ln, "").lower().endswith(AUDIO_SUFFIXES) for ln in lines)


def _path_cell(line: str, suffix: str) -> str:
    """The path a manifest line names: the whole line in a plain list (``.txt``, ``.lst``, ...: a
    path may hold a comma), the first column of a ``.csv`` (comma) or ``.tsv`` (tab), and for a
    file with no manifest ending the whole line where it names an audio file, else its first
    comma- or tab-separated column."""
    line = line.strip()
    if suffix == ".csv":
        return line.split(",", 1)[0].strip()
    if suffix == ".tsv":
        return line.split("\t", 1)[0].strip()
    if suffix in MANIFEST_SUFFIXES or line.lower().endswith(AUDIO_SUFFIXES):
        return line
    return line.split("\t", 1)[0].split(",", 1)[0].strip()


class CallError(Exception):
    """One call could not be scored (one-line reason)."""


STOP_GRACE_S = 4.0
"""HEURISTIC: after a stop signal (Ctrl-C, SIGTERM, SIGHUP), how long a batch lets its calls in flight
end early and write their partial results before it kills their workers, seconds. Well under the
10 s Docker (30 s Kubernetes) leaves between SIGTERM and SIGKILL, so the summary is always written
in time; a trial's batch waited 46 s for a 20-minute call in flight and was killed first."""

MAX_RESULT_NAME_BYTES = 120
"""Longest result file name a batch writes, bytes of UTF-8 with ``.json`` (longer call names are cut
and given a hash: ``_out_names``). The temporary name used while writing adds about 15 bytes
(``.NAME.XXXXXXXX.tmp``), so both fit the 255 bytes of ext4, XFS, APFS and NTFS, and the 143 of
eCryptfs (a trial: a 251-character call name was scored, then lost to ENAMETOOLONG)."""


class StopRequest:
    """A request to end the calls in flight early, made by a stop signal during a batch.

    ``event`` is what ``stream_call`` polls; ``signals`` holds the stop signals received, the first
    naming the reason (``label``: "Ctrl-C", "SIGTERM", "SIGHUP"). Not frozen: a signal changes it.
    """

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signals: list[int] = []

    def request(self, signum: int) -> None:
        """Ask every call in flight in this process to stop (async-signal safe: no I/O)."""
        self.signals.append(int(signum))
        self.event.set()

    def is_set(self) -> bool:
        return self.event.is_set()

    @property
    def first(self) -> int | None:
        return self.signals[0] if self.signals else None

    @property
    def label(self) -> str:
        """The first signal as the single-file commands name it in ``source.ended``; "stopped" when none."""
        return _signal_label(self.first) if self.first is not None else "stopped"


def _signal_label(signum: int) -> str:
    return "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name


_PROCESS_STOP: StopRequest | None = None
"""This process's batch stop (set by ``run_batch`` for the calls it scores itself, and by a worker's
start for the calls it scores); ``score_call`` reads it when not given one."""
_STARTED = None
"""In a batch worker: the shared byte array in which ``_score_one`` marks the calls it started."""


@dataclass(frozen=True)
class ScoreOptions:
    """What ``score_call`` needs besides the file; picklable (sent to worker processes).

    Attributes:
        config: SessionConfig (judge_mode "every" for offline scoring).
        judge: "auto" (default: the whisper head, as ``livejudge score``; timing only with one line
            on stderr when its encoder cannot load), "whisper", "acoustic", "qwen-omni" or "none".
        head, device, qwen_model: as the CLI flags ``--head``, ``--device``, ``--qwen-model``.
        asr, asr_model: as ``--asr`` ("auto", "on", "off") and ``--asr-model``.
        user_channel, agent_channel: channel indices in each stereo file.
        echo_gate: as ``--echo-gate`` ("auto", "on", "off"): agent leakage removed from the user channel.
        judge_url: as ``--judge-url``: judge on a judge service (``livejudge serve-judge``).
        agent_files: ``{str(user file): agent file}``: calls recorded one side per file (a
            manifest's ``user.wav,agent.wav`` rows, ``manifest_pairs``); such a call is scored as
            ``score --user U --agent A`` is, and named by its user file.
    """

    config: SessionConfig = field(default_factory=lambda: SessionConfig(judge_mode="every"))
    judge: str = "auto"
    head: str | None = None
    device: str = "cpu"
    qwen_model: str = DEFAULT_QWEN_MODEL
    asr: str = "off"
    asr_model: str | None = None
    user_channel: int = 0
    agent_channel: int = 1
    echo_gate: str = "auto"
    judge_url: str | None = None
    agent_files: dict = field(default_factory=dict)

    @property
    def judge_config(self) -> JudgeConfig:
        """The judge and ASR settings, as ``commands.runner.judge_from_config`` takes them."""
        return JudgeConfig(kind=self.judge, head=self.head, device=self.device, qwen_model=self.qwen_model,
                           url=self.judge_url, asr=self.asr, asr_model=self.asr_model)


_JUDGES: dict = {}


def _judge_for(options: ScoreOptions):
    """One judge per process and settings (loading it is the slow part)."""
    from livejudge.commands.runner import judge_from_config

    if options.judge_url and options.judge != "none":  # a client per call: it counts that call's unjudged windows
        from livejudge.commands.runner import remote_judge

        return remote_judge(options.judge_url)
    key = _judge_key(options)
    if key not in _JUDGES:
        unavailable: list = []
        _JUDGES[key] = judge_from_config(options.judge_config, unavailable=unavailable)
        _JUDGE_UNAVAILABLE[key] = unavailable
    return _JUDGES[key]


def _judge_key(options: ScoreOptions) -> tuple:
    """The settings one loaded judge serves (``_JUDGES``, ``_JUDGE_UNAVAILABLE``)."""
    return (options.judge, options.head, options.device, options.qwen_model)


_JUDGE_UNAVAILABLE: dict = {}
"""Why ``--judge auto`` could not load, per process and settings (``_judge_for``): each call's
result says it (``runner.judge_unavailable``)."""


def batch_words(msg: str) -> str:
    """A reader's error in a batch's words: a mono file's fix named ``--user``/``--agent``, which a
    batch does not take (a trial); a batch reads one stereo file per call, or a manifest's
    ``user.wav,agent.wav`` rows (``manifest_pairs``). Pure."""
    from livejudge.audio import MONO_FIX, SIDE_FIX

    if msg.endswith(MONO_FIX):
        return msg[: -len(MONO_FIX)] + (
            "a batch reads one stereo file per call, or a call recorded one side per file as a row "
            "`user.wav,agent.wav` of a .csv manifest (score calls.csv --out-dir DIR)")
    if SIDE_FIX in msg:  # a stereo file in a two-file row: the single call's flags again (a trial)
        return msg[: msg.index(SIDE_FIX)] + (
            "a manifest row `user.wav,agent.wav` takes one side per file; list a two-channel call on a row of its "
            "own (one column)")
    return msg


def score_call(path: str | Path, options: ScoreOptions | None = None, *, stop: StopRequest | None = None) -> dict:
    """Score one recorded call as ``livejudge score`` does and return its result document.

    Args:
        path: stereo audio file (user and agent on ``options.user_channel``/``agent_channel``).
        options: ScoreOptions (default: the auto judge, no ASR, default pipeline settings).
        stop: when set while the call streams, the call ends early and the document covers the
            audio up to then, with ``source.ended`` "interrupted (SIGTERM)" (as a single ``score``
            stopped by a signal). None: this process's batch stop, if any.
    Returns:
        the result document (``livejudge.outputs.report``).
    Raises:
        CallError: the file is missing, empty, undecodable or mono, or the judge cannot load.
    """
    from livejudge.audio import AudioFormatError, open_call
    from livejudge.commands.runner import transcriber_from_config
    from livejudge.errors import CLIError
    from livejudge.session import Session, stream_call

    options = options or ScoreOptions()
    stop = stop if stop is not None else _PROCESS_STOP
    agent_file = (options.agent_files or {}).get(str(path))  # a call recorded one side per file
    from livejudge.outputs.guard import same_file

    if agent_file is not None and same_file(path, agent_file):  # a manifest row naming one file twice
        raise CallError(f"its manifest row names {path} as both the user's and the agent's file: give each side its "
                        "own recording")
    try:  # the same path as a single `livejudge score`: block by block, then the echo gate
        reader = (open_call(user=path, agent=agent_file) if agent_file is not None else
                  open_call(path, user_channel=options.user_channel, agent_channel=options.agent_channel))
    except AudioFormatError as exc:
        raise CallError(batch_words(str(exc))) from None
    try:
        try:
            from livejudge.sources.recording import UnmeasurableRecording, prepare_recording

            try:  # the same steps as a single score (livejudge/sources/recording.py)
                prepared = prepare_recording(reader, options.echo_gate, log=False)
            except UnmeasurableRecording as exc:  # skipped with the reason, kept out of the medians
                raise CallError(str(exc)) from None
            call, gate_info = prepared.call, prepared.gate_info
            judge = _judge_for(options)
            transcriber = transcriber_from_config(options.judge_config, judge=judge)
        except (CLIError, AudioFormatError) as exc:
            raise CallError(str(exc)) from None
        info = {"sample_rate_in": call.sample_rate_in, "channels": call.channels, "kind": "score",
                "file": str(path), "file_resolved": str(Path(path).resolve()), "speed": "max",
                **({"agent_file": str(agent_file)} if agent_file is not None else {}),
                "asr": transcriber is not None, "echo_gate": gate_info}
        session = Session(options.config, judge=judge, info=info, transcriber=transcriber)
        from livejudge.commands.runner import judge_unavailable

        judge_unavailable(session, _JUDGE_UNAVAILABLE.get(_judge_key(options)) or [])
        prepared.start(session, say=False)  # a batch says them per call in its summary
        try:
            stream_call(session, call, speed=None, stop=None if stop is None else stop.event)
            if stop is not None and stop.is_set():  # ended early: said as a single score says it
                session.note("interrupted", reason=stop.label)
                session.info["ended"] = f"interrupted ({stop.label})"
            # a cut-off file, samples clipped or zeroed: input-health warnings (the batch's
            # input_health column, the gate count)
            prepared.finish(session, say=False)
        except AudioFormatError as exc:
            session.errors.append(str(exc))
            session.info["ended"] = "failed: audio"
            raise CallError(str(exc)) from None
        finally:
            session.info.setdefault("ended", "end of input")  # as a single score's source.ended
            doc = session.close()
        return doc
    finally:
        reader.close()


def discover_calls(spec: str | Path) -> list[Path]:
    """The audio files a batch input names: a directory (its audio files, sorted, not
    recursive), a glob pattern, a manifest file, or a single audio file.

    Raises:
        CallError: nothing matched, or a manifest that cannot be read.
    """
    _AGENT_OF.clear()
    text = str(spec)
    p = Path(text)
    if p.is_file():  # an existing file is itself, even when its name holds * ? [ (``call [1].wav``)
        return _manifest(p) if looks_like_manifest(p) else [p]
    if p.is_dir():
        # a pipe or socket with an audio name is listed, to be skipped with its reason (it was left out
        # without a word: a trial's "1 of 1 calls scored" beside a pipe.wav)
        files = sorted(f for f in p.iterdir() if f.suffix.lower() in AUDIO_SUFFIXES and not f.is_dir())
        if not files:
            nested = nested_audio_count(p)
            raise CallError(f"{p}: no audio files ({', '.join(AUDIO_SUFFIXES)}) in this directory"
                            + (f"; its subfolders hold {nested}: score them with a quoted glob, "
                               f"'{p / '**' / '*.wav'}'" if nested else ""))
        return files
    if any(ch in text for ch in "*?["):
        files = sorted(_glob_files(text))
        if not files:
            raise CallError(f"{text}: the pattern matched no file")
        return files
    if p.suffix.lower() in MANIFEST_SUFFIXES:
        return _manifest(p)
    return [p]


def nested_audio_count(directory: Path, limit: int = 10_000) -> int:
    """How many audio files lie in the subfolders of ``directory`` (not in it), counting at most
    ``limit`` entries of the walk (a bound, so a huge tree costs little); symlinked folders are
    not followed (``Path.rglob``'s rule). A directory batch does not recurse: this is what it
    leaves out, for the hint (a trial: ``score coll/`` scored 1 call and said nothing of
    ``coll/a/x.wav``)."""
    import itertools

    n = 0
    for f in itertools.islice(directory.rglob("*"), limit):
        if f.parent != directory and f.suffix.lower() in AUDIO_SUFFIXES and f.is_file():
            n += 1
    return n


MAX_GLOB_FILES = 100_000
"""Most files one batch pattern may match (a bound, so a runaway pattern is an error, not a hang)."""


def _glob_files(pattern: str) -> list[Path]:
    """Files ``pattern`` matches, each file once (``**`` recursive). ``**`` does not descend
    into symlinked directories (pathlib's rule), so a symlink loop such as ``calls/again -> ..``
    ends the walk: ``glob.glob`` would follow it about 40 levels deep (ELOOP) and score the
    same call 40 times; two loops multiply.

    Raises:
        CallError: more than ``MAX_GLOB_FILES`` files matched.
    """
    parts = Path(pattern).parts
    k = next((i for i, part in enumerate(parts) if any(ch in part for ch in "*?[")), len(parts))
    anchor = Path(*parts[:k]) if k else Path(".")
    rest = str(Path(*parts[k:])) if k < len(parts) else ""
    out: dict[tuple[int, int], Path] = {}
    matches = anchor.glob(rest) if rest else iter([anchor])
    for fp in matches:
        if k == 0:
            fp = Path(os.path.relpath(fp)) if not Path(pattern).is_absolute() else fp
        try:
            if not fp.is_file():
                continue
            st = fp.stat()
        except OSError:  # ELOOP, a name too long: not a call
            continue
        out.setdefault((st.st_dev, st.st_ino), fp)
        if len(out) > MAX_GLOB_FILES:
            raise CallError(f"{pattern}: the pattern matches more than {MAX_GLOB_FILES} files; narrow it")
    return list(out.values())


_NOT_FOUND_NOTE: dict[str, str] = {}
"""A manifest line found in neither place (``_manifest``): the path it is skipped under → where
else it was looked for; ``write_summary`` adds this to the skip reason, so summary.json names both
places as the stderr line does (two trials read only the manifest-relative path there)."""


def _exists(p: Path) -> bool:
    """``p.exists()``, False where the name cannot be a file at all (a line of prose longer than
    the file system allows raised OSError "File name too long": a trial's README.txt)."""
    try:
        return p.exists()
    except (OSError, ValueError):
        return False


_AGENT_OF: dict[str, str] = {}
"""The agent file of each call a manifest listed as a pair (``_manifest``), by its user file's path."""


def manifest_pairs() -> dict[str, str]:
    """``{str(user file): agent file}`` of the calls the last ``discover_calls`` read from a
    manifest's two-file rows (``user.wav,agent.wav`` in a ``.csv``, tab-separated in a ``.tsv``):
    ``ScoreOptions.agent_files``."""
    return dict(_AGENT_OF)


def _resolve_listed(p: Path, cell: str) -> Path:
    """A manifest cell's path: absolute as is; relative from the manifest's folder or, when no file
    is there but one is from the current directory, from there."""
    f = Path(cell)
    beside = p.parent / f
    return f if f.is_absolute() or (not _exists(beside) and _exists(f)) else beside


def _agent_cell(raw: str, suffix: str) -> str | None:
    """The second cell of a ``.csv``/``.tsv`` manifest row when it names an audio file (the agent's
    side of a call recorded one side per file), else None."""
    sep = {".csv": ",", ".tsv": "\t"}.get(suffix)
    if sep is None:
        return None
    cells = [c.strip() for c in raw.split(sep)]
    return cells[1] if len(cells) > 1 and cells[1].lower().endswith(AUDIO_SUFFIXES) else None


def _manifest(p: Path) -> list[Path]:
    """The audio paths a manifest file lists: a relative path is read from the manifest's folder, or,
    when no file is there but one is from the current directory, from there (a new user's trial:
    ``t/calls/a.wav`` listed in ``t/manifest.txt`` became ``t/t/calls/a.wav`` and every call was
    skipped). Raises CallError."""
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CallError(f"cannot read the manifest {p}: {exc}") from None
    except UnicodeDecodeError:
        raise CallError(f"{p} is not a text list of calls (its bytes are not UTF-8 text): a manifest lists one "
                        "audio path per line") from None
    files, nowhere = [], []
    alone: set[str] = set()  # the files listed on a row of their own (a stereo call)
    first = True
    for raw in lines:
        raw = raw.split("#", 1)[0]
        line = _path_cell(raw, p.suffix.lower())
        if line and first:
            first = False
            # a header row (``path``, ``audio_path,label``), the first after comments and blank lines:
            # it names no audio file and none exists there (a trial's "audio_path" became a missing
            # call and exit 1)
            if not line.lower().endswith(AUDIO_SUFFIXES) and not _exists(p.parent / line) and not _exists(Path(line)) \
                    and ("," in raw or "\t" in raw or line.lower() in ("path", "file")):
                continue
        if line:
            f = Path(line)
            beside = p.parent / f
            files.append(_resolve_listed(p, line))
            agent = _agent_cell(raw, p.suffix.lower())
            key = str(files[-1])
            if agent is not None:  # user.wav,agent.wav: a call recorded one side per file (a trial)
                agent_path = str(_resolve_listed(p, agent))
                if key in alone or _AGENT_OF.setdefault(key, agent_path) != agent_path:  # known by its user file
                    other = "on a row of its own" if key in alone else f"with {Path(_AGENT_OF[key]).name}"
                    raise CallError(f"{p}: {line} is listed with two agent files ({other} and with {agent}): one row "
                                    "per call, each with its own user file")
            elif key in _AGENT_OF:
                raise CallError(f"{p}: {line} is listed with two agent files (with {Path(_AGENT_OF[key]).name} and "
                                "on a row of its own): one row per call, each with its own user file")
            else:
                alone.add(key)
            if not f.is_absolute() and not _exists(beside) and not _exists(f):
                nowhere.append(line)
                _NOT_FOUND_NOTE[str(beside)] = (f"listed in {p} as {line}; not found from the current directory "
                                                f"({Path.cwd() / f}) either")
    if not files:
        raise CallError(f"{p}: the manifest lists no files (one audio path per line)")
    if len(nowhere) == len(files) and not any(Path(x).suffix.lower() in AUDIO_SUFFIXES for x in nowhere):
        # no line names an audio file, and none exists: not a list of calls (a trial passed notes.txt and
        # got a results folder); one line and nothing written. Listed audio paths that are missing
        # are kept, each skipped with its reason in the summary.
        raise CallError(f"{p}: read as a manifest (one audio path per line), but none of its {len(files)} line(s) "
                        f"names an audio file ({', '.join(AUDIO_SUFFIXES)}) that exists (first: {nowhere[0]!r}); "
                        "pass a call's audio file, a folder of calls, or a list of their paths")
    if nowhere:  # each is skipped as "not found" at its manifest-relative path: say where else it was looked for
        shown = ", ".join(nowhere[:3]) + (f" and {len(nowhere) - 3} more" if len(nowhere) > 3 else "")
        print(f"livejudge: {p}: {len(nowhere)} listed file(s) found neither beside the manifest ({p.parent}/) nor "
              f"from the current directory ({Path.cwd()}/): {shown}; they are skipped", file=sys.stderr)
    return files


def is_batch_input(spec: str | None) -> bool:
    """True when ``score``'s FILE names several calls (directory, glob or manifest)."""
    if spec is None:
        return False
    p = Path(spec)
    if p.is_file():  # an existing file is a call (or a manifest), whatever its name holds
        return looks_like_manifest(p)
    return p.is_dir() or any(ch in spec for ch in "*?[") or p.suffix.lower() in MANIFEST_SUFFIXES


def _out_names(files: list[Path]) -> list[str]:
    """Unique result file names: the stem, or the stem with its parent when stems repeat; a name
    longer than ``MAX_RESULT_NAME_BYTES`` keeps its start and ends in a hash of the whole name
    (``_fit_name``), and ``summary`` is not a call's name (``summary.json`` is the batch's)."""
    stems = [f.stem for f in files]
    names = []
    seen: dict[str, int] = {"summary": 0}
    taken: set[str] = set()
    for f, stem in zip(files, stems):
        name = stem if stems.count(stem) == 1 else f"{f.parent.name}_{stem}"
        if name in seen:
            seen[name] += 1
            name = f"{name}_{seen[name]}"
        else:
            seen[name] = 0
        fitted = _fit_name(name)
        while fitted in taken:  # two long names cut to one (never in practice: the hash differs)
            seen[name] = seen.get(name, 0) + 1
            fitted = _fit_name(f"{name}_{seen[name]}")
        taken.add(fitted)
        names.append(fitted + ".json")
    return names


def _fit_name(name: str, limit_bytes: int = MAX_RESULT_NAME_BYTES) -> str:
    """``name`` when ``name + ".json"`` fits ``limit_bytes`` of UTF-8, else its longest start that
    does (cut at a character boundary) plus ``-`` and 12 hex digits of its SHA-1, so two long names
    that share a start stay apart."""
    if len(os.fsencode(name + ".json")) <= limit_bytes:
        return name
    digest = hashlib.sha1(os.fsencode(name)).hexdigest()[:12]
    room = limit_bytes - len(".json") - len(digest) - 1
    head = os.fsencode(name)[:room].decode("utf-8", "ignore").rstrip(" .")
    return f"{head}-{digest}"


def health_messages(doc: dict) -> list[str]:
    """The input-health warnings of a result document, one line each (a batch row's ``input_health``)."""
    return [str(w.get("message", w)) for w in (doc.get("source") or {}).get("input_health") or []]


def _line_note(doc: dict) -> str | None:
    """A call's narrowband-line note (``source.line``), or None."""
    line = (doc.get("source") or {}).get("line")
    return str(line["note"]) if isinstance(line, dict) and line.get("note") else None


def _echo_note(doc: dict) -> str | None:
    """What the echo gate did to a call's user channel, in words, or None (not applied)."""
    from livejudge.timing.echo import echo_gate_text

    return echo_gate_text((doc.get("source") or {}).get("echo_gate"))


def _score_one(path: str, options: ScoreOptions, out_path: str, index: int | None = None) -> dict:
    """Score one call and write its result; return its summary row (never raises, but for
    KeyboardInterrupt in the batch's own process).

    A call reached after a stop request is not started (its row says so); a call stopped while
    it streams writes its partial result (``status`` "interrupted"). In a worker, ``index`` is
    marked in the shared ``_STARTED`` array first, so the batch knows which calls were in flight.
    """
    stop = _PROCESS_STOP
    if stop is not None and stop.is_set():
        return _not_started_row(path, stop.label)
    if index is not None and _STARTED is not None:
        _STARTED[index] = 1
    t0 = time.perf_counter()
    row = {"file": path, "status": "skipped", "reason": None, "result": None, "metrics": None}
    try:
        doc = score_call(path, options)
        row.update(_row_of_doc(doc, *_write_result(doc, out_path)))
    except CallError as exc:
        row["reason"] = str(exc)
    except Exception as exc:  # a bug or a fault in one call must not end the batch
        row["reason"] = f"{type(exc).__name__}: {exc}"
    row["wall_s"] = round(time.perf_counter() - t0, 3)
    return row


def _row_of_doc(doc: dict, written: str | None, write_error: str | None = None) -> dict:
    """The row fields of a scored (``status`` "ok") or interrupted call from its result document,
    written to ``written`` (None: nowhere; ``write_error`` says why)."""
    from livejudge.commands.gates import call_metrics

    ended = str((doc.get("source") or {}).get("ended") or "")
    extra = {"write_error": write_error} if write_error else {}
    if ended.startswith("interrupted"):  # a partial result: not in the medians
        covers_s = float(doc.get("duration_s") or 0.0)
        # a call stopped in its checks or while its judge loaded: "covers the first 0.0 s", counted as a
        # partial result, read as one that held something (a re-check)
        said = (f"its partial result covers the first {covers_s:.1f} s" if covers_s >= 0.05 else
                "it was stopped before any of its audio was scored (in its input checks or while its judge "
                "loaded): its result file holds no measurement")
        return {"status": "interrupted", "result": written, "metrics": None, **extra,
                "reason": f"{ended} before it finished; " + (said if written else "its partial result was not written")}
    from livejudge.commands.compare import recorded_settings
    from livejudge.commands.gates import truncated_row

    # each warning's code, beside its message: a per-code gate's reason shows its own (gates.row_health)
    codes = [str(w.get("code")) if isinstance(w, dict) else "" for w in (doc.get("source") or {}).get("input_health") or []]
    # a truncated recording is scored, and its row says so where a dashboard reads it (a re-check: "ok",
    # no reason, in summary.json and summary.csv while its gates were cut short); read as the batch's
    # gates, JUnit and compare read it (gates.truncated_row)
    why = ("a truncated recording: it ends before its header says, so only the part that could be read was "
           "scored" if truncated_row({"status": "ok", "input_health_codes": codes}) else None)
    return {"status": "ok", "reason": why, "result": written, "metrics": call_metrics(doc),
            "errors": list(doc.get("errors") or []),
            "input_health": health_messages(doc), "echo_gate": _echo_note(doc), "line": _line_note(doc), **extra,
            "input_health_codes": codes,
            # what it was measured with: write_summary keeps those every call shared, and drops this
            "settings": recorded_settings(doc)}


def _not_started_row(path: str, label: str) -> dict:
    return {"file": path, "status": "not_started", "reason": f"not started: the batch was stopped ({label}) first",
            "result": None, "metrics": None}


def _write_result(doc: dict, out_path: str | Path) -> tuple[str | None, str | None]:
    """Write a call's result to ``out_path``; when that fails (a full disk), to a fallback file in
    the temp directory, as a single ``score --json`` does (``guard.write_or_fallback``). Returns
    (the path written or None, a one-line error or None)."""
    from livejudge.outputs.guard import json_text, write_or_fallback

    written, error = write_or_fallback(out_path, json_text(doc), what="the result to ")
    if written is None:
        error += "; its metrics are in the summary"
    return (None if written is None else str(written)), error


def _row_after_stop(path: str, out_path: str, started: bool, label: str, since_wall: float) -> dict:
    """The row of a call that had not reported back when the batch stopped (its worker killed past
    the grace period, or cut short by a second signal): from its result file when that was written
    during this batch (complete or partial; ``since_wall``: the batch's start, epoch seconds), else
    interrupted (``started``) or not started."""
    if not started:
        return _not_started_row(path, label)
    try:
        p = Path(out_path)
        if p.stat().st_mtime >= since_wall - 1.0:
            doc = json.loads(p.read_text(encoding="utf-8"))
            if isinstance(doc, dict) and isinstance(doc.get("source"), dict):
                return {"file": path, "reason": None, **_row_of_doc(doc, out_path)}
    except (OSError, ValueError):
        pass
    return {"file": path, "status": "interrupted", "result": None, "metrics": None,
            "reason": f"interrupted ({label}) before it finished; no partial result was written (it had not ended "
                      f"{STOP_GRACE_S:g} s after the signal, or a second signal cut it short)"}


def _remove_temp_files(out: Path, names: list[str]) -> None:
    """Remove the temporary files (``.NAME.*.tmp``, ``write_text_atomic``) a killed worker left."""
    for name in names:
        for tmp in out.glob(f".{glob.escape(name[:100])}.*.tmp"):
            try:
                tmp.unlink()
            except OSError:
                pass


class _BatchSignals:
    """Ctrl-C, SIGTERM and SIGHUP during a batch (main thread only; restored on exit): the first
    one says so on stderr and sets ``stop`` (the calls in flight end early and write their partial
    results); a second one raises KeyboardInterrupt (stop waiting for them) until ``hold()``, after
    which (ending the workers, writing the summary) further signals print one "please wait" line.

    With ``deadline_s`` (calls scored in this process), a call that has not ended that long after
    the first signal (it was loading a judge, or checking a long file) is cut by KeyboardInterrupt.
    Handlers are async-signal safe (``os.write``; no ``print``)."""

    def __init__(self, stop: StopRequest, deadline_s: float | None = None) -> None:
        from livejudge.commands.runner import STOP_SIGNALS

        self.stop = stop
        self.writing = False
        self.deadline_s = deadline_s
        self._signals = STOP_SIGNALS
        self._old: dict[int, object] = {}
        self._told = False

    def __enter__(self) -> "_BatchSignals":
        if threading.current_thread() is threading.main_thread():
            for sig in self._signals:
                self._old[sig] = signal.signal(sig, self._handle)
            if self.deadline_s and hasattr(signal, "setitimer"):
                self._old[signal.SIGALRM] = signal.signal(signal.SIGALRM, self._late)
        return self

    def hold(self) -> None:
        """From now on a signal interrupts nothing (the deadline too is off)."""
        self.writing = True
        if signal.SIGALRM in self._old:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def __exit__(self, *exc) -> None:
        if signal.SIGALRM in self._old:
            signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, old in self._old.items():
            signal.signal(sig, old)  # type: ignore[arg-type]
        self._old.clear()

    def _handle(self, signum: int, frame) -> None:
        self.stop.request(signum)
        if self.writing:
            if not self._told:
                self._told = True
                os.write(2, b"livejudge: ending the workers and writing the batch summary; please wait\n")
            return
        if len(self.stop.signals) >= 2:
            raise KeyboardInterrupt
        os.write(2, f"livejudge: stopping ({_signal_label(signum)}): ending the calls in flight, then writing "
                    f"the summary\n".encode())
        if signal.SIGALRM in self._old:
            signal.setitimer(signal.ITIMER_REAL, float(self.deadline_s or 0))

    def _late(self, signum: int, frame) -> None:
        if not self.writing:
            raise KeyboardInterrupt


@contextmanager
def _terminal_signals_ignored():
    """While worker processes start: SIGINT and SIGHUP blocked and ignored in this process, so a
    spawned worker starts with them ignored (an ignored signal stays ignored across ``exec``) and
    a Ctrl-C to the process group while it starts is no ``KeyboardInterrupt`` traceback from it;
    here, one that arrives meanwhile stays pending (Linux keeps a blocked signal pending even when
    ignored) and reaches the restored handler once unblocked."""
    sigs = [s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGHUP", None)) if s is not None]
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    old = {sig: signal.signal(sig, signal.SIG_IGN) for sig in sigs}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)


def _worker_start(started, signum, parent_pid: int) -> None:
    """A batch worker's start: Ctrl-C and SIGHUP ignored (the batch process gets them too and stops
    its workers itself: no traceback from a worker); SIGTERM, which the batch process sends its
    workers on a stop, ends the call in flight early with its partial result (``signum`` holds the
    signal the batch process got, for the reason); the worker ends itself within 0.5 s once the
    batch process is gone (killed outright: no orphan that scores on and writes 40 s later); one
    torch thread."""
    global _PROCESS_STOP, _STARTED
    for name in ("SIGINT", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, signal.SIG_IGN)
            if hasattr(signal, "pthread_sigmask"):
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
    _STARTED = started
    stop = _PROCESS_STOP = StopRequest()

    def on_term(sig: int, frame) -> None:
        stop.request(signum.value or sig)

    signal.signal(signal.SIGTERM, on_term)

    def watch() -> None:
        while True:
            if os.getppid() != parent_pid:
                os._exit(1)
            time.sleep(0.5)

    threading.Thread(target=watch, name="exit-with-batch", daemon=True).start()
    _one_thread_per_worker()


def run_batch(files: list[Path], out_dir: str | Path, options: ScoreOptions, *, jobs: int = 1,
              progress: bool = True) -> dict:
    """Score ``files`` into ``out_dir`` with ``jobs`` processes; write summary.json/.csv.

    A stop signal (Ctrl-C, SIGTERM, SIGHUP) stops the batch within about ``STOP_GRACE_S``: the
    calls in flight end early and write their partial results (or are killed with their workers
    when they do not end in time), no call is started after it, the summary covers every call
    (``ok``/``skipped`` as usual, ``interrupted`` or ``not_started``, and ``stopped`` says which
    signal), and then the signal is raised: KeyboardInterrupt (Ctrl-C) or ``SignalExit``.

    Returns:
        the summary document: ``{"n_calls", "n_scored", "n_skipped", "calls": [rows in input
        order], "medians": {metric: median over scored calls}, "out_dir", "jobs", "wall_s"}``.
    Raises:
        KeyboardInterrupt, SignalExit: stopped by a signal, after the summary was written.
    """
    from livejudge.commands.runner import SignalExit

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    earlier = earlier_results(out)
    _remove_stale_summary(out)
    names = _out_names(files)
    tasks = [(str(f), options, str(out / n)) for f, n in zip(files, names)]
    rows: list[dict | None] = [None] * len(tasks)
    started = [False] * len(tasks)
    t0, t0_wall = time.perf_counter(), time.time()
    bar = _progress(len(tasks)) if progress else None
    stop = StopRequest()
    here = jobs <= 1
    beat = _Heartbeat(bar, lambda: [Path(tasks[i][0]).name for i in range(len(tasks))
                                    if started[i] and rows[i] is None] if here else [])
    with _BatchSignals(stop, deadline_s=STOP_GRACE_S if here else None) as signals:
        try:
            beat.start()
            if here:
                _run_here(tasks, rows, started, signals, bar)
            else:
                _run_pool(tasks, rows, started, signals, bar, jobs)
        except KeyboardInterrupt:  # a second signal just as the calls ended
            if not stop.is_set():
                stop.request(signal.SIGINT)
        except SignalExit as exc:  # raised by a handler we did not install (not the main thread)
            stop.request(exc.code - 128)
        finally:
            beat.stop()
            signals.hold()  # from here on a signal only says "please wait"
            if bar is not None:
                bar[0].stop()
        if not stop.is_set():
            summary = write_summary(rows, out, jobs=jobs, wall_s=time.perf_counter() - t0, earlier=earlier)
            if not stop.is_set():
                return summary
            _raise_stop(stop)  # a signal while the complete summary was written: exit by it all the same
        for i, (path, _, out_path) in enumerate(tasks):
            if rows[i] is None:  # in flight when stopped, or never reached
                rows[i] = _row_after_stop(path, out_path, started[i], stop.label, t0_wall)
                _report_row(rows[i], None)
        if not here:
            _remove_temp_files(out, names)
        n_int = sum(r["status"] == "interrupted" for r in rows)
        n_not = sum(r["status"] == "not_started" for r in rows)
        n_ended = len(rows) - n_int - n_not
        # "(partial results)" had followed a row's "no partial result was written" (a trial)
        n_part = sum(r["status"] == "interrupted" and bool(r.get("result"))
                     and "its partial result covers" in str(r.get("reason")) for r in rows)
        summary = write_summary(rows, out, jobs=jobs, wall_s=time.perf_counter() - t0, earlier=earlier,
                                stopped=f"{stop.label} after {n_ended} of {len(rows)} calls had finished: {n_int} "
                                        f"interrupted ({n_part} with a partial result), {n_not} not started",
                                n_interrupted=n_int, n_not_started=n_not)
        where = (summary.get("fallback") or {}).get("summary.json") or out / "summary.json"
        print(f"livejudge: batch stopped ({summary['stopped']}); summary written to {where}",
              file=sys.stderr, flush=True)
    _raise_stop(stop)


def _raise_stop(stop: StopRequest):
    """End the batch by its stop signal: KeyboardInterrupt for Ctrl-C (exit 130), else
    ``SignalExit`` (143 SIGTERM, 129 SIGHUP; ``cli.main``)."""
    from livejudge.commands.runner import SignalExit

    if stop.first in (None, signal.SIGINT):
        raise KeyboardInterrupt
    raise SignalExit(stop.first)


HEARTBEAT_S = 30.0
"""Seconds of wall time between two "still scoring" lines of a batch whose stderr is not a terminal."""


class _Heartbeat:
    """Piped (CI), a batch says every ``HEARTBEAT_S`` that it is still scoring, with how many calls
    are done: one line per call alone left a batch of long calls silent for minutes (a re-check: a
    20-minute call, 55 s without a line), and CI services stop a job that prints nothing. A
    daemon thread; nothing on a terminal (the bar shows it) or without a bar."""

    def __init__(self, bar, in_flight, every_s: float | None = None) -> None:
        self.bar, self.in_flight = bar, in_flight
        self.every_s = float(HEARTBEAT_S if every_s is None else every_s)
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.bar is None or self.bar[2].is_terminal:
            return
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="livejudge-batch-heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from livejudge.outputs.guard import clean

        while not self._done.wait(self.every_s):
            task = next((t for t in self.bar[0].tasks if t.id == self.bar[1]), None)
            if task is None:
                return
            try:
                names = self.in_flight()
            except Exception:  # a list changing under us: no names this time
                names = []
            what = f"still scoring {', '.join(names[:3])}" if names else "still scoring"
            try:
                print(clean(f"livejudge: [{task.completed:.0f}/{task.total:.0f} done] {what} "
                            f"({time.monotonic() - self._t0:.0f} s elapsed)"), file=sys.stderr, flush=True)
            except (OSError, ValueError):
                return

    def stop(self) -> None:
        self._done.set()


def _run_here(tasks: list[tuple], rows: list, started: list[bool], signals: _BatchSignals, bar) -> None:
    """Score ``tasks`` one after another in this process; a stop ends the call in flight early
    (``score_call`` reads ``_PROCESS_STOP``) and starts no other."""
    global _PROCESS_STOP
    stop = _PROCESS_STOP = signals.stop
    try:
        for i, t in enumerate(tasks):
            if stop.is_set():
                return
            started[i] = True
            rows[i] = _score_one(*t)
            _report_row(rows[i], bar)
    except KeyboardInterrupt:  # a second signal, the stop deadline, or Ctrl-C where no handler was ours
        if not stop.is_set():
            stop.request(signal.SIGINT)
    finally:
        signals.hold()
        _PROCESS_STOP = None


def _run_pool(tasks: list[tuple], rows: list, started_out: list[bool], signals: _BatchSignals, bar, jobs: int) -> None:
    """Score ``tasks`` in ``jobs`` spawned worker processes. On a stop: calls not started are
    cancelled, the workers get SIGTERM (their calls in flight end early and write partial
    results), those not back within ``STOP_GRACE_S`` are killed, and every worker is ended and
    reaped before this returns (no orphan)."""
    import multiprocessing as mp

    stop = signals.stop
    ctx = mp.get_context("spawn")  # spawn: workers start clean (no inherited threads or torch state)
    started = ctx.Array("b", len(tasks), lock=False)
    signum = ctx.Value("i", 0, lock=False)
    ex = None
    futs: dict = {}
    ended: tuple | None = None

    def collect(fut) -> None:
        i = futs[fut]
        try:
            row = fut.result()
        except Exception as exc:  # the worker process itself died
            if stop.is_set():
                return  # decided after the stop (_row_after_stop)
            row = {"file": tasks[i][0], "status": "skipped", "result": None, "metrics": None,
                   "reason": f"worker failed: {type(exc).__name__}: {exc}"}
        rows[i] = row
        _report_row(row, bar)

    try:
        with _terminal_signals_ignored():
            ex = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_worker_start,
                                     initargs=(started, signum, os.getpid()))
            futs = {ex.submit(_score_one, *t, i): i for i, t in enumerate(tasks)}
        pending = set(futs)
        while pending and not stop.is_set():
            done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
            for fut in done:
                collect(fut)
        if pending:  # stopped: the calls in flight end early, nothing new starts
            ended = _stop_pool(ex, signum, stop)
            deadline = time.monotonic() + STOP_GRACE_S
            while (left := deadline - time.monotonic()) > 0:
                for fut in [f for f in pending if f.done()]:  # a future the pool cancelled is done,
                    pending.discard(fut)  # but ``wait`` never returns it
                    collect(fut)
                if not pending:
                    break
                done, pending = wait(pending, timeout=min(0.25, left), return_when=FIRST_COMPLETED)
                for fut in done:
                    collect(fut)
    except KeyboardInterrupt:  # a second signal: stop waiting for the calls in flight
        if not stop.is_set():
            stop.request(signal.SIGINT)
    finally:
        if stop.is_set():
            signals.hold()  # ending the workers is not cut short
        if ex is not None:
            if not stop.is_set():
                ex.shutdown(wait=True)
            else:
                _end_pool(*(ended or _stop_pool(ex, signum, stop)))
        for i in range(len(tasks)):
            started_out[i] = bool(started[i])


def _stop_pool(ex: ProcessPoolExecutor, signum, stop: StopRequest) -> tuple[list, threading.Thread | None]:
    """On a stop: no call starts any more (the executor cancels what it has not handed to a worker;
    a worker declines one it already holds), and every worker gets SIGTERM, which ends its call in
    flight early with a partial result (``_worker_start``). Returns the worker processes and the
    pool's manager thread (the pool forgets both on shutdown). Futures
    are never cancelled here: CPython 3.11's pool raises InvalidStateError (a traceback from its
    thread) on a future cancelled by hand when a worker then dies."""
    signum.value = stop.first or signal.SIGTERM
    procs = list((ex._processes or {}).values())
    manager = getattr(ex, "_executor_manager_thread", None)
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        try:
            os.kill(p.pid, signal.SIGTERM)
        except (OSError, TypeError):  # already gone, or never started
            pass
    return procs, manager


def _end_pool(procs: list, manager: threading.Thread | None) -> None:
    """After a stop: kill every worker still there (past the grace period, or idle), reap them and
    the pool's manager thread, so nothing is left running when the batch exits."""
    for p in procs:
        try:
            if p.is_alive():
                p.kill()
        except (OSError, ValueError):
            pass
    for p in procs:
        p.join(timeout=5)
    if manager is not None:
        manager.join(timeout=5)


def _attempt(score_fn, path: str, options: ScoreOptions) -> dict:
    """Ray task body: the result document, or ``{"call_error": reason}`` for a rejected call
    (a value, so Ray does not retry it); other exceptions propagate (Ray retries once)."""
    t0 = time.perf_counter()
    try:
        doc = score_fn(path, options)
    except CallError as exc:
        return {"call_error": str(exc), "wall_s": time.perf_counter() - t0}
    return {"doc": doc, "wall_s": time.perf_counter() - t0}


def run_batch_ray(files: list[Path], out_dir: str | Path, options: ScoreOptions, *, address: str | None = None,
                  num_cpus: int | None = None, progress: bool = True, score_fn=None) -> dict:
    """Score ``files`` as Ray tasks into ``out_dir``; write summary.json/.csv (as ``run_batch``).

    The backend (``livejudge.distributed.ray_batch``) only runs the tasks; this runner writes
    each result as it comes back, on the driver.

    Args:
        files: the calls (paths visible to every Ray node).
        address: None for a local Ray started for the run, else "auto" or "ray://host:port".
        num_cpus: CPUs of the local Ray (None: all); ignored with an address.
        score_fn: the per-call function (default ``score_call``; tests pass a faulty one).
    Returns:
        the summary document of ``run_batch`` with ``jobs`` = the CPUs Ray offered and
        ``ray`` = {"address", "retries"}; each row as ``run_batch``'s, plus ``attempts`` for a
        call whose task failed (retried once).
    A stop signal (Ctrl-C, SIGTERM, SIGHUP) cancels the tasks not yet back within about a second
    (their workers killed; no partial results), writes the summary of every call (``interrupted``
    rows for the cancelled ones; ``stopped`` says which signal) and shuts a local Ray down.

    Raises:
        ImportError: Ray missing. ConnectionError: no cluster at ``address``.
        KeyboardInterrupt, SignalExit: stopped by a signal, after the summary was written.
    """
    from livejudge.distributed.ray_batch import RETRIES, RayStartInterrupted, failure_reason, import_ray, run_tasks_ray

    import_ray()  # the install hint before any directory is made
    score_fn = score_fn or score_call
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    earlier = earlier_results(out)
    _remove_stale_summary(out)
    names = _out_names(files)
    t0 = time.perf_counter()
    rows: list[dict | None] = [None] * len(files)
    bar = _progress(len(files)) if progress else None

    def on_done(i: int, got: dict | None, error: BaseException | None) -> None:
        row: dict = {"file": str(files[i]), "status": "skipped", "reason": None, "result": None, "metrics": None}
        if error is not None:
            row.update(reason=failure_reason(error), attempts=RETRIES + 1, wall_s=None)
        else:
            if "call_error" in got:
                row["reason"] = got["call_error"]
            else:
                doc = got["doc"]
                row.update(_row_of_doc(doc, *_write_result(doc, str(out / names[i]))))
            row["wall_s"] = round(got["wall_s"], 3)
        rows[i] = row
        _report_row(row, bar)

    stop = StopRequest()
    cpus = 0
    # a stop signal cancels the tasks not yet back and writes the summary of every call, as a local
    # batch does (it had died on SIGTERM with no summary and its local Ray left running)
    with _BatchSignals(stop) as signals:
        try:
            cpus = run_tasks_ray(_attempt, [(score_fn, str(f), options) for f in files], on_done=on_done,
                                 address=address, num_cpus=num_cpus, should_stop=stop.is_set)
        except KeyboardInterrupt:  # a second signal while Ray was being stopped
            if not stop.is_set():
                stop.request(signal.SIGINT)
        except RayStartInterrupted:  # a signal while Ray was starting: our handler has recorded it
            if not stop.is_set():
                stop.request(signal.SIGTERM)
        finally:
            signals.hold()
            if bar is not None:
                bar[0].stop()
        ray_info = {"address": address or "local", "retries": RETRIES}
        if not stop.is_set():
            return write_summary(rows, out, jobs=cpus, wall_s=time.perf_counter() - t0, earlier=earlier, ray=ray_info)
        for i, f in enumerate(files):
            if rows[i] is None:  # its task cancelled: Ray tasks write no partial result
                rows[i] = {"file": str(f), "status": "interrupted", "result": None, "metrics": None,
                           "reason": f"stopped ({stop.label}): its Ray task was cancelled, running or still queued "
                                     "(a Ray task writes no partial result)"}
        n_cut = sum(r["status"] == "interrupted" for r in rows)
        summary = write_summary(rows, out, jobs=cpus, wall_s=time.perf_counter() - t0, earlier=earlier, ray=ray_info,
                                stopped=f"{stop.label} after {len(rows) - n_cut} of {len(rows)} calls had finished: "
                                        f"{n_cut} Ray task(s) cancelled, running or queued (no partial results)",
                                n_interrupted=n_cut, n_not_started=0)
        where = (summary.get("fallback") or {}).get("summary.json") or out / "summary.json"
        print(f"livejudge: batch stopped ({summary['stopped']}); summary written to {where}",
              file=sys.stderr, flush=True)
    _raise_stop(stop)


def _one_thread_per_worker() -> None:
    """Worker start: one torch thread. N workers each running torch's default (all cores)
    oversubscribe the CPUs: 40 short calls with --jobs 2 on 2 cores took 36 s, 18 s with one
    thread each (as Ray's workers run); results are identical."""
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass


def write_summary(rows: list[dict | None], out: Path, *, jobs: int, wall_s: float,
                  earlier: set[str] | None = None, **extra) -> dict:
    """The batch summary of ``rows`` (input order; None = not done) written to ``out``
    (summary.csv, then summary.json) and returned; ``extra`` keys join the document (e.g. ``ray``).

    ``settings`` holds what every scored call was measured with (``compare.recorded_settings``:
    pipeline config, verdict thresholds, ``--asr``, the judge with its weights' digest, the echo
    gate's mode), and ``settings_mixed`` the keys its calls did not share, so ``compare`` can say
    when two batches were scored alike or not; each row's own ``settings`` is dropped.
    ``earlier`` (``earlier_results``: the result files in ``out`` before the batch): those this
    batch did not write are listed in ``stale_results`` and said in one stderr line (they are kept).

    ``n_skipped`` counts every call not scored (skipped, and on a stop interrupted or not started),
    so ``n_calls == n_scored + n_skipped``. A file that cannot be written where asked (a full disk)
    goes to a fallback file in the temp directory, as a single ``score --json`` does: its path is in
    ``fallback`` (``{"summary.json": path, ...}``) and the reason in ``write_errors``, with the
    results that could not be written (their rows' ``write_error``); when even that fails, the
    summary is printed on stdout. Never raises OSError."""
    from livejudge.commands.gates import batch_metrics, measured_calls

    done = [r for r in rows if r is not None]
    for r in done:  # a manifest line found nowhere: both places it was looked for
        note = _NOT_FOUND_NOTE.get(str(r["file"]))
        if r["status"] != "ok" and note and note not in (r.get("reason") or ""):
            r["reason"] = f"{r.get('reason') or 'audio file not found'}; {note}"
    recs = [r.pop("settings", None) for r in done]
    recs = [rec for r, rec in zip(done, recs) if r["status"] == "ok" and isinstance(rec, dict)]
    shared = {k: recs[0][k] for k in (recs[0] if recs else ()) if all(rec.get(k) == recs[0][k] for rec in recs)}
    mixed = [k for k in (recs[0] if recs else ()) if k not in shared]
    scored = [r for r in done if r["status"] == "ok"]
    written = {str(r["result"]) for r in done if r.get("result")}
    stale = sorted(n for n in earlier or () if str(out / n) not in written)
    summary = {
        "n_calls": len(done),
        "n_scored": len(scored),
        "n_skipped": len(done) - len(scored),
        "jobs": jobs,
        "wall_s": round(wall_s, 3),
        "out_dir": str(out),
        **extra,
        **({"judge_info": ji} if (ji := _judge_info_of(scored)) else {}),
        # what every scored call was measured with (compare read no settings of a batch: a trial's
        # batches scored with --hangover-s 0.6, or without a judge, compared with no note)
        "settings": shared,
        **({"settings_mixed": mixed} if mixed else {}),
        # result files of an earlier run left in --out-dir: kept, but not this batch's (a trial)
        **({"stale_results": stale} if stale else {}),
        "medians": batch_metrics(r["metrics"] for r in scored),
        # how many scored calls each median is over (a silent agent measures no latency)
        "measured_calls": measured_calls(r["metrics"] for r in scored),
        "calls": done,
    }
    unwritten = [r["write_error"] for r in done if r.get("write_error")]
    if unwritten:
        summary["write_errors"] = list(unwritten)
    _write_with_fallback(summary, out / "summary.csv", _summary_csv_text(done))
    write_summary_json(summary, out)
    if stale:
        print(stale_results_line(stale, out), file=sys.stderr, flush=True)
    return summary


def _remove_stale_summary(out: Path) -> None:
    """An earlier run's ``summary.json`` and ``summary.csv`` in ``out`` are removed as the batch
    starts (this batch writes its own when it ends or is stopped): after ``kill -9`` a re-check
    found the last run's passing summary, to be read as this run's."""
    for name in ("summary.json", "summary.csv"):
        p = out / name
        try:
            if p.is_file():
                p.unlink()
        except OSError:  # not ours to remove: the write at the end says why
            pass


def earlier_results(out: Path) -> set[str]:
    """The names of the result documents in ``out`` (``*.json`` but summary.json, whose text starts
    as a result does, with ``livejudge_version``), before a batch writes there; empty when it cannot
    be listed. A reused ``--out-dir`` kept an earlier batch's results beside a summary that does not
    list them, without a word (a new user's trial); ``write_summary`` names those it did not write."""
    names = set()
    try:
        entries = list(out.iterdir())
    except OSError:
        return names
    from livejudge.outputs.guard import head_has

    for f in entries:
        if f.suffix != ".json" or f.name == "summary.json":
            continue
        # a folder named x.json, no permission: not a result to speak of
        if f.is_file() and head_has(f, (b'"livejudge_version"',), 256):
            names.add(f.name)
    return names


def stale_results_line(stale: list[str], out: Path) -> str:
    """The one stderr line naming the result files in ``out`` this batch did not write."""
    from livejudge.outputs.guard import clean

    shown = ", ".join(stale[:3]) + (f" and {len(stale) - 3} more" if len(stale) > 3 else "")
    return clean(f"livejudge: note: {out} holds {len(stale)} earlier result(s) this batch did not write ({shown}): "
                 "kept, but not its calls (summary.json lists them under stale_results); remove them or use a new "
                 "--out-dir")


def write_summary_json(summary: dict, out: Path) -> Path | None:
    """Write ``summary`` to ``out``/summary.json (or where it already fell back), with a fallback in
    the temp directory and, when even that fails, on stdout. Returns the path written, or None."""
    from livejudge.outputs.guard import json_text

    target = Path((summary.get("fallback") or {}).get("summary.json") or out / "summary.json")
    written = _write_with_fallback(summary, target, json_text(summary), key="summary.json")
    if written is not None and written != target:  # the fallback copy names itself and why
        written = _write_with_fallback(summary, written, json_text(summary), key="summary.json", record=False)
    if written is None:
        print(f"livejudge: {summary['write_errors'][-1]}; here it is on stdout", file=sys.stderr)
        sys.stdout.write(json_text(summary) + "\n")
    return written


def _write_with_fallback(summary: dict, path: Path, text: str, key: str | None = None, record: bool = True) -> Path | None:
    """Write ``text`` to ``path``; when that fails, to a fallback (``guard.write_or_fallback``). A
    failure is recorded in ``summary["write_errors"]`` and the fallback in
    ``summary["fallback"][key or path.name]``; with ``record`` False, only ``path`` is tried and
    nothing is recorded. Returns the path written, or None."""
    from livejudge.outputs.guard import write_or_fallback, write_text_atomic

    if not record:
        try:
            return write_text_atomic(path, text)
        except OSError:
            return None
    written, error = write_or_fallback(path, text)
    if error is not None:
        summary.setdefault("write_errors", []).append(error)
        if written is not None:
            summary.setdefault("fallback", {})[key or path.name] = str(written)
    return written


def _judge_info_of(scored: list[dict]) -> dict | None:
    """The judge's identity and validity line (``head``, ``summary``, ``validated``) as the first
    scored call's result names it, for the summary and the batch's last stderr line (a new user's
    trial: a batch printed no validity line, though every result carries one); None without a
    judge or a readable result."""
    for r in scored:
        try:
            ji = json.loads(Path(r["result"]).read_text(encoding="utf-8")).get("judge_info") or {}
        except (OSError, ValueError, TypeError):
            continue
        # with the dimension view, so compare shows a batch's dimensions as it shows a call's
        # (a trial: 18 rows, the shared-score three apart, beside a call's merged row)
        return {k: ji[k] for k in ("backbone", "head", "head_version", "head_digest", "summary", "validated", "dimensions")
                if ji.get(k)} or None
    return None


def write_summary_csv(path: Path, rows: list[dict]) -> Path:
    """One row per call: file, status, reason, result path, input-health warnings (``; ``-joined),
    then every metric. Raises OSError."""
    from livejudge.outputs.guard import write_text_atomic

    return write_text_atomic(path, _summary_csv_text(rows))


def _summary_csv_text(rows: list[dict]) -> str:
    keys = list(dict.fromkeys(k for r in rows for k in (r.get("metrics") or {})))
    f = io.StringIO(newline="")
    w = csv.writer(f)
    w.writerow(["file", "status", "reason", "result", "wall_s", "input_health", *keys])
    for r in rows:
        m = r.get("metrics") or {}
        w.writerow([r["file"], r["status"], r.get("reason") or "", r.get("result") or "", r.get("wall_s", ""),
                    "; ".join(r.get("input_health") or ()), *[_csv_cell(k, m.get(k)) for k in keys]])
    return f.getvalue()


def _csv_cell(key: str, v: float | None) -> object:
    """A metric as summary.csv writes it: counts (``*_count``, ``*_windows``) as integers where
    whole ("3.0" read as a measurement, a new user's trial; results written before counts stayed
    integers in ``call_metrics`` hold floats), empty for None."""
    if v is None:
        return ""
    if key.endswith(("_count", "_windows")) and float(v).is_integer():
        return int(v)
    return v


def _progress(total: int):
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    bar = Progress(TextColumn("scoring calls"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("{task.fields[last]}"), console=console, transient=False,
                   disable=not console.is_terminal)
    task = bar.add_task("calls", total=total, last="")
    bar.start()
    return bar, task, console


def _report_row(row: dict, bar) -> None:
    from livejudge.outputs.guard import clean

    msgs = {"ok": [], "not_started": [],  # not started: counted in the stop line, not one line each
            "interrupted": [f"livejudge: {row['file']}: {row['reason']}"]}.get(
        row["status"], [f"livejudge: skipped {row['file']}: {row['reason']}"])
    if row.get("write_error"):
        msgs.append(f"livejudge: {row['file']}: {row['write_error']}")
    msgs += [f"livejudge: warning: {row['file']}: {m}" for m in row.get("input_health") or ()]
    if row.get("echo_gate"):  # the gate rewrote the caller's channel: said per call, as score says it
        msgs.append(f"livejudge: {row['file']}: echo gate on: {row['echo_gate']}")
    if row.get("line"):
        msgs.append(f"livejudge: note: {row['file']}: {row['line']}")
    for msg in msgs:
        msg = clean(msg)
        if bar is not None and bar[2].is_terminal:
            bar[0].console.print(msg, markup=False, highlight=False)
        else:
            print(msg, file=sys.stderr, flush=True)
    if bar is not None:
        bar[0].update(bar[1], advance=1, last=Path(row["file"]).name)
        if not bar[2].is_terminal:  # piped (CI): one line per call, so a long batch is never silent (a trial:
            # 40 calls printed nothing until the end, and CI services stop a job that prints nothing for minutes)
            task = next((t for t in bar[0].tasks if t.id == bar[1]), None)
            if task is not None:
                status = {"ok": "scored"}.get(row["status"], row["status"].replace("_", " "))
                if row["status"] == "ok" and row.get("reason"):  # a truncated recording
                    status += " (truncated: only the part that could be read)"
                print(clean(f"livejudge: [{task.completed:.0f}/{task.total:.0f}] {Path(row['file']).name}: {status} "
                            f"({task.elapsed or 0.0:.0f} s elapsed)"), file=sys.stderr, flush=True)


def options_from_args(args: argparse.Namespace) -> ScoreOptions:
    """ScoreOptions from ``score``'s flags (device auto → what is present)."""
    from livejudge.commands.runner import session_config

    device = args.device
    if device == "auto":
        device = "cpu" if args.judge == "acoustic" else "auto"
    return ScoreOptions(config=session_config(args, "every"), judge=args.judge, head=args.head,
                        device=device, qwen_model=args.qwen_model, asr=args.asr, asr_model=args.asr_model,
                        user_channel=args.user_channel, agent_channel=args.agent_channel,
                        echo_gate=getattr(args, "echo_gate", "auto"), judge_url=getattr(args, "judge_url", None),
                        agent_files=manifest_pairs())


def cmd_score_batch(args: argparse.Namespace) -> int:
    """``livejudge score SPEC --out-dir DIR [--jobs N]``: see the module docstring.

    Exit codes: 0 every call scored; 1 some calls were skipped (each listed with its reason; the
    rest are scored and written; 0 with ``--allow-skipped``), or a result or the summary could not
    be written into ``--out-dir`` (written to the temp directory instead; before 3); 2 bad input
    (no call, a bad ``--out-dir``) or no call could be scored; 3 a ``--fail-if`` gate failed on the
    medians over the scored calls, or on any scored call with ``--gate-each`` (before a skipped
    call's 1); 130/143/129 stopped by Ctrl-C/SIGTERM/SIGHUP (``run_batch``), after the summary.
    """
    from livejudge.commands.gates import (EXIT_GATE, check_gates_measurable, evaluate_batch, evaluate_each,
                                          explain_unmeasured, failed_by_call, needs_judge,
                                          format_failures, format_passed, parse_gates, unmeasured_by_call, write_junit)
    from livejudge.outputs.report import dimension_view
    from livejudge.commands.runner import output_config, print_validity, print_wrapped
    from livejudge.errors import EXIT_FAILED, CLIError

    output = output_config(args)
    gates = parse_gates(output.fail_if)
    if output.report:
        raise CLIError("--report writes one call's report; for a batch, run livejudge report on a result in --out-dir")
    if output.json_out or output.events:
        what = (f"{args.file} is a directory, so it is scored as a batch of its calls; "
                if Path(args.file).is_dir() else "")  # a trial's dir.wav read only the second half
        raise CLIError(f"{what}--json/--events are per call; a batch writes one result per call into --out-dir")
    if args.jobs < 1:
        raise CLIError(f"--jobs must be at least 1, got {args.jobs}")
    try:
        files = discover_calls(args.file)
    except CallError as exc:
        raise CLIError(str(exc)) from None
    out_dir = args.out_dir or "livejudge-results"
    check_out_dir(out_dir, flag="--out-dir" if args.out_dir else "the default --out-dir")
    if Path(args.file).is_dir() and (nested := nested_audio_count(Path(args.file))):
        print(f"livejudge: {args.file}: {nested} audio file(s) in its subfolders are not scored (a folder is read "
              f"one level deep); to include them, pass a quoted glob: '{Path(args.file) / '**' / '*.wav'}'",
              file=sys.stderr)
    options = options_from_args(args)
    from livejudge.commands.runner import check_asr, check_judge_url

    check_judge_url(options.judge, options.judge_url, options.head)  # once, before any call (each call was skipped for it)
    check_asr(options.judge, options.asr)
    if options.judge_url and options.judge != "none":  # a dead or wrong service, once: not N notes and no P(human)
        from livejudge.commands.runner import remote_judge

        remote_judge(options.judge_url, recorded=True)
    if any(needs_judge(g) for g in gates) and not options.judge_url:
        off = options.judge == "none"  # before any call is scored (the judge cached for --jobs 1)
        check_gates_measurable(gates, None if off else _judge_for(options), judge_off=off)
    from livejudge.commands.runner import SignalExit

    try:
        if getattr(args, "ray", None) is not None:  # the same per-call function as Ray tasks
            address = None if args.ray == "local" else args.ray
            num_cpus = int(args.jobs) if isinstance(args.jobs, _Jobs) else None
            try:
                summary = run_batch_ray(files, out_dir, options, address=address, num_cpus=num_cpus, progress=True)
            except (ImportError, ConnectionError) as exc:
                raise CLIError(str(exc)) from None
        else:
            summary = run_batch(files, out_dir, options, jobs=min(args.jobs, len(files)), progress=True)
    except (KeyboardInterrupt, SignalExit):
        if output.junit:  # a stopped batch: a JUnit file that says so, red (it had written none)
            _junit_after_stop(output.junit, gates, Path(out_dir))
        raise
    sm = summary["medians"]
    fallback = summary.get("fallback") or {}
    summary_at = (f"summary in {fallback.get('summary.json') or Path(out_dir) / 'summary.json'} and "
                  f"{fallback.get('summary.csv') or 'summary.csv'}")
    if any(e.startswith(f"cannot write {Path(out_dir) / 'summary.json'} ") and "nor to a temp file" in e
           for e in summary.get("write_errors") or ()):
        summary_at = "summary on stdout (it could not be written)"

    def f(k, unit=""):
        v = sm.get(k)
        return "–" if v is None else f"{v:.2f}{unit}"

    def over(*keys):  # a median over fewer calls than were scored says so
        n = min((summary.get("measured_calls") or {}).get(k, 0) for k in keys)
        return f" (from {n} of {summary['n_scored']} calls)" if 0 < n < summary["n_scored"] else ""

    # the median alone read as every call's figure (a trial: "0.00" for calls at 0.00, 0.00 and 0.94)
    ps = [r["metrics"]["mean_p_human"] for r in summary["calls"]
          if r.get("status") == "ok" and (r.get("metrics") or {}).get("mean_p_human") is not None]
    p_range = "" if len(ps) < 2 else (f" (range {min(ps):.2f}–{max(ps):.2f})"
                                      if f"{min(ps):.2f}" != f"{max(ps):.2f}" else " (the same in every call)")

    print_wrapped(f"livejudge: {summary['n_scored']} of {summary['n_calls']} calls scored, {summary['n_skipped']} skipped "
                  f"in {summary['wall_s']:.1f} s · medians over calls: latency p50 {f('latency_p50_s', 's')} "
                  f"p90 {f('latency_p90_s', 's')}{over('latency_p50_s', 'latency_p90_s')} · the calls' mean P(human) "
                  f"{f('mean_p_human')}{p_range}{over('mean_p_human')} · "
                  f"{summary_at}")
    print_validity(summary.get("judge_info") or {})
    scored = [r for r in summary["calls"] if r.get("status") == "ok"]
    failed_on = None
    if getattr(args, "gate_each", False):
        scope = f"each of {summary['n_scored']} scored calls"
        results, failed_on = evaluate_each(gates, scored)
        results = explain_unmeasured(results, dimension_view(summary))
    else:
        scope = f"medians over {summary['n_scored']} scored call{'s' if summary['n_scored'] != 1 else ''}"
        results = explain_unmeasured(evaluate_batch(gates, scored), dimension_view(summary))
    # a truncated recording lost its end as a stopped call does: gates that pass held on part of it only
    # (a re-check: a batch with a file cut to 60 % passed, exit 0, while the file alone exits 1)
    from livejudge.commands.gates import truncated_row

    truncated = [Path(str(r.get("file"))).name for r in scored if truncated_row(r)]
    cut = (f"{len(truncated)} of the {len(scored)} scored calls {'is a truncated recording' if len(truncated) == 1 else 'are truncated recordings'} "
           f"({', '.join(truncated[:3])}{', …' if len(truncated) > 3 else ''}): the gates read only the part of "
           f"{'it' if len(truncated) == 1 else 'each'} that could be read") if truncated and gates else None
    if gates:  # the gate outcomes in summary.json too (a trial found them only on stderr and in JUnit)
        from livejudge.commands.gates import gate_dicts

        kept = gate_dicts(results)
        for d in kept if cut else ():
            d["cut_short"] = cut
        for g, d in zip(gates, kept):  # "value" is the median; with --gate-each, the calls a gate failed on
            d["value_is"] = "the median over the scored calls"  # (a trial read the median 0 as the failing value)
            if failed_on is not None:
                d["failed_on"] = failed_on[g.text]
        summary["gates"] = {"scope": scope, "results": kept}
        write_summary_json(summary, Path(out_dir))
    if output.junit:
        if not gates:  # a trial found tests="0" unexplained
            print("livejudge: note: --junit without --fail-if: the JUnit file lists each call but no gate; add "
                  "--fail-if 'METRIC>X' to gate", file=sys.stderr)
        p = write_junit(output.junit, results, suite=scope, calls=summary["calls"], cut=cut,
                        cut_case="every call was read to its end",
                        unmeasured=unmeasured_by_call(gates, scored),
                        # with no call scored the run fails (exit 2) whatever --allow-skipped says: its skipped
                        # calls are errors, so the file is not green (a trial: tests="0" errors="0", exit 2)
                        skipped_is_error=not getattr(args, "allow_skipped", False) or summary["n_scored"] == 0,
                        failed_each=None if failed_on is None else failed_by_call(failed_on))
        print(f"livejudge: JUnit XML written to {p}", file=sys.stderr)
    if summary["n_scored"] == 0:
        raise CLIError("no call could be scored (reasons above)")
    msg = format_failures(results, scope)
    if msg:
        print(msg, file=sys.stderr)
    write_errors = summary.get("write_errors") or []
    if write_errors:  # as a single score whose --json failed: 1, the files saved in the temp directory
        print(write_failure_line(write_errors, out_dir), file=sys.stderr)
        return EXIT_FAILED
    if msg:
        return EXIT_GATE
    passed = format_passed(results, scope, cut)
    if passed:
        print(passed, file=sys.stderr)
    if passed and cut:
        return EXIT_FAILED  # as a single truncated call's passing gates: not a pass
    if summary["n_skipped"] and not getattr(args, "allow_skipped", False):
        # a CI job that scored a folder exited 0 with a call lost (a note from a previous session)
        print(f"livejudge: exit 1: {summary['n_skipped']} of {summary['n_calls']} calls skipped (reasons above and in "
              f"summary.json); pass --allow-skipped to exit 0 when the scored calls are enough", file=sys.stderr)
        return EXIT_FAILED
    return 0


def _junit_after_stop(path: str, gates: list, out_dir: Path) -> None:
    """The JUnit file of a batch stopped by a signal: its gates on the calls scored before the stop
    (from the summary it wrote), its calls, and one error test case saying the batch was stopped
    (``gates.cut_short``'s counterpart), so a CI page shows a stopped batch red. Never raises."""
    from livejudge.commands.gates import evaluate_batch, write_junit

    try:
        summary = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        summary = {}
    calls = summary.get("calls") if isinstance(summary.get("calls"), list) else None
    scored = [r for r in calls or () if r.get("status") == "ok"]
    cut = (f"the batch was stopped ({summary.get('stopped') or 'by a signal'}): its gates read only the calls "
           "scored before it")
    try:
        p = write_junit(path, evaluate_batch(gates, scored) if scored else [], suite=f"stopped batch in {out_dir}",
                        calls=calls, cut=cut, cut_case="the batch ran to its end")
        print(f"livejudge: JUnit XML written to {p} (the batch was stopped: an error)", file=sys.stderr)
    except OSError as exc:
        print(f"livejudge: cannot write the JUnit XML to {path}: {exc.strerror or exc}", file=sys.stderr)


def write_failure_line(write_errors: list[str], out_dir: str | Path) -> str:
    """The batch's last line when files could not be written where asked (``write_errors`` of the
    summary): how many, the first reason, where they went instead, and the fix."""
    from livejudge.outputs.guard import clean

    first = write_errors[0]
    more = f" (and {len(write_errors) - 1} more, listed in the summary's write_errors)" if len(write_errors) > 1 else ""
    return clean(f"livejudge: exit 1: {len(write_errors)} file(s) could not be written into {out_dir}: {first}{more}; "
                 "free some space there or pass another --out-dir, then score the calls again")


def check_out_dir(out_dir: str | Path, flag: str = "--out-dir") -> None:
    """Before any call is scored: ``out_dir`` must be a directory (or a path where one can be made)
    in which files can be created, as the single-file outputs are checked
    (``guard.check_output_dir``).

    Raises:
        CLIError: (exit 2) it is a file, a folder on its path is a file, no file can be created
            there (read-only, permissions, ``/proc``), or a name over the file system's limit.
    """
    from livejudge.errors import CLIError
    from livejudge.outputs.guard import OutputPathError, check_output_dir

    try:
        check_output_dir(out_dir, flag=flag, holds="results", files=("summary.json",))
    except OutputPathError as exc:
        raise CLIError(str(exc)) from None


def add_batch_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("batch (FILE is a directory, a glob or a manifest)")
    g.add_argument("--out-dir", default=None, metavar="DIR",
                   help="write one result per call plus summary.json/summary.csv here "
                        "(default for a batch: livejudge-results)")
    g.add_argument("--allow-skipped", action="store_true",
                   help="exit 0 when some calls were skipped (default: exit 1, after writing every result and "
                        "the summary, so CI notices a lost call)")
    g.add_argument("--gate-each", action="store_true",
                   help="apply each --fail-if to every scored call on its own: one failing call fails the batch "
                        "(default: the gates read the medians over the calls, which pass a warning or a flag that "
                        "most calls lack, e.g. 'input_health_warning_count>0' on one call of three)")
    g.add_argument("--jobs", type=_jobs, default=1, metavar="N",
                   help=f"score N calls at once in worker processes (this machine has {os.cpu_count()} CPUs); "
                        "with --ray: the CPUs of the local Ray")
    g.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="score the calls as Ray tasks (livejudge[ray]): no ADDRESS starts a local Ray for the "
                        "run; 'auto' or ray://host:port joins a cluster (call paths must be visible to its nodes)")


class _Jobs(int):
    """``--jobs`` value that remembers it was given (a local Ray takes all CPUs otherwise)."""


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--jobs must be a whole number, got {text!r}") from None
    if n < 1:  # checked here so a single call (which ignores --jobs) refuses it too
        raise argparse.ArgumentTypeError(f"--jobs must be at least 1, got {n}")
    return _Jobs(n)
