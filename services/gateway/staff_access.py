"""Which Connect methods the staff door serves, and to which staff roles: the staff's share of each
service (docs/backoffice.md, docs/access.md).

Each method is served to exactly the staff roles the service behind grants it (a test holds this map
to the services' own policies), so a role refused here would be refused there too: the door refuses it
first, with PERMISSION_DENIED ROLE_REQUIRED, and records the refusal. The service checks the staff
member's own token again. Nothing a player or a service does is served here, and nothing staff do is
served at the players' address (the players' door admits player tokens only).

`MUTATING` are the calls that change something: each must say why (`x-staff-reason`), and each is
recorded in the audit trail whatever its answer. Reads are recorded when they concern one person or
case (a player, a hand, a case, a name looked up: personal data), or when refused.
"""

from __future__ import annotations

from poker.gateway.v1 import staff_pb2  # noqa: F401 - registers the service descriptor
from service_runtime.access import (
    EVERY_STAFF_ROLE,
    FINANCE,
    OPERATIONS,
    RISK,
    STAFF_ADMIN,
    SUPPORT,
    AccessPolicy,
)
from service_runtime.auth import Principal
from services.gateway.access import NOBODY

STAFF_GATEWAY_SERVICE = "poker.gateway.v1.StaffGatewayService"

EVERY = EVERY_STAFF_ROLE
SUPPORT_OR_RISK = SUPPORT | RISK

# Service full name -> method -> the staff roles it is served to.
STAFF_FORWARDED: dict[str, dict[str, frozenset[Principal]]] = {
    "poker.lobby.v1.LobbyService": {
        "ListRooms": EVERY,
        "GetRoom": EVERY,
        "ListTables": EVERY,
        "GetMaintenance": EVERY,
        "FindPlayers": SUPPORT | RISK | FINANCE | OPERATIONS,
        "ListAllowList": SUPPORT | OPERATIONS,
        "CreateRoom": OPERATIONS,
        "UpdateRoom": OPERATIONS,
        "DisableRoom": OPERATIONS,
        "EnableRoom": OPERATIONS,
        "SetMaintenance": OPERATIONS,
        "UpdateAllowList": OPERATIONS,
        "CreateInviteCode": OPERATIONS,
    },
    "poker.table.v1.TableService": {
        "GetTableSnapshot": EVERY,
        "SpectateTable": EVERY,
        "MutePlayer": SUPPORT | OPERATIONS,
        "CloseTable": OPERATIONS,
    },
    "poker.cashier.v1.CashierService": {
        "GetBalances": SUPPORT | RISK | FINANCE,
        "GetStatement": SUPPORT | RISK | FINANCE,
        # Read only: the limits a player set on themself are the player's to set, never staff's.
        "GetSelfLimits": SUPPORT | RISK | FINANCE,
        "GetSeatSession": SUPPORT | FINANCE | OPERATIONS,
        "ListOpenSeatSessions": SUPPORT | FINANCE | OPERATIONS,
        "LookupTransfers": SUPPORT | FINANCE,
        "GetHouseBalances": FINANCE | OPERATIONS,
        "GetPlayFigures": EVERY,
        "AuditConservation": FINANCE,
        "RequestHouseFunding": FINANCE,
        "DecideHouseFunding": FINANCE,
        "ListHouseFunding": FINANCE,
        "ListWithdrawals": FINANCE,
    },
    "poker.history.v1.HistoryService": {
        "ListMyHands": SUPPORT_OR_RISK,
        "GetHand": SUPPORT_OR_RISK,
        "ListTableHands": SUPPORT_OR_RISK,
        "ExportHands": SUPPORT_OR_RISK,
        "ListBalanceChanges": SUPPORT | RISK | FINANCE,
        "ListAuditEvents": EVERY,
        "RecordAuditEvent": SUPPORT_OR_RISK,
        "ListCases": RISK,
        "GetCase": RISK,
        "HoldPlayer": RISK,
        "ReleasePlayer": RISK,
        "ResolveCase": RISK,
        "DecideRelease": FINANCE,
        "ListReleaseRequests": FINANCE | RISK,
        # The staff directory: the staff administrator's (FindStaffMember is the door's own read).
        "SetStaffMember": STAFF_ADMIN,
        "ListStaff": STAFF_ADMIN,
    },
    "poker.fairness.v1.FairnessService": {
        "GetCommitment": SUPPORT_OR_RISK,
        "ListTableCommitments": SUPPORT_OR_RISK,
        "GetReveal": SUPPORT_OR_RISK,
        "VerifyHand": SUPPORT_OR_RISK,
    },
}

MUTATING = frozenset(
    f"/{service}/{method}"
    for service, methods in {
        "poker.lobby.v1.LobbyService": (
            "CreateRoom", "UpdateRoom", "DisableRoom", "EnableRoom", "SetMaintenance", "UpdateAllowList",
            "CreateInviteCode",
        ),
        "poker.table.v1.TableService": ("MutePlayer", "CloseTable"),
        "poker.cashier.v1.CashierService": ("RequestHouseFunding", "DecideHouseFunding"),
        "poker.history.v1.HistoryService": (
            "RecordAuditEvent", "HoldPlayer", "ReleasePlayer", "ResolveCase", "DecideRelease",
            "SetStaffMember",
        ),
    }.items()
    for method in methods
)  # fmt: skip

# The door's own methods that are never recorded: the sign-in page's options, the renewal every few
# minutes and the dashboard's alerts (a sign-in and a sign-out are recorded, as STAFF_ACTION of
# StaffSignIn and StaffSignOut).
UNRECORDED = frozenset(
    f"/{STAFF_GATEWAY_SERVICE}/{m}"
    for m in ("GetStaffSignInOptions", "RenewStaffToken", "ListFiringAlerts", "StaffSignOut")
)
SIGN_IN = f"/{STAFF_GATEWAY_SERVICE}/StaffSignIn"
SIGN_OUT = f"/{STAFF_GATEWAY_SERVICE}/StaffSignOut"


def _forwarded_policy(service: str, served: dict[str, frozenset[Principal]]) -> AccessPolicy:
    from google.protobuf import descriptor_pool

    methods = [m.name for m in descriptor_pool.Default().FindServiceByName(service).methods]
    return AccessPolicy.for_service(service, {m: served.get(m, NOBODY) for m in methods})


def staff_policy() -> AccessPolicy:
    policy = AccessPolicy.for_service(
        STAFF_GATEWAY_SERVICE,
        {"RenewStaffToken": EVERY, "StaffSignOut": EVERY, "ListFiringAlerts": EVERY},
        public=("GetStaffSignInOptions", "StaffSignIn"),
    )
    for service, served in STAFF_FORWARDED.items():
        policy = policy.merged(_forwarded_policy(service, served))
    return policy


STAFF_ACCESS = staff_policy()
