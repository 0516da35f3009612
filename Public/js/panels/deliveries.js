// An app's delivery log (`/apps/<id>/deliveries`, newest first): what the simulated device did
// with each start, update and end, from the API or a push, and why.

import { h, reconcile, setText } from "../dom.js";
import { clockText } from "../clock.js";

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
      setText(what, `${d.source === "push" ? "push" : "api"} ${d.event} ${d.activity ?? ""}${d.priority === 5 ? " · p5" : ""}`);
      setText(outcome, d.outcome);
      outcome.dataset.outcome = d.outcome;
      setText(reason, d.reason ? d.reason.replace(/_/g, " ") : "");
    });
  }
}
