// The dashboard's entry module: the stream, the device stage, the operator panels, the
// connection badge and the once-a-second clock tick.

import { Store, deviceWidgetIds } from "./store.js";
import { Stage } from "./views/stage.js";
import { DeviceGrid, GRID_VIEWS } from "./views/grid.js";
import { tabs } from "./tabs.js";
import { h, setText, setAttr, setVars, reconcile, reducedMotion, afterFrames } from "./dom.js";
import { put, post, seg, apiToken } from "./api.js";
import { clockText, durationText } from "./clock.js";
import { segmented } from "./controls.js";
import { reportError, clearStatus } from "./panels/status.js";
import { simulation } from "./simulation.js";
import { SimulationPicker } from "./simulation-picker.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const ui = {
  device: params.get("device"), zoom: Number(params.get("zoom")) || null, panel: params.get("panel") ?? "clock",
  // The grid of several devices (`?layout=grid&grid=a,b&views=island,lock`); its devices
  // default to all of them.
  grid: params.get("layout") === "grid", gridDevices: params.get("grid")?.split(",").filter(Boolean) ?? null,
  gridViews: params.get("views")?.split(",").filter((v) => v in GRID_VIEWS) ?? ["island", "lock"],
};
const MODEL_NAMES = {
  "iphone-14-pro": "iPhone 14 Pro", "iphone-14-pro-max": "iPhone 14 Pro Max", "iphone-15": "iPhone 15", "iphone-15-plus": "iPhone 15 Plus",
  "iphone-15-pro": "iPhone 15 Pro", "iphone-15-pro-max": "iPhone 15 Pro Max", "iphone-16": "iPhone 16", "iphone-16-plus": "iPhone 16 Plus",
  "iphone-16-pro": "iPhone 16 Pro", "iphone-16-pro-max": "iPhone 16 Pro Max", "iphone-se": "iPhone SE", "iphone-se-3": "iPhone SE",
};
export const modelName = (model) => MODEL_NAMES[model] ?? model;

const store = new Store({ token: apiToken, simulation });
// A simulation that is gone: its stream is closed (the badge reads Closed, not a Live that no
// longer is), and its last picture stays dimmed and out of reach (or none at all, when it never
// existed), since its controls could only answer 404.
const onMissing = () => {
  store.close();
  document.querySelector(".workspace").inert = true;
};
new SimulationPicker($("simulation-picker"), $("simulation-notice"), store.stream, { onMissing }).start();
let firstIsland = false;

// Connection badge: live / resyncing / offline, with the revision.
const badge = $("conn");
store.stream.addEventListener("connection", ({ detail }) => {
  const text = { live: "Live", resyncing: "Resyncing…", connecting: "Connecting…", offline: "Offline", closed: "Closed" }[detail.state];
  badge.dataset.state = detail.state;
  setText($("conn-text"), detail.state === "offline" && detail.retryIn !== undefined ? `Offline · retrying in ${Math.max(1, Math.round(detail.retryIn / 1000))} s` : text);
  $("conn-retry").hidden = detail.state !== "offline";
});
$("conn-retry").addEventListener("click", () => store.stream.retryNow());
// A server that requires a token refuses the stream (`unauthorized`, close 1008) and the page
// would go on saying "Connecting…": say what it lacks, and how to give it.
store.stream.addEventListener("error", ({ detail }) => {
  if (detail.error?.code !== "unauthorized") return;
  const notice = $("simulation-notice");
  notice.replaceChildren(apiToken
    ? "The server refused this page's token. Open the page again with a valid one: #token=… after its address."
    : "This server needs a token. Open the page with #token=… after its address (the admin or viewer token, or a simulation's own).");
  notice.hidden = false;
  document.documentElement.dataset.refused = "token";
});
store.connect(); // the handshake overlaps with building the rest of the page

