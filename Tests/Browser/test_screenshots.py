"""Screenshots for the README, taken from the demo scenario on a paused virtual clock:
each presentation (island, Lock Screen, StandBy, Home Screen) of an iPhone 15 Pro and an
iPhone SE, light and dark, at 100 % zoom (1 pt = 1 px), plus the whole dashboard, and the
iPhone 15 Pro's StandBy in Night Mode and in its minimal view (PR-11) and its Always-On Lock
Screen (LA-17).

Written to reports/screenshots/ (ignored by git), or to $ISLET_SCREENSHOTS_DIR:
`scripts/screenshots` sets it to docs/screenshots/ to refresh the README's images on purpose."""

import os
from pathlib import Path

from selenium.webdriver.common.by import By

from support import ROOT, make_driver, open_dashboard, wait_for

OUT = Path(os.environ.get("ISLET_SCREENSHOTS_DIR", ROOT / "reports" / "screenshots"))
FILES = {"island": "island", "lock": "lock-screen", "standby": "standby", "home": "home-screen"}

SETTLED = """
return document.fonts.status === 'loaded'
  && document.querySelectorAll('#stage .widget.is-loading').length === 0
  && document.getAnimations().every((a) => a.playState !== 'running')
  && document.querySelector('#stage .frame-box .screen')?.dataset.appearance === arguments[0];
"""


def settle(driver, appearance):
    wait_for(driver, lambda d: d.execute_script(SETTLED, appearance), timeout=15, message="the page never settled")


def shoot(driver, view, name):
    OUT.mkdir(parents=True, exist_ok=True)
    driver.find_element(By.CSS_SELECTOR, f'[data-view="{view}"] .frame-box').screenshot(str(OUT / f"{name}.png"))
    return OUT / f"{name}.png"


def set_device(server, device, **fields):
    status, reply = server.request("PUT", f"/v1/devices/{device}", fields)
    assert status == 200, reply


def test_screenshots(start_server):
    server = start_server(demo="always")
    written = []
    driver = make_driver(2400, 1500)
    try:
        # The whole dashboard, light and dark (the browser's scheme and the device's appearance).
        for scheme in ("light", "dark"):
            driver.set_window_size(1600, 1000)
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            set_device(server, "iphone-15-pro", appearance=scheme)
            open_dashboard(driver, server, device="iphone-15-pro", panel="relevance")
            wait_for(driver, lambda d: d.execute_script("return document.querySelectorAll('#panel-relevance .lane-now rect').length") > 0)
            settle(driver, scheme)
            path = OUT / f"dashboard-{scheme}.png"
            OUT.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(path))
            written.append(path)
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        driver.set_window_size(2400, 1500)

        for device in ("iphone-15-pro", "iphone-se"):
            views = ("island", "lock", "home") if device == "iphone-15-pro" else ("lock", "home")
            for appearance in ("light", "dark"):
                set_device(server, device, appearance=appearance, locked=False, standby=False, nightMode=False)
                open_dashboard(driver, server, device=device, zoom=100, panel="clock")
                settle(driver, appearance)
                for view in views:
                    written.append(shoot(driver, view, f"{device}-{FILES[view]}-{appearance}"))
                set_device(server, device, locked=True, standby=True)
                wait_for(driver, lambda d: d.execute_script(
                    "return document.querySelector('[data-view=\"standby\"] .screen').dataset.state") != "off")
                settle(driver, appearance)
                written.append(shoot(driver, "standby", f"{device}-{FILES['standby']}-{appearance}"))
            if device == "iphone-15-pro":
                set_device(server, device, nightMode=True)
                wait_for(driver, lambda d: d.execute_script(
                    "return document.querySelector('[data-view=\"standby\"] .screen').classList.contains('is-night')"))
                settle(driver, "dark")
                written.append(shoot(driver, "standby", f"{device}-standby-night"))
                # PR-11: StandBy's minimal presentation beside the widgets.
                set_device(server, device, nightMode=False, standbyView="minimal")
                wait_for(driver, lambda d: d.execute_script(
                    "return document.querySelector('[data-view=\"standby\"] .screen').dataset.state") == "minimal")
                settle(driver, "dark")
                written.append(shoot(driver, "standby", f"{device}-standby-minimal"))
                # LA-17: the locked Lock Screen dimmed to Always-On.
                set_device(server, device, standby=False, standbyView="fullScreen", alwaysOn=True)
                wait_for(driver, lambda d: d.execute_script(
                    "return document.querySelector('[data-view=\"lock\"] .screen').classList.contains('always-on')"))
                settle(driver, "dark")
                written.append(shoot(driver, "lock", f"{device}-lock-screen-always-on"))
                set_device(server, device, alwaysOn=False)
                # Expanded: a long press on the island (it stays while the clock is paused).
                set_device(server, device, locked=False, standby=False, nightMode=False)
                island = server.state(f"/devices/{device}/scene/island")
                target = island["minimal"][0]["activity"] if island["minimal"] else island["compact"]["activity"]
                server.request("POST", f"/v1/devices/{device}/press", {"activity": target})
                for appearance in ("light", "dark"):
                    set_device(server, device, appearance=appearance)
                    wait_for(driver, lambda d: d.execute_script(
                        "return document.querySelector('[data-view=\"island\"] .island').dataset.mode") == "expanded")
                    settle(driver, appearance)
                    written.append(shoot(driver, "island", f"{device}-island-expanded-{appearance}"))
            else:
                # An alerting update: a device without an island shows a banner (LA-10).
                set_device(server, device, locked=False, standby=False)
                # LA-15: an activity of this phone (the demo's SE runs the ride).
                own = next(a for a in server.state("/activities").values()
                           if a.get("device") == device and a["activityState"] == "active")
                status, _ = server.request("PATCH", f"/v1/activities/{own['id']}",
                                           {"content": {"state": own["content"]["state"]}, "alert": {"title": "Update", "body": "On the way"}})
                assert status == 200
                for appearance in ("light", "dark"):
                    set_device(server, device, appearance=appearance)
                    wait_for(driver, lambda d: d.execute_script("return !document.querySelector('[data-view=\"island\"] .banner').hidden"))
                    settle(driver, appearance)
                    written.append(shoot(driver, "island", f"{device}-{FILES['island']}-{appearance}"))
    finally:
        driver.quit()
    assert len(written) == 2 + 2 * 2 * 4 + 1 + 2 + 2
    for path in written:
        assert path.stat().st_size > 10_000, f"{path} looks empty"
