// The simulation this page shows: `?simulation=id` in its URL, else `default`. Every REST call
// and stream subscription of the dashboard goes through here, so one page addresses one world.

import { DEFAULT_SIMULATION } from "./islet-stream.js";

const params = new URLSearchParams(globalThis.location?.search ?? "");

/** The simulation the page was opened on. */
export const simulation = params.get("simulation") || DEFAULT_SIMULATION;

/**
 * The route `path` (`/v1/…` or `/3/device/…`) of this page's simulation: unchanged for `default`,
 * else under `/v1/simulations/{id}`. The routes of the simulations themselves stay as they are.
 */
export function route(path) {
  if (simulation === DEFAULT_SIMULATION || path.startsWith("/v1/simulations")) return path;
  const base = `/v1/simulations/${encodeURIComponent(simulation)}`;
  return path.startsWith("/v1/") ? `${base}/${path.slice(4)}` : `${base}${path}`;
}

/** This page's URL on another simulation (the panel and other parameters kept; the token is the tab's). */
export function urlFor(id) {
  const next = new URLSearchParams(globalThis.location.search);
  if (id === DEFAULT_SIMULATION) next.delete("simulation");
  else next.set("simulation", id);
  const query = next.toString();
  return `${globalThis.location.pathname}${query ? `?${query}` : ""}`;
}
