// islet-stream.js — a dependency-free client for Islet's `islet.v1` WebSocket stream.
//
// It connects, subscribes to JSON Pointer paths, keeps one value per subscription (the
// snapshot, then every RFC 6902 patch applied in order), reconnects with exponential backoff
// and jitter, resumes each subscription with `since {epoch, rev}`, and handles `resync`.
// Values are immutable: a patch copies only the containers on the paths it changes, so a
// subtree that did not change keeps its identity (`old === new`) and views can skip it.
// Works in browsers and in Node 22+ (global WebSocket). Documented in docs/browser-client.md.

import { PatchError, applyPatch, getPointer, parsePointer } from "./json-patch.js";

export { PatchError, applyPatch, jsonEqual, parsePointer, formatPointer, getPointer } from "./json-patch.js";

class StreamEvent extends Event {
  constructor(type, detail) {
    super(type);
    this.detail = detail;
  }
}

const isWithin = (path, base) => path === base || (path.startsWith(base) && path[base.length] === "/") || base === "";

/**
 * Whether a subscription path goes through an array element (a token such as `0` or `12`):
 * such a subscription takes no operations from patches, since an element's index shifts as the
 * array changes; the server sends it a snapshot (reason `array_element`) instead.
 */
export const isArrayElementPath = (path) => path.split("/").slice(1).some((token) => /^(0|[1-9][0-9]{0,14})$/.test(token));

/** The simulation a client or subscription names when it names none. */
export const DEFAULT_SIMULATION = "default";

/**
 * One subscription: its simulation and path, current value (`null` when absent) and the
 * revision it reflects.
 */
export class Subscription {
  constructor(stream, id, path, simulation) {
    this.stream = stream;
    this.id = id;
    this.path = path;
    this.simulation = simulation;
    this.value = null;
    this.rev = null;
    this.epoch = null;
    this.synced = false;
  }

  unsubscribe() { this.stream.unsubscribe(this); }
}

/**
 * A connection to `/v1/stream` that survives restarts.
 *
 * Events (each an `Event` with a `detail`): `connection` {state, previous, retryIn?},
 * `hello` {epoch, rev, server, limits}, `snapshot` {sub, rev, reason?}, `patch` {rev, ops, sub?},
 * `resync` {reason, simulation?}, `change` {rev, subs: [Subscription]}, `error` {error}.
 * `options.simulation` names the simulation subscriptions and commands address when they name
 * none (default: `default`); a subscription deleted with its simulation is dropped.
 * States: `connecting`, `resyncing` (open, some subscriptions waiting for a snapshot), `live`,
 * `offline` (waiting to reconnect), `closed` (after {@link IsletStream#close}).
 */
