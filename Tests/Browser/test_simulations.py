"""Simulations in the dashboard: `?simulation=id` shows that world (REST calls and stream
subscriptions go to it), the picker lists the server's simulations as they come and go, and a
missing or deleted simulation is said so on the page. Also the stream client's own
per-subscription `simulation` option against the real server."""

import pytest
from selenium.webdriver.common.by import By

from support import COFFEE, coffee_world, island_rect, open_dashboard, wait_for

OTHER_CLOCK = "2031-06-01T12:00:00Z"


def other_world(server, simulation: str, status: str = "brewing") -> None:
    status_code, reply = server.request("POST", "/v1/simulations", {
        "id": simulation, "clock": {"mode": "virtual", "now": OTHER_CLOCK}})
    assert status_code == 201, reply
    status_code, reply = server.request("POST", f"/v1/simulations/{simulation}/commands", {"commands": [
        {"type": "device.upsert", "id": "phone-b", "model": "iphone-16-pro-max"},
        {"type": "app.upsert", **COFFEE},
        {"type": "activity.request", "id": "order-b", "app": COFFEE["id"], "attributesType": "CoffeeDeliveryAttributes",
         "attributes": {"coffeeName": "Mocha"}, "content": {"state": {"currentStatus": status}}},
    ]})
    assert status_code == 200, reply


def picker_options(driver) -> list:
    return driver.execute_script(
        "return [...document.getElementById('simulation-picker').options].map((o) => o.value)")


def picker_label(driver) -> str:
    return driver.execute_script("const s = document.getElementById('simulation-picker'); return s.selectedOptions[0]?.text")


def page_state(driver) -> dict:
    return driver.execute_script("""
        return {conn: document.getElementById('conn').dataset.state, simulation: document.documentElement.dataset.simulation,
                inert: document.querySelector('.workspace').inert,
                workspaceShown: getComputedStyle(document.querySelector('.workspace')).display !== 'none'};
    """)


def test_the_page_shows_the_simulation_in_its_url(browser, server):
    coffee_world(server, status="received")
    other_world(server, "team-b")
    open_dashboard(browser, server, simulation="team-b")
    wait_for(browser, lambda d: "Brewing" in island_rect(d)["text"], message="team-b's activity on the island")
    tabs = browser.execute_script("return [...document.querySelectorAll('#device-tabs [data-id]')].map((t) => t.dataset.id)")
    assert tabs == ["phone-b"], tabs
    assert browser.find_element(By.ID, "simulation-picker").get_attribute("value") == "team-b"
    assert "12:00" in browser.find_element(By.ID, "sim-time").text, "team-b's clock, not default's 08:00"
    team_b_rev = server.request("GET", "/v1/simulations/team-b")[1]["rev"]
    wait_for(browser, lambda d: d.find_element(By.ID, "rev").text == f"rev {team_b_rev}", message="team-b's revision in the badge")
    # A change in team-b reaches the page; one in default does not.
    server.request("PATCH", "/v1/activities/order-1", {"content": {"state": {"currentStatus": "brewing"}}})
    status, reply = server.request("PATCH", "/v1/simulations/team-b/activities/order-b",
                                   {"content": {"state": {"currentStatus": "onItsWay"}}})
    assert status == 200, reply
    wait_for(browser, lambda d: "On its way" in island_rect(d)["text"], message="team-b's update on the island")
    # The page's own commands go to team-b too (the clock panel's REST calls).
    browser.execute_script("return import('/js/api.js').then((api) => api.post('/v1/clock/advance', {seconds: 60}))")
    wait_for(browser, lambda d: server.request("GET", "/v1/simulations/team-b/clock")[1]["result"]["now"] == "2031-06-01T12:01:00Z",
             message="the page's command reached team-b")
    assert server.state("/clock/now") != "2031-06-01T12:01:00Z"


def test_the_picker_lists_simulations_as_they_are_created_and_opens_them(browser, server):
    coffee_world(server)
    open_dashboard(browser, server)
    assert picker_options(browser) == ["default"]
    picker = browser.find_element(By.ID, "simulation-picker")
    assert picker.accessible_name == "Simulation"
    browser.find_element(By.ID, "tab-apns").click()  # a panel chosen after load is kept on the switch
    other_world(server, "late-arrival")
    wait_for(browser, lambda d: "late-arrival" in picker_options(d), message="the new simulation in the picker")
    browser.execute_script("""
        const select = document.getElementById('simulation-picker');
        select.value = 'late-arrival';
        select.dispatchEvent(new Event('change'));
    """)
    wait_for(browser, lambda d: "simulation=late-arrival" in d.current_url)
    wait_for(browser, lambda d: "Brewing" in island_rect(d)["text"])
    assert "panel=apns" in browser.current_url
    assert browser.find_element(By.ID, "simulation-picker").get_attribute("value") == "late-arrival"


