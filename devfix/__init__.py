"""devfix: find and fix PyTorch device-placement bugs in source code."""

__version__ = "0.1.0"
