// Activity composer: start, update or end a Live Activity with a JSON editor for the content
// state; the outcome of each delivery (applied or ignored, and why) is listed live from the
// app's `deliveries`. The raw APNs sender lives in apns-panel.js.

import { h, setText } from "../dom.js";
import { post, patch, seg } from "../api.js";
import { segmented } from "../controls.js";
import { JsonField } from "./json-field.js";
import { reportError, reportOK } from "./status.js";
import { Deliveries } from "./deliveries.js";
import { shortId } from "./channels.js";

const field = (label, control, id) => h("label", { class: "field", attrs: { for: id } }, h("span", { text: label }), control);

export class ComposerPanel {
  constructor(root, { store }) {
    this.store = store;
    this.action = "update";
    this.actionControl = segmented("Action", "composer-action", [["start", "Start"], ["update", "Update"], ["end", "End"]], (a) => this.setAction(a));
    this.app = h("select", { id: "composer-app", on: { change: () => this.prefillStart() } });
    this.type = h("input", { id: "composer-type", attrs: { list: "composer-types", autocomplete: "off" } });
    this.types = h("datalist", { id: "composer-types" });
    this.attributes = new JsonField("Attributes (JSON)", { rows: 3, id: "composer-attributes" });
    this.source = h("select", { id: "composer-source" }, ...["intent", "app", "push"].map((s) => h("option", { value: s, text: s })));
    this.pushToken = h("input", { type: "checkbox", id: "composer-push-token", checked: true });
    this.activity = h("select", { id: "composer-activity", on: { change: () => this.prefillActivity() } });
    this.state = new JsonField("Content state (JSON)", { rows: 7, id: "composer-state" });
    this.relevance = h("input", { type: "number", id: "composer-relevance", step: "any", placeholder: "keep" });
    this.stale = h("input", { type: "datetime-local", id: "composer-stale", step: 1 });
    this.alert = h("input", { type: "checkbox", id: "composer-alert" });
    this.alertTitle = h("input", { id: "composer-alert-title", value: "Update" });
    this.alertBody = h("input", { id: "composer-alert-body", value: "Something changed" });
    this.policy = h("select", { id: "composer-policy" }, ...[["default", "Default (4 h)"], ["immediate", "Immediate"]].map(([v, t]) => h("option", { value: v, text: t })));
    this.submit = h("button", { class: "button button-primary", type: "submit" });
    this.status = h("p", { class: "panel-status", attrs: { role: "status" } });
    this.hint = h("p", { class: "hint" });
    this.startOnly = h("div", { class: "group" },
      field("App", this.app, "composer-app"), field("Attributes type", this.type, "composer-type"), this.types,
      this.attributes.el, h("div", { class: "row" }, field("Source", this.source, "composer-source"),
        h("label", { class: "check", attrs: { for: "composer-push-token" } }, this.pushToken, "Push token")), this.hint);
    this.activityOnly = h("div", { class: "group" }, field("Activity", this.activity, "composer-activity"));
    this.endOnly = h("div", { class: "group" }, field("Dismissal", this.policy, "composer-policy"));
    this.alertFields = h("div", { class: "row alert-fields" }, field("Alert title", this.alertTitle, "composer-alert-title"), field("Alert body", this.alertBody, "composer-alert-body"));
    this.form = h("form", { class: "composer", on: { submit: (e) => { e.preventDefault(); this.send(); } } },
      h("div", { class: "field" }, h("span", { class: "label", text: "Action" }), this.actionControl.el),
      this.startOnly, this.activityOnly, this.state.el,
      h("div", { class: "row" }, field("Relevance score", this.relevance, "composer-relevance"), field("Stale date (UTC)", this.stale, "composer-stale")),
      h("label", { class: "check", attrs: { for: "composer-alert" } }, this.alert, "Alert (expands the island, or a banner without one)"),
      this.alertFields, this.endOnly,
      h("div", { class: "row actions" }, this.submit), this.status);
    this.alert.addEventListener("change", () => { this.alertFields.hidden = !this.alert.checked; });
    this.deliveries = new Deliveries();
    root.append(this.form, h("h3", { text: "Deliveries" }), this.deliveries.el);
    this.actionControl.set("update");
    this.setAction("update");
    this.alertFields.hidden = true;
  }

  setAction(action) {
    this.action = action;
    this.startOnly.hidden = action !== "start";
    this.activityOnly.hidden = action === "start";
    this.endOnly.hidden = action !== "end";
    setText(this.submit, { start: "Start activity", update: "Send update", end: "End activity" }[action]);
    if (action === "start") this.prefillStart();
    else this.prefillActivity();
  }

