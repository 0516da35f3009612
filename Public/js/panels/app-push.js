// The Push panel's app-wide pushes: the app's broadcast channels (create, delete, live
// counts), the broadcast composer and the WidgetKit push, each sent to the APNs-style routes
// exactly as a backend would (`/1/apps/<bundle>/channels`, `/4/broadcasts/apps/<bundle>`,
// `/3/device/<widget push token>`).

import { h, plural, setAttr, setText } from "../dom.js";
import { apnsPush, apnsRequest, seg } from "../api.js";
import { reportError, reportOK } from "./status.js";
import { syncOptions } from "./composer-panel.js";
import { ChannelList, policyMeaning, shortId } from "./channels.js";
import { BroadcastComposer } from "./broadcast.js";

const replyText = (reply) => `${reply.status} ${reply.reason ?? ""}`.trim();

export class AppPushSection {
  /** `onSelect()` is called when the operator chooses another app. */
  constructor({ store, onSelect }) {
    this.store = store;
    this.app = h("select", { id: "push-app", on: { change: () => { this.render(); onSelect?.(); } } });
    this.channelStatus = h("p", { class: "panel-status", attrs: { role: "status" } });
    this.channels = new ChannelList({ onDelete: (id) => this.deleteChannel(id), onCopy: (id, ok) => this.copied(id, ok) });
    this.broadcast = new BroadcastComposer({ store });
    this.widgetToken = h("code", { class: "widget-token" });
    this.widgetStatus = h("p", { class: "panel-status", attrs: { role: "status" } });
    const button = (text, click, extra = {}) => h("button", { class: "button button-small", type: "button", text, on: { click }, ...extra });
    this.el = h("div", { class: "app-push" },
      h("label", { class: "field", attrs: { for: "push-app" } }, h("span", { text: "App" }), this.app),
      h("h3", { text: "Broadcast channels" }),
      this.channels.el,
      h("div", { class: "row channel-create" }, h("span", { class: "label", text: "New channel" }),
        button("Create · policy 0", () => this.createChannel(0), { title: policyMeaning(0), id: "channel-create-0" }),
        button("Create · policy 1", () => this.createChannel(1), { title: policyMeaning(1), id: "channel-create-1" })),
      this.channelStatus,
      h("h3", { text: "Broadcast" }),
      this.broadcast.el,
      h("h3", { text: "Widget push" }),
      h("p", { class: "hint" }, "Asks the device to reload every widget of the app (WidgetKit push, charged to each widget's reload budget). Token: ", this.widgetToken),
      h("div", { class: "row" }, button("Send widget push", () => this.widgetPush(), { id: "widget-push" }), button("Copy token", () => this.copyToken())),
      this.widgetStatus);
  }

  /** The chosen app (an entry of `/apps`), if any. */
  get selected() {
    return this.doc?.apps[this.app.value] ?? null;
  }

  /** Chooses an app (the Push panel follows the device token's app). */
  select(id) {
    if (!id || id === this.app.value || !this.doc?.apps[id]) return;
    this.app.value = id;
    this.render();
  }

  update(doc) {
    this.doc = doc;
    const apps = Object.values(doc.apps).sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
    syncOptions(this.app, apps.map((a) => {
      const count = Object.keys(a.channels ?? {}).length;
      return [a.id, count ? `${a.name} · ${plural(count, "channel")}` : a.name];
    }));
    this.render();
  }

  render() {
    if (!this.doc) return;
    const app = this.selected;
    const now = this.store.clock.now();
    this.channels.update(app, this.doc.activities, now);
    this.broadcast.update(app, this.doc);
    setText(this.widgetToken, shortId(app?.widgetPushToken ?? "") || "–");
    setAttr(this.widgetToken, "title", app?.widgetPushToken ?? null);
  }

  async createChannel(policy) {
    const app = this.selected;
    if (!app) return;
    await this.run(this.channelStatus, () => apnsRequest("POST", `/1/apps/${seg(app.id)}/channels`, {},
      { "message-storage-policy": policy, "push-type": "LiveActivity" }),
    (reply) => reply.status === 201 && `201 Created · channel ${reply.channelId} (policy ${policy}).`);
  }

  async deleteChannel(id) {
    const app = this.selected;
    if (!app) return;
    await this.run(this.channelStatus, () => apnsRequest("DELETE", `/1/apps/${seg(app.id)}/channels`, { "apns-channel-id": id }),
      (reply) => reply.status === 204 && `204 · deleted channel ${id}; its subscribers get no more broadcasts.`);
  }

  async widgetPush() {
    const app = this.selected;
    if (!app?.widgetPushToken) return;
    const headers = { "apns-push-type": "widgets", "apns-topic": `${app.id}.push-type.widgets`, "apns-priority": "10" };
    await this.run(this.widgetStatus, () => apnsPush(app.widgetPushToken, headers, JSON.stringify({ aps: { "content-changed": true } })),
      (reply) => reply.status === 200 && `200 OK · apns-id ${reply.apnsId}. See the deliveries for what the device did.`);
  }

  async copyToken() {
    const token = this.selected?.widgetPushToken;
    if (!token) return;
    try {
      await navigator.clipboard.writeText(token);
      reportOK(this.widgetStatus, "Widget push token copied.");
    } catch {
      reportOK(this.widgetStatus, `Widget push token: ${token}`);
    }
  }

  copied(id, ok) {
    reportOK(this.channelStatus, ok ? `Copied ${id}.` : `Channel id: ${id}`);
  }

  /** Sends a request; `success(reply)` is the text of an expected reply, else APNs' reason is shown. */
  async run(status, send, success) {
    try {
      const reply = await send();
      const text = success(reply);
      if (text) reportOK(status, text);
      else reportError(status, { message: replyText(reply) });
    } catch (error) {
      reportError(status, error);
    }
  }
}
