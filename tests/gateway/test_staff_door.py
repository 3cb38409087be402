"""The staff's front door (issue 38, docs/backoffice.md): a listener of its own beside the players'
address, staff sign-in from the Telegram Login Widget (or a listed development name) for the people
the staff allow-list names, short staff tokens naming their roles, each call's role checked at the
door, every change said why, and every staff action in history's audit trail, as real processes:
the five services and the gateway, called over raw Connect HTTP as a browser would."""

from __future__ import annotations

import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from poker.cashier.v1 import cashier_pb2
from poker.common.v1 import common_pb2
from poker.gateway.v1 import gateway_pb2, staff_pb2
from poker.history.v1 import history_pb2
from poker.lobby.v1 import lobby_pb2
from service_runtime.auth import STAFF_ROLES, TokenKeys, verify_token
from service_runtime.service_settings import DEV_KEY_ID, DEV_SIGNING_KEY
from service_runtime.testing import auth_metadata
from tests.gateway.connect_http import Outcome, call
from tests.gateway.gateway_process import running_gateway, staff_address_of
from tests.gateway.telegram_login_signing import signed_login
from tests.security.service_processes import ServiceProcess, running_services

BOT_TOKEN = "123456789:TEST-bot-token-for-the-gateway-tests-only"
STAFF_LIST = (
    "1001=olga:operations+support;1002=rita:risk;1003=fedor:finance;1004=fiona:finance;1005=adam:admin"
)
KEYS = TokenKeys.from_settings([f"{DEV_KEY_ID}:{DEV_SIGNING_KEY}"])
STAFF = "/poker.gateway.v1.StaffGatewayService"
LOBBY = "/poker.lobby.v1.LobbyService"
HISTORY = "/poker.history.v1.HistoryService"
CASHIER = "/poker.cashier.v1.CashierService"


@dataclass
class Doors:
    services: dict[str, ServiceProcess]
    gateway: ServiceProcess
    staff: str  # the staff door's host:port
    players: str  # the players' door's host:port


@pytest.fixture(scope="module")
def doors(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Doors]:
    with (
        running_services(tmp_path_factory.mktemp("staff-door")) as services,
        running_gateway(
            services,
            {
                "POKER_GATEWAY_TELEGRAM_BOT_TOKEN": BOT_TOKEN,
                "POKER_GATEWAY_STAFF_PORT": "0",
                "POKER_GATEWAY_STAFF_ALLOW_LIST": STAFF_LIST,
                "POKER_GATEWAY_STAFF_BOT_USERNAME": "poker_staff_bot",
                "POKER_GATEWAY_SIGN_INS_PER_MINUTE_PER_ADDRESS": "600",
            },
        ) as gateway,
    ):
        yield Doors(services, gateway, staff_address_of(gateway), gateway.address)


def staff_call(
    doors: Doors, path: str, message: object, *, token: str = "", why: str = "", address: str = ""
) -> Outcome:
    headers = {"x-staff-reason": urllib.parse.quote(why)} if why else {}
    return call(address or doors.staff, path, message.SerializeToString(), token=token, headers=headers)  # type: ignore[attr-defined]


def sign_in(doors: Doors, name: str) -> staff_pb2.StaffSession:
    outcome = staff_call(doors, f"{STAFF}/StaffSignIn", staff_pb2.StaffSignInRequest(development_name=name))
    assert outcome.code == "ok", outcome.label
    return staff_pb2.StaffSignInResponse.FromString(outcome.body).session


def trail(doors: Doors, **filters: str) -> list[history_pb2.AuditEvent]:
    import grpc

    from poker.history.v1 import history_pb2_grpc

    channel = grpc.insecure_channel(doors.services["history"].address)
    try:
        stub = history_pb2_grpc.HistoryServiceStub(channel)
        reply = stub.ListAuditEvents(
            history_pb2.ListAuditEventsRequest(page=common_pb2.PageRequest(page_size=200), **filters),
            metadata=auth_metadata("auditor", *STAFF_ROLES),
            timeout=10,
        )
        return list(reply.events)
    finally:
        channel.close()


def staff_actions(doors: Doors, actor: str) -> list[history_pb2.AuditEvent]:
    return trail(doors, actor=actor, kind="STAFF_ACTION")


