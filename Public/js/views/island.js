// The Dynamic Island: a black pill (corner radius 44) around the camera that morphs between
// idle, compact (leading and trailing around the sensor gap), minimal (one attached, one
// detached circle) and expanded (leading, trailing, center, bottom). Sizes come from the
// scene (`/devices/<id>/scene/island`) and the device geometry; the morph is a CSS transition
// of width, height and radius (disabled in Always-On and under reduced motion).

import { h, setVars, setAttr } from "../dom.js";
import { setFragment, fragmentText } from "../fragment.js";
import { readableOn } from "../color.js";

const DETACHED_GAP = 6;

function slot(className) {
  return h("div", { class: `slot ${className}` });
}

export class Island {
  /** `onPress(activityId)`: a long press on a compact or minimal view (expands it). */
  constructor({ onPress } = {}) {
    this.lead = slot("slot-lead");
    this.trail = slot("slot-trail");
    this.attached = slot("slot-attached");
    this.detachedSlot = slot("slot-detached");
    this.x = { leading: slot("x-lead"), trailing: slot("x-trail"), center: slot("x-center"), bottom: slot("x-bottom") };
    const sensor = () => h("div", { class: "sensor", attrs: { "aria-hidden": "true" } });
    this.layers = {
      compact: h("div", { class: "layer layer-compact" }, this.lead, sensor(), this.trail),
      minimal: h("div", { class: "layer layer-minimal" }, this.attached, sensor()),
      expanded: h("div", { class: "layer layer-expanded" }, this.x.leading, sensor(), this.x.trailing, this.x.center, this.x.bottom),
    };
    this.pill = h("div", { class: "island-pill", dataset: { role: "island" } }, ...Object.values(this.layers));
    this.detached = h("div", { class: "island-detached" }, this.detachedSlot);
    this.el = h("div", { class: "island", attrs: { role: "group" } }, this.pill, this.detached);
    this.pressTargets = new Map();
    for (const target of [this.pill, this.detached]) {
      target.addEventListener("click", () => this.press(target));
      target.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          this.press(target);
        }
      });
    }
    this.onPress = onPress;
  }

  press(target) {
    const activity = this.pressTargets.get(target);
    if (activity && this.onPress) this.onPress(activity);
  }

  /** Renders the scene's island. `ctx`: {device, activities, apps, animate}. */
  update({ device, activities, apps, animate }) {
    const island = device.scene?.island ?? { mode: "none", width: 0, height: 0 };
    const geometry = device.geometry ?? {};
    const mode = island.mode;
    const hasIsland = device.dynamicIsland && island.width > 0;
    this.el.hidden = !hasIsland;
    this.el.dataset.mode = mode;
    const screen = this.el.closest(".screen");
    if (screen) screen.dataset.island = mode;
    this.el.classList.toggle("no-anim", !animate);
    if (!hasIsland) return;
    const minimal = island.minimal ?? [];
    const detached = mode === "minimal" ? minimal.find((m) => !m.attached) : null;
    const detW = detached ? detached.width ?? geometry.minimalWidth?.min ?? 36.67 : 0;
    const pillW = detached ? island.width - detW - DETACHED_GAP : island.width;
    setVars(this.el, {
      "--pill-w": pillW, "--pill-h": island.height, "--pill-r": island.cornerRadius ?? geometry.cornerRadius ?? 44,
      "--det-w": detW, "--det-gap": detached ? DETACHED_GAP : 0, "--det-h": detached ? island.height : 0,
      "--side-w": geometry.compactSide?.width ?? 52.33, "--sensor-w": geometry.cameraGap ?? 125.34,
      "--sensor-h": geometry.compactSide?.height ?? 36.67, "--xw": geometry.expandedWidth ?? island.width,
      "--xh": mode === "expanded" ? island.height : geometry.presentationHeight?.max ?? 160,
      "--keyline": island.keyline ?? null, "--island-bg": island.background ?? "#000000",
    });
    this.el.classList.toggle("has-keyline", Boolean(island.keyline) && device.appearance === "dark");
    for (const [name, layer] of Object.entries(this.layers)) layer.classList.toggle("is-active", name === mode);
    this.pressTargets.clear();
    const slotCtx = { activities, apps, animate };
    const label = [];
    if (mode === "compact" || (mode === "expanded" && island.compact)) {
      const activity = activities[island.compact?.activity];
      this.fill(this.lead, activity, "compactLeading", slotCtx);
      this.fill(this.trail, activity, "compactTrailing", slotCtx);
      if (mode === "compact" && activity) {
        this.pressTargets.set(this.pill, activity.id);
        label.push(`compact: ${describe(activity, apps)}`);
      }
    }
    const attached = minimal.find((m) => m.attached);
    if (mode === "minimal" || (mode === "expanded" && minimal.length)) {
      const a = activities[attached?.activity];
      const d = activities[detached?.activity ?? minimal.find((m) => !m.attached)?.activity];
      this.fill(this.attached, a, "minimal", slotCtx);
      this.fill(this.detachedSlot, d, "minimal", slotCtx);
      if (mode === "minimal") {
        if (a) this.pressTargets.set(this.pill, a.id);
        if (d) this.pressTargets.set(this.detached, d.id);
        label.push(`minimal: ${[a, d].filter(Boolean).map((x) => describe(x, apps)).join(" and ")}`);
      }
    }
    if (mode === "expanded") {
      const activity = activities[island.expanded?.activity];
      const render = activity?.render?.expanded ?? {};
      for (const region of ["leading", "trailing", "center", "bottom"]) this.fillHTML(this.x[region], render[region], activity, slotCtx);
      this.x.bottom.classList.toggle("is-empty", !render.bottom);
      this.x.center.classList.toggle("is-empty", !render.center);
      setAttr(this.layers.expanded, "inert", !device.scene?.interactive);
      if (activity) label.push(`expanded (${island.expanded.reason}): ${describe(activity, apps)}`);
    }
    if (mode === "none") label.push("idle");
    this.el.setAttribute("aria-label", `Dynamic Island, ${label.join("; ")}`);
    for (const target of [this.pill, this.detached]) {
      const activity = this.pressTargets.get(target);
      setAttr(target, "role", activity ? "button" : null);
      setAttr(target, "tabindex", activity ? "0" : null);
      setAttr(target, "aria-label", activity ? `Expand ${describe(activities[activity], apps)}` : null);
    }
    this.detached.hidden = !detached;
  }

  fill(el, activity, slotName, ctx) {
    this.fillHTML(el, activity?.render?.[slotName], activity, ctx);
  }

  fillHTML(el, html, activity, { apps, animate }) {
    const identity = apps[activity?.app]?.identity ?? {};
    setVars(el, { "--tint": identity.tint ?? "#FFFFFF", "--tint-fg": readableOn(identity.tint) ?? "#000" });
    el.dataset.activity = activity?.id ?? "";
    setFragment(el, html ?? "", { animate });
  }
}

function describe(activity, apps) {
  if (!activity) return "";
  const name = apps[activity.app]?.name ?? activity.app;
  const text = fragmentText(activity.render?.compactTrailing ?? activity.render?.minimal ?? "");
  return text ? `${name} — ${text}` : name;
}
