"""Who may write what into the audit trail through RecordAuditEvent (pure; docs/history.md "Audit trail").

The trail is append-only and its entries cannot be forged:

- each writer records only its own kinds (`WRITERS`); the kinds the history service writes itself
  (fair-play cases, holds and their resolution) are nobody else's;
- the actor recorded is the caller's verified identity: `service:<name>` for a service token, the
  subject for an admin; the request's `actor` may only repeat it;
- the staff's actions (STAFF_ACTION) are written by the gateway's staff door only, which names the
  staff member it verified as the actor (a staff name, never a service's or the history's own) and
  says what they called in `staff_action`; no other event carries a `staff_action`;
- a writer's event ids live in its own namespace: stored as `<namespace>/<event_id>` (`service:table/…`,
  `admin:<subject>/…`), so no writer can take another's id, nor one of the ids the history service
  derives for its own events (`hold:…`, `auto-hold:…`, `case-opened:…`, …, none of which contains a
  namespace's `service:` or `admin:` before its first `/`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from poker.history.v1 import history_pb2
from service_runtime.auth import STAFF_ROLES, ServiceName
from service_runtime.errors import InvalidArgument, PermissionDenied
from services.history.records import check_code, check_id, check_text

# Written by the history service itself (fair_play_cases.py, holds.py), never through RecordAuditEvent.
HISTORY_KINDS = frozenset(
    {"FAIR_PLAY_CASE_OPENED", "PLAYER_HELD", "PLAYER_RELEASED", "FAIR_PLAY_CASE_RESOLVED", "RELEASE_DECIDED"}
)
# The services that record events, each with its kinds (history.proto, AuditEvent.kind): table shards
# the hands they void, the settlements that failed and the suspicious play they see; the lobby the
# operators' maintenance switches. A new kind is a line here and in docs/history.md.
STAFF_ACTION = "STAFF_ACTION"
SERVICE_KINDS: dict[ServiceName, frozenset[str]] = {
    ServiceName.TABLE: frozenset({"HAND_VOIDED", "SETTLEMENT_FAILED", "SUSPICIOUS_PLAY"}),
    ServiceName.LOBBY: frozenset({"MAINTENANCE_SET"}),
    ServiceName.GATEWAY: frozenset({STAFF_ACTION}),
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
    # The gateway's staff door: the event's actor is the staff member it names (checked), not itself.
    names_actor: bool = False
    # A service dates its own events (sent late after an outage, they keep when they happened); a
    # staff member's record takes the server's time (a time of their own would backdate or pin it).
    dates_own_events: bool = True

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
        return AuditWriter(
            actor=name,
            namespace=name,
            kinds=SERVICE_KINDS[service],
            names_actor=service is ServiceName.GATEWAY,
        )
    if admin:
        shown = (
            subject
            if _PLAIN_SUBJECT.fullmatch(subject)
            else hashlib.sha256(subject.encode()).hexdigest()[:32]
        )
        separator = ":" if shown == subject else "#"
        return AuditWriter(
            actor=subject,
            namespace=f"admin{separator}{shown}",
            kind_prefix=ADMIN_KIND_PREFIX,
            dates_own_events=False,
        )
    return None


def check_writer(
    writer: AuditWriter | None, event_id: str, kind: str, actor: str, *, staff_action: bool = False
) -> AuditWriter:
    """The caller may record this event: its own kind, as itself (the staff door: as the staff member
    it names), with an id of its own size; a `staff_action` only on a STAFF_ACTION, which has one.
    The fields' formats are checked before (`records.check_id`, `check_code`). Returns the writer
    the event is recorded as."""
    if writer is None or not writer.may_record(kind):
        raise PermissionDenied(
            "ROLE_REQUIRED",
            "this caller does not record events of this kind (each writer records its own kinds; "
            "history writes its own)",
            {"field": "event.kind"},
        )
    if staff_action != (kind == STAFF_ACTION):
        raise InvalidArgument(
            "FIELD_INVALID",
            "a STAFF_ACTION carries its staff_action, and no other event does",
            {"field": "event.staff_action"},
        )
    if writer.names_actor:
        if (
            not _PLAIN_SUBJECT.fullmatch(actor)
            or actor.startswith(("service:", "admin:", "history-"))
            or actor in {name.value for name in ServiceName}
        ):
            raise InvalidArgument(
                "FIELD_INVALID",
                "the actor of a staff action is the staff member's name (letters, digits, '.', '_', '@', '-')",
                {"field": "event.actor"},
            )
        writer = AuditWriter(actor=actor, namespace=writer.namespace, kinds=writer.kinds)
    elif actor and actor != writer.actor:
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


# A staff action's words (`why`): what the staff door takes (STAFF_REASON_MAX in the gateway).
MAX_WHY_LENGTH = 500
_METHOD = re.compile(r"[A-Za-z0-9_.]{1,100}/[A-Za-z0-9_]{1,60}")


def check_staff_action(action: history_pb2.StaffAction) -> None:
    """A STAFF_ACTION's `staff_action`: staff roles, a `service/Method`, words, a status code name."""
    field = "event.staff_action"
    staff = {role.value for role in STAFF_ROLES}
    if not action.roles or any(role not in staff for role in action.roles) or len(action.roles) > len(staff):
        raise InvalidArgument("FIELD_INVALID", "roles are staff roles", {"field": f"{field}.roles"})
    if not _METHOD.fullmatch(action.method):
        raise InvalidArgument(
            "FIELD_INVALID", "method is the called `package.Service/Method`", {"field": f"{field}.method"}
        )
    check_text(action.why, f"{field}.why", MAX_WHY_LENGTH)
    check_code(action.code, f"{field}.code")
    if action.reason:
        check_code(action.reason, f"{field}.reason")
    for name in ("room_id", "case_id", "request_id"):
        check_id(getattr(action, name), f"{field}.{name}", required=False)
