"""The Push panel's "Channels & widgets": broadcast channels created and deleted from the
dashboard, their live counts (subscribers, broadcasts, the latest broadcast), the broadcast
composer, the widget push, and how broadcasts and widget pushes read in the deliveries. Also the
same routes under a simulation and with an admin token."""

import json

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from support import COFFEE, coffee_world, open_dashboard, wait_for

SECRET = "admin-secret-for-channels"


def set_value(driver, element, value):
    driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input', {bubbles: true}))", element, value)


def status_of(driver, selector):
    return driver.execute_script("return document.querySelector(arguments[0])?.textContent ?? ''", selector)


def channel_rows(driver):
    return driver.execute_script("""return [...document.querySelectorAll('#panel-apns .channels li[data-channel]')].map((li) => ({
        id: li.dataset.channel, shown: li.querySelector('.channel-id').textContent, title: li.querySelector('.channel-id').title,
        policy: li.querySelector('.channel-policy').textContent, subscribers: li.dataset.subscribers, broadcasts: li.dataset.broadcasts,
        counts: li.querySelector('.channel-counts').textContent, last: li.querySelector('.channel-last').textContent,
        activities: li.querySelector('.channel-activities').textContent }))""")


def deliveries(driver):
    return driver.execute_script("""return [...document.querySelectorAll('#panel-apns .deliveries li')].map((li) => ({
        kind: li.dataset.kind, what: li.querySelector('.what').textContent, outcome: li.querySelector('.outcome').textContent,
        detail: li.querySelector('.reason').textContent }))""")


def open_channels(driver, server, **params):
    open_dashboard(driver, server, zoom=50, panel="apns", **params)
    driver.find_element(By.CSS_SELECTOR, 'label[for="push-mode-app"]').click()
    wait_for(driver, lambda d: d.find_element(By.ID, "push-app").get_attribute("value") == COFFEE["id"],
             message="the channels follow the app of the chosen device token")


def create_channel(driver, policy):
    before = {row["id"] for row in channel_rows(driver)}
    driver.find_element(By.ID, f"channel-create-{policy}").click()
    wait_for(driver, lambda d: len(channel_rows(d)) == len(before) + 1, message="the new channel never showed")
    return next(row for row in channel_rows(driver) if row["id"] not in before)


def subscribe(server, activity, channel, status="received", path="/v1/commands"):
    code, reply = server.request("POST", path, {"commands": [
        {"type": "activity.request", "id": activity, "app": COFFEE["id"], "attributesType": "CoffeeDeliveryAttributes",
         "attributes": {"coffeeName": "Flat white"}, "content": {"state": {"currentStatus": status}},
         "pushType": {"channel": channel}}]})
    assert code == 200, reply


