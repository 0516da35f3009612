"""Operator panels in a real browser: the clock, the activity composer with delivery outcomes,
the raw APNs sender, the diff inspector and the layout warnings."""

import json

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from support import COFFEE, coffee_world, island_rect, open_dashboard, wait_for


def panel_status(driver, panel):
    return driver.execute_script(f"return document.querySelector('#panel-{panel} .panel-status')?.textContent ?? ''")


def set_value(driver, element, value):
    driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input', {bubbles: true}))", element, value)


def clock(server):
    return server.request("GET", "/v1/clock")[1]["result"]


def test_clock_panel_speed_pause_jump_and_step(browser, server):
    coffee_world(server)
    open_dashboard(browser, server, zoom=50, panel="clock")
    panel = browser.find_element(By.ID, "panel-clock")
    wait_for(browser, lambda d: "paused" in panel.find_element(By.CSS_SELECTOR, ".chip").text.lower())
    assert panel.find_element(By.CSS_SELECTOR, ".clock-time").text == "08:00:00"

    panel.find_element(By.CSS_SELECTOR, 'label[for="clock-speed-60"]').click()
    wait_for(browser, lambda d: clock(server)["rate"] == 60)
    wait_for(browser, lambda d: "60×" in panel.find_element(By.CSS_SELECTOR, ".chip").text)
    pause = panel.find_element(By.CSS_SELECTOR, "button[aria-pressed]")
    assert pause.get_attribute("aria-pressed") == "true"
    pause.click()
    wait_for(browser, lambda d: clock(server)["rate"] == 0)
    wait_for(browser, lambda d: pause.get_attribute("aria-pressed") == "false")

    set_value(browser, panel.find_element(By.ID, "clock-jump"), "2026-11-22T09:30:00")
    panel.find_element(By.XPATH, ".//button[normalize-space()='Jump']").click()
    wait_for(browser, lambda d: clock(server)["now"] == "2026-11-22T09:30:00Z")
    wait_for(browser, lambda d: panel.find_element(By.CSS_SELECTOR, ".clock-time").text == "09:30:00")

    # Step to the next transition visible in the document: a stale date.
    server.request("PATCH", "/v1/activities/order-1", {"content": {"state": {"currentStatus": "brewing"}, "staleDate": "2026-11-22T09:45:00Z"}})
    wait_for(browser, lambda d: "order-1 goes stale at 09:45:00" in panel.find_element(By.CSS_SELECTOR, ".next-transition").text)
    panel.find_element(By.XPATH, ".//button[normalize-space()='Step to next transition']").click()
    wait_for(browser, lambda d: clock(server)["now"] == "2026-11-22T09:45:00Z")
    assert server.state("/activities/order-1/activityState") == "stale"
    wait_for(browser, lambda d: d.execute_script(
        "return document.querySelector('[data-view=\"lock\"] .la-card[data-activity=\"order-1\"] .card-badge')?.textContent") == "Stale")


def deliveries(driver, panel="composer"):
    return driver.execute_script(f"""return [...document.querySelectorAll('#panel-{panel} .deliveries li')].map((li) => ({{
        what: li.querySelector('.what').textContent, outcome: li.querySelector('.outcome').textContent, reason: li.querySelector('.reason').textContent }}))""")


