"""What a backend is built from: the fields of a run config's backend entry (which server and
model, how to reach it, how to retry) and their parts (retry, `serve:`, several endpoints).

Every backend class takes a `BackendSettings`. The checks that need to know every kind (is `kind`
one; can it be served) are `BackendEntry`'s (`evalkit.backends.entry`): the kinds are read from the
backend classes, which import this module, so those checks sit above the classes.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, field_validator, model_validator

from evalkit._model import StrictModel
from evalkit.backends.phase_config import LlamaServerSettings, PhaseSettings

__all__ = ["BackendSettings", "EndpointSettings", "RetrySettings", "ServeSettings", "check_http_url"]


def _checked_url(url: str) -> str:
    check_http_url(url)
    return url


_HttpURL = Annotated[str, AfterValidator(_checked_url)]  # for `urls` and `endpoints`, checked like `url`


class RetrySettings(StrictModel):
    """Backoff for backend faults (timeouts, connection errors, 429, 5xx)."""

    attempts: int = Field(4, ge=1, le=20)
    base_delay_s: float = Field(0.5, ge=0)
    max_delay_s: float = Field(8.0, ge=0)


class ServeSettings(LlamaServerSettings):
    """Let the runner start a local llama-server for this entry, and stop it when the entry is done
    (the llama-server settings: `LlamaServerSettings`). Or `phases`: a chain of programs, the model
    server first, then e.g. a guard proxy in front of it (`evalkit.backends.phase_config`).

    `replicas`: servers to start, each with `parallel` slots, used as one pool (`evalkit.backends.pool`).
    """

    replicas: int = Field(1, ge=1, le=16)  # servers to start, used as one pool of endpoints
    phases: list[PhaseSettings] | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _phases_hold_their_settings(self) -> ServeSettings:
        if self.phases is None:
            return self
        given = sorted(self.model_fields_set - {"phases"})
        if given:
            raise ValueError(f"{given[0]}: with `phases`, llama-server's settings go in its phase (`llama_server:`)")
        for i, phase in enumerate(self.phases):
            if i and phase.llama_server is not None:
                raise ValueError(f"phases.{i}: llama_server can only be the first phase (the model server)")
            if not i and phase.uses("upstream"):
                raise ValueError("phases.0: the first phase (the model server) has no {upstream}")
        names = [p.label(i) for i, p in enumerate(self.phases)]
        if len(set(names)) < len(names):
            raise ValueError(f"phases: two phases are named {sorted(n for n in names if names.count(n) > 1)[0]!r}")
        return self


class EndpointSettings(StrictModel):
    """One server of a backend entry with several (`endpoints:`); see `evalkit.backends.pool`.

    `concurrency`: calls in flight on this server; by default its `/props` slots (llama-server),
    else the entry's `concurrency`.
    """

    url: _HttpURL
    concurrency: int | None = Field(None, ge=1, le=256)


class BackendSettings(StrictModel):
    """One backend and model. `label` names it in results and reports.

    Several servers of the same model: `urls: [...]` or `endpoints: [{url, concurrency}]` instead of `url`.
    """

    label: str
    kind: str
    model: str
    url: str | None = None
    api_key_env: str | None = None  # the *name* of the variable; the key itself is never stored
    concurrency: int = Field(4, ge=1, le=256)
    timeout_s: float = Field(120.0, gt=0)
    # the largest decoded answer body accepted (default 8 MiB); a larger one is an infra error
    max_response_bytes: int = Field(8 * 1024 * 1024, ge=1024)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    options: dict[str, Any] = Field(default_factory=dict)
    serve: ServeSettings | None = None
    urls: list[_HttpURL] | None = Field(None, min_length=1)
    endpoints: list[EndpointSettings] | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _one_way_to_name_servers(self) -> BackendSettings:
        given = [name for name in ("url", "urls", "endpoints", "serve") if getattr(self, name) is not None]
        if len(given) > 1:
            raise ValueError(f"give one of url, urls, endpoints, serve, not {' and '.join(given)}")
        return self

    def endpoint_list(self) -> list[EndpointSettings]:
        """The servers named by `urls` or `endpoints`; empty for an entry with one `url` (or none)."""
        if self.endpoints is not None:
            return list(self.endpoints)
        return [EndpointSettings(url=url) for url in self.urls or []]

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        if url is not None:
            check_http_url(url)
        return url


def check_http_url(url: str) -> None:
    """An absolute http(s) URL with a host; anything else is refused with what is wrong (credentials
    in it blanked). The backends check the same way (one rule, in `backends._http.url_problem`)."""
    from evalkit.backends._http import url_problem  # here: httpx stays out of start-up

    problem = url_problem(url)
    if problem:
        raise ValueError(f"url {problem}")