const status = $("device-status");
// A refused request makes no revision, so nothing would redraw the control the operator moved:
// redraw from the document (the switch goes back to the server's state). The next accepted
// request clears the error line.
const act = (request) => request.then(() => clearStatus(status), (e) => {
  reportError(status, e);
  render();
});
const actions = {
  press: (device, activity) => act(post(`/v1/devices/${seg(device)}/press`, { activity })),
  setDevice: (device, fields) => act(put(`/v1/devices/${seg(device)}`, fields)),
  tapStandBy: (device) => act(post(`/v1/devices/${seg(device)}/standby/tap`)),
};
const stage = new Stage($("stage"), actions);
const grid = new DeviceGrid($("grid"), actions);
// The operator panels load after the first island is drawn: the devices come first.
let panels = null;
async function loadPanels() {
  const [{ ClockPanel }, { RelevancePanel }, { ComposerPanel }, { ApnsPanel }, { DiffPanel }, { WarningsPanel }] = await Promise.all([
    import("./panels/clock-panel.js"), import("./panels/relevance-panel.js"), import("./panels/composer-panel.js"),
    import("./panels/apns-panel.js"), import("./panels/diff-panel.js"), import("./panels/warnings-panel.js"),
  ]);
  panels = {
    clock: new ClockPanel($("panel-clock"), { store }),
    relevance: new RelevancePanel($("panel-relevance"), { store }),
    composer: new ComposerPanel($("panel-composer"), { store }),
    apns: new ApnsPanel($("panel-apns"), { store }),
    diff: new DiffPanel($("panel-diff"), { store }),
    warnings: new WarningsPanel($("panel-warnings"), { store, badge: $("warnings-count"), stage }),
  };
  window.isletDashboard.panels = panels;
  panels.diff.setVisible(ui.panel === "diff");
  document.documentElement.dataset.panels = "ready";
  render();
}
const panelTabs = tabs($("panel-tabs"), (tab) => {
  ui.panel = tab.dataset.id;
  panels?.diff.setVisible(ui.panel === "diff");
  remember();
  render();
});
panelTabs.select(ui.panel);

// Device tabs, settings and zoom.
const deviceTabs = $("device-tabs");
deviceTabs.addEventListener("click", (event) => {
  const tab = event.target.closest('[role="tab"]');
  if (tab) selectDevice(tab.dataset.id, false);
});
deviceTabs.addEventListener("keydown", (event) => {
  const items = [...deviceTabs.querySelectorAll('[role="tab"]')];
  const index = items.indexOf(document.activeElement);
  const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
  if (index < 0 || !step) return;
  event.preventDefault();
  selectDevice(items[(index + step + items.length) % items.length].dataset.id, true);
});

function selectDevice(id, focus) {
  ui.device = id;
  remember();
  render();
  if (focus) deviceTabs.querySelector(`[data-id="${CSS.escape(id)}"]`)?.focus();
}

const appearance = segmented("Appearance", "appearance", [["light", "Light"], ["dark", "Dark"]], (value) => actions.setDevice(ui.device, { appearance: value }));
$("appearance").append(appearance.el);
for (const name of ["locked", "standby", "nightMode", "alwaysOn"]) {
  $(`toggle-${name}`).addEventListener("change", (event) => actions.setDevice(ui.device, { [name]: event.target.checked }));
}
// LA-16: the app on this device's screen ("" clears it).
$("foreground-app").addEventListener("change", (event) => actions.setDevice(ui.device, { foregroundApp: event.target.value }));

const standbyView = segmented("StandBy view", "standby-view", [["fullScreen", "Full screen"], ["minimal", "Minimal"]],
  (value) => actions.setDevice(ui.device, { standbyView: value }));
$("standby-view").append(standbyView.el);

// The grid: several devices side by side, each with the chosen views.
const gridButton = $("layout-grid");
gridButton.addEventListener("click", () => {
  ui.grid = !ui.grid;
  remember();
  render();
});
function gridChoice(name, value, label, checked, onChange) {
  const id = `grid-${name}-${value}`;
  const input = h("input", { type: "checkbox", id, value, on: { change: () => onChange(input.checked) } });
  input.checked = checked;
  return h("label", { class: "check", attrs: { for: id } }, input, h("span", { text: label }));
}
for (const [name, title] of Object.entries(GRID_VIEWS)) {
  $("grid-views").append(gridChoice("view", name, title, ui.gridViews.includes(name), (on) => {
    ui.gridViews = Object.keys(GRID_VIEWS).filter((v) => (v === name ? on : ui.gridViews.includes(v)));
    remember();
    render();
  }));
}

const zoom = $("zoom");
const setZoom = (percent) => {
  const value = Math.min(150, Math.max(25, Math.round(percent / 5) * 5));
  zoom.value = String(value);
  setText($("zoom-value"), `${value}%`);
  stage.setZoom(value / 100);
  setVars($("grid"), { "--zoom": value / 100 });
  ui.zoom = value;
  remember();
};
zoom.addEventListener("input", () => setZoom(Number(zoom.value)));
$("zoom-out").addEventListener("click", () => setZoom(Number(zoom.value) - 10));
$("zoom-in").addEventListener("click", () => setZoom(Number(zoom.value) + 10));
$("zoom-fit").addEventListener("click", () => setZoom(fitZoom()));
let fitted = Boolean(ui.zoom);
setZoom(ui.zoom ?? 50);

