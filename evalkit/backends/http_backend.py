"""`HttpBackend`: what the four HTTP backends (openai, llama-server, ollama, anthropic) share.

Each is built from an entry, an injected `httpx.AsyncClient` (the runner's, or a test's on an
`httpx.MockTransport`) and an optional key; each calls JSON endpoints under the entry's deadline
and response-size cap, with its key blanked from everything that comes back. A subclass names its
`kind`, `default_url` and `features`, and writes its own payload, parsing and `describe` extras.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from evalkit.backends.base import Feature
from evalkit.backends.settings import BackendSettings
from evalkit.results.secrets import public_url

if TYPE_CHECKING:
    import httpx

    from evalkit.backends._http import Reply

__all__ = ["HttpBackend"]


class HttpBackend:
    """A backend that speaks JSON over HTTP to one server."""

    kind: ClassVar[str]
    speaks_http: ClassVar[bool] = True
    key_env: ClassVar[str | None] = None  # a hosted API's key variable (see `evalkit.backends.base.BackendKind`)
    default_url: ClassVar[str]
    features: ClassVar[frozenset[Feature]] = frozenset()
    simulated = False

    def __init__(self, *, entry: BackendSettings, client: httpx.AsyncClient, api_key: str | None = None):
        self.entry = entry
        self.model = entry.model
        self.url = entry.url or self.default_url
        self._client = client
        self._api_key = api_key

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def supports(self, feature: Feature) -> bool:
        return feature in self.features

    def _identity(self) -> dict[str, Any]:
        """The start of every description: kind, the URL fit to store, model."""
        return {"kind": self.kind, "url": public_url(self.url), "model": self.model}

    async def describe(self) -> dict[str, Any]:
        return self._identity()

    def _note_simulated(self, info: dict[str, Any], said: dict[str, Any]) -> None:
        """A server that says it is evalkit's simulated model (`evalkit serve sim`: `"simulated": true`
        in its model listing or `/props`) makes this backend's results SIMULATED, with its label."""
        if said.get("simulated") is True:
            self.simulated = True
            label = said.get("label")
            info.update(
                simulated=True, label=label if isinstance(label, str) and label.startswith("SIMULATED") else "SIMULATED"
            )

    async def aclose(self) -> None:
        return None  # the client belongs to the runner

    async def post(self, path: str, payload: dict[str, Any], headers: dict[str, str] | None = None) -> Reply:
        # imported here, not at the top: the registry imports every backend class, and `evalkit list`
        # and `validate` should not pay for httpx (the module is loaded once, by the first call)
        from evalkit.backends._http import join_url, post_json

        return await post_json(
            self._client,
            join_url(self.url, path),
            payload,
            headers={**self._headers(), **(headers or {})},
            deadline_s=self.entry.timeout_s,
            secrets=[self._api_key],
            max_bytes=self.entry.max_response_bytes,
        )

    async def _get(self, path: str) -> dict[str, Any]:
        from evalkit.backends._http import get_json, join_url

        return await get_json(
            self._client,
            join_url(self.url, path),
            headers=self._headers(),
            deadline_s=self.entry.timeout_s,
            secrets=[self._api_key],
            max_bytes=self.entry.max_response_bytes,
        )
