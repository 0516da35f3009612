"""A live mirror of one subscription: the server's snapshot, then every patch of the stream
applied in order with `jsonpatch` (RFC 6902), so `value` is what `GET /v1/state?path=…` returns
at `rev`. Waiting is on revisions as they arrive, never on a timer."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
from typing import Any, Callable

import jsonpatch
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from .errors import IsletError, IsletTimeout

Predicate = Callable[[Any], object]


class MirrorState:
    """The pure half of a mirror: takes stream messages, keeps the subscription's value.

    The server narrows each patch to the connection's subscriptions and writes paths from the
    document's root (docs/API.md, "The stream"), so each operation is made relative to the
    subscription's path; one at the path itself replaces (or removes) the whole value."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.value: Any = None
        self.rev = 0
        self.epoch: str | None = None
        self.synced = False

    def receive(self, message: dict[str, Any]) -> bool:
        """Applies a `snapshot` or `patch`; returns whether the value may have changed."""
        kind = message.get("type")
        if kind == "snapshot":
            self.value, self.rev, self.epoch, self.synced = message["value"], message["rev"], message["epoch"], True
            return True
        if kind == "patch" and self.synced and message["rev"] > self.rev and not self.through_array_element:
            self.value = self.apply(self.value, message["ops"])
            self.rev = message["rev"]
            return True
        if kind == "resync":
            self.synced = False
        return False

    @property
    def through_array_element(self) -> bool:
        """Whether the path goes through an array element (a token such as `0`): such a
        subscription takes no operations from patches, only its snapshots (reason
        `array_element`), since an element's index shifts as its array changes."""
        return any(re.fullmatch(r"0|[1-9][0-9]{0,14}", token) for token in self.path.split("/")[1:])

    def apply(self, value: Any, ops: list[dict[str, Any]]) -> Any:
        for op in ops:
            relative = self.relative(op["path"])
            if relative is None:
                continue
            if relative == "" and op["op"] in ("add", "replace", "remove"):
                value = None if op["op"] == "remove" else op["value"]
                continue
            local = {**op, "path": relative}
            if "from" in op:
                local["from"] = self.relative(op["from"])
            value = jsonpatch.apply_patch(value, [local])
        return value

    def relative(self, pointer: str) -> str | None:
        """`pointer` relative to the subscription's path, or None when it is elsewhere."""
        if pointer == self.path:
            return ""
        if self.path == "" or pointer.startswith(self.path + "/"):
            return pointer[len(self.path):]
        return None


