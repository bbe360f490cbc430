"""Configuration as ruff does it: `[tool.devfix]` in the nearest `pyproject.toml` of each file (a
nested project's settings apply to its files), or one file given with `--config`, or none with
`--isolated`; the command line's options go on top."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

MAX_FILE_BYTES = 5 * 1024 * 1024
FILE_TIMEOUT = 60  # seconds of analysis per file; a 500 kB module with a finding takes ~30 s
FILE_MEMORY_LIMIT = 4096  # MiB of address space per worker process; that module needs ~1 GiB
MIN_FILE_MEMORY_LIMIT = 512  # below it, a worker cannot even load libcst's native parser

KNOWN_KEYS = {
    "select", "extend-select", "ignore", "extend-ignore", "per-file-ignores",
    "exclude", "unsafe-fixes", "max-file-bytes", "jobs", "device-idiom",
    "file-timeout", "file-memory-limit",
}


class ConfigError(ValueError):
    """A configuration that devfix refuses to guess about."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ()  # empty: every rule
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (pattern, codes), relative to `root`
    exclude: tuple[str, ...] = ()
    unsafe_fixes: bool = False
    max_file_bytes: int = MAX_FILE_BYTES
    file_timeout: int = FILE_TIMEOUT
    file_memory_limit: int = FILE_MEMORY_LIMIT
    jobs: int | None = None
    device_idiom: str = "cuda"  # the form of the `device = ...` preamble fixes add (`fix_policy.DEVICE_IDIOMS`)
    config_file: Path | None = field(default=None, compare=False)

    @property
    def root(self) -> Path:
        """Where the file's relative patterns start: the configuration file's folder."""
        return self.config_file.parent if self.config_file is not None else Path.cwd()

    def with_command_line(self, select=(), extend_select=(), ignore=(), unsafe_fixes=None, jobs=None) -> Settings:
        """ruff's layering: `--select` replaces the file's selection (its `extend-select` too),
        `--extend-select` and `--ignore` add to the file's lists."""
        settings = replace(self, select=tuple(select), extend_select=()) if select else self
        return replace(
            settings,
            extend_select=settings.extend_select + tuple(extend_select),
            ignore=settings.ignore + tuple(ignore),
            unsafe_fixes=settings.unsafe_fixes if unsafe_fixes is None else unsafe_fixes,
            jobs=settings.jobs if jobs is None else jobs,
        )

    def selection(self, path: Path | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(select, ignore) for one file: `extend-select` widens an explicit selection (with none,
        every rule is on already) and `per-file-ignores` adds the codes of the patterns it matches."""
        select = self.select + self.extend_select if self.select else ()
        ignore = self.ignore
        if path is not None:
            ignore += tuple(code for pattern, codes in self.per_file_ignores if _matches(path, pattern, self.root) for code in codes)
        return select, ignore

    def excludes(self, path: Path) -> bool:
        """The file is under this configuration's `exclude` patterns (relative to its folder)."""
        return bool(self.exclude) and any(_matches(path, pattern, self.root) for pattern in self.exclude)


def _matches(path: Path, pattern: str, root: Path) -> bool:
    """A gitignore-style pattern against the path from `root`, or against the file's name alone."""
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines([pattern])
    try:
        relative = path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        relative = path.as_posix()
    return spec.match_file(relative) or spec.match_file(path.name)


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.devfix] table, looking upward from `start`."""
    directory = start if start.is_dir() else start.parent
    for candidate_dir in (directory.resolve(), *directory.resolve().parents):
        candidate = candidate_dir / "pyproject.toml"
        if candidate.is_file() and "devfix" in _read_toml(candidate).get("tool", {}):
            return candidate
    return None


def load_settings(start: Path) -> Settings:
    """The settings of the nearest configuration above `start`, or the defaults."""
    pyproject = find_pyproject(start)
    return Settings() if pyproject is None else load_config_file(pyproject)


def load_config_file(path: Path) -> Settings:
    """A pyproject.toml's `[tool.devfix]`, or a devfix.toml whose top level is that table."""
    document = _read_toml(path)
    table = document.get("tool", {}).get("devfix") if path.name == "pyproject.toml" or "tool" in document else document
    if table is None:
        raise ConfigError(f"{path}: no [tool.devfix] table")
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) in [tool.devfix]: {', '.join(_with_suggestion(key) for key in unknown)}")
    return Settings(
        select=_codes(table, "select", path),
        extend_select=_codes(table, "extend-select", path),
        ignore=_codes(table, "ignore", path) + _codes(table, "extend-ignore", path),
        per_file_ignores=_per_file_ignores(table, path),
        exclude=_strings(table, "exclude", path),
        unsafe_fixes=_boolean(table, "unsafe-fixes", path),
        max_file_bytes=_positive(table, "max-file-bytes", path, MAX_FILE_BYTES),
        file_timeout=_positive(table, "file-timeout", path, FILE_TIMEOUT),
        file_memory_limit=_at_least(table, "file-memory-limit", path, FILE_MEMORY_LIMIT, MIN_FILE_MEMORY_LIMIT),
        jobs=_positive(table, "jobs", path, None),
        device_idiom=_choice(table, "device-idiom", path),
        config_file=path,
    )


