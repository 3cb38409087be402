"""Which Connect methods the gateway serves, and to whom: the player's share of each service.

The gateway forwards a call only when a player may make it at the service behind (of the cashier only
the reads and the player's own self-set limits: purchases and withdrawals go through the payments
service). It sends the player's own token on,
so the service checks the same player again; everything else (admin and service RPCs, withdrawals)
is refused here with PERMISSION_DENIED ROLE_REQUIRED and never sent on. A test checks that no method
is served here that the service behind does not grant to players.
"""

from __future__ import annotations

from poker.cashier.v1 import cashier_pb2  # noqa: F401 - registers the service descriptors
from poker.fairness.v1 import fairness_pb2  # noqa: F401
from poker.gateway.v1 import gateway_pb2  # noqa: F401
from poker.history.v1 import history_pb2  # noqa: F401
from poker.lobby.v1 import lobby_pb2  # noqa: F401
from poker.table.v1 import table_pb2  # noqa: F401
from service_runtime.access import PLAYERS, AccessPolicy
from service_runtime.auth import Principal

GATEWAY_SERVICE = "poker.gateway.v1.GatewayService"
NOBODY: frozenset[Principal] = frozenset()

# Service full name -> the methods served to players through the gateway.
FORWARDED: dict[str, frozenset[str]] = {
    "poker.lobby.v1.LobbyService": frozenset(
        {
            "ListRooms",
            "GetRoom",
            "ListTables",
            "JoinTable",
            "RedeemInviteCode",
            "GetMyProfile",
            "SetDisplayName",
            "SetShowAvatar",
        }
    ),
    "poker.table.v1.TableService": frozenset(
        {
            "SitDown",
            "LeaveTable",
            "Act",
            "SitOut",
            "SitIn",
            "SetPlayerSeed",
            "SendChat",
            "WatchTable",
            "SpectateTable",
            "GetTableSnapshot",
            "PlaceHouseBets",
            "MakeHouseDecision",
        }
    ),
    # The reads of the player's own chips, and the limits the player sets on themself (responsible
    # gaming: the cashier takes the player from the token, so nobody sets another's).
    "poker.cashier.v1.CashierService": frozenset(
        {"GetBalances", "GetStatement", "GetSelfLimits", "SetSelfLimit", "SetSessionReminder", "StartBreak"}
    ),
    "poker.history.v1.HistoryService": frozenset(
        {"ListMyHands", "GetHand", "ListTableHands", "ExportHands", "ListBalanceChanges"}
    ),
    "poker.fairness.v1.FairnessService": frozenset(
        {"GetCommitment", "ListTableCommitments", "GetReveal", "VerifyHand"}
    ),
}


def _forwarded_policy(service: str, served: frozenset[str]) -> AccessPolicy:
    from google.protobuf import descriptor_pool

    methods = [m.name for m in descriptor_pool.Default().FindServiceByName(service).methods]
    return AccessPolicy.for_service(service, {m: PLAYERS if m in served else NOBODY for m in methods})


def gateway_policy() -> AccessPolicy:
    policy = AccessPolicy.for_service(
        GATEWAY_SERVICE,
        {"RenewToken": PLAYERS, "SignOut": PLAYERS, "ListPurchaseOptions": PLAYERS, "StartPurchase": PLAYERS},
        public=("GetSignInOptions", "SignIn"),
    )
    for service, served in FORWARDED.items():
        policy = policy.merged(_forwarded_policy(service, served))
    return policy


ACCESS = gateway_policy()
