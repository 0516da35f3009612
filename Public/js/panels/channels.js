// An app's broadcast channels (`/apps/<id>/channels`), live from the stream: each channel's id
// (abbreviated, with the whole id in its title and a copy button), storage policy, subscribers,
// broadcasts so far and the latest broadcast. Server strings reach the DOM as text only.

import { h, plural, reconcile, setAttr, setText } from "../dom.js";
import { clockText } from "../clock.js";

/** `kboa1rgE…` for a channel id (base64 of 16 bytes): enough to tell channels apart. */
export const shortId = (id) => (id && id.length > 10 ? `${id.slice(0, 8)}…` : id ?? "");

/** What a channel's `message-storage-policy` means. */
export const policyMeaning = (policy) => (policy === 1
  ? "Policy 1: the latest broadcast is stored (up to 8 h) for activities that subscribe later"
  : "Policy 0: no message stored; late subscribers wait for the next broadcast");

/** `1 subscriber`, `2 subscribers`. */

/** The app's channels, oldest first (ties by id). */
export function sortedChannels(app) {
  return Object.values(app?.channels ?? {}).sort((a, b) => (a.createdAt ?? "").localeCompare(b.createdAt ?? "") || a.id.localeCompare(b.id));
}

export class ChannelList {
  /** `onDelete(id)` deletes a channel; `onCopy(id, ok)` reports a copy. */
  constructor({ onDelete, onCopy }) {
    this.onDelete = onDelete;
    this.onCopy = onCopy;
    this.empty = h("p", { class: "hint channels-empty" });
    this.list = h("ul", { class: "channels", attrs: { "aria-label": "Broadcast channels" } });
    this.el = h("div", {}, this.empty, this.list);
  }

  /** Shows `app`'s channels and, for each, the activities of `activities` subscribed to it. */
  update(app, activities, now) {
    const channels = sortedChannels(app);
    setText(this.empty, !app ? "Choose an app." : channels.length ? "" : `${app.name} has no channels yet. Create one below.`);
    this.empty.hidden = Boolean(app && channels.length);
    const subscribed = new Map();
    for (const a of Object.values(activities ?? {})) {
      if (!a.pushChannel || a.activityState === "dismissed") continue;
      if (!subscribed.has(a.pushChannel)) subscribed.set(a.pushChannel, []);
      subscribed.get(a.pushChannel).push(a);
    }
    reconcile(this.list, channels, (c) => c.id, (c) => this.row(c), (el, c) => fill(el, c, subscribed.get(c.id) ?? [], now));
  }

  row(channel) {
    const parts = {
      id: h("code", { class: "channel-id" }),
      policy: h("span", { class: "chip channel-policy" }),
      copy: h("button", { class: "button button-small", type: "button", text: "Copy id", on: { click: () => this.copy(channel.id) } }),
      remove: h("button", { class: "button button-small button-danger", type: "button", text: "Delete", on: { click: (e) => this.remove(e.currentTarget, channel.id) } }),
      counts: h("p", { class: "channel-counts" }),
      last: h("p", { class: "channel-last" }),
      activities: h("p", { class: "channel-activities" }),
    };
    const el = h("li", { dataset: { channel: channel.id } },
      h("div", { class: "channel-head" }, parts.id, parts.policy, h("span", { class: "channel-actions" }, parts.copy, parts.remove)),
      parts.counts, parts.last, parts.activities);
    el.isletParts = parts;
    return el;
  }

  async copy(id) {
    let ok = false;
    try {
      await navigator.clipboard.writeText(id);
      ok = true;
    } catch {
      // No clipboard outside a secure context: the caller shows the id to copy by hand.
    }
    this.onCopy(id, ok);
  }

  /** Deleting is for good (APNs never hands the id out again), so it takes a second click. */
  remove(button, id) {
    if (button.dataset.armed !== "true") {
      button.dataset.armed = "true";
      setText(button, "Confirm delete");
      setAttr(button, "aria-label", `Confirm: delete channel ${id} for good`);
      clearTimeout(button.isletDisarm);
      button.isletDisarm = setTimeout(() => disarm(button), 4000);
      return;
    }
    disarm(button);
    this.onDelete(id);
  }
}

function disarm(button) {
  clearTimeout(button.isletDisarm);
  delete button.dataset.armed;
  setText(button, "Delete");
  setAttr(button, "aria-label", null);
}

function fill(el, channel, activities, now) {
  const { id, policy, copy, remove, counts, last, activities: subs } = el.isletParts;
  setText(id, shortId(channel.id));
  setAttr(id, "title", `${channel.id}\ncreated ${channel.createdAt}`);
  setAttr(copy, "aria-label", `Copy channel id ${channel.id}`);
  if (remove.dataset.armed !== "true") setAttr(remove, "aria-label", `Delete channel ${channel.id}`);
  setText(policy, `policy ${channel.storagePolicy}`);
  setAttr(policy, "title", policyMeaning(channel.storagePolicy));
  policy.dataset.policy = String(channel.storagePolicy);
  el.dataset.subscribers = String(channel.subscribers);
  el.dataset.broadcasts = String(channel.broadcasts);
  setText(counts, `${plural(channel.subscribers, "subscriber")} · ${plural(channel.broadcasts, "broadcast")}`);
  setText(last, lastText(channel.lastBroadcast, now));
  last.dataset.event = channel.lastBroadcast?.event ?? "";
  setText(subs, activities.length ? `Subscribed: ${activities.map((a) => `${a.id} (${a.activityState})`).join(", ")}` : "");
}

/** `Last: update · p10 · at 08:00:00 · stored until 16:00:00` (simulated UTC). */
export function lastText(last, now) {
  if (!last) return "No broadcast yet.";
  const at = Date.parse(last.at);
  const parts = [`Last: ${last.event}`, `p${last.priority}`, `at ${clockText(at)}`];
  if (last.storedUntil) {
    const until = Date.parse(last.storedUntil);
    parts.push(until > now ? `stored until ${clockText(until)}` : "stored message expired");
  }
  return parts.join(" · ");
}