// The zoom at which the presentations fit the stage: its width (three columns) and the height
// of the window below the toolbar.
function fitZoom() {
  const stageEl = $("stage");
  const width = (name) => Number(getComputedStyle(stageEl.querySelector(`[data-view="${name}"] .frame-box`) ?? stageEl).getPropertyValue("--body-w")) || 420;
  const natural = width("lock") + width("home") + Math.max(width("island"), width("standby"));
  const byWidth = (stageEl.clientWidth - 2 * 30 - 12) / natural;
  const byHeight = (window.innerHeight - stageEl.getBoundingClientRect().top - 60) / 880;
  const zoom = Math.min(byWidth, Math.max(byHeight, 0.45)) * 100;
  return Math.max(25, Math.min(100, Math.floor(zoom / 5) * 5));
}

function remember() {
  const next = new URLSearchParams(location.search);
  if (ui.device) next.set("device", ui.device);
  if (ui.zoom) next.set("zoom", String(ui.zoom));
  next.set("panel", ui.panel);
  if (ui.grid) next.set("layout", "grid");
  else next.delete("layout");
  if (ui.grid && ui.gridDevices) next.set("grid", ui.gridDevices.join(","));
  if (ui.grid) next.set("views", ui.gridViews.join(","));
  history.replaceState(null, "", `${location.pathname}?${next}`);
}


function render() {
  const doc = store.doc;
  setText($("rev"), store.stream.rev === null ? "rev –" : `rev ${store.stream.rev}`);
  // Nothing is drawn until the island's collections have arrived (one render, not several).
  if (!store.ready && !firstIsland) return;
  const devices = Object.values(doc.devices).sort((a, b) => a.id.localeCompare(b.id));
  // An empty world (a harness's fresh simulation, or its last device deleted) still gets its
  // panels, none of which needs a device: only the device views step aside.
  const empty = !devices.length;
  $("stage-empty").hidden = !empty;
  document.documentElement.toggleAttribute("data-no-devices", empty);
  if (!empty && !doc.devices[ui.device]) ui.device = (devices.find((d) => d.dynamicIsland) ?? devices[0]).id;
  const device = empty ? null : doc.devices[ui.device];
  renderDeviceBar(devices, device, doc.apps);
  // The first island is drawn as it is, not morphed into from nothing (nor from the fitted zoom).
  // LA-14: nothing animates where the scene says so (Always-On).
  const ctxFor = (d) => ({
    device: d, activities: doc.activities, apps: doc.apps, widgets: doc.widgets, stacks: doc.stacks,
    animate: firstIsland && d.scene?.animations?.enabled !== false && !reducedMotion(), now: store.clock.now(),
  });
  if (device) stage.update(ctxFor(device));
  else stage.device = null; // its presses and taps have no device to go to
  const gridDevices = renderGrid(devices, ctxFor);
  const wanted = new Set((device ? [device, ...gridDevices] : []).flatMap((d) => deviceWidgetIds(d, doc.stacks)));
  store.wantWidgets([...wanted].slice(0, 56 * (1 + gridDevices.length)));
  if (!firstIsland && store.ready) firstIslandDrawn();
  if (!fitted && device) {
    fitted = true;
    setZoom(fitZoom());
  }
  if (panels) {
    panels.clock.update(doc);
    if (ui.panel === "relevance") panels.relevance.update(doc, device);
    if (ui.panel === "composer") panels.composer.update(doc, device?.id);
    if (ui.panel === "apns") panels.apns.update(doc);
    panels.warnings.update(doc, device);
  }
  tick();
}

