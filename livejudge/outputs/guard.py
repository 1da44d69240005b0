"""Guards on what livejudge writes and prints, for hostile or unlucky inputs (issue 21):

* ``check_output_paths``: every output path checked *before* a call is scored — not the input
  recording (same file, also via a symlink or another relative path), not a directory, a
  file name the file system accepts, a directory we can create a file in — so a bad path is
  a one-line usage error, not a traceback after the whole call was scored;
* ``write_text_atomic``: temp file + rename with a unique temp name, so two writers of one
  path never trip over each other's temp file (the last rename wins; both files are whole);
* ``write_or_fallback`` and ``fallback_path``: where a result goes when its own path fails
  late (a full disk);
* ``json_text``: strict JSON (no NaN/Infinity, which ``json.loads`` elsewhere rejects): a
  non-finite number is written as null and the document's ``errors`` says where;
* ``clean``: text from outside (a file name, an agent's close reason) with control characters
  shown as escapes, so it cannot move the cursor, recolour or retitle the terminal;
* ``stdout_closed`` and ``stdout_console``: a stdout closed by its reader (``| head``) ends what
  is printed there quietly, as that idiom expects, with no traceback and no error per line.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: Any) -> str:
    """``str(text)`` safe to print on a terminal: C0/C1 control characters (ESC, BEL, CR, ...)
    and bidi overrides are shown as ``\\x1b``-style escapes; tab and newline are kept."""
    s = str(text)
    if not _CONTROL.search(s):
        return s
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", s)


class OutputPathError(ValueError):
    """An output path that cannot be written (one line naming the flag, the problem and the fix)."""


def _name_max(directory: Path) -> int:
    try:
        return int(os.pathconf(directory, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return 255


def _exists(p: Path) -> bool:
    try:
        return p.exists()
    except OSError:  # ENAMETOOLONG and the like: not there
        return False


def _nearest_existing(p: Path) -> Path:
    q = p.absolute().parent
    while not _exists(q) and q != q.parent:
        q = q.parent
    return q


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one file (the same inode where both exist, else the same real path)."""
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def input_folders(inputs: Iterable[str | Path | None]) -> list[str]:
    """The batch folders among a command's inputs: a folder given as itself, or as its
    ``summary.json`` (``compare`` takes either), whose call results an output must not replace."""
    out = []
    for i in inputs:
        if i is None or str(i) in ("", "-"):
            continue
        if os.path.isdir(i):
            out.append(str(i))
        elif os.path.basename(str(i)) == "summary.json":
            out.append(os.path.dirname(os.path.abspath(str(i))))
    return out


