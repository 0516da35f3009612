// The package as a Node harness uses it (node --experimental-websocket --test): against a real
// `islet serve` ($ISLET_BIN), a subscription's value follows GET /v1/state revision by revision,
// a stream command resolves with its ack (also one made before the stream is open), close()
// rejects the commands still waiting, connect() after close() resumes, and every value the
// declarations promise is exported.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import * as client from "@islet/stream";

const binary = process.env.ISLET_BIN ?? new URL("../../../.build/debug/islet", import.meta.url).pathname;
let server;
let base;

before(async () => {
  server = spawn(binary, ["serve", "--port", "0", "--db", ":memory:", "--demo", "off", "--virtual-clock",
    "2026-01-01T08:00:00Z", "--log-level", "warning"], { stdio: ["ignore", "pipe", "inherit"] });
  base = await new Promise((resolve, reject) => {
    let seen = "";
    server.stdout.on("data", (chunk) => {
      seen += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(seen);
      if (match) resolve(match[1]);
    });
    server.on("exit", (code) => reject(new Error(`islet serve exited ${code}`)));
  });
});

after(() => server.kill("SIGTERM"));

async function post(commands) {
  const reply = await fetch(`${base}/v1/commands`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ commands }) });
  assert.equal(reply.status, 200);
  return reply.json();
}

test("the declarations name exactly the runtime exports", () => {
  const declared = new Set();
  for (const file of ["islet-stream.d.ts", "json-patch.d.ts"]) {
    const text = readFileSync(new URL(`../${file}`, import.meta.url), "utf8");
    for (const [, name] of text.matchAll(/export declare (?:class|function|const) (\w+)/g)) declared.add(name);
  }
  assert.deepEqual([...declared].sort(), Object.keys(client).sort());
});

// Node 21+ has a WebSocket client (20.10+ behind --experimental-websocket); Debian 12's Node 18 has none.
const live = globalThis.WebSocket ? {} : { skip: "this Node has no WebSocket client (Node 20.10+ needed)" };

test("a subscription follows the state and commands resolve with their ack", live, async () => {
  const stream = new client.IsletStream({ url: base.replace(/^http/, "ws") + "/v1/stream", pingInterval: 0 });
  const devices = stream.subscribe("/devices");
  const reached = (rev) => new Promise((resolve) => {
    const check = () => { if (devices.rev >= rev) { stream.removeEventListener("change", check); resolve(); } };
    stream.addEventListener("change", check);
    check();
  });
  stream.connect();
  try {
    const { rev } = await post([{ type: "device.upsert", id: "phone", model: "iphone-15-pro" }]);
    await reached(rev);
    const ack = await stream.command([{ type: "device.upsert", id: "phone", locked: true }]);
    await reached(ack.rev);
    const state = await (await fetch(`${base}/v1/state?path=/devices`)).json();
    assert.equal(state.rev, ack.rev);
    assert.deepEqual(devices.value, state.value);
    assert.equal(devices.value.phone.locked, true);
  } finally {
    stream.close();
  }
});

test("a subscription through an array element follows the array's shifts (snapshots, reason array_element)", live, async () => {
  const stream = new client.IsletStream({ url: base.replace(/^http/, "ws") + "/v1/stream", pingInterval: 0 });
  const order = "/devices/tall/scene/lockScreen/activities";
  const subscriptions = [order, `${order}/0`, `${order}/1`].map((path) => stream.subscribe(path));
  assert.deepEqual(subscriptions.map((sub) => client.isArrayElementPath(sub.path)), [false, true, true]);
  const request = (id, score) => ({ type: "activity.request", id, app: "tallies", device: "tall", attributesType: "T",
    content: { state: {}, relevanceScore: score } });
  const settled = (rev) => new Promise((resolve) => {
    const check = () => {
      if (subscriptions.every((sub) => sub.rev !== null && sub.rev >= rev)) {
        stream.removeEventListener("change", check);
        resolve();
      }
    };
    stream.addEventListener("change", check);
    check();
  });
  stream.connect();
  try {
    await post([{ type: "device.upsert", id: "tall", model: "iphone-15-pro" }, { type: "app.upsert", id: "tallies", foreground: true },
      request("t0", 10), request("t1", 9), request("t2", 8)]);
    const { rev } = await post([{ type: "activity.dismiss", id: "t0" }]);
    await within(settled(rev), "every subscription at the dismissal");
    for (const sub of subscriptions) {
      const state = await (await fetch(`${base}/v1/state?path=${encodeURIComponent(sub.path)}`)).json();
      assert.deepEqual(sub.value, state.value, sub.path);
    }
    assert.equal(subscriptions[1].value, "t1");
  } finally {
    stream.close();
  }
});

