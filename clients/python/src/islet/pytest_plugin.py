"""The pytest plugin: an Islet server per session, a fresh simulation per test, a marker pinning
its virtual start instant, and failure reports that show what each device displays.

Fixtures: `islet_server` (the server's URL: `$ISLET_URL`, else `islet serve --port 0 --db
:memory:` started once), `islet` (a blocking client), `simulation` (a new world on a paused
virtual clock, deleted after the test). Marker: `@pytest.mark.islet_clock("2026-01-01T08:00:00Z",
rate=0)`."""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from typing import Any

import httpx
import pytest

from .errors import IsletError
from .process import ServerProcess
from .sync import Islet, Simulation

DEFAULT_START = "2026-01-01T08:00:00Z"
"""Where a test's virtual clock starts unless its `islet_clock` marker says otherwise."""

SIMULATION = pytest.StashKey[Simulation]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "islet_clock(instant, rate=0): start the test's simulation on a virtual clock at this RFC 3339 "
        f"instant (default {DEFAULT_START}, paused)")


@pytest.fixture(scope="session")
def islet_server() -> Iterator[str]:
    """The URL of the server the session tests against."""
    if url := os.environ.get("ISLET_URL"):
        yield url
        return
    server = ServerProcess()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def islet(islet_server: str) -> Iterator[Islet]:
    with Islet(islet_server, token=os.environ.get("ISLET_ADMIN_TOKEN")) as client:
        yield client


@pytest.fixture
def simulation(islet: Islet, request: pytest.FixtureRequest) -> Iterator[Simulation]:
    marker = request.node.get_closest_marker("islet_clock")
    at = marker.args[0] if marker and marker.args else DEFAULT_START
    rate = marker.kwargs.get("rate", 0) if marker else 0
    world = islet.create_simulation(at=at, rate=rate)
    request.node.stash[SIMULATION] = world
    yield world
    try:
        world.delete()
    except IsletError as error:
        if error.code != "not_found":  # the test deleted it itself
            raise


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    world = item.stash.get(SIMULATION, None)
    if report.when == "call" and report.failed and world is not None:
        report.sections.append(("Islet: what the devices show", describe(world)))
    return report


def describe(world: Simulation) -> str:
    """Each device's island and Lock Screen text, at the simulation's latest revision."""
    try:
        devices = sorted(world.get("/devices") or {})
        clock = world.clock()
        scenes = [str(world.scene_text(device)) for device in devices]
    except (IsletError, httpx.HTTPError, OSError) as error:
        return f"(could not read the scene: {error})"
    header = f"simulation {world.id}, clock {clock.now.isoformat()} ({clock.mode})"
    return "\n".join([header, *scenes]) if scenes else header + "\n(no devices)"