def head_has(path: str | Path, marks: tuple[bytes, ...], n: int = 512) -> bool:
    """Whether the first ``n`` bytes of the file at ``path`` hold one of ``marks`` (a livejudge result
    holds ``b'"livejudge_version"'`` there); False when it cannot be read. Never raises."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(n)
    except OSError:
        return False
    return any(m in head for m in marks)


STDOUT_FLAGS = ("--json",)
"""The output flags for which "-" means stdout (``check_output_paths`` refuses "-" for the others)."""


OUTPUT_EXAMPLES: dict[str, str] = {"--report": "report.html", "--html": "compare.html", "--csv": "compare.csv",
                                   "--events": "events.jsonl",
                                   "--junit": "gates.xml", "--record": "call.wav"}
"""The file name a "is a directory" message suggests inside it, by flag (else "result.json")."""


def check_output_paths(outputs: dict[str, str | Path | None], inputs: Iterable[str | Path | None] = (),
                       what: str = "recording", examples: dict[str, str] | None = None) -> None:
    """Refuse, before any work, output paths that would fail or do harm when written.

    Args:
        outputs: flag → path (``{"--json": "r.json", "--events": None}``); None is skipped, and
            "-" (stdout) for the flags in ``STDOUT_FLAGS``.
        inputs: the input files (the recording), which no output may be.
        what: what the inputs are, for the message: "recording" (score, replay, attach) or "result
            document" (report, compare).
        examples: flag → the file name a message suggests for a directory given as that flag's path,
            where ``OUTPUT_EXAMPLES`` would not say it (``report -o DIR``: an .html name, not
            "result.json"; a new user's trial).
    Raises:
        OutputPathError: "-" for a flag that writes only files, an output is an input, an
            existing file of an input folder or an existing audio file (but ``--record``), two
            outputs are one file, a directory, a named pipe (``audio.is_named_pipe``), a name
            over the file system's limit, or in a directory where no file can be created
            (read-only, ``/proc``, missing permissions).
    """
    ins = [str(i) for i in inputs if i is not None and str(i) != "-"]
    for flag, p in outputs.items():  # only --json writes to stdout; elsewhere "-" made a file named "-" (a trial)
        if p is not None and str(p) == "-" and flag not in STDOUT_FLAGS:
            raise OutputPathError(f"{flag} - is not supported ({flag} writes a file; only --json - writes to "
                                  f"stdout): give a file path")
    given = [(flag, str(p)) for flag, p in outputs.items() if p is not None and str(p) != "-"]
    for i, (flag, path) in enumerate(given):
        p = Path(path)
        for src in ins:
            if same_file(p, src):
                raise OutputPathError(f"{flag} {clean(path)} is the input {what} {clean(src)}; writing it "
                                      f"would overwrite the {'call' if what == 'recording' else what}: give another path")
        for src in input_folders(ins):  # a file of an input folder (a batch's result, its summary): compare's
            # --json there replaced a batch's call result, and a later compare of it failed (a trial)
            if p.suffix.lower() in (".json", ".csv") and p.exists() and same_file(p.parent, src):
                raise OutputPathError(f"{flag} {clean(path)} is a file of the input folder {clean(src)}; writing it "
                                      "would overwrite what that folder holds: give a path outside it")
        from livejudge.audio import looks_like_audio

        if flag != "--record" and looks_like_audio(p):
            # score x.wav --json other.wav wrote JSON over another recording without a word (a trial); by its
            # first bytes too: a WAV copied to "take1" was overwritten (a re-check)
            raise OutputPathError(f"{flag} {clean(path)} is an existing audio file (a recording?); writing it would "
                                  f"overwrite it: give a new path, e.g. "
                                  f"{(examples or {}).get(flag) or OUTPUT_EXAMPLES.get(flag, 'result.json')}")
        for flag2, path2 in given[:i]:
            if same_file(p, path2):
                raise OutputPathError(f"{flag} and {flag2} are the same file ({clean(path)}): give each its own path")
        parent = _nearest_existing(p)
        limit = _name_max(parent)
        for part in p.absolute().parts[len(parent.parts):]:
            if len(os.fsencode(part)) > limit:
                raise OutputPathError(f"{flag}: the name {clean(part[:40])}… is {len(os.fsencode(part))} bytes; "
                                      f"this file system allows {limit}: give a shorter name")
        from livejudge.audio import is_named_pipe

        if is_named_pipe(p):  # written at the end: with no reader there it hung past every signal (a trial)
            raise OutputPathError(f"{flag} {clean(path)} is a named pipe: livejudge writes its outputs as files, at "
                                  "the end of the call; give a file path" + (" (or --json - for stdout)"
                                                                             if flag in STDOUT_FLAGS else ""))
        if p.is_dir():
            example = (examples or {}).get(flag) or OUTPUT_EXAMPLES.get(flag, "result.json")
            raise OutputPathError(f"{flag} {clean(path)} is a directory: give a file path inside it, "
                                  f"e.g. {clean(p / example)}")
        if not parent.is_dir():
            raise OutputPathError(f"{flag} {clean(path)}: {clean(parent)} is not a directory")
        if p.exists() and not os.access(p, os.W_OK):
            raise OutputPathError(f"{flag} {clean(path)} exists and is not writable: give another path")
        try:  # the only sure test: create (and remove) a file where the output will go
            fd, probe = tempfile.mkstemp(prefix=".livejudge-probe-", dir=parent)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise OutputPathError(f"{flag} {clean(path)}: cannot create a file in {clean(parent)} "
                                  f"({exc.strerror or exc}): give a writable path") from None


def check_output_dir(out: str | Path, *, flag: str, holds: str, files: Iterable[str] = ()) -> None:
    """Before any work: ``out`` must be a directory, or a path where one can be made, in which files
    can be created, and each of ``files`` must be a name that can be written there
    (``check_output_paths``). What ``score DIR --out-dir`` and ``train --out`` check.

    Args:
        out: the directory asked for.
        flag: the flag that named it, for the message ("--out-dir", "--out").
        holds: what it is for, for the message ("results", "head"): a file given as ``out``
            is answered with e.g. ``NAME-results``.
        files: names the command will write inside it.
    Raises:
        OutputPathError: (one line naming ``flag`` and the fix) ``out`` is a file, a folder on its
            path is a file, no file can be created where it is or would be made (read-only,
            permissions, ``/proc``), or a name over the file system's limit.
    """
    p = Path(out)
    shown = clean(out)

    def names_fit() -> None:  # names over the file system's limit, a file name that is a directory
        for name in files:
            check_output_paths({flag: p / name})

    try:
        from livejudge.audio import is_named_pipe

        if is_named_pipe(p):  # was "is a file, not a directory … e.g. X-results" (a re-check)
            raise OutputPathError(f"{flag} {shown} is a named pipe, not a directory: give a directory for the {holds} "
                                  "(it is made if missing)")
        if p.exists() and not p.is_dir():
            raise OutputPathError(f"{flag} {shown} is a file, not a directory: give a directory for the {holds} "
                                  f"(it is made if missing), e.g. {clean(p.with_name(p.name + '-' + holds))}")
        q = p.absolute()
        while not q.exists() and q != q.parent:
            q = q.parent
    except OSError as exc:  # a name too long (said with its length by names_fit), a loop of links
        names_fit()
        raise OutputPathError(f"{flag} {shown}: {exc.strerror or exc}: give another directory") from None
    if not q.is_dir():
        raise OutputPathError(f"{flag} {shown}: {clean(q)} is a file, not a directory: give another directory")
    try:  # the only sure test: create (and remove) a file where the first new folder or file goes
        fd, probe = tempfile.mkstemp(prefix=".livejudge-probe-", dir=q)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        where = "there" if q == p.absolute() else f"in {clean(q)}, where it would be made"
        raise OutputPathError(f"{flag} {shown}: cannot create files {where} ({exc.strerror or exc}): "
                              "give a directory you can write to") from None
    names_fit()


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` via a uniquely named temp file in the same directory
    and a rename: a crash never leaves half a file, and concurrent writers never share a temp
    file. An existing path that is not a regular file (a device, a FIFO) is written in place.
    Raises OSError (the temp file is removed)."""
    p = Path(path)
    if p.exists() and not p.is_file() and not p.is_dir():
        # a device or a pipe (/dev/stdout, /dev/full, a FIFO): written in place, never renamed over
        # (as root, a trial's --json /dev/full replaced the device node with a regular file and
        # said "result written"); a write error (ENOSPC) is raised
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
        return p
    if not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name[:100]}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would hide CI artefacts from other users
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return p


