"""PII out of error messages about imported records.

A validation message may quote the record ("'…' does not match the context, which holds '…'"), and an import's
errors are stored on its job, shown on pages and printed by the command — before the record was ever
pseudonymized. Every value the detectors find in the record (with its context, so an account number next to its
bank counts) or in the message itself is replaced by its type's placeholder, whatever the import's policy: an
error message is never part of the corpus.
"""

from __future__ import annotations

from typing import Any

from .apply import string_leaves
from .detectors import LABELS_KO, detect


def redact_message(message: str, record: Any = None) -> str:
    """``message`` with every PII value of ``record`` (any JSON-like value) and of the message replaced."""
    found = {f.value: f.type for text in (*(text for _, text in string_leaves(record)), message) for f in detect(text)}
    for value in sorted(found, key=len, reverse=True):  # longest first: a value may contain another
        message = message.replace(value, f"[{LABELS_KO[found[value]]}]")
    return message
