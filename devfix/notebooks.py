"""Jupyter notebooks: their code cells as one program, and fixes written back into the JSON.

The code cells run in order in one kernel, so devfix analyses them as one program: a `device`
defined in cell 2 is in scope in cell 5. IPython lines (`%magic`, `!shell`, `help?`) become
comments while devfix analyses the program and come back unchanged; a cell that starts with a
cell magic (`%%bash`, `%%time`, ...) is not Python devfix can rewrite, so it is left out.

A fix rewrites only the `source` of the cells whose code changed, in place in the file's text:
outputs, metadata, key order, indentation, escaping and the final newline stay byte for byte.
(nbformat would re-serialise the whole notebook; the standard json module reads it here, and the
positions of each cell's `source` come from a small scanner over the same text.)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from json.decoder import scanstring

NOTEBOOK_SUFFIX = ".ipynb"
IPYTHON_LINE = re.compile(r"^\s*(?:[%!]|\w[\w.]*\?{1,2}\s*$|\?)")  # `%time x`, `!pip install`, `obj?`
CELL_MAGIC = re.compile(r"^\s*%%")
MARKER = "# devfix: cell {number}"  # a comment line that starts each cell in the program
MARKER_LINE = re.compile(r"^# devfix: cell (\d+)$")
PLACEHOLDER = "# devfix: ipython {index}"
PLACEHOLDER_LINE = re.compile(r"^(\s*)# devfix: ipython (\d+)$")
_WHITESPACE = " \t\n\r"
_LINE_ENDINGS = re.compile(r"\r\n|\r")


class NotebookError(ValueError):
    """A file that is not a notebook devfix can read; the message is one line for the user."""


def is_notebook(path: str) -> bool:
    return path.endswith(NOTEBOOK_SUFFIX)


@dataclass(frozen=True)
class Cell:
    number: int  # 1-based, among all cells: the number a user counts in the notebook
    source: str
    span: tuple[int, int]  # where the cell's `source` value lies in the file's text
    python: bool  # a code cell devfix analyses (not one under a cell magic)


@dataclass(frozen=True)
class CellPosition:
    cell: int
    line: int  # 1-based within the cell


class Notebook:
    """One notebook's text, its code cells, and the program made of them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.cells = _code_cells(text)
        self.program, self._starts, self._ipython = _program(self.cells)

    @classmethod
    def from_bytes(cls, data: bytes) -> Notebook:
        try:
            return cls(data.decode("utf-8"))
        except UnicodeDecodeError as error:
            raise NotebookError(f"not UTF-8 ({error})") from error

    def position(self, program_line: int) -> CellPosition | None:
        """The cell and line of a line of the program; None for a marker line."""
        for number, first, last in self._starts:
            if first <= program_line <= last:
                return CellPosition(number, program_line - first + 1)
        return None

    def program_line(self, position: CellPosition) -> int | None:
        """The program's line of a cell's line (the inverse of `position`)."""
        for number, first, last in self._starts:
            if number == position.cell and first + position.line - 1 <= last:
                return first + position.line - 1
        return None

    def with_program(self, fixed: str) -> str:
        """The notebook's text with the fixed program's cells in place of the changed ones."""
        segments = _segments(fixed)
        edits = []
        for cell in self.cells:
            if not cell.python or cell.number not in segments:
                continue
            new_source = self._restore(segments[cell.number], cell.source)
            if new_source != cell.source:
                edits.append((cell.span, _serialise_like(self.text, cell.span, new_source)))
        text = self.text
        for (start, end), replacement in sorted(edits, reverse=True):
            text = text[:start] + replacement + text[end:]
        return text

    def keeps_its_cells(self, fixed: str) -> bool:
        """The fixed program still starts each cell where a cell marker stands alone on its line: an
        edit that moved a marker (into an indented block, or away) would move code between cells."""
        return _segments(fixed).keys() == _segments(self.program).keys()

    def cell_sources(self) -> dict[int, str]:
        return {cell.number: cell.source for cell in self.cells if cell.python}

    def _restore(self, segment: str, original: str) -> str:
        """The IPython lines back in, and the cell's own ending (no newline after its last line)."""
        lines = segment.splitlines(keepends=True)
        restored = []
        for line in lines:
            placeholder = PLACEHOLDER_LINE.match(line.rstrip("\r\n"))
            if placeholder:
                ending = line[len(line.rstrip("\r\n")):]
                restored.append(self._ipython[int(placeholder[2])] + ending)
            else:
                restored.append(line)
        text = "".join(restored)
        if not original.endswith("\n") and text.endswith("\n"):
            text = text[:-1]
        if text == _LINE_ENDINGS.sub("\n", original):
            return original  # unchanged but for the line endings the program gave it (`\r\n` in the JSON)
        if "\r\n" in original:
            text = text.replace("\n", "\r\n")  # a changed cell keeps the cell's own endings
        return text


