// The Home Screen: the island, widgets at their family sizes on the icon grid, Smart Stacks
// showing their top widget with stack dots (a rotation slides the new top in), app icons and
// the dock. On devices without an island an alert shows the banner.

import { h, reconcile, setVars, setText } from "../dom.js";
import { createFrame, updateFrame, createStatusBar, updateStatusBar, createWallpaper } from "./frame.js";
import { createWidget, updateWidget } from "./widget.js";
import { Island } from "./island.js";
import { Banner } from "./banner.js";
import { timeText } from "../clock.js";
import { appGlyph } from "./icons.js";

// WK-1 medium widths by screen width: the icon grid spans a medium widget.
const MEDIUM = { 375: [148, 321], 393: [158, 338], 402: [158, 338], 430: [170, 364], 440: [170, 364] };
const SPAN = { systemSmall: [2, 2], systemMedium: [4, 2], systemLarge: [4, 4] };

class StackView {
  constructor() {
    this.viewport = h("div", { class: "stack-viewport" });
    this.dots = h("div", { class: "stack-dots", attrs: { "aria-hidden": "true" } });
    this.label = h("span", { class: "home-label" });
    this.el = h("div", { class: "stack", attrs: { role: "group" } }, this.viewport, this.dots, this.label);
    this.top = null;
  }

  update(stack, ctx) {
    const { widgets, apps, animate } = ctx;
    const members = stack.widgets ?? [];
    const topId = ctx.top ?? stack.top ?? members[0];
    const first = members.map((id) => widgets[id]).find(Boolean);
    const size = first?.size ?? { width: 158, height: 158 };
    setVars(this.el, { "--w": size.width, "--h": size.height });
    const [cols, rows] = SPAN[stack.family] ?? [2, 2];
    setVars(this.el, { "--cols": cols, "--rows": rows });
    this.el.dataset.stack = stack.id;
    this.el.dataset.top = topId ?? "";
    reconcile(this.viewport, members, (id) => id, createWidget, (el, id) => {
      updateWidget(el, widgets[id], { app: apps[widgets[id]?.app], animate });
      el.classList.toggle("is-top", id === topId);
      el.setAttribute("aria-hidden", id === topId ? "false" : "true");
    });
    reconcile(this.dots, members, (id) => id, () => h("i"), (el, id) => el.classList.toggle("is-on", id === topId));
    const topApp = apps[widgets[topId]?.app];
    setText(this.label, topApp?.name ?? "");
    this.el.setAttribute("aria-label", `Smart Stack ${stack.id}, showing ${topApp?.name ?? topId}`);
    if (this.top && topId !== this.top && animate) this.rotate(this.top, topId, members);
    this.top = topId;
  }

  // The old top slides up and out while the new one rises in from below.
  rotate(fromId, toId, members) {
    const from = this.viewport.querySelector(`[data-key="${CSS.escape(fromId)}"]`);
    const to = this.viewport.querySelector(`[data-key="${CSS.escape(toId)}"]`);
    const down = members.indexOf(toId) < members.indexOf(fromId);
    const options = { duration: 650, easing: "cubic-bezier(.2,.9,.25,1)" };
    from?.animate([{ transform: "translateY(0)", opacity: 1, visibility: "visible" }, { transform: `translateY(${down ? 60 : -60}%) scale(.9)`, opacity: 0, visibility: "visible" }], options);
    to?.animate([{ transform: `translateY(${down ? -60 : 60}%) scale(.9)`, opacity: 0 }, { transform: "translateY(0)", opacity: 1 }], options);
  }
}

export class HomeView {
  constructor({ onPress }) {
    this.parts = createFrame({ label: "Home Screen" });
    this.status = createStatusBar();
    this.island = new Island({ onPress });
    this.banner = new Banner();
    this.grid = h("div", { class: "home-grid" });
    this.dock = h("div", { class: "dock" });
    this.stacks = new Map();
    const screen = this.parts.screen;
    screen.classList.add("home");
    screen.append(createWallpaper(), this.status.el, this.island.el, this.grid,
      h("div", { class: "home-search", attrs: { "aria-hidden": "true" } }, "Search"), this.dock, this.banner.el,
      h("div", { class: "home-indicator", attrs: { "aria-hidden": "true" } }));
    this.el = this.parts.box;
  }

