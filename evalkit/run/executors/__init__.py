"""Executors: where the runs of `evalkit run` execute (`--executor`). See `evalkit.run.executors.base`.

local   this process (the default)
ray     Ray workers, one shard of the pending runs each (`pip install 'evalkit[ray]'`)
"""

from __future__ import annotations

from collections.abc import Callable

from evalkit.errors import ConfigError
from evalkit.run.executors.base import Executor, Phase

__all__ = ["EXECUTORS", "Executor", "Phase", "create_executor"]


def _local(address: str | None, workers: int | None) -> Executor:
    if address is not None or workers is not None:
        raise ConfigError("--address and --workers need --executor ray")
    from evalkit.run.executors.local import LocalExecutor

    return LocalExecutor()


def _ray(address: str | None, workers: int | None) -> Executor:
    from evalkit.run.executors.ray_executor import RayExecutor  # imports ray: only when it is named

    return RayExecutor(address=address, workers=workers)


# name -> how it is built: the one list of executors (`run --executor`)
EXECUTORS: dict[str, Callable[[str | None, int | None], Executor]] = {"local": _local, "ray": _ray}


def create_executor(name: str, *, address: str | None = None, workers: int | None = None) -> Executor:
    build = EXECUTORS.get(name)
    if build is None:
        raise ConfigError(f"--executor {name!r}: unknown (known: {', '.join(EXECUTORS)})")
    return build(address, workers)
