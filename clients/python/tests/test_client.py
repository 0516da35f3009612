"""The client and plugin against a real `islet serve` (the plugin's `islet_server`): commands,
reads, mirrors that track GET /v1/state revision by revision, waits, the virtual clock, scene
text, forks, errors, the asyncio API and the failure report."""

from __future__ import annotations

import asyncio
import json
import textwrap
import threading
import time

import httpx
import pytest
from websockets.protocol import State

from islet import AsyncIslet, Islet, IsletError, IsletTimeout, ServerProcess, Simulation

PHONE = {"type": "device.upsert", "id": "phone", "model": "iphone-15-pro"}
APP = {"type": "app.upsert", "id": "coffee", "name": "Coffee", "foreground": True}


def order(status: str = "received", **content: object) -> dict[str, object]:
    return {"type": "activity.request", "id": "order", "app": "coffee", "attributesType": "Coffee",
            "attributes": {"drink": "Latte"}, "content": {"state": {"status": status}, **content}}


def test_commands_state_and_mirror_agree_at_every_revision(simulation: Simulation) -> None:
    with simulation.mirror("/activities") as mirror:
        assert mirror.value == {}
        simulation.commands(PHONE, APP, order())
        for status in ("brewing", "ready", "picked-up"):
            applied = simulation.commands({"type": "activity.update", "id": "order", "content": {"state": {"status": status}}})
            mirror.wait_for(lambda value: mirror.rev >= applied.rev, what=f"rev {applied.rev}")
            assert mirror.value == simulation.get("/activities")
        assert mirror.value["order"]["content"]["state"] == {"status": "picked-up"}


def test_sync_covers_revisions_outside_the_path(simulation: Simulation) -> None:
    with simulation.mirror("/devices") as mirror:
        applied = simulation.commands(APP)
        mirror.sync()
        assert mirror.rev < applied.rev and mirror.value == {}


def test_wait_for_times_out_with_the_last_value(simulation: Simulation) -> None:
    with simulation.mirror("/clock") as mirror:
        with pytest.raises(IsletTimeout, match=r"never virtual.*last value: \{.*2026-01-01T08:00:00Z"):
            mirror.wait_for(lambda clock: clock["mode"] == "wall", timeout=0.2, what="never virtual")


def test_clock_helpers_step_through_transitions(simulation: Simulation) -> None:
    assert simulation.step_to_next_transition() is None
    simulation.commands(PHONE, APP, order(staleDate="2026-01-01T08:30:00Z"))
    clock = simulation.clock()
    assert clock.mode == "virtual" and clock.rate == 0
    assert clock.next_transition is not None and clock.next_transition.isoformat() == "2026-01-01T08:30:00+00:00"
    stepped = simulation.step_to_next_transition()
    assert stepped is not None and stepped.now == clock.next_transition
    assert simulation.get("/activities/order/activityState") == "stale"
    advanced = simulation.advance(3600)
    assert advanced.now.isoformat() == "2026-01-01T09:30:00+00:00"


@pytest.mark.islet_clock("2030-05-01T12:00:00Z")
def test_the_marker_pins_the_start(simulation: Simulation) -> None:
    assert simulation.clock().now.isoformat() == "2030-05-01T12:00:00+00:00"


def test_scene_text(simulation: Simulation) -> None:
    simulation.commands(PHONE, APP, order("brewing"), {"type": "template.put", "app": "coffee",
                        "target": "activity:Coffee", "slot": "lockScreen", "html": "<b>{{state.status}}</b> {{attributes.drink}}"})
    scene = simulation.scene_text("phone")
    assert scene.island_mode == "compact"
    assert scene.lock_screen == ["brewing Latte"]
    assert "island: compact" in str(scene) and "brewing Latte" in str(scene)


def test_errors_carry_the_api_shape(simulation: Simulation) -> None:
    with pytest.raises(IsletError) as refused:
        simulation.commands({"type": "activity.update", "id": "missing", "content": {"state": {}}})
    assert refused.value.status == 404 and refused.value.code == "not_found"
    assert refused.value.field == "/commands/0/id"