def test_channel_created_subscribed_broadcast_and_deleted_from_the_push_panel(browser, server):
    coffee_world(server)
    server.commands([
        {"type": "widget.upsert", "id": "w-beans", "app": COFFEE["id"], "kind": "beans", "family": "systemSmall", "device": "phone"},
        {"type": "widget.setTimeline", "id": "w-beans", "entries": [{"date": "2026-11-22T08:00:00Z", "content": {"origin": "Kenya"}}]},
    ])
    open_channels(browser, server)
    wait_for(browser, lambda d: "Coffee has no channels yet" in status_of(d, "#panel-apns .channels-empty"))

    # Create a channel that stores its latest message (policy 1).
    row = create_channel(browser, 1)
    channel = row["id"]
    assert row["shown"] == channel[:8] + "…" and row["title"].startswith(channel), row
    assert row["policy"] == "policy 1" and row["counts"] == "0 subscribers · 0 broadcasts" and row["last"] == "No broadcast yet.", row
    wait_for(browser, lambda d: status_of(d, "#panel-apns .app-push .panel-status") == f"201 Created · channel {channel} (policy 1).")
    assert server.state(f"/apps/{COFFEE['id']}/channels/{channel}/storagePolicy") == 1

    # An activity subscribes (as the app would, over REST): the row counts it and names it.
    subscribe(server, "order-2", channel)
    wait_for(browser, lambda d: channel_rows(d)[0]["subscribers"] == "1", message="the subscriber count never reached 1")
    assert channel_rows(browser)[0]["activities"] == "Subscribed: order-2 (active)"
    # The Activity panel names the channel of a subscribed activity.
    browser.find_element(By.ID, "tab-composer").click()
    wait_for(browser, lambda d: d.execute_script(
        "return [...document.getElementById('composer-activity').options].find((o) => o.value === 'order-2')?.text"
    ) == f"Coffee · order-2 (active) · on phone · channel {channel[:8]}…")
    browser.find_element(By.ID, "tab-apns").click()

    # Broadcast from the composer: the channel's counts and last message, the activity's new content.
    wait_for(browser, lambda d: Select(d.find_element(By.ID, "broadcast-channel")).first_selected_option.get_attribute("value") == channel)
    state = browser.find_element(By.ID, "broadcast-state")
    assert json.loads(state.get_attribute("value")) == {"currentStatus": "received"}, "prefilled from the subscriber"
    set_value(browser, state, json.dumps({"currentStatus": "outForDelivery"}))
    browser.find_element(By.XPATH, "//form[contains(@class, 'broadcast')]//button[normalize-space()='Broadcast']").click()
    wait_for(browser, lambda d: status_of(d, "#panel-apns .broadcast .panel-status").startswith("200 OK · apns-id "),
             message="the broadcast's reply")
    wait_for(browser, lambda d: channel_rows(d)[0]["broadcasts"] == "1")
    row = channel_rows(browser)[0]
    assert row["counts"] == "1 subscriber · 1 broadcast", row
    assert row["last"] == "Last: update · p10 · at 08:00:00 · stored until 16:00:00", row
    wait_for(browser, lambda d: "On its way" in d.execute_script(
        "return document.querySelector('[data-view=\"lock\"] .la-card[data-activity=\"order-2\"]')?.innerText ?? ''"),
        message="the subscriber's Lock Screen card shows the broadcast content")
    assert server.state("/activities/order-2/content/state") == {"currentStatus": "outForDelivery"}
    assert server.state("/activities/order-1/content/state") == {"currentStatus": "received"}, "order-1 is not subscribed"
    wait_for(browser, lambda d: deliveries(d)[:1] == [{"kind": "broadcast", "what": "broadcast update", "outcome": "applied",
                                                         "detail": f"channel {channel[:8]}… · applied to 1 of 1 subscriber"}])

    # A widget push from the button reloads the app's widgets and is listed as such.
    browser.find_element(By.ID, "widget-push").click()
    wait_for(browser, lambda d: status_of(d, "#panel-apns .app-push > .panel-status:last-child").startswith("200 OK"),
             message="the widget push's reply")
    wait_for(browser, lambda d: deliveries(d)[:1] == [{"kind": "widgets", "what": "widget push", "outcome": "applied", "detail": ""}])

    # Delete takes a second click; the channel is then gone, here and on the server.
    delete = browser.find_element(By.CSS_SELECTOR, f'#panel-apns .channels li[data-channel="{channel}"] .button-danger')
    delete.click()
    assert delete.text == "Confirm delete" and channel_rows(browser), "one click only arms the button"
    delete.click()
    wait_for(browser, lambda d: channel_rows(d) == [], message="the deleted channel stayed")
    assert server.state(f"/apps/{COFFEE['id']}/channels") == {}
    wait_for(browser, lambda d: status_of(d, "#panel-apns .app-push .panel-status").startswith(f"204 · deleted channel {channel}"))


