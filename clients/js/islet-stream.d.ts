// Types of islet-stream.js, the islet.v1 stream client (docs/browser-client.md).

import type { JSON, PatchOperation } from "./json-patch.js";

export { PatchError, applyPatch, jsonEqual, parsePointer, formatPointer, getPointer } from "./json-patch.js";
export type { JSON, PatchOperation } from "./json-patch.js";

/** The simulation a client or subscription names when it names none. */
export declare const DEFAULT_SIMULATION: "default";

/**
 * Whether a subscription path goes through an array element (a token such as `0` or `12`):
 * such a subscription takes no operations from patches; the server sends it a snapshot (reason
 * `array_element`) whenever its array changes.
 */
export declare const isArrayElementPath: (path: string) => boolean;

export type ConnectionState = "connecting" | "resyncing" | "live" | "offline" | "closed";

/** An error in docs/API.md's shape (`{code, message, field?}`). */
export interface IsletErrorBody {
  code: string;
  message: string;
  field?: string;
}

export interface Seed {
  value: JSON;
  epoch: string;
  rev: number;
}

export interface IsletStreamOptions {
  /** The stream's URL; default `ws(s)://<page host>/v1/stream`. */
  url?: string;
  /** A viewer or admin token, sent as `?token=`. */
  token?: string;
  /** Reconnect delay in ms: `min(max, initial × factor^attempt) × (1 − jitter × random)`. */
  backoff?: { initial?: number; max?: number; factor?: number; jitter?: number };
  /** ms between keep-alive pings (0: none); default 15000. */
  pingInterval?: number;
  /** The WebSocket class; default `globalThis.WebSocket`. */
  WebSocket?: { new (url: string, protocols?: string | string[]): WebSocket };
  /** The simulation subscriptions and commands address when they name none. */
  simulation?: string;
  /** The random source of the jitter (tests inject one). */
  random?: () => number;
}

export declare class Subscription {
  readonly stream: IsletStream;
  readonly id: string;
  readonly path: string;
  readonly simulation: string;
  /** The value at `path`; `null` when nothing is there or before the snapshot. Immutable. */
  readonly value: JSON;
  /** The revision `value` reflects. */
  readonly rev: number | null;
  readonly epoch: string | null;
  readonly synced: boolean;
  unsubscribe(): void;
}

export interface CommandAck {
  rev: number;
  results: JSON[];
}

export interface StreamStats {
  bytesReceived: number;
  messages: number;
  patches: number;
  snapshots: number;
  resyncs: number;
  connects: number;
}

export interface StreamEventDetails {
  connection: { state: ConnectionState; previous: ConnectionState; retryIn?: number };
  hello: { type: "hello"; epoch: string; rev: number; server: string; limits: Record<string, number> };
  snapshot: { sub: Subscription; rev: number; reason?: string; resumed?: boolean };
  /** `sub`: the id of the one resumed subscription a replayed patch is for. */
  patch: { rev: number; ops: PatchOperation[]; sub?: string };
  change: { rev: number; subs: Subscription[] };
  resync: { reason: string; simulation?: string };
  /** `id`: the message's (`null` when the server's answer names none). */
  error: { error: IsletErrorBody | Error; sub?: Subscription; id?: string | null };
}

export type StreamEvent<K extends keyof StreamEventDetails> = Event & { readonly detail: StreamEventDetails[K] };

export declare class IsletStream extends EventTarget {
  constructor(options?: IsletStreamOptions);
  readonly url: string;
  readonly state: ConnectionState;
  readonly simulation: string;
  /** The highest revision seen (read each subscription's own with several simulations). */
  readonly rev: number | null;
  readonly epoch: string | null;
  readonly server: string | null;
  readonly stats: StreamStats;
  /** Every subscription holds a value. */
  readonly synced: boolean;
  readonly isOpen: boolean;
  /** Opens the connection and keeps reopening it until `close()` (again after one). */
  connect(options?: { after?: Promise<unknown> }): this;
  /** Closes at once; rejects every command waiting for the connection or its ack. */
  close(): void;
  retryNow(): void;
  subscribe(path: string, options?: { id?: string; simulation?: string; seed?: Seed }): Subscription;
  seed(sub: Subscription, seed: Seed): void;
  unsubscribe(subOrId: Subscription | string): void;
  /**
   * Sends commands over the stream; resolves with the `ack`, rejects with the error. Made before
   * the stream is open they wait for it; `close()` rejects them, and those made after it (until `connect()`).
   */
  command(commands: readonly Record<string, JSON>[], options?: { simulation?: string }): Promise<CommandAck>;
  /** Any path covered by a subscription. */
  get(pointer: string): JSON | undefined;
  addEventListener<K extends keyof StreamEventDetails>(
    type: K, listener: (event: StreamEvent<K>) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null,
    options?: boolean | AddEventListenerOptions): void;
}
