"""The command line, ``toolform-rules``: :func:`main` parses the arguments and runs one command.

The commands are in :mod:`.commands` (``demo`` in :mod:`.demo`), the argument parser in :mod:`.parser`,
what a command reads in :mod:`.inputs` and what it prints in :mod:`.render`.
"""

from __future__ import annotations

from .app import main

__all__ = ["main"]
