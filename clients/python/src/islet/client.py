"""A connection to one Islet server (asyncio): its simulations, created, listed and deleted."""

from __future__ import annotations

from typing import Any

from ._dates import Instant, format_instant
from ._http import HTTP
from .simulation import AsyncSimulation


class AsyncIslet:
    """`AsyncIslet("http://127.0.0.1:8080", token=…)`; `await aclose()` (or `async with`) at the end."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 10.0) -> None:
        self.http = HTTP(url, token, timeout)

    @property
    def url(self) -> str:
        return self.http.url

    def simulation(self, id: str = "default") -> AsyncSimulation:
        """An existing simulation (no request is made)."""
        return AsyncSimulation(self.http, id)

    async def create_simulation(self, id: str | None = None, at: Instant | None = None, rate: float = 0,
                                demo: bool = False) -> AsyncSimulation:
        """A new, empty world; on a virtual clock at `at` (paused unless `rate`) when given."""
        body: dict[str, Any] = {"demo": demo}
        if id is not None:
            body["id"] = id
        if at is not None:
            body["clock"] = {"mode": "virtual", "now": format_instant(at), "rate": rate}
        reply = await self.http.call("POST", "/v1/simulations", body)
        return AsyncSimulation(self.http, reply["id"])

    async def simulations(self) -> list[dict[str, Any]]:
        return list((await self.http.call("GET", "/v1/simulations"))["simulations"])

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> "AsyncIslet":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
