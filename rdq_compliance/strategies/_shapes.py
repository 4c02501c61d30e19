"""Long values in the shapes production systems give them (issue 22 §1).

C4 sets no length limit on free text; these are the values that break a column sized
for "a version" or "a type name": a bearer JWT, W3C trace context and baggage, a
cookie, MIME types with parameters, JVM lambda and coroutine class names, Go's ``%T``
of generic types, git commit ids, image digests, semver with build metadata. All are
fixed strings (deterministic, built once at import), sampled by the strategies.
"""

from __future__ import annotations

import base64
import hashlib
import json

__all__ = ["CONTENT_TYPES", "ERROR_TYPES", "HANDLER_VERSIONS", "HEADERS"]


def _hex(seed: str, nbytes: int) -> str:
    out = b""
    counter = 0
    while len(out) < nbytes:
        out += hashlib.sha256(f"{seed}/{counter}".encode()).digest()
        counter += 1
    return out[:nbytes].hex()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _jwt() -> str:
    """An RS256 bearer token with the claims an identity provider puts in (~1 KB)."""
    header = {"alg": "RS256", "typ": "JWT", "kid": _hex("kid", 20)}
    claims = {
        "iss": "https://login.example.com/realms/platform", "sub": _hex("sub", 16),
        "aud": ["orders-api", "billing-api", "account"], "exp": 1784556202,
        "iat": 1784552602, "azp": "rdq-worker", "scope": "openid profile email orders:write",
        "realm_access": {"roles": ["offline_access", "uma_authorization", "orders-admin"]},
        "email": "svc-orders-worker@example.com", "sid": _hex("sid", 16),
    }
    parts = [json.dumps(header, separators=(",", ":")), json.dumps(claims, separators=(",", ":"))]
    signature = bytes.fromhex(_hex("sig", 256))  # a 2048-bit RSA signature
    return ".".join([*(_b64url(p.encode()) for p in parts), _b64url(signature)])


_TRACE_ID = _hex("trace", 16)
_TRACESTATE = ",".join(  # the 32 list members W3C allows, vendor@tenant keys
    f"v{i:02d}@t{_hex(f'tenant{i}', 4)}={_hex(f'state{i}', 8)}" for i in range(32)
)
_BAGGAGE = ",".join(
    f"app.k{i:02d}={_hex(f'baggage{i}', 12)};ttl=300" for i in range(40)
)  # about 2 KB of W3C baggage (the spec allows 8,192 bytes)
_COOKIE = "; ".join(
    [f"session={_b64url(bytes.fromhex(_hex('session', 180)))}",
     f"_ga=GA1.2.{int(_hex('ga', 4), 16)}.1784552602", "consent=analytics%3Dno%7Cads%3Dno",
     *(f"ab_{i}={_hex(f'ab{i}', 10)}" for i in range(12))]
)

HEADERS: tuple[tuple[str, str], ...] = (
    ("authorization", f"Bearer {_jwt()}"),
    ("traceparent", f"00-{_TRACE_ID}-{_hex('span', 8)}-01"),
    ("tracestate", _TRACESTATE),
    ("baggage", _BAGGAGE),
    ("cookie", _COOKIE),
    ("x-amzn-trace-id", f"Root=1-6699f3a2-{_hex('amzn', 12)};Parent={_hex('p', 8)};Sampled=1"),
)
"""Header pairs as HTTP gateways and tracing SDKs copy them into a task: a bearer JWT,
W3C ``traceparent``/``tracestate`` (32 members)/``baggage``, a cookie jar."""

CONTENT_TYPES: tuple[str, ...] = (
    "application/json; charset=utf-8; profile=\"https://schemas.example.com/orders/v2/"
    "order-created.schema.json\"",
    "multipart/form-data; boundary=----WebKitFormBoundary" + _hex("boundary", 8),
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.kafka.avro.v2+json; schema.id=1034; subject=\"orders.order-created-"
    "value\"; charset=utf-8",
    "text/plain; format=flowed; delsp=yes; charset=\"ISO-8859-1\"",
    "application/cloudevents+json; charset=UTF-8; type=\"com.example.orders.order.created."
    "v2\"; source=\"https://orders.example.com/api/v2/orders\"; dataschema=\"https://schemas"
    ".example.com/orders/v2/order-created.schema.json\"",
)
"""MIME types with parameters: RFC 6906 profiles, multipart boundaries, vendor types."""

ERROR_TYPES: tuple[str, ...] = (
    "com.example.orders.OrderService$$Lambda$1234/0x0000000800c4b840",
    "com.example.billing.settlement.internal.reconciliation.SettlementBatchProcessor"
    "$reconcileSettlementBatches$2$1$invokeSuspend$$inlined$flatMapConcat$1$2$emit$1"
    "$SettlementCoroutineContextElement$Key$$inlined$CoroutineExceptionHandler$1"
    "$$Lambda$8392/0x00000008017c2e40",
    "kotlinx.coroutines.flow.internal.ChildCancelledException",
    "org.springframework.transaction.CannotCreateTransactionException",
    "*github.com/example/platform/internal/queue.Envelope[github.com/example/platform/"
    "internal/payments.SettlementInstruction,map[string]github.com/example/platform/pkg/"
    "money.Amount]",
    "*fmt.wrapErrors",
    "github.com/example/platform/pkg/retry.PermanentError[*github.com/example/platform/"
    "internal/ledger.PostingConflict[github.com/example/platform/pkg/ids.ULID,github.com/"
    "example/platform/internal/ledger.Entry[github.com/example/platform/pkg/money."
    "Amount]]]",
)
"""``error.type`` as the SDKs report it: JVM lambda and coroutine class names (over 255
bytes), Kotlin and Spring exceptions, Go's ``%T`` of generic types."""

HANDLER_VERSIONS: tuple[str, ...] = (
    _hex("commit", 20),  # a git commit id (SHA-1)
    _hex("commit256", 32),  # a SHA-256 repository's commit id
    f"registry.example.com/platform/orders-worker@sha256:{_hex('image', 32)}",
    f"2.14.0-rc.3+build.20260720.{_hex('build', 6)}.linux.amd64",
    f"v0.0.0-20260720140322-{_hex('pseudo', 6)}",  # a Go pseudo-version
    f"orders-worker:3.2.1-jdk21-{_hex('tag', 20)}",
)
"""``handler_version`` as deployments set it: commit ids, image digests, semver with
build metadata, Go pseudo-versions."""