def fallback_path(path: str | Path) -> Path:
    """Where to save an output whose own path failed: the system temp directory, named after
    the intended file, the process and the time, never an existing file. A name stem over 60
    characters is cut to a hash of the whole stem and its first 47 characters, so two long
    names that share a beginning (two calls of one batch) get different fallbacks."""
    p = Path(str(path))
    stem = p.stem or "result"
    if len(stem) > 60:
        stem = hashlib.sha1(os.fsencode(stem)).hexdigest()[:12] + "-" + stem[:47]
    base = Path(tempfile.gettempdir()) / f"livejudge-{stem}-{os.getpid()}-{time.strftime('%Y%m%dT%H%M%S')}"
    suffix = p.suffix[:10]
    candidate, n = Path(f"{base}{suffix}"), 1
    while os.path.lexists(candidate):
        candidate, n = Path(f"{base}-{n}{suffix}"), n + 1
    return candidate


def write_or_fallback(path: str | Path, text: str, what: str = "") -> tuple[Path | None, str | None]:
    """Write ``text`` to ``path`` (``write_text_atomic``); when that fails (OSError: a full disk, a
    directory removed meanwhile), to ``fallback_path(path)``, so an output that fails late does
    not lose what was measured. The one place every command's late writes fall back through.

    Args:
        path: where the output was asked for.
        text: the whole document.
        what: words before the path in the error line, e.g. "the result to ".

    Returns:
        (the path written, or None when even the fallback failed; None when ``path`` took it,
        else one line saying what failed and where the text went instead).
    """
    try:
        return write_text_atomic(path, text), None
    except OSError as exc:
        why = exc.strerror or str(exc)
    try:
        fb = write_text_atomic(fallback_path(path), text)
    except OSError:
        return None, f"cannot write {what}{clean(path)} ({why}) nor to a temp file"
    return fb, f"cannot write {what}{clean(path)} ({why}); written to {fb} instead"


