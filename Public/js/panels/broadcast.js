// The broadcast composer: one update or end for every activity subscribed to a channel,
// `POST /4/broadcasts/apps/<bundle>` with `apns-channel-id`, as a backend sends it. The reply is
// what APNs answers; what each subscriber did with it is in the app's deliveries.

import { h, plural } from "../dom.js";
import { apnsRequest, seg } from "../api.js";
import { segmented } from "../controls.js";
import { JsonField } from "./json-field.js";
import { reportError, reportOK } from "./status.js";
import { syncOptions } from "./composer-panel.js";
import { shortId, sortedChannels } from "./channels.js";

const field = (label, control, id) => h("label", { class: "field", attrs: { for: id } }, h("span", { text: label }), control);

export class BroadcastComposer {
  constructor({ store }) {
    this.store = store;
    this.event = "update";
    this.channel = h("select", { id: "broadcast-channel", on: { change: () => this.prefill() } });
    this.eventControl = segmented("Event", "broadcast-event", [["update", "Update"], ["end", "End"]], (event) => this.setEvent(event));
    this.priority = h("select", { id: "broadcast-priority" },
      ...[["10", "10 (immediate, budgeted)"], ["5", "5 (opportunistic)"], ["1", "1 (low power)"]].map(([value, text]) => h("option", { value, text })));
    this.dismissal = h("select", { id: "broadcast-dismissal" },
      ...[["default", "Default (4 h)"], ["immediate", "Immediate"]].map(([value, text]) => h("option", { value, text })));
    this.state = new JsonField("content-state (JSON)", { rows: 6, id: "broadcast-state" });
    this.submit = h("button", { class: "button button-primary", type: "submit", text: "Broadcast" });
    this.status = h("p", { class: "panel-status", attrs: { role: "status" } });
    this.endOnly = h("div", { class: "group" }, field("Dismissal", this.dismissal, "broadcast-dismissal"));
    this.el = h("form", { class: "broadcast", attrs: { "aria-label": "Broadcast to a channel" }, on: { submit: (e) => { e.preventDefault(); this.send(); } } },
      field("Channel", this.channel, "broadcast-channel"),
      h("div", { class: "row" }, h("div", { class: "field" }, h("span", { class: "label", text: "Event" }), this.eventControl.el),
        field("apns-priority", this.priority, "broadcast-priority"), this.endOnly),
      this.state.el,
      h("div", { class: "row actions" }, this.submit), this.status);
    this.eventControl.set("update");
    this.endOnly.hidden = true;
  }

  setEvent(event) {
    this.event = event;
    this.endOnly.hidden = event !== "end";
  }

  /** Lists `app`'s channels; the content state is prefilled when a channel is first chosen. */
  update(app, doc) {
    const changedApp = this.app?.id !== app?.id;
    this.app = app;
    this.doc = doc;
    const before = this.channel.value;
    syncOptions(this.channel, sortedChannels(app).map((c) =>
      [c.id, `${shortId(c.id)} · policy ${c.storagePolicy} · ${plural(c.subscribers, "subscriber")}`]));
    this.submit.disabled = !this.channel.value;
    if (changedApp || (this.channel.value && this.channel.value !== before)) this.prefill();
  }

  /** The content state of a subscriber of the chosen channel (else of any activity of the app). */
  prefill() {
    const activities = Object.values(this.doc?.activities ?? {}).filter((a) => a.app === this.app?.id && a.activityState !== "dismissed");
    const sample = activities.find((a) => a.pushChannel === this.channel.value) ?? activities[0];
    this.state.value = sample?.content?.state ?? {};
  }

  payload() {
    const timestamp = Math.floor(this.store.clock.now() / 1000);
    const aps = { timestamp, event: this.event, "content-state": this.state.value };
    if (this.event === "end" && this.dismissal.value === "immediate") aps["dismissal-date"] = timestamp;
    return { aps };
  }

  async send() {
    const app = this.app;
    const channel = this.channel.value;
    if (!app || !channel) return;
    if (!this.state.validate()) {
      reportError(this.status, { message: "Fix the JSON first." });
      return;
    }
    const headers = { "apns-push-type": "liveactivity", "apns-channel-id": channel, "apns-priority": this.priority.value };
    try {
      const reply = await apnsRequest("POST", `/4/broadcasts/apps/${seg(app.id)}`, headers, this.payload());
      if (reply.status === 200) reportOK(this.status, `200 OK · apns-id ${reply.apnsId}. See the deliveries for what the subscribers did.`);
      else reportError(this.status, { message: `${reply.status} ${reply.reason ?? ""}`.trim() });
    } catch (error) {
      reportError(this.status, error);
    }
  }
}
