// Server HTML fragments (the `render` slots) into the DOM, with iOS-like content transitions:
// a changed number rolls (numeric content transition), changed text blurs in, and a fragment
// whose structure changed cross-fades (content replace transition).
//
// Fragments come from the server's templates, which escape every value; they are the only
// server strings inserted as HTML. A template's own markup is whatever its author wrote, so a
// fragment keeps only the elements and attributes a presentation draws with (below): no
// `meta` (a refresh would take every viewer, and the token in the URL, elsewhere), no links or
// forms going out, no `id` or `name` (which would shadow `document.getElementById` and the
// dashboard's own hooks). Inline handlers and style attributes are also inert under the
// dashboard's Content-Security-Policy.

const DIGITS = /\d/;
const firstNumber = (text) => {
  const match = /-?\d+(?:[.,:]\d+)*/.exec(text);
  return match ? Number(match[0].replace(/[,:]/g, "")) : NaN;
};

const ELEMENTS = new Set([
  "div", "span", "p", "strong", "b", "i", "em", "small", "s", "u", "sub", "sup", "br", "hr", "mark",
  "h1", "h2", "h3", "h4", "h5", "h6", "section", "header", "footer", "article", "aside", "figure", "figcaption",
  "ul", "ol", "li", "dl", "dt", "dd", "table", "thead", "tbody", "tr", "th", "td",
  "time", "meter", "progress", "img", "picture", "abbr", "code",
  "button", "label", "input", "select", "option", "textarea", "fieldset", "legend",
  "svg", "g", "path", "circle", "ellipse", "rect", "line", "polyline", "polygon", "text", "tspan", "title",
]);
const ATTRIBUTES = new Set([
  "class", "title", "role", "lang", "dir", "hidden", "alt", "width", "height", "src",
  "type", "value", "min", "max", "low", "high", "optimum", "step", "datetime", "checked", "disabled",
  "selected", "placeholder", "for", "colspan", "rowspan",
  "viewbox", "d", "fill", "stroke", "stroke-width", "stroke-linecap", "stroke-linejoin", "opacity",
  "cx", "cy", "r", "rx", "ry", "x", "y", "x1", "y1", "x2", "y2", "points", "transform", "xmlns",
]);
// The dashboard's own hooks are not a fragment's to set.
const RESERVED_DATA = ["data-id", "data-view", "data-state", "data-panels", "data-snapshot"];

function allowedAttribute(name) {
  if (ATTRIBUTES.has(name) || name.startsWith("aria-")) return true;
  return name.startsWith("data-") && !RESERVED_DATA.some((reserved) => name.startsWith(reserved));
}

// Removes what a presentation does not draw with, in place: unknown elements with their
// content, unknown attributes.
function sanitize(root) {
  for (const el of [...root.querySelectorAll("*")]) {
    if (el.getRootNode() !== root) continue; // inside an element already removed
    if (!ELEMENTS.has(el.localName)) {
      el.remove();
      continue;
    }
    for (const { name } of [...el.attributes]) if (!allowedAttribute(name.toLowerCase())) el.removeAttribute(name);
  }
  return root;
}

function parse(html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  return sanitize(template.content);
}

function sameShape(a, b) {
  if (a.nodeType !== b.nodeType) return false;
  if (a.nodeType === Node.ELEMENT_NODE && a.tagName !== b.tagName) return false;
  if (a.childNodes.length !== b.childNodes.length) return false;
  for (let i = 0; i < a.childNodes.length; i += 1) if (!sameShape(a.childNodes[i], b.childNodes[i])) return false;
  return true;
}

function restart(el, className) {
  el.classList.remove("num-up", "num-down", "text-change");
  void el.offsetWidth; // restart the CSS animation
  el.classList.add(className);
}

// Updates `target` in place to match `source` (same shape); marks what changed.
function morph(target, source, animate) {
  if (source.nodeType === Node.TEXT_NODE) {
    if (target.data === source.data) return;
    const before = target.data;
    target.data = source.data;
    const parent = target.parentElement;
    if (!animate || !parent) return;
    if (DIGITS.test(before) && DIGITS.test(source.data)) {
      restart(parent, firstNumber(source.data) < firstNumber(before) ? "num-down" : "num-up");
    } else {
      restart(parent, "text-change");
    }
    return;
  }
  if (source.nodeType === Node.ELEMENT_NODE) {
    for (const { name } of [...target.attributes]) if (!source.hasAttribute(name) && name !== "class") target.removeAttribute(name);
    for (const { name, value } of source.attributes) {
      if (name === "class") {
        const keep = [...target.classList].filter((c) => ["num-up", "num-down", "text-change"].includes(c));
        const next = [value, ...keep].join(" ").trim();
        if (target.getAttribute("class") !== next) target.setAttribute("class", next);
      } else if (target.getAttribute(name) !== value) target.setAttribute(name, value);
    }
  }
  for (let i = 0; i < source.childNodes.length; i += 1) morph(target.childNodes[i], source.childNodes[i], animate);
}

/**
 * Shows `html` in `slot`. Nothing happens when the HTML is unchanged. With `animate` false
 * (Always-On, reduced motion) the content is replaced without transitions.
 */
export function setFragment(slot, html, { animate = true } = {}) {
  const value = html ?? "";
  if (slot.isletHTML === value) return false;
  const first = slot.isletHTML === undefined;
  slot.isletHTML = value;
  const next = parse(value);
  let current = slot.querySelector(":scope > .frag:not(.frag-out)");
  if (!current) {
    current = document.createElement("div");
    current.className = "frag";
    slot.replaceChildren(current);
  }
  if (first || !animate || value === "" || current.childNodes.length === 0) {
    current.replaceChildren(next);
    return true;
  }
  const wrapper = document.createElement("div");
  wrapper.append(next);
  if (sameShape(current, wrapper)) {
    morph(current, wrapper, animate);
    return true;
  }
  // Content replace: the old content fades out above the new, which fades in.
  current.classList.add("frag-out");
  current.setAttribute("aria-hidden", "true");
  const incoming = document.createElement("div");
  incoming.className = "frag frag-in";
  incoming.append(...wrapper.childNodes);
  slot.append(incoming);
  const done = () => current.remove();
  current.addEventListener("animationend", done, { once: true });
  setTimeout(done, 600);
  return true;
}

/** Plain text of a fragment (for labels and tests), without parsing it into the page. */
export function fragmentText(html) {
  return (parse(html ?? "").textContent ?? "").replace(/\s+/g, " ").trim();
}
