// The 24-hour chart of which widget is on top of a stack: one lane for the current weights,
// one for the trial weights being dragged, drawn with SVG from the forecast route.

import { svg, h, setText } from "../dom.js";
import { clockText } from "../clock.js";

const WIDTH = 360;
const LANE = 26;
const TOP = 4;
const LABEL_W = 44;

/** Runs of consecutive points with the same top: [{widget, from, to}]. */
export function runs(forecast) {
  const points = forecast?.points ?? [];
  const out = [];
  const step = (forecast?.stepSeconds ?? 900) * 1000;
  for (const p of points) {
    const t = Date.parse(p.at);
    const last = out.at(-1);
    if (last && last.widget === p.top) last.to = t + step;
    else out.push({ widget: p.top, from: t, to: t + step });
  }
  return out;
}

export class ForecastChart {
  constructor() {
    this.el = svg("svg", { class: "forecast-chart", viewBox: `0 0 ${WIDTH} ${TOP + 2 * LANE + 24}`, role: "img" });
    this.title = svg("title");
    this.lanes = svg("g");
    this.axis = svg("g", { class: "axis" });
    this.el.append(this.title, this.lanes, this.axis);
    this.legend = h("ul", { class: "chart-legend" });
    this.wrap = h("div", { class: "chart" }, this.el, this.legend);
  }

  /** `current`, `trial`: forecast replies (trial may be null); `names`/`colors` by widget id. */
  update({ current, trial, names, colors }) {
    const base = current ?? trial;
    if (!base?.points?.length) {
      this.lanes.replaceChildren();
      this.axis.replaceChildren();
      setText(this.title, "No forecast yet");
      return;
    }
    const from = Date.parse(base.from);
    const to = Date.parse(base.to);
    const x = (t) => LABEL_W + ((t - from) / (to - from)) * (WIDTH - LABEL_W);
    const order = [...new Set([...runs(current), ...runs(trial)].map((r) => r.widget))];
    const color = (id) => colors[id] ?? "#8e8e93";
    const lane = (forecast, row, label) => {
      const y = TOP + row * LANE;
      const g = svg("g", { class: `lane lane-${label.toLowerCase()}` }, svg("text", { x: 0, y: y + LANE / 2 + 4, class: "lane-label" }, label));
      for (const r of runs(forecast)) {
        const x0 = x(r.from);
        const w = Math.max(0.5, x(Math.min(r.to, to)) - x0);
        const rect = svg("rect", { x: x0, y: y + 2, width: w, height: LANE - 6, rx: 4, fill: color(r.widget), "data-widget": r.widget },
          svg("title", {}, `${names[r.widget] ?? r.widget}: ${clockText(r.from)}–${clockText(Math.min(r.to, to))}`));
        g.append(rect);
        if (w > 44) g.append(svg("text", { x: x0 + 5, y: y + LANE / 2 + 3, class: "run-label" }, (names[r.widget] ?? r.widget).slice(0, Math.floor(w / 6.5))));
      }
      return g;
    };
    const lanes = [lane(current, 0, "Now")];
    if (trial) lanes.push(lane(trial, 1, "Trial"));
    this.lanes.replaceChildren(...lanes);
    const ticks = [];
    const first = Math.ceil(from / 10_800_000) * 10_800_000;
    for (let t = first; t <= to; t += 10_800_000) {
      const tx = x(t);
      ticks.push(svg("line", { x1: tx, x2: tx, y1: TOP, y2: TOP + 2 * LANE, class: "tick" }));
      ticks.push(svg("text", { x: tx, y: TOP + 2 * LANE + 14, class: "tick-label", "text-anchor": "middle" }, clockText(t).slice(0, 5)));
    }
    this.axis.replaceChildren(...ticks);
    const describe = (f) => runs(f).map((r) => `${names[r.widget] ?? r.widget} from ${clockText(r.from).slice(0, 5)}`).join(", ");
    setText(this.title, `Top widget over the next ${base.hours ?? 24} hours. Now: ${describe(current)}.${trial ? ` Trial: ${describe(trial)}.` : ""}`);
    this.el.setAttribute("aria-label", this.title.textContent);
    this.legend.replaceChildren(...order.map((id) => h("li", {}, h("span", { class: "swatch", vars: { "--swatch": color(id) } }), names[id] ?? id)));
  }
}
