"""A webhook receiver for the tests: an ``http.server`` on 127.0.0.1 in a thread that checks every request's
signature the way docs/deployment.md tells receivers to."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOLERANCE_SECONDS = 300


class Receiver:
    """An HTTP receiver on 127.0.0.1 that verifies every request's signature the way the docs tell receivers to."""

    def __init__(self) -> None:
        self.secret = ""
        self.statuses: list[int] = []  # answers to give, in order; 200 once they run out
        self.received: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append({"headers": dict(self.headers), "body": body,
                                          "verified": receiver.verify(self.headers["X-Goldset-Signature"], body)})
                self.send_response(receiver.statuses.pop(0) if receiver.statuses else 200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/goldset"

    def verify(self, header: str, body: bytes) -> bool:
        parts = dict(part.split("=", 1) for part in header.split(","))
        timestamp = int(parts["t"])
        expected = hmac.new(self.secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected, parts["v1"]) and abs(time.time() - timestamp) < TOLERANCE_SECONDS

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(r["body"]) for r in self.received]


@contextmanager
def running_receiver() -> Iterator[Receiver]:
    """A receiver serving in a thread for the ``with`` block."""
    found = Receiver()
    thread = threading.Thread(target=found.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        found.server.shutdown()
        found.server.server_close()
