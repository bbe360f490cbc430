"""devfix: find and fix PyTorch device-placement bugs in source code.

The library API (`devfix.check_source`, `devfix.fix_source`, `devfix.SourceResult`,
`devfix.SourceError`) lives in `devfix.api` and is imported on first use, so that `devfix
--version` and a pre-commit run start without it.
"""

__version__ = "0.1.0"

__all__ = ["SourceError", "SourceResult", "__version__", "check_source", "fix_source"]


def __getattr__(name: str):
    if name in ("check_source", "fix_source", "SourceResult", "SourceError"):
        from devfix import api

        return getattr(api, name)
    raise AttributeError(f"module 'devfix' has no attribute {name!r}")