def test_the_staff_door_is_its_own_listener_with_its_own_page(doors: Doors) -> None:
    assert doors.staff != doors.players
    with urllib.request.urlopen(f"http://{doors.staff}/", timeout=5) as page:
        policy = page.headers["content-security-policy"]
        assert "https://telegram.org" in policy
        assert "frame-ancestors 'none'" in policy
    # The players' address serves none of the staff's methods, and no file of the console.
    outcome = staff_call(
        doors,
        f"{STAFF}/StaffSignIn",
        staff_pb2.StaffSignInRequest(development_name="rita"),
        address=doors.players,
    )
    assert outcome.http_status == 404
    for path in ("/staff/index.html", "/staff/app.js"):
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://{doors.players}{path}", timeout=5)
        assert missing.value.code == 404


def test_options_and_development_sign_in_name_the_listed_roles_in_a_short_token(doors: Doors) -> None:
    options = staff_call(doors, f"{STAFF}/GetStaffSignInOptions", staff_pb2.GetStaffSignInOptionsRequest())
    reply = staff_pb2.GetStaffSignInOptionsResponse.FromString(options.body)
    assert (reply.telegram_bot_username, reply.development, reply.token_ttl_seconds) == (
        "poker_staff_bot",
        True,
        900,
    )
    session = sign_in(doors, "olga")
    assert (session.staff, list(session.roles)) == ("olga", ["operations", "support"])
    caller = verify_token(KEYS, session.token, now=int(time.time()))
    assert caller.subject == "olga"
    assert {r.value for r in caller.roles} == {"operations", "support"}
    assert caller.expires_at - int(time.time()) <= 900
    for name, reason in (("nobody", "STAFF_NOT_LISTED"), ("", "FIELD_INVALID")):
        outcome = staff_call(
            doors, f"{STAFF}/StaffSignIn", staff_pb2.StaffSignInRequest(development_name=name)
        )
        assert outcome.reason == reason, outcome.label
    renewed = staff_call(
        doors, f"{STAFF}/RenewStaffToken", staff_pb2.RenewStaffTokenRequest(), token=session.token
    )
    assert renewed.code == "ok", renewed.label
    again = staff_pb2.RenewStaffTokenResponse.FromString(renewed.body).session
    assert again.session_end_time == session.session_end_time
    assert list(again.roles) == list(session.roles)


def test_telegram_login_widget_sign_in_for_listed_people_once(doors: Doors) -> None:
    now = int(time.time())
    login = signed_login(BOT_TOKEN, telegram_id=1002, first_name="Rita", auth_date=now)
    outcome = staff_call(doors, f"{STAFF}/StaffSignIn", staff_pb2.StaffSignInRequest(telegram_login=login))
    assert outcome.code == "ok", outcome.label
    assert staff_pb2.StaffSignInResponse.FromString(outcome.body).session.staff == "rita"
    # The same login again (replayed), an unlisted account, a forged hash, an old login.
    replayed = staff_call(doors, f"{STAFF}/StaffSignIn", staff_pb2.StaffSignInRequest(telegram_login=login))
    assert replayed.reason == "LOGIN_DATA_EXPIRED"
    stranger = signed_login(BOT_TOKEN, telegram_id=42, first_name="Eve", auth_date=now)
    assert (
        staff_call(
            doors, f"{STAFF}/StaffSignIn", staff_pb2.StaffSignInRequest(telegram_login=stranger)
        ).reason
        == "STAFF_NOT_LISTED"
    )
    forged = signed_login(
        "987654321:another-bot-token-not-ours-at-all", telegram_id=1002, first_name="R", auth_date=now
    )
    assert (
        staff_call(doors, f"{STAFF}/StaffSignIn", staff_pb2.StaffSignInRequest(telegram_login=forged)).reason
        == "LOGIN_DATA_INVALID"
    )
    old = signed_login(BOT_TOKEN, telegram_id=1002, first_name="Rita", auth_date=now - 3600)
    assert (
        staff_call(doors, f"{STAFF}/StaffSignIn", staff_pb2.StaffSignInRequest(telegram_login=old)).reason
        == "LOGIN_DATA_EXPIRED"
    )


