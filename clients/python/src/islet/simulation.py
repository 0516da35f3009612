"""One simulation (an isolated world, docs/API.md "Simulations") over REST, asyncio flavour."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
import re
from typing import Any

from ._dates import Instant, format_instant, parse_instant
from ._http import HTTP
from .mirror import AsyncMirror
from .scene import SceneText


@dataclass(frozen=True)
class Applied:
    """A committed batch: its revision and one result per command."""

    rev: int
    results: list[dict[str, Any]]


@dataclass(frozen=True)
class State:
    epoch: str
    rev: int
    path: str
    value: Any


@dataclass(frozen=True)
class Clock:
    mode: str
    now: datetime
    rate: float
    rev: int
    next_transition: datetime | None
    """The earliest instant at which the world changes by itself (a stale date, the 8-hour end,
    a widget entry…), or None when nothing is scheduled."""


@dataclass(frozen=True)
class Advanced:
    rev: int
    now: datetime
    transitions: int


_IDENTIFIER = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def path_segment(value: str, what: str) -> str:
    """`value` as one segment of a request path: an identifier of docs/API.md (1-128 of
    `A-Z a-z 0-9 . _ : -`), which needs no escaping, and not `.` or `..`. The server reads the
    path decoded and with dot segments resolved (libwebsockets does this before routing), so a
    `%2F` or `..` would reach another route: refused here, before any request is made."""
    if not isinstance(value, str) or not _IDENTIFIER.fullmatch(value) or value in (".", ".."):
        raise ValueError(f"{what} must be 1-128 characters of A-Z a-z 0-9 . _ : - (not . or ..), got {value!r}")
    return value


class AsyncSimulation:
    def __init__(self, http: HTTP, id: str) -> None:
        self.http = http
        self.id = path_segment(id, "a simulation id")
        self.prefix = "/v1" if id == "default" else f"/v1/simulations/{id}"

    async def commands(self, *commands: dict[str, Any]) -> Applied:
        """Applies the commands atomically as one revision (`POST …/commands`)."""
        reply = await self.http.call("POST", f"{self.prefix}/commands", {"commands": list(commands)})
        return Applied(reply["rev"], reply["results"])

    async def command(self, command: dict[str, Any]) -> dict[str, Any]:
        """One command; returns its result."""
        return (await self.commands(command)).results[0]

    async def state(self, path: str = "") -> State:
        reply = await self.http.call("GET", f"{self.prefix}/state", params={"path": path})
        return State(reply["epoch"], reply["rev"], reply["path"], reply["value"])

    async def get(self, path: str = "") -> Any:
        """The value at `path` in the state document (`IsletError` 404 when absent)."""
        return (await self.state(path)).value

    async def scene_text(self, device: str) -> SceneText:
        reply = await self.http.call("GET", f"{self.prefix}/devices/{path_segment(device, 'a device id')}/scene",
                                     params={"resolve": "text"})
        return SceneText(device, reply["rev"], reply["value"])

    async def clock(self) -> Clock:
        reply = await self.http.call("GET", f"{self.prefix}/clock")
        clock, following = reply["result"], reply.get("nextTransition")
        return Clock(clock["mode"], parse_instant(clock["now"]), clock["rate"], reply["rev"],
                     parse_instant(following) if following else None)

    async def set_clock(self, now: Instant | None = None, rate: float = 0, mode: str = "virtual") -> datetime:
        body: dict[str, Any] = {"mode": mode} if mode == "wall" else {"mode": mode, "rate": rate}
        if now is not None:
            body["now"] = format_instant(now)
        reply = await self.http.call("PUT", f"{self.prefix}/clock", body)
        return parse_instant(reply["result"]["now"])

    async def advance(self, by: float | timedelta | None = None, *, to: Instant | None = None) -> Advanced:
        """Moves the paused virtual clock `by` seconds (or `to` an instant), applying every
        scheduled transition on the way at its own instant."""
        if (by is None) == (to is None):
            raise ValueError("advance takes either `by` or `to`")
        seconds = by.total_seconds() if isinstance(by, timedelta) else by
        body = {"seconds": seconds} if to is None else {"to": format_instant(to)}
        reply = await self.http.call("POST", f"{self.prefix}/clock/advance", body)
        return Advanced(reply["rev"], parse_instant(reply["result"]["now"]), reply["result"]["transitions"])

    async def step_to_next_transition(self) -> Advanced | None:
        """Advances to the next scheduled transition, or returns None when nothing is scheduled."""
        following = (await self.clock()).next_transition
        return None if following is None else await self.advance(to=following)

    async def mirror(self, path: str = "", timeout: float = 5.0) -> AsyncMirror:
        """A live mirror of `path`, holding its snapshot when returned."""
        mirror = AsyncMirror(self.http.stream_url(), path, self.id, self.http.token, self.http.mirrors)
        return await mirror.start(timeout)

    async def fork(self, id: str | None = None, rev: int | None = None, at: Instant | None = None) -> "AsyncSimulation":
        """A new simulation copying this one at `rev` (default: latest), on a paused virtual
        clock at `at` when given."""
        source: dict[str, Any] = {"simulation": self.id} | ({"rev": rev} if rev is not None else {})
        body: dict[str, Any] = {"from": source} | ({"id": id} if id else {})
        if at is not None:
            body["clock"] = {"mode": "virtual", "now": format_instant(at), "rate": 0}
        reply = await self.http.call("POST", "/v1/simulations", body)
        return AsyncSimulation(self.http, reply["id"])

    async def delete(self) -> None:
        await self.http.call("DELETE", f"/v1/simulations/{self.id}")