def test_ids_that_would_leave_their_path_segment_are_refused_before_any_request(islet_server: str) -> None:
    with Islet(islet_server) as client:
        for bad in ("x/../../devices", "..", ".", "a b", "", "x" * 129):
            with pytest.raises(ValueError, match="1-128 characters"):
                client.simulation(bad)
        with pytest.raises(ValueError, match="a device id"):
            client.simulation().scene_text("x/../../../simulations")
        assert client.simulation("team-1.b:c_d").id == "team-1.b:c_d"


def test_fork_copies_the_world(simulation: Simulation) -> None:
    simulation.commands(PHONE)
    fork = simulation.fork(at="2026-06-01T00:00:00Z")
    try:
        assert fork.get("/devices/phone/model") == "iphone-15-pro"
        assert fork.clock().now.isoformat() == "2026-06-01T00:00:00+00:00"
    finally:
        fork.delete()


def test_asyncio_api(islet_server: str) -> None:
    async def scenario() -> list[str]:
        async with AsyncIslet(islet_server) as client:
            world = await client.create_simulation(at="2026-01-01T08:00:00Z")
            try:
                async with await world.mirror("/devices") as mirror:
                    await world.commands(PHONE)
                    value = await mirror.wait_for(lambda devices: "phone" in devices)
                    return sorted(value)
            finally:
                await world.delete()

    assert asyncio.run(scenario()) == ["phone"]


def test_a_failure_shows_the_island_and_lock_screen(pytester: pytest.Pytester, islet_server: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ISLET_URL", islet_server)
    pytester.makepyfile(textwrap.dedent("""
        def test_wrong(simulation):
            simulation.commands({"type": "device.upsert", "id": "phone"},
                                {"type": "app.upsert", "id": "coffee", "foreground": True},
                                {"type": "activity.request", "id": "order", "app": "coffee", "attributesType": "Coffee",
                                 "content": {"state": {"status": "brewing"}}})
            assert simulation.scene_text("phone").island_mode == "expanded"
    """))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Islet: what the devices show*", "*device phone at rev *", "*island: compact*",
                                 "*Lock Screen:*"])


def test_the_session_server_is_shared(islet: Islet, islet_server: str) -> None:
    assert islet.url == islet_server
    assert any(s["id"] == "default" for s in islet.simulations())


def test_wait_for_sees_a_state_that_lasts_one_revision(simulation: Simulation, islet_server: str) -> None:
    """Two revisions reach the mirror back to back (two stream commands in a row): the predicate
    is checked on the first before the second is applied, so the wait returns the first's value."""
    from websockets.sync.client import connect

    simulation.commands(PHONE)
    with simulation.mirror("/devices/phone/scene/home/tint") as tint, \
            connect(islet_server.replace("http", "ws") + "/v1/stream", subprotocols=["islet.v1"]) as socket:  # type: ignore[list-item]
        socket.recv()  # hello
        for round in range(10):
            first, second = f"#{round:02d}0000", f"#{round:02d}ffff"

            async def wait_and_send() -> object:
                waiting = asyncio.ensure_future(tint._inner.wait_for(lambda value: value == first, timeout=10))
                await asyncio.sleep(0)  # registered before the revisions exist
                for index, color in enumerate((first, second)):
                    socket.send(json.dumps({"op": "command", "id": f"{round}-{index}", "simulation": simulation.id,
                                            "commands": [{"type": "device.upsert", "id": "phone", "tint": color}]}))
                return await waiting

            assert tint._loop.run(wait_and_send()) == first
            acks = [json.loads(socket.recv()) for _ in range(2)]
            assert [ack["type"] for ack in acks] == ["ack", "ack"]
            tint.wait_for(lambda value: value == second)


