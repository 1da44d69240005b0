"""Run ``livejudge train``/``eval`` in-process, as the tests of the training commands do."""

from __future__ import annotations

import argparse


def run_train_cli(*argv) -> int | tuple[int, str]:
    """Parse ``argv`` with the subcommands ``livejudge.commands.train.register`` adds and run it:
    the exit code, or (code, message) for a ``CommandError`` (a one-line user-facing error)."""
    from livejudge.commands import train as commands

    parser = argparse.ArgumentParser(prog="livejudge")
    commands.register(parser.add_subparsers())
    args = parser.parse_args([str(a) for a in argv])
    try:
        return args.func(args)
    except commands.CommandError as exc:
        return exc.code, str(exc)
