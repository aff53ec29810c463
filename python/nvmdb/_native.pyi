"""The native half of the nvmdb package: the nvmdb command line, run in this process."""

def run(args: list[str]) -> str:
    """Runs ``nvmdb ARGS`` (without the program name) without the GIL and returns what the
    command prints on stdout. Bad input raises ValueError, a file that cannot be read or
    written OSError, any other failure RuntimeError, with the CLI's one-line message."""
