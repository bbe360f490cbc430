"""`[tool.devfix]` in pyproject.toml → a frozen Settings; command-line options override it."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

MAX_FILE_BYTES = 5 * 1024 * 1024

KNOWN_KEYS = {"select", "ignore", "exclude", "unsafe-fixes", "max-file-bytes", "jobs"}


class ConfigError(ValueError):
    """A configuration that devfix refuses to guess about."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    unsafe_fixes: bool = False
    max_file_bytes: int = MAX_FILE_BYTES
    jobs: int | None = None
    config_file: Path | None = field(default=None, compare=False)

    def with_overrides(self, **overrides: object) -> Settings:
        """Command-line values win where they were given (None means not given)."""
        given = {key: value for key, value in overrides.items() if value not in (None, ())}
        return replace(self, **given)


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.devfix] table, looking upward from `start`."""
    directory = start if start.is_dir() else start.parent
    for candidate_dir in (directory.resolve(), *directory.resolve().parents):
        candidate = candidate_dir / "pyproject.toml"
        if candidate.is_file() and "devfix" in _read_toml(candidate).get("tool", {}):
            return candidate
    return None


def load_settings(start: Path) -> Settings:
    pyproject = find_pyproject(start)
    if pyproject is None:
        return Settings()
    table = _read_toml(pyproject)["tool"]["devfix"]
    unknown = set(table) - KNOWN_KEYS
    if unknown:
        raise ConfigError(f"{pyproject}: unknown key(s) in [tool.devfix]: {', '.join(sorted(unknown))}")
    return Settings(
        select=_codes(table, "select", pyproject),
        ignore=_codes(table, "ignore", pyproject),
        exclude=_strings(table, "exclude", pyproject),
        unsafe_fixes=bool(table.get("unsafe-fixes", False)),
        max_file_bytes=int(table.get("max-file-bytes", MAX_FILE_BYTES)),
        jobs=table.get("jobs"),
        config_file=pyproject,
    )


def _read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from error


def _strings(table: dict, key: str, path: Path) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path}: [tool.devfix] {key} must be a list of strings")
    return tuple(value)


def _codes(table: dict, key: str, path: Path) -> tuple[str, ...]:
    return tuple(code.strip().upper() for code in _strings(table, key, path))