def test_only_staff_tokens_pass_and_each_role_only_to_its_calls(doors: Doors) -> None:
    player = call(
        doors.players,
        "/poker.gateway.v1.GatewayService/SignIn",
        gateway_pb2.SignInRequest(development_name="stafftester", device_id="d1").SerializeToString(),
    )
    player_token = gateway_pb2.SignInResponse.FromString(player.body).session.token
    rooms = lobby_pb2.ListRoomsRequest()
    assert staff_call(doors, f"{LOBBY}/ListRooms", rooms, token=player_token).reason == "ROLE_REQUIRED"
    assert staff_call(doors, f"{LOBBY}/ListRooms", rooms).reason == "TOKEN_MISSING"
    rita = sign_in(doors, "rita")
    # A staff token at the players' address is refused there (players only).
    assert (
        call(doors.players, f"{LOBBY}/ListRooms", rooms.SerializeToString(), token=rita.token).reason
        == "ROLE_REQUIRED"
    )
    assert staff_call(doors, f"{LOBBY}/ListRooms", rooms, token=rita.token).code == "ok"
    # risk does not fund the house: refused at the door, and recorded.
    funding = cashier_pb2.RequestHouseFundingRequest(
        request_id=f"f-{uuid.uuid4().hex[:8]}", pool=common_pb2.CHIP_POOL_GRAM, amount=1000, reason="test"
    )
    refused = staff_call(doors, f"{CASHIER}/RequestHouseFunding", funding, token=rita.token, why="trying")
    assert refused.reason == "ROLE_REQUIRED"
    recorded = staff_actions(doors, "rita")
    assert any(
        e.staff_action.method.endswith("RequestHouseFunding") and e.staff_action.reason == "ROLE_REQUIRED"
        for e in recorded
    )


def test_every_change_says_why_and_is_recorded_with_who_what_and_the_answer(doors: Doors) -> None:
    fedor, fiona = sign_in(doors, "fedor"), sign_in(doors, "fiona")
    request_id = f"fund-{uuid.uuid4().hex[:8]}"
    funding = cashier_pb2.RequestHouseFundingRequest(
        request_id=request_id,
        pool=common_pb2.CHIP_POOL_GRAM,
        account=cashier_pb2.HOUSE_ACCOUNT_BANK,
        amount=5000,
        reason="monthly float",
    )
    unsaid = staff_call(doors, f"{CASHIER}/RequestHouseFunding", funding, token=fedor.token)
    assert unsaid.reason == "STAFF_REASON_REQUIRED"
    asked = staff_call(
        doors, f"{CASHIER}/RequestHouseFunding", funding, token=fedor.token, why="Пополнение банка: план"
    )
    assert asked.code == "ok", asked.label
    own = cashier_pb2.DecideHouseFundingRequest(
        decision_id=f"d-{uuid.uuid4().hex[:8]}", request_id=request_id, approve=True, reason="mine"
    )
    assert staff_call(doors, f"{CASHIER}/DecideHouseFunding", own, token=fedor.token, why="x").reason == (
        "FOUR_EYES_REQUIRED"
    )
    decision = cashier_pb2.DecideHouseFundingRequest(
        decision_id=f"d-{uuid.uuid4().hex[:8]}", request_id=request_id, approve=True, reason="checked"
    )
    approved = staff_call(
        doors, f"{CASHIER}/DecideHouseFunding", decision, token=fiona.token, why="checked the plan"
    )
    assert approved.code == "ok", approved.label
    by_fedor = staff_actions(doors, "fedor")
    methods = [
        (e.staff_action.method, e.staff_action.code, e.staff_action.reason, e.staff_action.why)
        for e in by_fedor
    ]
    assert (
        "poker.cashier.v1.CashierService/RequestHouseFunding",
        "OK",
        "",
        "Пополнение банка: план",
    ) in methods
    assert (
        "poker.cashier.v1.CashierService/RequestHouseFunding",
        "INVALID_ARGUMENT",
        "STAFF_REASON_REQUIRED",
        "",
    ) in methods
    assert (
        "poker.cashier.v1.CashierService/DecideHouseFunding",
        "PERMISSION_DENIED",
        "FOUR_EYES_REQUIRED",
        "x",
    ) in methods
    fiona_decisions = [
        e for e in staff_actions(doors, "fiona") if e.staff_action.method.endswith("DecideHouseFunding")
    ]
    # Every change is in the trail before it happens (ASKED, written before the call goes on), and
    # again with its answer: the same request id, newest first.
    assert [e.staff_action.code for e in fiona_decisions] == ["OK", "ASKED"]
    assert {e.staff_action.request_id for e in fiona_decisions} == {decision.decision_id}
    assert fiona_decisions[1].time.ToNanoseconds() <= fiona_decisions[0].time.ToNanoseconds()
    fiona_decision = fiona_decisions[0]
    assert list(fiona_decision.staff_action.roles) == ["finance"]
    assert fiona_decision.staff_action.mutating
    assert fiona_decision.staff_action.request_id == decision.decision_id
    assert fiona_decision.event_id.startswith("service:gateway/")
    # Sign-ins are recorded; a read of aggregates is not, a read of one player's data is.
    assert any(e.staff_action.method.endswith("StaffSignIn") for e in by_fedor)
    olga = sign_in(doors, "olga")
    staff_call(doors, f"{LOBBY}/ListRooms", lobby_pb2.ListRoomsRequest(), token=olga.token)
    balances = cashier_pb2.GetBalancesRequest(player_id="tg:777")
    staff_call(doors, f"{CASHIER}/GetBalances", balances, token=olga.token, why="player asked about a payout")
    by_olga = staff_actions(doors, "olga")
    assert not any(e.staff_action.method.endswith("ListRooms") for e in by_olga)
    (read,) = [e for e in by_olga if e.staff_action.method.endswith("GetBalances")]
    assert list(read.player_ids) == ["tg:777"]
    assert read.staff_action.why == "player asked about a payout"
    assert not read.staff_action.mutating


