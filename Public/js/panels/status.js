// The one-line result of an operator action, read out by screen readers (role=status).

import { setText } from "../dom.js";

export function reportOK(el, text) {
  el.dataset.kind = "ok";
  setText(el, text);
}

export function reportError(el, error) {
  el.dataset.kind = "error";
  const where = error.field ? ` (at ${error.field})` : "";
  const code = error.code && error.code !== "http" ? `${error.code}: ` : "";
  setText(el, `${code}${error.message}${where}`);
}

/** Clears an earlier result (an error that the next accepted action makes stale). */
export function clearStatus(el) {
  delete el.dataset.kind;
  setText(el, "");
}
