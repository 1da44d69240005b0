"""The command line, ``livejudge``: ``cli`` builds the parser and runs a subcommand.

``entry`` is the console script. It lives here, in a package that imports nothing, so that a
Ctrl-C while the command line's modules load (numpy, scipy, rich, asyncio: a second or two on a
small machine) exits 130 with one line, as a Ctrl-C later does, instead of a traceback.
"""


def entry() -> None:
    """Console entry point: import ``livejudge.commands.cli`` under a Ctrl-C guard, then run its
    ``entry``. Exits 130 with "livejudge: interrupted" when interrupted while importing."""
    import sys

    try:
        from livejudge.commands.cli import entry as run
    except KeyboardInterrupt:
        print("livejudge: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    run()
