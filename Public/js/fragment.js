// Server HTML fragments (the `render` slots) into the DOM, with iOS-like content transitions:
// a changed number rolls (numeric content transition), changed text blurs in, and a fragment
// whose structure changed cross-fades (content replace transition).
//
// Fragments come from the server's templates, which escape every value; they are the only
// server strings inserted as HTML. Inline handlers and style attributes in them are inert under
// the dashboard's Content-Security-Policy.

const DIGITS = /\d/;
const firstNumber = (text) => {
  const match = /-?\d+(?:[.,:]\d+)*/.exec(text);
  return match ? Number(match[0].replace(/[,:]/g, "")) : NaN;
};

function parse(html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  return template.content;
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
