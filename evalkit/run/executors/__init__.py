"""Executors: where the runs of `evalkit run` execute (`--executor`). See `evalkit.run.executors.base`.

local   this process (the default)
ray     Ray workers, one shard of the pending runs each (`pip install 'evalkit[ray]'`)
"""

from __future__ import annotations

from evalkit.errors import ConfigError
from evalkit.run.executors.base import Executor, Phase

__all__ = ["EXECUTORS", "Executor", "Phase", "create_executor"]

EXECUTORS = ("local", "ray")


def create_executor(name: str, *, address: str | None = None, workers: int | None = None) -> Executor:
    if name == "local":
        if address is not None or workers is not None:
            raise ConfigError("--address and --workers need --executor ray")
        from evalkit.run.executors.local import LocalExecutor

        return LocalExecutor()
    if name == "ray":
        from evalkit.run.executors.ray_executor import RayExecutor

        return RayExecutor(address=address, workers=workers)
    raise ConfigError(f"--executor {name!r}: unknown (known: {', '.join(EXECUTORS)})")
