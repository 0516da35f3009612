// An app's delivery log (`/apps/<id>/deliveries`, newest first): what the simulated device did
// with each start, update and end, from the API or a push, each broadcast (with how many of the
// channel's subscribers applied it) and each widget push, and why.

import { h, plural, reconcile, setAttr, setText } from "../dom.js";
import { clockText } from "../clock.js";
import { shortId } from "./channels.js";

/** The record's summary: `push update order-1`, `broadcast update`, `widget push`. */
export function deliveryWhat(d) {
  const priority = d.priority === 5 ? " · p5" : d.priority === 1 ? " · p1" : "";
  if (d.event === "widgets") return `widget push${priority}`;
  if (d.channel) return `broadcast ${d.event}${d.activity ? ` ${d.activity}` : ""}${priority}`;
  return `${d.source === "push" ? "push" : "api"} ${d.event ?? "(no event)"} ${d.activity ?? ""}${priority}`;
}

/**
 * The second line: for a broadcast its channel and how many subscribers applied it, then the
 * reason and, for a push the device ignored, what was wrong
 * (`channel kboa1rgE… · applied to 1 of 2 subscribers · …`, `timestamp missing · aps.timestamp is missing`).
 */
export function deliveryDetail(d) {
  const parts = [];
  if (d.channel) parts.push(`channel ${shortId(d.channel)}`);
  if (d.channel && typeof d.subscribers === "number") parts.push(`applied to ${d.appliedTo ?? 0} of ${plural(d.subscribers, "subscriber")}`);
  if (d.reason) parts.push(d.reason.replace(/_/g, " "));
  if (d.detail) parts.push(d.detail); // why the device ignored a push (AP-8)
  return parts.join(" · ");
}

export class Deliveries {
  constructor() {
    this.title = h("p", { class: "hint" });
    this.list = h("ol", { class: "deliveries", attrs: { "aria-label": "Deliveries, newest first" } });
    this.el = h("div", {}, this.title, this.list);
  }

  update(app) {
    const log = app?.deliveries ?? [];
    setText(this.title, app ? `${app.name}: ${log.length} recorded (last ${100}).` : "Choose an activity or app.");
    const rows = log.map((d, i) => ({ ...d, key: `${d.at}|${i}|${d.apnsId ?? ""}` })).reverse().slice(0, 30);
    reconcile(this.list, rows, (d) => d.key, () => {
      const parts = { time: h("time"), what: h("span", { class: "what" }), outcome: h("span", { class: "outcome" }), reason: h("span", { class: "reason" }) };
      const el = h("li", {}, parts.time, parts.what, parts.outcome, parts.reason);
      el.isletParts = parts;
      return el;
    }, (el, d) => {
      const { time, what, outcome, reason } = el.isletParts;
      setText(time, clockText(Date.parse(d.at)));
      setText(what, deliveryWhat(d));
      setAttr(el, "title", [d.channel && `channel ${d.channel}`, d.apnsId && `apns-id ${d.apnsId}`].filter(Boolean).join("\n") || null);
      el.dataset.kind = d.event === "widgets" ? "widgets" : d.channel ? "broadcast" : "activity";
      setText(outcome, d.outcome);
      outcome.dataset.outcome = d.outcome;
      setText(reason, deliveryDetail(d));
    });
  }
}
