// The dashboard's view of the state: stream subscriptions for the collections it needs, and
// the widgets of the selected device only (a widget carries its whole timeline, so the full
// /widgets collection is the largest part of the document). Changes are batched into one
// render per animation frame.

import { IsletStream } from "./islet-stream.js";
import { SimClock } from "./clock.js";

const BASE = ["clock", "devices", "activities", "apps", "stacks", "relevance", "config"];

export class Store extends EventTarget {
  constructor({ token, simulation } = {}) {
    super();
    this.stream = new IsletStream({ token, simulation });
    this.subs = {};
    for (const name of BASE) this.subs[name] = this.stream.subscribe(`/${name}`, { id: name });
    this.widgetSubs = new Map();
    this.widgetsEnabled = false;
    this.clock = new SimClock();
    this.frame = null;
    this.stream.addEventListener("change", () => this.invalidate());
    this.stream.addEventListener("connection", () => this.invalidate());
  }

  connect() { this.stream.connect(); }

  /** The collections as plain objects (never null). */
  get doc() {
    const value = (name) => this.subs[name].value ?? {};
    const widgets = {};
    for (const [id, sub] of this.widgetSubs) if (sub.value) widgets[id] = sub.value;
    const doc = {
      clock: this.subs.clock.value, devices: value("devices"), activities: value("activities"), apps: value("apps"),
      stacks: value("stacks"), relevance: this.subs.relevance.value, config: value("config"), widgets,
    };
    this.clock.update(doc.clock);
    return doc;
  }

  /** True once the collections the island needs have their snapshots. */
  get ready() {
    return ["clock", "devices", "activities", "apps"].every((name) => this.subs[name].synced);
  }

  /**
   * Keeps a subscription for each widget `ids` names and none other (called after each render
   * with the selected device's widgets). Does nothing until {@link enableWidgets}.
   */
  wantWidgets(ids) {
    this.wanted = ids;
    if (!this.widgetsEnabled) return;
    const want = new Set(ids);
    for (const [id, sub] of this.widgetSubs) {
      if (!want.has(id)) {
        sub.unsubscribe();
        this.widgetSubs.delete(id);
      }
    }
    for (const id of want) {
      if (!this.widgetSubs.has(id)) this.widgetSubs.set(id, this.stream.subscribe(`/widgets/${escapeToken(id)}`, { id: `widget:${id}` }));
    }
  }

  /** Starts the widget subscriptions (after the first island is drawn). */
  enableWidgets() {
    if (this.widgetsEnabled) return;
    this.widgetsEnabled = true;
    if (this.wanted) this.wantWidgets(this.wanted);
  }

  invalidate() {
    if (this.frame !== null) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      this.dispatchEvent(new Event("render"));
    });
  }
}

/** The widgets a device shows or can rotate to (Home Screen, stacks, Lock Screen, StandBy). */
export function deviceWidgetIds(device, stacks) {
  const scene = device?.scene ?? {};
  const ids = new Set([...(scene.home?.widgets ?? []), ...(scene.lockScreen?.widgets ?? []), ...(scene.standby?.widgets ?? [])]);
  for (const { stack } of scene.home?.stacks ?? []) for (const id of stacks[stack]?.widgets ?? []) ids.add(id);
  return [...ids];
}

const escapeToken = (token) => token.replace(/~/g, "~0").replace(/\//g, "~1");