def test_a_reason_header_that_is_not_text_is_refused(doors: Doors) -> None:
    olga = sign_in(doors, "olga")
    bad = call(
        doors.staff,
        f"{LOBBY}/ListRooms",
        lobby_pb2.ListRoomsRequest().SerializeToString(),
        token=olga.token,
        headers={"x-staff-reason": "%FF%FE"},
    )
    assert bad.reason == "FIELD_INVALID"
    long = staff_call(
        doors, f"{LOBBY}/ListRooms", lobby_pb2.ListRoomsRequest(), token=olga.token, why="x" * 501
    )
    assert long.reason == "FIELD_INVALID"
    # Not percent-encoding: a `%` that is no escape, raw bytes (found by a tester: kept literally).
    for raw in ("%ZZbad", "50%", "caf\u00e9"):
        bad = call(
            doors.staff,
            f"{LOBBY}/ListRooms",
            lobby_pb2.ListRoomsRequest().SerializeToString(),
            token=olga.token,
            headers={"x-staff-reason": raw},
        )
        assert bad.reason in ("FIELD_INVALID", "HEADER_INVALID"), (raw, bad.label)
    # A refused change is recorded with what it named.
    funding = cashier_pb2.DecideHouseFundingRequest(
        decision_id="d-targets", request_id="funding-named", approve=True, reason="x"
    )
    refused = call(
        doors.staff,
        f"{CASHIER}/DecideHouseFunding",
        funding.SerializeToString(),
        token=sign_in(doors, "fiona").token,
        headers={"x-staff-reason": "%ZZ"},
    )
    assert refused.reason == "FIELD_INVALID"
    (event,) = [
        e
        for e in staff_actions(doors, "fiona")
        if e.staff_action.request_id == "d-targets" and e.staff_action.code != "ASKED"
    ]
    assert (event.subject, event.staff_action.reason) == ("funding-named", "FIELD_INVALID")


def test_alerts_say_when_no_prometheus_is_configured(doors: Doors) -> None:
    adam = sign_in(doors, "adam")
    outcome = staff_call(
        doors, f"{STAFF}/ListFiringAlerts", staff_pb2.ListFiringAlertsRequest(), token=adam.token
    )
    assert outcome.code == "ok", outcome.label
    assert not staff_pb2.ListFiringAlertsResponse.FromString(outcome.body).configured


