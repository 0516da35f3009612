// Measuring rendered fragments, shared by the island's snug layout (PR-10) and the layout
// warnings. Widths are layout widths in CSS px (1 px = 1 pt before the stage's zoom
// transform), so they do not depend on the zoom.

/** The fragment shown in `slot` (not one fading out), or null. */
export function shownFragment(slot) {
  return slot.querySelector(":scope > .frag:not(.frag-out)");
}

/** The width `frag`'s content needs on one line: its box, overflow included (0 when empty). */
export function boxWidth(frag) {
  return frag && frag.childNodes.length ? frag.scrollWidth : 0;
}

/** Rectangles of the text and replaced elements inside `root` (in viewport pixels). */
export function inkRects(root) {
  const rects = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  while (walker.nextNode()) {
    if (!walker.currentNode.data.trim()) continue;
    range.selectNodeContents(walker.currentNode);
    rects.push(...range.getClientRects());
  }
  for (const el of root.querySelectorAll("img, svg, button, meter, progress, input")) rects.push(el.getBoundingClientRect());
  return rects.filter((r) => r.width > 0 && r.height > 0);
}

/** The horizontal extent of `root`'s ink, from its leftmost to its rightmost mark (0 when none). */
export function inkWidth(root) {
  const rects = inkRects(root);
  if (!rects.length) return 0;
  return Math.max(...rects.map((r) => r.right)) - Math.min(...rects.map((r) => r.left));
}

export const clamp = (value, min, max) => Math.min(max, Math.max(min, value));
