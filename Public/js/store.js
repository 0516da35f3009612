// The dashboard's view of the state: stream subscriptions for the collections it needs, and
// the widgets of the selected device only (a widget carries its whole timeline, so the full
// /widgets collection is the largest part of the document). Changes are batched into one
// render per animation frame.

import { IsletStream } from "./islet-stream.js";
import { SimClock } from "./clock.js";
import { get } from "./api.js";
import { afterFrames } from "./dom.js";

const BASE = ["clock", "devices", "activities", "apps", "stacks", "relevance", "config"];

export class Store extends EventTarget {
  constructor({ token, simulation } = {}) {
    super();
    this.stream = new IsletStream({ token, simulation });
    this.subs = {};
    for (const name of BASE) this.subs[name] = this.stream.subscribe(`/${name}`, { id: name });
    this.widgetSubs = new Map();
    this.reading = new Set();
    this.widgetsEnabled = false;
    this.clock = new SimClock();
    this.frame = null;
    this.stream.addEventListener("change", () => this.invalidate());
    this.stream.addEventListener("connection", () => this.invalidate());
  }

  /**
   * Reads the collections over REST while the stream's handshake runs, so the page draws from
   * them at once (a one-shot screenshot, where WebSocket frames do not hold the page's clock,
   * sees a settled page); the stream then subscribes, resuming each collection from the
   * revision it was read at.
   */
  connect() {
    if (this.closed) return;
    const reads = BASE.map((name) => read(`/${name}`).then((seed) => seed && this.stream.seed(this.subs[name], seed)));
    this.stream.connect({ after: Promise.all(reads) });
  }

  /** Closes the stream for good (the page's simulation is gone), also before {@link connect} opened it. */
  close() {
    this.closed = true;
    this.stream.close();
  }

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
      if (this.widgetSubs.has(id) || this.reading.has(id)) continue;
      // Read first, then subscribe from there: the widget shows as soon as the read returns.
      const path = `/widgets/${escapeToken(id)}`;
      this.reading.add(id);
      read(path).then((seed) => {
        this.reading.delete(id);
        if (!this.wanted.includes(id) || this.widgetSubs.has(id)) return;
        this.widgetSubs.set(id, this.stream.subscribe(path, { id: `widget:${id}`, seed: seed ?? undefined }));
      });
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
    this.frame = true;
    afterFrames(() => {
      this.frame = null;
      this.dispatchEvent(new Event("render"));
    }, { frames: 1, fallbackMs: 50 });
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

/** `GET /v1/state?path=…` as a subscription seed {value, epoch, rev}; null when it fails. */
const read = (path) =>
  get(`/v1/state?path=${encodeURIComponent(path)}`).then(
    (reply) => ({ value: reply.value, epoch: reply.epoch, rev: reply.rev }),
    () => null,
  );
