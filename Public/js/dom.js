// A small DOM helper: element creation without innerHTML, CSS custom properties, and keyed
// list reconciliation. Server strings only ever reach the DOM through textContent here;
// server HTML fragments go through fragment.js.

/**
 * Creates an element. `props`: `class`, `text`, `dataset` {…}, `attrs` {…}, `vars` {--x: v},
 * `on` {event: handler}, and any other key set as a property (e.g. `type`, `value`, `hidden`).
 */
export function h(tag, props = {}, ...children) {
  const el = tag.startsWith("svg:")
    ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4))
    : document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null) continue;
    if (key === "class") el.setAttribute("class", value);
    else if (key === "text") el.textContent = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "attrs") for (const [name, v] of Object.entries(value)) { if (v !== null && v !== undefined && v !== false) el.setAttribute(name, v === true ? "" : v); }
    else if (key === "vars") setVars(el, value);
    else if (key === "on") for (const [event, handler] of Object.entries(value)) el.addEventListener(event, handler);
    else el[key] = value;
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** An SVG element with attributes. */
export function svg(tag, attrs = {}, ...children) {
  return h(`svg:${tag}`, { attrs }, ...children);
}

/** Sets CSS custom properties (numbers become unitless strings; null removes). */
export function setVars(el, vars) {
  for (const [name, value] of Object.entries(vars)) {
    if (value === null || value === undefined) el.style.removeProperty(name);
    else el.style.setProperty(name, String(value));
  }
}

/** "1 subscriber", "2 subscribers": a count with its noun. */
export const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Sets textContent only when it differs (keeps selection and avoids needless mutations). */
export function setText(el, text) {
  const value = text ?? "";
  if (el.textContent !== value) el.textContent = value;
}

/** Toggles a boolean attribute or removes it. */
export function setAttr(el, name, value) {
  if (value === null || value === undefined || value === false) el.removeAttribute(name);
  else if (el.getAttribute(name) !== String(value === true ? "" : value)) el.setAttribute(name, value === true ? "" : value);
}

/**
 * Reconciles `parent`'s children with `items`: one element per key, created by `create(item)`
 * once, updated by `update(el, item)` every time, kept in order, removed when gone.
 */
export function reconcile(parent, items, key, create, update) {
  const existing = new Map();
  for (const child of [...parent.children]) if (child.dataset.key !== undefined) existing.set(child.dataset.key, child);
  let cursor = parent.firstElementChild;
  for (const item of items) {
    const k = String(key(item));
    let el = existing.get(k);
    if (el) existing.delete(k);
    else {
      el = create(item);
      el.dataset.key = k;
    }
    update?.(el, item);
    if (el !== cursor) parent.insertBefore(el, cursor);
    else cursor = cursor.nextElementSibling;
  }
  for (const el of existing.values()) el.remove();
}

/** Calls `fn` at most once per `ms`, with the latest arguments, after the calls stop. */
export function debounce(fn, ms) {
  let timer = null;
  const wrapped = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
  wrapped.cancel = () => clearTimeout(timer);
  return wrapped;
}

/** Whether the person asked for less motion. */
export const reducedMotion = () => matchMedia("(prefers-reduced-motion: reduce)").matches;

/**
 * Runs `fn` once, `frames` animation frames from now (two: after the next paint), or after
 * `fallbackMs` where no frames come (a hidden tab, a headless one-shot screenshot).
 */
export function afterFrames(fn, { frames = 2, fallbackMs = 100 } = {}) {
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    fn();
  };
  const frame = (left) => (left === 0 ? run() : requestAnimationFrame(() => frame(left - 1)));
  frame(frames);
  setTimeout(run, fallbackMs);
}