export class IsletStream extends EventTarget {
  constructor(options = {}) {
    super();
    const location = globalThis.location;
    const scheme = location?.protocol === "https:" ? "wss:" : "ws:";
    this.url = options.url ?? `${scheme}//${location?.host}/v1/stream`;
    if (options.token) this.url += (this.url.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(options.token);
    this.WebSocket = options.WebSocket ?? globalThis.WebSocket;
    this.backoff = { initial: 250, max: 8000, factor: 2, jitter: 0.5, ...options.backoff };
    this.pingInterval = options.pingInterval ?? 15000;
    this.random = options.random ?? Math.random;
    this.state = "closed";
    this.simulation = options.simulation ?? DEFAULT_SIMULATION;
    this.epoch = null;
    this.rev = null;
    this.server = null;
    this.subscriptions = new Map();
    this.stats = { bytesReceived: 0, messages: 0, patches: 0, snapshots: 0, resyncs: 0, connects: 0 };
    this.pending = new Map();
    this.queued = [];
    this.nextId = 1;
    this.attempt = 0;
    this.socket = null;
    this.retryTimer = null;
    this.pingTimer = null;
    this.encoder = new TextEncoder();
  }

  /**
   * Opens the connection (and keeps reopening it until {@link close}). With `after` (a promise),
   * the first subscriptions wait for it after the `hello`: the handshake overlaps with reading
   * their seeds over REST.
   */
  connect({ after } = {}) {
    if (this.socket || this.retryTimer) return this;
    this.gate = after ?? null;
    this.closing = false;
    this.attempt = 0;
    this.open();
    return this;
  }

  /**
   * Closes: no reconnect until the next {@link connect}. Commands waiting for the connection
   * or for their ack are rejected.
   */
  close() {
    this.closing = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const socket = this.socket;
    // Detached now, not in the socket's (asynchronous) onclose, so that connect() can open anew.
    this.detach(new Error("stream closed"));
    socket?.close(1000);
    for (const { reject } of this.queued.splice(0)) reject(new Error("stream closed"));
    this.setState("closed");
  }

  /**
   * Subscribes to `path` (a JSON Pointer) in `simulation`; returns the {@link Subscription}.
   * With `seed` ({value, epoch, rev}, e.g. from `GET /v1/state?path=…`) the subscription starts
   * with that value and resumes from that revision instead of waiting for a snapshot.
   */
  subscribe(path, { id, simulation, seed } = {}) {
    parsePointer(path);
    const sub = new Subscription(this, id ?? `s${this.nextId++}`, path, simulation ?? this.simulation);
    if (this.subscriptions.has(sub.id)) throw new Error(`subscription ${sub.id} exists`);
    if (seed) this.seed(sub, seed);
    this.subscriptions.set(sub.id, sub);
    if (this.isOpen) this.sendSubscribe(sub);
    this.updateState();
    return sub;
  }

  /**
   * Gives a subscription that has not been sent yet a value read over REST at (`epoch`, `rev`):
   * it shows at once, and the subscription resumes from there once the stream is open.
   */
  seed(sub, { value, epoch, rev }) {
    if (sub.requested || sub.synced) return;
    sub.value = value ?? null;
    sub.epoch = epoch;
    sub.rev = rev;
    sub.synced = true;
    this.emit("change", { rev, subs: [sub] });
  }

  /** Stops a subscription (by object or id). */
  unsubscribe(subOrId) {
    const id = typeof subOrId === "string" ? subOrId : subOrId.id;
    const sub = this.subscriptions.get(id);
    if (!sub) return;
    this.subscriptions.delete(id);
    // The server knows only what was sent on this connection (not one still behind the gate).
    if (this.isOpen && sub.sentOn === this.socket) this.send({ op: "unsubscribe", id });
    this.updateState();
  }

  /**
   * Sends commands over the stream; resolves with the ack `{rev, results}`, rejects with the
   * error, or when the connection closes before the ack. Made before the stream is open (also
   * before {@link connect}), they wait for the next `hello`; {@link close} rejects them.
   */
  command(commands, { simulation } = {}) {
    if (this.closing) return Promise.reject(new Error("stream closed"));
    return new Promise((resolve, reject) => {
      const waiter = { commands, simulation: simulation ?? this.simulation, resolve, reject };
      if (this.isOpen) this.sendCommand(waiter);
      else this.queued.push(waiter);
    });
  }

  /** The value at `pointer`, read from the subscription that covers it most closely. */
  get(pointer) {
    let best = null;
    for (const sub of this.subscriptions.values()) {
      if (isWithin(pointer, sub.path) && sub.synced && (!best || sub.path.length > best.path.length)) best = sub;
    }
    if (!best) return undefined;
    return getPointer(best.value, pointer.slice(best.path.length));
  }

  /** True when every subscription holds a value. */
  get synced() {
    for (const sub of this.subscriptions.values()) if (!sub.synced) return false;
    return true;
  }

  get isOpen() { return this.socket?.readyState === 1 && this.server !== null; }

  // -- connection -----------------------------------------------------------------------

  open() {
    this.retryTimer = null;
    this.setState("connecting");
    let socket;
    try { socket = new this.WebSocket(this.url, "islet.v1"); } catch (error) {
      this.emit("error", { error });
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    this.server = null;
    // A socket close() detached may still deliver what was in flight: it is not ours any more.
    socket.onmessage = (event) => this.socket === socket && this.receive(event.data);
    socket.onclose = () => this.closed(socket);
    // Browsers follow an error with close; Node 20's WebSocket fires only error when the
    // connection is refused, so an error on a socket that is not open counts as its close.
    socket.onerror = () => socket.readyState !== 1 && this.closed(socket);
  }

  closed(socket) {
    if (this.socket !== socket) return;
    this.detach(new Error("connection closed"));
    this.scheduleReconnect();
  }

  // Forgets the socket: commands sent on it can get no ack, subscriptions are sent anew on the next.
  detach(error) {
    this.socket = null;
    this.server = null;
    clearInterval(this.pingTimer);
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
    for (const sub of this.subscriptions.values()) {
      sub.awaiting = false;
      sub.sentOn = null;
    }
  }

  scheduleReconnect() {
    const { initial, max, factor, jitter } = this.backoff;
    const ceiling = Math.min(max, initial * factor ** this.attempt);
    const delay = Math.round(ceiling * (1 - jitter * this.random()));
    this.attempt += 1;
    this.retryTimer = setTimeout(() => this.open(), delay);
    this.setState("offline", { retryIn: delay });
  }

  /** Reconnects now instead of waiting for the backoff timer (e.g. a "retry" button). */
  retryNow() {
    if (this.state !== "offline") return;
    clearTimeout(this.retryTimer);
    this.open();
  }

  send(message) { this.socket.send(JSON.stringify(message)); }

  sendCommand(waiter) {
    const id = `c${this.nextId++}`;
    const message = { op: "command", id, commands: waiter.commands };
    if (waiter.simulation !== DEFAULT_SIMULATION) message.simulation = waiter.simulation;
    this.pending.set(id, waiter);
    this.send(message);
  }

  sendSubscribe(sub) {
    const message = { op: "subscribe", id: sub.id, path: sub.path };
    if (sub.simulation !== DEFAULT_SIMULATION) message.simulation = sub.simulation;
    // Resume only from a value we hold exactly: every revision up to sub.rev applied, none after.
    if (sub.synced && sub.epoch !== null && sub.rev !== null) message.since = { epoch: sub.epoch, rev: sub.rev };
    sub.synced = false;
    sub.awaiting = true;
    sub.requested = true;
    // The server refuses an id twice on one connection (`conflict`): see the hello's gate.
    sub.sentOn = this.socket;
    this.send(message);
  }

  setState(state, extra = {}) {
    const previous = this.state;
    this.state = state;
    if (previous !== state || extra.retryIn !== undefined) this.emit("connection", { state, previous, ...extra });
  }

  updateState() {
    if (!this.isOpen) return;
    this.setState(this.synced ? "live" : "resyncing");
  }

  emit(type, detail) { this.dispatchEvent(new StreamEvent(type, detail)); }

  // -- messages -------------------------------------------------------------------------

  receive(data) {
    this.stats.messages += 1;
    this.stats.bytesReceived += typeof data === "string" ? this.encoder.encode(data).length : data.byteLength ?? 0;
    let message;
    try { message = JSON.parse(data); } catch (error) {
      this.emit("error", { error });
      return;
    }
    const handler = this.handlers[message.type];
    if (handler) handler.call(this, message);
  }

  handlers = {
    hello(message) {
      this.server = message.server;
      // The hello names the default simulation's position; another one's comes with its snapshots.
      if (this.simulation === DEFAULT_SIMULATION) {
        this.epoch = message.epoch;
        this.rev = message.rev;
      }
      this.attempt = 0;
      this.stats.connects += 1;
      const socket = this.socket;
      this.emit("hello", message);
      if (this.socket !== socket) return;  // a listener closed the stream
      const subscribe = () => {
        if (this.socket !== socket || !this.isOpen) return;
        // Not one that subscribe() sent at once while the gate was closed (the stream was open).
        for (const sub of this.subscriptions.values()) if (sub.sentOn !== socket) this.sendSubscribe(sub);
        this.updateState();
      };
      if (this.gate) this.gate.then(subscribe, subscribe);
      else subscribe();
      // Commands made before the stream was open; they need no subscription, so no gate.
      for (const waiter of this.queued.splice(0)) this.sendCommand(waiter);
      clearInterval(this.pingTimer);
      if (this.pingInterval > 0) this.pingTimer = setInterval(() => this.isOpen && this.send({ op: "ping", id: "keepalive" }), this.pingInterval);
      this.updateState();
    },
    snapshot(message) {
      const sub = this.subscriptions.get(message.sub);
      if (!sub) return;
      this.stats.snapshots += 1;
      sub.value = message.value;
      sub.rev = message.rev;
      sub.epoch = message.epoch;
      sub.synced = true;
      sub.awaiting = false;
      this.epoch = message.epoch;
      this.rev = Math.max(this.rev ?? 0, message.rev);
      this.emit("snapshot", { sub, rev: message.rev, reason: message.reason });
      this.emit("change", { rev: this.rev, subs: [sub] });
      this.updateState();
    },
    subscribed(message) {
      const sub = this.subscriptions.get(message.sub);
      if (!sub) return;
      sub.synced = true;
      sub.awaiting = false;
      // Resumed from a seed, the subscription's revision is one this client has seen (the
      // hello names only the default simulation's).
      if (sub.rev !== null) this.rev = Math.max(this.rev ?? 0, sub.rev);
      this.emit("snapshot", { sub, rev: sub.rev, resumed: true });
      this.updateState();
    },
    patch(message) {
      this.stats.patches += 1;
      const simulation = message.simulation ?? DEFAULT_SIMULATION;
      const targets = message.sub
        ? [this.subscriptions.get(message.sub)].filter(Boolean)
        : [...this.subscriptions.values()].filter((sub) => sub.simulation === simulation && !isArrayElementPath(sub.path));
      const changed = [];
      for (const sub of targets) {
        if (!sub.synced || (sub.rev !== null && message.rev <= sub.rev)) continue;
        const before = sub.value;
        try { sub.value = applyToSubscription(sub, message.ops, Boolean(message.sub)); } catch (error) {
          // The stream broke its contract (or we did): start this subscription afresh.
          this.emit("error", { error, sub });
          sub.rev = null;
          sub.synced = false;
          if (this.isOpen) {
            // Its id is still taken on this connection: the server handles the two in order.
            if (sub.sentOn === this.socket) this.send({ op: "unsubscribe", id: sub.id });
            this.sendSubscribe(sub);
          }
          continue;
        }
        sub.rev = message.rev;
        if (sub.value !== before) changed.push(sub);
      }
      if (!message.sub) this.rev = Math.max(this.rev ?? 0, message.rev);
      this.emit("patch", { rev: message.rev, ops: message.ops, sub: message.sub });
      if (changed.length) this.emit("change", { rev: message.rev, subs: changed });
      this.updateState();
    },
    resync(message) {
      this.stats.resyncs += 1;
      for (const sub of [...this.subscriptions.values()]) {
        if (message.simulation !== undefined && sub.simulation !== message.simulation) continue;
        // The server dropped the subscriptions of a deleted simulation: so does the client.
        if (message.reason === "deleted") {
          this.subscriptions.delete(sub.id);
          continue;
        }
        sub.synced = false;
        sub.rev = null;
      }
      this.emit("resync", { reason: message.reason, simulation: message.simulation });
      this.updateState();
    },
    ack(message) {
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      waiter?.resolve({ rev: message.rev, results: message.results });
    },
    error(message) {
      const waiter = message.id === null ? undefined : this.pending.get(message.id);
      if (waiter) {
        this.pending.delete(message.id);
        waiter.reject(Object.assign(new Error(message.error?.message ?? "error"), message.error));
      } else {
        // A refused subscribe (e.g. `not_found` at `/simulation`) names that subscription.
        this.emit("error", { error: message.error, id: message.id, sub: this.subscriptions.get(message.id) });
      }
    },
    unsubscribed() {},
    pong() {},
  };
}

// Applies a patch's operations to one subscription: each operation at or under its path,
// made relative to it; at the path itself add/replace set the value and remove clears it.
// In resumed patches (`lenient`) a narrowed remove may name a value that is already absent.
function applyToSubscription(sub, ops, lenient) {
  let value = sub.value;
  const base = sub.path;
  for (const op of ops) {
    if (!isWithin(op.path, base)) continue;
    if (op.from !== undefined && !isWithin(op.from, base)) continue;
    const relative = op.path.slice(base.length);
    if (relative === "") {
      if (op.op === "remove") value = null;
      else if (op.op === "add" || op.op === "replace") value = op.value;
      else value = applyPatch(value, [{ ...op, path: "", from: op.from?.slice(base.length) }]);
      continue;
    }
    if (lenient && op.op === "remove" && getPointer(value, relative) === undefined) continue;
    if (value === null) throw new PatchError(`${op.op} ${op.path} under ${base}, which does not exist`);
    const relativeOp = { ...op, path: relative };
    if (op.from !== undefined) relativeOp.from = op.from.slice(base.length);
    value = applyPatch(value, [relativeOp]);
  }
  return value;
}
