"""The stream client module (Public/js/islet-stream.js) in the browser: its RFC 6902 `apply`
against the public JSON Patch conformance vectors, and its protocol handling (subscribe,
patches, resync, reconnect with backoff, resume with `since`) against a scripted socket."""

import json

from support import ROOT, wait_for

VECTORS = ROOT / "Tests" / "Browser" / "fixtures" / "json-patch-tests"


def load_module(browser, server):
    browser.get(server.url + "/")
    wait_for(browser, lambda d: d.execute_script("return window.isletDashboard !== undefined"))


def test_json_patch_vectors(browser, server):
    load_module(browser, server)
    cases = []
    for name in ("tests.json", "spec_tests.json"):
        for case in json.loads((VECTORS / name).read_text()):
            if "patch" in case and not case.get("disabled"):
                cases.append(case)
    result = browser.execute_async_script("""
        const [cases, done] = arguments;
        import('/js/islet-stream.js').then(({ applyPatch, jsonEqual }) => {
          const failures = [];
          for (const c of cases) {
            const before = JSON.stringify(c.doc);
            try {
              const out = applyPatch(c.doc, c.patch);
              if ('error' in c) failures.push(['accepted', c.comment ?? JSON.stringify(c.patch)]);
              else if ('expected' in c && !jsonEqual(out, c.expected)) failures.push(['wrong result', c.comment, JSON.stringify(out)]);
            } catch (e) {
              if (!('error' in c)) failures.push(['rejected', c.comment, String(e)]);
            }
            if (JSON.stringify(c.doc) !== before) failures.push(['input modified', c.comment]);
          }
          done({ count: cases.length, failures });
        });
    """, cases)
    assert result["count"] == len(cases) > 100
    assert result["failures"] == []


FAKE_SOCKET = """
class FakeSocket {
  static all = [];
  constructor(url, protocol) {
    this.url = url; this.protocol = protocol; this.readyState = 0; this.sent = [];
    FakeSocket.all.push(this);
  }
  send(text) { this.sent.push(JSON.parse(text)); }
  close() { this.drop(); }
  // test side
  open() { this.readyState = 1; }
  deliver(message) { this.onmessage({ data: JSON.stringify(message) }); }
  drop() { if (this.readyState === 3) return; this.readyState = 3; this.onclose?.({ code: 1006 }); }
}
"""


