"""Revision 2's display rules in a real browser: the compact island snug to its content
(PR-10) with the empty-side layout warning, the Always-On Lock Screen (LA-17), StandBy's
minimal presentation and its tap (PR-11), and several devices side by side in the grid.
Screenshots go to reports/screenshots/ (ignored by git)."""

from pathlib import Path

from selenium.webdriver.common.by import By

from support import COFFEE, ROOT, coffee_world, island_rect, island_still, js, open_dashboard, wait_for

SHOTS = ROOT / "reports" / "screenshots"


def shoot(driver, selector: str, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    driver.find_element(By.CSS_SELECTOR, selector).screenshot(str(path))
    return path


def put_compact(server, leading: str, trailing: str):
    server.commands([
        {"type": "template.put", "app": COFFEE["id"], "target": "activity:CoffeeDeliveryAttributes", "slot": slot, "html": html}
        for slot, html in (("compactLeading", leading), ("compactTrailing", trailing))
    ])


SENSOR_OFFSET = """
const island = document.querySelector('[data-view="island"] .island');
const screen = island.closest('.screen').getBoundingClientRect();
const sensor = island.querySelector('.layer-compact .sensor').getBoundingClientRect();
const zoom = Number(getComputedStyle(document.getElementById('stage')).getPropertyValue('--zoom'));
return ((sensor.left + sensor.width / 2) - (screen.left + screen.width / 2)) / zoom;
"""


def compact_width(driver, server, leading, trailing):
    put_compact(server, leading, trailing)
    text = trailing.replace("<b>", "").replace("</b>", "")
    # The drawn pill, its morph finished, is as wide as the width the island computed for the
    # content: its box as drawn, transforms included, which is what the tests measure.
    wait_for(driver, lambda d: text in island_rect(d)["text"] and island_still(d) and js(d, """
        const island = document.querySelector('[data-view="island"] .island');
        const pill = island.querySelector('.island-pill');
        const zoom = Number(getComputedStyle(document.getElementById('stage')).getPropertyValue('--zoom'));
        const drawn = pill.getBoundingClientRect().width / zoom;
        return Math.abs(parseFloat(getComputedStyle(pill).width) - Number(island.dataset.width)) < 0.5
            && Math.abs(drawn - Number(island.dataset.width)) < 0.5;"""),
        message=f"the island never settled on {trailing}")
    return float(js(driver, "return document.querySelector('[data-view=\"island\"] .island').dataset.width"))


def test_pr10_compact_island_is_snug_to_its_content(browser, server):
    coffee_world(server)
    open_dashboard(browser, server, zoom=100)
    short = compact_width(browser, server, "<b>A</b>", "<b>1</b>")
    shoot(browser, '[data-view="island"] .frame-box', "pr10-compact-short")
    long = compact_width(browser, server, "<b>A</b>", "<b>12:45 left</b>")
    shoot(browser, '[data-view="island"] .frame-box', "pr10-compact-long")
    # The document keeps the model's maximum; the drawing is only as wide as the content.
    assert server.state("/devices/phone/scene/island/width") == 230
    assert short < long <= 230, (short, long)
    assert long - short > 15, "a longer trailing value widens the island"
    # Snug against the sensor: the camera stays at the centre of the screen.
    assert abs(js(browser, SENSOR_OFFSET)) < 0.5
    rect = island_rect(browser)
    assert abs(rect["width"] - long) < 0.5 and abs(rect["height"] - 36.67) < 0.5


def test_pr10_a_wide_empty_compact_side_is_a_layout_warning(browser, server):
    coffee_world(server)
    put_compact(server, "<b>A</b>", "<span>" + "&#160;" * 14 + "</span>")
    open_dashboard(browser, server, zoom=75, panel="warnings")
    findings = lambda d: js(d, """return [...document.querySelectorAll('#panel-warnings .warnings li')].map(li =>
        li.querySelector('strong').textContent + ' | ' + li.querySelector('p').textContent)""")
    wait_for(browser, lambda d: any("are empty" in f for f in findings(d)), message="the empty side was not warned")
    empty = [f for f in findings(browser) if "are empty" in f]
    assert len(empty) == 1 and empty[0].startswith("Compact trailing"), empty
    assert not any(f.startswith("Compact leading") for f in findings(browser)), "a snug side is not warned"


def test_la17_always_on_dims_the_lock_screen_dark_without_animation(browser, server):
    coffee_world(server)
    server.commands([{"type": "device.upsert", "id": "plain", "model": "iphone-15"}])
    open_dashboard(browser, server, zoom=50, device="phone")
    toggle = browser.find_element(By.ID, "toggle-alwaysOn")
    assert toggle.is_enabled()
    status, _ = server.request("PUT", "/v1/devices/phone", {"locked": True, "alwaysOn": True})
    assert status == 200
    lock = '[data-view="lock"] .screen'
    wait_for(browser, lambda d: js(d, f"return document.querySelector('{lock}').classList.contains('always-on')"))
    assert js(browser, f"return document.querySelector('{lock}').dataset.appearance") == "dark"
    assert js(browser, f"return getComputedStyle(document.querySelector('{lock} .wallpaper')).filter") != "none"
    assert js(browser, f"return getComputedStyle(document.querySelector('{lock} .la-card')).transitionDuration") == "0s"
    assert js(browser, "return document.querySelector('[data-view=\"island\"] .island').classList.contains('no-anim')")
    assert "Always-On" in browser.find_element(By.CSS_SELECTOR, '[data-view="lock"] figcaption').text
    assert browser.find_element(By.ID, "toggle-alwaysOn").is_selected()
    shoot(browser, '[data-view="lock"] .frame-box', "la17-always-on")
    # Unlocked, the display is lit again; a model without the display has no switch.
    server.request("PUT", "/v1/devices/phone", {"locked": False})
    wait_for(browser, lambda d: not js(d, f"return document.querySelector('{lock}').classList.contains('always-on')"))
    browser.find_element(By.CSS_SELECTOR, '#device-tabs [data-id="plain"]').click()
    wait_for(browser, lambda d: not d.find_element(By.ID, "toggle-alwaysOn").is_enabled())


def test_pr11_standby_minimal_beside_the_widgets_and_a_click_goes_full_screen(browser, server):
    coffee_world(server)
    server.commands([
        {"type": "widget.upsert", "id": "w-beans", "app": COFFEE["id"], "kind": "beans", "family": "systemSmall", "device": "phone"},
        {"type": "widget.setTimeline", "id": "w-beans", "entries": [{"date": "2026-11-22T08:00:00Z", "content": {"origin": "Kenya"}}]},
        {"type": "stack.upsert", "id": "phone.home", "device": "phone", "family": "systemSmall", "widgets": ["w-beans"]},
        {"type": "device.upsert", "id": "phone", "locked": True, "standby": True, "standbyView": "minimal"},
    ])
    open_dashboard(browser, server, zoom=50)
    screen = '[data-view="standby"] .screen'
    wait_for(browser, lambda d: js(d, f"return document.querySelector('{screen}').dataset.state") == "minimal")
    wait_for(browser, lambda d: js(d, f"return document.querySelectorAll('{screen} .sb-widgets .widget').length") == 1)
    minimal = browser.find_element(By.CSS_SELECTOR, f"{screen} .sb-minimal")
    assert minimal.is_displayed() and minimal.get_attribute("data-shape") in ("circle", "oval")
    assert not browser.find_element(By.CSS_SELECTOR, f"{screen} .sb-stage").is_displayed()
    shoot(browser, '[data-view="standby"] .frame-box', "pr11-standby-minimal")
    minimal.click()
    wait_for(browser, lambda d: js(d, f"return document.querySelector('{screen}').dataset.state") == "activity")
    assert server.state("/devices/phone/scene/standby/view") == "fullScreen"
    assert browser.find_element(By.CSS_SELECTOR, f"{screen} .sb-stage .la-card").is_displayed()
    shoot(browser, '[data-view="standby"] .frame-box', "pr11-standby-full-screen")


def test_grid_shows_several_devices_side_by_side_each_live(browser, server):
    coffee_world(server)
    server.commands([
        {"type": "device.upsert", "id": "big", "model": "iphone-16-pro-max", "appearance": "dark"},
        {"type": "device.upsert", "id": "se", "model": "iphone-se-3"},
    ])
    open_dashboard(browser, server, zoom=40)
    browser.find_element(By.ID, "layout-grid").click()
    rows = lambda d: js(d, "return [...document.querySelectorAll('#grid .grid-row')].map(r => r.dataset.device)")
    wait_for(browser, lambda d: rows(d) == ["big", "phone", "se"])
    cells = lambda d: js(d, "return [...document.querySelectorAll('#grid .grid-row[data-device=\"phone\"] .presentation')].map(c => c.dataset.view)")
    assert cells(browser) == ["island", "lock"]
    assert not browser.find_element(By.ID, "stage").is_displayed()
    # Choose the views: StandBy added, the island close-up removed; one device left out.
    browser.find_element(By.CSS_SELECTOR, 'label[for="grid-view-standby"]').click()
    browser.find_element(By.CSS_SELECTOR, 'label[for="grid-view-island"]').click()
    browser.find_element(By.CSS_SELECTOR, 'label[for="grid-device-se"]').click()
    wait_for(browser, lambda d: rows(d) == ["big", "phone"] and cells(d) == ["lock", "standby"])
    assert "layout=grid" in browser.current_url and "views=lock%2Cstandby" in browser.current_url
    # Live: an update reaches the grid's Lock Screen card of that device.
    server.request("PATCH", "/v1/activities/order-1", {"content": {"state": {"currentStatus": "brewing"}}})
    wait_for(browser, lambda d: "Brewing" in js(d, "return document.querySelector('#grid .grid-row[data-device=\"phone\"] [data-view=\"lock\"] .la-card')?.innerText ?? ''"))
    shoot(browser, "#grid", "grid")
    # Back to the one-device tabs.
    browser.find_element(By.ID, "layout-grid").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "stage").is_displayed())
