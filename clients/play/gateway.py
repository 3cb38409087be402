"""The thin gRPC layer of the client: one method per call it makes, every failure as a `PlayError`
with the status code and the stable reason, so the screens never see grpc."""

from __future__ import annotations

import contextlib
import dataclasses
import uuid
from collections.abc import AsyncIterator, Awaitable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc

from clients.play.identity import Identity
from clients.play.settings import PlaySettings
from clients.play.texts import t
from clients.play.view_model import (
    FairnessReport,
    dealt_positions,
    fairness_report,
    hash_set_check,
    hash_set_line,
    house_cards_opened,
    mismatch_text,
    own_seed_check,
)
from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from poker.history.v1 import history_pb2, history_pb2_grpc
from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from service_runtime.clients import create_channel, reason_of
from service_runtime.tls import TlsFiles
from services.fairness.verification import (
    DealtCard,
    MalformedValue,
    check_shown_commitment,
    openings_from,
    published_hand,
    verify_hand,
)

T = TypeVar("T")

# Minor units per chip of each purchase source (protos/poker/cashier/v1/cashier.proto, PaymentSource).
_PURCHASE: dict[int, tuple[int, int]] = {
    common_pb2.CHIP_POOL_GRAM: (cashier_pb2.PAYMENT_SOURCE_GRAM, 10**6),
    common_pb2.CHIP_POOL_MPX: (cashier_pb2.PAYMENT_SOURCE_MPX, 10**8),
}


class PlayError(Exception):
    """A call that failed: the gRPC status name, the platform's stable reason, and the server's words."""

    def __init__(self, code: str, reason: str, message: str) -> None:
        super().__init__(f"{code} {reason}: {message}" if reason else f"{code}: {message}")
        self.code = code
        self.reason = reason
        self.message = message

    @property
    def unimplemented(self) -> bool:
        return self.code == "UNIMPLEMENTED"

    @property
    def transient(self) -> bool:
        """A dropped link or a shard that moved: worth re-opening (the seat reserve keeps the seat)."""
        return self.code in ("UNAVAILABLE", "CANCELLED", "DEADLINE_EXCEEDED", "INTERNAL", "UNKNOWN") or (
            self.reason == "SHARD_NOT_OWNER"
        )


def play_error(error: grpc.aio.AioRpcError) -> PlayError:
    return PlayError(error.code().name, reason_of(error), str(error.details() or ""))


async def _call(call: Awaitable[T]) -> T:
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        raise play_error(error) from None


def new_request_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Seat:
    """Where the client sits: the table, the shard that runs it, and the seat."""

    table_id: str
    address: str
    seat: int


