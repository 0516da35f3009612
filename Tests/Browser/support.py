"""Helpers for the dashboard's real-browser tests: an `islet serve` process, a headless
Chromium driven through Debian's chromedriver, explicit waits and small worlds to test on."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("ISLET_BIN", ROOT / ".build" / "debug" / "islet"))
CHROMIUM = os.environ.get("ISLET_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("ISLET_CHROMEDRIVER", "/usr/bin/chromedriver")
START_INSTANT = "2026-11-22T08:00:00Z"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class IsletServer:
    """One `islet serve` process on a throwaway command log (`--db :memory:`), in its own
    working directory; with `token`, it runs with that admin token and `request` presents it."""

    def __init__(self, port: int = 0, demo: str = "off", clock: str | None = START_INSTANT, workdir: Path | None = None,
                 token: str | None = None):
        if not BINARY.exists():
            raise RuntimeError(f"{BINARY} is missing: run `swift build --product islet` first")
        self.requested_port = port
        self.demo = demo
        self.clock = clock
        self.token = token
        self.own_workdir = workdir is None
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="islet-browser-"))
        self.process: subprocess.Popen | None = None
        self.port = None
        self.output: list[str] = []

    def start(self) -> "IsletServer":
        args = [str(BINARY), "serve", "--port", str(self.requested_port), "--demo", self.demo,
                "--db", ":memory:", "--public-dir", str(ROOT / "Public"), "--log-level", "warning"]
        if self.clock:
            args += ["--virtual-clock", self.clock]
        if self.token:
            args += ["--admin-token", self.token]
        self.process = subprocess.Popen(args, cwd=self.workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        found = threading.Event()

        def read():
            for line in self.process.stdout:
                self.output.append(line.rstrip())
                match = re.search(r"listening on http://[^:]+:(\d+)", line)
                if match and not found.is_set():
                    self.port = int(match.group(1))
                    found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(60):
            self.stop()
            raise RuntimeError("islet serve did not start:\n" + "\n".join(self.output))
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self, kill: bool = False):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def cleanup(self):
        self.stop()
        if self.own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def request(self, method: str, path: str, body=None, headers: dict | None = None):
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers or {})
        if self.token and "authorization" not in {k.lower() for k in (headers or {})}:
            req.add_header("Authorization", f"Bearer {self.token}")
        if body is not None and "content-type" not in {k.lower() for k in (headers or {})}:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=10) as reply:
                text = reply.read().decode()
                return reply.status, (json.loads(text) if text else None)
        except urllib.error.HTTPError as error:
            text = error.read().decode()
            return error.code, (json.loads(text) if text.startswith("{") else text)

    def commands(self, commands: list) -> dict:
        status, reply = self.request("POST", "/v1/commands", {"commands": commands})
        assert status == 200, reply
        return reply

    def state(self, path: str = "") -> dict:
        status, reply = self.request("GET", "/v1/state?path=" + urllib.request.quote(path, safe=""))
        assert status == 200, reply
        return reply["value"]


def make_driver(width: int = 1600, height: int = 1000, performance_log: bool = False) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--window-size={width},{height}",
                "--hide-scrollbars", "--force-device-scale-factor=1", "--disable-extensions", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--mute-audio"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", **({"performance": "ALL"} if performance_log else {})})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def wait_for(driver, condition, timeout: float = 10, message: str = "", poll: float = 0.05):
    """Waits until `condition(driver)` is truthy (explicit wait; never a sleep)."""
    return WebDriverWait(driver, timeout, poll_frequency=poll).until(lambda d: condition(d), message)


def open_dashboard(driver, server: IsletServer, **params) -> None:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    driver.get(f"{server.url}/{'?' + query if query else ''}")
    wait_for(driver, lambda d: d.execute_script("return document.getElementById('conn').dataset.state") == "live",
             message="the stream never went live")
    wait_for(driver, lambda d: d.execute_script("return document.documentElement.dataset.firstIsland !== undefined"),
             message="the first island was never drawn")
    wait_for(driver, lambda d: d.execute_script("return document.documentElement.dataset.panels === 'ready'"),
             message="the operator panels never loaded")


def js(driver, script: str, *args):
    return driver.execute_script(script, *args)


# ---- Small worlds -------------------------------------------------------------------------

COFFEE = {"id": "com.example.coffee", "name": "Coffee", "foreground": True,
          "identity": {"tint": "#C67C4E", "background": "#2B1A12", "keyline": "#C67C4E"}}


def coffee_world(server: IsletServer, device: str = "phone", model: str = "iphone-15-pro", status: str = "received",
                 activity: str = "order-1") -> dict:
    """One device, the coffee app in the foreground, one coffee order (compact island)."""
    return server.commands([
        {"type": "device.upsert", "id": device, "model": model},
        {"type": "app.upsert", **COFFEE},
        {"type": "activity.request", "id": activity, "app": COFFEE["id"], "attributesType": "CoffeeDeliveryAttributes",
         "attributes": {"coffeeName": "Latte"}, "content": {"state": {"currentStatus": status}}, "pushType": "token"},
    ])


def stack_world(server: IsletServer, device: str = "phone") -> dict:
    """A Smart Stack of weather and news whose top depends on the habit weight: news wins with
    habit 1 (used at this hour), weather with habit 0 (better timeline relevance)."""
    return server.commands([
        {"type": "device.upsert", "id": device, "model": "iphone-15-pro"},
        {"type": "app.upsert", "id": "com.example.weather", "name": "Weather",
         "identity": {"tint": "#4DA3FF", "background": "#1E5FA8"}},
        {"type": "app.upsert", "id": "com.example.news", "name": "News", "identity": {"tint": "#FF2D55", "background": "#FFFFFF"}},
        {"type": "widget.upsert", "id": "w-weather", "app": "com.example.weather", "kind": "weather", "family": "systemSmall", "device": device},
        {"type": "widget.upsert", "id": "w-news", "app": "com.example.news", "kind": "news", "family": "systemSmall", "device": device},
        {"type": "widget.setTimeline", "id": "w-weather", "entries": [
            {"date": "2026-11-22T08:00:00Z", "content": {"location": "Cupertino", "temperature": 12, "condition": "Sunny"},
             "relevance": {"score": 100, "duration": 86400}}]},
        {"type": "widget.setTimeline", "id": "w-news", "entries": [
            {"date": "2026-11-22T07:00:00Z", "content": {"headline": "Earlier"}, "relevance": {"score": 100, "duration": 60}},
            {"date": "2026-11-22T08:00:00Z", "content": {"headline": "Islet ships a dashboard", "source": "Wire"},
             "relevance": {"score": 50, "duration": 86400}}]},
        {"type": "widget.interact", "id": "w-news", "at": "2026-11-21T08:10:00Z"},
        {"type": "widget.interact", "id": "w-news", "at": "2026-11-20T08:20:00Z"},
        {"type": "stack.upsert", "id": f"{device}.home", "device": device, "family": "systemSmall", "widgets": ["w-weather", "w-news"]},
        {"type": "relevance.setWeights", "weights": {"timeline": 1, "habit": 1, "freshness": 0.1, "rotationPenalty": -0.3},
         "minDwellSeconds": 0, "hysteresis": 0.05},
    ])


def island_rect(driver, view: str = "island") -> dict:
    """The island pill's size in points: its rendered box divided by the zoom."""
    return driver.execute_script("""
        const pill = document.querySelector(`[data-view="${arguments[0]}"] .island-pill`);
        const zoom = Number(getComputedStyle(document.getElementById('stage')).getPropertyValue('--zoom'));
        const r = pill.getBoundingClientRect();
        return {width: r.width / zoom, height: r.height / zoom, mode: pill.closest('.island').dataset.mode,
                text: pill.innerText};
    """, view)


def island_still(driver, view: str = "island") -> bool:
    """Whether the island's morph has finished: its curve overshoots, so a drawn size passes
    through its target while a transition of the pill (or of the island's shift) still runs."""
    return driver.execute_script("""
        const island = document.querySelector(`[data-view="${arguments[0]}"] .island`);
        const pill = island.querySelector('.island-pill');
        return ![...island.getAnimations(), ...pill.getAnimations()].some((a) => a.playState === 'running');
    """, view)


RESULTS = Path(os.environ.get("ISLET_BROWSER_RESULTS", ROOT / ".build" / "browser-results.json"))


def record(name: str, value) -> None:
    """Keeps a measured figure (for BENCHMARKS.md) in .build/browser-results.json and prints it."""
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data[name] = value
    RESULTS.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    print(f"{name}: {value}")
