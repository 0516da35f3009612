"""The dashboard as a whole on the demo scenario: it loads without console errors, draws every
presentation of every demo iPhone, and is operable by keyboard with labelled controls,
sufficient contrast and reduced motion honoured."""

import os
import subprocess

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from support import CHROMIUM, make_driver, open_dashboard, wait_for

VIEWS = ("island", "lock", "standby", "home")


@pytest.fixture
def demo(start_server):
    return start_server(demo="always")


def test_page_loads_without_console_errors_and_draws_every_device(browser, demo):
    open_dashboard(browser, demo)
    devices = sorted(demo.state("/devices"))
    tabs = [t.get_attribute("data-id") for t in browser.find_elements(By.CSS_SELECTOR, "#device-tabs [role=tab]")]
    assert tabs == devices and len(devices) == 3
    for device in devices:
        browser.find_element(By.CSS_SELECTOR, f'#device-tabs [data-id="{device}"]').click()
        wait_for(browser, lambda d: d.execute_script("return document.getElementById('device-meta').textContent").startswith(device))
        scene = demo.state(f"/devices/{device}/scene")
        # Lock Screen: the scene's activities, in order.
        wait_for(browser, lambda d: d.execute_script(
            "return [...document.querySelectorAll('[data-view=\"lock\"] .la-card')].map(c => c.dataset.activity)") == scene["lockScreen"]["activities"])
        # Home Screen: the stack shows its top, once the device's widgets have arrived.
        top = scene["home"]["stacks"][0]["top"]
        wait_for(browser, lambda d: d.execute_script(
            "return document.querySelector('[data-view=\"home\"] .stack .widget.is-top')?.dataset.widget") == top)
        wait_for(browser, lambda d: d.execute_script("return document.querySelectorAll('#stage .widget.is-loading').length") == 0)
        for view in VIEWS:
            box = browser.find_element(By.CSS_SELECTOR, f'[data-view="{view}"] .frame-box')
            assert box.size["width"] > 100 and box.size["height"] > 100
    # Every operator panel renders when chosen.
    for panel in ("clock", "relevance", "composer", "apns", "diff", "warnings"):
        browser.find_element(By.ID, f"tab-{panel}").click()
        wait_for(browser, lambda d: d.find_element(By.ID, f"panel-{panel}").is_displayed())
    assert browser.execute_script("return document.getElementById('conn').dataset.state") == "live"
    assert browser.execute_script("return document.getElementById('rev').textContent").startswith("rev ")


SQUEEZED_TEXT = """
// Each text paragraph of a drawn widget shows at least one whole line, and none is drawn over
// the one before it (layout pixels, before the frame's zoom).
const bad = [];
for (const widget of document.querySelectorAll('[data-view="home"] .widget .islet-widget')) {
  if (!widget.offsetParent) continue;
  let previous = null;
  for (const p of widget.children) {
    if (p.tagName !== 'P' || !p.textContent.trim()) continue;
    const style = getComputedStyle(p);
    const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.2;
    const name = widget.dataset.kind + '/' + widget.dataset.family + ' ' + p.className;
    if (p.offsetHeight + 0.5 < line) bad.push(name + ': ' + p.offsetHeight + 'px for a ' + line + 'px line');
    if (previous && p.offsetTop + 0.5 < previous.offsetTop + previous.offsetHeight) bad.push(name + ': drawn over ' + previous.className);
    previous = p;
  }
}
return bad;
"""


