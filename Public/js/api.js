// REST helpers for the dashboard's operator panels. Errors arrive as
// {"error": {"code", "message", "field"}} and are thrown as ApiError. Every path is the page's
// simulation's (see simulation.js).

import { route } from "./simulation.js";

const TOKEN_KEY = "islet.token";

const token = takeToken();
// A token given to an open page (only the fragment changed, so nothing reloaded) is taken by a reload.
globalThis.addEventListener?.("hashchange", () => {
  if (withoutToken(globalThis.location.hash.slice(1)).token) globalThis.location.reload();
});

/**
 * The token the page was opened with: from the URL's fragment (`#token=`, which a browser never
 * sends to a server) or its query (`?token=`), percent-decoded (a `+` stays a `+`). It is taken
 * out of the address bar at once and kept for this tab only (sessionStorage, so a reload keeps
 * it), so it lands in neither the history, a shared screenshot of the URL nor a Referer. An
 * empty `token=` is ignored. Where the browser refuses the tab's storage, the token stays in
 * the URL's query, which the page keeps as it navigates.
 */
function takeToken() {
  const location = globalThis.location;
  if (!location?.href) return null;
  const url = new URL(location.href);
  const fromFragment = withoutToken(url.hash.slice(1));
  const fromQuery = withoutToken(url.search.slice(1));
  const given = fromFragment.token ?? fromQuery.token;
  const stored = readStored();
  if (given === undefined) return stored;
  let query = fromQuery.rest;
  if (given !== "" && !store(given)) query = [query, `token=${encodeURIComponent(given)}`].filter(Boolean).join("&");
  globalThis.history?.replaceState(globalThis.history.state, "", `${url.pathname}${query ? `?${query}` : ""}${fromFragment.rest ? `#${fromFragment.rest}` : ""}`);
  return given === "" ? stored : given;
}

/** `text` (`a=1&token=…&b=2`) split into the last `token` value, decoded, and the rest as written. */
function withoutToken(text) {
  let token;
  const rest = [];
  for (const part of text.split("&")) {
    if (part.startsWith("token=")) {
      try { token = decodeURIComponent(part.slice(6)); } catch { token = part.slice(6); }
    } else if (part) {
      rest.push(part);
    }
  }
  return { token, rest: rest.join("&") };
}

/** The tab's stored token; null when there is none or the browser refuses the storage (reading it may throw). */
function readStored() {
  try {
    return globalThis.sessionStorage?.getItem(TOKEN_KEY) ?? null;
  } catch {
    return null;
  }
}

/** Keeps `token` for the tab; false when the browser refuses (no storage, or a write that throws). */
function store(token) {
  try {
    if (!globalThis.sessionStorage) return false;
    globalThis.sessionStorage.setItem(TOKEN_KEY, token);
    return true;
  } catch {
    return false;
  }
}

export class ApiError extends Error {
  constructor(status, body) {
    const error = body?.error ?? {};
    super(error.message ?? `HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.code = error.code ?? (body?.reason ? "apns" : "http");
    this.field = error.field;
    this.reason = body?.reason;
  }
}

/** The token the page was opened with (see `takeToken`), for the stream and for requests. */
export const apiToken = token;

/** Sends a JSON request; resolves with the parsed reply body, throws ApiError otherwise. */
export async function request(method, path, body, headers = {}) {
  const init = { method, headers: { ...headers } };
  if (token) init.headers.authorization = `Bearer ${token}`;
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const response = await fetch(route(path), init);
  const text = await response.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = { text }; }
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

/** Applies commands atomically as one revision (`POST /v1/commands`). */
export const commands = (list) => request("POST", "/v1/commands", { commands: list });

export const put = (path, body) => request("PUT", path, body);
export const post = (path, body) => request("POST", path, body);
export const patch = (path, body) => request("PATCH", path, body);
export const get = (path) => request("GET", path);

/** Percent-encodes one path segment (ids may hold `:`). */
export const seg = (id) => encodeURIComponent(id);

/**
 * Sends an APNs-style request (a push, a broadcast, channel management) to `path` (`/3/…`,
 * `/4/…`, `/1/…`); resolves with {status, apnsId, channelId, reason, body} whatever the status,
 * as a push sender sees it. The token, if any, goes as the provider token.
 */
export async function apnsRequest(method, path, headers = {}, payload = undefined) {
  const init = { method, headers: { ...headers } };
  if (payload !== undefined) {
    init.headers["content-type"] ??= "application/json";
    init.body = typeof payload === "string" ? payload : JSON.stringify(payload);
  }
  if (token) init.headers.authorization = `bearer ${token}`;
  const response = await fetch(route(path), init);
  const text = await response.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = text; }
  return {
    status: response.status,
    apnsId: response.headers.get("apns-id") ?? response.headers.get("apns-request-id"),
    channelId: response.headers.get("apns-channel-id"),
    reason: typeof body === "string" ? body : body?.reason ?? null,
    body,
  };
}

/** Sends an APNs-style push (`POST /3/device/<token>`); see {@link apnsRequest}. */
export const apnsPush = (deviceToken, headers, payload) =>
  apnsRequest("POST", `/3/device/${encodeURIComponent(deviceToken)}`, headers, payload);
