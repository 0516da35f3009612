// LA-10 on a device without a Dynamic Island: an alert shows the Lock Screen presentation as
// a banner at the top of the screen until `scene.banner.until`.

import { h } from "../dom.js";
import { createCard, updateCard } from "./card.js";

export class Banner {
  constructor() {
    this.card = createCard();
    this.el = h("div", { class: "banner", attrs: { role: "status", "aria-label": "Alert banner" } }, this.card);
    this.el.hidden = true;
  }

  update({ device, activities, apps, animate }) {
    const banner = device.scene?.banner;
    const activity = banner ? activities[banner.activity] : null;
    const wasHidden = this.el.hidden;
    this.el.hidden = !activity;
    if (!activity) return;
    updateCard(this.card, activity, { device, app: apps[activity.app], animate });
    if (wasHidden && animate) {
      this.el.classList.remove("is-entering");
      void this.el.offsetWidth;
      this.el.classList.add("is-entering");
    }
  }
}
