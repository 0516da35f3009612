"""Fixtures for the dashboard's real-browser tests (helpers are in support.py).

Each test starts its own `islet serve` (the debug binary `swift build` made, or $ISLET_BIN)
on 127.0.0.1 and drives Debian's headless Chromium through chromedriver (never a downloaded
driver). Console errors fail the test unless it declares them with `allow_console`.
"""

from __future__ import annotations

import re

import pytest

from support import IsletServer, make_driver


# The browser's console as it was when the test's servers were about to stop.
CONSOLE_BEFORE_STOP = pytest.StashKey[list]()


def pytest_configure(config):
    config.addinivalue_line("markers", "allow_console(pattern): console errors matching the regex are expected")


@pytest.fixture
def start_server(request):
    servers: list[IsletServer] = []

    def start(**kwargs) -> IsletServer:
        server = IsletServer(**kwargs).start()
        servers.append(server)
        return server

    yield start
    # The page's console up to here belongs to the test; what it logs once its server is gone
    # (the stream client's reconnect attempts) does not. Tests list `browser` before `server`,
    # so the servers stop first: take the test's console now.
    if "browser" in request.fixturenames and servers:
        request.node.stash[CONSOLE_BEFORE_STOP] = request.getfixturevalue("browser").get_log("browser")
    for server in servers:
        server.cleanup()


@pytest.fixture
def server(start_server) -> IsletServer:
    """An empty simulation on a paused virtual clock."""
    return start_server()


@pytest.fixture
def browser(request):
    driver = make_driver()
    allowed = [re.compile(m.args[0]) for m in request.node.iter_markers("allow_console")]
    yield driver
    try:
        logs = request.node.stash.get(CONSOLE_BEFORE_STOP, None)
        if logs is None:
            logs = driver.get_log("browser")
    finally:
        driver.quit()
    errors = [e["message"] for e in logs if e["level"] == "SEVERE" and not any(p.search(e["message"]) for p in allowed)]
    assert not errors, "console errors:\n" + "\n".join(errors)
