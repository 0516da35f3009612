"""A device's scene as text (`GET …/devices/{id}/scene?resolve=text`): what the island, the
banner, the Lock Screen, StandBy and the Home Screen show, for assertions and failure reports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SceneText:
    device: str
    rev: int
    scene: dict[str, Any]
    """The resolved scene as the server returns it (docs/API.md, "Reading state")."""

    @property
    def island_mode(self) -> str:
        return str(self.scene.get("island", {}).get("mode", "none"))

    @property
    def island(self) -> str:
        """The island's text: `compact: ☕ | 5 min`, `minimal: ☕`, `expanded: …`, or `none`."""
        island = self.scene.get("island", {})
        mode = self.island_mode
        if mode == "compact" and island.get("compact"):
            text = island["compact"].get("text", {})
            return f"compact: {text.get('leading', '')} | {text.get('trailing', '')}"
        if mode == "minimal":
            return "minimal: " + " · ".join(str(m.get("text", "")) for m in island.get("minimal") or [])
        if mode == "expanded" and island.get("expanded"):
            text = island["expanded"].get("text", {})
            parts = (text.get(region, "") for region in ("leading", "center", "trailing", "bottom"))
            return "expanded: " + " | ".join(p for p in parts if p)
        banner = self.scene.get("banner")
        return f"banner: {banner.get('text', '')}" if banner else "none"

    @property
    def lock_screen(self) -> list[str]:
        """Each Live Activity card on the Lock Screen, in scene order."""
        return [str(card.get("text", "")) for card in self.scene.get("lockScreen", {}).get("activities", [])]

    @property
    def lock_screen_activities(self) -> list[str]:
        return [str(card.get("activity")) for card in self.scene.get("lockScreen", {}).get("activities", [])]

    @property
    def home(self) -> list[str]:
        """The Home Screen: each stack's top widget, then the loose widgets."""
        home = self.scene.get("home", {})
        stacks = [f"[{s.get('top')}] {s.get('text', '')}" for s in home.get("stacks", [])]
        return stacks + [str(w.get("text", "")) for w in home.get("widgets", [])]

    def __str__(self) -> str:
        cards = "\n".join(f"    - {card}" for card in self.lock_screen) or "    (none)"
        return f"device {self.device} at rev {self.rev}\n  island: {self.island}\n  Lock Screen:\n{cards}"
