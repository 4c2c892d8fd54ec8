"""Keeping secrets out of everything evalkit stores or prints.

A run knows three kinds of secret: the API key read from `api_key_env`, a `user:password@` in a
backend URL, and a credential in a URL's query string (`?key=…`, `?token=…`). Two tools cover them:

- `public_url` rewrites a URL for display: no user info, and the value of every query parameter
  whose name looks like a credential replaced by `[redacted]`. Every URL that reaches a header, an
  error text or the terminal goes through it.
- `redact` / `redact_data` blank the secret values wherever they appear in free text or in a decoded
  JSON body (a server that echoes the key in an error or even in a successful answer). The backends
  apply them to every body as it arrives, so nothing downstream (records, recordings, reports) ever
  holds the value. `secrets_of` lists the values to blank for one backend.

Values shorter than `MIN_SECRET_CHARS` are not searched for in free text (blanking every "a" would
destroy the text while protecting nothing); `public_url` still removes them from URLs.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any
from urllib.parse import SplitResult, parse_qsl, quote, unquote, urlsplit, urlunsplit

__all__ = ["MIN_SECRET_CHARS", "REDACTED", "public_config", "public_url", "redact", "redact_data", "secrets_of"]

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 4
# query parameter names that carry credentials (substring match, case-insensitive)
_SECRET_PARAMS = ("key", "token", "secret", "pass", "pwd", "sig", "auth", "cred", "session")


def _is_secret_param(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_PARAMS)


def _searchable(secrets: Iterable[str | None]) -> list[str]:
    # longest first, so a secret that contains another is blanked whole
    return sorted({s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with every secret value replaced by `[redacted]`; no secret is left in the result."""
    found = _searchable(secrets)
    for secret in found:
        if secret in text:
            text = text.replace(secret, REDACTED)
    # a secret that overlaps the marker ("ed]x" in "…ed]xx") can re-form around it: delete instead,
    # which shortens the text each time, so this ends
    while leftover := next((s for s in found if s in text), None):
        text = text.replace(leftover, "")
    return text


def redact_data(value: Any, secrets: Iterable[str | None]) -> Any:
    """A decoded JSON value with every secret blanked in its strings (keys included)."""
    found = _searchable(secrets)
    return _walk(value, found) if found else value


def _walk(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets) if any(s in value for s in secrets) else value
    if isinstance(value, dict):
        return {_walk(k, secrets): _walk(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, secrets) for v in value]
    return value


def _split(url: str) -> SplitResult | None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return None
    return parts


@lru_cache(maxsize=256)  # asked on every call of a backend, with the same URL each time
def secrets_of(url: str | None, api_key: str | None = None) -> tuple[str, ...]:
    """The values to blank for a backend: its key, its URL's password, its query credentials."""
    found: list[str] = [api_key] if api_key else []
    if not url:
        return tuple(found)
    parts = _split(url)
    if parts is None:  # unparseable: anything after a scheme's '//' and before '@' may be a credential
        head = url.split("//", 1)[-1]
        if "@" in head:
            found.extend(head.rsplit("@", 1)[0].split(":", 1)[1:])
        return tuple(found)
    if parts.password:  # the user name alone is no secret, and blanking a word like "admin" would alter replies
        found.extend({parts.password, unquote(parts.password)})
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if _is_secret_param(name) and value:
            found.extend({value, quote(value, safe="")})
    return tuple(found)


def public_url(url: str) -> str:
    """`url` fit to store or print: no user info, credential query values blanked."""
    parts = _split(url)
    if parts is None:
        return redact(url, secrets_of(url))
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = parts.query
    if query:
        pairs = [p.split("=", 1) for p in query.split("&")]
        query = "&".join(
            p[0] + ("=" + (REDACTED if _is_secret_param(unquote(p[0])) else p[1]) if len(p) > 1 else "") for p in pairs
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def public_config(config: dict[str, Any]) -> dict[str, Any]:
    """A dumped run config fit for a results header: every backend's `url` through `public_url`."""
    backends = config.get("backends")
    if not isinstance(backends, list):
        return config
    cleaned = [
        {**b, "url": public_url(b["url"])} if isinstance(b, dict) and isinstance(b.get("url"), str) else b
        for b in backends
    ]
    return {**config, "backends": cleaned}
