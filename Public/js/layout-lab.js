// Layout warnings measured in the browser: every activity and widget of the selected device is
// laid out off screen with the device's own CSS and geometry (at 1 pt = 1 px), then measured:
// compact content wider than its slot, a compact side with much empty space (PR-10: the snug
// island carries it beside the sensor), expanded or Lock Screen content taller than 160 pt or
// in the in-between band (PR-5), content under the sensor gap, and more than four pieces of
// information in a small widget.

import { h, setVars } from "./dom.js";
import { setFragment } from "./fragment.js";
import { createCard, updateCard } from "./views/card.js";
import { createWidget, updateWidget } from "./views/widget.js";
import { boxWidth, inkRects, inkWidth } from "./measure.js";

const EPS = 0.5;
// PR-10: empty space in a compact side worth a warning: at least this many points, and at
// least a third of the side's content box.
const WASTE_MIN = 12;
const round = (n) => Math.round(n * 10) / 10;

export class LayoutLab {
  constructor() {
    this.el = h("div", { class: "layout-lab", attrs: { "aria-hidden": "true", inert: "" } });
    document.body.append(this.el);
  }

  /** Returns [{severity, target, presentation, message, activity?, widget?}] for a device. */
  measure({ device, activities, apps, widgets, config }) {
    const out = [];
    this.el.replaceChildren();
    this.el.dataset.appearance = device.appearance === "dark" ? "dark" : "light";
    const geometry = device.geometry ?? {};
    const short = config.shortBandMaxHeight ?? 100;
    const tall = config.tallBandMinHeight ?? 140;
    const max = geometry.presentationHeight?.max ?? 160;
    const shownIds = new Set(device.scene?.lockScreen?.activities ?? []);
    const list = Object.values(activities).filter((a) => shownIds.has(a.id) || ["active", "stale"].includes(a.activityState));
    for (const activity of list) {
      const name = `${apps[activity.app]?.name ?? activity.app} (${activity.id})`;
      const push = (severity, presentation, message) => out.push({ severity, presentation, message, activity: activity.id, target: name });
      if (device.dynamicIsland) {
        this.compact(activity, geometry, push);
        this.expanded(activity, geometry, { short, tall, max }, push, apps);
      }
      this.lockScreen(activity, device, apps, { short, tall, max }, push);
    }
    for (const widget of Object.values(widgets)) {
      if (widget.device !== device.id || widget.family !== "systemSmall") continue;
      const el = updateWidget(createWidget(), widget, { app: apps[widget.app], animate: false });
      this.el.append(el);
      const pieces = informationPieces(el.querySelector(".widget-content"));
      if (pieces > 4) {
        out.push({ severity: "info", presentation: "Small widget", widget: widget.id, target: `${apps[widget.app]?.name ?? widget.app} (${widget.id})`,
          message: `${pieces} pieces of information; a small widget should show at most four.` });
      }
    }
    this.el.replaceChildren();
    return out;
  }

  compact(activity, geometry, push) {
    const side = geometry.compactSide?.width ?? 52.33;
    for (const [slotName, label] of [["compactLeading", "Compact leading"], ["compactTrailing", "Compact trailing"]]) {
      const slot = h("div", { class: "slot lab-slot" });
      const island = h("div", { class: "island lab-island" }, h("div", { class: "island-pill" }, h("div", { class: "layer layer-compact is-active" }, slot)));
      setVars(island, { "--side-w": side });
      this.el.append(island);
      setFragment(slot, activity.render?.[slotName] ?? "", { animate: false });
      const frag = slot.querySelector(".frag");
      const width = frag ? contentWidth(frag) : 0;
      if (width > side + EPS) push("warning", label, `content is ${round(width)} pt wide; the slot is ${side} pt, so it is cut off at the sensor or the island's edge.`);
      const box = Math.min(boxWidth(frag), side);
      const waste = box - (frag ? inkWidth(frag) : 0);
      if (waste >= WASTE_MIN && waste * 3 >= box) {
        push("warning", label, `${round(waste)} pt of its ${round(box)} pt are empty; the compact island sizes each side to its content (PR-10), so trim the content to what it shows.`);
      }
    }
  }

  expanded(activity, geometry, bands, push) {
    const width = geometry.expandedWidth ?? 371;
    const x = { leading: h("div", { class: "slot x-lead" }), trailing: h("div", { class: "slot x-trail" }), center: h("div", { class: "slot x-center" }), bottom: h("div", { class: "slot x-bottom" }) };
    const sensor = h("div", { class: "sensor" });
    const layer = h("div", { class: "layer layer-expanded is-active lab-expanded" }, x.leading, sensor, x.trailing, x.center, x.bottom);
    const island = h("div", { class: "island lab-island" }, h("div", { class: "island-pill" }, layer));
    setVars(island, { "--xw": width, "--sensor-w": geometry.cameraGap ?? 125.34, "--sensor-h": geometry.compactSide?.height ?? 36.67 });
    this.el.append(island);
    const render = activity.render?.expanded ?? {};
    for (const region of Object.keys(x)) {
      setFragment(x[region], render[region] ?? "", { animate: false });
      x[region].classList.toggle("is-empty", !render[region]);
    }
    const height = layer.scrollHeight;
    const declared = activity.render?.layout?.expanded?.height;
    heightWarnings("Expanded", height, declared, bands, push);
    const s = sensor.getBoundingClientRect();
    for (const region of ["leading", "trailing", "center", "bottom"]) {
      for (const r of inkRects(x[region])) {
        // Glyph boxes reach a little above and below their line; 2 pt of that is not "under".
        if (r.right > s.left + EPS && r.left < s.right - EPS && r.bottom > s.top + 2 && r.top < s.bottom - 2) {
          push("warning", `Expanded ${region}`, "content lies under the sensor gap (the camera covers it).");
          break;
        }
      }
    }
  }

  lockScreen(activity, device, apps, bands, push) {
    const card = updateCard(createCard(), activity, { device, app: apps[activity.app], animate: false });
    card.classList.add("lab-card");
    this.el.append(card);
    const height = card.querySelector(".card-content").scrollHeight;
    heightWarnings("Lock Screen", height, activity.render?.layout?.lockScreen?.height, bands, push);
  }
}

function heightWarnings(presentation, natural, declared, { short, tall, max }, push) {
  const shown = declared ?? natural;
  if (natural > max + EPS) push("warning", presentation, `content is ${round(natural)} pt tall; above ${max} pt it is truncated.`);
  else if (declared && natural > declared + EPS) push("warning", presentation, `content is ${round(natural)} pt tall but the presentation is ${declared} pt: the rest is cut off.`);
  const h = Math.min(shown, max);
  if (h > short + EPS && h < tall - EPS) push("info", presentation, `height ${round(h)} pt is between the short (≤ ${short}) and tall (≥ ${tall}) bands; choose one.`);
}

// The width content needs, unwrapped (inline content is laid out on one line in the slot).
function contentWidth(frag) {
  let right = 0;
  const left = frag.getBoundingClientRect().left;
  for (const r of inkRects(frag)) right = Math.max(right, r.right - left);
  return Math.max(right, frag.scrollWidth);
}

// Pieces of information: distinct block-level boxes holding letters or digits (symbols and
// decoration alone do not count).
export function informationPieces(root) {
  const blocks = new Set();
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    if (!/[\p{L}\p{N}]/u.test(walker.currentNode.data)) continue;
    let el = walker.currentNode.parentElement;
    while (el && el !== root && getComputedStyle(el).display.startsWith("inline")) el = el.parentElement;
    blocks.add(el);
  }
  return blocks.size;
}
