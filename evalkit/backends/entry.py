"""A backend entry as a run config gives it: `BackendSettings` with the checks that need every
kind, read from the backend classes' registry (`evalkit.backends.BACKENDS`)."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from evalkit.backends import BACKENDS
from evalkit.backends.settings import BackendSettings
from evalkit.chat import ToolMode

__all__ = ["BackendEntry"]


class BackendEntry(BackendSettings):
    """One backend and model of a run config; `kind` is one of the registered kinds.

    `strategies` and `modes` narrow the matrix for this entry: only these guard stacks (labels of the
    config's `strategies`) and tool modes run on it. A guard proxy's entry then runs `[trust_text]`
    alone, instead of evalkit's guards stacked on top of the proxy's. By default, all of them.
    """

    strategies: list[str] | None = Field(None, min_length=1)
    modes: list[ToolMode] | None = Field(None, min_length=1)

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        if kind not in BACKENDS:
            raise ValueError(f"unknown backend kind {kind!r} (known: {', '.join(BACKENDS)})")
        return kind

    @model_validator(mode="after")
    def _serve_needs_llama_server(self) -> BackendEntry:
        if self.serve is not None and self.serve.phases is not None and not BACKENDS[self.kind].speaks_http:
            raise ValueError(f"serve.phases: a {self.kind} backend calls no server")
        if self.serve is not None and self.serve.phases is None and self.kind != "llama-server":
            raise ValueError(
                f"serve: only a llama-server backend can be started by evalkit, not {self.kind!r} "
                "(any server, in `serve.phases`)"
            )
        if self.serve is not None and self.url is not None:
            raise ValueError("serve: give either url (a server you run) or serve (evalkit starts one), not both")
        return self
