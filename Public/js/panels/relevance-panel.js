// Relevance panel: weight sliders (global, or one stack's overrides) that apply live; the
// stack's ranking with each feature's contribution; and the next 24 hours of tops under the
// current weights and under the trial weights being dragged (the forecast route) before they
// are applied.

import { h, setText, setAttr, debounce, reconcile, setVars } from "../dom.js";
import { get, put, seg } from "../api.js";
import { segmented } from "../controls.js";
import { ForecastChart } from "./forecast-chart.js";
import { reportError, reportOK } from "./status.js";
import { seriesColor } from "../color.js";
import { clockText } from "../clock.js";

const FEATURE_ORDER = ["timeline", "habit", "freshness", "rotationPenalty"];
const FEATURE_LABEL = { timeline: "Timeline relevance", habit: "Habit", freshness: "Freshness", rotationPenalty: "Rotation penalty" };
const FEATURE_COLOR = { timeline: "var(--c-timeline)", habit: "var(--c-habit)", freshness: "var(--c-freshness)", rotationPenalty: "var(--c-penalty)" };
const fmt = (n) => (Math.round(n * 100) / 100).toFixed(2);

export class RelevancePanel {
  constructor(root, { store }) {
    this.store = store;
    this.scope = "global";
    this.trial = null;
    this.stackSelect = h("select", { id: "rel-stack", on: { change: () => { this.trial = null; this.refresh(true); } } });
    this.scopeControl = segmented("Weights apply to", "rel-scope", [["global", "All stacks"], ["stack", "This stack"]], (scope) => {
      this.scope = scope;
      this.trial = null;
      this.refresh(true);
    });
    this.sliders = h("div", { class: "sliders" });
    this.live = h("input", { type: "checkbox", id: "rel-live" });
    this.apply = h("button", { class: "button button-primary", type: "button", text: "Apply", on: { click: () => this.applyTrial() } });
    this.revert = h("button", { class: "button", type: "button", text: "Revert", on: { click: () => { this.trial = null; this.refresh(true); } } });
    this.reset = h("button", { class: "button", type: "button", text: "Clear overrides", on: { click: () => this.clearOverrides() } });
    this.status = h("p", { class: "panel-status", attrs: { role: "status" } });
    this.tbody = h("tbody");
    this.whyTop = h("p", { class: "hint why-top", hidden: true });
    this.table = h("table", { class: "ranking" },
      h("caption", { class: "visually-hidden", text: "Ranking of the stack's widgets, best first" }),
      h("thead", {}, h("tr", {}, h("th", { scope: "col", text: "#" }), h("th", { scope: "col", text: "Widget" }),
        h("th", { scope: "col", text: "Score" }), h("th", { scope: "col", text: "Trial" }), h("th", { scope: "col", text: "Contributions" }))),
      this.tbody);
    this.chart = new ForecastChart();
    this.legend = h("ul", { class: "feature-legend" }, ...FEATURE_ORDER.map((f) => h("li", {}, h("span", { class: "swatch", vars: { "--swatch": FEATURE_COLOR[f] } }), FEATURE_LABEL[f])));
    root.append(
      h("div", { class: "row" }, h("label", { class: "field grow", attrs: { for: "rel-stack" } }, h("span", { text: "Smart Stack" }), this.stackSelect)),
      h("div", { class: "field" }, h("span", { class: "label", text: "Weights apply to" }), this.scopeControl.el),
      this.sliders,
      h("div", { class: "row actions" }, h("label", { class: "check", attrs: { for: "rel-live" } }, this.live, "Apply on release"), this.revert, this.reset, this.apply),
      this.status,
      h("h3", { text: "Ranking now" }), this.legend, this.table, this.whyTop,
      h("h3", { text: "Top widget, next 24 hours" }), this.chart.wrap);
    this.scopeControl.set("global");
    this.fetchCurrent = debounce(() => this.forecast(false), 300);
    this.fetchTrial = debounce(() => this.forecast(true), 150);
  }

  get stackId() { return this.stackSelect.value; }

