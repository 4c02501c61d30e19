"""Redis storage: one client (connection pool) per Storage, namespaces as key prefixes.

Outages (C20): a call that cannot reach the server or loses its connection
(``redis.ConnectionError``, ``redis.TimeoutError``, a server still loading its data)
raises ``StorageError(UNAVAILABLE)``; redis-py's pool connects again on the next call,
so the plugin recovers by itself once the server is back.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

import redis

from rdq_compliance import (
    NAMESPACE_PATTERN,
    Envelope,
    ErrorCode,
    StorageError,
    StorageInfo,
    StorageUnavailable,
    require_envelope_version,
)

from ._hash import envelope_from_hash, hash_from_envelope

__all__ = ["URL_ENV", "RedisAdapter", "RedisStorage", "connect", "key_prefix"]

URL_ENV = "RDQ_REDIS_URL"
SUPPORTED_VERSIONS = frozenset({1})
CONNECT_TIMEOUT_S = 3
DROP_BATCH = 500


def error_code(exc: redis.RedisError) -> ErrorCode:
    """UNAVAILABLE when the server could not be reached or went away (C20), else INTERNAL."""
    lost = isinstance(exc, redis.ConnectionError | redis.TimeoutError)
    return ErrorCode.UNAVAILABLE if lost else ErrorCode.INTERNAL


def key_prefix(namespace: str) -> bytes:
    """``rdq:<namespace>:``. A namespace has no ``:`` and no glob characters, so
    the prefix of one namespace is never a prefix of another's keys."""
    if not isinstance(namespace, str) or not NAMESPACE_PATTERN.fullmatch(namespace):
        raise ValueError(
            f"namespace={namespace!r} is not a valid namespace: expected "
            f"{NAMESPACE_PATTERN.pattern} (C14)"
        )
    return f"rdq:{namespace}:".encode()


def connect(url: str) -> redis.Redis:
    hint = f"(option url / env {URL_ENV})"
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT_S)
    except ValueError as exc:
        raise StorageUnavailable(f"the Redis url is not valid {hint}: {exc}",
                                 setting="url") from exc
    kw: dict[str, Any] = client.connection_pool.connection_kwargs
    where = (f"Redis at {kw.get('path')}" if kw.get("path")
             else f"Redis at {kw.get('host', 'localhost')}:{kw.get('port', 6379)}")
    where += f"/{kw.get('db', 0)}"
    try:
        client.ping()
    except redis.RedisError as exc:
        client.close()
        reason = str(exc).strip()
        verb = "refused the connection" if "refused" in reason.lower() else "could not be reached"
        raise StorageUnavailable(f"{where} {verb} {hint}: {reason}", setting="url") from exc
    return client


class RedisStorage:
    def __init__(self, client: redis.Redis, *, version: str) -> None:
        self._client = client
        self._info = StorageInfo(
            name="redis",
            version=version,
            envelope_versions=SUPPORTED_VERSIONS,
            # concurrent (C18): redis-py's client is thread-safe (a connection pool);
            # a write is one MULTI/EXEC and a read one HGETALL, each atomic.
            capabilities=frozenset({"durable", "concurrent"}),
        )

    @property
    def info(self) -> StorageInfo:
        return self._info

    def open(self, namespace: str) -> RedisAdapter:
        return RedisAdapter(self._client, key_prefix(namespace))

    def drop(self, namespace: str) -> None:
        # SCAN (not KEYS: it does not block the server) + UNLINK in batches; never
        # FLUSHDB, which would take every other user's keys with it (C14).
        prefix = key_prefix(namespace)
        keys = self._client.scan_iter(match=prefix + b"*", count=1000)
        try:
            while batch := list(islice(keys, DROP_BATCH)):
                self._client.unlink(*batch)
        except redis.RedisError as exc:
            raise StorageError(
                error_code(exc), f"dropping namespace={namespace!r} failed: {exc}"
            ) from exc

    def close(self) -> None:
        self._client.close()


class RedisAdapter:
    def __init__(self, client: redis.Redis, prefix: bytes) -> None:
        self._client = client
        self._prefix = prefix

    def _key(self, id: str) -> bytes:
        return self._prefix + id.encode("utf-8")

    def write(self, envelope: Envelope) -> None:
        require_envelope_version(envelope, SUPPORTED_VERSIONS)  # C16
        try:
            key = self._key(envelope.id)
            fields = hash_from_envelope(envelope)
        except (UnicodeEncodeError, ValueError, TypeError) as exc:
            raise StorageError(
                ErrorCode.INVALID_ENVELOPE,
                f"envelope id={envelope.id!r} cannot be stored: {exc}",
            ) from exc
        try:
            # MULTI/EXEC: the old hash goes and the new one arrives atomically, in
            # one round trip; no field of the earlier version survives (C13).
            pipe = self._client.pipeline(transaction=True)
            pipe.delete(key)
            pipe.hset(key, mapping=fields)  # type: ignore[arg-type]
            pipe.execute()
        except redis.RedisError as exc:
            raise StorageError(
                error_code(exc), f"writing envelope id={envelope.id!r} failed: {exc}"
            ) from exc

    def read(self, id: str) -> Envelope | None:
        try:
            key = self._key(id)
        except UnicodeEncodeError:
            return None  # no stored id holds a lone surrogate
        try:
            fields: dict[bytes, bytes] = self._client.hgetall(key)  # type: ignore[assignment]
        except redis.RedisError as exc:
            raise StorageError(
                error_code(exc), f"reading envelope id={id!r} failed: {exc}"
            ) from exc
        return envelope_from_hash(fields) if fields else None

    def close(self) -> None:
        """Nothing to release: the client belongs to the Storage."""
