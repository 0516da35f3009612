// A widget at its family size (WK-1) with its content margin (WK-7), its rendering mode by
// place (WK-8: full color or accented on the Home Screen, vibrant on the Lock Screen, StandBy
// with the background removed) and the server's HTML for the shown entry.

import { h, setVars, setText } from "../dom.js";
import { setFragment } from "../fragment.js";
import { readableOn } from "../color.js";

export function createWidget() {
  const content = h("div", { class: "widget-content" });
  const el = h("div", { class: "widget" }, content);
  el.isletParts = { content };
  return el;
}

/**
 * Updates a widget element. `ctx`: {app, animate, mode} where `mode` overrides the rendering
 * mode (`standby`); sizes come from `widget.size` unless `size` is given.
 */
export function updateWidget(el, widget, { app, animate, mode, size } = {}) {
  if (!widget) {
    el.classList.add("is-loading");
    return el;
  }
  el.classList.remove("is-loading");
  const { content } = el.isletParts;
  const identity = app?.identity ?? {};
  const presentation = widget.presentation ?? {};
  const dims = size ?? widget.size ?? { width: 158, height: 158 };
  setVars(el, {
    "--w": dims.width, "--h": dims.height, "--pad": widget.layout?.margin ?? 16,
    "--tint": identity.tint ?? "#0A84FF", "--app-bg": identity.background ?? null,
    "--app-fg": identity.foreground ?? readableOn(identity.background) ?? null,
    "--accent": presentation.tint ?? null,
  });
  el.dataset.kind = widget.kind;
  el.dataset.family = widget.family;
  el.dataset.widget = widget.id;
  el.dataset.mode = mode ?? presentation.renderingMode ?? "fullColor";
  el.classList.toggle("is-placeholder", Boolean(widget.current?.placeholder));
  el.classList.toggle("no-background", Boolean(mode === "standby" || presentation.backgroundRemoved));
  el.setAttribute("aria-label", `${app?.name ?? widget.app} widget`);
  if (setFragment(content, widget.render?.html ?? "", { animate })) {
    for (const bar of content.querySelectorAll(".islet-redacted")) {
      bar.style.setProperty("--chars", Math.min(24, Number(bar.dataset.chars) || 6));
    }
  }
  return el;
}

/** The label under a Home Screen widget (the app's name), as iOS shows it. */
export function widgetLabel(labelEl, app) {
  setText(labelEl, app?.name ?? "");
}
