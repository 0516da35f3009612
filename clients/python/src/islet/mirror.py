"""A live mirror of one subscription: the server's snapshot, then every patch of the stream
applied in order with `jsonpatch` (RFC 6902), so `value` is what `GET /v1/state?path=…` returns
at `rev`. Waiting is on revisions as they arrive, never on a timer."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any, Callable

import jsonpatch
from websockets.asyncio.client import ClientConnection, connect

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
        if kind == "patch" and self.synced and message["rev"] > self.rev:
            self.value = self.apply(self.value, message["ops"])
            self.rev = message["rev"]
            return True
        if kind == "resync":
            self.synced = False
        return False

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
    """One WebSocket (`islet.v1`) holding one subscription. Use `async with` or `aclose()`."""

    _ids = itertools.count(1)

    def __init__(self, stream_url: str, path: str, simulation: str, token: str | None) -> None:
        self.state = MirrorState(path)
        self.simulation = simulation
        self._url = stream_url
        self._token = token
        self._changed = asyncio.Condition()
        self._pongs: dict[str, asyncio.Future[None]] = {}
        self._socket: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None

    @property
    def value(self) -> Any:
        return self.state.value

    @property
    def rev(self) -> int:
        return self.state.rev

    async def start(self, timeout: float) -> "AsyncMirror":
        """Connects, subscribes and waits for the snapshot."""
        headers = {"authorization": f"Bearer {self._token}"} if self._token else {}
        self._socket = await connect(self._url, subprotocols=["islet.v1"], additional_headers=headers)  # type: ignore[list-item]
        subscribe: dict[str, Any] = {"op": "subscribe", "id": "mirror", "path": self.state.path}
        if self.simulation != "default":
            subscribe["simulation"] = self.simulation
        await self._socket.send(json.dumps(subscribe))
        self._reader = asyncio.create_task(self._read())
        await self.wait_for(lambda _: self.state.synced, timeout, what="the snapshot")
        return self

    async def _read(self) -> None:
        assert self._socket is not None
        try:
            async for text in self._socket:
                message = json.loads(text)
                if message.get("type") == "pong":
                    waiter = self._pongs.pop(str(message.get("id")), None)
                    if waiter and not waiter.done():
                        waiter.set_result(None)
                elif message.get("type") == "error":
                    error = message.get("error", {})
                    raise IsletError(0, error.get("code", "error"), error.get("message", ""), error.get("field"))
                elif self.state.receive(message):
                    async with self._changed:
                        self._changed.notify_all()
        except BaseException as failure:  # the waiters report it rather than time out
            self._failure = failure
            async with self._changed:
                self._changed.notify_all()
            if not isinstance(failure, Exception):
                raise

    async def wait_for(self, predicate: Predicate, timeout: float = 5.0, what: str | None = None) -> Any:
        """Returns the value once `predicate(value)` is true: checked now and after every revision
        the mirror receives. Raises `IsletTimeout` (with the last value) after `timeout` seconds."""

        def ready() -> bool:
            return self._failure is not None or (self.state.synced and bool(predicate(self.state.value)))

        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(ready), timeout)
            except TimeoutError:
                shown = json.dumps(self.state.value, sort_keys=True)[:2000]
                condition = what or getattr(predicate, "__name__", "the condition")
                raise IsletTimeout(
                    f"{condition} did not hold within {timeout} s at {self.state.path or '/'} "
                    f"(rev {self.state.rev}); last value: {shown}") from None
        if self._failure is not None:
            raise IsletError(0, "stream_closed", f"the mirror's stream ended: {self._failure!r}")
        return self.state.value

    async def sync(self, timeout: float = 5.0) -> Any:
        """Returns once the mirror holds every revision published before this call (a ping's
        pong follows the patches queued before it on the same connection)."""
        assert self._socket is not None
        ping = str(next(self._ids))
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pongs[ping] = waiter
        await self._socket.send(json.dumps({"op": "ping", "id": ping}))
        try:
            await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            raise IsletTimeout(f"no pong within {timeout} s") from None
        return self.state.value

    async def aclose(self) -> None:
        if self._socket is not None:
            await self._socket.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)

    async def __aenter__(self) -> "AsyncMirror":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