  update(doc, device) {
    this.doc = doc;
    // LA-15: activities started here run on the device shown.
    this.device = device;
    const apps = Object.values(doc.apps).filter((a) => a.liveActivitiesEnabled !== false).sort((a, b) => a.name.localeCompare(b.name));
    syncOptions(this.app, apps.map((a) => [a.id, a.name]));
    const activities = Object.values(doc.activities).filter((a) => a.activityState !== "dismissed")
      .sort((a, b) => (a.startedAt ?? "").localeCompare(b.startedAt ?? "") || a.id.localeCompare(b.id));
    const had = this.activity.value;
    syncOptions(this.activity, activities.map((a) => [a.id, `${doc.apps[a.app]?.name ?? a.app} · ${a.id} (${a.activityState})${a.device ? ` · on ${a.device}` : ""}${a.pushChannel ? ` · channel ${shortId(a.pushChannel)}` : ""}`]));
    if (!had && this.activity.value) this.prefillActivity();
    const types = [...new Set(Object.values(doc.activities).map((a) => a.attributesType))].sort();
    syncOptions(this.types, types.map((t) => [t, t]));
    const appId = this.action === "start" ? this.app.value : doc.activities[this.activity.value]?.app;
    const app = doc.apps[appId];
    const inForeground = app && (app.foreground || doc.devices[device]?.foregroundApp === app.id);
    const where = device ? ` on ${device}` : "";
    setText(this.hint, app && !inForeground ? `${app.name} is not in the foreground${where}: only an App Intent or a push-to-start may start it (LA-3).` : "");
    this.deliveries.update(app, this.store.clock.now());
  }

  prefillActivity() {
    const activity = this.doc?.activities[this.activity.value];
    if (!activity) return;
    this.state.value = activity.content?.state ?? {};
    this.relevance.value = "";
    this.stale.value = "";
  }

  prefillStart() {
    if (!this.doc) return;
    const sample = Object.values(this.doc.activities).find((a) => a.app === this.app.value);
    this.type.value = sample?.attributesType ?? "";
    this.attributes.value = sample?.attributes ?? {};
    this.state.value = sample?.content?.state ?? {};
  }

  content() {
    const content = { state: this.state.value };
    if (this.relevance.value !== "") content.relevanceScore = Number(this.relevance.value);
    if (this.stale.value) content.staleDate = `${this.stale.value.length === 16 ? `${this.stale.value}:00` : this.stale.value}Z`;
    return content;
  }

  async send() {
    if (!this.state.validate() || (this.action === "start" && !this.attributes.validate())) {
      reportError(this.status, { message: "Fix the JSON first." });
      return;
    }
    const alert = this.alert.checked ? { title: this.alertTitle.value, body: this.alertBody.value } : undefined;
    try {
      let reply;
      if (this.action === "start") {
        reply = await post("/v1/activities", {
          app: this.app.value, device: this.device, attributesType: this.type.value, attributes: this.attributes.value, content: this.content(),
          source: this.source.value, pushType: this.pushToken.checked ? "token" : null, alert,
        });
        reportOK(this.status, `Started ${reply.result.id} at rev ${reply.rev}${reply.result.applied === false ? ` (not applied: ${reply.result.reason})` : ""}.`);
        this.activity.dataset.pending = reply.result.id;
        return;
      }
      const id = this.activity.value;
      if (this.action === "update") {
        reply = await patch(`/v1/activities/${seg(id)}`, { content: this.content(), alert });
      } else {
        reply = await post(`/v1/activities/${seg(id)}/end`, { content: this.content(), dismissalPolicy: this.policy.value });
      }
      const result = reply.result ?? {};
      reportOK(this.status, `${this.action === "end" ? "End" : "Update"} of ${id} at rev ${reply.rev}: ${result.applied === false ? `ignored (${result.reason})` : "applied"}.`);
    } catch (error) {
      reportError(this.status, error);
    }
  }
}

/** Replaces a select's (or datalist's) options only when they changed, keeping the choice. */
export function syncOptions(select, pairs) {
  const key = pairs.map(([v, t]) => `${v}\u0000${t}`).join("\u0001");
  if (select.isletKey === key) return;
  select.isletKey = key;
  const previous = select.value;
  select.replaceChildren(...pairs.map(([value, text]) => h("option", { value, text })));
  if (pairs.some(([v]) => v === previous)) select.value = previous;
}

