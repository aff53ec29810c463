"""The documentation runs: every Python block of the READMEs, each as a script from the
repository's root, and the example notebook, executed cell by cell (nbclient)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READMES = [ROOT / "README.md", ROOT / "python" / "README.md"]
NOTEBOOK = ROOT / "python" / "examples" / "pcm_log_sweep.ipynb"


def python_blocks() -> list[tuple[str, str]]:
    """Every ```python block of the READMEs, named README:LINE."""
    blocks = []
    for readme in READMES:
        text = readme.read_text(encoding="utf-8")
        for match in re.finditer(r"^```python\n(.*?)^```$", text, flags=re.M | re.S):
            line = text.count("\n", 0, match.start()) + 1
            blocks.append((f"{readme.relative_to(ROOT)}:{line}", match.group(1)))
    return blocks


BLOCKS = python_blocks()


def test_the_readmes_have_python_blocks():
    assert len(BLOCKS) >= 3, BLOCKS


@pytest.mark.parametrize(("name", "code"), BLOCKS, ids=[name for name, _ in BLOCKS])
def test_a_readme_python_block_runs(name, code, tmp_path):
    script = tmp_path / "block.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "DASK_SCHEDULER_ADDRESS"}
    ran = subprocess.run(
        [sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env
    )
    assert ran.returncode == 0, f"{name}:\n{ran.stderr[-3000:]}"


def test_the_notebook_runs(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    )
    client.execute()
    errors = [o for cell in notebook.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    # The last cell removed the notebook's working directory.
    assert "removed" in "".join(o.get("text", "") for o in notebook.cells[-1].get("outputs", []))
