"""Players' profiles: the display name other players see at the tables, in chat and in hand histories,
and the Telegram photo their seats show where they allow it.

The lobby owns them. A player without a profile is given one on first need (GetMyProfile, or a table
shard's AuthorizeSeat before a seat): the sign-in's suggestion, made unique with a number when
another player has it, or `Player <number>`; never the player id. SetDisplayName changes the name
(the rules are `display_names`), idempotent by request id, at most once a minute. The gateway's
Telegram sign-in records the photo Telegram gave (RecordSignInPhoto; only a Telegram photo URL is
kept, `avatars`), and the player turns showing it off and on (SetShowAvatar); both idempotent by
request id.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import math
import random
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from service_runtime.auth import Caller
from service_runtime.errors import AlreadyExists, FailedPrecondition, InvalidArgument, Unavailable
from service_runtime.validation import require_player_id
from services.lobby import storage
from services.lobby.avatars import accepted_avatar_url
from services.lobby.catalogue import after_of, page_size_of
from services.lobby.display_names import Random, candidates, name_key, normalise, suggestion_from
from services.lobby.replies import RequestReplies
from services.lobby.rooms import check_id
from services.lobby.storage import Profile

# A player changes their name at most once in this time (the name a profile is made with is no change).
CHANGE_INTERVAL = timedelta(seconds=60)


def _taken(display_name: str) -> AlreadyExists:
    return AlreadyExists(
        "DISPLAY_NAME_TAKEN", f"another player is called '{display_name}'", {"field": "display_name"}
    )


# FindPlayers (staff): a query is a player id or the start of a display name, this long at most.
MAX_FIND_QUERY = 64
_FIND_TOKEN_PREFIX = "find:"


def _find_token(key: str, player_id: str) -> str:
    return _FIND_TOKEN_PREFIX + base64.urlsafe_b64encode(json.dumps([key, player_id]).encode()).decode()


def _find_after(page_token: str) -> tuple[str, str] | None:
    text = after_of(page_token, _FIND_TOKEN_PREFIX)
    if not text:
        return None
    try:
        key, player_id = json.loads(base64.urlsafe_b64decode(text.encode()))
        if isinstance(key, str) and isinstance(player_id, str):
            return key, player_id
    except (binascii.Error, ValueError, TypeError):
        pass
    raise InvalidArgument("PAGE_TOKEN_INVALID", "the page token was not issued by this RPC")


def profile_to_json(profile: Profile) -> str:
    return json.dumps(
        {
            "player_id": profile.player_id,
            "display_name": profile.display_name,
            "update_time": profile.update_time.isoformat(),
            "avatar_url": profile.avatar_url,
            "show_avatar": profile.show_avatar,
        }
    )


def profile_from_json(text: str) -> Profile:
    """A stored reply's profile (a reply stored before profiles had avatars reads as none, shown)."""
    raw = json.loads(text)
    return Profile(
        raw["player_id"],
        raw["display_name"],
        datetime.fromisoformat(raw["update_time"]),
        avatar_url=str(raw.get("avatar_url", "")),
        show_avatar=bool(raw.get("show_avatar", True)),
    )


