"""The REST side: one `httpx.AsyncClient` per server, JSON in and out, refusals as `IsletError`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx

from .errors import IsletError

if TYPE_CHECKING:
    from .mirror import AsyncMirror


class HTTP:
    def __init__(self, url: str, token: str | None, timeout: float) -> None:
        self.url = url.rstrip("/")
        self.token = token
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self.client = httpx.AsyncClient(base_url=self.url, headers=headers, timeout=timeout)
        self.mirrors: set[AsyncMirror] = set()
        """The mirrors opened through this connection and not closed yet: closed with it."""

    async def call(self, method: str, path: str, body: Any = None, params: dict[str, str] | None = None) -> Any:
        """Sends one request and returns its JSON body; a non-2xx reply raises `IsletError`."""
        reply = await self.client.request(method, path, json=body, params=params)
        data = reply.json() if reply.headers.get("content-type", "").startswith("application/json") else reply.text
        if reply.is_error:
            raise IsletError.from_reply(reply.status_code, data)
        return data

    def stream_url(self) -> str:
        return "ws" + self.url.removeprefix("http") + "/v1/stream"

    async def aclose(self) -> None:
        for mirror in list(self.mirrors):
            await mirror.aclose()
        await self.client.aclose()
