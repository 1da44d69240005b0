"""Where ``livejudge train`` writes a head: checked before any work, written readable by others.

``check_head_out`` refuses, before a call is embedded, an ``--out`` that cannot become a head
directory (a file, a folder under a file, ``/proc``, a read-only place, a name over the file
system's limit) and one that already holds a head unless ``--force`` is given: these used to
end in a traceback after all the work, or overwrite a head of the same name and version
silently (a new user's trial).

``share_mode`` gives the files of a written head the permissions the umask allows
(``0o666 & ~umask``, as ``livejudge.outputs.guard.write_text_atomic`` does): safetensors writes its
files with mode 0600, so another user or a CI container could read a trained head's
config.json (0644) but not its weights.
"""

from __future__ import annotations

import os
from pathlib import Path

from livejudge.errors import CLIError

HEAD_FILES = ("config.json", "weights.safetensors")
"""Files whose presence makes a directory a head (``livejudge.judge.model.head``'s names)."""


def holds_head(directory: str | Path) -> bool:
    """True when ``directory`` holds a head's config.json or weights.safetensors."""
    d = Path(directory)
    return any((d / f).exists() for f in HEAD_FILES)


def check_head_out(out: str | Path, *, force: bool = False, flag: str = "--out") -> None:
    """Before any work: ``out`` must be a directory, or a path where one can be made, in which
    files can be created, and must not already hold a head unless ``force``.

    Raises:
        CLIError: (exit 2, one line naming ``flag`` and the fix) ``out`` is a file, a folder on its
            path is a file, no file can be created where it is or would be made (read-only,
            permissions, ``/proc``), a name over the file system's limit, or it holds a head
            (config.json or weights.safetensors) and ``force`` is False.
    """
    from livejudge.outputs.guard import OutputPathError, check_output_dir, clean

    p = Path(out)
    shown = clean(out)
    try:  # as score's --out-dir is checked
        check_output_dir(out, flag=flag, holds="head", files=HEAD_FILES)
    except OutputPathError as exc:
        raise CLIError(str(exc)) from None
    if p.is_dir() and holds_head(p) and not force:
        raise CLIError(f"{flag} {shown} already holds a head ({_head_name(p)}): pass --force to overwrite it, "
                       "or give another directory")


def _head_name(directory: Path) -> str:
    import json

    try:
        doc = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        return f"{doc['name']} {doc['version']}"
    except Exception:  # a partial or foreign head: say what is there
        return ", ".join(f for f in HEAD_FILES if (directory / f).exists())


def share_mode(path: str | Path) -> None:
    """Give ``path`` the permissions a new file gets under the umask (``0o666 & ~umask``).

    Raises:
        OSError: the file cannot be changed (not its owner).
    """
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def share_head_files(directory: str | Path, names: tuple[str, ...] = ("weights.safetensors",)) -> None:
    """``share_mode`` on the files ``names`` of a head directory just written (safetensors writes
    them 0600); a name that is not there is passed over.

    Raises:
        OSError: a file cannot be changed (not its owner).
    """
    for name in names:
        f = Path(directory) / name
        if f.is_file():
            share_mode(f)
