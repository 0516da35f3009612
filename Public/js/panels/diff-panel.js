// Diff inspector: the live list of patches (revision, operations) as they arrive on the
// stream, filterable by path and pausable.

import { h, plural, setText, setAttr, reconcile } from "../dom.js";
import { clockText } from "../clock.js";

const KEEP = 250;
const summarize = (value) => {
  const text = JSON.stringify(value);
  return text === undefined ? "" : text.length > 90 ? `${text.slice(0, 87)}…` : text;
};

export class DiffPanel {
  constructor(root, { store }) {
    this.store = store;
    this.entries = [];
    this.buffered = 0;
    this.paused = false;
    this.filter = h("input", { type: "search", id: "diff-filter", placeholder: "/devices/iphone-15-pro/scene", autocomplete: "off", on: { input: () => this.render() } });
    this.pause = h("button", { class: "button", type: "button", text: "Pause", attrs: { "aria-pressed": "false" }, on: { click: () => this.togglePause() } });
    this.clear = h("button", { class: "button", type: "button", text: "Clear", on: { click: () => { this.entries = []; this.render(); } } });
    this.count = h("p", { class: "hint", attrs: { "aria-live": "polite" } });
    this.list = h("ol", { class: "diff-list", attrs: { "aria-label": "Patches, newest first" } });
    root.append(
      h("div", { class: "row" }, h("label", { class: "field grow", attrs: { for: "diff-filter" } }, h("span", { text: "Filter by path" }), this.filter), this.pause, this.clear),
      this.count, this.list);
    store.stream.addEventListener("patch", (event) => this.receive(event.detail));
  }

  receive({ rev, ops, sub }) {
    this.entries.unshift({ rev, ops, sub, at: this.store.clock.now() });
    if (this.entries.length > KEEP) this.entries.length = KEEP;
    if (this.paused) {
      this.buffered += 1;
      this.renderCount();
      return;
    }
    this.scheduleRender();
  }

  scheduleRender() {
    if (this.pending || this.hidden) return;
    this.pending = requestAnimationFrame(() => {
      this.pending = null;
      this.render();
    });
  }

  setVisible(visible) {
    this.hidden = !visible;
    if (visible) this.render();
  }

  togglePause() {
    this.paused = !this.paused;
    this.frozen = this.paused ? this.entries.slice() : null;
    setText(this.pause, this.paused ? "Resume" : "Pause");
    setAttr(this.pause, "aria-pressed", String(this.paused));
    this.buffered = 0;
    this.render();
  }

  render() {
    const entries = this.paused ? this.frozen : this.entries;
    const needle = this.filter.value.trim();
    if (needle !== this.lastNeedle) {
      this.lastNeedle = needle;
      this.list.replaceChildren();
    }
    const matches = (op) => !needle || op.path.includes(needle) || (op.from ?? "").includes(needle);
    const shown = [];
    for (const entry of entries) {
      const ops = entry.ops.filter(matches);
      if (ops.length) shown.push({ ...entry, ops });
      if (shown.length >= 60) break;
    }
    this.shownCount = shown.length;
    this.shownOf = entries.length;
    reconcile(this.list, shown, (e) => `${e.rev}|${e.sub ?? ""}`, (e) => entryElement(e));
    this.renderCount();
  }

  renderCount() {
    const needle = this.filter.value.trim();
    const held = this.paused ? ` · paused, ${this.buffered} new held` : "";
    setText(this.count, `${this.shownCount ?? 0} of ${this.shownOf ?? 0} patches${needle ? ` touching “${needle}”` : ""}${held}`);
  }
}

function entryElement(entry) {
  return h("li", {},
    h("details", {},
      h("summary", {}, h("span", { class: "rev", text: `rev ${entry.rev}` }), h("time", { text: clockText(entry.at) }),
        h("span", { class: "ops-count", text: plural(entry.ops.length, "op") }),
        h("code", { class: "first-path", text: entry.ops[0].path }), entry.sub ? h("span", { class: "chip", text: "resumed" }) : null),
      h("ul", { class: "ops" }, ...entry.ops.slice(0, 80).map((op) => h("li", {},
        h("span", { class: "op", dataset: { op: op.op }, text: op.op }), h("code", { text: op.from ? `${op.from} → ${op.path}` : op.path }),
        "value" in op ? h("code", { class: "value", text: summarize(op.value) }) : null)))));
}
