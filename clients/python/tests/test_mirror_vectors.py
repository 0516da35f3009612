"""The mirror's patch application (jsonpatch under MirrorState) against the public RFC 6902
vectors in the shared test data (`shared/testdata/json-patch-tests` beside the repository, else
the repository's copy in Tests/Browser/fixtures), applied as a stream patch at the root and
under a subscription path."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import jsonpatch
import jsonpointer
import pytest

from islet import MirrorState

HERE = Path(__file__).resolve()


def vectors_directory() -> Path:
    for directory in HERE.parents:
        for candidate in (directory / "shared" / "testdata" / "json-patch-tests",
                          directory / "Tests" / "Browser" / "fixtures" / "json-patch-tests"):
            if candidate.is_dir():
                return candidate
    raise FileNotFoundError("no shared/testdata/json-patch-tests above " + str(HERE))


def cases() -> list[Any]:
    found = []
    for name in ("tests.json", "spec_tests.json"):
        for case in json.loads((vectors_directory() / name).read_text()):
            if "patch" in case and not case.get("disabled"):
                found.append(pytest.param(case, id=case.get("comment", json.dumps(case["patch"]))[:80]))
    return found


def patch_message(ops: list[dict[str, Any]], prefix: str) -> dict[str, Any]:
    moved = [{**op, "path": prefix + op["path"], **({"from": prefix + op["from"]} if "from" in op else {})} for op in ops]
    return {"type": "patch", "rev": 2, "ops": moved}


@pytest.mark.parametrize("prefix", ["", "/activities/a1"])
@pytest.mark.parametrize("case", cases())
def test_vector(case: dict[str, Any], prefix: str) -> None:
    if prefix and any(not str(op.get("path")).startswith("/") and op.get("path") != "" for op in case["patch"]):
        pytest.skip("a malformed pointer stays malformed only at the root")
    mirror = MirrorState(prefix)
    original = copy.deepcopy(case["doc"])
    mirror.receive({"type": "snapshot", "sub": "s", "epoch": "e", "rev": 1, "path": prefix, "value": case["doc"]})
    if "error" in case:
        with pytest.raises((jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, KeyError, IndexError, TypeError)):
            mirror.receive(patch_message(case["patch"], prefix))
        return
    mirror.receive(patch_message(case["patch"], prefix))
    if "expected" in case:
        assert mirror.value == case["expected"]
    assert case["doc"] == original, "the snapshot's value was modified in place"
    assert mirror.rev == 2


def test_there_are_vectors() -> None:
    assert len(cases()) > 100


def test_ops_elsewhere_and_replays_are_ignored() -> None:
    mirror = MirrorState("/devices/d1")
    mirror.receive({"type": "snapshot", "epoch": "e", "rev": 5, "path": "/devices/d1", "value": {"locked": False}})
    mirror.receive({"type": "patch", "rev": 5, "ops": [{"op": "replace", "path": "/devices/d1/locked", "value": True}]})
    mirror.receive({"type": "patch", "rev": 6, "ops": [{"op": "add", "path": "/devices/d10", "value": {}}]})
    assert mirror.value == {"locked": False} and mirror.rev == 6
    mirror.receive({"type": "patch", "rev": 7, "ops": [{"op": "remove", "path": "/devices/d1"}]})
    assert mirror.value is None


def test_a_subscription_through_an_array_element_takes_only_snapshots() -> None:
    """An element's index shifts as its array changes: the server sends such a subscription a
    snapshot (reason `array_element`) instead, and live patches must not move it."""
    path = "/devices/d1/scene/lockScreen/activities/0"
    mirror = MirrorState(path)
    assert mirror.through_array_element and not MirrorState("/devices/d1").through_array_element
    assert not MirrorState("/devices/007").through_array_element
    mirror.receive({"type": "snapshot", "epoch": "e", "rev": 5, "path": path, "value": "a0"})
    mirror.receive({"type": "patch", "rev": 6, "ops": [{"op": "remove", "path": path}]})
    assert mirror.value == "a0"
    mirror.receive({"type": "snapshot", "epoch": "e", "rev": 6, "path": path, "value": "a1", "reason": "array_element"})
    assert mirror.value == "a1" and mirror.rev == 6


def test_a_waiter_sees_each_revision_before_the_next_is_applied() -> None:
    """Deterministic twin of the live one-revision test: two patches applied back to back, with
    no chance for the waiter to run in between, still resolve it with the first one's value."""
    from islet import AsyncMirror

    async def scenario() -> object:
        mirror = AsyncMirror("ws://unused", "/tint", "default", None)
        waiting = asyncio.ensure_future(mirror.wait_for(lambda value: value == "#first", timeout=5))
        await asyncio.sleep(0)  # registered
        mirror.receive({"type": "snapshot", "sub": "mirror", "epoch": "e", "rev": 1, "path": "/tint", "value": "#start"})
        for rev, value in ((2, "#first"), (3, "#second")):
            mirror.receive({"type": "patch", "rev": rev, "ops": [{"op": "replace", "path": "/tint", "value": value}]})
        assert mirror.value == "#second"
        return await waiting

    assert asyncio.run(scenario()) == "#first"