def test_widget_text_is_never_cut_through_or_drawn_over(browser, server):
    # The demo's evening news, medium with more stories: the flex column squeezed its headline
    # to less than a line and drew the source over it (seen in a screenshot of the demo).
    stories = [{"headline": h, "source": s, "link": str(i)} for i, (h, s) in enumerate([
        ("App Shortcuts start timers from Siri", "Intent Post"),
        ("Smart Stacks learn the rhythm of the day", "Islet News"),
        ("Live Activities now end after eight hours", "Activity Weekly")])]
    server.commands([
        {"type": "device.upsert", "id": "phone", "model": "iphone-15-pro"},
        {"type": "app.upsert", "id": "com.example.news", "name": "News", "identity": {"tint": "#FF2D55", "background": "#FFFFFF"}},
        {"type": "widget.upsert", "id": "w-news", "app": "com.example.news", "kind": "news", "family": "systemMedium", "device": "phone"},
        {"type": "widget.setTimeline", "id": "w-news", "entries": [
            {"date": "2026-11-22T08:00:00Z", "content": {
                "category": "Evening Briefing", "headline": "StandBy turns red at night", "source": "Bedside Daily",
                "stories": stories}}]},
    ])
    open_dashboard(browser, server)
    wait_for(browser, lambda d: d.execute_script(
        "return document.querySelectorAll('[data-view=\"home\"] .widget .islet-news').length") == 1)
    wait_for(browser, lambda d: d.execute_script("return document.querySelectorAll('#stage .widget.is-loading').length") == 0)
    assert browser.execute_script(SQUEEZED_TEXT) == []


ACCESSIBLE_NAME = """
const unnamed = [];
for (const el of document.querySelectorAll('button, input, select, textarea, [role=button], [role=tab], [role=switch]')) {
  if (el.closest('[hidden], .layout-lab, [inert]') || el.type === 'hidden') continue;
  const labelled = el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')
    || (el.id && document.querySelector(`label[for="${CSS.escape(el.id)}"]`)) || el.closest('label')
    || (['BUTTON'].includes(el.tagName) || el.getAttribute('role')) && el.textContent.trim();
  if (!labelled) unnamed.push(el.outerHTML.slice(0, 120));
}
return unnamed;
"""

