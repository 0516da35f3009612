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

    @classmethod
    def from_stream(cls, error: Any) -> "IsletError":
        """An `error` message of the stream: the status is the one docs/API.md gives its code."""
        body = error if isinstance(error, dict) else {}
        code = str(body.get("code", "error"))
        return cls(STATUS.get(code, 0), code, str(body.get("message", "")), body.get("field"))


STATUS = {
    "invalid_json": 400, "invalid_argument": 400, "unauthorized": 401, "forbidden": 403, "not_found": 404,
    "method_not_allowed": 405, "conflict": 409, "payload_too_large": 413, "unsupported_media_type": 415,
    "limit_exceeded": 422, "rate_limited": 429, "internal": 500, "unavailable": 503,
}
"""Each error code's HTTP status (docs/API.md, "Errors and HTTP statuses"): a stream's errors
carry no status of their own."""


class IsletTimeout(AssertionError, TimeoutError):
    """A `wait_for` whose condition never held. It is an `AssertionError` so pytest reports it as
    a failed expectation, with the last value seen in the message."""
