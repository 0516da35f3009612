"""`islet snapshot` against the real dashboard: a view of one device as a PNG, an unchanged view
compares equal, a changed colour is detected and drawn in the diff image, and `--at` draws the
world at another instant without touching it."""

from __future__ import annotations

import os
import struct
import subprocess
import tempfile
from pathlib import Path

from support import BINARY, CHROMIUM, COFFEE, IsletServer, coffee_world


def snapshot(server: IsletServer, out, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BINARY), "snapshot", "--url", server.url, "--device", "phone", *extra, str(out)],
                          capture_output=True, text=True, timeout=120, env=env)


def png_size(path) -> tuple[int, int]:
    return struct.unpack(">II", path.read_bytes()[16:24])


def test_compare_detects_a_changed_colour_only(server, tmp_path):
    coffee_world(server)
    baseline = tmp_path / "lock.png"
    first = snapshot(server, baseline, "--view", "lockScreen")
    assert first.returncode == 0, first.stderr
    assert png_size(baseline) == (419, 878)  # the iPhone 15 Pro frame at 100 %

    same = snapshot(server, tmp_path / "again.png", "--view", "lockScreen", "--compare", str(baseline))
    assert same.returncode == 0, same.stderr
    assert "0 of" in same.stdout
    assert not (tmp_path / "again.diff.png").exists(), "no diff image when nothing differs"

    server.commands([{"type": "app.upsert", "id": COFFEE["id"], "identity": {"background": "#1E5FA8"}}])
    changed = snapshot(server, tmp_path / "changed.png", "--view", "lockScreen", "--compare", str(baseline),
                       "--threshold", "0.01")
    assert changed.returncode == 1
    assert "pixels differ" in changed.stderr and "changed.diff.png" in changed.stderr
    assert png_size(tmp_path / "changed.diff.png") == (419, 878)


def test_at_draws_another_instant_on_a_throwaway_fork(server, tmp_path):
    coffee_world(server)
    result = snapshot(server, tmp_path / "island.png", "--view", "island", "--at", "2026-11-22T17:00:00Z")
    assert result.returncode == 0, result.stderr
    assert [s["id"] for s in server.request("GET", "/v1/simulations")[1]["simulations"]] == ["default"]
    assert server.state("/activities/order-1/activityState") == "active"


def test_an_unknown_device_simulation_or_server_is_said_before_drawing(server, tmp_path):
    result = snapshot(server, tmp_path / "x.png", "--view", "home")
    assert result.returncode == 1 and "404" in result.stderr and "/devices/phone" in result.stderr
    coffee_world(server)
    # Another device exists: the dashboard would draw it; the command names the one asked for.
    typo = subprocess.run([str(BINARY), "snapshot", "--url", server.url, "--device", "no-such-phone", "--view",
                           "island", str(tmp_path / "typo.png")], capture_output=True, text=True, timeout=120)
    assert typo.returncode == 1 and "/devices/no-such-phone" in typo.stderr, typo.stderr
    elsewhere = snapshot(server, tmp_path / "y.png", "--view", "home", "--simulation", "nosuch")
    assert elsewhere.returncode == 1 and 'no simulation "nosuch"' in elsewhere.stderr, elsewhere.stderr
    closed = subprocess.run([str(BINARY), "snapshot", "--url", "http://127.0.0.1:9", "--device", "phone", "--view",
                             "home", str(tmp_path / "z.png")], capture_output=True, text=True, timeout=120)
    assert closed.returncode == 1 and "cannot reach 127.0.0.1:9" in closed.stderr, closed.stderr
    missing = snapshot(server, tmp_path / "w.png", "--view", "home", "--compare", str(tmp_path / "none.png"))
    assert missing.returncode != 0 and "cannot read the baseline" in missing.stderr
    assert not any((tmp_path / name).exists() for name in ("x.png", "typo.png", "y.png", "z.png", "w.png"))


def test_a_token_reaches_the_dashboard_but_no_command_line(start_server, tmp_path):
    server = start_server(token="snapshot-secret-token")
    coffee_world(server)
    # A Chromium that writes down the arguments it was started with: what `ps` shows everyone.
    arguments = tmp_path / "arguments"
    wrapper = tmp_path / "chromium"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{arguments}"\nexec "{CHROMIUM}" "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "ISLET_CHROMIUM": str(wrapper), "ISLET_ADMIN_TOKEN": server.token}
    before = set(Path(tempfile.gettempdir()).glob("islet-chromium-*"))
    result = snapshot(server, tmp_path / "lock.png", "--view", "lockScreen", env=env)
    assert result.returncode == 0, result.stderr
    assert png_size(tmp_path / "lock.png") == (419, 878)
    recorded = arguments.read_text()
    assert "--dump-dom" in recorded and "--screenshot=" in recorded
    assert server.token not in recorded
    # The launcher pages and profiles are gone.
    assert set(Path(tempfile.gettempdir()).glob("islet-chromium-*")) <= before

    # Without the token the server's refusal is said (the dashboard could not have drawn it).
    del env["ISLET_ADMIN_TOKEN"]
    refused = snapshot(server, tmp_path / "x.png", "--view", "lockScreen", env=env)
    assert refused.returncode == 1 and "401" in refused.stderr, refused.stderr