  /** Chooses the stacks of the selected device. */
  update(doc, device) {
    this.doc = doc;
    const stacks = Object.values(doc.stacks).filter((s) => !device || s.device === device.id);
    const ids = stacks.map((s) => s.id);
    if (ids.join() !== this.stackIds) {
      this.stackIds = ids.join();
      const previous = this.stackSelect.value;
      this.stackSelect.replaceChildren(...ids.map((id) => h("option", { value: id, text: id })));
      this.stackSelect.value = ids.includes(previous) ? previous : ids[0] ?? "";
      this.trial = null;
    }
    this.refresh(false);
  }

  /** The settings in force for the scope: {weights, hysteresis, minDwellSeconds}. */
  settings() {
    const doc = this.doc;
    const stack = doc.stacks[this.stackId];
    const source = this.scope === "stack" ? stack?.relevance : doc.relevance;
    return { weights: { ...(source?.weights ?? {}) }, hysteresis: source?.hysteresis ?? 0.05, minDwellSeconds: source?.minDwellSeconds ?? 900 };
  }

  refresh(force) {
    if (!this.doc) return;
    const stack = this.doc.stacks[this.stackId];
    const live = this.settings();
    const shown = this.trial ?? live;
    this.renderSliders(shown, live);
    this.reset.hidden = this.scope !== "stack" || !Object.keys(stack?.relevance?.overrides ?? {}).length;
    this.apply.disabled = !this.trial;
    this.revert.disabled = !this.trial;
    this.renderRanking(stack);
    if (force || stack !== this.lastStack || this.doc.relevance !== this.lastRelevance) {
      this.lastStack = stack;
      this.lastRelevance = this.doc.relevance;
      this.fetchCurrent();
      if (this.trial) this.fetchTrial();
      else this.trialForecast = null;
    }
    this.drawChart();
  }

  renderSliders(shown, live) {
    const features = [...new Set([...FEATURE_ORDER.filter((f) => f in shown.weights), ...Object.keys(shown.weights)])];
    const rows = [
      ...features.map((f) => ({ key: `w:${f}`, label: FEATURE_LABEL[f] ?? f, value: shown.weights[f], live: live.weights[f], min: -2, max: 2, step: 0.05, color: FEATURE_COLOR[f] })),
      { key: "hysteresis", label: "Hysteresis", value: shown.hysteresis, live: live.hysteresis, min: 0, max: 1, step: 0.01 },
      { key: "minDwell", label: "Minimum dwell (min)", value: shown.minDwellSeconds / 60, live: live.minDwellSeconds / 60, min: 0, max: 120, step: 1 },
    ];
    reconcile(this.sliders, rows, (r) => r.key, (r) => this.createSlider(r), (el, r) => {
      const { input, output, liveText } = el.isletParts;
      if (document.activeElement !== input || !this.trial) input.value = String(r.value);
      setText(output, r.key === "minDwell" ? String(Math.round(r.value)) : fmt(r.value));
      const changed = Math.abs(r.value - r.live) > 1e-9;
      setText(liveText, changed ? `live ${r.key === "minDwell" ? Math.round(r.live) : fmt(r.live)}` : "");
      el.classList.toggle("is-changed", changed);
    });
  }

  createSlider(row) {
    const id = `rel-${row.key.replace(":", "-")}`;
    const input = h("input", { type: "range", id, min: row.min, max: row.max, step: row.step, dataset: { key: row.key },
      on: { input: () => this.onSlide(row.key, Number(input.value)), change: () => this.live.checked && this.applyTrial() } });
    const output = h("output", { attrs: { for: id } });
    const liveText = h("span", { class: "slider-live" });
    const el = h("div", { class: "slider" }, h("label", { attrs: { for: id } }, row.color ? h("span", { class: "swatch", vars: { "--swatch": row.color } }) : null, row.label), input, output, liveText);
    el.isletParts = { input, output, liveText };
    return el;
  }

  onSlide(key, value) {
    const trial = this.trial ?? this.settings();
    if (key.startsWith("w:")) trial.weights = { ...trial.weights, [key.slice(2)]: value };
    else if (key === "hysteresis") trial.hysteresis = value;
    else trial.minDwellSeconds = Math.round(value * 60);
    this.trial = trial;
    this.refresh(false);
    this.fetchTrial();
  }