def test_protocol_resync_reconnect_and_resume(browser, server):
    load_module(browser, server)
    result = browser.execute_async_script(FAKE_SOCKET + """
        const done = arguments[arguments.length - 1];
        const until = (f) => new Promise((resolve) => { const t = setInterval(() => { if (f()) { clearInterval(t); resolve(); } }, 5); });
        import('/js/islet-stream.js').then(async ({ IsletStream }) => {
          const log = [];
          const states = [];
          const stream = new IsletStream({ url: 'ws://fake/v1/stream', token: 'secret-token-123', WebSocket: FakeSocket,
                                           backoff: { initial: 20, max: 40, jitter: 0 }, pingInterval: 0 });
          stream.addEventListener('connection', (e) => states.push(e.detail.state));
          const devices = stream.subscribe('/devices', { id: 'devices' });
          const clock = stream.subscribe('/clock', { id: 'clock' });
          stream.connect();
          const s1 = FakeSocket.all[0];
          log.push(['url', s1.url, s1.protocol]);
          s1.open();
          s1.deliver({ type: 'hello', epoch: 'e1', rev: 4, server: 'islet/test', limits: {} });
          log.push(['subscribes', s1.sent.slice()]);
          s1.deliver({ type: 'snapshot', sub: 'devices', epoch: 'e1', rev: 4, path: '/devices', value: { d: { n: 1, list: [1] } } });
          s1.deliver({ type: 'snapshot', sub: 'clock', epoch: 'e1', rev: 4, path: '/clock', value: { now: 'a' } });
          const before = devices.value;
          s1.deliver({ type: 'patch', rev: 5, ops: [{ op: 'replace', path: '/devices/d/n', value: 2 }, { op: 'add', path: '/devices/d/list/-', value: 2 }] });
          log.push(['after patch', devices.value, clock.value, before.d.n, devices.rev, stream.state]);
          s1.deliver({ type: 'resync', reason: 'slow_consumer' });
          log.push(['resync state', stream.state]);
          s1.deliver({ type: 'patch', rev: 6, ops: [{ op: 'replace', path: '/devices/d/n', value: 99 }] });
          s1.deliver({ type: 'snapshot', sub: 'devices', epoch: 'e1', rev: 7, path: '/devices', value: { d: { n: 7, list: [] } } });
          log.push(['half synced', stream.state]);
          s1.deliver({ type: 'snapshot', sub: 'clock', epoch: 'e1', rev: 7, path: '/clock', value: { now: 'b' } });
          log.push(['resynced', devices.value, clock.value, stream.state]);
          s1.deliver({ type: 'patch', rev: 8, ops: [{ op: 'replace', path: '/devices/d/n', value: 8 }] });
          s1.drop();
          log.push(['dropped', stream.state]);
          await until(() => FakeSocket.all.length === 2);
          const s2 = FakeSocket.all[1];
          s2.open();
          s2.deliver({ type: 'hello', epoch: 'e1', rev: 11, server: 'islet/test', limits: {} });
          log.push(['resume subscribes', s2.sent.slice()]);
          s2.deliver({ type: 'subscribed', sub: 'devices', resumed: true, rev: 8 });
          s2.deliver({ type: 'patch', sub: 'devices', rev: 10, ops: [{ op: 'replace', path: '/devices/d/n', value: 10 }] });
          s2.deliver({ type: 'snapshot', sub: 'clock', epoch: 'e1', rev: 11, path: '/clock', value: { now: 'c' }, reason: 'history_trimmed' });
          s2.deliver({ type: 'patch', rev: 10, ops: [{ op: 'replace', path: '/devices/d/n', value: -1 }] });
          s2.deliver({ type: 'patch', rev: 12, ops: [{ op: 'remove', path: '/devices/d/list' }, { op: 'replace', path: '/clock/now', value: 'd' }] });
          log.push(['resumed', devices.value, clock.value, stream.rev, stream.state, stream.get('/devices/d/n')]);
          const ack = stream.command([{ type: 'clock.set', rate: 1 }]);
          const cid = s2.sent.at(-1).id;
          s2.deliver({ type: 'ack', id: cid, rev: 13, results: [{}] });
          log.push(['ack', await ack]);
          stream.close();
          log.push(['states', states]);
          done(log);
        });
    """)
    steps = {entry[0]: entry[1:] for entry in result}
    assert steps["url"] == ["ws://fake/v1/stream?token=secret-token-123", "islet.v1"]
    assert steps["subscribes"][0] == [{"op": "subscribe", "id": "devices", "path": "/devices"},
                                      {"op": "subscribe", "id": "clock", "path": "/clock"}]
    value, clock, before_n, rev, state = steps["after patch"]
    assert value == {"d": {"n": 2, "list": [1, 2]}} and clock == {"now": "a"}
    assert before_n == 1, "a patch must not modify the previous value in place"
    assert rev == 5 and state == "live"
    assert steps["resync state"] == ["resyncing"]
    assert steps["half synced"] == ["resyncing"]
    assert steps["resynced"] == [{"d": {"n": 7, "list": []}}, {"now": "b"}, "live"], "patches during a resync are dropped"
    assert steps["dropped"] == ["offline"]
    assert steps["resume subscribes"][0] == [
        {"op": "subscribe", "id": "devices", "path": "/devices", "since": {"epoch": "e1", "rev": 8}},
        {"op": "subscribe", "id": "clock", "path": "/clock", "since": {"epoch": "e1", "rev": 8}}]
    devices, clock, stream_rev, state, n = steps["resumed"]
    assert devices == {"d": {"n": 10}} and clock == {"now": "d"}
    assert stream_rev == 12 and state == "live" and n == 10
    assert steps["ack"] == [{"rev": 13, "results": [{}]}]
    assert steps["states"][0][:3] == ["connecting", "resyncing", "live"]
    assert "offline" in steps["states"][0] and steps["states"][0][-1] == "closed"


