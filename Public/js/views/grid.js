// Several devices side by side: one row per chosen device with the chosen presentations
// (island close-up, Lock Screen, StandBy, Home Screen), each a live view of the same document
// as the one-device stage, and as clickable (a press expands the island, a tap on StandBy's
// minimal presentation goes full screen).

import { h, reconcile, setText } from "../dom.js";
import { IslandView } from "./islandview.js";
import { LockScreenView } from "./lockscreen.js";
import { StandByView } from "./standby.js";
import { HomeView } from "./home.js";

/** The presentations a grid cell can show, in display order, with their titles. */
export const GRID_VIEWS = { island: "Dynamic Island", lock: "Lock Screen", standby: "StandBy", home: "Home Screen" };

export class DeviceGrid {
  /** `actions`: as the stage's ({press, setDevice, tapStandBy}). */
  constructor(root, actions) {
    this.root = root;
    this.actions = actions;
  }

  /**
   * Draws `devices` (in order) × `views` (names of GRID_VIEWS). `ctxFor(device)` gives a view's
   * update context for that device ({device, activities, apps, widgets, stacks, animate, now}).
   */
  update({ devices, views, ctxFor, title }) {
    const names = Object.keys(GRID_VIEWS).filter((name) => views.includes(name));
    reconcile(this.root, devices, (d) => d.id, (d) => this.createRow(d.id), (row, device) => {
      setText(row.heading, `${title(device)} · ${device.id}`);
      const ctx = ctxFor(device);
      reconcile(row.cells, names, (name) => name, (name) => this.createCell(device.id, name), (cell) => cell.view.update(ctx));
    });
  }

  tick(now) {
    for (const cell of this.root.querySelectorAll(".presentation")) cell.view.tick(now);
  }

  createRow(id) {
    const heading = h("h2", { class: "grid-heading" });
    const cells = h("div", { class: "grid-cells" });
    const row = h("section", { class: "grid-row", dataset: { device: id }, attrs: { "aria-label": id } }, heading, cells);
    Object.assign(row, { heading, cells });
    return row;
  }

  createCell(deviceId, name) {
    const onPress = (activity) => this.actions.press(deviceId, activity);
    const view = {
      island: () => new IslandView({ onPress }),
      lock: () => new LockScreenView(),
      standby: () => new StandByView({
        onEnter: () => this.actions.setDevice(deviceId, { standby: true, locked: true }),
        onTap: () => this.actions.tapStandBy(deviceId),
      }),
      home: () => new HomeView({ onPress }),
    }[name]();
    const cell = h("figure", { class: "presentation", dataset: { view: name, device: deviceId } },
      view.el, h("figcaption", {}, h("strong", { text: GRID_VIEWS[name] })));
    cell.view = view;
    return cell;
  }
}
