"""A coffee-delivery Live Activity from start to dismissal, on a paused virtual clock."""
from datetime import timedelta

import pytest

COFFEE = [{"type": "device.upsert", "id": "phone", "model": "iphone-15-pro"},
          {"type": "app.upsert", "id": "coffee", "name": "Coffee", "foreground": True},
          {"type": "template.put", "app": "coffee", "target": "activity:Order", "slot": "lockScreen",
           "html": "<b>{{state.status}}</b> · {{attributes.drink}}"}]


@pytest.mark.islet_clock("2026-03-02T08:00:00Z")
def test_coffee_delivery(simulation):
    simulation.commands(*COFFEE, {"type": "activity.request", "id": "order", "app": "coffee", "attributesType": "Order",
                                  "attributes": {"drink": "Flat white"}, "content": {"state": {"status": "Brewing"}}})
    island = simulation.mirror("/devices/phone/scene/island")
    assert island.value["mode"] == "compact"
    assert simulation.scene_text("phone").lock_screen == ["Brewing · Flat white"]

    update = {"state": {"status": "On its way"}, "staleDate": "2026-03-02T08:30:00Z"}
    simulation.commands({"type": "activity.update", "id": "order", "content": update,
                         "alert": {"title": "Coffee", "body": "Your order is on its way"}})
    island.wait_for(lambda i: i["mode"] == "expanded" and i["expanded"]["reason"] == "alert")
    simulation.step_to_next_transition()  # the alert's expansion ends
    island.wait_for(lambda i: i["mode"] == "compact")

    simulation.advance(to="2026-03-02T08:30:00Z")
    assert simulation.get("/activities/order/activityState") == "stale"

    simulation.advance(timedelta(hours=7, minutes=30))  # 8 h after the start, the system ends it
    assert simulation.get("/activities/order/activityState") == "ended"
    island.wait_for(lambda i: i["mode"] == "none")
    assert simulation.scene_text("phone").lock_screen == ["On its way · Flat white"]

    simulation.advance(timedelta(hours=4))  # ended cards leave the Lock Screen after 4 h
    assert simulation.get("/activities/order/activityState") == "dismissed"
    assert simulation.scene_text("phone").lock_screen == []
