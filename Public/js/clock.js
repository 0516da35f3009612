// Simulated time. The document's /clock changes only at revisions, so the current simulated
// instant is extrapolated from `now` and `rate` since the revision was received (docs/API.md).
// Islet's instants are UTC; each simulated iPhone shows the wall time of its own time zone
// (`timeZone` on the device, an IANA name, SS-7). The dashboard's own clocks stay in UTC.

export class SimClock {
  constructor() {
    this.clock = null;
    this.receivedAt = 0;
  }

  /** Takes a new /clock value (ignores an unchanged one, keeping the extrapolation anchor). */
  update(clock) {
    if (!clock || clock === this.clock) return;
    this.clock = clock;
    this.anchor = Date.parse(clock.now);
    this.receivedAt = performance.now();
  }

  get rate() {
    if (!this.clock) return 0;
    return this.clock.mode === "wall" ? 1 : this.clock.rate;
  }

  /** The simulated instant now, in milliseconds since the Unix epoch. */
  now() {
    if (!this.clock) return Date.now();
    return this.anchor + (performance.now() - this.receivedAt) * this.rate;
  }
}

const pad = (n) => String(n).padStart(2, "0");
const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

const formats = new Map();

/** The calendar fields of `ms` in the IANA `zone` (UTC when the browser does not know it). */
const localParts = (ms, zone = "UTC") => {
  let format = formats.get(zone);
  if (!format) {
    const options = { hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", weekday: "short" };
    try { format = new Intl.DateTimeFormat("en-US", { ...options, timeZone: zone }); }
    catch { format = new Intl.DateTimeFormat("en-US", { ...options, timeZone: "UTC" }); }
    formats.set(zone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  const weekday = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].indexOf(parts.weekday);
  return { hour: Number(parts.hour), minute: Number(parts.minute), day: Number(parts.day), month: Number(parts.month) - 1, weekday };
};

/** `8:05` in the device's zone (iPhone status bar and Lock Screen style, 24-hour, no leading zero). */
export const timeText = (ms, zone) => {
  const d = localParts(ms, zone);
  return `${d.hour}:${pad(d.minute)}`;
};

/**
 * The next instant after `ms` at which the hour turns in `zone` (SS-7: a device's hourly
 * features change at its local tops of the hour; zones 30 or 45 minutes off UTC turn at :30 or
 * :15). Offsets are whole quarter hours, so one of the next four quarters is it.
 */
export const nextLocalHour = (ms, zone) => {
  const quarter = 900_000;
  for (let t = Math.floor(ms / quarter + 1) * quarter; t <= ms + 3600_000; t += quarter) {
    if (localParts(t, zone).minute === 0) return t;
  }
  return Math.floor(ms / 3600_000 + 1) * 3600_000;
};

/** `08:05:09`. */
export const clockText = (ms) => {
  const d = new Date(ms);
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
};

/** `Sunday 22 November` in the device's zone. */
export const dateText = (ms, zone) => {
  const d = localParts(ms, zone);
  return `${WEEKDAYS[d.weekday]} ${d.day} ${MONTHS[d.month]}`;
};

/** `Sun 22` in the device's zone. */
export const shortDateText = (ms, zone) => {
  const d = localParts(ms, zone);
  return `${WEEKDAYS[d.weekday].slice(0, 3)} ${d.day}`;
};

/** `2026-11-22T08:05:00Z` (RFC 3339, whole seconds). */
export const isoText = (ms) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");

/** The value of an `<input type="datetime-local">` for an instant (UTC). */
export const localInputValue = (ms) => new Date(ms).toISOString().slice(0, 19);

/** `m:ss` or `h:mm:ss`, like the server's templates. */
export function durationText(seconds) {
  const total = Math.max(0, Math.floor(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/** `in 4 min`, `12 s ago`, for deliveries and schedules. */
export function relativeText(ms, now) {
  const delta = Math.round((ms - now) / 1000);
  const abs = Math.abs(delta);
  const unit = abs < 90 ? `${abs} s` : abs < 5400 ? `${Math.round(abs / 60)} min` : `${Math.round(abs / 3600)} h`;
  return delta >= 0 ? `in ${unit}` : `${unit} ago`;
}