  async forecast(trial) {
    const id = this.stackId;
    if (!id) return;
    const params = new URLSearchParams({ hours: "24", step: "15m" });
    if (trial) {
      if (!this.trial) return;
      for (const [k, v] of Object.entries(this.trial.weights)) params.set(`weights.${k}`, String(v));
      params.set("hysteresis", String(this.trial.hysteresis));
      params.set("minDwellSeconds", String(this.trial.minDwellSeconds));
    }
    try {
      const reply = await get(`/v1/stacks/${seg(id)}/forecast?${params}`);
      if (id !== this.stackId) return;
      if (trial) this.trialForecast = this.trial ? reply.result : null;
      else this.currentForecast = reply.result;
      this.drawChart();
      this.renderRanking(this.doc.stacks[id]);
    } catch (error) {
      reportError(this.status, error);
    }
  }

  drawChart() {
    const names = {};
    const colors = {};
    for (const [i, id] of (this.doc.stacks[this.stackId]?.widgets ?? []).entries()) {
      const w = this.doc.widgets[id];
      names[id] = this.doc.apps[w?.app]?.name ?? w?.kind ?? id;
      colors[id] = seriesColor(i);
    }
    const same = (f) => f?.stack === this.stackId;
    this.chart.update({ current: same(this.currentForecast) ? this.currentForecast : null, trial: this.trial && same(this.trialForecast) ? this.trialForecast : null, names, colors });
  }

