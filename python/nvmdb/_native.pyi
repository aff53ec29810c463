"""The native half of the nvmdb package: the nvmdb command line, run in this process."""

from typing import Callable

__version__: str

def run(args: list[str], progress: Callable[[int, int], None] | None = None) -> str:
    """Runs ``nvmdb ARGS`` (without the program name) on a thread of its own without the
    GIL and returns what the command prints on stdout. ``progress(done, total)`` is called
    as the experiments and parts of ``nvmdb run``/``reproduce`` finish. Ctrl-C stops the
    command at its next check and raises KeyboardInterrupt. Bad input raises ValueError, a
    file that cannot be read or written OSError (with errno and filename), any other
    failure RuntimeError, with the CLI's one-line message."""
