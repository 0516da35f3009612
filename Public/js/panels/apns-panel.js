// The Push panel. "Device token": the raw APNs sender, `POST /3/device/<token>` with Apple's
// headers and an `aps` payload, as a backend would send it. "Channels & widgets": the app's
// broadcast channels, broadcasts and WidgetKit pushes (app-push.js). Replies are what APNs would
// answer; what the device did with each push is in the app's deliveries, listed below both.

import { h } from "../dom.js";
import { apnsPush } from "../api.js";
import { segmented } from "../controls.js";
import { reportError, reportOK } from "./status.js";
import { syncOptions } from "./composer-panel.js";
import { Deliveries } from "./deliveries.js";
import { AppPushSection } from "./app-push.js";

const field = (label, control, id) => h("label", { class: "field", attrs: { for: id } }, h("span", { text: label }), control);

export class ApnsPanel {
  constructor(root, { store }) {
    this.store = store;
    this.token = h("select", { id: "apns-token", on: { change: () => { this.prefill("auto"); this.followToken(); } } });
    this.pushType = h("input", { id: "apns-push-type", value: "liveactivity" });
    this.topic = h("input", { id: "apns-topic" });
    this.priority = h("select", { id: "apns-priority" }, h("option", { value: "10", text: "10 (immediate, budgeted)" }), h("option", { value: "5", text: "5 (opportunistic)" }));
    this.payload = h("textarea", { id: "apns-payload", rows: 9, spellcheck: false, class: "code" });
    this.templates = h("div", { class: "row" },
      ...["start", "update", "end"].map((event) => h("button", { class: "button button-small", type: "button", text: `${event} template`, on: { click: () => this.prefill(event) } })));
    this.status = h("p", { class: "panel-status", attrs: { role: "status" } });
    this.form = h("form", { on: { submit: (e) => { e.preventDefault(); this.send(); } } },
      field("Device token", this.token, "apns-token"),
      h("div", { class: "row" }, field("apns-push-type", this.pushType, "apns-push-type"), field("apns-priority", this.priority, "apns-priority")),
      field("apns-topic", this.topic, "apns-topic"), this.templates, field("Payload", this.payload, "apns-payload"),
      h("div", { class: "row actions" }, h("button", { class: "button button-primary", type: "submit", text: "Send push" })), this.status);
    this.appPush = new AppPushSection({ store, onSelect: () => this.showDeliveries() });
    this.modeControl = segmented("Send with", "push-mode", [["token", "Device token"], ["app", "Channels & widgets"]], (mode) => this.setMode(mode));
    this.deliveries = new Deliveries();
    root.append(h("div", { class: "field" }, h("span", { class: "label", text: "Send with" }), this.modeControl.el),
      this.form, this.appPush.el, h("h3", { text: "Deliveries" }), this.deliveries.el);
    this.modeControl.set("token");
    this.setMode("token");
  }

  setMode(mode) {
    this.mode = mode;
    this.form.hidden = mode !== "token";
    this.appPush.el.hidden = mode !== "app";
    this.showDeliveries();
  }

  /** The deliveries of the app being pushed to: the token's, or the one chosen for channels. */
  showDeliveries() {
    if (!this.doc) return;
    this.deliveries.update(this.mode === "app" ? this.appPush.selected : this.target().app);
  }

  update(doc) {
    this.doc = doc;
    const options = [];
    for (const a of Object.values(doc.activities)) {
      if (a.pushToken) options.push([a.pushToken, `${doc.apps[a.app]?.name ?? a.app} · ${a.id} (${a.activityState}) — update/end`]);
    }
    const hasActivities = new Set(Object.values(doc.activities).map((a) => a.app));
    const apps = Object.values(doc.apps).filter((a) => a.pushToStartToken)
      .sort((a, b) => Number(hasActivities.has(b.id)) - Number(hasActivities.has(a.id)) || a.name.localeCompare(b.name));
    for (const app of apps) options.push([app.pushToStartToken, `${app.name} — push-to-start`]);
    const before = this.token.value;
    syncOptions(this.token, options);
    if (!before && this.token.value) this.prefill("auto");
    this.appPush.update(doc);
    this.followToken();
  }

  /** The channels follow the app of the chosen token (the operator may then pick another). */
  followToken() {
    const app = this.target().app?.id;
    if (app !== this.tokenApp) {
      this.tokenApp = app;
      this.appPush.select(app);
    }
    this.showDeliveries();
  }

  target() {
    const token = this.token.value;
    const activity = Object.values(this.doc.activities).find((a) => a.pushToken === token);
    const app = activity ? this.doc.apps[activity.app] : Object.values(this.doc.apps).find((a) => a.pushToStartToken === token);
    return { activity, app };
  }

  prefill(event) {
    if (!this.doc) return;
    const { activity, app } = this.target();
    if (!app) return;
    this.topic.value = `${app.id}.push-type.liveactivity`;
    const kind = event === "auto" ? (activity ? "update" : "start") : event;
    const aps = { timestamp: Math.floor(this.store.clock.now() / 1000), event: kind };
    const sample = activity ?? Object.values(this.doc.activities).find((a) => a.app === app.id);
    aps["content-state"] = sample?.content?.state ?? {};
    if (kind === "start") {
      aps["attributes-type"] = sample?.attributesType ?? "";
      aps.attributes = sample?.attributes ?? {};
      aps.alert = { title: app.name, body: "Started from a push" };
      aps["input-push-token"] = 1;
    }
    if (kind === "end") aps["dismissal-date"] = aps.timestamp + 60;
    this.payload.value = JSON.stringify({ aps }, null, 2);
  }

  async send() {
    const token = this.token.value;
    if (!token) return;
    const headers = { "apns-push-type": this.pushType.value, "apns-priority": this.priority.value };
    if (this.topic.value) headers["apns-topic"] = this.topic.value;
    try {
      const reply = await apnsPush(token, headers, this.payload.value);
      if (reply.status === 200) reportOK(this.status, `200 OK · apns-id ${reply.apnsId}. See the deliveries for what the device did.`);
      else reportError(this.status, { message: `${reply.status} ${reply.reason ?? ""}`.trim() });
    } catch (error) {
      reportError(this.status, error);
    }
  }
}
