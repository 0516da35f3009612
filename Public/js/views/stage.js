// The device stage: the selected device's four presentations side by side (island close-up,
// Lock Screen, StandBy, Home Screen), each captioned with what it shows, scaled by the zoom.

import { h, plural, setText, setVars } from "../dom.js";
import { IslandView } from "./islandview.js";
import { LockScreenView } from "./lockscreen.js";
import { StandByView } from "./standby.js";
import { HomeView } from "./home.js";

const round = (n) => Math.round(n * 100) / 100;

export class Stage {
  /** `actions`: {press(deviceId, activityId), setDevice(deviceId, fields), tapStandBy(deviceId)}. */
  constructor(root, actions) {
    this.root = root;
    const onPress = (activity) => this.device && actions.press(this.device.id, activity);
    this.views = {
      island: new IslandView({ onPress }),
      lock: new LockScreenView(),
      standby: new StandByView({
        onEnter: () => this.device && actions.setDevice(this.device.id, { standby: true, locked: true }),
        onTap: () => this.device && actions.tapStandBy(this.device.id),
      }),
      home: new HomeView({ onPress }),
    };
    const titles = { island: "Dynamic Island", lock: "Lock Screen", standby: "StandBy", home: "Home Screen" };
    this.captions = {};
    this.figures = {};
    for (const [name, view] of Object.entries(this.views)) {
      const detail = h("span", { class: "caption-detail" });
      this.captions[name] = detail;
      this.figures[name] = h("figure", { class: "presentation", dataset: { view: name } },
        view.el, h("figcaption", {}, h("strong", { text: titles[name] }), detail));
      root.append(this.figures[name]);
    }
  }

  setZoom(zoom) { setVars(this.root, { "--zoom": zoom }); }

  update(ctx) {
    this.device = ctx.device;
    for (const view of Object.values(this.views)) view.update(ctx);
    this.caption(ctx);
  }

  tick(now) {
    for (const view of Object.values(this.views)) view.tick(now);
  }

  caption({ device, widgets, apps, activities }) {
    const scene = device.scene ?? {};
    const island = scene.island ?? {};
    setText(this.captions.island, device.dynamicIsland
      ? `${island.mode === "none" ? "idle" : island.mode} · ${this.views.island.island.el.dataset.width ?? round(island.width)} × ${round(island.height)} pt${island.mode === "compact" ? ` (max ${round(island.width)})` : ""}`
      : scene.banner ? "banner (no Dynamic Island)" : "no Dynamic Island");
    const lock = scene.lockScreen ?? {};
    setText(this.captions.lock, `${plural((lock.activities ?? []).length, "activity", "activities")} · ${plural((lock.widgets ?? []).length, "accessory", "accessories")}${device.locked ? " · locked" : ""}${scene.alwaysOn ? " · Always-On" : ""}`);
    const standby = scene.standby;
    const standbyApp = apps[activities[standby?.activity]?.app]?.name;
    const scale = this.views.standby.fit ?? standby?.scale ?? 2;
    const shown = standby?.view === "minimal" ? `${standbyApp} minimal · widgets` : `${standbyApp} at ${scale}×${scale < (standby?.scale ?? 2) ? " (fit)" : ""}`;
    const parts = !standby ? [this.views.standby.fit ? "off · preview" : "off"] : [standbyApp ? shown : "widgets"];
    if (standby?.night) parts.push("Night Mode");
    setText(this.captions.standby, parts.join(" · "));
    const tops = (scene.home?.stacks ?? []).map((s) => apps[widgets[s.top]?.app]?.name ?? s.top);
    setText(this.captions.home, tops.length ? `Smart Stack: ${tops.join(", ")}` : plural((scene.home?.widgets ?? []).length, "widget"));
  }
}
