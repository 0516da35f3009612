// The Lock Screen presentation of a Live Activity (a card), shared by the Lock Screen list,
// the banner of devices without an island, and StandBy (scaled 2×). Width comes from the
// device geometry, height from `render.layout.lockScreen`, colors from the app's identity
// (PR-9: default white in light, black in dark).

import { h, setVars, setAttr, setText } from "../dom.js";
import { setFragment } from "../fragment.js";
import { readableOn } from "../color.js";

export function createCard() {
  const content = h("div", { class: "card-content" });
  const badge = h("span", { class: "card-badge" });
  const el = h("article", { class: "la-card" }, content, badge);
  el.isletParts = { content, badge };
  return el;
}

/** Updates a card. `ctx`: {device, app, animate}. */
export function updateCard(el, activity, { device, app, animate }) {
  const { content, badge } = el.isletParts;
  const identity = app?.identity ?? {};
  const fallback = device.scene?.lockScreen?.defaultBackground ?? (device.appearance === "dark" ? "#000000" : "#FFFFFF");
  const background = identity.background ?? fallback;
  const foreground = identity.foreground ?? readableOn(background) ?? "#000000";
  const layout = activity.render?.layout?.lockScreen ?? {};
  setVars(el, {
    "--card-bg": background, "--card-fg": foreground, "--tint": identity.tint ?? foreground,
    "--card-w": device.geometry?.lockScreenWidth ?? device.screen.width - 28,
    "--card-h": layout.height ?? 160,
  });
  const state = activity.activityState;
  el.dataset.state = state;
  el.dataset.activity = activity.id;
  el.classList.toggle("is-ended", state === "ended");
  el.classList.toggle("is-stale", state === "stale");
  el.classList.toggle("is-truncated", Boolean(layout.truncated));
  setAttr(el, "aria-label", `${app?.name ?? activity.app} Live Activity${state === "active" ? "" : ` (${state})`}`);
  setText(badge, state === "stale" ? "Stale" : state === "ended" ? "Ended" : "");
  badge.hidden = state !== "stale" && state !== "ended";
  setFragment(content, activity.render?.lockScreen ?? "", { animate });
  // PR-8: controls work only when the device is unlocked.
  setAttr(content, "inert", !device.scene?.interactive);
  return el;
}