class AsyncMirror:
    """One WebSocket (`islet.v1`) holding one subscription. Use `async with` or `aclose()`.

    Waiters' predicates are checked by the reader on every revision it applies, before it reads
    the next message, so a state that lasts one revision is seen however fast the next follows.
    A stream that ends (the simulation deleted, the server gone, `aclose()`) or an `error` for the
    subscription fails every waiter at once with `IsletError` instead of letting it time out."""

    _ids = itertools.count(1)

    def __init__(self, stream_url: str, path: str, simulation: str, token: str | None,
                 registry: set["AsyncMirror"] | None = None) -> None:
        self.state = MirrorState(path)
        self.simulation = simulation
        self._url = stream_url
        self._token = token
        self._registry = registry if registry is not None else set()
        self._waiters: list[tuple[Predicate, asyncio.Future[Any]]] = []
        self._pongs: dict[str, asyncio.Future[None]] = {}
        self._socket: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._failure: IsletError | None = None
        self._deleted = False

    @property
    def value(self) -> Any:
        return self.state.value

    @property
    def rev(self) -> int:
        return self.state.rev

    async def start(self, timeout: float) -> "AsyncMirror":
        """Connects, subscribes and waits for the snapshot; a refusal raises the server's error
        (`IsletError` with its code, field and status) and leaves no connection open."""
        headers = {"authorization": f"Bearer {self._token}"} if self._token else {}
        self._socket = await connect(self._url, subprotocols=["islet.v1"], additional_headers=headers)  # type: ignore[list-item]
        self._registry.add(self)
        self._reader = asyncio.create_task(self._read())
        subscribe: dict[str, Any] = {"op": "subscribe", "id": "mirror", "path": self.state.path}
        if self.simulation != "default":
            subscribe["simulation"] = self.simulation
        try:
            with contextlib.suppress(ConnectionClosed):  # refused before it was read: the reader says why
                await self._socket.send(json.dumps(subscribe))
            await self.wait_for(lambda _: True, timeout, what="the snapshot")
        except BaseException:
            await self.aclose()
            raise
        return self

    async def _read(self) -> None:
        assert self._socket is not None
        try:
            async for text in self._socket:
                self.receive(json.loads(text))
            self._fail(self._ended(self._socket.close_code, self._socket.close_reason))
        except ConnectionClosed as closed:
            received = closed.rcvd
            self._fail(self._ended(received.code if received else None, received.reason if received else ""))
        except Exception as failure:
            self._fail(IsletError(0, "stream_closed", f"the mirror's stream failed: {failure!r}"))

    def receive(self, message: dict[str, Any]) -> None:
        """Takes one stream message: applies it, then checks every waiter against the new value."""
        kind = message.get("type")
        if kind == "pong":
            waiter = self._pongs.pop(str(message.get("id")), None)
            if waiter and not waiter.done():
                waiter.set_result(None)
        elif kind == "error":
            self._fail(IsletError.from_stream(message.get("error")))
        elif kind == "resync" and message.get("reason") == "deleted":
            self._deleted = True
            self.state.receive(message)
        elif self.state.receive(message):
            self._check()

    def _check(self) -> None:
        if not self.state.synced:
            return
        for predicate, future in self._waiters:
            if future.done():
                continue
            try:
                if predicate(self.state.value):
                    future.set_result(self.state.value)
            except Exception as failure:
                future.set_exception(failure)

    def _ended(self, code: int | None, reason: str | None) -> IsletError:
        if self._deleted:
            return IsletError(404, "not_found", f"simulation {self.simulation!r} was deleted")
        return IsletError(0, "stream_closed", f"the mirror's stream closed ({code} {reason or ''})".replace(" )", ")"))

    def _fail(self, failure: IsletError) -> None:
        """Ends the mirror: the first failure stays; every waiter and ping gets it now."""
        if self._failure is None:
            self._failure = failure
        for future in [*(future for _, future in self._waiters), *self._pongs.values()]:
            if not future.done():
                future.set_exception(self._raised())
        self._pongs.clear()

    def _raised(self) -> IsletError:
        failure = self._failure or IsletError(0, "stream_closed", "the mirror's stream ended")
        return IsletError(failure.status, failure.code, failure.message, failure.field)

    async def wait_for(self, predicate: Predicate, timeout: float = 5.0, what: str | None = None) -> Any:
        """Returns the value once `predicate(value)` is true: checked now and after every revision
        the mirror receives (the value it held then). Raises `IsletTimeout` (with the last value)
        after `timeout` seconds, `IsletError` at once when the stream ends."""
        if self._failure is not None:
            raise self._raised()
        if self.state.synced and predicate(self.state.value):
            return self.state.value
        entry: tuple[Predicate, asyncio.Future[Any]] = (predicate, asyncio.get_running_loop().create_future())
        self._waiters.append(entry)
        try:
            return await asyncio.wait_for(entry[1], timeout)
        except asyncio.TimeoutError:  # not the builtin before Python 3.11
            shown = json.dumps(self.state.value, sort_keys=True)[:2000]
            condition = what or getattr(predicate, "__name__", "the condition")
            raise IsletTimeout(
                f"{condition} did not hold within {timeout} s at {self.state.path or '/'} "
                f"(rev {self.state.rev}); last value: {shown}") from None
        finally:
            self._waiters.remove(entry)

    async def sync(self, timeout: float = 5.0) -> Any:
        """Returns once the mirror holds every revision published before this call (a ping's
        pong follows the patches queued before it on the same connection)."""
        assert self._socket is not None
        if self._failure is not None:
            raise self._raised()
        ping = str(next(self._ids))
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pongs[ping] = waiter
        try:
            await self._socket.send(json.dumps({"op": "ping", "id": ping}))
            await asyncio.wait_for(waiter, timeout)
        except ConnectionClosed:
            await asyncio.gather(*(task for task in [self._reader] if task), return_exceptions=True)
            raise self._raised() from None
        except asyncio.TimeoutError:
            raise IsletTimeout(f"no pong within {timeout} s") from None
        finally:
            self._pongs.pop(ping, None)
        return self.state.value

    async def aclose(self) -> None:
        self._registry.discard(self)
        if self._socket is not None:
            await self._socket.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)

    async def __aenter__(self) -> "AsyncMirror":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
