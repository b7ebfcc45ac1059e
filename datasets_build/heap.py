"""The importing process's memory: its long-lived objects kept out of the import's garbage collections, and
freed memory handed back to the system when the import ends.

glibc's allocator keeps what a process freed for its own reuse, so a Celery worker that ran one large
import would otherwise hold the import's peak for good — and a release built next in the same worker
starts from there. ``malloc_trim`` returns the free pages; elsewhere (musl, macOS) it is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Iterator
from contextlib import contextmanager


def trim() -> None:
    """Return freed heap memory to the system."""
    name = ctypes.util.find_library("c")
    malloc_trim = getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    if malloc_trim is not None:
        malloc_trim(0)


@contextmanager
def long_lived_objects_frozen() -> Iterator[None]:
    """Keep the objects the process held before the import (Django, Celery, the task registry, lexicons:
    hundreds of thousands) out of the garbage collector's passes until it ends. The import promotes many
    short-lived records to the oldest generation, and every full collection then rescanned all of those
    objects too: it cost the importer a quarter of its CPU (docs/performance.md). The worker processes,
    forked inside, inherit the frozen objects. Unfrozen afterwards, so whatever of them became garbage is
    collected as usual — unless they were frozen before (by the process's own start-up), which stays."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
