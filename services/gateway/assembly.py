"""Composition of the gateway process: backends, routes, front door, sessions, purchases, the app."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, cast

from poker.cashier.v1 import cashier_connect, cashier_pb2_grpc
from poker.fairness.v1 import fairness_connect
from poker.gateway.v1 import gateway_connect, staff_connect
from poker.history.v1 import history_connect, history_pb2, history_pb2_grpc
from poker.lobby.v1 import lobby_connect, lobby_pb2_grpc
from poker.table.v1 import table_connect
from service_runtime.auth import STAFF_TOKEN_MAX_SECONDS, KeyScope, Role, ServiceName, TokenKeys, mint_token
from service_runtime.redis_client import create_redis
from service_runtime.shard_registry import DEFAULT_PREFIX
from service_runtime.tls import TlsFiles
from services.gateway.access import ACCESS, GATEWAY_SERVICE
from services.gateway.forwarding import LOBBY_SERVICE, TABLE_SERVICE, Backends, Forwarder, lobby_locator
from services.gateway.front_door import FrontDoor, Limits
from services.gateway.gateway_api import GatewayApi
from services.gateway.http_app import GatewayApp
from services.gateway.purchases import DevelopmentPurchases, NoPurchases, PurchaseFlow, load_flow
from services.gateway.rate_limits import Rate, RateLimiter
from services.gateway.replay import MemoryReplayGuard, RedisReplayGuard, ReplayGuard
from services.gateway.revocations import MemoryRevocations, RedisRevocations, SessionRevocations
from services.gateway.routing import TableRoutes
from services.gateway.sessions import Sessions, SignInPolicy
from services.gateway.settings import GatewaySettings
from services.gateway.sign_in_photos import LobbyPhotos
from services.gateway.staff_access import STAFF_ACCESS, STAFF_GATEWAY_SERVICE
from services.gateway.staff_audit import StaffAudit
from services.gateway.staff_directory import StaffDirectory, history_lookup
from services.gateway.staff_door import (
    StaffDoor,
    StaffForwarder,
    StaffGatewayApi,
    StaffSignInPolicy,
    StaffSignIns,
    no_alerts,
    prometheus_alerts,
)
from services.gateway.staff_list import parse_staff_list
from services.gateway.web_assets import STAFF_CONTENT_SECURITY_POLICY, STAFF_FOLDER, WebAssets

CASHIER_SERVICE = "poker.cashier.v1.CashierService"
HISTORY_SERVICE = "poker.history.v1.HistoryService"
FAIRNESS_SERVICE = "poker.fairness.v1.FairnessService"
PAYMENTS_TOKEN_SECONDS = 3600


async def _nothing() -> None:
    return None


@dataclass
class GatewayAssembly:
    app: GatewayApp
    close: Callable[[], Awaitable[None]] = field(default=_nothing)
    # The staff door's app (its own listener), when POKER_GATEWAY_STAFF_PORT asks for one.
    staff_app: GatewayApp | None = None


def renewing_service_token(
    keys: TokenKeys, service: ServiceName, ttl_seconds: int = PAYMENTS_TOKEN_SECONDS
) -> Callable[[], str]:
    """A service token minted again at half its lifetime."""
    token_text = [""]
    renew_at = [0.0]

    def token() -> str:
        now = time.time()
        if now >= renew_at[0]:
            token_text[0] = mint_token(
                keys, service.value, (Role.SERVICE,), now=int(now), ttl_seconds=ttl_seconds
            )
            renew_at[0] = now + ttl_seconds / 2
        return token_text[0]

    return token


def purchase_flow(settings: GatewaySettings, keys: TokenKeys, backends: Backends) -> PurchaseFlow:
    flow = settings.resolved_purchase_flow
    if flow == "development":
        return DevelopmentPurchases(
            lambda: cashier_pb2_grpc.CashierServiceStub(backends.channel(settings.cashier_address)),
            renewing_service_token(keys, ServiceName.PAYMENTS),
        )
    if flow == "none":
        return NoPurchases()
    return load_flow(flow, settings)


def limits(settings: GatewaySettings) -> Limits:
    per_minute = settings.sign_ins_per_minute_per_address
    return Limits(
        per_address=RateLimiter(
            Rate(settings.calls_per_second_per_address, settings.call_burst_per_address), "address"
        ),
        per_user=RateLimiter(
            Rate(settings.calls_per_second_per_user, settings.call_burst_per_user), "player"
        ),
        sign_ins=RateLimiter(Rate(per_minute / 60.0, max(1, int(per_minute))), "address"),
    )


async def assemble(settings: GatewaySettings) -> GatewayAssembly:
    keys = TokenKeys.from_settings(settings.auth_keys)
    backends = Backends(
        settings.request_timeout_seconds, TlsFiles.from_settings(settings), settings.tls_reload_seconds
    )
    routes = TableRoutes(lobby_locator(backends, settings.lobby_address))
    closers: list[Callable[[], Awaitable[Any]]] = [backends.close]
    replay: ReplayGuard
    revocations: SessionRevocations
    if settings.redis_url:
        client = create_redis(settings.redis_url)
        prefix = settings.redis_prefix or DEFAULT_PREFIX
        replay = RedisReplayGuard(client, prefix)
        revocations = RedisRevocations(client, prefix)
        closers += [revocations.close, client.aclose]
    else:
        replay = MemoryReplayGuard()
        revocations = MemoryRevocations()
    await revocations.start()
    door = FrontDoor(
        keys, ACCESS, limits(settings), revocations=revocations, forwarded_hops=settings.forwarded_hops
    )
    sessions = Sessions(
        keys,
        SignInPolicy(
            bot_token=settings.telegram_bot_token,
            init_data_max_age_seconds=settings.init_data_max_age_seconds,
            token_ttl_seconds=settings.token_ttl_seconds,
            session_max_seconds=settings.session_max_seconds,
            development_sign_in=settings.offers_development_sign_in,
            signal_key=settings.signal_key.encode(),
        ),
        replay,
        LobbyPhotos(lambda: lobby_pb2_grpc.LobbyServiceStub(backends.channel(settings.lobby_address))),
    )
    options: dict[str, Any] = {"interceptors": [door], "read_max_bytes": settings.max_request_bytes}
    api = GatewayApi(door, sessions, purchase_flow(settings, keys, backends), revocations)
    apps: dict[str, Any] = {
        GATEWAY_SERVICE: gateway_connect.GatewayServiceASGIApplication(api, **options),
        **forwarded_apps(
            Forwarder, door, backends, settings, routes, revocations, options, lobby_routed=True
        ),
    }

    async def close() -> None:
        for closer in closers:
            await closer()

    app = GatewayApp(
        apps, WebAssets.load(settings.web_root, exclude=(STAFF_FOLDER,)), tls=bool(settings.tls_cert_file)
    )
    staff_app = None
    if settings.staff_port >= 0:
        staff_app, close_staff = staff_door_app(settings, keys, backends, replay, revocations)
        closers.insert(0, close_staff)
    return GatewayAssembly(app=app, close=close, staff_app=staff_app)


def forwarded_apps(
    kind: type[Forwarder],
    door: FrontDoor,
    backends: Backends,
    settings: GatewaySettings,
    routes: TableRoutes,
    revocations: SessionRevocations,
    options: dict[str, Any],
    *,
    lobby_routed: bool,
) -> dict[str, Any]:
    """The Connect applications of the five services a door forwards to (the players' door learns
    tables' routes from the lobby's JoinTable answers; the staff door routes by asking)."""

    def forwarder(service: str, address: str = "", routed: bool = False) -> Any:
        return cast(
            Any,
            kind(
                service,
                door,
                backends,
                address=address,
                routes=routes if routed else None,
                revocations=revocations,
            ),
        )

    return {
        LOBBY_SERVICE: lobby_connect.LobbyServiceASGIApplication(
            forwarder(LOBBY_SERVICE, settings.lobby_address, routed=lobby_routed), **options
        ),
        TABLE_SERVICE: table_connect.TableServiceASGIApplication(
            forwarder(TABLE_SERVICE, routed=True), **options
        ),
        CASHIER_SERVICE: cashier_connect.CashierServiceASGIApplication(
            forwarder(CASHIER_SERVICE, settings.cashier_address), **options
        ),
        HISTORY_SERVICE: history_connect.HistoryServiceASGIApplication(
            forwarder(HISTORY_SERVICE, settings.history_address), **options
        ),
        FAIRNESS_SERVICE: fairness_connect.FairnessServiceASGIApplication(
            forwarder(FAIRNESS_SERVICE, settings.fairness_address), **options
        ),
    }


def _key_of_scope(keys: TokenKeys, scope: KeyScope) -> TokenKeys:
    """`keys`, signing with the first key of `scope` (outside production, where none is, the first
    key, which signs any token: settings refuse a staff door without both scopes in production)."""
    kid = next((k for k in keys.keys if keys.scope_of(k) is scope), keys.signing_key_id)
    return replace(keys, signing_key_id=kid)


def staff_door_app(
    settings: GatewaySettings,
    keys: TokenKeys,
    backends: Backends,
    replay: ReplayGuard,
    revocations: SessionRevocations,
) -> tuple[GatewayApp, Callable[[], Awaitable[None]]]:
    """The staff door (docs/backoffice.md): its own app for its own listener."""
    own_token = renewing_service_token(
        _key_of_scope(keys, KeyScope.GATEWAY), ServiceName.GATEWAY, STAFF_TOKEN_MAX_SECONDS
    )

    async def record(event: history_pb2.AuditEvent, seconds: float) -> None:
        stub = history_pb2_grpc.HistoryServiceStub(backends.channel(settings.history_address))
        await stub.RecordAuditEvent(
            history_pb2.RecordAuditEventRequest(event=event),
            metadata=(("authorization", f"Bearer {own_token()}"),),
            timeout=seconds,
        )

    audit = StaffAudit(record)
    door = StaffDoor(
        keys,
        STAFF_ACCESS,
        limits(settings),
        revocations=revocations,
        forwarded_hops=settings.forwarded_hops,
        audit=audit,
        clock_now=time.time,
    )
    directory = StaffDirectory(
        parse_staff_list(settings.staff_allow_list),
        history_lookup(
            lambda: history_pb2_grpc.HistoryServiceStub(backends.channel(settings.history_address)), own_token
        ),
    )
    sign_ins = StaffSignIns(
        _key_of_scope(keys, KeyScope.STAFF),
        directory,
        StaffSignInPolicy(
            bot_token=settings.telegram_bot_token,
            bot_username=settings.staff_bot_username,
            development=settings.offers_development_sign_in,
            token_ttl_seconds=settings.staff_token_ttl_seconds,
            session_max_seconds=settings.staff_session_max_seconds,
            login_max_age_seconds=settings.staff_login_max_age_seconds,
        ),
        replay,
    )
    alerts = prometheus_alerts(settings.prometheus_url) if settings.prometheus_url else no_alerts
    routes = TableRoutes(lobby_locator(backends, settings.lobby_address))
    options: dict[str, Any] = {"interceptors": [door], "read_max_bytes": settings.max_request_bytes}
    apps: dict[str, Any] = {
        STAFF_GATEWAY_SERVICE: staff_connect.StaffGatewayServiceASGIApplication(
            StaffGatewayApi(door, sign_ins, alerts, time.time, revocations), **options
        ),
        **forwarded_apps(
            StaffForwarder, door, backends, settings, routes, revocations, options, lobby_routed=False
        ),
    }
    assets = WebAssets.load(settings.web_root / STAFF_FOLDER, csp=STAFF_CONTENT_SECURITY_POLICY)
    return GatewayApp(apps, assets, tls=bool(settings.tls_cert_file)), audit.close
