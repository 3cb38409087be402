"""The gateway as a browser meets it, over real HTTP in front of the real services: sign-in (Telegram
initData and development), the player token it issues, and what it refuses (with the Connect code and
the catalogue's reason) while changing nothing: a player naming another player in any forwarded
request type that carries a player id is refused before the call is sent on."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from connectrpc.errors import ConnectError
from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from poker.cashier.v1 import cashier_connect, cashier_pb2
from poker.common.v1 import common_pb2
from poker.gateway.v1 import gateway_connect, gateway_pb2
from poker.lobby.v1 import lobby_connect, lobby_pb2
from poker.table.v1 import table_connect, table_pb2
from service_runtime.auth import STAFF_ROLES, Role, ServiceName, verify_token
from service_runtime.testing import DEV_KEYS, token_for
from services.gateway.access import FORWARDED
from services.gateway.connect_errors import reason_of_connect
from tests.gateway.conftest import BOT_TOKEN, Cluster
from tests.gateway.connect_http import call
from tests.gateway.gateway_process import running_gateway
from tests.gateway.telegram_signing import init_data
from tests.ports import free_port
from tests.security.service_processes import ServiceProcess

GATEWAY = "/poker.gateway.v1.GatewayService"


def _gateway(cluster: Cluster) -> gateway_connect.GatewayServiceClientSync:
    return gateway_connect.GatewayServiceClientSync(cluster.url)


def _refusal(action: object) -> tuple[str, str]:
    with pytest.raises(ConnectError) as caught:
        action()  # type: ignore[operator]
    return caught.value.code.name, reason_of_connect(caught.value)


def _sign_in(cluster: Cluster, **fields: str) -> gateway_pb2.Session:
    fields.setdefault("device_id", "device-1")
    with _gateway(cluster) as gateway:
        return gateway.sign_in(gateway_pb2.SignInRequest(**fields)).session


def _claims(token: str) -> dict[str, object]:
    payload = token.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))


def _auth(session: gateway_pb2.Session) -> dict[str, str]:
    return {"authorization": f"Bearer {session.token}"}


def test_telegram_sign_in_issues_a_short_lived_player_token_with_keyed_digest_signals(
    cluster: Cluster,
) -> None:
    session = _sign_in(cluster, telegram_init_data=init_data(BOT_TOKEN, 4242, first_name="Ann"))
    assert session.player_id == "tg:4242"
    assert session.display_name == "Ann"
    caller = verify_token(DEV_KEYS, session.token, now=int(time.time()))
    assert caller.subject == "tg:4242"
    # The name is only a suggestion for the lobby's profile (GetMyProfile), carried by the token.
    assert caller.suggested_name == "Ann"
    assert caller.roles == frozenset({Role.PLAYER})
    claims = _claims(session.token)
    assert int(claims["exp"]) - int(claims["iat"]) == 900  # type: ignore[call-overload]
    assert session.renew_time.seconds - int(claims["iat"]) == 450  # type: ignore[call-overload]
    # Digests, never the device id or the address themselves.
    assert caller.device
    assert caller.network
    for raw in ("device-1", "127.0.0", "python"):
        assert raw not in caller.device
        assert raw not in caller.network
    again = _sign_in(cluster, telegram_init_data=init_data(BOT_TOKEN, 4242, auth_date=int(time.time()) - 5))
    other_device = _sign_in(cluster, telegram_init_data=init_data(BOT_TOKEN, 4243), device_id="device-2")
    second = verify_token(DEV_KEYS, again.token, now=int(time.time()))
    third = verify_token(DEV_KEYS, other_device.token, now=int(time.time()))
    assert second.device == caller.device
    assert second.network == caller.network
    assert third.device != caller.device
    assert third.network == caller.network


def test_a_telegram_players_profile_through_the_gateway_is_their_first_name_never_their_id(
    cluster: Cluster,
) -> None:
    olga = _auth(_sign_in(cluster, telegram_init_data=init_data(BOT_TOKEN, 4343, first_name="Olga")))
    nameless = _auth(_sign_in(cluster, telegram_init_data=init_data(BOT_TOKEN, 4344, first_name="")))
    with lobby_connect.LobbyServiceClientSync(cluster.url) as lobby:
        mine = lobby.get_my_profile(lobby_pb2.GetMyProfileRequest(), headers=olga).profile
        assert mine.display_name == "Olga"
        change = lobby_pb2.SetDisplayNameRequest(request_id="olga-1", display_name="Olga K")
        assert lobby.set_display_name(change, headers=olga).profile.display_name == "Olga K"
        assert (
            lobby.get_my_profile(lobby_pb2.GetMyProfileRequest(), headers=olga).profile.display_name
            == "Olga K"
        )
        bad = lobby_pb2.SetDisplayNameRequest(request_id="olga-2", display_name="tg:4343")
        assert _refusal(lambda: lobby.set_display_name(bad, headers=olga)) == (
            "INVALID_ARGUMENT",
            "DISPLAY_NAME_INVALID",
        )
        generated = lobby.get_my_profile(lobby_pb2.GetMyProfileRequest(), headers=nameless).profile
        assert generated.display_name.startswith("Player ")
        assert "4344" not in generated.display_name


def test_a_telegram_sign_in_gives_the_lobby_the_players_photo_and_the_player_may_hide_it(
    cluster: Cluster,
) -> None:
    """The photo of the signed initData reaches the lobby's profile (only Telegram's own photo URLs:
    another host's is dropped), a later sign-in's new photo replaces it, and one without a photo
    leaves it; the player turns showing it off and on through the gateway, and no browser can set a
    photo of its choosing (RecordSignInPhoto is not forwarded)."""
    photo = "https://t.me/i/userpic/320/0HsMKYOWlgnBA2Httlfb3NBMp50KmdI4fD8tsNZu2js.jpg"
    newer = "https://t.me/i/userpic/320/cm409T17pD0hEWX5m_tmMBGNTbHnhP0b6tZG6o887b0.svg"

    sign_ins = iter(range(100))

    def signed_in(url: str) -> dict[str, str]:
        # Each sign-in a fresh initData (a used one is refused as a replay).
        when = int(time.time()) - next(sign_ins)
        signed = init_data(BOT_TOKEN, 4545, first_name="Pia", auth_date=when, photo_url=url)
        return _auth(_sign_in(cluster, telegram_init_data=signed))

    def mine(who: dict[str, str]) -> lobby_pb2.PlayerProfile:
        with lobby_connect.LobbyServiceClientSync(cluster.url) as lobby:
            return lobby.get_my_profile(lobby_pb2.GetMyProfileRequest(), headers=who).profile

    pia = signed_in(photo)
    first = mine(pia)
    assert (first.display_name, first.avatar_url, first.show_avatar) == ("Pia", photo, True)
    assert mine(signed_in(newer)).avatar_url == newer
    assert mine(signed_in("")).avatar_url == newer  # no photo this time: the last one stays
    assert mine(signed_in("https://evil.example/pixel.gif")).avatar_url == ""
    pia = signed_in(photo)
    with lobby_connect.LobbyServiceClientSync(cluster.url) as lobby:
        off = lobby_pb2.SetShowAvatarRequest(request_id="pia-off", show_avatar=False)
        assert lobby.set_show_avatar(off, headers=pia).profile.show_avatar is False
        changed = lobby_pb2.SetShowAvatarRequest(request_id="pia-off", show_avatar=True)
        assert _refusal(lambda: lobby.set_show_avatar(changed, headers=pia)) == (
            "ALREADY_EXISTS",
            "IDEMPOTENCY_CONFLICT",
        )
        forged = lobby_pb2.RecordSignInPhotoRequest(request_id="pia-forged", photo_url=newer)
        assert _refusal(lambda: lobby.record_sign_in_photo(forged, headers=pia)) == (
            "PERMISSION_DENIED",
            "ROLE_REQUIRED",
        )
    assert (mine(pia).avatar_url, mine(pia).show_avatar) == (photo, False)


def test_replayed_forged_tampered_and_expired_init_data_are_refused(cluster: Cluster) -> None:
    good = init_data(BOT_TOKEN, 5151)
    _sign_in(cluster, telegram_init_data=good)
    with _gateway(cluster) as gateway:

        def sign_in(data: str) -> tuple[str, str]:
            request = gateway_pb2.SignInRequest(telegram_init_data=data, device_id="d")
            return _refusal(lambda: gateway.sign_in(request))

        assert sign_in(good) == ("UNAUTHENTICATED", "INIT_DATA_REPLAYED")
        assert sign_in(init_data("987654321:not-the-bot-token-at-all-xxxx", 5151)) == (
            "UNAUTHENTICATED",
            "INIT_DATA_INVALID",
        )
        tampered = init_data(BOT_TOKEN, 6161).replace("6161", "6162")
        assert sign_in(tampered) == ("UNAUTHENTICATED", "INIT_DATA_INVALID")
        old = init_data(BOT_TOKEN, 7171, auth_date=int(time.time()) - 3600)
        assert sign_in(old) == ("UNAUTHENTICATED", "INIT_DATA_EXPIRED")
        ahead = init_data(BOT_TOKEN, 7172, auth_date=int(time.time()) + 3600)
        assert sign_in(ahead) == ("UNAUTHENTICATED", "INIT_DATA_EXPIRED")
        for garbage in ("", "hash=", "a=1&a=2&hash=" + "0" * 64, "%ff%fe", "x" * 10_000, good + "&extra=1"):
            assert sign_in(garbage)[0] in ("UNAUTHENTICATED", "INVALID_ARGUMENT"), garbage[:40]
        # A refused initData is not burnt: the genuine one for that user still works once.
        fresh = init_data(BOT_TOKEN, 6161)
        assert (
            gateway.sign_in(
                gateway_pb2.SignInRequest(telegram_init_data=fresh, device_id="d")
            ).session.player_id
            == "tg:6161"
        )


def test_development_sign_in_takes_a_name_and_refuses_system_and_service_names(cluster: Cluster) -> None:
    assert _sign_in(cluster, development_name="alice").player_id == "alice"
    with _gateway(cluster) as gateway:
        for name in ("house", "SYSTEM", "payments", "table", "tg:1", "a/b", "", "x" * 40, "ünï"):
            request = gateway_pb2.SignInRequest(development_name=name, device_id="d")
            assert _refusal(lambda r=request: gateway.sign_in(r)) == ("INVALID_ARGUMENT", "FIELD_INVALID"), (
                name
            )
        bad_device = gateway_pb2.SignInRequest(development_name="alice", device_id="no spaces")
        assert _refusal(lambda: gateway.sign_in(bad_device)) == ("INVALID_ARGUMENT", "FIELD_INVALID")
        options = gateway.get_sign_in_options(gateway_pb2.GetSignInOptionsRequest())
        assert options.telegram
        assert options.development


def test_only_player_tokens_pass_and_admin_or_service_methods_are_never_forwarded(cluster: Cluster) -> None:
    admin = {"authorization": f"Bearer {token_for('ops', *STAFF_ROLES)}"}
    service = {"authorization": f"Bearer {token_for(ServiceName.PAYMENTS.value, Role.SERVICE)}"}
    player = _auth(_sign_in(cluster, development_name="carol"))
    expired = {"authorization": f"Bearer {token_for('carol', ttl_seconds=-10)}"}
    with cashier_connect.CashierServiceClientSync(cluster.url) as cashier:
        balances = cashier_pb2.GetBalancesRequest()
        assert _refusal(lambda: cashier.get_balances(balances, headers=admin)) == (
            "PERMISSION_DENIED",
            "ROLE_REQUIRED",
        )
        assert _refusal(lambda: cashier.get_balances(balances, headers=service)) == (
            "PERMISSION_DENIED",
            "ROLE_REQUIRED",
        )
        assert _refusal(lambda: cashier.get_balances(balances, headers=expired)) == (
            "UNAUTHENTICATED",
            "TOKEN_EXPIRED",
        )
        assert _refusal(lambda: cashier.get_balances(balances)) == ("UNAUTHENTICATED", "TOKEN_MISSING")
        purchase = cashier_pb2.PurchaseRequest(
            payment_reference="gw-attack",
            player_id="carol",
            source=cashier_pb2.PAYMENT_SOURCE_GRAM,
            amount_minor=10**9,
        )
        assert _refusal(lambda: cashier.purchase(purchase, headers=player)) == (
            "PERMISSION_DENIED",
            "ROLE_REQUIRED",
        )
        assert not any(w.balance for w in cashier.get_balances(balances, headers=player).wallets)
    with lobby_connect.LobbyServiceClientSync(cluster.url) as lobby:
        create = lobby_pb2.CreateRoomRequest(request_id="gw-attack")
        assert _refusal(lambda: lobby.create_room(create, headers=player)) == (
            "PERMISSION_DENIED",
            "ROLE_REQUIRED",
        )


def test_a_player_naming_another_player_is_refused_and_changes_nothing(cluster: Cluster) -> None:
    mallory = _auth(_sign_in(cluster, development_name="mallory"))
    with cashier_connect.CashierServiceClientSync(cluster.url) as cashier:
        for request in (
            cashier_pb2.GetBalancesRequest(player_id="alice"),
            cashier_pb2.GetStatementRequest(player_id="alice"),
        ):
            method = (
                cashier.get_balances
                if isinstance(request, cashier_pb2.GetBalancesRequest)
                else cashier.get_statement
            )
            assert _refusal(lambda m=method, r=request: m(r, headers=mallory)) == (
                "PERMISSION_DENIED",
                "NOT_YOUR_RESOURCE",
            )
        own = cashier.get_balances(cashier_pb2.GetBalancesRequest(player_id="mallory"), headers=mallory)
        assert own.player_id == "mallory"


def _player_paths(descriptor: Descriptor, seen: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every path to a `player_id` / `player_ids` field in a message, at any depth."""
    paths: list[tuple[str, ...]] = []
    for field in descriptor.fields:
        if field.name in ("player_id", "player_ids"):
            paths.append((field.name,))
        elif field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.full_name not in seen:
            inner = _player_paths(field.message_type, (*seen, descriptor.full_name))
            paths.extend((field.name, *rest) for rest in inner)
    return paths


