// Accessible tabs (WAI-ARIA tabs pattern): arrow keys, Home and End move between tabs,
// activation follows focus, only the selected tab is in the tab order.

/**
 * Wires a `[role=tablist]` whose `[role=tab]` buttons name their panel in `aria-controls`.
 * `onSelect(tab)` is called when the selection changes. Returns {select(id)}.
 */
export function tabs(list, onSelect) {
  const all = () => [...list.querySelectorAll('[role="tab"]')];
  const select = (tab, focus = false) => {
    for (const t of all()) {
      const on = t === tab;
      t.setAttribute("aria-selected", String(on));
      t.tabIndex = on ? 0 : -1;
      const panel = t.getAttribute("aria-controls");
      if (panel) document.getElementById(panel).hidden = !on;
    }
    if (focus) tab.focus();
    onSelect?.(tab);
  };
  list.addEventListener("click", (event) => {
    const tab = event.target.closest('[role="tab"]');
    if (tab) select(tab);
  });
  list.addEventListener("keydown", (event) => {
    const items = all();
    const index = items.indexOf(document.activeElement);
    if (index < 0) return;
    const vertical = list.getAttribute("aria-orientation") === "vertical";
    const next = { [vertical ? "ArrowDown" : "ArrowRight"]: index + 1, [vertical ? "ArrowUp" : "ArrowLeft"]: index - 1, Home: 0, End: items.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    select(items[(next + items.length) % items.length], true);
  });
  return {
    select(id) {
      const tab = all().find((t) => t.dataset.id === id);
      if (tab) select(tab);
    },
  };
}