def _code_cells(text: str) -> list[Cell]:
    try:
        document = json.loads(text)
    except ValueError as error:
        raise NotebookError(f"not valid JSON ({error})") from error
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        raise NotebookError("not a Jupyter notebook (no list of cells)")
    spans = _source_spans(text)
    if len(spans) != len(document["cells"]):
        raise NotebookError("cells could not be located in the file's text")
    cells = []
    for number, (cell, span) in enumerate(zip(document["cells"], spans), start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code" or span is None:
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if not isinstance(source, str):
            raise NotebookError(f"cell {number}: its source is neither text nor a list of lines")
        cells.append(Cell(number, source, span, not CELL_MAGIC.match(source)))
    return cells


def _program(cells: list[Cell]) -> tuple[str, list[tuple[int, int, int]], dict[int, str]]:
    """The program text, (cell, first line, last line) of each cell in it, and the IPython lines
    that placeholders stand for."""
    lines: list[str] = []
    starts = []
    ipython: dict[int, str] = {}
    for cell in cells:
        if not cell.python:
            continue
        lines.append(MARKER.format(number=cell.number) + "\n")
        first = len(lines) + 1
        cell_lines = cell.source.splitlines(keepends=True) or [""]
        for line, continues in zip(cell_lines, _continuations(cell_lines)):
            body = line.rstrip("\r\n")
            if not continues and IPYTHON_LINE.match(body):
                ipython[len(ipython)] = body
                indent = body[: len(body) - len(body.lstrip())]
                body = indent + PLACEHOLDER.format(index=len(ipython) - 1)
            lines.append(body + "\n")
        starts.append((cell.number, first, len(lines)))
    return "".join(lines), starts, ipython


def _continuations(lines: list[str]) -> list[bool]:
    """For each line, whether it continues a statement (inside brackets or a string, or after a
    backslash): `% b)` there is Python's modulo, not a magic. IPython lines themselves are not
    scanned (a `!echo "` must not open a string)."""
    result, depth, quote, backslash = [], 0, "", False
    for line in lines:
        continues = depth > 0 or bool(quote) or backslash
        result.append(continues)
        if not continues and IPYTHON_LINE.match(line.rstrip("\r\n")):
            continue
        index, backslash = 0, False
        while index < len(line):
            character = line[index]
            if quote:
                if character == "\\":
                    index += 2
                    continue
                if line.startswith(quote, index):
                    index += len(quote)
                    quote = ""
                    continue
                if len(quote) == 1 and character == "\n":
                    quote = ""  # an unterminated string: Python's error, not a continuation
            elif character == "#":
                break
            elif character in "([{":
                depth += 1
            elif character in ")]}":
                depth = max(0, depth - 1)
            elif character in "'\"":
                quote = line[index: index + 3] if line.startswith(character * 3, index) else character
                index += len(quote)
                continue
            index += 1
        backslash = line.rstrip("\r\n").endswith("\\") and not quote
    return result


def _segments(program: str) -> dict[int, str]:
    """The fixed program cut at the markers; text before the first marker joins the first cell."""
    segments: dict[int, list[str]] = {}
    current: int | None = None
    before: list[str] = []
    for line in program.splitlines(keepends=True):
        marker = MARKER_LINE.match(line.rstrip("\r\n"))
        if marker:
            current = int(marker[1])
            segments[current] = list(before) if not segments else []
            before = []
        elif current is None:
            before.append(line)
        else:
            segments[current].append(line)
    return {number: "".join(lines) for number, lines in segments.items()}


def _serialise_like(text: str, span: tuple[int, int], source: str) -> str:
    """The new source as JSON, written the way the old one was: a list of lines with the same
    indentation (nbformat's style), or one string; non-ASCII escaped only if the file escapes it."""
    old = text[span[0]: span[1]]
    ensure_ascii = "\\u" in text and not any(ord(character) > 127 for character in text)
    lines = source.splitlines(keepends=True)
    if not old.startswith("["):
        return json.dumps(source, ensure_ascii=ensure_ascii)
    if "\n" not in old:
        return "[" + ", ".join(json.dumps(line, ensure_ascii=ensure_ascii) for line in lines) + "]"
    item_indent = re.match(r"\[\s*?\n([ \t]*)", old)
    closing_indent = re.search(r"\n([ \t]*)\]$", old)
    line_start = text.rfind("\n", 0, span[0]) + 1
    key_indent = re.match(r"[ \t]*", text[line_start:])[0]
    inner = item_indent[1] if item_indent and old.strip("[] \t\r\n") else key_indent + " "
    closing = closing_indent[1] if closing_indent else key_indent
    if not lines:
        return "[]"
    return "[\n" + ",\n".join(inner + json.dumps(line, ensure_ascii=ensure_ascii) for line in lines) + "\n" + closing + "]"


def _source_spans(text: str) -> list[tuple[int, int] | None]:
    """For each element of the top-level `cells` list, the span of its `source` value."""
    decoder = json.JSONDecoder()
    index = _skip(text, 0)
    spans: list[tuple[int, int] | None] = []
    for key, start, _ in _members(text, index, decoder):
        if key == "cells":
            for element_start in _elements(text, start, decoder):
                source = None
                if text[element_start] == "{":
                    for cell_key, value_start, value_end in _members(text, element_start, decoder):
                        if cell_key == "source":
                            source = (value_start, value_end)
                spans.append(source)
    return spans


def _members(text: str, index: int, decoder: json.JSONDecoder):
    """(key, value start, value end) of each member of the object at `index`."""
    index = _skip(text, index + 1)
    while text[index] != "}":
        key, index = scanstring(text, index + 1)
        index = _skip(text, _skip(text, index) + 1)  # past the colon
        _, end = decoder.raw_decode(text, index)
        yield key, index, end
        index = _skip(text, end)
        if text[index] == ",":
            index = _skip(text, index + 1)


def _elements(text: str, index: int, decoder: json.JSONDecoder):
    """The start of each element of the list at `index`."""
    index = _skip(text, index + 1)
    while text[index] != "]":
        yield index
        _, end = decoder.raw_decode(text, index)
        index = _skip(text, end)
        if text[index] == ",":
            index = _skip(text, index + 1)


def _skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in _WHITESPACE:
        index += 1
    return index