def test_composer_update_end_start_and_delivery_outcomes(browser, server):
    coffee_world(server)
    open_dashboard(browser, server, zoom=50, panel="composer")
    panel = browser.find_element(By.ID, "panel-composer")
    state = panel.find_element(By.ID, "composer-state")
    wait_for(browser, lambda d: "received" in state.get_attribute("value"))

    # Invalid JSON is caught in the browser, nothing is sent.
    set_value(browser, state, "{ nope")
    assert state.get_attribute("aria-invalid") == "true"
    panel.find_element(By.XPATH, ".//button[normalize-space()='Send update']").click()
    wait_for(browser, lambda d: "Fix the JSON" in panel_status(d, "composer"))

    # An alerting update: applied, and the island expands (LA-10).
    set_value(browser, state, json.dumps({"currentStatus": "brewing"}))
    panel.find_element(By.CSS_SELECTOR, 'label[for="composer-alert"]').click()
    panel.find_element(By.XPATH, ".//button[normalize-space()='Send update']").click()
    wait_for(browser, lambda d: "applied" in panel_status(d, "composer"))
    wait_for(browser, lambda d: island_rect(d)["mode"] == "expanded" and "Brewing" in island_rect(d)["text"])
    wait_for(browser, lambda d: deliveries(d)[:1] == [{"what": "api update order-1", "outcome": "applied", "reason": ""}])

    # End it: the Lock Screen card is dimmed and marked.
    panel.find_element(By.CSS_SELECTOR, 'label[for="composer-action-end"]').click()
    panel.find_element(By.XPATH, ".//button[normalize-space()='End activity']").click()
    wait_for(browser, lambda d: server.state("/activities/order-1/activityState") == "ended")
    wait_for(browser, lambda d: d.execute_script(
        "const c = document.querySelector('[data-view=\"lock\"] .la-card[data-activity=\"order-1\"]'); return c && c.classList.contains('is-ended') && getComputedStyle(c).opacity < 1"))

    # An update to an ended activity is accepted but ignored, and the reason is shown.
    panel.find_element(By.CSS_SELECTOR, 'label[for="composer-action-update"]').click()
    panel.find_element(By.XPATH, ".//button[normalize-space()='Send update']").click()
    wait_for(browser, lambda d: "ignored (activity_ended)" in panel_status(d, "composer"))
    wait_for(browser, lambda d: deliveries(d)[:1] == [{"what": "api update order-1", "outcome": "ignored", "reason": "activity ended"}])

    # Start a new one from the composer.
    panel.find_element(By.CSS_SELECTOR, 'label[for="composer-action-start"]').click()
    Select(panel.find_element(By.ID, "composer-app")).select_by_value(COFFEE["id"])
    wait_for(browser, lambda d: panel.find_element(By.ID, "composer-type").get_attribute("value") == "CoffeeDeliveryAttributes")
    Select(panel.find_element(By.ID, "composer-source")).select_by_value("app")
    panel.find_element(By.XPATH, ".//button[normalize-space()='Start activity']").click()
    wait_for(browser, lambda d: "Started" in panel_status(d, "composer"))
    wait_for(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, '[data-view="lock"] .la-card')) == 2)


@pytest.mark.allow_console(r"/3/device/.* status of 400")
def test_raw_apns_push_and_its_outcome(browser, server):
    coffee_world(server)
    token = server.state("/activities/order-1/pushToken")
    open_dashboard(browser, server, zoom=50, panel="apns")
    panel = browser.find_element(By.ID, "panel-apns")
    wait_for(browser, lambda d: Select(panel.find_element(By.ID, "apns-token")).first_selected_option.get_attribute("value") == token)
    assert panel.find_element(By.ID, "apns-topic").get_attribute("value") == "com.example.coffee.push-type.liveactivity"
    payload = json.loads(panel.find_element(By.ID, "apns-payload").get_attribute("value"))
    assert payload["aps"]["event"] == "update" and payload["aps"]["timestamp"] > 0
    payload["aps"]["content-state"] = {"currentStatus": "outForDelivery"}
    set_value(browser, panel.find_element(By.ID, "apns-payload"), json.dumps(payload))
    panel.find_element(By.XPATH, ".//button[normalize-space()='Send push']").click()
    wait_for(browser, lambda d: panel_status(d, "apns").startswith("200 OK"))
    wait_for(browser, lambda d: "On its way" in island_rect(d)["text"])
    wait_for(browser, lambda d: deliveries(d, "apns")[:1] == [{"what": "push update order-1", "outcome": "applied", "reason": ""}])

    # An APNs error is shown as APNs answers it.
    set_value(browser, panel.find_element(By.ID, "apns-topic"), "com.example.other.push-type.liveactivity")
    panel.find_element(By.XPATH, ".//button[normalize-space()='Send push']").click()
    wait_for(browser, lambda d: "400 DeviceTokenNotForTopic" in panel_status(d, "apns"))


def test_diff_inspector_lists_filters_and_pauses(browser, server):
    coffee_world(server)
    open_dashboard(browser, server, zoom=50, panel="diff")
    panel = browser.find_element(By.ID, "panel-diff")
    server.request("PATCH", "/v1/activities/order-1", {"content": {"state": {"currentStatus": "brewing"}}})
    entries = lambda d: d.execute_script("return [...document.querySelectorAll('#panel-diff .diff-list > li')].map(li => li.querySelector('.rev').textContent)")
    wait_for(browser, lambda d: len(entries(d)) >= 1)
    rev = server.request("GET", "/v1/state?path=/clock")[1]["rev"]
    assert entries(browser)[0] == f"rev {rev}"
    # The ops are listed with their paths.
    panel.find_element(By.CSS_SELECTOR, ".diff-list summary").click()
    paths = browser.execute_script("return [...document.querySelectorAll('#panel-diff .ops code')].map(c => c.textContent)")
    assert any(p.startswith("/activities/order-1/") for p in paths)
    # Filter: only patches touching a path.
    set_value(browser, panel.find_element(By.ID, "diff-filter"), "/apps/")
    wait_for(browser, lambda d: all(p.startswith("/apps/") for p in d.execute_script(
        "return [...document.querySelectorAll('#panel-diff .first-path')].map(c => c.textContent)")))
    set_value(browser, panel.find_element(By.ID, "diff-filter"), "")
    # Pause: new patches are held, not shown, until resumed.
    panel.find_element(By.XPATH, ".//button[normalize-space()='Pause']").click()
    shown = entries(browser)
    server.request("PATCH", "/v1/activities/order-1", {"content": {"state": {"currentStatus": "outForDelivery"}}})
    wait_for(browser, lambda d: "1 new held" in panel.find_element(By.CSS_SELECTOR, ".hint").text)
    assert entries(browser) == shown
    panel.find_element(By.XPATH, ".//button[normalize-space()='Resume']").click()
    wait_for(browser, lambda d: entries(d)[0] == f"rev {rev + 1}")


