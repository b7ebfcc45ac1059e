"""The error every service raises for a request it cannot carry out."""

from __future__ import annotations


class ServiceError(Exception):
    """A request that cannot be carried out; ``code`` lets the API choose the status."""

    def __init__(self, message: str, *, code: str = "invalid", field: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.field = field
