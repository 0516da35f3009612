// The simulation picker in the top bar: the server's simulations, kept current by asking
// `GET /v1/simulations` every few seconds and when the window regains focus (the list has no
// stream of its own); choosing one opens the dashboard on it (`?simulation=id`). It also says
// so when the page's simulation does not exist or is deleted while shown.

import { get } from "./api.js";
import { h, reconcile, setText } from "./dom.js";
import { DEFAULT_SIMULATION } from "./islet-stream.js";
import { simulation, urlFor } from "./simulation.js";

export class SimulationPicker {
  /**
   * @param select the `<select>` to fill.
   * @param notice the element that tells of a missing or deleted simulation.
   * @param stream the page's stream, whose `resync` (`deleted`) ends this simulation.
   * @param onMissing called once when the page's simulation turns out to be gone (the page
   *   closes its stream there: nothing more can arrive from it).
   */
  constructor(select, notice, stream, { pollMs = 3000, onMissing = () => {} } = {}) {
    this.select = select;
    this.notice = notice;
    this.pollMs = pollMs;
    this.onMissing = onMissing;
    this.gone = null;
    this.ids = [simulation];
    this.render();
    select.addEventListener("change", () => location.assign(urlFor(select.value)));
    stream.addEventListener("resync", ({ detail }) => {
      if (detail.reason === "deleted" && (detail.simulation ?? DEFAULT_SIMULATION) === simulation) this.missing("was deleted");
    });
    stream.addEventListener("error", ({ detail }) => {
      if (detail.error?.code === "not_found" && detail.error?.field === "/simulation") this.missing("does not exist");
    });
  }

  /** Reads the list now, then every `pollMs` and on focus. */
  start() {
    this.refresh();
    setInterval(() => this.refresh(), this.pollMs);
    window.addEventListener("focus", () => this.refresh());
    return this;
  }

  async refresh() {
    let list;
    try {
      list = (await get("/v1/simulations")).simulations ?? [];
    } catch {
      // Offline (the connection badge says so), or a simulation's own token, which may not
      // list the others: the picker keeps what it shows.
      return;
    }
    const ids = list.map((entry) => entry.id);
    if (!ids.includes(simulation)) this.missing(this.shown ? "was deleted" : "does not exist");
    this.shown = ids.includes(simulation) || this.shown;
    this.ids = ids.includes(simulation) ? ids : [...ids, simulation].sort();
    this.render();
  }

  render() {
    const label = (id) => (id === simulation && this.gone ? `${id} (${this.gone})` : id);
    reconcile(this.select, this.ids, (id) => id, (id) => h("option", { value: id }), (el, id) => setText(el, label(id)));
    this.select.value = simulation;
    this.select.dataset.count = String(this.ids.length);
  }

  /** Says that this page's simulation is gone, with a way back to `default` (or any other in the picker). */
  missing(what) {
    if (this.gone) return;
    this.gone = what === "was deleted" ? "deleted" : "not found";
    this.notice.replaceChildren(
      `Simulation “${simulation}” ${what}. `,
      simulation === DEFAULT_SIMULATION ? "" : h("a", { href: urlFor(DEFAULT_SIMULATION), text: "Show default" }),
      simulation === DEFAULT_SIMULATION ? "" : " or choose another above.",
    );
    this.notice.hidden = false;
    document.documentElement.dataset.simulation = "missing";
    this.render();
    this.onMissing(what);
  }
}
