// The Lock Screen: date (with the inline accessory), time, circular and rectangular
// accessories in vibrant mode, and the Live Activities in scene order (PR-6) with 14 pt
// margins; ended cards dimmed, stale cards marked. LA-17: in Always-On (`scene.alwaysOn`) the
// screen is dimmed, rendered in the Lock Screen's appearance (dark), and nothing animates.

import { h, reconcile, setText, setVars } from "../dom.js";
import { createFrame, updateFrame, createStatusBar, updateStatusBar, createWallpaper } from "./frame.js";
import { createCard, updateCard } from "./card.js";
import { createWidget, updateWidget } from "./widget.js";
import { timeText, dateText, shortDateText } from "../clock.js";
import { fragmentText } from "../fragment.js";

export class LockScreenView {
  constructor() {
    this.parts = createFrame({ label: "Lock Screen" });
    this.status = createStatusBar();
    this.date = h("span", { class: "ls-date-text" });
    this.inline = h("span", { class: "ls-inline" });
    this.time = h("div", { class: "ls-time" });
    this.accessories = h("div", { class: "ls-accessories" });
    this.list = h("div", { class: "ls-list", attrs: { role: "list", "aria-label": "Live Activities" } });
    this.empty = h("p", { class: "ls-empty", text: "No Live Activities" });
    this.camera = h("div", { class: "ls-camera", attrs: { "aria-hidden": "true" } });
    const screen = this.parts.screen;
    screen.classList.add("lock");
    screen.append(
      createWallpaper(), this.status.el, this.camera,
      h("div", { class: "ls-head" }, h("div", { class: "ls-date" }, this.date, this.inline), this.time, this.accessories),
      this.list, this.empty,
      h("div", { class: "ls-bottom", attrs: { "aria-hidden": "true" } }, h("span", { class: "ls-round ls-torch" }), h("span", { class: "ls-round ls-cam" })),
      h("div", { class: "home-indicator", attrs: { "aria-hidden": "true" } }));
    this.el = this.parts.box;
  }

  update(ctx) {
    const { device, activities, apps, widgets, animate, now } = ctx;
    this.zone = device.timeZone;
    const hw = updateFrame(this.parts, device);
    this.parts.screen.dataset.hardware = hw.kind;
    const alwaysOn = Boolean(device.scene?.alwaysOn);
    this.parts.screen.classList.toggle("always-on", alwaysOn);
    this.parts.screen.dataset.appearance = device.scene?.lockScreen?.appearance ?? this.parts.screen.dataset.appearance;
    this.camera.hidden = !device.dynamicIsland;
    setVars(this.parts.screen, { "--ls-margin": device.geometry?.lockScreenMargin ?? 14 });
    this.tick(now);
    const lock = device.scene?.lockScreen ?? { activities: [], widgets: [] };
    const accessoryWidgets = (lock.widgets ?? []).map((id) => widgets[id]).filter(Boolean);
    const inline = accessoryWidgets.find((w) => w.family === "accessoryInline");
    this.inlineWidget = inline;
    if (inline) setText(this.inline, inline.render?.html ? fragmentText(inline.render.html) : "");
    this.inline.hidden = !inline;
    reconcile(this.accessories, accessoryWidgets.filter((w) => w !== inline), (w) => w.id, createWidget,
      (el, w) => updateWidget(el, w, { app: apps[w.app], animate }));
    const shown = (lock.activities ?? []).map((id) => activities[id]).filter(Boolean);
    reconcile(this.list, shown, (a) => a.id, () => {
      const card = createCard();
      card.setAttribute("role", "listitem");
      return card;
    }, (el, a) => updateCard(el, a, { device, app: apps[a.app], animate }));
    this.empty.hidden = shown.length > 0;
  }

  /** Updates the clock faces (called every second). */
  tick(now) {
    updateStatusBar(this.status, timeText(now, this.zone));
    setText(this.time, timeText(now, this.zone));
    setText(this.date, this.inlineWidget ? shortDateText(now, this.zone) : dateText(now, this.zone));
  }
}
