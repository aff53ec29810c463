"""An experiment's results as data: ``nvmdb run ID --json`` turned into tidy DataFrames.

The report's tables are made for reading (titles in prose, ``"V 1.04×"`` cells); here
each becomes a long-form DataFrame:

- its key: the short name the experiment gives the table, or else one made from the
  title (lower case, words joined by ``_``, at most six words; a repeated key gets
  ``_2``, ``_3``, ...);
- its columns: one per header, named from the header (``"memory time (cycles)"`` is
  ``memory_time_cycles``, ``"record size, B"`` is ``record_size_b``, ``%`` is ``pct``,
  ``×`` is ``x``, ``µ`` is ``u``, ``/`` is ``per``), the unit last; a cell whose report
  text stands for several values (the experiment says which) gives one column per value,
  ``COLUMN_VALUE`` (``..._points``, ``..._of_points``);
- a grid whose first header reads ``ROWS \\ COLUMNS`` (``"MatchPerR \\ record B"``)
  becomes one row per cell: ``match_per_r``, ``record_b`` and the cell's values
  (``best``, ``gain_x``), or ``value``;
- numbers are numeric columns (missing values NaN), text columns ``category``.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

# Symbols of the headers, written out (before the rest is transliterated).
_SYMBOLS = {
    "%": " pct ",
    "×": " x ",
    "÷": " per ",
    "/": " per ",
    "µ": "u",
    "μ": "u",
    "γ": "gamma",
    "α": "alpha",
    "ψ": "psi",
    "≤": " le ",
    "≥": " ge ",
    "<=": " le ",
    ">=": " ge ",
    "+": " plus ",
    "→": " to ",
    "·": " ",
}


def key_of(text: str, words: int | None = None) -> str:
    """``text`` as a short key: symbols written out, camelCase split, lower case, words
    joined by ``_`` (at most ``words`` of them)."""
    for symbol, written in _SYMBOLS.items():
        text = text.replace(symbol, written)
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    parts = re.findall(r"[a-z0-9]+", text.lower())
    if words is not None:
        parts = parts[:words]
    return "_".join(parts) or "column"


def _unique(key: str, taken: set[str]) -> str:
    unique, n = key, 2
    while unique in taken:
        unique, n = f"{key}_{n}", n + 1
    taken.add(unique)
    return unique


def _number(text: str) -> Any:
    """A grid's column header as a number when it is one."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def _fields(cell: Any) -> dict[str, Any]:
    """A typed cell's values (without its report text)."""
    return {name: value for name, value in cell.items() if name != "text"}


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Numeric columns as numbers, text columns as categories."""
    for column in frame.columns:
        values = frame[column].dropna()
        if len(values) and all(isinstance(v, str) for v in values):
            frame[column] = pd.Categorical(frame[column], categories=list(dict.fromkeys(values)))
        elif len(values) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            frame[column] = pd.to_numeric(frame[column])
    return frame


def tidy_table(table: Mapping[str, Any]) -> pd.DataFrame:
    """One table of ``nvmdb run --json`` as a long-form DataFrame (see the module)."""
    headers: list[str] = table["columns"]
    rows: list[list[Any]] = table["rows"]
    records: list[dict[str, Any]] = []
    if headers and " \\ " in headers[0]:
        row_name, column_name = headers[0].split(" \\ ", 1)
        row_key, column_key = key_of(row_name), key_of(column_name)
        for row in rows:
            for header, cell in zip(headers[1:], row[1:], strict=True):
                values = _fields(cell) if isinstance(cell, dict) else {"value": cell}
                records.append({row_key: row[0], column_key: _number(header), **values})
        return _typed(pd.DataFrame(records))
    taken: set[str] = set()
    keys = [_unique(key_of(h), taken) for h in headers]
    columns: list[str] = []
    for row in rows:
        record: dict[str, Any] = {}
        for key, cell in zip(keys, row, strict=True):
            if isinstance(cell, dict):
                record.update({f"{key}_{name}": value for name, value in _fields(cell).items()})
            else:
                record[key] = cell
        columns.extend(c for c in record if c not in columns)
        records.append(record)
    return _typed(pd.DataFrame(records, columns=columns or keys))


def display_table(table: Mapping[str, Any]) -> pd.DataFrame:
    """One table as the report shows it: its headers and each cell's report text."""
    cells = [[c["text"] if isinstance(c, dict) else c for c in row] for row in table["rows"]]
    return pd.DataFrame(cells, columns=table["columns"])


