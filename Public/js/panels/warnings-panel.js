// Layout warnings for the selected device, measured by the layout lab from rendered geometry.
// "Outline on devices" marks the offending presentations on the device views.

import { h, plural, setText, reconcile } from "../dom.js";
import { LayoutLab } from "../layout-lab.js";

export class WarningsPanel {
  constructor(root, { store, badge, stage }) {
    this.store = store;
    this.badge = badge;
    this.stage = stage;
    this.lab = new LayoutLab();
    this.outline = h("input", { type: "checkbox", id: "warn-outline", on: { change: () => this.mark() } });
    this.summary = h("p", { class: "hint", attrs: { "aria-live": "polite" } });
    this.list = h("ul", { class: "warnings" });
    this.warnings = [];
    root.append(
      h("p", { class: "hint", text: "Measured in this browser from the rendered layout of every activity and small widget of the device, at 1 pt = 1 px." }),
      h("label", { class: "check", attrs: { for: "warn-outline" } }, this.outline, "Outline on devices"),
      this.summary, this.list);
  }

  /** Re-measures when the device, its activities, apps or widgets changed. */
  update(doc, device) {
    if (!device) {
      // The last device was deleted: its findings went with it.
      this.lastKey = null;
      this.warnings = [];
      this.badge.hidden = true;
      setText(this.summary, "No devices to measure.");
      this.list.replaceChildren();
      return;
    }
    const key = [device, doc.activities, doc.apps, doc.config, ...Object.values(doc.widgets)];
    if (this.lastKey && key.length === this.lastKey.length && key.every((v, i) => v === this.lastKey[i])) return;
    this.lastKey = key;
    this.warnings = this.lab.measure({ device, activities: doc.activities, apps: doc.apps, widgets: doc.widgets, config: doc.config });
    const count = this.warnings.filter((w) => w.severity === "warning").length;
    setText(this.badge, String(this.warnings.length));
    this.badge.hidden = this.warnings.length === 0;
    this.badge.dataset.severity = count ? "warning" : "info";
    setText(this.summary, this.warnings.length
      ? `${plural(this.warnings.length, "finding")} on ${device.id} (${plural(count, "warning")}).`
      : `No layout problems on ${device.id}.`);
    reconcile(this.list, this.warnings, (w) => `${w.target}|${w.presentation}|${w.message}`, (w) => h("li", { dataset: { severity: w.severity } },
      h("span", { class: "sev", text: w.severity === "warning" ? "Warning" : "Note" }),
      h("strong", { text: w.presentation }), h("span", { class: "target", text: w.target }), h("p", { text: w.message })));
    this.mark();
  }

  /** Outlines the live presentations that have findings (when asked). */
  mark() {
    const root = this.stage.root;
    for (const el of root.querySelectorAll(".has-warning")) el.classList.remove("has-warning");
    if (!this.outline.checked) return;
    for (const w of this.warnings) {
      if (w.activity) {
        const selector = w.presentation.startsWith("Lock") ? ".la-card" : w.presentation.startsWith("Compact") ? `.slot-${w.presentation.endsWith("leading") ? "lead" : "trail"}` : ".layer-expanded .slot";
        for (const el of root.querySelectorAll(`${selector}[data-activity="${CSS.escape(w.activity)}"]`)) el.classList.add("has-warning");
      }
      if (w.widget) for (const el of root.querySelectorAll(`.widget[data-widget="${CSS.escape(w.widget)}"]`)) el.classList.add("has-warning");
    }
  }
}