def test_gate_sends_each_subscription_once_per_connection(browser, server):
    """`connect({after})`: a subscription made after the hello but before `after` settles goes
    out at once and is not sent again when the gate opens (the server refuses a duplicate id
    with `conflict`); a patch that fails to apply unsubscribes before subscribing afresh; a
    command made before `connect()` waits for the hello, and `close()` rejects a waiting one."""
    load_module(browser, server)
    result = browser.execute_async_script(FAKE_SOCKET + """
        const done = arguments[arguments.length - 1];
        import('/js/islet-stream.js').then(async ({ IsletStream }) => {
          const log = [];
          const stream = new IsletStream({ url: 'ws://fake/v1/stream', WebSocket: FakeSocket,
                                           backoff: { initial: 5, max: 5, jitter: 0 }, pingInterval: 0 });
          const errors = [];
          stream.addEventListener('error', (e) => errors.push(e.detail.error?.message ?? String(e.detail.error)));
          const clock = stream.subscribe('/clock', { id: 'clock' });
          const early = stream.command([{ type: 'clock.set', rate: 1 }]);
          let open;
          const gate = new Promise((resolve) => { open = resolve; });
          stream.connect({ after: gate });
          const s1 = FakeSocket.all[0];
          s1.open();
          s1.deliver({ type: 'hello', epoch: 'e1', rev: 4, server: 'islet/test', limits: {} });
          log.push(['at hello', s1.sent.slice()]);
          s1.deliver({ type: 'ack', id: s1.sent[0].id, rev: 5, results: [{}] });
          log.push(['early ack', await early]);
          const devices = stream.subscribe('/devices', { id: 'devices' });
          log.push(['gate closed', s1.sent.slice(1)]);
          open();
          await gate;  // the stream's callback on the gate came first: it has run
          log.push(['gate open', s1.sent.slice(1)]);
          s1.deliver({ type: 'snapshot', sub: 'devices', epoch: 'e1', rev: 5, path: '/devices', value: { d: { n: 1 } } });
          s1.deliver({ type: 'snapshot', sub: 'clock', epoch: 'e1', rev: 5, path: '/clock', value: { now: 'a' } });
          log.push(['synced', devices.synced, clock.synced, stream.state]);
          const before = s1.sent.length;
          s1.deliver({ type: 'patch', rev: 6, ops: [{ op: 'remove', path: '/devices/missing' }] });
          log.push(['patch failed', s1.sent.slice(before), errors.length]);
          s1.drop();
          await new Promise((resolve) => stream.addEventListener('connection', (e) => e.detail.state === 'connecting' && resolve()));
          const s2 = FakeSocket.all[1];
          s2.open();
          s2.deliver({ type: 'hello', epoch: 'e1', rev: 6, server: 'islet/test', limits: {} });
          await null;  // the gate (settled) lets them out a microtask later
          log.push(['reconnected', s2.sent.map((m) => m.op + ' ' + m.id)]);
          const waiting = stream.command([{ type: 'clock.set', rate: 2 }]);
          s2.drop();
          const queued = stream.command([{ type: 'clock.set', rate: 3 }]);
          stream.close();
          log.push(['closed', await waiting.catch((e) => e.message), await queued.catch((e) => e.message),
                    await stream.command([]).catch((e) => e.message)]);
          done(log);
        });
    """)
    steps = {entry[0]: entry[1:] for entry in result}
    assert [m["op"] for m in steps["at hello"][0]] == ["command"], "the early command goes at the hello, the subscription waits for the gate"
    assert steps["early ack"] == [{"rev": 5, "results": [{}]}]
    assert steps["gate closed"][0] == [{"op": "subscribe", "id": "devices", "path": "/devices"}]
    assert steps["gate open"][0] == [{"op": "subscribe", "id": "devices", "path": "/devices"},
                                     {"op": "subscribe", "id": "clock", "path": "/clock"}], "each subscription once"
    assert steps["synced"] == [True, True, "live"]
    assert steps["patch failed"] == [[{"op": "unsubscribe", "id": "devices"},
                                      {"op": "subscribe", "id": "devices", "path": "/devices"}], 1]
    assert steps["reconnected"][0] == ["subscribe clock", "subscribe devices"]
    assert steps["closed"] == ["connection closed", "stream closed", "stream closed"]

def test_live_mirror_matches_the_server(browser, start_server):
    """The demo on a virtual clock at 600× (ten simulated minutes a second: scores, orders,
    rides, widget entries and stack rotations move); after many revisions the page's values
    equal GET /v1/state at the same revision, and no patch failed to apply."""
    server = start_server(demo="always")
    browser.get(server.url + "/?device=iphone-15-pro")
    wait_for(browser, lambda d: d.execute_script("return document.documentElement.dataset.panels === 'ready'"), timeout=20)
    browser.execute_script("""
        window.__errors = [];
        window.isletDashboard.stream.addEventListener('error', (e) => window.__errors.push(String(e.detail.error?.message ?? e.detail.error)));
        window.__start = window.isletDashboard.stream.rev;
    """)
    status, _ = server.request("PUT", "/v1/clock", {"mode": "virtual", "rate": 600})
    assert status == 200
    wait_for(browser, lambda d: d.execute_script("return window.isletDashboard.stream.rev - window.__start") >= 20, timeout=60)
    # Freeze the simulation, then compare at one revision.
    status, _ = server.request("PUT", "/v1/clock", {"mode": "virtual", "rate": 0})
    assert status == 200
    for _attempt in range(5):
        rev = server.request("GET", "/v1/state?path=/clock")[1]["rev"]
        wait_for(browser, lambda d: d.execute_script("return window.isletDashboard.stream.rev") >= rev, timeout=10)
        mirror = browser.execute_script("""
            const s = window.isletDashboard.store;
            const out = {};
            for (const [name, sub] of Object.entries(s.subs)) out['/' + name] = sub.value;
            for (const [id, sub] of s.widgetSubs) out['/widgets/' + id] = sub.value;
            return [window.isletDashboard.stream.rev, out];
        """)
        state = server.request("GET", "/v1/state")[1]
        if state["rev"] != mirror[0]:
            continue  # a driver tick landed in between; try again
        document = state["value"]
        for path, value in mirror[1].items():
            parts = path.strip("/").split("/", 1)
            expected = document[parts[0]] if len(parts) == 1 else document[parts[0]][parts[1]]
            assert value == expected, f"{path} differs from the server at rev {state['rev']}"
        break
    else:
        raise AssertionError("the simulation never held still long enough to compare")
    assert browser.execute_script("return window.__errors") == []
    assert browser.execute_script("return window.isletDashboard.stream.stats.patches") >= 20