def test_a_deleted_simulation_fails_its_waiters_at_once(islet: Islet) -> None:
    world = islet.create_simulation(at="2026-01-01T08:00:00Z")
    with world.mirror("/clock") as mirror:
        def delete_soon() -> None:
            islet.simulation(world.id).delete()
        deleting = threading.Thread(target=delete_soon)
        with pytest.raises(IsletError) as ended:
            deleting.start()
            mirror.wait_for(lambda clock: clock["mode"] == "wall", timeout=30)
        deleting.join()
        assert (ended.value.status, ended.value.code) == (404, "not_found")
        with pytest.raises(IsletError, match="was deleted"):
            mirror.wait_for(lambda clock: True, timeout=30)
        with pytest.raises(IsletError, match="was deleted"):
            mirror.sync(timeout=30)


def test_a_refused_mirror_raises_the_servers_error_and_leaves_no_stream(islet: Islet) -> None:
    with pytest.raises(IsletError) as missing:
        islet.simulation("no-such-world").mirror("/devices")
    assert (missing.value.status, missing.value.code, missing.value.field) == (404, "not_found", "/simulation")
    with pytest.raises(IsletError) as malformed:
        islet.simulation().mirror("devices")
    assert (malformed.value.status, malformed.value.code, malformed.value.field) == (400, "invalid_argument", "/path")
    assert islet._inner.http.mirrors == set()


def test_a_stream_without_a_token_is_refused_as_unauthorized() -> None:
    server = ServerProcess(args=("--admin-token", "admin-token-for-tests"))
    try:
        with Islet(server.url) as anonymous:
            for _ in range(3):
                with pytest.raises(IsletError) as refused:
                    anonymous.simulation().mirror("/devices")
                assert (refused.value.status, refused.value.code) == (401, "unauthorized")
    finally:
        server.stop()


def test_a_predicate_that_makes_requests_is_refused_rather_than_deadlocking(simulation: Simulation) -> None:
    with simulation.mirror("/clock") as mirror:
        with pytest.raises(RuntimeError, match="predicate should read the mirror's value"):
            mirror.wait_for(lambda clock: simulation.get("/clock/mode") == "virtual", timeout=30)


def test_closing_the_client_closes_its_mirrors(islet_server: str) -> None:
    def subscribers() -> int:
        return int(httpx.get(islet_server + "/v1/simulations/default").json()["subscribers"])

    before = subscribers()
    client = Islet(islet_server)
    mirror = client.simulation().mirror("/clock")
    assert subscribers() == before + 1
    client.close()
    assert mirror._inner._socket is not None and mirror._inner._socket.state is State.CLOSED
    deadline = time.monotonic() + 10
    while subscribers() != before and time.monotonic() < deadline:
        time.sleep(0.01)  # the server drops the stream when it reads the close: polled with a deadline
    assert subscribers() == before


def test_the_failure_report_survives_a_server_that_died(pytester: pytest.Pytester,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    server = ServerProcess()
    try:
        monkeypatch.setenv("ISLET_URL", server.url)
        monkeypatch.setenv("ISLET_TEST_SERVER_PID", str(server.process.pid))
        pytester.makepyfile(textwrap.dedent("""
            import os, signal, socket, time
            from urllib.parse import urlsplit

            def test_deletes_its_own_simulation(simulation):
                simulation.delete()

            def test_server_dies(simulation):
                os.kill(int(os.environ["ISLET_TEST_SERVER_PID"]), signal.SIGKILL)
                address = urlsplit(os.environ["ISLET_URL"])
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline:  # until its port refuses connections
                    try:
                        socket.create_connection((address.hostname, address.port), timeout=1).close()
                    except OSError:
                        break
                assert False, "the test's own failure"

            def test_after():
                pass
        """))
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
        result.assert_outcomes(passed=2, failed=1, errors=1)
        result.stdout.fnmatch_lines(["*the test's own failure*", "*Islet: what the devices show*",
                                     "*could not read the scene*"])
        assert "INTERNALERROR" not in result.stdout.str()
    finally:
        server.stop()
