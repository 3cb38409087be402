"""Who may write what into the audit trail through RecordAuditEvent (pure; docs/history.md "Audit trail").

The trail is append-only and its entries cannot be forged:

- each writer records only its own kinds (`WRITERS`); the kinds the history service writes itself
  (fair-play cases, holds and their resolution) are nobody else's;
- the actor recorded is the caller's verified identity: `service:<name>` for a service token, the
  subject for an admin; the request's `actor` may only repeat it;
- a writer's event ids live in its own namespace: stored as `<namespace>/<event_id>` (`service:table/…`,
  `admin:<subject>/…`), so no writer can take another's id, nor one of the ids the history service
  derives for its own events (`hold:…`, `auto-hold:…`, `case-opened:…`, …, none of which contains a
  namespace's `service:` or `admin:` before its first `/`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from service_runtime.auth import ServiceName
from service_runtime.errors import InvalidArgument, PermissionDenied

# Written by the history service itself (fair_play_cases.py, holds.py), never through RecordAuditEvent.
HISTORY_KINDS = frozenset(
    {"FAIR_PLAY_CASE_OPENED", "PLAYER_HELD", "PLAYER_RELEASED", "FAIR_PLAY_CASE_RESOLVED"}
)
# The services that record events, each with its kinds (history.proto, AuditEvent.kind): table shards
# the hands they void, the settlements that failed and the suspicious play they see; the lobby the
# operators' maintenance switches. A new kind is a line here and in docs/history.md.
SERVICE_KINDS: dict[ServiceName, frozenset[str]] = {
    ServiceName.TABLE: frozenset({"HAND_VOIDED", "SETTLEMENT_FAILED", "SUSPICIOUS_PLAY"}),
    ServiceName.LOBBY: frozenset({"MAINTENANCE_SET"}),
}
# Admins record by hand what they did outside the platform's RPCs: any kind with this prefix.
ADMIN_KIND_PREFIX = "OPERATOR_"
# A writer's own id; with its namespace the stored id fits the 128 characters of the column.
MAX_EVENT_ID_LENGTH = 64
# An admin subject shown as it is in the namespace; any other is shown as a digest of it.
_PLAIN_SUBJECT = re.compile(r"[A-Za-z0-9._@-]{1,56}")


@dataclass(frozen=True)
class AuditWriter:
    """One caller of RecordAuditEvent: who it is recorded as, where its ids live, what it may record."""

    actor: str
    namespace: str
    kinds: frozenset[str] = frozenset()
    kind_prefix: str = ""

    def may_record(self, kind: str) -> bool:
        if kind in HISTORY_KINDS:
            return False
        return kind in self.kinds or bool(self.kind_prefix and kind.startswith(self.kind_prefix))

    def stored_id(self, event_id: str) -> str:
        return f"{self.namespace}/{event_id}"


def writer_of(subject: str, *, service: ServiceName | None, admin: bool) -> AuditWriter | None:
    """The writer a verified caller is (None: it may record nothing). A service token of a service
    that records events writes as that service; an admin as themselves."""
    if service is not None and service in SERVICE_KINDS:
        name = f"service:{service.value}"
        return AuditWriter(actor=name, namespace=name, kinds=SERVICE_KINDS[service])
    if admin:
        shown = (
            subject
            if _PLAIN_SUBJECT.fullmatch(subject)
            else hashlib.sha256(subject.encode()).hexdigest()[:32]
        )
        separator = ":" if shown == subject else "#"
        return AuditWriter(actor=subject, namespace=f"admin{separator}{shown}", kind_prefix=ADMIN_KIND_PREFIX)
    return None


def check_writer(writer: AuditWriter | None, event_id: str, kind: str, actor: str) -> AuditWriter:
    """The caller may record this event: its own kind, as itself, with an id of its own size. The
    fields' formats are checked before (`records.check_id`, `check_code`)."""
    if writer is None or not writer.may_record(kind):
        raise PermissionDenied(
            "ROLE_REQUIRED",
            "this caller does not record events of this kind (each writer records its own kinds; "
            "history writes its own)",
            {"field": "event.kind"},
        )
    if actor and actor != writer.actor:
        raise PermissionDenied(
            "NOT_YOUR_RESOURCE",
            f"the actor is the caller's verified identity ({writer.actor}); leave it empty",
            {"field": "event.actor"},
        )
    if len(event_id) > MAX_EVENT_ID_LENGTH:
        raise InvalidArgument(
            "FIELD_INVALID",
            f"event.event_id is 1-{MAX_EVENT_ID_LENGTH} printable ASCII characters without spaces",
            {"field": "event.event_id"},
        )
    return writer
