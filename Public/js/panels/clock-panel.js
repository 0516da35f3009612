// Clock panel: wall or virtual time, play / pause, speed (1×, 60×, 3600×), jump to an
// instant, and step to the engine's next scheduled transition (with the ones the document
// shows listed, and named where they coincide).

import { h, setText, setAttr } from "../dom.js";
import { segmented } from "../controls.js";
import { get, put, post, commands } from "../api.js";
import { clockText, dateText, isoText, localInputValue, relativeText } from "../clock.js";
import { nextTransitions } from "./transitions.js";
import { reportError, reportOK } from "./status.js";

const SPEEDS = [1, 60, 3600];

export class ClockPanel {
  constructor(root, { store }) {
    this.store = store;
    this.lastRate = 60;
    this.time = h("time", { class: "clock-time" });
    this.date = h("span", { class: "clock-date" });
    this.modeChip = h("span", { class: "chip" });
    this.modes = segmented("Clock mode", "clock-mode", [["wall", "Wall"], ["virtual", "Virtual"]], (mode) => this.setMode(mode));
    this.play = h("button", { class: "button button-primary", type: "button", on: { click: () => this.togglePlay() } });
    this.speeds = segmented("Speed", "clock-speed", SPEEDS.map((s) => [String(s), `${s}×`]), (rate) => this.setRate(Number(rate)));
    this.jumpInput = h("input", { type: "datetime-local", id: "clock-jump", step: 1, required: true });
    this.jumpForm = h("form", { class: "row", on: { submit: (e) => { e.preventDefault(); this.jump(); } } },
      h("label", { class: "field grow", attrs: { for: "clock-jump" } }, h("span", { text: "Jump to (UTC)" }), this.jumpInput),
      h("button", { class: "button", type: "submit", text: "Jump" }));
    this.stepButton = h("button", { class: "button", type: "button", text: "Step to next transition", on: { click: () => this.step() } });
    this.nextText = h("p", { class: "hint next-transition" });
    this.upcoming = h("ol", { class: "upcoming" });
    this.status = h("p", { class: "panel-status", attrs: { role: "status" } });
    root.append(
      h("div", { class: "clock-face" }, this.time, h("div", { class: "clock-meta" }, this.date, this.modeChip)),
      h("div", { class: "field" }, h("span", { class: "label", text: "Mode" }), this.modes.el),
      h("div", { class: "row" }, this.play, this.speeds.el),
      this.jumpForm,
      h("div", { class: "step" }, this.stepButton, this.nextText),
      h("details", { class: "upcoming-details" }, h("summary", { text: "Upcoming transitions" }), this.upcoming),
      this.status);
  }

  update(doc) {
    const clock = doc.clock;
    if (!clock) return;
    this.clock = clock;
    this.doc = doc;
    const virtual = clock.mode === "virtual";
    this.modes.set(clock.mode);
    if (virtual && clock.rate > 0) this.lastRate = clock.rate;
    this.speeds.set(virtual && clock.rate > 0 ? String(clock.rate) : null);
    const playing = !virtual || clock.rate > 0;
    setText(this.play, playing ? "❚❚ Pause" : "▶ Play");
    setAttr(this.play, "aria-pressed", String(playing));
    setAttr(this.play, "aria-label", playing ? "Pause the clock" : "Play the clock");
    setText(this.modeChip, virtual ? (clock.rate === 0 ? "virtual · paused" : `virtual · ${clock.rate}×`) : "wall clock");
    this.modeChip.dataset.state = !virtual ? "wall" : clock.rate === 0 ? "paused" : "running";
    if (document.activeElement !== this.jumpInput && !this.jumpInput.value) this.jumpInput.value = localInputValue(this.store.clock.now() + 3600_000);
    this.transitions = nextTransitions(doc, this.store.clock.now());
    const rows = this.transitions.slice(0, 8).map((t) => h("li", {}, h("time", { text: clockText(t.at) }), h("span", { text: t.label })));
    this.upcoming.replaceChildren(...rows);
    this.tick();
  }

  tick() {
    const now = this.store.clock.now();
    setText(this.time, clockText(now));
    setText(this.date, `${dateText(now)} · UTC`);
    const next = (this.transitions ?? []).find((t) => t.at > now);
    setText(this.nextText, next ? `Next: ${next.label} at ${clockText(next.at)} (${relativeText(next.at, now)})` : "Nothing scheduled in view.");
  }

  async run(action, success) {
    try {
      const reply = await action();
      reportOK(this.status, success(reply));
    } catch (error) {
      reportError(this.status, error);
    }
  }

  setMode(mode) {
    const body = mode === "wall" ? { mode } : { mode, rate: 0 };
    this.run(() => put("/v1/clock", body), () => (mode === "wall" ? "Following the wall clock." : "Virtual clock, paused."));
  }

  togglePlay() {
    const clock = this.clock;
    if (!clock) return;
    const playing = clock.mode === "wall" || clock.rate > 0;
    const body = playing ? { mode: "virtual", rate: 0 } : { mode: "virtual", rate: this.lastRate || 1 };
    this.run(() => put("/v1/clock", body), () => (playing ? "Paused." : `Playing at ${body.rate}×.`));
  }

  setRate(rate) {
    this.lastRate = rate;
    this.run(() => put("/v1/clock", { mode: "virtual", rate }), () => `Virtual clock at ${rate}×.`);
  }

  advanceTo(instant, what) {
    const list = [];
    if (this.clock?.mode !== "virtual") list.push({ type: "clock.set", mode: "virtual", rate: 0 });
    list.push({ type: "clock.advance", to: isoText(instant) });
    return this.run(() => (list.length === 1 ? post("/v1/clock/advance", { to: list[0].to }) : commands(list)),
      (reply) => {
        const result = reply.result ?? reply.results?.at(-1) ?? {};
        return `${what}: now ${result.now ?? isoText(instant)}, ${result.transitions ?? 0} transitions.`;
      });
  }

  jump() {
    const value = this.jumpInput.value;
    if (!value) return;
    this.advanceTo(Date.parse(`${value.length === 16 ? `${value}:00` : value}Z`), "Jumped");
  }

  // The engine's deadline queue knows every transition (SS-7 local hours, deliveries the document
  // does not show), so Step asks it (GET /v1/clock `nextTransition`) rather than guessing; a
  // running clock is paused first, so the instant it names is still ahead when we get there.
  async step() {
    // One step at a time: a second click would ask for the same next transition.
    if (this.stepping) return;
    this.stepping = true;
    this.stepButton.disabled = true;
    try {
      if (this.clock?.mode !== "virtual" || this.clock.rate !== 0) await put("/v1/clock", { mode: "virtual", rate: 0 });
      const { nextTransition } = await get("/v1/clock");
      if (!nextTransition) {
        reportOK(this.status, "Nothing is scheduled: the world will not change by itself.");
        return;
      }
      const instant = Date.parse(nextTransition);
      const label = (this.transitions ?? []).find((t) => t.at === instant)?.label ?? "the next scheduled transition";
      await this.advanceTo(instant, `Stepped to ${label}`);
    } catch (error) {
      reportError(this.status, error);
    } finally {
      this.stepping = false;
      this.stepButton.disabled = false;
    }
  }
}
