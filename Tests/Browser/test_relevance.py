"""The relevance panel: dragging a weight shows the trial forecast next to the current one,
applying it changes the stack's top on the Home Screen, and per-stack overrides work."""

import os

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from support import open_dashboard, stack_world, wait_for

stack_top = lambda d: d.execute_script("return document.querySelector('[data-view=\"home\"] .stack')?.dataset.top")
top_row = lambda d: d.execute_script("return document.querySelector('#panel-relevance tr.is-top th')?.textContent")


def slide(browser, key: str, steps: int, direction=Keys.ARROW_LEFT):
    slider = browser.find_element(By.CSS_SELECTOR, f'#panel-relevance input[data-key="{key}"]')
    slider.send_keys(direction * steps)
    return slider


def test_weight_sliders_change_the_stack_top(browser, server):
    stack_world(server)
    open_dashboard(browser, server, zoom=60, panel="relevance")
    wait_for(browser, lambda d: stack_top(d) == "w-news", message="news should be on top with habit weight 1")
    wait_for(browser, lambda d: (top_row(d) or "").startswith("News"))
    # The 24-hour chart of the current weights.
    wait_for(browser, lambda d: d.execute_script("return document.querySelectorAll('#panel-relevance .lane-now rect').length") > 0)

    # Drag habit from 1.00 to 0.00 with the keyboard (step 0.05): a trial, not yet applied.
    slider = slide(browser, "w:habit", 20)
    assert slider.get_attribute("value") == "0"
    wait_for(browser, lambda d: d.execute_script("return document.querySelectorAll('#panel-relevance .lane-trial rect').length") > 0,
             message="the trial forecast lane never appeared")
    trial_top = browser.execute_script("return document.querySelector('#panel-relevance .lane-trial rect').dataset.widget")
    assert trial_top == "w-weather"
    assert stack_top(browser) == "w-news", "a trial must not change the live stack"
    assert server.state("/relevance/weights")["habit"] == 1

    browser.execute_script("""
        window.__rotation = [];
        const animate = Element.prototype.animate;
        Element.prototype.animate = function (...args) {
          if (this.closest('.stack')) window.__rotation.push(this.dataset.widget);
          return animate.apply(this, args);
        };
    """)
    browser.find_element(By.XPATH, "//section[@id='panel-relevance']//button[normalize-space()='Apply']").click()
    wait_for(browser, lambda d: stack_top(d) == "w-weather", message="applying the weights did not change the top")
    # The rotation animates: the old top leaves and the new one comes in.
    assert sorted(browser.execute_script("return window.__rotation")) == ["w-news", "w-weather"]
    wait_for(browser, lambda d: (top_row(d) or "").startswith("Weather"))
    assert server.state("/relevance/weights")["habit"] == 0
    assert server.state("/stacks/phone.home/top") == "w-weather"
    # The trial lane goes away once applied.
    wait_for(browser, lambda d: d.execute_script("return document.querySelectorAll('#panel-relevance .lane-trial').length") == 0)


def test_stack_override_applies_on_release(browser, server):
    stack_world(server)
    open_dashboard(browser, server, zoom=60, panel="relevance")
    wait_for(browser, lambda d: stack_top(d) == "w-news")
    browser.find_element(By.CSS_SELECTOR, 'label[for="rel-scope-stack"]').click()
    wait_for(browser, lambda d: d.execute_script("return document.getElementById('rel-scope-stack').checked"))
    browser.find_element(By.CSS_SELECTOR, 'label[for="rel-live"]').click()
    slider = slide(browser, "w:habit", 20)  # habit 1 → 0 for this stack only
    slider.send_keys(Keys.TAB)  # the release (change event) applies it at once
    wait_for(browser, lambda d: stack_top(d) == "w-weather")
    relevance = server.state("/stacks/phone.home/relevance")
    assert relevance["weights"]["habit"] == 0 and relevance["overrides"], relevance
    assert server.state("/relevance/weights")["habit"] == 1, "the global weights are untouched"
    # Clearing the overrides brings the global weights (and news) back.
    browser.find_element(By.XPATH, "//section[@id='panel-relevance']//button[normalize-space()='Clear overrides']").click()
    wait_for(browser, lambda d: stack_top(d) == "w-news")


