// The scheduled instants visible in the document, for the Clock panel's "Next:" line and list.
//
// The engine's deadline queue is not part of the document, so this reads the instants the
// document does show: activity stale dates, the 8-hour limit, dismissals and scheduled starts;
// island expansions and banners ending; push budget windows closing; the loaded widgets'
// next timeline entries, relevance windows and reloads; stack dwell ends; and the next local top
// of the hour of each stack's device, where hourly ranking features change. It labels what is
// coming; "Step" itself goes to the engine's own next deadline (GET /v1/clock), which also
// covers what the document does not show (e.g. a deferred push's delivery).

import { nextLocalHour } from "../clock.js";

const at = (date) => (date ? Date.parse(date) : NaN);

export function nextTransitions(doc, now) {
  const out = [];
  const add = (instant, label) => {
    if (Number.isFinite(instant) && instant > now) out.push({ at: instant, label });
  };
  const maxSeconds = doc.config?.activityMaxSeconds ?? 28800;
  for (const a of Object.values(doc.activities ?? {})) {
    const live = a.activityState === "active" || a.activityState === "stale";
    if (a.activityState === "active") add(at(a.content?.staleDate), `${a.id} goes stale`);
    if (live) add(at(a.startedAt) + maxSeconds * 1000, `${a.id} reaches 8 hours`);
    if (a.activityState === "ended") add(at(a.dismissAt), `${a.id} is dismissed`);
    if (a.activityState === "pending") add(at(a.scheduledStart), `${a.id} starts`);
  }
  for (const d of Object.values(doc.devices ?? {})) {
    add(at(d.scene?.island?.expanded?.until), `${d.id} island collapses`);
    add(at(d.scene?.banner?.until), `${d.id} banner ends`);
  }
  for (const app of Object.values(doc.apps ?? {})) {
    add(at(app.budgets?.push?.resetsAt), `${app.name ?? app.id} push budget resets`);
    add(at(app.budgets?.pushToStart?.resetsAt), `${app.name ?? app.id} push-to-start budget resets`);
  }
  for (const w of Object.values(doc.widgets ?? {})) {
    const entries = w.timeline?.entries ?? [];
    const index = w.current?.index;
    const next = entries.find((e, i) => (index === null || index === undefined ? true : i > index) && at(e.date) > now);
    if (next) add(at(next.date), `${w.id} next entry`);
    const shown = index === null || index === undefined ? null : entries[index];
    if (shown?.relevance?.duration) add(at(shown.date) + shown.relevance.duration * 1000, `${w.id} relevance window ends`);
    add(at(w.reload?.nextAt), `${w.id} reload`);
  }
  for (const s of Object.values(doc.stacks ?? {})) {
    add(at(s.topSince) + (s.relevance?.minDwellSeconds ?? 900) * 1000, `${s.id} dwell ends`);
  }
  // SS-7: each stack re-ranks at its device's local top of the hour.
  const zones = new Set(Object.values(doc.stacks ?? {}).map((s) => doc.devices?.[s.device]?.timeZone ?? "UTC"));
  for (const zone of zones) add(nextLocalHour(now, zone), `top of the hour${zone === "UTC" ? "" : ` in ${zone}`} (ranking features)`);
  out.sort((a, b) => a.at - b.at);
  return out;
}