def test_staff_watch_a_table_through_the_door_and_the_lobby_routes_them_to_watch_only(doors: Doors) -> None:
    from poker.table.v1 import table_pb2

    olga = sign_in(doors, "olga")
    rooms = lobby_pb2.ListRoomsResponse.FromString(
        staff_call(doors, f"{LOBBY}/ListRooms", lobby_pb2.ListRoomsRequest(), token=olga.token).body
    )
    room = next(r for r in rooms.rooms if r.room_id == "nlhe-gram-classic")
    snapshot = staff_call(
        doors,
        "/poker.table.v1.TableService/GetTableSnapshot",
        table_pb2.GetTableSnapshotRequest(table_id=f"{room.room_id}.1"),
        token=olga.token,
    )
    assert snapshot.code == "ok", snapshot.label
    # Staff take no seat: the lobby sends them nowhere but to watch a table they name.
    for request, field in (
        (lobby_pb2.JoinTableRequest(room_id=room.room_id), "spectate"),
        (lobby_pb2.JoinTableRequest(room_id=room.room_id, spectate=True), "table_id"),
    ):
        import grpc

        from poker.lobby.v1 import lobby_pb2_grpc
        from service_runtime.clients import error_metadata_of
        from service_runtime.testing import reason_of

        channel = grpc.insecure_channel(doors.services["lobby"].address)
        try:
            with pytest.raises(grpc.RpcError) as refused:
                lobby_pb2_grpc.LobbyServiceStub(channel).JoinTable(
                    request, metadata=auth_metadata("olga", "operations"), timeout=10
                )
        finally:
            channel.close()
        assert reason_of(refused.value) == "FIELD_INVALID"  # type: ignore[arg-type]
        assert error_metadata_of(refused.value)["field"] == field  # type: ignore[arg-type]


def test_signing_out_ends_every_token_of_the_staff_session_and_is_recorded(doors: Doors) -> None:
    adam = sign_in(doors, "adam")
    renewed = staff_pb2.RenewStaffTokenResponse.FromString(
        staff_call(
            doors, f"{STAFF}/RenewStaffToken", staff_pb2.RenewStaffTokenRequest(), token=adam.token
        ).body
    ).session
    out = staff_call(doors, f"{STAFF}/StaffSignOut", staff_pb2.StaffSignOutRequest(), token=renewed.token)
    assert out.code == "ok", out.label
    for token in (adam.token, renewed.token):
        refused = staff_call(doors, f"{LOBBY}/ListRooms", lobby_pb2.ListRoomsRequest(), token=token)
        assert refused.reason == "SESSION_REVOKED", refused.label
    assert any(e.staff_action.method.endswith("StaffSignOut") for e in staff_actions(doors, "adam"))
    # A new sign-in is a new session.
    again = sign_in(doors, "adam")
    assert (
        staff_call(doors, f"{LOBBY}/ListRooms", lobby_pb2.ListRoomsRequest(), token=again.token).code == "ok"
    )


def test_a_release_decided_through_the_door_is_recorded_with_the_player_it_released(doors: Doors) -> None:
    rita, fiona = sign_in(doors, "rita"), sign_in(doors, "fiona")
    player = f"tg:{uuid.uuid4().int % 10**9}"
    held = staff_call(
        doors,
        f"{HISTORY}/HoldPlayer",
        history_pb2.HoldPlayerRequest(request_id=f"h-{player[3:]}", player_id=player, reason="review"),
        token=rita.token,
        why="dumping review",
    )
    assert held.code == "ok", held.label
    asked = staff_call(
        doors,
        f"{HISTORY}/ReleasePlayer",
        history_pb2.ReleasePlayerRequest(request_id=f"r-{player[3:]}", player_id=player, reason="cleared"),
        token=rita.token,
        why="cleared after review",
    )
    assert asked.code == "ok", asked.label
    decision = history_pb2.DecideReleaseRequest(
        decision_id=f"d-{player[3:]}", request_id=f"r-{player[3:]}", approve=True, reason="checked"
    )
    decided = staff_call(
        doors, f"{HISTORY}/DecideRelease", decision, token=fiona.token, why="checked the case"
    )
    assert decided.code == "ok", decided.label
    (event,) = [
        e
        for e in staff_actions(doors, "fiona")
        if e.staff_action.request_id == f"d-{player[3:]}" and e.staff_action.code == "OK"
    ]
    assert list(event.player_ids) == [player]
    assert event.subject == player


