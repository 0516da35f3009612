"""The errors a harness sees: refusals in docs/API.md's error shape, and waits that ran out."""

from __future__ import annotations

from typing import Any


class IsletError(Exception):
    """The server refused a request: its HTTP status and the body's `code`, `message` and `field`
    (a JSON Pointer into the request body, when one applies)."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        where = f" at {field}" if field else ""
        super().__init__(f"{status} {code}{where}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.field = field

    @classmethod
    def from_reply(cls, status: int, body: Any) -> "IsletError":
        """Reads `{"error": {"code", "message", "field"?}}`; anything else (a proxy's page) keeps
        its text, so a misrouted request still says what came back."""
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            return cls(status, str(error.get("code")), str(error.get("message")), error.get("field"))
        return cls(status, "unexpected_reply", str(body)[:500])


class IsletTimeout(AssertionError, TimeoutError):
    """A `wait_for` whose condition never held. It is an `AssertionError` so pytest reports it as
    a failed expectation, with the last value seen in the message."""
