"""A run's identity in its model URL: `/run/<token>/v1`, so an agent needs no help to be measured.

An agent under test sends no seed and no run id; it only knows a base URL. evalkit gives each run
its own: the token names the run's scenario, seed and run id. `evalkit serve sim` strips the prefix
and answers as if the request carried evalkit's headers (`X-Evalkit-Seed`, `X-Evalkit-Scenario`,
`X-Evalkit-Run`), so each run gets its own seeded, reproducible draws; the counting pass-through
strips it before forwarding and counts the model calls per token. The token is base64url of a
small JSON array: readable by anyone, secret to no one, and never a credential.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

__all__ = ["RunToken", "split_run_path"]

PREFIX = "/run/"


@dataclass(frozen=True)
class RunToken:
    scenario: str
    seed: int
    run_id: str

    def encode(self) -> str:
        raw = json.dumps([self.scenario, self.seed, self.run_id], separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> RunToken | None:
        """The token's run, or None when it is not one evalkit wrote."""
        try:
            data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        except (ValueError, binascii.Error):
            return None
        if not (isinstance(data, list) and len(data) == 3):
            return None
        scenario, seed, run_id = data
        if not (isinstance(scenario, str) and type(seed) is int and isinstance(run_id, str)):
            return None
        return cls(scenario, seed, run_id)

    def path(self) -> str:
        """The path prefix of this run's URLs (its model base URL is this plus `/v1`)."""
        return f"{PREFIX}{self.encode()}"

    def headers(self) -> dict[str, str]:
        """The token as the headers evalkit sends itself (lower-case, as the wire readers take them)."""
        return {"x-evalkit-seed": str(self.seed), "x-evalkit-scenario": self.scenario, "x-evalkit-run": self.run_id}


def split_run_path(path: str) -> tuple[str | None, str]:
    """(token, the rest of the path) of `/run/<token>/...`; (None, path) for any other path."""
    if not path.startswith(PREFIX):
        return None, path
    token, slash, rest = path[len(PREFIX) :].partition("/")
    return (token, slash + rest) if token else (None, path)