# Every forwarded request type that can carry a player id, wherever in the message (found from the
# descriptors, so a field added later is covered without touching this test).
NAMING = [
    (service, method.name, path)
    for service, served in sorted(FORWARDED.items())
    for method in descriptor_pool.Default().FindServiceByName(service).methods
    if method.name in served
    for path in _player_paths(method.input_type)
]


def _naming(service: str, method: str, path: tuple[str, ...], player: str) -> Message:
    descriptor = descriptor_pool.Default().FindServiceByName(service).methods_by_name[method]
    request: Message = message_factory.GetMessageClass(descriptor.input_type)()
    target: Any = request
    for name in path[:-1]:
        field = target.DESCRIPTOR.fields_by_name[name]
        target = getattr(target, name).add() if field.is_repeated else getattr(target, name)
    last = target.DESCRIPTOR.fields_by_name[path[-1]]
    if last.is_repeated:
        getattr(target, path[-1]).append(player)
    else:
        setattr(target, path[-1], player)
    return request


def test_the_request_types_that_name_a_player_are_all_checked_below() -> None:
    found = {(service.split(".")[1], method) for service, method, _ in NAMING}
    assert {("cashier", "GetBalances"), ("cashier", "GetStatement"), ("fairness", "VerifyHand")} <= found


@pytest.fixture(scope="module")
def unwired() -> Iterator[ServiceProcess]:
    """A gateway whose services are all closed ports: whatever it sends on fails UNAVAILABLE, so a
    refusal with any other reason was made by the gateway itself, before sending anything."""
    closed = {
        f"POKER_GATEWAY_{name}_ADDRESS": f"127.0.0.1:{free_port()}"
        for name in ("LOBBY", "CASHIER", "FAIRNESS", "HISTORY")
    }
    with running_gateway({}, closed) as gateway:
        yield gateway