def test_a_reason_that_shows_nothing_is_no_reason() -> None:
    """Found by an outside tester: `x-staff-reason: %E3%85%A4` (U+3164, a Hangul filler) or
    `%E2%A0%80` (U+2800, a blank Braille pattern) passed as a change's reason though it shows
    nothing; such words are no reason (the door then refuses the change, STAFF_REASON_REQUIRED)."""
    from services.gateway.staff_door import reason_of_header

    for blank in ("\u3164", "\u2800", "\u3164 \u2800", "\u115f\u1160", "\uffa0", " \u3164 "):
        assert reason_of_header({"x-staff-reason": urllib.parse.quote(blank)}) == "", repr(blank)
    assert reason_of_header({"x-staff-reason": urllib.parse.quote("\u3164 причина")}) == "\u3164 причина"
    assert reason_of_header({"x-staff-reason": urllib.parse.quote("план")}) == "план"


def test_a_change_the_trail_cannot_record_first_is_refused_and_changes_nothing(doors: Doors) -> None:
    """Every staff change is in the audit trail before it happens: a staff door whose history is
    away refuses a change UNAVAILABLE (nothing forwarded, nothing changed; the console's retry goes
    through once history is back) and still serves reads (found by an outside review: the door
    answered a change OK and kept its record in memory, lost if the gateway died)."""
    from tests.ports import free_port

    env = {
        "POKER_GATEWAY_TELEGRAM_BOT_TOKEN": BOT_TOKEN,
        "POKER_GATEWAY_STAFF_PORT": "0",
        "POKER_GATEWAY_STAFF_ALLOW_LIST": STAFF_LIST,
        "POKER_GATEWAY_STAFF_BOT_USERNAME": "poker_staff_bot",
        "POKER_GATEWAY_HISTORY_ADDRESS": f"127.0.0.1:{free_port()}",
    }
    with running_gateway(doors.services, env) as blind_gateway:
        blind = Doors(doors.services, blind_gateway, staff_address_of(blind_gateway), blind_gateway.address)
        olga = sign_in(blind, "olga")
        room = f"audit-away-{uuid.uuid4().hex[:8]}"
        change = lobby_pb2.SetMaintenanceRequest(
            request_id=f"m-{room}",
            room_id="",
            maintenance=lobby_pb2.Maintenance(message=room),  # no switch: harmless if it went through
        )
        refused = staff_call(blind, f"{LOBBY}/SetMaintenance", change, token=olga.token, why="drain")
        assert (refused.code, refused.reason) == ("unavailable", "UNAVAILABLE"), refused.label
        seen = staff_call(
            doors, f"{LOBBY}/GetMaintenance", lobby_pb2.GetMaintenanceRequest(), token=olga.token
        )
        assert seen.code == "ok", seen.label
        assert room not in lobby_pb2.GetMaintenanceResponse.FromString(seen.body).lobby.message
        read = staff_call(blind, f"{LOBBY}/ListRooms", lobby_pb2.ListRoomsRequest(), token=olga.token)
        assert read.code == "ok", read.label


