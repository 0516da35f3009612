// StandBy (landscape, charging): the top activity's Lock Screen presentation at 2× (PR-7),
// its background extended to the whole screen, or (PR-11, `standby.view` "minimal") its
// minimal presentation at the top beside the widgets, where a click sends the tap that goes
// full screen; without an activity, two small widgets side by side with their backgrounds
// removed (WK-8). Night Mode turns everything red monochrome.

import { h, reconcile, setVars, setText } from "../dom.js";
import { createFrame, updateFrame } from "./frame.js";
import { createCard, updateCard } from "./card.js";
import { createWidget, updateWidget } from "./widget.js";
import { timeText, dateText } from "../clock.js";
import { setFragment } from "../fragment.js";
import { readableOn } from "../color.js";
import { shownFragment, boxWidth, clamp } from "../measure.js";

export class StandByView {
  /** `onEnter()`: turn StandBy on; `onTap()`: a tap on the minimal presentation. */
  constructor({ onEnter, onTap }) {
    this.parts = createFrame({ landscape: true, label: "StandBy" });
    this.card = createCard();
    this.stage = h("div", { class: "sb-stage" }, this.card);
    this.widgets = h("div", { class: "sb-widgets" });
    this.clock = h("div", { class: "sb-clock" });
    this.date = h("div", { class: "sb-date" });
    this.enter = h("button", { class: "button sb-enter", type: "button", text: "Turn on StandBy", on: { click: () => onEnter?.() } });
    this.off = h("div", { class: "sb-off" }, this.clock, this.date, h("p", { class: "sb-off-note", text: "StandBy is off: this is a preview." }), this.enter);
    this.parts.screen.classList.add("standby");
    this.sensor = h("div", { class: "sb-sensor", attrs: { "aria-hidden": "true" } });
    this.minimalSlot = h("div", { class: "slot sb-minimal-slot" });
    this.minimal = h("button", { class: "sb-minimal island", type: "button", on: { click: () => onTap?.() } }, this.minimalSlot);
    this.parts.screen.append(this.stage, this.widgets, this.minimal, this.off, this.sensor);
    this.el = this.parts.box;
  }

  update(ctx) {
    const { device, activities, apps, widgets, animate, now } = ctx;
    this.zone = device.timeZone;
    updateFrame(this.parts, device);
    const standby = device.scene?.standby ?? null;
    // Off: a preview of what StandBy would show (the top island activity, PR-7), dimmed.
    const activityId = standby ? standby.activity : previewActivity(device, activities);
    const activity = activityId ? activities[activityId] : null;
    const screen = this.parts.screen;
    screen.classList.toggle("is-night", Boolean(standby?.night));
    screen.classList.toggle("is-off", !standby);
    screen.classList.toggle("is-preview", !standby && Boolean(activity));
    const minimal = Boolean(standby && activity && standby.view === "minimal");
    screen.dataset.state = !standby ? "off" : minimal ? "minimal" : activity ? "activity" : "widgets";
    this.stage.hidden = !activity || minimal;
    this.minimal.hidden = !minimal;
    if (minimal) this.showMinimal(activity, apps, animate, standby, device.geometry?.minimalWidth?.max ?? 45);
    if (activity && !minimal) {
      updateCard(this.card, activity, { device, app: apps[activity.app], animate });
      const background = apps[activity.app]?.identity?.background;
      const extend = (standby?.extendsBackground ?? true) !== false && Boolean(background);
      screen.classList.toggle("extends-background", extend);
      // PR-7: 2×, or less when the presentation would not fit the landscape screen (iPhone SE).
      const cardW = device.geometry?.lockScreenWidth ?? device.screen.width - 28;
      const cardH = activity.render?.layout?.lockScreen?.height ?? 160;
      const scale = standby?.scale ?? 2;
      const fit = Math.min(scale, (device.screen.height - 32) / cardW, (device.screen.width - 24) / cardH);
      this.fit = Math.floor(fit * 100) / 100;
      setVars(screen, { "--sb-bg": extend ? background : "#000000", "--sb-fit": this.fit });
    } else {
      this.fit = null;
      screen.classList.remove("extends-background");
      setVars(screen, { "--sb-bg": "#000000" });
    }
    const shownWidgets = (activity && !minimal) || !standby ? [] : (standby.widgets ?? []).map((id) => widgets[id]).filter(Boolean);
    this.widgets.hidden = shownWidgets.length === 0;
    reconcile(this.widgets, shownWidgets, (w) => w.id, createWidget,
      (el, w) => updateWidget(el, w, { app: apps[w.app], animate, mode: "standby" }));
    this.off.hidden = Boolean(standby);
    this.off.classList.toggle("over-preview", Boolean(activity));
    this.sensor.hidden = !device.dynamicIsland;
    this.tick(now);
  }

  // PR-11: the minimal presentation, a circle or an oval by its content, up to the model's
  // widest minimal view.
  showMinimal(activity, apps, animate, standby, maxWidth) {
    const identity = apps[activity.app]?.identity ?? {};
    setVars(this.minimalSlot, { "--tint": identity.tint ?? "#FFFFFF", "--tint-fg": readableOn(identity.tint) ?? "#000" });
    setFragment(this.minimalSlot, activity.render?.minimal ?? "", { animate });
    const height = standby.height;
    const width = clamp(boxWidth(shownFragment(this.minimalSlot)) + 10, height, maxWidth);
    setVars(this.minimal, { "--sb-min-w": width, "--sb-min-h": height });
    this.minimal.dataset.shape = width > height + 0.5 ? "oval" : "circle";
    this.minimal.setAttribute("aria-label", `${apps[activity.app]?.name ?? activity.app}: show full screen`);
  }

  tick(now) {
    setText(this.clock, timeText(now, this.zone));
    setText(this.date, dateText(now, this.zone));
  }
}

function previewActivity(device, activities) {
  const island = device.scene?.island ?? {};
  const candidates = [island.expanded?.activity, island.compact?.activity, ...(island.minimal ?? []).filter((m) => m.attached).map((m) => m.activity),
    ...(device.scene?.lockScreen?.activities ?? []).filter((id) => ["active", "stale"].includes(activities[id]?.activityState))];
  return candidates.find((id) => id && activities[id]) ?? null;
}
