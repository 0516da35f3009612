// The island close-up: the top of the screen at true size, with the status bar and the
// Dynamic Island (or, on a device without one, the alert banner).

import { h, setText } from "../dom.js";
import { createFrame, updateFrame, createStatusBar, updateStatusBar, createWallpaper } from "./frame.js";
import { Island } from "./island.js";
import { Banner } from "./banner.js";
import { timeText } from "../clock.js";

export const CLOSE_UP_HEIGHT = 236;

export class IslandView {
  constructor({ onPress }) {
    this.parts = createFrame({ crop: CLOSE_UP_HEIGHT, label: "Dynamic Island close-up" });
    this.status = createStatusBar();
    this.island = new Island({ onPress });
    this.banner = new Banner();
    this.note = h("p", { class: "island-note" });
    this.parts.screen.classList.add("closeup");
    this.parts.screen.append(createWallpaper(), this.status.el, this.island.el, this.banner.el, this.note);
    this.el = this.parts.box;
  }

  update(ctx) {
    this.zone = ctx.device.timeZone;
    updateFrame(this.parts, ctx.device);
    this.island.update(ctx);
    this.banner.update(ctx);
    this.note.hidden = ctx.device.dynamicIsland || !this.banner.el.hidden;
    setText(this.note, "No Dynamic Island: an alerting update shows a banner here.");
    this.parts.screen.dataset.mode = ctx.device.scene?.island?.mode ?? "none";
    this.tick(ctx.now);
  }

  tick(now) { updateStatusBar(this.status, timeText(now, this.zone)); }
}