def test_an_administrator_lists_a_person_from_the_console_who_then_signs_in_and_loses_it_when_taken_off(
    doors: Doors,
) -> None:
    """The staff directory (docs/backoffice.md "Adding a staff member"): adam (admin) adds a person
    through the door, with a reason; they sign in (Telegram and, here, by name) with the roles he
    gave; a role change reaches their next renewal; taken off, their renewal and sign-in are refused.
    Nobody else edits the directory, nobody their own entry, and no entry takes a name the Secret
    gives another account."""
    adam = sign_in(doors, "adam")
    tag = uuid.uuid4().hex[:6]
    telegram_id, name = 700_000 + int(tag, 16) % 100_000, f"nina-{tag}"

    def set_member(
        token: str, roles: list[str], active: bool = True, who: str = name, account: int = 0
    ) -> Outcome:
        request = history_pb2.SetStaffMemberRequest(
            request_id=uuid.uuid4().hex,
            telegram_id=account or telegram_id,
            name=who,
            roles=roles,
            active=active,
        )
        return staff_call(doors, f"{HISTORY}/SetStaffMember", request, token=token, why="new support hire")

    # Without a reason, by a role other than admin: refused, nothing listed.
    unsaid = staff_call(
        doors,
        f"{HISTORY}/SetStaffMember",
        history_pb2.SetStaffMemberRequest(
            request_id="x1", telegram_id=telegram_id, name=name, roles=["support"], active=True
        ),
        token=adam.token,
    )
    assert unsaid.reason == "STAFF_REASON_REQUIRED"
    assert set_member(sign_in(doors, "olga").token, ["support"]).reason == "ROLE_REQUIRED"
    assert (
        staff_call(doors, f"{STAFF}/StaffSignIn", staff_pb2.StaffSignInRequest(development_name=name)).reason
        == "STAFF_NOT_LISTED"
    )

    added = set_member(adam.token, ["support"])
    assert added.code == "ok", added.label
    listed = staff_call(doors, f"{HISTORY}/ListStaff", history_pb2.ListStaffRequest(), token=adam.token)
    assert name in [m.name for m in history_pb2.ListStaffResponse.FromString(listed.body).members]
    # Telegram sign-in of the listed account, then the name sign-in: the roles adam gave.
    login = signed_login(BOT_TOKEN, telegram_id=telegram_id, first_name="Nina", auth_date=int(time.time()))
    by_telegram = staff_call(
        doors, f"{STAFF}/StaffSignIn", staff_pb2.StaffSignInRequest(telegram_login=login)
    )
    assert by_telegram.code == "ok", by_telegram.label
    nina = staff_pb2.StaffSignInResponse.FromString(by_telegram.body).session
    assert (nina.staff, list(nina.roles)) == (name, ["support"])
    assert verify_token(KEYS, nina.token, now=int(time.time())).subject == name
    # Her own entry is not hers to change, even had she admin.
    assert set_member(nina.token, ["support", "finance"]).reason == "ROLE_REQUIRED"

    # A role added reaches her next renewal.
    assert set_member(adam.token, ["support", "risk"]).code == "ok"
    renewed = staff_call(
        doors, f"{STAFF}/RenewStaffToken", staff_pb2.RenewStaffTokenRequest(), token=nina.token
    )
    assert list(staff_pb2.RenewStaffTokenResponse.FromString(renewed.body).session.roles) == [
        "risk",
        "support",
    ]

    # Taken off: the renewal and a new sign-in are refused.
    assert set_member(adam.token, [], active=False).code == "ok"
    gone = staff_call(doors, f"{STAFF}/RenewStaffToken", staff_pb2.RenewStaffTokenRequest(), token=nina.token)
    assert gone.reason == "STAFF_NOT_LISTED", gone.label
    assert (
        staff_call(doors, f"{STAFF}/StaffSignIn", staff_pb2.StaffSignInRequest(development_name=name)).reason
        == "STAFF_NOT_LISTED"
    )

    # A name the directory could not hold is simply not listed (never the directory's refusal).
    for odd in ("Ольга", "service:lobby", "tg:5", "gateway"):
        refused = staff_call(
            doors, f"{STAFF}/StaffSignIn", staff_pb2.StaffSignInRequest(development_name=odd)
        )
        assert refused.reason == "STAFF_NOT_LISTED", (odd, refused.label)

    # A directory entry under a name the Secret gives another account never signs in as that name.
    shadow = set_member(adam.token, ["finance"], who="RITA", account=telegram_id + 1)
    assert shadow.code == "ok", shadow.label
    login = signed_login(BOT_TOKEN, telegram_id=telegram_id + 1, first_name="R", auth_date=int(time.time()))
    assert (
        staff_call(doors, f"{STAFF}/StaffSignIn", staff_pb2.StaffSignInRequest(telegram_login=login)).reason
        == "STAFF_NOT_LISTED"
    )
    rita = sign_in(doors, "rita")
    assert list(rita.roles) == ["risk"]

    # Every change is in the trail: adam, the method, the person, the reason.
    changes = [e for e in staff_actions(doors, "adam") if e.staff_action.method.endswith("SetStaffMember")]
    assert {e.subject for e in changes} >= {name, "RITA"}
    done = [e for e in changes if e.staff_action.code == "OK"]
    assert len(done) == 4
    assert {e.staff_action.why for e in done} == {"new support hire"}
    # The change said no reason is recorded as refused, with none.
    assert any(e.staff_action.reason == "STAFF_REASON_REQUIRED" and not e.staff_action.why for e in changes)
