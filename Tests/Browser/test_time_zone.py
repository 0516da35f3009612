"""SS-7 in the dashboard: each iPhone's status bar and Lock Screen show the wall time of the
device's own time zone, and change with it."""

from support import coffee_world, open_dashboard, wait_for


def text(driver, selector: str) -> str:
    return driver.execute_script(f"return document.querySelector('{selector}')?.textContent ?? ''")


def test_lock_screen_and_status_bar_follow_the_device_time_zone(browser, server):
    coffee_world(server)
    open_dashboard(browser, server, zoom=75)
    # The virtual clock is paused at 08:00Z (Sunday 22 November).
    wait_for(browser, lambda d: text(d, '[data-view="lock"] .ls-time') == "8:00",
             message="UTC device shows 8:00")
    status, _ = server.request("POST", "/v1/commands", {"commands": [
        {"type": "device.upsert", "id": "phone", "timeZone": "America/Los_Angeles"}]})
    assert status == 200
    # 08:00Z is 00:00 in Los Angeles (PST), the same Sunday.
    wait_for(browser, lambda d: text(d, '[data-view="lock"] .ls-time') == "0:00",
             message="the Lock Screen clock moves to Los Angeles time")
    assert text(browser, '[data-view="lock"] .ls-date-text') == "Sunday 22 November"
    status, _ = server.request("POST", "/v1/commands", {"commands": [
        {"type": "device.upsert", "id": "phone", "timeZone": "Asia/Kolkata"}]})
    assert status == 200
    wait_for(browser, lambda d: text(d, '[data-view="lock"] .ls-time') == "13:30")
    assert "13:30" in text(browser, '[data-view="island"] .status-bar')