// Fails (instead of hanging the run) when `promise` does not settle within `ms`.
function within(promise, what, ms = 5000) {
  let timer;
  const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const event = (stream, type, accept = () => true) => new Promise((resolve) => {
  const listener = (e) => { if (accept(e.detail)) { stream.removeEventListener(type, listener); resolve(e.detail); } };
  stream.addEventListener(type, listener);
});

const streamURL = () => base.replace(/^http/, "ws") + "/v1/stream";

async function device(id) {
  return (await (await fetch(`${base}/v1/state?path=/devices`)).json()).value?.[id];
}

test("commands made before the stream is open wait for the hello; close() rejects every waiting one", live, async () => {
  // Before connect(): queued, sent at the hello.
  const early = new client.IsletStream({ url: streamURL(), pingInterval: 0 });
  try {
    const queued = early.command([{ type: "device.upsert", id: "before-connect" }]);
    early.connect();
    const ack = await within(queued, "a command made before connect()");
    assert.equal(typeof ack.rev, "number");
    assert.ok(await device("before-connect"));
  } finally {
    early.close();
  }

  // While connecting, then close(): rejected at once, and never sent on a later connection.
  const stream = new client.IsletStream({ url: streamURL(), pingInterval: 0 }).connect();
  const connecting = stream.command([{ type: "device.upsert", id: "closed-while-connecting" }]);
  stream.close();
  await within(assert.rejects(connecting, /stream closed/), "the command made while connecting, after close()");
  await within(assert.rejects(stream.command([{ type: "device.upsert", id: "after-close" }]), /stream closed/),
    "a command made after close()");
  stream.connect();
  try {
    // Commands on one connection are handled in order: a stale one would land before this one.
    await within(stream.command([{ type: "device.upsert", id: "after-reconnect" }]), "a command after connect()");
    assert.ok(await device("after-reconnect"));
    assert.equal(await device("closed-while-connecting"), undefined);
    assert.equal(await device("after-close"), undefined);

    // Sent and waiting for its ack: close() rejects it too (the socket's onclose comes later).
    const sent = stream.command([{ type: "device.upsert", id: "sent-then-closed" }]);
    stream.close();
    await within(assert.rejects(sent, /stream closed/), "a sent command, after close()");
  } finally {
    stream.close();
  }

  // While offline, then close(). (A refused TCP connection would do, but Node 20's WebSocket
  // then fires `error` and never `close`: this server accepts the upgrade and hangs up.)
  const dropper = createServer().on("upgrade", (request, socket) => {
    const accept = createHash("sha1").update(request.headers["sec-websocket-key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
    socket.end("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      `Sec-WebSocket-Accept: ${accept}\r\nSec-WebSocket-Protocol: islet.v1\r\n\r\n`);
  });
  await new Promise((resolve) => dropper.listen(0, "127.0.0.1", resolve));
  const offline = new client.IsletStream({ url: `ws://127.0.0.1:${dropper.address().port}/v1/stream`, pingInterval: 0,
    backoff: { initial: 60000 } });
  const wentOffline = event(offline, "connection", (detail) => detail.state === "offline");
  offline.connect();
  try {
    await within(wentOffline, "offline");
    const waiting = offline.command([{ type: "device.upsert", id: "offline" }]);
    offline.close();
    await within(assert.rejects(waiting, /stream closed/), "the command made while offline, after close()");
  } finally {
    offline.close();
    dropper.close();
  }
});

test("connect() after close() opens a new connection and resumes the subscriptions", live, async () => {
  const stream = new client.IsletStream({ url: streamURL(), pingInterval: 0 });
  const devices = stream.subscribe("/devices", { id: "devices" });
  const isLive = () => event(stream, "connection", (detail) => detail.state === "live");
  let becameLive = isLive();
  stream.connect();
  try {
    await within(becameLive, "live");
    stream.close();
    assert.equal(stream.state, "closed");
    assert.equal(stream.isOpen, false);

    const resumed = event(stream, "snapshot", (detail) => detail.sub === devices && detail.resumed);
    becameLive = isLive();
    stream.connect();
    await within(becameLive, "live again after close(); connect()");
    await within(resumed, "the subscription resumed with since");
    assert.equal(stream.stats.connects, 2);

    const { rev } = await post([{ type: "device.upsert", id: "after-reopen" }]);
    // The patch may have come before the POST's reply.
    if (!(devices.rev >= rev)) await within(event(stream, "change", () => devices.rev >= rev), "the patch of the REST command");
    const state = await (await fetch(`${base}/v1/state?path=/devices`)).json();
    assert.deepEqual(devices.value, state.value);
  } finally {
    stream.close();
  }
});

test("a refused connection goes offline and retries (Node 20 fires only error, no close)", live, async () => {
  const closed = createServer();
  await new Promise((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const { port } = closed.address();
  await new Promise((resolve) => closed.close(resolve)); // nothing listens there now
  const stream = new client.IsletStream({
    url: `ws://127.0.0.1:${port}/v1/stream`, pingInterval: 0, backoff: { initial: 10, max: 20 } });
  const offline = [];
  const retried = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not offline twice within 5000 ms: ${stream.state}`)), 5000);
    stream.addEventListener("connection", ({ detail }) => {
      if (detail.state === "offline") offline.push(detail.retryIn);
      if (offline.length === 2) { clearTimeout(timer); resolve(); }
    });
  });
  stream.connect();
  try {
    await retried;
    assert.equal(offline.length, 2);
  } finally {
    stream.close();
  }
});

