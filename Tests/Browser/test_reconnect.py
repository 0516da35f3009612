"""Losing the server: the page shows it is offline, reconnects with backoff when the server is
back, and catches up; a dropped connection resumes with `since` and replays what it missed."""

import pytest

from support import IsletServer, coffee_world, free_port, island_rect, open_dashboard, wait_for

state = lambda d: d.execute_script("return document.getElementById('conn').dataset.state")
badge = lambda d: d.execute_script("return document.getElementById('conn').innerText")


@pytest.mark.allow_console(r"WebSocket connection to .* failed")
def test_killed_server_restarts_and_page_catches_up(browser, start_server):
    port = free_port()
    first = start_server(port=port)
    coffee_world(first)
    open_dashboard(browser, first, zoom=75)
    wait_for(browser, lambda d: "Received" in island_rect(d)["text"])

    first.stop(kill=True)
    wait_for(browser, lambda d: state(d) == "offline", message="the badge never showed offline")
    assert "Offline" in badge(browser)

    second = start_server(port=port)
    assert second.port == port
    coffee_world(second, status="outForDelivery")
    wait_for(browser, lambda d: state(d) == "live", timeout=20, message="the page never reconnected")
    wait_for(browser, lambda d: "On its way" in island_rect(d)["text"], message="the page did not show the new server's state")
    # The new server is a new history (epoch): the page replaced its values with fresh snapshots.
    assert browser.execute_script("return window.isletDashboard.stream.epoch") == server_epoch(second)
    # …and keeps following it.
    second.request("PATCH", "/v1/activities/order-1", {"content": {"state": {"currentStatus": "brewing"}}})
    wait_for(browser, lambda d: "Brewing" in island_rect(d)["text"])
    rev = second.request("GET", "/v1/state?path=/clock")[1]["rev"]
    wait_for(browser, lambda d: d.execute_script("return document.getElementById('rev').textContent") == f"rev {rev}")


def server_epoch(server: IsletServer) -> str:
    return server.request("GET", "/v1/state?path=/clock")[1]["epoch"]


def test_dropped_connection_resumes_with_since(browser, server):
    coffee_world(server)
    open_dashboard(browser, server, zoom=75)
    wait_for(browser, lambda d: "Received" in island_rect(d)["text"])
    browser.execute_script("""
        const stream = window.isletDashboard.stream;
        window.__resumed = [];
        window.__fresh = [];
        stream.addEventListener('snapshot', (e) => (e.detail.resumed ? window.__resumed : window.__fresh).push(e.detail.sub.path));
        window.__sent = [];
        stream.addEventListener('connection', (e) => {
          if (e.detail.state === 'connecting') {
            // Record what the next socket sends (the resubscriptions).
            queueMicrotask(() => {
              const socket = stream.socket;
              const send = socket.send.bind(socket);
              socket.send = (text) => { window.__sent.push(JSON.parse(text)); send(text); };
            });
          }
        });
        stream.socket.close();
    """)
    # While the page is away, the simulation moves on.
    server.request("PATCH", "/v1/activities/order-1", {"content": {"state": {"currentStatus": "brewing"}}})
    wait_for(browser, lambda d: "Brewing" in island_rect(d)["text"], timeout=15)
    sent = browser.execute_script("return window.__sent")
    subscribes = [m for m in sent if m["op"] == "subscribe"]
    assert subscribes and all("since" in m for m in subscribes), subscribes
    resumed = browser.execute_script("return window.__resumed")
    fresh = browser.execute_script("return window.__fresh")
    assert "/activities" in resumed and "/devices" in resumed and not fresh, (resumed, fresh)
    assert state(browser) == "live"