CONTRAST = """
const parse = (c) => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null; const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number); return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 }; };
const lum = ({ r, g, b }) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
const background = (el) => {
  for (let e = el; e; e = e.parentElement) {
    const s = getComputedStyle(e);
    if (s.backgroundImage !== 'none') return null;
    const c = parse(s.backgroundColor);
    if (c && c.a >= 0.95) return c;
  }
  return { r: 255, g: 255, b: 255, a: 1 };
};
const failures = [];
for (const root of arguments[0].map((s) => document.querySelector(s))) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!walker.currentNode.data.trim() || !el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
    const s = getComputedStyle(el);
    const fg = parse(s.color), bg = background(el);
    if (!fg || !bg || fg.a < 1) continue;
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const large = parseFloat(s.fontSize) >= 18.66 || (parseFloat(s.fontSize) >= 14 && Number(s.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) failures.push(`${ratio.toFixed(2)} ${el.tagName}.${el.className}: ${walker.currentNode.data.trim().slice(0, 40)}`);
  }
}
return failures;
"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_controls_are_labelled_and_text_has_contrast(browser, demo, scheme):
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
    open_dashboard(browser, demo)
    for panel in ("clock", "relevance", "composer", "apns", "diff", "warnings"):
        browser.find_element(By.ID, f"tab-{panel}").click()
        wait_for(browser, lambda d: d.find_element(By.ID, f"panel-{panel}").is_displayed())
        assert browser.execute_script(ACCESSIBLE_NAME) == [], f"unlabelled controls in {panel}"
        failures = browser.execute_script(CONTRAST, [".topbar", ".stage-toolbar", f"#panel-{panel}", ".panel-tabs", ".presentation figcaption"])
        assert failures == [], f"low contrast in {panel} ({scheme}):\n" + "\n".join(failures)


def test_keyboard_reaches_and_operates_the_controls(browser, demo):
    open_dashboard(browser, demo)
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    reached = []
    for _ in range(40):
        reached.append(browser.execute_script(
            "const e = document.activeElement; return e.id || e.dataset.id || e.getAttribute('aria-label') || e.textContent.trim().slice(0, 20)"))
        browser.switch_to.active_element.send_keys(Keys.TAB)
    for expected in ("iphone-15-pro", "appearance-light", "toggle-locked", "zoom", "tab-clock", "clock-mode-virtual"):
        assert expected in reached, f"{expected} not reachable by Tab: {reached}"
    # Tabs follow the arrow keys (WAI-ARIA), and the panel follows the tab.
    browser.find_element(By.ID, "tab-clock").send_keys(Keys.ARROW_RIGHT)
    wait_for(browser, lambda d: d.find_element(By.ID, "panel-relevance").is_displayed())
    assert browser.switch_to.active_element.get_attribute("id") == "tab-relevance"
    # Focus is visible.
    outline = browser.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"
    # Device tabs move with the arrow keys too, and change the device shown.
    browser.find_element(By.CSS_SELECTOR, '#device-tabs [data-id="iphone-15-pro"]').send_keys(Keys.ARROW_RIGHT)
    wait_for(browser, lambda d: d.execute_script("return document.getElementById('device-meta').textContent").startswith("iphone-16-pro-max"))


def test_reduced_motion_turns_the_morph_off(browser, demo):
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
    open_dashboard(browser, demo)
    durations = browser.execute_script(
        "return getComputedStyle(document.querySelector('[data-view=\"island\"] .island-pill')).transitionDuration")
    assert all(float(part.strip().rstrip("s")) < 0.01 for part in durations.split(","))


@pytest.mark.parametrize("width", [1280, 1600, 1920])
def test_panel_tabs_fit_without_a_scroll_bar(demo, width):
    driver = make_driver(width=width, height=900)
    try:
        open_dashboard(driver, demo)
        scroll, client = driver.execute_script(
            "const t = document.querySelector('.panel-tabs'); return [t.scrollWidth, t.clientWidth]")
        assert scroll <= client, f"the panel tabs need {scroll} px in {client} px at {width} px"
    finally:
        driver.quit()


def test_a_one_shot_headless_screenshot_two_seconds_in_shows_a_settled_page(demo):
    # What `chromium --headless --screenshot --virtual-time-budget=2000 URL` sees (no frames are
    # produced until the screenshot): the DOM after the same two seconds.
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1600,900",
         "--virtual-time-budget=2000", "--dump-dom", demo.url + "/"],
        capture_output=True, text=True, timeout=60).stdout
    assert 'data-panels="ready"' in dom, "the operator panels are filled"
    assert "data-first-island=" in dom, "the first island is drawn"
    assert 'data-state="live"' in dom, "the connection badge says Live"
    assert "is-loading" not in dom, "no widget is still loading"


@pytest.mark.allow_console(r"status of 401|WebSocket")
def test_a_page_without_a_valid_token_says_so_instead_of_connecting_for_ever(browser, start_server):
    server = start_server(token="dashboard-admin-token-0123")
    notice = lambda d: d.find_element(By.ID, "simulation-notice")  # noqa: E731
    browser.get(f"{server.url}/")
    wait_for(browser, lambda d: notice(d).is_displayed() and "needs a token" in notice(d).text,
             message="no notice that a token is needed")
    browser.get(f"{server.url}/#token=not-the-token")
    browser.refresh()
    wait_for(browser, lambda d: notice(d).is_displayed() and "refused this page's token" in notice(d).text,
             message="no notice that the token was refused")
    browser.get(f"{server.url}/#token={server.token}")
    browser.refresh()
    wait_for(browser, lambda d: d.execute_script("return document.getElementById('conn').dataset.state") == "live",
             message="the stream never went live with the token")
    assert not notice(browser).is_displayed()


@pytest.mark.parametrize("width", [520, 600, 700])
def test_a_narrow_window_keeps_the_connection_badge_in_view(demo, width):
    # Below ~700 px the one-row top bar overflowed: the page scrolled sideways and the
    # Live / Offline badge and the revision were off screen.
    driver = make_driver(width=width, height=900)
    try:
        open_dashboard(driver, demo)
        in_view = """
            const r = document.getElementById(arguments[0]).getBoundingClientRect();
            return r.width > 0 && r.left >= 0 && r.right <= document.documentElement.clientWidth && r.top >= 0;"""
        overflow = "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        assert driver.execute_script(overflow) <= 0, "the page scrolls sideways"
        assert driver.execute_script(in_view, "conn") and driver.execute_script(in_view, "rev")
        # Every device tab is reachable: the tabs scroll within the bar, not the page.
        tabs = driver.execute_script("const t = document.getElementById('device-tabs'); return [t.scrollWidth, t.clientWidth, t.getBoundingClientRect().right]")
        assert tabs[2] <= driver.execute_script("return document.documentElement.clientWidth")
        if os.environ.get("ISLET_BROWSER_SHOTS"):
            driver.save_screenshot(os.path.join(os.environ["ISLET_BROWSER_SHOTS"], f"narrow-{width}.png"))
        # Offline is the state the badge most needs to show, and its text is the longest. It
        # lasts a few hundred milliseconds between reconnection attempts: the layout is read in
        # the same script that sees it, not in a later call (under load the badge had gone back
        # to "Connecting…", its retry button hidden, by then).
        demo.stop()
        offline = wait_for(driver, lambda d: d.execute_script(f"""
            const inView = (id) => {{ {in_view.replace("arguments[0]", "id")} }};
            if (!document.getElementById('conn-text').textContent.includes('retrying')) return null;
            return [inView('conn'), inView('conn-retry'), {overflow.replace("return ", "")}];"""), timeout=15)
        assert offline[2] <= 0, "the page scrolls sideways once offline"
        assert offline[0] and offline[1], f"the badge or its retry button is out of view: {offline}"
    finally:
        driver.quit()


def countdowns(driver, root: str) -> list:
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0] + ' [data-countdown-to]')].map((e) => e.textContent)", root)


def test_grid_countdowns_tick_like_the_stage(browser, server):
    server.commands([
        {"type": "device.upsert", "id": "phone", "model": "iphone-15-pro"},
        {"type": "app.upsert", "id": "com.example.timer", "name": "Timer"},
        {"type": "activity.request", "id": "t1", "app": "com.example.timer", "device": "phone", "source": "intent",
         "attributesType": "TimerAttributes", "attributes": {"name": "Tea"},
         "content": {"state": {"endsAt": "2026-11-22T10:00:00Z", "paused": False, "remainingSeconds": 7200}}},
    ])
    open_dashboard(browser, server, layout="grid", views="island,lock")
    wait_for(browser, lambda d: len(countdowns(d, "#grid")) >= 2, message="the grid shows no countdown")
    first = countdowns(browser, "#grid")
    # A minute of simulated time a second: every tick moves the countdowns, with no new revision.
    server.commands([{"type": "clock.set", "mode": "virtual", "rate": 60}])
    wait_for(browser, lambda d: all(a != b for a, b in zip(first, countdowns(d, "#grid"))),
             message=f"the grid's countdowns stay at {first}")


@pytest.mark.allow_console(r"status of 409")
def test_a_refused_switch_goes_back_and_the_next_success_clears_the_error(browser, server):
    server.commands([{"type": "device.upsert", "id": "phone", "model": "iphone-14-pro", "iosVersion": "16.4"}])
    open_dashboard(browser, server)
    status = lambda d: d.execute_script("const s = document.getElementById('device-status'); return [s.dataset.kind ?? '', s.textContent]")  # noqa: E731
    checked = lambda d, name: d.execute_script(f"return document.getElementById('toggle-{name}').checked")  # noqa: E731
    # StandBy needs iOS 17: the server refuses, and the switch shows the device's state again.
    browser.find_element(By.CSS_SELECTOR, "label[for=toggle-standby]").click()
    wait_for(browser, lambda d: status(d)[0] == "error" and "StandBy needs iOS 17" in status(d)[1])
    wait_for(browser, lambda d: not checked(d, "standby"), message="the refused StandBy switch stayed on")
    assert server.state("/devices/phone/standby") is False
    # An accepted change clears the error line.
    browser.find_element(By.CSS_SELECTOR, "label[for=toggle-locked]").click()
    wait_for(browser, lambda d: server.state("/devices/phone/locked") is True)
    wait_for(browser, lambda d: status(d) == ["", ""], message="the error stayed after a success")
    assert checked(browser, "locked")
