"""RFC 3339 instants as Islet writes them (UTC, `Z`), to and from `datetime`."""

from __future__ import annotations

from datetime import datetime, timezone

Instant = datetime | str
"""An instant a caller may pass: an aware `datetime`, or RFC 3339 text sent as it is."""


def format_instant(value: Instant) -> str:
    if isinstance(value, str):
        return value
    if value.tzinfo is None:
        raise ValueError(f"{value!r} has no time zone; Islet's instants are UTC")
    text = value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    return text


def parse_instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