@pytest.mark.allow_console(r"/4/broadcasts/apps/.* status of 400")
def test_policy_0_channel_a_refused_broadcast_and_text_from_the_server_stays_text(browser, server):
    coffee_world(server)
    server.commands([{"type": "app.upsert", "id": "com.example.evil", "name": "<img src=x id=injected>Evil"}])
    open_channels(browser, server)
    channel = create_channel(browser, 0)["id"]
    subscribe(server, "order-2", channel)
    subscribe(server, "order-3", channel)
    wait_for(browser, lambda d: channel_rows(d)[0]["subscribers"] == "2")

    # An end at priority 5 for both subscribers; nothing is stored under policy 0.
    browser.find_element(By.CSS_SELECTOR, 'label[for="broadcast-event-end"]').click()
    Select(browser.find_element(By.ID, "broadcast-priority")).select_by_value("5")
    browser.find_element(By.XPATH, "//form[contains(@class, 'broadcast')]//button[normalize-space()='Broadcast']").click()
    wait_for(browser, lambda d: channel_rows(d)[0]["broadcasts"] == "1")
    assert channel_rows(browser)[0]["last"] == "Last: end · p5 · at 08:00:00", channel_rows(browser)[0]
    wait_for(browser, lambda d: deliveries(d)[0]["what"] == "broadcast end · p5")

    # A broadcast to invalid JSON is stopped in the browser; APNs' refusals are shown as APNs answers.
    state = browser.find_element(By.ID, "broadcast-state")
    set_value(browser, state, "{ nope")
    browser.find_element(By.XPATH, "//form[contains(@class, 'broadcast')]//button[normalize-space()='Broadcast']").click()
    wait_for(browser, lambda d: "Fix the JSON" in status_of(d, "#panel-apns .broadcast .panel-status"))
    set_value(browser, state, json.dumps({"currentStatus": "delivered"}))
    browser.find_element(By.CSS_SELECTOR, 'label[for="broadcast-event-update"]').click()
    browser.execute_script("""const s = document.getElementById('broadcast-channel');
        s.append(new Option('gone', 'AAAAAAAAAAAAAAAAAAAAAA==')); s.value = 'AAAAAAAAAAAAAAAAAAAAAA==';""")
    browser.find_element(By.XPATH, "//form[contains(@class, 'broadcast')]//button[normalize-space()='Broadcast']").click()
    wait_for(browser, lambda d: status_of(d, "#panel-apns .broadcast .panel-status") == "400 ChannelNotRegistered")

    # An app name with markup is shown as text, never parsed.
    Select(browser.find_element(By.ID, "push-app")).select_by_value("com.example.evil")
    wait_for(browser, lambda d: "<img src=x id=injected>Evil has no channels yet" in status_of(d, "#panel-apns .channels-empty"))
    assert browser.execute_script("return document.getElementById('push-app').selectedOptions[0].text") == "<img src=x id=injected>Evil"
    wait_for(browser, lambda d: d.execute_script(
        "return document.querySelector('#panel-apns .deliveries').previousElementSibling.textContent") == "<img src=x id=injected>Evil: 0 recorded (last 100).")
    assert browser.find_elements(By.ID, "injected") == []


