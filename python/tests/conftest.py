"""The CLI the package is compared with: `NVMDB_BIN`, or the workspace's
target/release/nvmdb, built once by `cargo build --release -p nvmdb-cli` when missing."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
from dataclasses import dataclass

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@dataclass
class Ran:
    code: int
    stdout: str
    stderr: str

    def json(self):
        assert self.code == 0, self.stderr
        return json.loads(self.stdout)


@pytest.fixture(scope="session")
def nvmdb_bin() -> str:
    given = os.environ.get("NVMDB_BIN")
    if given:
        return given
    built = ROOT / "target" / "release" / "nvmdb"
    if not built.exists():
        subprocess.run(["cargo", "build", "--release", "-p", "nvmdb-cli"], cwd=ROOT, check=True)
    return str(built)


@pytest.fixture(scope="session")
def cli(nvmdb_bin):
    """Runs the nvmdb binary: cli("pcm", "replay", ...) -> Ran."""

    def run(*args: str) -> Ran:
        done = subprocess.run([nvmdb_bin, *args], capture_output=True, text=True, timeout=600)
        return Ran(done.returncode, done.stdout, done.stderr)

    return run