  renderRanking(stack) {
    const ranking = stack?.ranking ?? [];
    const trialRows = new Map((this.trial && this.trialForecast?.points?.[0]?.ranking || []).map((r, i) => [r.widget, { ...r, rank: i + 1 }]));
    let maxPos = 0.01;
    let maxNeg = 0;
    for (const row of [...ranking, ...trialRows.values()]) {
      const c = Object.values(row.contributions ?? {});
      maxPos = Math.max(maxPos, c.filter((v) => v > 0).reduce((a, b) => a + b, 0));
      maxNeg = Math.max(maxNeg, -c.filter((v) => v < 0).reduce((a, b) => a + b, 0));
    }
    const scale = 100 / (maxPos + maxNeg);
    setVars(this.table, { "--zero": maxNeg * scale });
    reconcile(this.tbody, ranking.map((r, i) => ({ ...r, rank: i + 1 })), (r) => r.widget, () => this.createRow(), (el, r) => {
      const w = this.doc.widgets[r.widget];
      const app = this.doc.apps[w?.app];
      const { rank, name, score, trial, bars } = el.isletParts;
      setText(rank, String(r.rank));
      setText(name.lastChild, app?.name ?? r.widget);
      name.title = r.widget;
      name.firstChild.style.setProperty("--swatch", seriesColor(Math.max(0, (stack.widgets ?? []).indexOf(r.widget))));
      el.classList.toggle("is-top", stack.top === r.widget);
      el.classList.toggle("is-ineligible", !r.eligible);
      setText(score, r.eligible ? fmt(r.score) : `${fmt(r.score)} ✕`);
      setAttr(score, "title", r.eligible ? null : "Not eligible (SS-2)");
      const t = trialRows.get(r.widget);
      setText(trial, t ? `${fmt(t.score)}${t.rank !== r.rank ? ` (#${t.rank})` : ""}` : "—");
      const pieces = FEATURE_ORDER.filter((f) => r.contributions?.[f]).map((f) => `${FEATURE_LABEL[f]} ${fmt(r.contributions[f])}`);
      bars.setAttribute("aria-label", pieces.length ? pieces.join(", ") : "no contributions");
      this.drawBars(bars, r.contributions ?? {}, scale);
    });
    const why = stack ? this.whyKept(stack, ranking) : "";
    setText(this.whyTop, why);
    this.whyTop.hidden = !why;
  }

  /**
   * Why the top is not the best eligible widget (SS-5), or "" when it is: the ranking alone
   * cannot explain a TOP that is not #1. Decided as the engine does: Smart Rotate off; else the
   * candidate is the best widget that beats the top by more than the hysteresis and is under
   * its daily rotation cap, and only the top's minimum dwell holds it back; without one, the
   * better widgets are all capped, or none leads by more than the hysteresis.
   */
  whyKept(stack, ranking) {
    const best = ranking.find((r) => r.eligible);
    const top = ranking.find((r) => r.widget === stack.top);
    if (!best || !top || best.widget === top.widget) return "";
    const name = (id) => this.doc.apps[this.doc.widgets[id]?.app]?.name ?? id;
    const kept = `${name(top.widget)} kept on top:`;
    if (stack.smartRotate === false) return `${kept} Smart Rotate is off for this stack, so the first widget stays (SS-5).`;
    const now = this.store.clock.now();
    const { minDwellSeconds = 900, hysteresis = 0.05 } = stack.relevance ?? {};
    const cap = this.doc.config?.stackRotationsPerWidgetPerDay;
    const rotations = (id) => (stack.rotations ?? []).filter((r) => r.to === id && Date.parse(r.at) > now - 86_400_000).length;
    const better = ranking.filter((r) => r.eligible && r.widget !== top.widget && r.score > top.score + hysteresis);
    const candidate = better.find((r) => cap === undefined || rotations(r.widget) < cap);
    if (candidate) {
      const dwellEnd = Date.parse(stack.topSince) + minDwellSeconds * 1000;
      if (dwellEnd <= now) return "";
      return `${kept} SS-5 minimum dwell (${Math.round(minDwellSeconds / 60)} min, on top since ${clockText(Date.parse(stack.topSince))}) until ${clockText(dwellEnd)} UTC; then ${name(candidate.widget)} can take over.`;
    }
    if (better.length) return `${kept} ${name(better[0].widget)} has rotated to the top ${rotations(better[0].widget)} times in 24 hours, the cap (SS-5).`;
    return `${kept} ${name(best.widget)} leads by ${fmt(best.score - top.score)}, not more than the hysteresis ${fmt(hysteresis)} (SS-5).`;
  }

  createRow() {
    const parts = { rank: h("td"), name: h("th", { scope: "row" }, h("span", { class: "swatch", attrs: { "aria-hidden": "true" } }), h("span")), score: h("td", { class: "num" }), trial: h("td", { class: "num trial" }), bars: h("div", { class: "bars", attrs: { role: "img" } }) };
    const el = h("tr", {}, parts.rank, parts.name, parts.score, parts.trial, h("td", {}, parts.bars));
    el.isletParts = parts;
    return el;
  }

  drawBars(el, contributions, scale) {
    let pos = 0;
    let neg = 0;
    const segments = [];
    for (const f of FEATURE_ORDER) {
      const v = contributions[f] ?? 0;
      if (!v) continue;
      const width = Math.abs(v) * scale;
      const start = v > 0 ? pos : -(neg + Math.abs(v));
      if (v > 0) pos += v; else neg += Math.abs(v);
      segments.push(h("span", { class: "bar", title: `${FEATURE_LABEL[f]} ${fmt(v)}`, dataset: { feature: f },
        vars: { "--start": start * scale, "--width": width, "--color": FEATURE_COLOR[f] } }));
    }
    el.replaceChildren(...segments);
  }

  async applyTrial() {
    if (!this.trial) return;
    const body = { weights: this.trial.weights, hysteresis: this.trial.hysteresis, minDwellSeconds: this.trial.minDwellSeconds };
    if (this.scope === "stack") body.stack = this.stackId;
    try {
      const reply = await put("/v1/relevance/weights", body);
      this.trial = null;
      reportOK(this.status, `Applied at rev ${reply.rev}${this.scope === "stack" ? ` to ${this.stackId}` : " to every stack"}.`);
    } catch (error) {
      reportError(this.status, error);
    }
  }

  async clearOverrides() {
    try {
      const reply = await put("/v1/relevance/weights", { stack: this.stackId, weights: {}, reset: true });
      this.trial = null;
      reportOK(this.status, `Overrides of ${this.stackId} cleared at rev ${reply.rev}.`);
    } catch (error) {
      reportError(this.status, error);
    }
  }
}