def _with_suggestion(key: str) -> str:
    import difflib

    close = difflib.get_close_matches(key, sorted(KNOWN_KEYS), n=1)
    return f"{key} (did you mean {close[0]}?)" if close else key


class SettingsResolver:
    """The settings of each file: those of `--config` for all, the defaults with `isolated`, or the
    nearest pyproject.toml's (read once per folder); the command line's options on top."""

    def __init__(self, config: Path | None = None, isolated: bool = False, **command_line: object) -> None:
        self.isolated = isolated
        self.command_line = command_line
        self.given = None if config is None else load_config_file(config)
        self._by_folder: dict[Path | None, Settings] = {}

    def for_path(self, path: Path) -> Settings:
        if self.given is not None or self.isolated:
            return self._one()
        folder = path if path.is_dir() else path.parent  # memoised as spelled: resolving costs more than the lookup
        if folder not in self._by_folder:
            self._by_folder[folder] = load_settings(folder.resolve()).with_command_line(**self.command_line)
        return self._by_folder[folder]

    def _one(self) -> Settings:
        """The settings of every file: `--config`'s, or the defaults with `--isolated`."""
        if None not in self._by_folder:
            self._by_folder[None] = (self.given or Settings()).with_command_line(**self.command_line)
        return self._by_folder[None]


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


def _per_file_ignores(table: dict, path: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    value = table.get("per-file-ignores", {})
    if not isinstance(value, dict):
        raise ConfigError(f'{path}: [tool.devfix] per-file-ignores must be a table of patterns to code lists, like {{"tests/*" = ["DF001"]}}')
    return tuple((pattern, _codes(value, pattern, path)) for pattern in value)


def _choice(table: dict, key: str, path: Path) -> str:
    from devfix.fix_policy import DEVICE_IDIOMS

    value = table.get(key, DEVICE_IDIOMS[0])
    if value not in DEVICE_IDIOMS:
        raise ConfigError(f"{path}: [tool.devfix] {key} must be one of {', '.join(map(repr, DEVICE_IDIOMS))}, not {value!r}")
    return value


def _boolean(table: dict, key: str, path: Path) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f"{path}: [tool.devfix] {key} must be true or false, not {value!r}")
    return value


def _positive(table: dict, key: str, path: Path, default: int | None) -> int | None:
    value = table.get(key, default)
    if value is not default and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ConfigError(f"{path}: [tool.devfix] {key} must be a whole number above 0, not {value!r}")
    return value


def _at_least(table: dict, key: str, path: Path, default: int, minimum: int) -> int:
    value = _positive(table, key, path, default)
    if value < minimum:
        raise ConfigError(f"{path}: [tool.devfix] {key} must be at least {minimum}, not {value!r}")
    return value
