"""A widget timeline and a Smart Stack rotating to the most relevant widget."""
import pytest

WEATHER = [{"date": "2026-03-02T08:00:00Z", "content": {"temp": 9}},
           {"date": "2026-03-02T09:00:00Z", "content": {"temp": 12}},
           {"date": "2026-03-02T11:00:00Z", "content": {"temp": 15}, "relevance": {"score": 50, "duration": 3600}}]
NEWS = [{"date": "2026-03-02T08:00:00Z", "content": {"headline": "Quiet morning"}},
        {"date": "2026-03-02T10:00:00Z", "content": {"headline": "Islet ships"}, "relevance": {"score": 80, "duration": 3600}}]


@pytest.mark.islet_clock("2026-03-02T08:00:00Z")
def test_timeline_and_rotation(simulation):
    simulation.commands(
        {"type": "device.upsert", "id": "phone"},
        *({"type": "app.upsert", "id": app} for app in ("weather", "news")),
        {"type": "widget.upsert", "id": "w", "app": "weather", "kind": "weather", "family": "systemSmall", "device": "phone"},
        {"type": "widget.upsert", "id": "n", "app": "news", "kind": "news", "family": "systemSmall", "device": "phone"},
        {"type": "widget.setTimeline", "id": "w", "entries": WEATHER},
        {"type": "widget.setTimeline", "id": "n", "entries": NEWS},
        {"type": "stack.upsert", "id": "stack", "device": "phone", "family": "systemSmall", "widgets": ["w", "n"]})
    stack = simulation.mirror("/stacks/stack")
    assert stack.value["top"] == "w" and simulation.get("/widgets/w/current/index") == 0

    simulation.step_to_next_transition()  # 09:00, the weather's second entry
    assert simulation.get("/widgets/w/current/index") == 1

    simulation.advance(to="2026-03-02T10:00:00Z")  # the headline is relevant for an hour
    stack.wait_for(lambda s: s["top"] == "n")
    assert simulation.scene_text("phone").home[0].startswith("[n]")

    simulation.advance(to="2026-03-02T11:00:00Z")  # then the weather's entry is
    stack.wait_for(lambda s: s["top"] == "w" and s["rotations"][-1]["from"] == "n")
