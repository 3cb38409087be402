"""The staff's front door (the back office, docs/backoffice.md): sign-in, the door, the forwarding.

A listener of its own (POKER_GATEWAY_STAFF_PORT), never the players' address: it serves the console's
page, StaffGatewayService, and the staff's share of the services (`staff_access.py`). Only staff
tokens pass it (the players' door admits player tokens only), and each call's role is checked here
and again by the service behind.

Sign-in: the Telegram Login Widget's data, verified (`telegram_login.py`), used once, for a person the
staff allow-list (`staff_list.py`, the Secret) or history's staff directory names
(`staff_directory.py`); or, outside production, a listed staff name alone. The token names the
person (their listed name) and the roles listed for them, signed by the staff-scoped key, living
`staff_token_ttl_seconds` (15 minutes; every service refuses a staff token living more than an
hour). A renewal reads the list and the directory again, so a person taken off, or off a role,
loses it at the next renewal; no renewal after `staff_session_max_seconds` from the sign-in.

Every change says why (`x-staff-reason`, percent-encoded UTF-8, 1-500 characters), and every call
that changes something, reads one person's or case's data, or is refused, is recorded
(`staff_audit.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import urllib.error
import urllib.parse
import urllib.request
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from google.protobuf import timestamp_pb2
from google.protobuf.message import Message

from poker.gateway.v1 import staff_pb2
from service_runtime.auth import STAFF_ROLES, Caller, TokenKeys, mint_token
from service_runtime.errors import (
    FailedPrecondition,
    InvalidArgument,
    PermissionDenied,
    Unauthenticated,
    Unavailable,
)
from services.gateway import connect_errors
from services.gateway.call_telemetry import code_of
from services.gateway.forwarding import Forwarder
from services.gateway.front_door import FrontDoor, GatewayCall
from services.gateway.replay import ReplayGuard
from services.gateway.revocations import SessionRevocations
from services.gateway.staff_access import MUTATING, SIGN_IN, SIGN_OUT, UNRECORDED
from services.gateway.staff_audit import ASKED, StaffAudit, Targets, staff_event, targets_of
from services.gateway.staff_directory import StaffDirectory
from services.gateway.staff_list import StaffMember
from services.gateway.telegram_login import verify_login

log = structlog.get_logger("gateway.staff")

REASON_HEADER = "x-staff-reason"
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
STAFF_REASON_MAX = 500
ALERTS_TIMEOUT_SECONDS = 3.0


def admit_staff(caller: Caller) -> None:
    """The staff door: a token of staff roles only (never a player's or a service's)."""
    if not caller.roles or not caller.roles <= STAFF_ROLES:
        raise PermissionDenied("ROLE_REQUIRED", "the staff door serves staff tokens only")


def reason_of_header(headers: Any) -> str:
    """The staff member's words from `x-staff-reason` ("" when absent); FIELD_INVALID if unreadable."""
    raw = headers.get(REASON_HEADER, "")
    if not raw:
        return ""
    text: str | None
    if not raw.isascii() or not raw.isprintable() or _BAD_ESCAPE.search(raw):
        text = None  # raw bytes, or a `%` that is not an escape: not percent-encoded text
    else:
        try:
            text = urllib.parse.unquote(raw, errors="strict").strip()
        except UnicodeDecodeError:
            text = None
    if text is None or len(text) > STAFF_REASON_MAX or not text.isprintable():
        raise InvalidArgument(
            "FIELD_INVALID",
            f"{REASON_HEADER} is percent-encoded UTF-8 text of 1-{STAFF_REASON_MAX} printable characters",
            {"field": REASON_HEADER},
        )
    if not text.translate(_SHOWS_NOTHING).strip():
        return ""  # words that show nothing are no reason (a change then needs one: STAFF_REASON_REQUIRED)
    return text


# Printable characters that render as blank space (Hangul fillers, the blank Braille pattern): a
# reason of these and spaces alone shows nothing in the trail.
_SHOWS_NOTHING = dict.fromkeys(map(ord, "\u115f\u1160\u3164\uffa0\u2800"))


# --- Sign-in. ---


@dataclass(frozen=True)
class StaffSignInPolicy:
    bot_token: str
    bot_username: str
    development: bool
    token_ttl_seconds: int
    session_max_seconds: int
    login_max_age_seconds: int


def _stamp(seconds: int) -> timestamp_pb2.Timestamp:
    return timestamp_pb2.Timestamp(seconds=seconds)