def test_layout_warnings_are_measured_from_the_rendered_geometry(browser, server):
    coffee_world(server)
    server.commands([
        {"type": "template.put", "app": COFFEE["id"], "target": "activity:CoffeeDeliveryAttributes", "slot": "expandedLeading",
         "html": "<span>Supercalifragilisticexpialidocious</span>"},
        {"type": "template.put", "app": COFFEE["id"], "target": "activity:CoffeeDeliveryAttributes", "slot": "lockScreenHeight", "html": "120"},
        {"type": "template.put", "app": COFFEE["id"], "target": "activity:CoffeeDeliveryAttributes", "slot": "lockScreen",
         "html": "<section>" + "<p>A line of status text</p>" * 12 + "</section>"},
        {"type": "widget.upsert", "id": "w-beans", "app": COFFEE["id"], "kind": "beans", "family": "systemSmall", "device": "phone"},
        {"type": "widget.setTimeline", "id": "w-beans", "entries": [
            {"date": "2026-11-22T08:00:00Z", "content": {"origin": "Kenya", "roast": "Light", "grams": 250, "price": 14, "stock": 3}}]},
    ])
    open_dashboard(browser, server, zoom=50, panel="warnings")
    findings = lambda d: d.execute_script("""return [...document.querySelectorAll('#panel-warnings .warnings li')].map(li =>
        [li.dataset.severity, li.querySelector('strong').textContent, li.querySelector('p').textContent])""")
    wait_for(browser, lambda d: len(findings(d)) >= 5 and any(f[1] == "Small widget" for f in findings(d)), message="warnings were not measured")
    text = "\n".join(" | ".join(f) for f in findings(browser))
    assert "warning | Compact trailing | content is" in text and "slot is 52.33 pt" in text          # "Received" is too wide
    assert "warning | Expanded leading | content lies under the sensor gap" in text
    assert "warning | Lock Screen | content is" in text and "above 160 pt it is truncated" in text
    assert "info | Lock Screen | height 120 pt is between the short" in text
    assert "info | Small widget | 10 pieces of information" in text
    count = browser.find_element(By.ID, "warnings-count").text
    assert int(count) == len(findings(browser))
    # Outline them on the device views.
    browser.find_element(By.CSS_SELECTOR, 'label[for="warn-outline"]').click()
    wait_for(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#stage .has-warning")) >= 3)


def test_a_templates_markup_is_kept_to_what_a_presentation_draws_with(browser, server):
    # A meta refresh would take every viewer (and the token in the URL) elsewhere; `name` and
    # `id` would shadow document.getElementById and the dashboard's own panels.
    coffee_world(server)
    server.commands([
        {"type": "template.put", "app": COFFEE["id"], "target": "activity:CoffeeDeliveryAttributes", "slot": "lockScreen",
         "html": '<meta http-equiv="refresh" content="0;url=/elsewhere"><meta name="referrer" content="unsafe-url">'
                 '<img name="getElementById"><img name="createElement"><a href="/x" id="panel-composer">away</a>'
                 '<form action="http://example.invalid/"><input name="token"></form>'
                 '<b class="kept" data-snapshot-rect="1 2 3 4" aria-label="kept">{{state.currentStatus}}</b>'},
    ])
    open_dashboard(browser, server, zoom=50)
    start = browser.current_url
    wait_for(browser, lambda d: d.execute_script("return document.querySelectorAll('b.kept').length") > 0,
             message="the template's allowed markup was not drawn")
    assert browser.current_url == start
    assert browser.execute_script("""return typeof document.getElementById === 'function'
        && typeof document.createElement === 'function'
        && document.querySelectorAll('.frag meta, .frag a, .frag form, .frag input, .frag [name], .frag [id]').length === 0
        && document.querySelector('b.kept').getAttribute('aria-label') === 'kept'
        && !document.querySelector('b.kept').hasAttribute('data-snapshot-rect')""")
