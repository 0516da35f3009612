// The Dynamic Island: a black pill (corner radius 44) around the camera that morphs between
// idle, compact (leading and trailing around the sensor gap), minimal (one attached, one
// detached circle or oval) and expanded (leading, trailing, center, bottom). Sizes come from
// the scene (`/devices/<id>/scene/island`) and the device geometry; the morph is a CSS
// transition of width, height and radius (disabled in Always-On and under reduced motion).
//
// PR-10: compact and minimal are snug. The document gives the model's maximum (each compact
// side, the minimal width range); the island measures the content it shows and sizes each
// side to it, up to that maximum, so a short value gives a narrow island. The sensor stays on
// the camera: a compact island with a narrow leading and a wide trailing side is asymmetric.

import { h, setVars, setAttr } from "../dom.js";
import { setFragment, fragmentText } from "../fragment.js";
import { readableOn } from "../color.js";
import { shownFragment, boxWidth, clamp } from "../measure.js";

const DETACHED_GAP = 6;
// Room beside compact content: the slot's outer padding (6 pt, CSS) and 4 pt toward the sensor.
const COMPACT_PAD = 10;
// Room around minimal content inside its circle.
const MINIMAL_PAD = 10;

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
    // Widths are measured from rendered text: measure again once web fonts have loaded.
    document.fonts?.addEventListener("loadingdone", () => this.shaped && this.shape(...this.shaped));
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
    for (const [name, layer] of Object.entries(this.layers)) layer.classList.toggle("is-active", name === mode);
    this.pressTargets.clear();
    const ctx = { activities, apps, animate, island, mode };
    const label = [...this.fillCompact(ctx), ...this.fillMinimal(ctx), ...this.fillExpanded(ctx, device)];
    this.shaped = [island, device, detached];
    this.shape(island, device, detached);
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

  // The pill's size and radius (the morph), the detached circle, the regions' geometry; the
  // snug sides are measured from the content just filled in (PR-10).
  shape(island, device, detached) {
    const geometry = device.geometry ?? {};
    const height = geometry.compactSide?.height ?? 36.67;
    const sensorW = geometry.cameraGap ?? 125.34;
    const sideMax = geometry.compactSide?.width ?? 52.33;
    const minimal = { min: geometry.minimalWidth?.min ?? 36.67, max: geometry.minimalWidth?.max ?? 45 };
    const need = (slot, pad) => boxWidth(shownFragment(slot)) + pad;
    // An empty compact side keeps the pill's round end (half its height).
    const leadW = clamp(need(this.lead, COMPACT_PAD), height / 2, sideMax);
    const trailW = clamp(need(this.trail, COMPACT_PAD), height / 2, sideMax);
    const attachedW = clamp(need(this.attached, MINIMAL_PAD), minimal.min, minimal.max);
    const detW = detached ? clamp(need(this.detachedSlot, MINIMAL_PAD), minimal.min, minimal.max) : 0;
    let pillW = island.width;
    let sensorAt = island.width / 2; // where the camera's centre is, from the pill's left edge
    if (island.mode === "compact") {
      pillW = leadW + sensorW + trailW;
      sensorAt = leadW + sensorW / 2;
    } else if (island.mode === "minimal") {
      pillW = attachedW + sensorW;
      sensorAt = attachedW + sensorW / 2;
    }
    const total = pillW + (detached ? DETACHED_GAP + detW : 0);
    setVars(this.el, {
      "--pill-w": pillW, "--pill-h": island.height, "--shift": total / 2 - sensorAt,
      "--pill-r": island.cornerRadius ?? geometry.cornerRadius ?? 44,
      "--det-w": detW, "--det-gap": detached ? DETACHED_GAP : 0, "--det-h": detached ? island.height : 0,
      "--side-w": sideMax, "--lead-w": leadW, "--trail-w": trailW, "--attached-w": attachedW,
      "--sensor-w": sensorW, "--sensor-h": height, "--xw": geometry.expandedWidth ?? island.width,
      "--xh": island.mode === "expanded" ? island.height : geometry.presentationHeight?.max ?? 160,
      "--keyline": island.keyline ?? null, "--island-bg": island.background ?? "#000000",
    });
    // For captions and tests: the drawn width and, in minimal, the detached view's shape.
    this.el.dataset.width = String(Math.round(pillW * 100) / 100);
    this.el.dataset.detachedShape = !detached ? "" : detW > minimal.min + 0.5 ? "oval" : "circle";
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