def _finite(obj: Any, where: str, bad: list[str]) -> Any:
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        bad.append(where or "(top)")
        return None
    if isinstance(obj, dict):
        return {k: _finite(v, f"{where}.{k}" if where else str(k), bad) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v, f"{where}[{i}]", bad) for i, v in enumerate(obj)]
    return obj


def json_text(doc: Any, indent: int | None = 2) -> str:
    """``doc`` as strict JSON (RFC 8259: no NaN/Infinity). Non-finite numbers become null and,
    for a result document (a dict with ``errors``), one entry names how many and where."""
    try:
        return json.dumps(doc, indent=indent, allow_nan=False)
    except ValueError:
        pass
    bad: list[str] = []
    safe = _finite(doc, "", bad)
    if isinstance(safe, dict) and isinstance(safe.get("errors"), list):
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        safe["errors"].append(f"{len(bad)} non-finite number(s) (NaN/inf) written as null: "
                              f"{', '.join(bad[:3])}{more}")
    return json.dumps(safe, indent=indent, allow_nan=False)


def is_closed_pipe(exc: BaseException) -> bool:
    """Whether ``exc`` says the reader of a stream went away: BrokenPipeError (EPIPE, ``| head``
    having exited), or ValueError "I/O operation on closed file"."""
    import errno

    if isinstance(exc, BrokenPipeError) or (isinstance(exc, OSError) and exc.errno == errno.EPIPE):
        return True
    return isinstance(exc, ValueError) and "closed file" in str(exc)


def stdout_closed() -> None:
    """After a write to stdout failed because its reader went away (``is_closed_pipe``): point file
    descriptor 1 at /dev/null, so what is still buffered, or printed later, goes nowhere quietly
    instead of failing again at each line and at exit (Python's documented way: the "Note on
    SIGPIPE" in the ``signal`` module's docs). A stdout with no file descriptor (a test's capture)
    is left as it is."""
    import sys

    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    except OSError:
        pass


PIPED_WIDTH = 160
"""Columns of a rich table printed to a pipe or file (rich's default there is 80, which wrapped
each long metric name over two or three lines, so ``grep`` found half a row)."""


def stdout_console():
    """A rich Console on stdout that, when its reader goes away (``| head``), stops printing
    quietly (``stdout_closed``; later prints are dropped) where rich's own exits with status 1 and
    no word (a trial: ``compare a b --json c.json | head -3`` exited 1). To a pipe or a file it is
    ``PIPED_WIDTH`` columns wide, unless ``COLUMNS`` says otherwise; on a terminal, the terminal's."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            stdout_closed()

    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError):
        tty = False
    return _Console(width=None if tty or os.environ.get("COLUMNS") else PIPED_WIDTH)