  update(ctx) {
    const { device, widgets, apps, stacks, animate } = ctx;
    this.zone = device.timeZone;
    updateFrame(this.parts, device);
    this.island.update(ctx);
    this.banner.update(ctx);
    const home = device.scene?.home ?? { stacks: [], widgets: [] };
    const stackWidth = (home.stacks ?? []).map((s) => widgets[stacks[s.stack]?.widgets?.[0]]?.size?.width).find(Boolean);
    const [small, medium] = MEDIUM[device.screen.width] ?? [stackWidth ?? 158, 2 * (stackWidth ?? 158) + 22];
    const gap = medium - 2 * small;
    setVars(this.parts.screen, { "--grid-w": medium, "--grid-gap": gap, "--cell": (small - gap) / 2, "--home-tint": home.tint ?? null });
    this.parts.screen.dataset.rendering = home.renderingMode ?? "fullColor";
    const items = [
      ...(home.stacks ?? []).map((s) => ({ type: "stack", id: s.stack, top: s.top })),
      ...(home.widgets ?? []).map((id) => ({ type: "widget", id })),
    ];
    const shownApps = new Set(items.map((i) => (i.type === "widget" ? widgets[i.id]?.app : null)));
    const icons = Object.values(apps).filter((a) => !shownApps.has(a.id)).sort((a, b) => a.name.localeCompare(b.name));
    const dockApps = icons.slice(0, 4);
    const gridApps = icons.slice(4, 12);
    const cells = [...items, ...gridApps.map((a) => ({ type: "app", id: a.id }))];
    reconcile(this.grid, cells, (c) => `${c.type}:${c.id}`, (c) => this.createCell(c), (el, c) => this.updateCell(el, c, ctx));
    reconcile(this.dock, dockApps, (a) => a.id, (a) => appIcon(a), (el, a) => updateIcon(el, a, ctx.now));
    this.tick(ctx.now);
  }

  createCell(cell) {
    if (cell.type === "stack") {
      const view = new StackView();
      view.el.isletView = view;
      return view.el;
    }
    if (cell.type === "widget") {
      const el = h("div", { class: "home-widget" }, createWidget(), h("span", { class: "home-label" }));
      return el;
    }
    return h("div", { class: "home-app" }, appIcon({ id: cell.id }), h("span", { class: "home-label" }));
  }

  updateCell(el, cell, ctx) {
    const { widgets, apps, stacks, animate } = ctx;
    if (cell.type === "stack") {
      const stack = stacks[cell.id] ?? { id: cell.id, widgets: [cell.top], family: "systemSmall" };
      el.isletView.update(stack, { ...ctx, top: cell.top });
      return;
    }
    if (cell.type === "widget") {
      const widget = widgets[cell.id];
      const [cols, rows] = SPAN[widget?.family] ?? [2, 2];
      setVars(el, { "--cols": cols, "--rows": rows });
      updateWidget(el.firstElementChild, widget, { app: apps[widget?.app], animate });
      setText(el.lastElementChild, apps[widget?.app]?.name ?? "");
      return;
    }
    updateIcon(el.firstElementChild, apps[cell.id], ctx.now);
    setText(el.lastElementChild, apps[cell.id]?.name ?? "");
  }

  tick(now) { updateStatusBar(this.status, timeText(now, this.zone)); }
}

function appIcon() {
  return h("span", { class: "app-icon", attrs: { "aria-hidden": "true" } }, h("span", { class: "app-glyph" }));
}

function updateIcon(el, app, now) {
  if (!app) return;
  const identity = app.identity ?? {};
  setVars(el, { "--icon-bg": identity.background ?? "#8E8E93", "--tint": identity.tint ?? "#FFFFFF" });
  const glyph = appGlyph(app, now);
  el.dataset.glyph = glyph.kind;
  setText(el.firstElementChild, glyph.text);
  el.setAttribute("title", app.name);
}
