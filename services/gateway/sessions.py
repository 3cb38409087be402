"""Sign-in and renewal: from verified Telegram initData (or a development name) to a player token.

No I/O but the replay guard and, at a Telegram sign-in with a photo, telling the lobby the photo
(`sign_in_photos`). The token is a platform player token (`service_runtime.auth`): subject
the player id, the single role `player`, a short lifetime, and the device and network signals as
keyed digests, when the person signed in (`sat`), and the session it belongs to (`sid`, random per
sign-in, which SignOut revokes). A renewal re-issues the same subject for a still
valid player token of a session younger than `session_max_seconds`; a token with any other role is
never renewed (a gateway session never holds more rights than the player has).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from google.protobuf import timestamp_pb2

from poker.gateway.v1 import gateway_pb2
from service_runtime.auth import Caller, Role, TokenKeys, mint_token
from service_runtime.errors import FailedPrecondition, InvalidArgument, PermissionDenied, Unauthenticated
from services.gateway import identity
from services.gateway.replay import ReplayGuard
from services.gateway.revocations import SessionRevocations
from services.gateway.sign_in_photos import NoPhotos, SignInPhotos
from services.gateway.telegram import verify_init_data


@dataclass(frozen=True)
class Client:
    """What the gateway knows of the browser making a call (never logged, never stored)."""

    address: str
    user_agent: str


@dataclass(frozen=True)
class SignInPolicy:
    bot_token: str
    init_data_max_age_seconds: int
    token_ttl_seconds: int
    development_sign_in: bool
    signal_key: bytes
    # How long after the sign-in a session may still be renewed; then the person signs in again.
    session_max_seconds: int = 86_400


class Sessions:
    def __init__(
        self,
        keys: TokenKeys,
        policy: SignInPolicy,
        replay: ReplayGuard,
        photos: SignInPhotos | None = None,
    ) -> None:
        self._keys = keys
        self._policy = policy
        self._replay = replay
        self._photos: SignInPhotos = photos if photos is not None else NoPhotos()

    def options(self) -> gateway_pb2.GetSignInOptionsResponse:
        return gateway_pb2.GetSignInOptionsResponse(
            telegram=bool(self._policy.bot_token),
            development=self._policy.development_sign_in,
            token_ttl_seconds=self._policy.token_ttl_seconds,
        )

    async def sign_in(
        self, request: gateway_pb2.SignInRequest, client: Client, *, now: int
    ) -> gateway_pb2.Session:
        device_id = identity.check_device_id(request.device_id)
        method = request.WhichOneof("method")
        photo = photo_request = ""
        if method == "telegram_init_data":
            if not self._policy.bot_token:
                raise FailedPrecondition(
                    "SIGN_IN_METHOD_DISABLED", "this gateway has no Telegram bot configured"
                )
            user = verify_init_data(
                request.telegram_init_data,
                self._policy.bot_token,
                now=now,
                max_age_seconds=self._policy.init_data_max_age_seconds,
            )
            # Kept until the initData would fail the age check anyway.
            await self._replay.claim(user.init_data_hash, self._policy.init_data_max_age_seconds + 120)
            player = identity.telegram_player_id(user.user_id)
            # Only a suggestion for the lobby's profile (GetMyProfile): never the player id.
            name = identity.display_name(user.first_name or user.username or "", "")
            # The lobby keeps the photo (a Telegram one only) for the seats, where the player allows it.
            photo = user.photo_url
            photo_request = f"sign-in-{user.init_data_hash[:40]}"
        elif method == "development_name":
            if not self._policy.development_sign_in:
                raise FailedPrecondition("SIGN_IN_METHOD_DISABLED", "there is no sign-in by name here")
            player = identity.development_player_id(request.development_name)
            name = player
        else:
            raise InvalidArgument("FIELD_REQUIRED", "sign in with telegram_init_data", {"field": "method"})
        session = self._session(
            player, name, device_id, client, now, signed_in_at=now, session=secrets.token_urlsafe(18)
        )
        if photo:
            # A sign-in without a photo (Telegram gives one only to some launches) leaves the one the
            # lobby has.
            await self._photos.record(session.token, photo_request, photo)
        return session

    def renew(
        self, caller: Caller, request: gateway_pb2.RenewTokenRequest, client: Client, *, now: int
    ) -> gateway_pb2.Session:
        if caller.roles != frozenset({Role.PLAYER}):
            raise PermissionDenied("ROLE_REQUIRED", "only a player token is renewed here")
        device_id = identity.check_device_id(request.device_id)
        # A stolen token must not be renewable for ever: a session ends `session_max_seconds` after
        # its sign-in (a token that does not say when is not a gateway session: sign in).
        started = caller.signed_in_at
        if not started or now >= started + self._policy.session_max_seconds:
            raise Unauthenticated("SESSION_EXPIRED", "the session is over; sign in again")
        return self._session(
            caller.subject,
            caller.suggested_name,
            device_id,
            client,
            now,
            signed_in_at=started,
            session=caller.session or secrets.token_urlsafe(18),
        )

    async def sign_out(self, caller: Caller, revocations: SessionRevocations, *, now: int) -> None:
        """End the caller's session until its last token could have expired (its session's end)."""
        if not caller.session:
            return  # a token of no gateway session: nothing to end, it expires by itself
        ends = (
            caller.signed_in_at + self._policy.session_max_seconds
            if caller.signed_in_at
            else caller.expires_at
        )
        await revocations.revoke(caller.session, max(1, max(ends, caller.expires_at) - now + 60))

    def _session(
        self,
        player: str,
        name: str,
        device_id: str,
        client: Client,
        now: int,
        *,
        signed_in_at: int,
        session: str,
    ) -> gateway_pb2.Session:
        # No token outlives its session.
        ttl = min(self._policy.token_ttl_seconds, signed_in_at + self._policy.session_max_seconds - now)
        key = self._policy.signal_key
        token = mint_token(
            self._keys,
            player,
            (Role.PLAYER,),
            now=now,
            ttl_seconds=ttl,
            device=identity.device_signal(key, device_id, client.user_agent),
            network=identity.network_signal(key, client.address),
            signed_in_at=signed_in_at,
            session=session,
            suggested_name=name,
        )
        return gateway_pb2.Session(
            player_id=player,
            display_name=name,
            token=token,
            expire_time=_timestamp(now + ttl),
            renew_time=_timestamp(now + ttl // 2),
        )


def _timestamp(seconds: int) -> Any:
    return timestamp_pb2.Timestamp(seconds=seconds)
