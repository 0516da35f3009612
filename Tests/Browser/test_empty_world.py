"""A world without devices (a harness's fresh simulation, or one whose last device was deleted):
the page finishes loading, says how to add a device, and its operator panels work and follow
the document; nothing of the devices that were there stays drawn."""

import os

from selenium.webdriver.common.by import By

from support import coffee_world, open_dashboard, wait_for

SHOTS = os.environ.get("ISLET_BROWSER_SHOTS")


def shown(driver, selector: str) -> bool:
    return driver.execute_script(
        "const e = document.querySelector(arguments[0]); return Boolean(e && e.checkVisibility())", selector)


def clock_chip(driver) -> str:
    return driver.execute_script("return document.querySelector('#panel-clock .chip')?.textContent ?? ''")


def test_an_empty_world_loads_its_panels_and_says_how_to_add_a_device(browser, server):
    open_dashboard(browser, server, panel="clock")  # waited for the panels: they used to never load
    wait_for(browser, lambda d: d.find_element(By.ID, "device-title").text == "No devices yet")
    assert shown(browser, "#stage-empty") and "PUT /v1/devices/{id}" in browser.find_element(By.ID, "stage-empty").text
    # No device frames, switches or zoom with nothing to act on.
    for selector in ("#stage", ".device-settings", "#layout-grid", ".zoom"):
        assert not shown(browser, selector), f"{selector} is drawn in an empty world"
    assert browser.find_elements(By.CSS_SELECTOR, "#device-tabs [role=tab]") == []
    if SHOTS:
        browser.save_screenshot(os.path.join(SHOTS, "empty-world.png"))

    # The Clock panel works: Play starts the virtual clock.
    panel = browser.find_element(By.ID, "panel-clock")
    wait_for(browser, lambda d: panel.find_element(By.CSS_SELECTOR, ".clock-time").text == "08:00:00")
    panel.find_element(By.CSS_SELECTOR, "button[aria-pressed]").click()
    wait_for(browser, lambda d: server.request("GET", "/v1/clock")[1]["result"]["rate"] > 0)
    wait_for(browser, lambda d: "×" in clock_chip(d))

    # A device added later appears, with its views and controls.
    server.request("PUT", "/v1/devices/phone", {"model": "iphone-15-pro"})
    wait_for(browser, lambda d: d.find_element(By.ID, "device-title").text == "iPhone 15 Pro")
    wait_for(browser, lambda d: shown(d, '#stage [data-view="lock"] .frame-box') and shown(d, ".device-settings"))
    assert not shown(browser, "#stage-empty")


def test_deleting_the_last_device_clears_the_stage_and_the_clock_panel_follows(browser, server):
    coffee_world(server, device="phone-a")
    server.commands([{"type": "device.upsert", "id": "phone-b", "model": "iphone-16-pro"}])
    open_dashboard(browser, server, panel="clock")
    wait_for(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#device-tabs [role=tab]")) == 2)
    wait_for(browser, lambda d: "paused" in clock_chip(d).lower())

    # Both devices go and the clock starts, in one revision.
    server.commands([{"type": "device.delete", "id": "phone-a"}, {"type": "device.delete", "id": "phone-b"},
                     {"type": "clock.set", "mode": "virtual", "rate": 60}])
    wait_for(browser, lambda d: d.find_element(By.ID, "device-title").text == "No devices yet",
             message="the heading still names a deleted device")
    assert browser.find_elements(By.CSS_SELECTOR, "#device-tabs [role=tab]") == []
    assert not shown(browser, "#stage") and shown(browser, "#stage-empty")
    wait_for(browser, lambda d: "60×" in clock_chip(d), message="the Clock panel froze at the last device's revision")
    play = browser.find_element(By.CSS_SELECTOR, "#panel-clock button[aria-pressed]")
    assert play.get_attribute("aria-pressed") == "true"

    # The grid has no rows of the deleted devices either.
    server.commands([{"type": "device.upsert", "id": "phone-c", "model": "iphone-15-pro"}])
    wait_for(browser, lambda d: d.find_element(By.ID, "device-meta").text.startswith("phone-c"))
    browser.find_element(By.ID, "layout-grid").click()
    wait_for(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#grid .grid-row")) == 1)
    server.commands([{"type": "device.delete", "id": "phone-c"}])
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#grid .grid-row") == [],
             message="the grid kept a deleted device's row")