@pytest.mark.parametrize(
    ("service", "method", "path"), NAMING, ids=[f"{m}:{'.'.join(p)}" for _, m, p in NAMING]
)
def test_naming_another_player_anywhere_in_any_forwarded_request_is_refused_before_it_is_sent(
    unwired: ServiceProcess, service: str, method: str, path: tuple[str, ...]
) -> None:
    signed = call(
        unwired.address,
        f"{GATEWAY}/SignIn",
        gateway_pb2.SignInRequest(development_name="mallory", device_id="d").SerializeToString(),
    )
    token = gateway_pb2.SignInResponse.FromString(signed.body).session.token
    streaming = descriptor_pool.Default().FindServiceByName(service).methods_by_name[method].server_streaming
    route = f"/{service}/{method}"
    other = _naming(service, method, path, "alice").SerializeToString()
    refused = call(unwired.address, route, other, token=token, streaming=streaming)
    assert refused.label == "permission_denied NOT_YOUR_RESOURCE", (method, path)
    # The same request naming the caller goes on to the service behind (here nobody: UNAVAILABLE).
    own = _naming(service, method, path, "mallory").SerializeToString()
    assert call(unwired.address, route, own, token=token, streaming=streaming).code == "unavailable"


def test_oversized_and_malformed_connect_requests_get_a_code_and_a_reason(cluster: Cluster) -> None:
    token = _sign_in(cluster, development_name="dave").token
    lobby = "/poker.lobby.v1.LobbyService/ListRooms"
    watch = "/poker.table.v1.TableService/WatchTable"
    huge = b"\x0a" + b"\xff\xff\x7f" + b"x" * 2_097_151
    assert call(cluster.address, lobby, huge, token=token).label == "resource_exhausted REQUEST_TOO_LARGE"
    assert (
        call(cluster.address, watch, huge, token=token, streaming=True).label
        == "resource_exhausted REQUEST_TOO_LARGE"
    )
    assert (
        call(cluster.address, lobby, b"\xff\xff\xff", token=token).label
        == "invalid_argument REQUEST_MALFORMED"
    )
    assert (
        call(cluster.address, watch, b"\x0b" * 64, token=token, streaming=True).label
        == "invalid_argument REQUEST_MALFORMED"
    )
    # No token: refused on the headers, before the body is read.
    assert call(cluster.address, lobby, huge).label == "unauthenticated TOKEN_MISSING"
    assert call(cluster.address, f"{GATEWAY}/SignIn", b"\x12" + b"\x05alice" + b"\x1a\x01d").code == "ok"
    unknown = call(cluster.address, "/poker.lobby.v1.LobbyService/Nope", b"", token=token)
    assert unknown.http_status == 404