def test_channels_under_a_simulation_with_an_admin_token(browser, start_server):
    server = start_server(token=SECRET)
    code, reply = server.request("POST", "/v1/simulations", {"id": "team-b", "clock": {"mode": "virtual", "now": "2031-06-01T12:00:00Z"}})
    assert code == 201, reply
    code, reply = server.request("POST", "/v1/simulations/team-b/commands", {"commands": [
        {"type": "device.upsert", "id": "phone-b", "model": "iphone-15-pro"}, {"type": "app.upsert", **COFFEE},
        {"type": "activity.request", "id": "order-b", "app": COFFEE["id"], "attributesType": "CoffeeDeliveryAttributes",
         "attributes": {"coffeeName": "Mocha"}, "content": {"state": {"currentStatus": "received"}}, "pushType": "token"}]})
    assert code == 200, reply
    coffee_world(server)  # default has the same app, without channels
    open_channels(browser, server, simulation="team-b", token=SECRET)
    channel = create_channel(browser, 1)["id"]
    assert server.state(f"/apps/{COFFEE['id']}/channels") == {}, "default is untouched"
    code, reply = server.request("GET", f"/v1/simulations/team-b/state?path=/apps/{COFFEE['id']}/channels")
    assert code == 200 and list(reply["value"]) == [channel], reply

    subscribe(server, "order-c", channel, path="/v1/simulations/team-b/commands")
    wait_for(browser, lambda d: channel_rows(d)[0]["subscribers"] == "1")
    browser.find_element(By.XPATH, "//form[contains(@class, 'broadcast')]//button[normalize-space()='Broadcast']").click()
    wait_for(browser, lambda d: channel_rows(d)[0]["last"] == "Last: update · p10 · at 12:00:00 · stored until 20:00:00")
    browser.find_element(By.ID, "widget-push").click()
    wait_for(browser, lambda d: deliveries(d)[:1] == [{"kind": "widgets", "what": "widget push", "outcome": "ignored", "detail": "no widgets"}])


def wait_live(driver):
    wait_for(driver, lambda d: d.execute_script("return document.getElementById('conn').dataset.state") == "live",
             message="the stream never went live")
    wait_for(driver, lambda d: d.execute_script("return document.documentElement.dataset.panels === 'ready'"),
             message="the operator panels never loaded")


@pytest.mark.allow_console(r"401 \(Unauthorized\)")
def test_the_token_leaves_the_address_bar_and_stays_with_the_tab(browser, start_server):
    """`#token=` (never sent to a server) and `?token=` are taken out of the URL at once; the tab
    keeps the token through a reload and a change of simulation, and a token added to an open
    page's fragment is taken too."""
    server = start_server(token=SECRET)
    coffee_world(server)
    code, reply = server.request("POST", "/v1/simulations", {"id": "team-c"})
    assert code == 201, reply

    def works():
        wait_live(browser)
        assert SECRET not in browser.current_url and "panel=apns" in browser.current_url, browser.current_url
        browser.find_element(By.CSS_SELECTOR, 'label[for="push-mode-app"]').click()
        create_channel(browser, 1)  # a mutation: the admin token went with it

    browser.get(f"{server.url}/?panel=apns&zoom=50#token={SECRET}")
    works()
    browser.refresh()
    works()
    browser.get(f"{server.url}/?simulation=team-c&panel=apns")
    wait_for(browser, lambda d: d.execute_script("return document.getElementById('conn').dataset.state") == "live",
             message="the stream of team-c (no devices yet) never went live")
    assert browser.execute_script("return sessionStorage.getItem('islet.token')") == SECRET

    browser.execute_script("sessionStorage.clear()")
    browser.get(f"{server.url}/?token={SECRET}&panel=apns&zoom=50")
    works()

    # Percent-decoded (a `+` stays a `+`); an empty `token=` changes nothing.
    browser.get(f"{server.url}/?panel=apns&zoom=50#token=a%2Bb%26c+d&keep=1")
    wait_for(browser, lambda d: d.execute_script("return sessionStorage.getItem('islet.token')") == "a+b&c+d")
    assert "token" not in browser.current_url, browser.current_url
    browser.execute_script(f"sessionStorage.setItem('islet.token', '{SECRET}')")
    browser.get(f"{server.url}/?token=&panel=apns&zoom=50")
    works()
    assert browser.execute_script("return sessionStorage.getItem('islet.token')") == SECRET

    browser.execute_script("sessionStorage.clear()")
    browser.get(f"{server.url}/?panel=apns&zoom=75")
    wait_for(browser, lambda d: d.execute_script("return document.getElementById('conn').dataset.state") == "offline",
             message="without the token the stream is refused")
    browser.execute_script(f"location.hash = 'token={SECRET}'")
    works()
