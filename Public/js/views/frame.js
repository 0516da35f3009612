// A phone at true point size (1 CSS px = 1 pt at 100 % zoom): hardware frame, screen,
// wallpaper and status bar. The zoom control scales the whole frame with a CSS transform, so
// a rendered size divided by the zoom is the size in points.

import { h, setVars, setText } from "../dom.js";

/** Hardware shape by screen: display corner radius and bezels (points). */
export function hardware(device) {
  const { width, height } = device.screen;
  if (!device.dynamicIsland) {
    // Home-button iPhones (SE): square display corners, tall bezels.
    return { kind: "classic", radius: 0, bezelX: 22, bezelTop: 100, bezelBottom: 100, bodyRadius: 58, statusHeight: 20, width, height };
  }
  return { kind: "island", radius: width >= 430 ? 62 : 55, bezelX: 13, bezelTop: 13, bezelBottom: 13, bodyRadius: (width >= 430 ? 62 : 55) + 13, statusHeight: 54, width, height };
}

/**
 * Builds a frame. `landscape` turns it (StandBy); `crop` shows only the top `crop` points of
 * the screen (the island close-up). Returns {box, frame, screen, status}.
 */
export function createFrame({ landscape = false, crop = null, label }) {
  const screen = h("div", { class: "screen" });
  const frame = h("div", { class: "phone", attrs: { role: "group", "aria-label": label } },
    h("div", { class: "phone-body" }, screen),
    h("span", { class: "phone-button phone-button-action", attrs: { "aria-hidden": "true" } }),
    h("span", { class: "phone-button phone-button-volume", attrs: { "aria-hidden": "true" } }),
    h("span", { class: "phone-button phone-button-power", attrs: { "aria-hidden": "true" } }),
    h("span", { class: "phone-home", attrs: { "aria-hidden": "true" } }),
    h("span", { class: "phone-speaker", attrs: { "aria-hidden": "true" } }));
  const box = h("div", { class: "frame-box" }, frame);
  if (landscape) box.classList.add("is-landscape");
  if (crop) box.classList.add("is-crop");
  return { box, frame, screen, crop, landscape };
}

/** Applies a device's geometry and appearance to a frame built by createFrame. */
export function updateFrame(parts, device) {
  const hw = hardware(device);
  const { box, frame, screen } = parts;
  const screenW = parts.landscape ? hw.height : hw.width;
  const screenH = parts.landscape ? hw.width : hw.height;
  const bodyW = screenW + (parts.landscape ? hw.bezelTop + hw.bezelBottom : 2 * hw.bezelX);
  const bodyH = screenH + (parts.landscape ? 2 * hw.bezelX : hw.bezelTop + hw.bezelBottom);
  const visibleH = parts.crop ? Math.min(bodyH, parts.crop + hw.bezelTop) : bodyH;
  setVars(box, { "--body-w": bodyW, "--body-h": visibleH });
  setVars(frame, {
    "--screen-w": screenW, "--screen-h": screenH, "--body-w": bodyW, "--body-h": bodyH,
    "--screen-r": hw.radius, "--body-r": hw.bodyRadius,
    "--bezel-x": parts.landscape ? hw.bezelTop : hw.bezelX, "--bezel-y": parts.landscape ? hw.bezelX : hw.bezelTop,
    "--status-h": hw.statusHeight, "--island-w": device.geometry?.islandWidth ?? 230,
  });
  frame.dataset.hardware = hw.kind;
  frame.dataset.appearance = device.appearance === "dark" ? "dark" : "light";
  screen.dataset.appearance = frame.dataset.appearance;
  return hw;
}

const SIGNAL = [4, 6, 8.5, 11];

/** The status bar: time on the left, signal, Wi-Fi and battery on the right. */
export function createStatusBar() {
  const time = h("span", { class: "sb-time" });
  const bars = h("span", { class: "sb-signal", attrs: { "aria-hidden": "true" } },
    ...SIGNAL.map((height) => h("i", { vars: { "--bar-h": height } })));
  const wifi = h("span", { class: "sb-wifi", attrs: { "aria-hidden": "true" } }, h("i"), h("i"), h("i"));
  const battery = h("span", { class: "sb-battery", attrs: { "aria-hidden": "true" } }, h("i"));
  const el = h("div", { class: "status-bar" }, h("span", { class: "sb-left" }, time), h("span", { class: "sb-right" }, bars, wifi, battery));
  return { el, time };
}

export function updateStatusBar(bar, timeText) {
  setText(bar.time, timeText);
}

/** A wallpaper layer (CSS gradients by appearance). */
export const createWallpaper = () => h("div", { class: "wallpaper", attrs: { "aria-hidden": "true" } });