class Platform:
    """Channels to the lobby, cashier, history, fairness and the table shards, with the caller's token."""

    def __init__(self, settings: PlaySettings, identity: Identity) -> None:
        self.settings = settings
        self.identity = identity
        timeout = settings.request_timeout_seconds
        self._channels: dict[str, grpc.aio.Channel] = {}
        self.lobby = lobby_pb2_grpc.LobbyServiceStub(self._channel(settings.lobby_address))
        self.cashier = cashier_pb2_grpc.CashierServiceStub(self._channel(settings.cashier_address))
        self.history = history_pb2_grpc.HistoryServiceStub(self._channel(settings.history_address))
        self.fairness = fairness_pb2_grpc.FairnessServiceStub(self._channel(settings.fairness_address))
        self._payments: cashier_pb2_grpc.CashierServiceStub | None = None
        if identity.payments_token is not None:
            channel = create_channel(
                settings.cashier_address,
                timeout_seconds=timeout,
                token=identity.payments_token,
                tls=TlsFiles.from_settings(settings),
            )
            self._channels["payments"] = channel
            self._payments = cashier_pb2_grpc.CashierServiceStub(channel)

    def _channel(self, address: str) -> grpc.aio.Channel:
        channel = self._channels.get(address)
        if channel is None:
            channel = create_channel(
                address,
                timeout_seconds=self.settings.request_timeout_seconds,
                token=self.identity.token,
                tls=TlsFiles.from_settings(self.settings),
            )
            self._channels[address] = channel
        return channel

    def table(self, address: str) -> table_pb2_grpc.TableServiceStub:
        return table_pb2_grpc.TableServiceStub(self._channel(address))

    async def close(self) -> None:
        for channel in self._channels.values():
            with contextlib.suppress(Exception):
                await channel.close()
        self._channels.clear()

    # -------------------------------------------------------------------------------- cashier

    async def balances(self) -> cashier_pb2.GetBalancesResponse:
        return await _call(self.cashier.GetBalances(cashier_pb2.GetBalancesRequest()))

    @property
    def can_buy_chips(self) -> bool:
        return self._payments is not None

    async def buy_chips(self, pool: int, amount: int, payment_reference: str) -> cashier_pb2.PurchaseResponse:
        """Development only: record a purchase as the payments gateway would (its service token)."""
        if self._payments is None:
            raise PlayError("PERMISSION_DENIED", "ROLE_REQUIRED", t("signin.no_purchases"))
        source, minor = _PURCHASE[pool]
        request = cashier_pb2.PurchaseRequest(
            payment_reference=payment_reference,
            player_id=self.identity.player_id,
            source=source,  # type: ignore[arg-type]
            amount_minor=amount * minor,
        )
        return await _call(self._payments.Purchase(request))

    # ---------------------------------------------------------------------------------- lobby

    async def rooms(self) -> list[lobby_pb2.Room]:
        rooms: list[lobby_pb2.Room] = []
        token = ""
        while True:
            reply = await _call(
                self.lobby.ListRooms(
                    lobby_pb2.ListRoomsRequest(page=common_pb2.PageRequest(page_size=500, page_token=token))
                )
            )
            rooms.extend(reply.rooms)
            token = reply.page.next_page_token
            if not token:
                return rooms

    async def profile(self) -> lobby_pb2.PlayerProfile:
        """The caller's profile: the display name the other players see (GetMyProfile)."""
        reply: lobby_pb2.GetMyProfileResponse = await _call(
            self.lobby.GetMyProfile(lobby_pb2.GetMyProfileRequest())
        )
        return reply.profile

    async def tables(self, room_id: str) -> list[lobby_pb2.TableSummary]:
        reply = await _call(self.lobby.ListTables(lobby_pb2.ListTablesRequest(room_id=room_id)))
        return list(reply.tables)

    async def join(
        self, room_id: str, table_id: str = "", spectate: bool = False
    ) -> lobby_pb2.JoinTableResponse:
        return await _call(
            self.lobby.JoinTable(
                lobby_pb2.JoinTableRequest(room_id=room_id, table_id=table_id, spectate=spectate)
            )
        )

    # ---------------------------------------------------------------------------------- table

    async def sit_down(
        self, address: str, table_id: str, buy_in: int, request_id: str
    ) -> table_pb2.SitDownResponse:
        return await _call(
            self.table(address).SitDown(
                table_pb2.SitDownRequest(request_id=request_id, table_id=table_id, buy_in=buy_in)
            )
        )

    async def act(
        self, address: str, table_id: str, hand_id: str, kind: int, amount: int, request_id: str
    ) -> table_pb2.ActResponse:
        request = table_pb2.ActRequest(
            request_id=request_id,
            table_id=table_id,
            hand_id=hand_id,
            action=kind,  # type: ignore[arg-type]
            amount=amount,
        )
        return await _call(self.table(address).Act(request))

    async def sit_out(self, address: str, table_id: str, back_in: bool, request_id: str) -> int:
        """SitOut, or SitIn when `back_in` (posting what is owed at once); the seat status after it."""
        stub = self.table(address)
        if back_in:
            reply_in = await _call(
                stub.SitIn(table_pb2.SitInRequest(request_id=request_id, table_id=table_id))
            )
            return int(reply_in.status)
        reply = await _call(stub.SitOut(table_pb2.SitOutRequest(request_id=request_id, table_id=table_id)))
        return int(reply.status)

    async def leave(self, address: str, table_id: str, request_id: str) -> table_pb2.LeaveTableResponse:
        return await _call(
            self.table(address).LeaveTable(
                table_pb2.LeaveTableRequest(request_id=request_id, table_id=table_id)
            )
        )

    async def chat(
        self, address: str, table_id: str, *, text: str = "", sticker_id: str = ""
    ) -> table_pb2.SendChatResponse:
        request = table_pb2.SendChatRequest(request_id=new_request_id(), table_id=table_id)
        if sticker_id:
            request.sticker_id = sticker_id
        else:
            request.text = text
        return await _call(self.table(address).SendChat(request))

    async def set_seed(
        self, address: str, table_id: str, seed: str, request_id: str, *, seed_hash: str = ""
    ) -> str:
        """Add my client seed (or, version 3 first, only its hash) to the next hand's shuffle; the
        hand it goes into."""
        request = table_pb2.SetPlayerSeedRequest(request_id=request_id, table_id=table_id)
        if seed_hash:
            request.client_seed_hash = seed_hash
        else:
            request.client_seed = seed
        reply = await _call(self.table(address).SetPlayerSeed(request))
        hand_id: str = reply.hand_id
        return hand_id

    async def snapshot(self, address: str, table_id: str) -> table_pb2.TableView:
        reply = await _call(
            self.table(address).GetTableSnapshot(table_pb2.GetTableSnapshotRequest(table_id=table_id))
        )
        view: table_pb2.TableView = reply.view
        return view

    async def stream(
        self, address: str, table_id: str, *, spectate: bool
    ) -> AsyncIterator[tuple[Sequence[table_pb2.TableEvent], table_pb2.TableView]]:
        """The personal (or, spectating, the delayed public) view: (the events of one table step, none
        for a full view alone; the view after them)."""
        stub = self.table(address)
        # The token goes in by hand: grpc.aio files an interceptor under its first matching kind only,
        # so `create_channel`'s interceptor adds it to unary calls but never to streams.
        metadata = (("authorization", f"Bearer {self.identity.token()}"),)
        call: Any = (
            stub.SpectateTable(table_pb2.SpectateTableRequest(table_id=table_id), metadata=metadata)
            if spectate
            else stub.WatchTable(table_pb2.WatchTableRequest(table_id=table_id), metadata=metadata)
        )
        try:
            async for message in call:
                yield tuple(message.events), message.view
        except grpc.aio.AioRpcError as error:
            raise play_error(error) from None
        finally:
            call.cancel()

    async def place_house_bets(
        self, address: str, table_id: str, boxes: list[table_pb2.HouseBox], request_id: str
    ) -> table_pb2.PlaceHouseBetsResponse:
        return await _call(
            self.table(address).PlaceHouseBets(
                table_pb2.PlaceHouseBetsRequest(request_id=request_id, table_id=table_id, boxes=boxes)
            )
        )

    async def house_decision(
        self, address: str, request: table_pb2.MakeHouseDecisionRequest
    ) -> table_pb2.MakeHouseDecisionResponse:
        return await _call(self.table(address).MakeHouseDecision(request))

    # -------------------------------------------------------------------------------- history

    async def my_hands(self, page_size: int = 50) -> list[history_pb2.HandSummary]:
        reply = await _call(
            self.history.ListMyHands(
                history_pb2.ListMyHandsRequest(page=common_pb2.PageRequest(page_size=page_size))
            )
        )
        return list(reply.hands)

    async def balance_changes(self, page_size: int = 50) -> list[history_pb2.BalanceChange]:
        reply = await _call(
            self.history.ListBalanceChanges(
                history_pb2.ListBalanceChangesRequest(page=common_pb2.PageRequest(page_size=page_size))
            )
        )
        return list(reply.changes)

    async def hand(self, hand_id: str) -> history_pb2.HandRecord:
        reply = await _call(self.history.GetHand(history_pb2.GetHandRequest(hand_id=hand_id)))
        record: history_pb2.HandRecord = reply.hand
        return record

    # ------------------------------------------------------------------------------- fairness

    async def verify(
        self,
        record: history_pb2.HandRecord,
        shown_commitment: str,
        own_seed: str = "",
        seed_hashes: Sequence[tuple[int, str]] | None = None,
    ) -> FairnessReport:
        """Fetch the reveal and recompute the deck here (docs/fairness.md), so the verdict does not rest
        on the server's word; check the cards the player saw and the commitment shown before the deal."""
        reveal = (
            await _call(self.fairness.GetReveal(fairness_pb2.GetRevealRequest(hand_id=record.hand_id)))
        ).reveal
        dealt = [DealtCard(position, card) for position, card in dealt_positions(record)]
        server = await _call(
            self.fairness.VerifyHand(
                fairness_pb2.VerifyHandRequest(
                    hand_id=record.hand_id,
                    dealt_cards=[
                        fairness_pb2.DealtCard(position=p.position, card_index=p.card) for p in dealt
                    ],
                    shown_commitment=shown_commitment,
                )
            )
        )
        published_record = reveal.commitment
        mismatch: str | None = None
        computed = ""
        checked = 0
        opened = 0
        try:
            published = published_hand(bytes(reveal.server_seed), published_record)
            # Version 3: the openings of the positions this player saw, checked here against the
            # commitment made before the deal (docs/fairness.md, version 3).
            published = dataclasses.replace(published, openings=openings_from(reveal.openings))
        except MalformedValue as bad:
            first = bad.result().first_mismatch
            mismatch = mismatch_text(first) if first is not None else t("fairness.malformed")
        else:
            result = verify_hand(published, dealt)
            computed, checked = result.computed_commitment, result.dealt_cards_checked
            opened = result.openings_checked
            first = result.first_mismatch
            if first is None and published.shuffle_version == 3 and record.HasField("house_game"):
                # A house round deals in its game's own order: each card of the record must be
                # one of the cards opened to the player.
                first, checked = house_cards_opened(record, published.openings)
            if first is None and shown_commitment:
                first = check_shown_commitment(shown_commitment, published_record.commitment)
            if (
                first is None
                and record.seed_commitment
                and record.seed_commitment != published_record.commitment
            ):
                first = check_shown_commitment(record.seed_commitment, published_record.commitment)
            mismatch = mismatch_text(first) if first is not None else None
        own_seed_line = ""
        if own_seed:
            entries = [
                (int(e.seat), e.player_id, bytes(e.client_seed)) for e in published_record.client_seeds
            ]
            seed_ok, own_seed_line = own_seed_check(entries, self.identity.player_id, own_seed)
            if not seed_ok and mismatch is None:
                mismatch = own_seed_line
        hashes_line = ""
        if seed_hashes is not None:
            # Version 3: every seed in the deal was fixed (by its hash) before mine was disclosed.
            revealed = [(int(e.seat), bytes(e.client_seed)) for e in published_record.client_seeds]
            problem = hash_set_check(seed_hashes, revealed, published_record.commitment)
            hashes_line = problem or hash_set_line([seat for seat, _ in seed_hashes])
            if problem is not None and mismatch is None:
                mismatch = problem
        return fairness_report(
            hand_id=record.hand_id,
            commitment=published_record.commitment,
            shuffle_version=published_record.shuffle_version or 1,
            client_seed_seats=[int(s.seat) for s in published_record.client_seeds],
            mismatch=mismatch,
            dealt_checked=checked,
            computed_commitment=computed,
            server_verdict_pass=server.verdict == fairness_pb2.VERDICT_PASS,
            own_seed_line=own_seed_line,
            openings_checked=opened,
            hash_set_line=hashes_line,
        )