class Profiles:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        replies: RequestReplies,
        clock: Callable[[], datetime],
        rng: Random | None = None,
    ) -> None:
        self._sessions = sessions
        self._replies = replies
        self._clock = clock
        self._rng: Random = rng if rng is not None else random.SystemRandom()

    async def ensure_profile(self, player_id: str, suggestion: str | None) -> Profile:
        """The player's profile; made first if there is none, with the first free name of
        `candidates(suggestion)` (then of the generated `Player <number>`). Concurrent first calls
        for one player all end with the one profile: whoever inserts second finds it."""
        require_player_id(player_id, "player_id")
        async with self._sessions() as session:
            found = await storage.get_profile(session, player_id)
        if found is not None:
            return found
        names = itertools.chain(candidates(suggestion, self._rng), candidates(None, self._rng))
        for name in names:
            key = name_key(name)
            try:
                async with self._sessions.begin() as session:
                    found = await storage.get_profile(session, player_id)
                    if found is not None:
                        return found
                    if await storage.name_owner(session, key) is not None:
                        continue
                    profile = Profile(player_id, name, self._clock())
                    await storage.insert_profile(session, profile, key)
                return profile
            except IntegrityError:
                # A twin call made this player's profile (the next pass finds it), or another
                # player took the name in the meantime (the next candidate then).
                continue
        async with self._sessions() as session:
            found = await storage.get_profile(session, player_id)
        if found is not None:
            return found
        raise Unavailable("UNAVAILABLE", "no free display name was found; retry")

    async def find(self, query: str, *, page_size: int, page_token: str) -> tuple[list[Profile], str]:
        """Staff looking a player up: the player whose id is `query`, and those whose display name
        starts with it (as names are compared: case and width folded), by name; a page of them."""
        text = query.strip()
        if not text:
            raise InvalidArgument("FIELD_REQUIRED", "query is required", {"field": "query"})
        if len(text) > MAX_FIND_QUERY or any(not ch.isprintable() for ch in text):
            raise InvalidArgument(
                "FIELD_INVALID",
                f"query is a player id or the start of a name of 1-{MAX_FIND_QUERY} printable characters",
                {"field": "query"},
            )
        size = page_size_of(page_size)
        after = _find_after(page_token)
        async with self._sessions() as session:
            rows = await storage.find_profiles(
                session, player_id=text, key_prefix=name_key(text), after=after, limit=size + 1
            )
        found = [Profile(player_id, name, self._clock()) for _, player_id, name in rows[:size]]
        token = _find_token(rows[size - 1][0], rows[size - 1][1]) if len(rows) > size else ""
        return found, token

    async def set_display_name(self, caller: Caller, request_id: str, fingerprint: str, name: str) -> Profile:
        """The caller's profile with `name` (normalised): DISPLAY_NAME_INVALID, DISPLAY_NAME_TAKEN
        when another player has it (one's own name in another case or spacing is fine),
        DISPLAY_NAME_CHANGED_RECENTLY within a minute of the last change."""
        check_id(request_id, "request_id")
        player_id = caller.subject
        display_name = normalise(name)
        key = name_key(display_name)

        async def work(session: AsyncSession) -> str:
            now = self._clock()
            current = await storage.get_profile(session, player_id, for_update=True)
            owner = await storage.name_owner(session, key)
            if owner is not None and owner != player_id:
                raise _taken(display_name)
            if current is None:
                profile = Profile(player_id, display_name, now, now)
                await storage.insert_profile(session, profile, key)
                return profile_to_json(profile)
            if current.display_name == display_name:
                return profile_to_json(current)  # nothing to change
            if current.name_changed_at is not None and now < current.name_changed_at + CHANGE_INTERVAL:
                wait = math.ceil((current.name_changed_at + CHANGE_INTERVAL - now).total_seconds())
                raise FailedPrecondition(
                    "DISPLAY_NAME_CHANGED_RECENTLY",
                    f"the display name was changed less than a minute ago; retry in {wait} s",
                    {"retry_after_seconds": str(wait)},
                )
            profile = replace(current, display_name=display_name, update_time=now, name_changed_at=now)
            await storage.update_profile(session, profile, key)
            return profile_to_json(profile)

        try:
            reply = await self._replies.once("SetDisplayName", player_id, request_id, fingerprint, work)
        except IntegrityError as exc:
            # Another player took the name between our check and our write.
            raise _taken(display_name) from exc
        return profile_from_json(reply)

    async def record_sign_in_photo(
        self, caller: Caller, request_id: str, fingerprint: str, photo_url: str
    ) -> Profile:
        """The caller's profile with the photo their Telegram sign-in gave: kept when it is a Telegram
        photo URL (`avatars.accepted_avatar_url`), else dropped (the profile then has none). The
        profile is made first if there is none (as GetMyProfile would). Whether the seats show it
        is the player's switch, untouched."""
        check_id(request_id, "request_id")
        await self.ensure_profile(caller.subject, suggestion_from(caller.suggested_name, caller.subject))
        kept = accepted_avatar_url(photo_url)
        return await self._change_avatar(
            "RecordSignInPhoto", caller, request_id, fingerprint, lambda p: replace(p, avatar_url=kept)
        )

    async def set_show_avatar(self, caller: Caller, request_id: str, fingerprint: str, show: bool) -> Profile:
        """The caller's profile with their photo shown at their seats or not (from their next seat)."""
        check_id(request_id, "request_id")
        await self.ensure_profile(caller.subject, suggestion_from(caller.suggested_name, caller.subject))
        return await self._change_avatar(
            "SetShowAvatar", caller, request_id, fingerprint, lambda p: replace(p, show_avatar=show)
        )

    async def _change_avatar(
        self,
        method: str,
        caller: Caller,
        request_id: str,
        fingerprint: str,
        change: Callable[[Profile], Profile],
    ) -> Profile:
        player_id = caller.subject

        async def work(session: AsyncSession) -> str:
            current = await storage.get_profile(session, player_id, for_update=True)
            if current is None:  # made just above; never removed
                raise Unavailable("UNAVAILABLE", "the profile is not there yet; retry")
            changed = change(current)
            if (changed.avatar_url, changed.show_avatar) == (current.avatar_url, current.show_avatar):
                return profile_to_json(current)  # nothing to change
            profile = replace(changed, update_time=self._clock())
            await storage.update_avatar(session, profile)
            return profile_to_json(profile)

        return profile_from_json(await self._replies.once(method, player_id, request_id, fingerprint, work))