class StaffSignIns:
    def __init__(
        self, keys: TokenKeys, staff: StaffDirectory, policy: StaffSignInPolicy, replay: ReplayGuard
    ) -> None:
        # `keys` signs with the staff-scoped key (outside production: the first key, if none is).
        self._keys = keys
        self._staff = staff
        self._policy = policy
        self._replay = replay

    def options(self) -> staff_pb2.GetStaffSignInOptionsResponse:
        policy = self._policy
        return staff_pb2.GetStaffSignInOptionsResponse(
            telegram_bot_username=policy.bot_username if policy.bot_token else "",
            development=policy.development,
            token_ttl_seconds=policy.token_ttl_seconds,
        )

    async def sign_in(self, request: staff_pb2.StaffSignInRequest, *, now: int) -> staff_pb2.StaffSession:
        method = request.WhichOneof("method")
        if method is None:
            raise InvalidArgument(
                "FIELD_REQUIRED", "telegram_login or development_name is required", {"field": "method"}
            )
        if method == "telegram_login":
            if not self._policy.bot_token:
                raise FailedPrecondition(
                    "SIGN_IN_METHOD_DISABLED", "no Telegram bot is configured for staff sign-in"
                )
            telegram_id = verify_login(
                request.telegram_login,
                self._policy.bot_token,
                now=now,
                max_age_seconds=self._policy.login_max_age_seconds,
            )
            member = await self._staff.member(telegram_id)
            if member is None:
                raise PermissionDenied(
                    "STAFF_NOT_LISTED", "the staff list does not name this Telegram account"
                )
            try:
                await self._replay.claim(
                    f"staff-login:{request.telegram_login.hash.lower()}",
                    self._policy.login_max_age_seconds + 120,
                )
            except Unauthenticated as error:
                raise Unauthenticated(
                    "LOGIN_DATA_EXPIRED", "this Telegram login was already used: sign in again"
                ) from error
        else:
            if not self._policy.development:
                raise FailedPrecondition("SIGN_IN_METHOD_DISABLED", "the development sign-in is off here")
            name = request.development_name
            if not name or len(name) > 56:
                raise InvalidArgument(
                    "FIELD_INVALID", "development_name is a listed staff name", {"field": "development_name"}
                )
            found = await self._staff.named(name)
            if found is None:
                raise PermissionDenied("STAFF_NOT_LISTED", "the staff list does not name this person")
            member = found
        return self._session(member, now=now, signed_in_at=now, session=secrets.token_urlsafe(16))

    async def sign_out(self, caller: Caller, revocations: SessionRevocations, *, now: int) -> None:
        """End the caller's staff session until its last token could have expired."""
        if not caller.session:
            return  # a staff token of no door session (minted by a tool): it expires by itself
        ends = (
            caller.signed_in_at + self._policy.session_max_seconds
            if caller.signed_in_at
            else caller.expires_at
        )
        await revocations.revoke(caller.session, max(1, max(ends, caller.expires_at) - now + 60))

    async def renew(self, caller: Caller, *, now: int) -> staff_pb2.StaffSession:
        member = await self._staff.named(caller.subject)
        if member is None:
            raise PermissionDenied("STAFF_NOT_LISTED", "the staff list no longer names you")
        if not caller.signed_in_at or now - caller.signed_in_at >= self._policy.session_max_seconds:
            raise Unauthenticated("SESSION_EXPIRED", "the staff session is over: sign in again")
        # The same session (its id) through every renewal: signing out ends them all.
        return self._session(
            member,
            now=now,
            signed_in_at=caller.signed_in_at,
            session=caller.session or secrets.token_urlsafe(16),
        )

    def _session(
        self, member: StaffMember, *, now: int, signed_in_at: int, session: str
    ) -> staff_pb2.StaffSession:
        session_end = signed_in_at + self._policy.session_max_seconds
        ttl = max(1, min(self._policy.token_ttl_seconds, session_end - now))
        token = mint_token(
            self._keys,
            member.name,
            sorted(member.roles),
            now=now,
            ttl_seconds=ttl,
            signed_in_at=signed_in_at,
            session=session,
        )
        return staff_pb2.StaffSession(
            staff=member.name,
            roles=sorted(r.value for r in member.roles),
            token=token,
            expire_time=_stamp(now + ttl),
            renew_time=_stamp(now + ttl // 2),
            session_end_time=_stamp(session_end),
        )


# --- The door and its forwarding. ---


@dataclass
class _Noted:
    targets: Targets
    why: str


class StaffDoor(FrontDoor):
    """The players' front door's checks, for staff tokens, and the record of each staff action."""

    def __init__(self, *args: Any, audit: StaffAudit, clock_now: Callable[[], float], **kwargs: Any) -> None:
        super().__init__(*args, admit=admit_staff, sign_ins=frozenset({SIGN_IN.lstrip("/")}), **kwargs)
        self._audit = audit
        self._now = clock_now
        self._noted: weakref.WeakKeyDictionary[RequestContext[Any, Any], _Noted] = weakref.WeakKeyDictionary()

    def note(self, ctx: RequestContext[Any, Any], request: Message) -> None:
        """Before a call is forwarded: what it names and why; a change without a why is refused."""
        method = f"/{ctx.method.service_name}/{ctx.method.name}"
        noted = self._noted[ctx] = _Noted(targets_of(request), "")
        noted.why = reason_of_header(ctx.request_headers)  # what it named is recorded even if refused
        why = noted.why
        if method in MUTATING and not why:
            raise InvalidArgument(
                "STAFF_REASON_REQUIRED",
                f"say why in the {REASON_HEADER} header: every staff change is recorded with its reason",
                {"field": REASON_HEADER},
            )

    async def before_change(self, ctx: RequestContext[Any, Any]) -> None:
        """A change (noted already: its targets and why) is in the trail before it goes on: its
        ASKED record is written now, or the change is refused UNAVAILABLE and nothing is changed."""
        full = f"/{ctx.method.service_name}/{ctx.method.name}"
        noted = self._noted.get(ctx)
        caller = self.call_of(ctx).caller
        if full not in MUTATING or noted is None or caller is None:
            return
        event = staff_event(
            caller,
            full,
            targets=noted.targets,
            why=noted.why,
            code=ASKED,
            reason="",
            mutating=True,
            now=self._now(),
        )
        if not await self._audit.record_now(event):
            raise Unavailable(
                "UNAVAILABLE",
                "the audit trail cannot record this change now, so nothing was changed; try again",
                {"dependency": "history"},
            )

    def note_answer(self, ctx: RequestContext[Any, Any], reply: Message) -> None:
        """A change's answer names what it changed (the release a decision decided, its player and
        case): recorded with the call."""
        noted = self._noted.get(ctx)
        if noted is not None and f"/{ctx.method.service_name}/{ctx.method.name}" in MUTATING:
            targets_of(reply, found=noted.targets)

    async def ended(
        self, call: GatewayCall, ctx: RequestContext[Any, Any], final: ConnectError | None
    ) -> None:
        noted = self._noted.pop(ctx, None)
        full = f"/{call.method}"
        if call.caller is None or full in UNRECORDED:
            return
        targets = noted.targets if noted is not None else Targets()
        mutating = full in MUTATING
        if final is None and not mutating and not targets.personal:
            return
        why = noted.why if noted is not None else _quiet_reason(ctx)
        await self._write(call.caller, full, targets, why, final, mutating)

    async def refused(
        self, method: str, ctx: RequestContext[Any, Any], caller: Caller | None, refusal: ConnectError
    ) -> None:
        full = f"/{method}"
        if caller is None or full in UNRECORDED:
            return
        await self._write(caller, full, Targets(), _quiet_reason(ctx), refusal, full in MUTATING)

    async def signed_in_or_out(self, caller: Caller, method: str) -> None:
        """A sign-in (the door made the caller from the allow-list) or a sign-out, recorded."""
        await self._write(caller, method, Targets(), "", None, False)

    async def _write(
        self,
        caller: Caller,
        method: str,
        targets: Targets,
        why: str,
        final: ConnectError | None,
        mutating: bool,
    ) -> None:
        event = staff_event(
            caller,
            method,
            targets=targets,
            why=why,
            code=code_of(final),
            reason=(connect_errors.reason_of_connect(final) or "") if final is not None else "",
            mutating=mutating,
            now=self._now(),
        )
        await self._audit.record(event)


def _quiet_reason(ctx: RequestContext[Any, Any]) -> str:
    try:
        return reason_of_header(ctx.request_headers)
    except InvalidArgument:
        return ""


class StaffForwarder(Forwarder):
    """The staff's calls, forwarded with the staff member's own token; each noted for the record."""

    async def _before_forwarding(self, ctx: Any) -> None:
        door = self._door
        assert isinstance(door, StaffDoor)
        await door.before_change(ctx)  # noted by `_checked`: a change is in the trail before it goes on

    async def _unary(self, method: Any, request: Message, ctx: Any) -> Message:
        reply = await super()._unary(method, request, ctx)
        door = self._door
        assert isinstance(door, StaffDoor)
        door.note_answer(ctx, reply)
        return reply

    def _checked(self, request: Message, ctx: Any) -> str:
        door = self._door
        assert isinstance(door, StaffDoor)
        call = door.call_of(ctx)
        call.player  # noqa: B018 - a token is required (UNAUTHENTICATED otherwise)
        door.note(ctx, request)
        return call.token


# --- StaffGatewayService. ---

Alerts = Callable[[], Awaitable[staff_pb2.ListFiringAlertsResponse]]


def prometheus_alerts(url: str) -> Alerts:
    """The alerts firing now at the operator's Prometheus (its `/api/v1/alerts`)."""

    def fetch() -> staff_pb2.ListFiringAlertsResponse:
        endpoint = url.rstrip("/") + "/api/v1/alerts"
        try:
            with urllib.request.urlopen(endpoint, timeout=ALERTS_TIMEOUT_SECONDS) as answer:
                body = json.loads(answer.read(2_000_000))
        except (urllib.error.URLError, OSError, ValueError) as error:
            raise Unavailable(
                "UNAVAILABLE", "Prometheus did not answer", {"dependency": "prometheus"}
            ) from error
        reply = staff_pb2.ListFiringAlertsResponse(configured=True)
        for alert in (body.get("data") or {}).get("alerts") or []:
            if not isinstance(alert, dict) or alert.get("state") != "firing":
                continue
            labels = alert.get("labels") or {}
            notes = alert.get("annotations") or {}
            item = staff_pb2.FiringAlert(
                name=str(labels.get("alertname", ""))[:200],
                severity=str(labels.get("severity", ""))[:50],
                summary=str(notes.get("summary", ""))[:500],
            )
            active = alert.get("activeAt")
            if isinstance(active, str):
                with contextlib.suppress(ValueError):
                    item.active_since.FromDatetime(datetime.fromisoformat(active.replace("Z", "+00:00")))
            reply.alerts.append(item)
        return reply

    async def alerts() -> staff_pb2.ListFiringAlertsResponse:
        return await asyncio.to_thread(fetch)

    return alerts


async def no_alerts() -> staff_pb2.ListFiringAlertsResponse:
    return staff_pb2.ListFiringAlertsResponse(configured=False)


class StaffGatewayApi:
    def __init__(
        self,
        door: StaffDoor,
        sign_ins: StaffSignIns,
        alerts: Alerts,
        clock: Callable[[], float],
        revocations: SessionRevocations,
    ) -> None:
        self._door = door
        self._revocations = revocations
        self._sign_ins = sign_ins
        self._alerts = alerts
        self._clock = clock

    async def get_staff_sign_in_options(
        self, request: staff_pb2.GetStaffSignInOptionsRequest, ctx: Any
    ) -> staff_pb2.GetStaffSignInOptionsResponse:
        return self._sign_ins.options()

    async def staff_sign_in(
        self, request: staff_pb2.StaffSignInRequest, ctx: Any
    ) -> staff_pb2.StaffSignInResponse:
        now = int(self._clock())
        session = await self._sign_ins.sign_in(request, now=now)
        log.info(
            "staff signed in",
            staff=session.staff,
            roles=list(session.roles),
            method=request.WhichOneof("method"),
        )
        from service_runtime.auth import Role

        caller = Caller(
            subject=session.staff, roles=frozenset(Role(r) for r in session.roles), expires_at=now
        )
        await self._door.signed_in_or_out(caller, SIGN_IN)
        return staff_pb2.StaffSignInResponse(session=session)

    async def renew_staff_token(
        self, request: staff_pb2.RenewStaffTokenRequest, ctx: Any
    ) -> staff_pb2.RenewStaffTokenResponse:
        caller = self._door.call_of(ctx).player
        session = await self._sign_ins.renew(caller, now=int(self._clock()))
        return staff_pb2.RenewStaffTokenResponse(session=session)

    async def staff_sign_out(
        self, request: staff_pb2.StaffSignOutRequest, ctx: Any
    ) -> staff_pb2.StaffSignOutResponse:
        caller = self._door.call_of(ctx).player
        await self._sign_ins.sign_out(caller, self._revocations, now=int(self._clock()))
        log.info("staff signed out", staff=caller.subject)
        await self._door.signed_in_or_out(caller, SIGN_OUT)
        return staff_pb2.StaffSignOutResponse()

    async def list_firing_alerts(
        self, request: staff_pb2.ListFiringAlertsRequest, ctx: Any
    ) -> staff_pb2.ListFiringAlertsResponse:
        return await self._alerts()
