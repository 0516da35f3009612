// Placeholder dashboard: connects to the stream, shows the hello, measures ping round trips.
const statusEl = document.getElementById("status");
const show = (id, text) => { document.getElementById(id).textContent = text; };

function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const token = new URLSearchParams(location.search).get("token");
  const url = `${scheme}//${location.host}/v1/stream${token ? `?token=${encodeURIComponent(token)}` : ""}`;
  const socket = new WebSocket(url, "islet.v1");
  let pingSent = 0;
  let timer = null;

  socket.addEventListener("open", () => {
    statusEl.textContent = "open";
    statusEl.className = "status open";
    timer = setInterval(() => {
      pingSent = performance.now();
      socket.send(JSON.stringify({ op: "ping", id: "rtt" }));
    }, 2000);
  });
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(event.data);
    if (message.type === "hello") {
      document.getElementById("hello").hidden = false;
      show("hello-server", message.server);
      show("hello-epoch", message.epoch);
      show("hello-rev", String(message.rev));
      show("hello-limits", Object.entries(message.limits).map(([key, value]) => `${key} ${value}`).join(" · "));
      show("raw", event.data);
    } else if (message.type === "pong" && pingSent) {
      show("rtt", `${(performance.now() - pingSent).toFixed(1)} ms`);
    }
  });
  socket.addEventListener("close", (event) => {
    clearInterval(timer);
    statusEl.textContent = `closed (${event.code})`;
    statusEl.className = "status closed";
    setTimeout(connect, 2000);
  });
}

connect();