why_top = lambda d: d.execute_script("const p = document.querySelector('#panel-relevance .why-top'); return p && !p.hidden ? p.textContent : ''")  # noqa: E731


def test_a_top_kept_by_ss5_says_why(browser, server):
    # SS-5: a better widget waits for the top's minimum dwell and must beat it by more than the
    # hysteresis. The panel marked a TOP that was not #1 without saying why.
    stack_world(server)
    server.commands([{"type": "relevance.setWeights", "minDwellSeconds": 900}])
    open_dashboard(browser, server, zoom=60, panel="relevance")
    wait_for(browser, lambda d: (top_row(d) or "").startswith("News"))
    assert why_top(browser) == "", "News is #1 and on top: nothing to explain"

    server.commands([{"type": "relevance.setWeights", "weights": {"habit": 0}}])  # Weather now ranks first
    assert server.state("/stacks/phone.home/top") == "w-news"
    wait_for(browser, lambda d: "SS-5 minimum dwell" in why_top(d), message="no reason given for the kept top")
    assert why_top(browser) == ("News kept on top: SS-5 minimum dwell (15 min, on top since 08:00:00) until 08:15:00 UTC; "
                                "then Weather can take over.")
    if os.environ.get("ISLET_BROWSER_SHOTS"):
        browser.save_screenshot(os.path.join(os.environ["ISLET_BROWSER_SHOTS"], "why-top.png"))

    # Within the dwell, a hysteresis larger than Weather's lead is the reason, not the dwell: the
    # engine would not rotate when the dwell ends either.
    server.commands([{"type": "relevance.setWeights", "hysteresis": 5}])
    wait_for(browser, lambda d: "not more than the hysteresis 5.00 (SS-5)" in why_top(d), message=why_top(browser))

    # Past the dwell, a hysteresis larger than Weather's lead still keeps News.
    server.commands([{"type": "relevance.setWeights", "hysteresis": 5}, {"type": "clock.advance", "to": "2026-11-22T08:20:00Z"}])
    wait_for(browser, lambda d: "not more than the hysteresis 5.00 (SS-5)" in why_top(d), message=why_top(browser))
    assert server.state("/stacks/phone.home/top") == "w-news"

    # Within the hysteresis again, Weather takes over and the note goes.
    server.commands([{"type": "relevance.setWeights", "hysteresis": 0.05}])
    wait_for(browser, lambda d: (top_row(d) or "").startswith("Weather") and why_top(d) == "")


def test_the_rotation_cap_and_smart_rotate_off_are_named_too(browser, server):
    # SS-5's other reasons for a top that is not #1: the better widget used up its rotations for
    # the day, or the stack does not rotate at all (its first widget stays).
    stack_world(server)
    server.commands([{"type": "config.set", "values": {"stackRotationsPerWidgetPerDay": 0}}])
    open_dashboard(browser, server, zoom=60, panel="relevance")
    wait_for(browser, lambda d: (top_row(d) or "").startswith("News"))
    server.commands([{"type": "relevance.setWeights", "weights": {"habit": 0}}])  # Weather ranks first
    assert server.state("/stacks/phone.home/top") == "w-news"
    wait_for(browser, lambda d: "the cap (SS-5)" in why_top(d), message=why_top(browser))
    assert why_top(browser) == "News kept on top: Weather has rotated to the top 0 times in 24 hours, the cap (SS-5)."

    server.commands([{"type": "relevance.setWeights", "weights": {"habit": 1}},
                     {"type": "stack.upsert", "id": "phone.home", "smartRotate": False}])
    assert server.state("/stacks/phone.home/top") == "w-weather", "the first widget stays on top"
    wait_for(browser, lambda d: "Smart Rotate is off" in why_top(d), message=why_top(browser))
    assert why_top(browser).startswith("Weather kept on top: Smart Rotate is off for this stack")
