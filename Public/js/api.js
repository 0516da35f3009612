// REST helpers for the dashboard's operator panels. Errors arrive as
// {"error": {"code", "message", "field"}} and are thrown as ApiError. Every path is the page's
// simulation's (see simulation.js).

import { route } from "./simulation.js";

const TOKEN_KEY = "islet.token";

const token = takeToken();
// A token given to an open page (only the fragment changed, so nothing reloaded) is taken by a reload.
globalThis.addEventListener?.("hashchange", () => {
  if (new URLSearchParams(globalThis.location.hash.slice(1)).has("token")) globalThis.location.reload();
});

/**
 * The token the page was opened with: from the URL's fragment (`#token=`, which a browser never
 * sends to a server) or its query (`?token=`). It is taken out of the address bar at once and
 * kept for this tab only (sessionStorage, so a reload keeps it), so it lands in neither the
 * history, a shared screenshot of the URL nor a Referer.
 */
function takeToken() {
  const location = globalThis.location;
  if (!location?.href) return null;
  const url = new URL(location.href);
  const fragment = new URLSearchParams(url.hash.slice(1));
  const given = fragment.get("token") ?? url.searchParams.get("token");
  const storage = tabStorage();
  if (given === null) return storage?.getItem(TOKEN_KEY) ?? null;
  // Without storage for the tab (blocked by the browser), the URL keeps it so a reload still works.
  if (!storage || !globalThis.history) return given;
  storage.setItem(TOKEN_KEY, given);
  fragment.delete("token");
  url.searchParams.delete("token");
  url.hash = fragment.toString();
  globalThis.history.replaceState(globalThis.history.state, "", url.pathname + url.search + url.hash);
  return given;
}

/** The tab's sessionStorage, or null where the browser refuses it (reading it may throw). */
function tabStorage() {
  try {
    return globalThis.sessionStorage ?? null;
  } catch {
    return null;
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