def test_a_deleted_simulation_is_said_so_with_a_way_back(browser, server):
    other_world(server, "short-lived")
    open_dashboard(browser, server, simulation="short-lived")
    status, reply = server.request("DELETE", "/v1/simulations/short-lived")
    assert status == 200, reply
    notice = browser.find_element(By.ID, "simulation-notice")
    wait_for(browser, lambda d: notice.is_displayed(), message="the deleted notice")
    assert "short-lived" in notice.text and "was deleted" in notice.text
    link = notice.find_element(By.TAG_NAME, "a")
    assert link.get_attribute("href").startswith(f"{server.url}/") and "simulation=" not in link.get_attribute("href")
    # The page stops claiming to be live: the stream is closed, the last picture stays but inert.
    wait_for(browser, lambda d: page_state(d) == {"conn": "closed", "simulation": "missing", "inert": True, "workspaceShown": True},
             message="a closed stream and an inert workspace")
    assert picker_label(browser) == "short-lived (deleted)"
    link.click()
    wait_for(browser, lambda d: d.execute_script("return document.getElementById('conn').dataset.state") == "live")
    assert "simulation=" not in browser.current_url
    assert browser.find_element(By.ID, "simulation-picker").get_attribute("value") == "default"


@pytest.mark.allow_console(r"/v1/simulations/ghost/.*status of 404")
def test_an_unknown_simulation_is_said_so(browser, server):
    coffee_world(server)
    browser.get(f"{server.url}/?simulation=ghost")
    notice = browser.find_element(By.ID, "simulation-notice")
    wait_for(browser, lambda d: notice.is_displayed(), message="the unknown-simulation notice")
    assert "ghost" in notice.text and "does not exist" in notice.text
    # No half-drawn page: no devices, no loading panels, no badge resyncing forever.
    wait_for(browser, lambda d: page_state(d) == {"conn": "closed", "simulation": "missing", "inert": True, "workspaceShown": False},
             message="a closed stream and no workspace")
    assert picker_label(browser) == "ghost (not found)"
    assert set(picker_options(browser)) == {"default", "ghost"}


def test_the_stream_client_holds_subscriptions_in_several_simulations(browser, server):
    """One connection, one subscription in `default` and one in `team-b`: each patch reaches
    only its own simulation's subscription, `default`'s messages carry no `simulation`, a
    command goes where it names, and a deleted simulation's subscriptions are dropped."""
    coffee_world(server)
    other_world(server, "team-b")
    browser.get(server.url + "/")
    wait_for(browser, lambda d: d.execute_script("return window.isletDashboard !== undefined"))
    result = browser.execute_async_script("""
        const [base, done] = arguments;
        const until = (f) => new Promise((resolve) => { const t = setInterval(() => { if (f()) { clearInterval(t); resolve(); } }, 10); });
        import('/js/islet-stream.js').then(async ({ IsletStream }) => {
          const stream = new IsletStream({ url: base.replace(/^http/, 'ws') + '/v1/stream', pingInterval: 0 });
          const sent = [];
          stream.addEventListener('hello', () => {
            const send = stream.socket.send.bind(stream.socket);
            stream.socket.send = (text) => { sent.push(JSON.parse(text)); send(text); };
          }, { once: true });
          const here = stream.subscribe('/clock', { id: 'here' });
          const there = stream.subscribe('/clock', { id: 'there', simulation: 'team-b' });
          const resyncs = [];
          stream.addEventListener('resync', (e) => resyncs.push(e.detail));
          stream.connect();
          await until(() => here.synced && there.synced);
          const before = { here: here.value.now, there: there.value.now };
          const ack = await stream.command([{ type: 'clock.advance', seconds: 60 }], { simulation: 'team-b' });
          await until(() => there.rev >= ack.rev);
          const after = { here: here.value.now, there: there.value.now };
          await fetch(base + '/v1/simulations/team-b', { method: 'DELETE' });
          await until(() => resyncs.length > 0);
          const left = [...stream.subscriptions.keys()];
          stream.close();
          done({ before, after, ack, resyncs, left, simulations: sent.map((m) => [m.op, m.id, m.simulation ?? null]) });
        });
    """, server.url)
    assert result["before"] == {"here": "2026-11-22T08:00:00Z", "there": OTHER_CLOCK}
    assert result["after"] == {"here": "2026-11-22T08:00:00Z", "there": "2031-06-01T12:01:00Z"}
    assert result["resyncs"] == [{"reason": "deleted", "simulation": "team-b"}]
    assert result["left"] == ["here"]
    # Sent after the hello: both subscribes (default's without a `simulation`), then the command.
    ops = result["simulations"]
    assert ["subscribe", "here", None] in ops and ["subscribe", "there", "team-b"] in ops, ops
    assert any(op == "command" and sim == "team-b" for op, _, sim in ops), ops
