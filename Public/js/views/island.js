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
    const mode = island.mode;
    const hasIsland = device.dynamicIsland && island.width > 0;
    this.el.hidden = !hasIsland;
    this.el.dataset.mode = mode;
    const screen = this.el.closest(".screen");
    if (screen) screen.dataset.island = mode;
    this.el.classList.toggle("no-anim", !animate);
    if (!hasIsland) return;
    const detached = mode === "minimal" ? (island.minimal ?? []).find((m) => !m.attached) : null;
    this.shape(island, device, detached);
    for (const [name, layer] of Object.entries(this.layers)) layer.classList.toggle("is-active", name === mode);
    this.pressTargets.clear();
    const ctx = { activities, apps, animate, island, mode };
    const label = [...this.fillCompact(ctx), ...this.fillMinimal(ctx), ...this.fillExpanded(ctx, device)];
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

  // The pill's size and radius (the morph), the detached circle, the regions' geometry.
  shape(island, device, detached) {
    const geometry = device.geometry ?? {};
    const detW = detached ? detached.width ?? geometry.minimalWidth?.min ?? 36.67 : 0;
    setVars(this.el, {
      "--pill-w": detached ? island.width - detW - DETACHED_GAP : island.width, "--pill-h": island.height,
      "--pill-r": island.cornerRadius ?? geometry.cornerRadius ?? 44,
      "--det-w": detW, "--det-gap": detached ? DETACHED_GAP : 0, "--det-h": detached ? island.height : 0,
      "--side-w": geometry.compactSide?.width ?? 52.33, "--sensor-w": geometry.cameraGap ?? 125.34,
      "--sensor-h": geometry.compactSide?.height ?? 36.67, "--xw": geometry.expandedWidth ?? island.width,
      "--xh": island.mode === "expanded" ? island.height : geometry.presentationHeight?.max ?? 160,
      "--keyline": island.keyline ?? null, "--island-bg": island.background ?? "#000000",
    });
    this.el.classList.toggle("has-keyline", Boolean(island.keyline) && device.appearance === "dark");
  }

  // Compact (also filled while expanded, so the collapse shows it at once).
  fillCompact({ activities, apps, island, mode, ...ctx }) {
    if (mode !== "compact" && !(mode === "expanded" && island.compact)) return [];
    const activity = activities[island.compact?.activity];
    this.fill(this.lead, activity, "compactLeading", { apps, ...ctx });
    this.fill(this.trail, activity, "compactTrailing", { apps, ...ctx });
    if (mode !== "compact" || !activity) return [];
    this.pressTargets.set(this.pill, activity.id);
    return [`compact: ${describe(activity, apps)}`];
  }

  fillMinimal({ activities, apps, island, mode, ...ctx }) {
    const minimal = island.minimal ?? [];
    if (mode !== "minimal" && !(mode === "expanded" && minimal.length)) return [];
    const attached = activities[minimal.find((m) => m.attached)?.activity];
    const detached = activities[minimal.find((m) => !m.attached)?.activity];
    this.fill(this.attached, attached, "minimal", { apps, ...ctx });
    this.fill(this.detachedSlot, detached, "minimal", { apps, ...ctx });
    if (mode !== "minimal") return [];
    if (attached) this.pressTargets.set(this.pill, attached.id);
    if (detached) this.pressTargets.set(this.detached, detached.id);
    return [`minimal: ${[attached, detached].filter(Boolean).map((x) => describe(x, apps)).join(" and ")}`];
  }

  fillExpanded({ activities, apps, island, mode, animate }, device) {
    if (mode !== "expanded") return [];
    const activity = activities[island.expanded?.activity];
    const render = activity?.render?.expanded ?? {};
    for (const region of ["leading", "trailing", "center", "bottom"]) this.fillHTML(this.x[region], render[region], activity, { apps, animate });
    this.x.bottom.classList.toggle("is-empty", !render.bottom);
    this.x.center.classList.toggle("is-empty", !render.center);
    // PR-8: controls work only when the device is unlocked.
    setAttr(this.layers.expanded, "inert", !device.scene?.interactive);
    return activity ? [`expanded (${island.expanded.reason}): ${describe(activity, apps)}`] : [];
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
