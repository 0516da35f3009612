"""SS-7 in the dashboard: each iPhone's status bar and Lock Screen show the wall time of the
device's own time zone, and change with it."""

from selenium.webdriver.common.by import By

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


def kathmandu_stack(server):
    """A Weather/News stack on a device in Asia/Kathmandu (UTC+5:45) where News was used in the
    local hour 14 of the last two days: at 08:00Z (13:45 there) Weather leads, at 08:15Z News."""
    server.commands([
        {"type": "device.upsert", "id": "phone", "model": "iphone-15-pro", "timeZone": "Asia/Kathmandu"},
        {"type": "app.upsert", "id": "com.example.weather", "name": "Weather"},
        {"type": "app.upsert", "id": "com.example.news", "name": "News"},
        {"type": "widget.upsert", "id": "w-weather", "app": "com.example.weather", "kind": "weather", "family": "systemSmall", "device": "phone"},
        {"type": "widget.upsert", "id": "w-news", "app": "com.example.news", "kind": "news", "family": "systemSmall", "device": "phone"},
        {"type": "widget.setTimeline", "id": "w-weather", "entries": [{"date": "2026-11-22T00:00:00Z", "relevance": {"score": 100, "duration": 86400},
                                                                       "content": {"location": "Kathmandu", "temperature": 9, "condition": "Sunny"}}]},
        {"type": "widget.setTimeline", "id": "w-news", "entries": [{"date": "2026-11-22T00:00:00Z", "relevance": {"score": 100, "duration": 86400},
                                                                    "content": {"headline": "Tops of the hour are local"}}]},
        {"type": "widget.interact", "id": "w-news", "at": "2026-11-21T08:30:00Z"},
        {"type": "widget.interact", "id": "w-news", "at": "2026-11-20T08:30:00Z"},
        {"type": "stack.upsert", "id": "phone.home", "device": "phone", "family": "systemSmall", "widgets": ["w-weather", "w-news"]},
        {"type": "relevance.setWeights", "weights": {"timeline": 1, "habit": 1, "freshness": 0, "rotationPenalty": 0},
         "minDwellSeconds": 0, "hysteresis": 0.05},
    ])


def test_step_reaches_the_local_top_of_the_hour_of_a_quarter_hour_zone(browser, server):
    # SS-7: the stack re-ranks at 14:00 in Kathmandu, 08:15Z; the panel used to name (and step
    # to) the UTC top of the hour, 09:00Z, past the re-ranking.
    kathmandu_stack(server)
    assert server.state("/stacks/phone.home/top") == "w-weather"
    open_dashboard(browser, server, panel="clock")
    wait_for(browser, lambda d: "top of the hour in Asia/Kathmandu (ranking features) at 08:15:00" in text(d, "#panel-clock .next-transition"),
             message="the Clock panel does not name the device's local top of the hour")
    browser.find_element(By.XPATH, "//section[@id='panel-clock']//button[normalize-space()='Step to next transition']").click()
    wait_for(browser, lambda d: server.request("GET", "/v1/clock")[1]["result"]["now"] == "2026-11-22T08:15:00Z",
             message="Step did not stop at the local top of the hour")
    assert server.state("/stacks/phone.home/top") == "w-news"
    wait_for(browser, lambda d: "Stepped to top of the hour in Asia/Kathmandu" in text(d, "#panel-clock .panel-status"))