def test_development_purchase_credits_chips_once_per_request_id_and_never_stars(cluster: Cluster) -> None:
    erin = _auth(_sign_in(cluster, development_name="erin"))
    with _gateway(cluster) as gateway, cashier_connect.CashierServiceClientSync(cluster.url) as cashier:
        options = gateway.list_purchase_options(
            gateway_pb2.ListPurchaseOptionsRequest(), headers=erin
        ).options
        stars = [o for o in options if o.method == gateway_pb2.PURCHASE_METHOD_TELEGRAM_STARS]
        assert stars
        assert not stars[0].available
        assert "not available yet" in stars[0].unavailable_text
        buy = gateway_pb2.StartPurchaseRequest(
            request_id="buy-1",
            method=gateway_pb2.PURCHASE_METHOD_DEVELOPMENT,
            pool=common_pb2.CHIP_POOL_GRAM,
            chips=3000,
        )
        assert gateway.start_purchase(buy, headers=erin).credited.amount == 3000
        assert (
            gateway.start_purchase(buy, headers=erin).credited.amount == 3000
        )  # a retry, not a second purchase
        conflict = gateway_pb2.StartPurchaseRequest(
            request_id="buy-1",
            method=gateway_pb2.PURCHASE_METHOD_DEVELOPMENT,
            pool=common_pb2.CHIP_POOL_GRAM,
            chips=4000,
        )
        assert _refusal(lambda: gateway.start_purchase(conflict, headers=erin)) == (
            "ALREADY_EXISTS",
            "IDEMPOTENCY_CONFLICT",
        )
        # Issue 41: the same id for the other pool was a second purchase (100 MPX credited).
        other_pool = gateway_pb2.StartPurchaseRequest(
            request_id="buy-1",
            method=gateway_pb2.PURCHASE_METHOD_DEVELOPMENT,
            pool=common_pb2.CHIP_POOL_MPX,
            chips=3000,
        )
        assert _refusal(lambda: gateway.start_purchase(other_pool, headers=erin)) == (
            "ALREADY_EXISTS",
            "IDEMPOTENCY_CONFLICT",
        )
        star_buy = gateway_pb2.StartPurchaseRequest(
            request_id="buy-2",
            method=gateway_pb2.PURCHASE_METHOD_TELEGRAM_STARS,
            pool=common_pb2.CHIP_POOL_GRAM,
            chips=10,
        )
        assert _refusal(lambda: gateway.start_purchase(star_buy, headers=erin)) == (
            "FAILED_PRECONDITION",
            "PAYMENT_SOURCE_DISABLED",
        )
        wallets = cashier.get_balances(cashier_pb2.GetBalancesRequest(), headers=erin).wallets
        balances = {w.pool: w.balance for w in wallets}
        assert (balances[common_pb2.CHIP_POOL_GRAM], balances.get(common_pb2.CHIP_POOL_MPX, 0)) == (3000, 0)


