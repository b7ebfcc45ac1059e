"""Freed memory handed back to the system.

glibc's allocator keeps what a process freed for its own reuse, so a Celery worker that ran one large
import would otherwise hold the import's peak for good — and a release built next in the same worker
starts from there. ``malloc_trim`` returns the free pages; elsewhere (musl, macOS) it is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util


def trim() -> None:
    """Return freed heap memory to the system."""
    name = ctypes.util.find_library("c")
    malloc_trim = getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    if malloc_trim is not None:
        malloc_trim(0)
