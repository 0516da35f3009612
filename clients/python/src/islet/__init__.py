"""Islet's harness kit: drive and observe an Islet server from Python.

Blocking: `Islet`, `Simulation`, `Mirror`. Asyncio: `AsyncIslet`, `AsyncSimulation`,
`AsyncMirror`. The pytest plugin (`islet.pytest_plugin`) is registered on install."""

from .client import AsyncIslet
from .errors import IsletError, IsletTimeout
from .mirror import AsyncMirror, MirrorState
from .process import ServerProcess
from .scene import SceneText
from .simulation import Advanced, Applied, AsyncSimulation, Clock, State
from .sync import Islet, Mirror, Simulation

__all__ = [
    "Advanced", "Applied", "AsyncIslet", "AsyncMirror", "AsyncSimulation", "Clock", "Islet", "IsletError",
    "IsletTimeout", "Mirror", "MirrorState", "SceneText", "ServerProcess", "Simulation", "State",
]
