"""Keeping secrets out of everything evalkit stores or prints.

A run knows four kinds of secret: the API key read from `api_key_env`, a `user:password@` in a
backend URL, a credential in a URL's query string (`?key=…`, `?token=…`), and the values of a server
phase's `env:` (`public_config` blanks them in a header's config; the phase's log and error texts are
redacted of them as they are written: evalkit/backends/phase_supervisor.py, chain.py). Two tools
cover them:

- `public_url` rewrites a URL for display: no user info, and the value of every query parameter
  whose name looks like a credential replaced by `[redacted]`. Every URL that reaches a header, an
  error text or the terminal goes through it.
- `redact` / `redact_data` blank the secret values wherever they appear in free text or in a decoded
  JSON body (a server that echoes the key in an error or even in a successful answer). The backends
  apply them to every body as it arrives, so nothing downstream (records, recordings, reports) ever
  holds the value. `secrets_of` lists the values to blank for one backend.

Each secret is searched for in every encoding it can travel in: as is, percent-encoded (with `/`
kept or not, with `+` for spaces) and base64 (standard and URL-safe, with or without padding). A
`user:password@` is also searched for as the base64 `user:password` that httpx sends as Basic auth,
so a server echoing its request headers leaks nothing either.

Values shorter than `MIN_SECRET_CHARS` are not searched for in free text (blanking every "a" would
destroy the text while protecting nothing); `public_url` still removes them from URLs.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from functools import lru_cache
from typing import Any
from urllib.parse import SplitResult, parse_qsl, quote, quote_plus, unquote, urlsplit, urlunsplit

__all__ = [
    "MIN_SECRET_CHARS",
    "REDACTED",
    "encodings",
    "public_config",
    "public_url",
    "redact",
    "redact_data",
    "secrets_of",
]

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 4
# query parameter names that carry credentials (substring match, case-insensitive)
_SECRET_PARAMS = ("key", "token", "secret", "pass", "pwd", "sig", "auth", "cred", "session")


def _is_secret_param(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_PARAMS)


def encodings(secret: str) -> set[str]:
    """`secret` as it may appear in a URL, a header or a body: raw, percent-encoded, base64."""
    raw = secret.encode("utf-8")
    b64 = base64.b64encode(raw).decode("ascii")
    url_b64 = base64.urlsafe_b64encode(raw).decode("ascii")
    return {
        secret,
        quote(secret, safe=""),
        quote(secret),
        quote_plus(secret),
        b64,
        b64.rstrip("="),
        url_b64,
        url_b64.rstrip("="),
    }


def _basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


@lru_cache(maxsize=256)
def _expanded(secrets: frozenset[str]) -> tuple[str, ...]:
    variants = {v for s in secrets for v in encodings(s)}
    # longest first, so a secret that contains another is blanked whole
    return tuple(sorted((v for v in variants if len(v) >= MIN_SECRET_CHARS), key=len, reverse=True))


def _searchable(secrets: Iterable[str | None]) -> tuple[str, ...]:
    return _expanded(frozenset(s for s in secrets if s and len(s) >= MIN_SECRET_CHARS))


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with every secret value, in each of its `encodings`, replaced by `[redacted]`."""
    return _blank(text, _searchable(secrets))


def _blank(text: str, found: tuple[str, ...]) -> str:
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


def _walk(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return _blank(value, secrets) if any(s in value for s in secrets) else value
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
        user = parts.username or ""
        found.extend({_basic(unquote(user), unquote(parts.password)), _basic(user, parts.password)})
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if _is_secret_param(name) and value:
            found.extend({value, quote(value, safe="")})
    return tuple(found)


def public_url(url: str) -> str:
    """`url` fit to store or print: no user info, credential query values blanked, and the URL's own
    credentials blanked wherever else they appear (a password repeated in the path)."""
    parts = _split(url)
    if parts is None:
        return redact(url, secrets_of(url))
    secrets = secrets_of(url)
    # user info ends at the last "@": a password may hold one itself
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = parts.query
    # split by hand, not parsed and re-encoded: every other parameter keeps its exact spelling
    if query:
        pairs = [p.split("=", 1) for p in query.split("&")]
        query = "&".join(
            p[0] + ("=" + (REDACTED if _is_secret_param(unquote(p[0])) else p[1]) if len(p) > 1 else "") for p in pairs
        )
    path = redact(parts.path, secrets) if secrets else parts.path
    return urlunsplit((parts.scheme, netloc, path, query, parts.fragment))


def _public_urls(value: Any) -> Any:
    """Every URL in a backend entry (`url`, `urls`, `endpoints[].url`) through `public_url`."""
    if isinstance(value, str):
        return public_url(value)
    if isinstance(value, list):
        return [_public_urls(v) for v in value]
    if isinstance(value, dict):
        return {k: _public_urls(v) if k in ("url", "urls", "endpoints") else v for k, v in value.items()}
    return value


def _public_phases(serve: Any) -> Any:
    """A `serve:` with every server phase's `env:` values blanked (the names stay): a phase's
    environment is where a key it needs is given."""
    if not isinstance(serve, dict) or not isinstance(serve.get("phases"), list):
        return serve
    phases = [
        {**p, "env": {k: REDACTED for k in p["env"]}} if isinstance(p, dict) and isinstance(p.get("env"), dict) else p
        for p in serve["phases"]
    ]
    return {**serve, "phases": phases}


def _public_backend(backend: dict[str, Any]) -> dict[str, Any]:
    cleaned = {k: _public_urls(v) if k in ("url", "urls", "endpoints") else v for k, v in backend.items()}
    if "serve" in cleaned:
        cleaned["serve"] = _public_phases(cleaned["serve"])
    return cleaned


def public_config(config: dict[str, Any]) -> dict[str, Any]:
    """A dumped run config fit for a results header: every backend's URLs through `public_url`, every
    server phase's `env:` values blanked."""
    backends = config.get("backends")
    if not isinstance(backends, list):
        return config
    cleaned = [_public_backend(b) if isinstance(b, dict) else b for b in backends]
    return {**config, "backends": cleaned}