def test_a_player_joins_sits_watches_and_leaves_through_the_gateway_without_seeing_shard_addresses(
    cluster: Cluster,
) -> None:
    frank = _auth(_sign_in(cluster, development_name="frank"))
    with _gateway(cluster) as gateway:
        buy = gateway_pb2.StartPurchaseRequest(
            request_id="f-1",
            method=gateway_pb2.PURCHASE_METHOD_DEVELOPMENT,
            pool=common_pb2.CHIP_POOL_GRAM,
            chips=10000,
        )
        gateway.start_purchase(buy, headers=frank)
    with lobby_connect.LobbyServiceClientSync(cluster.url) as lobby:
        joined = lobby.join_table(lobby_pb2.JoinTableRequest(room_id="nlhe-gram-prestige"), headers=frank)
        assert joined.table_id
        assert joined.address == ""
    with table_connect.TableServiceClientSync(cluster.url) as table:
        seat = table.sit_down(
            table_pb2.SitDownRequest(request_id="f-sit", table_id=joined.table_id, buy_in=10000),
            headers=frank,
        )
        assert seat.stack.amount == 10000
        for update in table.watch_table(table_pb2.WatchTableRequest(table_id=joined.table_id), headers=frank):
            assert any(s.player_id == "frank" for s in update.view.seats)
            break
        left = table.leave_table(
            table_pb2.LeaveTableRequest(request_id="f-leave", table_id=joined.table_id), headers=frank
        )
        assert left.cashed_out.amount == 10000