SCORECARD_COLUMNS = [
    "claim_id",
    "experiment",
    "seed",
    "figure",
    "claim",
    "kind",
    "paper",
    "ours",
    "value",
    "tolerance",
    "verdict",
    "note",
    "note_link",
    "paper_scale",
]


def scorecard_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Scorecard rows (``scorecard.json``'s) as a DataFrame, ``kind`` and ``verdict``
    categories. The columns are the rows' keys in their order (``SCORECARD_COLUMNS``
    when there are no rows), so a key the scorecard gains is never dropped."""
    rows = list(rows)
    columns = list(rows[0]) if rows else SCORECARD_COLUMNS
    frame = pd.DataFrame(rows, columns=columns)
    for column in ("kind", "verdict"):
        if column in frame:
            frame[column] = frame[column].astype("category")
    return frame


@dataclass
class Plot:
    """One plot's data: ``data`` has one row per point, ``series`` (the line's name),
    ``source`` (``ours`` or ``paper``: the paper's stated values), ``x`` and ``y``."""

    title: str
    x_label: str
    y_label: str
    data: pd.DataFrame


def plot_of(plot: Mapping[str, Any]) -> Plot:
    rows = [
        {"series": series["name"], "source": source, "x": x, "y": y}
        for source, key in (("ours", "series"), ("paper", "paper"))
        for series in plot.get(key, [])
        for x, y in series["points"]
    ]
    data = pd.DataFrame(rows, columns=["series", "source", "x", "y"])
    data["series"] = data["series"].astype("category")
    data["source"] = pd.Categorical(data["source"], categories=["ours", "paper"])
    return Plot(plot["title"], plot["x_label"], plot["y_label"], data)


@dataclass
class Experiment:
    """What ``nvmdb.run_experiment`` returns: one experiment's results as data.

    - ``tables``: each table as a long-form DataFrame under its short key (see
      ``nvmdb._results``), in the report's order; ``titles`` maps each key to the
      table's title, and ``display`` holds the tables as the report shows them.
    - ``scorecard``: the experiment's claims beside the papers' values (a DataFrame,
      as ``nvmdb.scorecard``'s).
    - ``notes``: the modelling notes; ``summary``; ``config``: the run's whole
      configuration (a dict); ``meta``: seed, scale, git commit and version.
    - ``plots``: the plots' data (a list of ``Plot``).
    - ``files``: the files written, by name (``results.json``, ``plot-1.svg``, ...), when
      the call was given an output directory (``out``); empty otherwise (they were in a
      temporary directory, removed before the call returned).
    """

    id: str
    title: str
    source: str
    summary: str
    config: dict[str, Any]
    notes: list[str]
    meta: dict[str, Any]
    tables: dict[str, pd.DataFrame]
    titles: dict[str, str]
    display: dict[str, pd.DataFrame]
    scorecard: pd.DataFrame
    plots: list[Plot] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)


def experiment_of(data: Mapping[str, Any], keep_files: bool) -> Experiment:
    """``nvmdb run ID --json``'s object as an ``Experiment``."""
    taken: set[str] = set()
    tables: dict[str, pd.DataFrame] = {}
    titles: dict[str, str] = {}
    display: dict[str, pd.DataFrame] = {}
    for table in data["tables"]:
        key = _unique(table["key"] or key_of(table["title"], words=6), taken)
        tables[key] = tidy_table(table)
        titles[key] = table["title"]
        display[key] = display_table(table)
    files = {os.path.basename(path): path for path in data["files"]} if keep_files else {}
    return Experiment(
        id=data["id"],
        title=data["title"],
        source=data["source"],
        summary=data["summary"],
        config=data["config"],
        notes=list(data["notes"]),
        meta=data["meta"],
        tables=tables,
        titles=titles,
        display=display,
        scorecard=scorecard_frame(data["scorecard"]),
        plots=[plot_of(p) for p in data["plots"]],
        files=files,
    )
