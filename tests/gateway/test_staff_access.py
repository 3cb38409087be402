"""The staff door serves each staff method to exactly the staff roles the service behind grants it
(issue 38): no role the service would refuse passes the door, none it grants is refused there, and
nothing that is not a staff job (a player's, a service's) is served at the staff door at all."""

from __future__ import annotations

from service_runtime.auth import STAFF_ROLES
from services.cashier.assembly import ACCESS as CASHIER
from services.fairness.assembly import ACCESS as FAIRNESS
from services.gateway.staff_access import MUTATING, STAFF_ACCESS, STAFF_FORWARDED, STAFF_GATEWAY_SERVICE
from services.history.assembly import ACCESS as HISTORY
from services.lobby.assembly import ACCESS as LOBBY
from services.table.assembly import ACCESS as TABLE

SERVICES = (LOBBY, TABLE, CASHIER, HISTORY, FAIRNESS)
# Granted to staff at the lobby for the door's own use (it finds a viewed table's shard with the staff
# member's token), never served to the console.
DOOR_ONLY = frozenset({"/poker.lobby.v1.LobbyService/JoinTable"})


def test_each_staff_method_is_served_to_exactly_the_staff_roles_its_service_grants() -> None:
    for policy in SERVICES:
        for method, allowed in policy.roles.items():
            staff = allowed & STAFF_ROLES if method not in DOOR_ONLY else frozenset()
            assert STAFF_ACCESS.allowed_roles(method) == staff, method
    served = {f"/{service}/{m}" for service, methods in STAFF_FORWARDED.items() for m in methods}
    granted = {
        m for policy in SERVICES for m, allowed in policy.roles.items() if allowed & STAFF_ROLES
    } - DOOR_ONLY
    assert served == granted


def test_what_changes_something_is_marked_so_and_served_to_staff() -> None:
    for method in MUTATING:
        assert STAFF_ACCESS.allowed_roles(method), method
    reads = ("Get", "List", "Find", "Export", "Audit", "Verify", "Spectate", "Lookup", "Watch")
    for service, methods in STAFF_FORWARDED.items():
        for name in methods:
            full = f"/{service}/{name}"
            assert (full in MUTATING) != name.startswith(reads), full


def test_the_door_s_own_public_methods_are_only_the_sign_in_ones() -> None:
    public = {m for m in STAFF_ACCESS.public if m.startswith(f"/{STAFF_GATEWAY_SERVICE}/")}
    assert public == {
        f"/{STAFF_GATEWAY_SERVICE}/GetStaffSignInOptions",
        f"/{STAFF_GATEWAY_SERVICE}/StaffSignIn",
    }