def test_renewal_reissues_the_same_player_and_refuses_a_token_that_is_not_a_player_token(
    cluster: Cluster,
) -> None:
    session = _sign_in(cluster, development_name="gina")
    with _gateway(cluster) as gateway:
        renewed = gateway.renew_token(
            gateway_pb2.RenewTokenRequest(device_id="device-1"), headers=_auth(session)
        ).session
        assert renewed.player_id == "gina"
        assert renewed.token
        # A renewal keeps the sign-in's name suggestion; it never names the player by their id.
        telegram = _sign_in(cluster, telegram_init_data=init_data(BOT_TOKEN, 4343, first_name="Зоя"))
        again = gateway.renew_token(
            gateway_pb2.RenewTokenRequest(device_id="device-1"), headers=_auth(telegram)
        ).session
        assert (again.player_id, again.display_name) == ("tg:4343", "Зоя")
        assert verify_token(DEV_KEYS, again.token, now=int(time.time())).suggested_name == "Зоя"
        admin = {"authorization": f"Bearer {token_for('gina', Role.PLAYER, *STAFF_ROLES)}"}
        renew = gateway_pb2.RenewTokenRequest(device_id="device-1")
        assert _refusal(lambda: gateway.renew_token(renew, headers=admin)) == (
            "PERMISSION_DENIED",
            "ROLE_REQUIRED",
        )


def test_calls_over_the_per_player_rate_are_refused_with_a_reason(cluster: Cluster) -> None:
    with running_gateway(
        cluster.services,
        {"POKER_GATEWAY_CALL_BURST_PER_USER": "5", "POKER_GATEWAY_CALLS_PER_SECOND_PER_USER": "0.5"},
    ) as tight:
        url = f"http://{tight.address}"
        with gateway_connect.GatewayServiceClientSync(url) as gateway:
            session = gateway.sign_in(
                gateway_pb2.SignInRequest(development_name="hank", device_id="d")
            ).session
        with lobby_connect.LobbyServiceClientSync(url) as lobby:
            outcomes = []
            for _ in range(8):
                try:
                    lobby.get_room(
                        lobby_pb2.GetRoomRequest(room_id="nlhe-gram-classic"), headers=_auth(session)
                    )
                    outcomes.append("OK")
                except ConnectError as error:
                    outcomes.append(f"{error.code.name} {reason_of_connect(error)}")
        assert outcomes[:5] == ["OK"] * 5
        assert set(outcomes[5:]) == {"RESOURCE_EXHAUSTED GATEWAY_RATE_LIMITED"}


def test_no_token_and_no_bot_token_reach_the_gateway_log(cluster: Cluster) -> None:
    session = _sign_in(cluster, development_name="ivy")
    data = init_data(BOT_TOKEN, 8181)
    _sign_in(cluster, telegram_init_data=data)
    log = "".join(cluster.gateway.lines)
    assert '"event": "signed in"' in log
    for secret in (
        BOT_TOKEN,
        BOT_TOKEN.split(":")[1],
        session.token,
        session.token.split(".")[2],
        data.split("hash=")[1][:64],
    ):
        assert secret not in log
