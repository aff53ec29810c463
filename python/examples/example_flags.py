"""Flag parsing shared by the example scripts: one line naming the flag, exit status 2."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NoReturn

FORMATS = ("disksim", "msr", "spc", "fiu", "simple")


class Parser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line (no usage block), status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n")


def trace_arg(text: str) -> tuple[str, str]:
    """``FILE:FORMAT``: an existing trace file (made absolute) and a trace format."""
    path, sep, format = text.rpartition(":")
    if not sep or format not in FORMATS:
        raise argparse.ArgumentTypeError(f"{text!r} is not FILE:FORMAT with FORMAT one of {', '.join(FORMATS)}")
    if not Path(path).is_file():
        raise argparse.ArgumentTypeError(f"{path}: no such file")
    return str(Path(path).resolve()), format


def positive_int(text: str) -> int:
    """A whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return value
