// The snapshot mode of `islet snapshot` (docs/API.md, "PNG snapshots"): with `?snapshot=island|
// lock|standby|home`, this keeps `html[data-snapshot-rect]` ("x y width height", CSS px) at the
// page box of that view of the selected device once the dashboard has drawn, re-measuring on
// every change of the DOM, of a size or of the fonts (late layout shifts move the box). The CLI
// reads the last value and crops Chromium's screenshot, taken with a window tall enough that
// nothing scrolls. The dashboard itself is unchanged.

const view = new URLSearchParams(location.search).get("snapshot");
const root = document.documentElement;

function measure() {
  if (root.dataset.firstIsland === undefined || root.dataset.panels !== "ready") return;
  const frame = document.querySelector(`[data-view="${CSS.escape(view)}"] .frame-box`);
  if (!frame) return;
  const r = frame.getBoundingClientRect();
  const rect = [r.left + scrollX, r.top + scrollY, r.width, r.height].map((n) => Math.round(n)).join(" ");
  if (root.dataset.snapshotRect !== rect) root.dataset.snapshotRect = rect;
}

if (view) {
  root.dataset.snapshot = view;
  new MutationObserver(measure).observe(root, { attributes: true, subtree: true, childList: true, characterData: true });
  new ResizeObserver(measure).observe(document.body);
  document.fonts.ready.then(measure);
}