// The grid (when on): its device choices and its rows. Returns the devices it shows.
function renderGrid(devices, ctxFor) {
  gridButton.setAttribute("aria-pressed", String(ui.grid));
  $("grid-area").hidden = !ui.grid;
  $("stage").hidden = ui.grid;
  if (!ui.grid) return [];
  const chosen = (d) => (ui.gridDevices ?? devices.map((x) => x.id)).includes(d.id);
  reconcile($("grid-devices"), devices, (d) => d.id, (d) => gridChoice("device", d.id, d.id, chosen(d), (on) => {
    const current = (ui.gridDevices ?? devices.map((x) => x.id)).filter((id) => id !== d.id);
    ui.gridDevices = devices.map((x) => x.id).filter((id) => (id === d.id ? on : current.includes(id)));
    remember();
    render();
  }), (el, d) => { el.querySelector("input").checked = chosen(d); });
  const shown = devices.filter(chosen);
  grid.update({ devices: shown, views: ui.gridViews, ctxFor, title: (d) => modelName(d.model) });
  return shown;
}

// The device tabs, the selected device's heading and its settings (none: the empty state).
function renderDeviceBar(devices, device, apps) {
  reconcile(deviceTabs, devices, (d) => d.id, (d) => h("button", { type: "button", attrs: { role: "tab", "aria-controls": "stage-panel" }, dataset: { id: d.id } },
    h("span", { class: "tab-title" }), h("span", { class: "tab-sub" })), (el, d) => {
    setText(el.firstElementChild, modelName(d.model));
    setText(el.lastElementChild, d.id);
    setAttr(el, "aria-selected", String(d.id === ui.device));
    el.tabIndex = d.id === ui.device ? 0 : -1;
  });
  if (!device) {
    setText($("device-title"), "No devices yet");
    setText($("device-meta"), "");
    return;
  }
  setText($("device-title"), modelName(device.model));
  setText($("device-meta"), `${device.id} · ${device.screen.width} × ${device.screen.height} pt · ${device.dynamicIsland ? "Dynamic Island" : "no Dynamic Island"}`);
  appearance.set(device.appearance);
  for (const name of ["locked", "standby", "nightMode", "alwaysOn"]) $(`toggle-${name}`).checked = Boolean(device[name]);
  // LA-17: only a model with an Always-On display has the switch.
  $("toggle-alwaysOn").disabled = !device.alwaysOnDisplay;
  standbyView.set(device.standbyView ?? "fullScreen");
  const picker = $("foreground-app");
  const options = [["", "Home Screen"], ...Object.values(apps).sort((a, b) => a.name.localeCompare(b.name)).map((a) => [a.id, a.name])];
  if (picker.options.length !== options.length || options.some(([id], i) => picker.options[i].value !== id)) {
    picker.replaceChildren(...options.map(([id, name]) => h("option", { attrs: { value: id } }, name)));
  }
  picker.value = device.foregroundApp ?? "";
}

// Measured by the browser tests (BENCHMARKS.md): time and bytes until the first island. Then
// the rest loads: the selected device's widgets and the operator panels.
function firstIslandDrawn() {
  firstIsland = true;
  performance.mark("islet:first-island");
  document.documentElement.dataset.firstIslandWsBytes = String(store.stream.stats.bytesReceived);
  document.documentElement.dataset.firstIsland = String(Math.round(performance.now()));
  // Two frames later the island has been painted; only then does the rest start loading (or
  // after 100 ms where no frames come: a headless one-shot screenshot produces none).
  afterFrames(() => {
    performance.mark("islet:first-island-painted");
    store.enableWidgets();
    loadPanels().catch((error) => {
      // The device views keep working; say why the operator panels are missing.
      document.documentElement.dataset.panels = "failed";
      console.error("islet: the operator panels could not load", error);
    });
  });
}

// Every second: clocks, status bars and countdowns extrapolate the simulated time.
function tick() {
  const now = store.clock.now();
  setText($("sim-time"), clockText(now));
  const clock = store.doc.clock;
  setText($("sim-mode"), !clock ? "" : clock.mode === "wall" ? "wall" : clock.rate === 0 ? "paused" : `${clock.rate}×`);
  stage.tick(now);
  if (ui.grid) grid.tick(now);
  panels?.clock.tick();
  // The grid's cells count down as the stage does ("all live").
  for (const el of document.querySelectorAll("#stage [data-countdown-to], #grid [data-countdown-to]")) {
    if (el.dataset.paused === "true") continue;
    const end = Date.parse(el.dataset.countdownTo);
    if (Number.isFinite(end)) setText(el, durationText(Math.ceil((end - now) / 1000)));
  }
}

store.addEventListener("render", render);
setInterval(tick, 1000);

// For harnesses and the browser tests: read-only handles (see docs/browser-client.md).
window.isletDashboard = { store, stream: store.stream, stage, panels: null };
