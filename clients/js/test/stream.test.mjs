// The package as a Node harness uses it (node --experimental-websocket --test): against a real
// `islet serve` ($ISLET_BIN), a subscription's value follows GET /v1/state revision by revision,
// a stream command resolves with its ack, and every value the declarations promise is exported.
import { spawn } from "node:child_process";
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
