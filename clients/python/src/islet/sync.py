"""The blocking API: the asyncio implementation run on a private event loop thread, so there is
one implementation of every operation and the two flavours cannot disagree."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

from ._dates import Instant
from .client import AsyncIslet
from .mirror import AsyncMirror, Predicate
from .simulation import AsyncSimulation

P = ParamSpec("P")
T = TypeVar("T")


class _Loop:
    """An event loop on a daemon thread; `run` blocks the caller until a coroutine finishes."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="islet-client", daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        if threading.current_thread() is self.thread:
            coroutine.close()
            raise RuntimeError(
                "a blocking Islet call on the client's own event loop (a wait_for predicate runs there, on "
                "every revision): the predicate should read the mirror's value, not make requests")
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


def _blocking(method: Callable[Concatenate[Any, P], Awaitable[T]]) -> Callable[Concatenate[Any, P], T]:
    """The blocking twin of an async method of the wrapped object (`self._inner`)."""

    def run(owner: Any, /, *args: P.args, **kwargs: P.kwargs) -> T:
        async def call() -> T:
            return await method(owner._inner, *args, **kwargs)

        loop: _Loop = owner._loop
        return loop.run(call())

    run.__name__ = method.__name__
    run.__doc__ = method.__doc__
    return run


class Mirror:
    """A live mirror of one path (see `AsyncMirror`); `value` and `rev` are always current."""

    def __init__(self, loop: _Loop, inner: AsyncMirror) -> None:
        self._loop = loop
        self._inner = inner

    @property
    def value(self) -> Any:
        return self._inner.value

    @property
    def rev(self) -> int:
        return self._inner.rev

    def wait_for(self, predicate: Predicate, timeout: float = 5.0, what: str | None = None) -> Any:
        """Blocks until `predicate(value)` holds (checked on every revision, see `AsyncMirror.wait_for`)."""
        return self._loop.run(self._inner.wait_for(predicate, timeout, what))

    sync = _blocking(AsyncMirror.sync)
    close = _blocking(AsyncMirror.aclose)

    def __enter__(self) -> "Mirror":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Simulation:
    """One simulation, blocking (see `AsyncSimulation` for each method)."""

    def __init__(self, loop: _Loop, inner: AsyncSimulation) -> None:
        self._loop = loop
        self._inner = inner

    @property
    def id(self) -> str:
        return self._inner.id

    commands = _blocking(AsyncSimulation.commands)
    command = _blocking(AsyncSimulation.command)
    state = _blocking(AsyncSimulation.state)
    get = _blocking(AsyncSimulation.get)
    scene_text = _blocking(AsyncSimulation.scene_text)
    clock = _blocking(AsyncSimulation.clock)
    set_clock = _blocking(AsyncSimulation.set_clock)
    advance = _blocking(AsyncSimulation.advance)
    step_to_next_transition = _blocking(AsyncSimulation.step_to_next_transition)
    delete = _blocking(AsyncSimulation.delete)

    def mirror(self, path: str = "", timeout: float = 5.0) -> Mirror:
        return Mirror(self._loop, self._loop.run(self._inner.mirror(path, timeout)))

    def fork(self, id: str | None = None, rev: int | None = None, at: Instant | None = None) -> "Simulation":
        return Simulation(self._loop, self._loop.run(self._inner.fork(id, rev, at)))


class Islet:
    """A blocking connection to one server: `Islet(url, token=…)`, then `close()` (or `with`)."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 10.0) -> None:
        self._loop = _Loop()
        self._inner = self._loop.run(self._open(url, token, timeout))

    @staticmethod
    async def _open(url: str, token: str | None, timeout: float) -> AsyncIslet:
        return AsyncIslet(url, token, timeout)  # made on the loop that will use it

    @property
    def url(self) -> str:
        return self._inner.url

    def simulation(self, id: str = "default") -> Simulation:
        return Simulation(self._loop, self._inner.simulation(id))

    def create_simulation(self, id: str | None = None, at: Instant | None = None, rate: float = 0,
                          demo: bool = False) -> Simulation:
        return Simulation(self._loop, self._loop.run(self._inner.create_simulation(id, at, rate, demo)))

    simulations = _blocking(AsyncIslet.simulations)

    def close(self) -> None:
        self._loop.run(self._inner.aclose())
        self._loop.stop()

    def __enter__(self) -> "Islet":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
