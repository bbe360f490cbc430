"""Renderers of findings: one module a format, all fed the same FileResults."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from devfix.findings import FileResult
from devfix.output import github, json_format, text

Renderer = Callable[[Sequence[FileResult], bool], str]

RENDERERS: dict[str, Renderer] = {
    "text": text.render,
    "json": json_format.render,
    "github": github.render,
}
