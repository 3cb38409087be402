"""Fair-play use cases of the history service (rules 17): weighing each recorded hand, the cases
for operators, and holds.

RecordHand stores a poker hand with what it adds to its pairs' totals and its players' decision
times (`additions`, written by `fair_play_storage.insert_weighed_hand` in the hand's own
statement), then, in the same transaction (a hand and what it revealed are stored together or not
at all), `weigh_hand` asks the pure verdicts (`cases.py`) what the new totals add up to and opens
or updates one case per kind, pool and pair (or player, for automation); a chip-dumping case strong
enough (`holds.is_strong_dumping`) also records, in that transaction, that its players are due an
automatic withdrawals hold, which `holds.AutoHolds` applies after the commit. Reading cases,
holding and releasing players and resolving cases are admin use cases (the access policy says who
may call them); holds are kept by the cashier and audited here.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import datetime

from google.protobuf.timestamp_pb2 import Timestamp
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from poker.history.v1 import history_pb2
from service_runtime.errors import AlreadyExists, FailedPrecondition, InvalidArgument, NotFound, Unavailable
from services.history import cases, detectors, fair_play_storage, hold_storage, release_storage, storage
from services.history.hold_storage import HoldRequest, Resolution
from services.history.holds import (
    ATTEMPTS,
    DETECTOR_ACTOR,
    PLAYER_HELD,
    PLAYER_RELEASED,
    RESOLUTIONS,
    AutoHolds,
    Hold,
    HoldKeeper,
    is_strong_dumping,
    with_holds,
)
from services.history.page_tokens import PageTokens, keyset_position, page_size_of
from services.history.records import check_id, check_text
from services.history.release_storage import ReleaseRow, ReleaseState
from services.history.releases import Releases

__all__ = [
    "CASE_OPENED",
    "DETECTOR_ACTOR",
    "PLAYER_HELD",
    "PLAYER_RELEASED",
    "FairPlayUseCases",
    "HoldKeeper",
]

CASE_OPENED = "FAIR_PLAY_CASE_OPENED"
MAX_REQUEST_ID_LENGTH = 64
MAX_REASON_LENGTH = 128

_KINDS = {
    cases.CaseKind.CHIP_DUMPING: history_pb2.CASE_KIND_CHIP_DUMPING,
    cases.CaseKind.COLLUSION: history_pb2.CASE_KIND_COLLUSION,
    cases.CaseKind.SHARED_DEVICE: history_pb2.CASE_KIND_SHARED_DEVICE,
    cases.CaseKind.AUTOMATION: history_pb2.CASE_KIND_AUTOMATION,
    cases.CaseKind.MULTIWAY_SOFT_PLAY: history_pb2.CASE_KIND_MULTIWAY_SOFT_PLAY,
    cases.CaseKind.WHIPSAW: history_pb2.CASE_KIND_WHIPSAW,
}
_ROLES = {
    cases.Role.SUSPECT: history_pb2.CASE_ROLE_SUSPECT,
    cases.Role.BENEFICIARY: history_pb2.CASE_ROLE_BENEFICIARY,
}


def _timestamp(moment: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(moment)
    return stamp


def _evidence(totals: cases.PairTotals) -> history_pb2.CaseEvidence:
    return history_pb2.CaseEvidence(
        hands_together=totals.hands,
        chips_given=totals.chips_to_second,
        chips_back=totals.chips_to_first,
        chips_given_bb_hundredths=totals.chips_cbb_to_second,
        chips_back_bb_hundredths=totals.chips_cbb_to_first,
        gift_given_bb_hundredths=totals.gift_cbb_to_second,
        gift_back_bb_hundredths=totals.gift_cbb_to_first,
        blatant_given_bb_hundredths=totals.blatant_cbb_to_second,
        blatant_back_bb_hundredths=totals.blatant_cbb_to_first,
        strong_folds_given=totals.strong_folds_to_second,
        strong_folds_back=totals.strong_folds_to_first,
        heads_up_streets=totals.heads_up_streets,
        passive_streets=totals.passive_streets,
        squeezes=totals.squeezes,
        multiway_hands=totals.multiway_hands,
        hands_with_others=totals.hands_with_others,
        shared_device_hands=totals.shared_device_hands,
        shared_network_hands=totals.shared_network_hands,
        blatant_hands_given=totals.blatant_hands_to_second,
        blatant_hands_back=totals.blatant_hands_to_first,
        strong_facing_given=totals.strong_facing_to_second,
        strong_raised_given=totals.strong_raised_to_second,
        strong_facing_others_given=totals.strong_facing_others_to_second,
        strong_raised_others_given=totals.strong_raised_others_to_second,
        strong_facing_back=totals.strong_facing_to_first,
        strong_raised_back=totals.strong_raised_to_first,
        strong_facing_others_back=totals.strong_facing_others_to_first,
        strong_raised_others_back=totals.strong_raised_others_to_first,
        whipsaw_chances=totals.whipsaw_chances,
        whipsaws_given=totals.whipsaws_to_second,
        whipsaws_back=totals.whipsaws_to_first,
    )


def _adds_evidence(kind: cases.CaseKind, pair: detectors.PairEvidence, giver: str) -> bool:
    """Did this hand add evidence of this kind (so it belongs to the case's hands)?"""
    if kind is cases.CaseKind.CHIP_DUMPING:
        return (pair.blatant_to_second if giver == pair.first else pair.blatant_to_first) > 0
    if kind is cases.CaseKind.COLLUSION:
        return pair.passive_streets > 0 or pair.squeezes > 0
    if kind is cases.CaseKind.MULTIWAY_SOFT_PLAY:
        # A strong hand that only called the other's bet.
        return pair.strong_raised_to_second < pair.strong_facing_to_second or (
            pair.strong_raised_to_first < pair.strong_facing_to_first
        )
    if kind is cases.CaseKind.WHIPSAW:
        return bool(pair.whipsaws_to_second or pair.whipsaws_to_first)
    return bool(pair.shared_device or pair.shared_network)


def additions(
    evidence: detectors.HandEvidence, permitted_automation: tuple[str, ...] = ()
) -> tuple[list[tuple[str, str, dict[str, int]]], list[tuple[str, tuple[int, ...]]]]:
    """What the hand adds to its pairs' totals (key order) and to its players' decision times (players
    whose id starts with one of `permitted_automation` are not judged on timing, so not counted)."""
    increments = sorted(
        ((p.first, p.second, cases.increments(p, evidence.big_blind)) for p in evidence.pairs),
        key=lambda item: (item[0], item[1]),
    )
    timings = sorted(
        (t.player_id, t.buckets) for t in evidence.timings if not t.player_id.startswith(permitted_automation)
    )
    return increments, timings


async def weigh_hand(
    session: AsyncSession,
    record: history_pb2.HandRecord,
    evidence: detectors.HandEvidence,
    weighed: fair_play_storage.Weighed,
    now: datetime,
    auto_hold_min_score: float = 0.0,
) -> bool:
    """Open or update the cases the hand's new totals make (`weighed`: what the insert returned);
    True when a chip-dumping case became strong enough (`auto_hold_min_score`, 0: never) to make
    automatic holds due."""
    due = False
    pairs = {(p.first, p.second): p for p in evidence.pairs}
    baselines: dict[str, cases.Baseline] = {}
    for pair_totals in weighed.pairs:
        for giver in cases.givers_to_check(pair_totals):
            if giver not in baselines:
                baselines[giver] = await fair_play_storage.baseline(session, evidence.pool, giver)
        for verdict in cases.verdicts(pair_totals, baselines):
            pair = pairs[(pair_totals.first, pair_totals.second)]
            oriented = pair_totals if verdict.giver == pair_totals.first else pair_totals.flipped()
            adds = _adds_evidence(verdict.kind, pair, verdict.giver)
            found = _evidence(oriented)
            due |= await _save_case(
                session, record, verdict, oriented.pool, found, adds, now, auto_hold_min_score
            )
    for timing in weighed.timings:
        automated = cases.automation(timing)
        if automated is not None:
            found = history_pb2.CaseEvidence(
                decisions_timed=timing.decisions, decision_time_buckets=timing.buckets
            )
            due |= await _save_case(session, record, automated, 0, found, True, now, auto_hold_min_score)
    return due


async def _save_case(
    session: AsyncSession,
    record: history_pb2.HandRecord,
    verdict: cases.Verdict,
    pool: int,
    evidence: history_pb2.CaseEvidence,
    adds: bool,
    now: datetime,
    auto_hold_min_score: float,
) -> bool:
    """Open or update the case; True when it made automatic holds due."""
    case_id = cases.case_id(verdict.kind, pool, verdict.giver, verdict.receiver)
    stored = await fair_play_storage.case_bytes(session, case_id)
    case = history_pb2.FairPlayCase() if stored is None else history_pb2.FairPlayCase.FromString(stored)
    if stored is None:
        case.case_id = case_id
        case.kind = _KINDS[verdict.kind]
        case.pool = pool  # type: ignore[assignment]
        case.open_time.CopyFrom(_timestamp(now))
    del case.players[:]
    case.players.extend(
        history_pb2.CasePlayer(player_id=p.player_id, role=_ROLES[p.role], why=p.why) for p in verdict.players
    )
    case.score = verdict.score
    case.threshold = verdict.threshold
    case.summary = verdict.summary
    case.evidence.CopyFrom(evidence)
    case.last_seen_time.CopyFrom(_timestamp(now))
    if adds or stored is None:
        case.updates += 1
        hand_ids = [*case.hand_ids, record.hand_id][-cases.EVIDENCE_HANDS :]
        del case.hand_ids[:]
        case.hand_ids.extend(hand_ids)
        if record.table_id not in case.table_ids:
            case.table_ids.append(record.table_id)
    await fair_play_storage.save_case(session, case, new=stored is None)
    if stored is None:
        event = history_pb2.AuditEvent(
            event_id=f"case-opened:{case_id}",
            time=_timestamp(now),
            actor=DETECTOR_ACTOR,
            kind=CASE_OPENED,
            subject=case_id,
            details=f"{verdict.kind}: {verdict.summary}"[:4000],
            player_ids=[p.player_id for p in verdict.players],
            table_id=record.table_id,
            hand_ids=list(case.hand_ids),
        )
        await storage.insert_audit_event(session, event, storage.serialise(event))
    if not is_strong_dumping(verdict.kind, verdict.score, auto_hold_min_score):
        return False
    # Strong enough to hold the withdrawals of every player of the case: the suspects and the
    # beneficiary (the chips under review sit in the receiver's wallet; the roles stay as the
    # evidence says). Recorded here, applied after the commit, so RecordHand never waits for it.
    players = [(p.player_id, p.role.value) for p in verdict.players]
    now_us = int(now.timestamp() * 1_000_000)
    return await hold_storage.record_due(session, case_id, players, now_us) > 0


def _hold_pb(hold: Hold) -> history_pb2.PlayerHold:
    return history_pb2.PlayerHold(
        player_id=hold.player_id, held=hold.held, reason=hold.reason, change_time=_timestamp(hold.change_time)
    )


class FairPlayUseCases(Releases):
    """Cases and holds for staff (the access policy says which role calls which); releases wait for
    a second person (`Releases`)."""

    _sessions: async_sessionmaker[AsyncSession]
    _tokens: PageTokens
    _clock: Callable[[], datetime]
    _holds: HoldKeeper | None
    _auto_holds: AutoHolds
    _writing: Callable[[], AbstractAsyncContextManager[AsyncSession]]

    async def list_cases(
        self, kind: int, *, page_size: int, page_token: str
    ) -> tuple[list[history_pb2.FairPlayCase], str]:
        if kind and kind not in history_pb2.CaseKind.values():
            raise InvalidArgument("FIELD_INVALID", "unknown case kind", {"field": "kind"})
        size = page_size_of(page_size)
        name = history_pb2.CaseKind.Name(kind) if kind else ""  # type: ignore[arg-type]
        scope = f"cases\x00{name}"
        after = None
        if page_token:
            after = keyset_position(self._tokens.read(page_token, scope), (int, int))
        async with self._sessions() as session:
            rows = await fair_play_storage.list_cases(session, kind=name, after=after, limit=size + 1)
            shown = [case for _, _, case in rows[:size]]
            ids = [case.case_id for case in shown]
            holds = await hold_storage.holds_of_cases(session, ids)
            resolutions = await hold_storage.resolutions_of_cases(session, ids)
        token = ""
        if len(rows) > size:
            number, updated_us, _ = rows[size - 1]
            token = self._tokens.issue(scope, [updated_us, number])
        found = [
            with_holds(case, holds.get(case.case_id, []), resolutions.get(case.case_id)) for case in shown
        ]
        return found, token

    async def get_case(self, case_id: str) -> history_pb2.FairPlayCase:
        """The case with its automatic holds and the decision on them."""
        check_id(case_id, "case_id")
        async with self._sessions() as session:
            stored = await fair_play_storage.case_bytes(session, case_id)
            if stored is None:
                raise NotFound("CASE_NOT_FOUND", "no fair-play case with this id", {"case_id": case_id})
            holds = await hold_storage.holds_of_cases(session, [case_id])
            resolution = (await hold_storage.resolutions_of_cases(session, [case_id])).get(case_id)
        case = history_pb2.FairPlayCase.FromString(stored)
        return with_holds(case, holds.get(case_id, []), resolution)

    async def resolve_case(
        self, admin: str, request_id: str, case_id: str, resolution: int, reason: str
    ) -> tuple[history_pb2.FairPlayCase, bool, ReleaseRow | None]:
        """ResolveCase: confirm the case's automatic holds, or ask to release them (four-eyes: a
        pending release request finance decides, releases.py); the case as it is afterwards, whether
        this request id was applied before, and a RELEASE's request."""
        self._check_request_id(request_id)
        self._check_reason(reason)
        check_id(case_id, "case_id")
        if not resolution:
            raise InvalidArgument(
                "FIELD_REQUIRED", "resolution is RELEASE or CONFIRM", {"field": "resolution"}
            )
        decided = RESOLUTIONS.get(resolution)
        if decided is None:
            raise InvalidArgument("FIELD_INVALID", "unknown resolution", {"field": "resolution"})
        await self.get_case(case_id)
        if decided is Resolution.RELEASE:
            async with self._sessions() as session:
                asked = await release_storage.release(session, request_id)
            if (
                asked is not None
                and asked.case_release
                and asked.case_id == case_id
                and asked.reason == reason
            ):
                # Asked before (decided since, perhaps rejected): the first answer, nothing new.
                return await self.get_case(case_id), True, asked
        existing = await self._auto_holds.resolve(admin, request_id, case_id, decided, reason)
        release = None
        if decided is Resolution.RELEASE:
            now_us = int(self._clock().timestamp() * 1_000_000)
            release, _ = await self.ask_release(
                ReleaseRow(request_id, True, "", case_id, reason, admin, now_us, ReleaseState.PENDING)
            )
        return await self.get_case(case_id), existing, release

    async def ask_player_release(
        self, admin: str, request_id: str, player_id: str, reason: str, case_id: str
    ) -> tuple[ReleaseRow, bool]:
        """ReleasePlayer: a pending release of the player's hold, for finance to decide."""
        self._check_request_id(request_id)
        check_id(player_id, "player_id")
        self._check_reason(reason)
        if case_id:
            await self.get_case(case_id)
        async with self._sessions() as session:
            if await hold_storage.hold_request(session, request_id) is not None:
                raise _conflict("request_id")  # a HoldPlayer's id
            asked = await release_storage.release(session, request_id)
            current = await hold_storage.latest_hold_change(session, player_id)
        if asked is None and (current is None or not current.held):
            # History places every operator hold, so it knows this player holds none now.
            raise FailedPrecondition(
                "PLAYER_NOT_ON_HOLD", "the player is not on hold", {"player_id": player_id}
            )
        now_us = int(self._clock().timestamp() * 1_000_000)
        # Bound to the hold it is about: a newer hold is never released by this request.
        held_by = current.request_id if current is not None and current.held else ""
        return await self.ask_release(
            ReleaseRow(
                request_id, False, player_id, case_id, reason, admin, now_us, ReleaseState.PENDING, held_by
            )
        )

    @staticmethod
    def _check_request_id(request_id: str) -> None:
        check_id(request_id, "request_id")
        if len(request_id) > MAX_REQUEST_ID_LENGTH:
            raise InvalidArgument(
                "FIELD_INVALID", "request_id is at most 64 characters", {"field": "request_id"}
            )

    @staticmethod
    def _check_reason(reason: str) -> None:
        check_text(reason, "reason", MAX_REASON_LENGTH, required=True)
        if not reason.isascii():
            raise InvalidArgument("FIELD_INVALID", "reason is printable ASCII", {"field": "reason"})

    async def set_hold(
        self, admin: str, request_id: str, player_id: str, reason: str, case_id: str, *, held: bool
    ) -> tuple[history_pb2.PlayerHold, bool]:
        """Hold or release a player through the cashier, audited PLAYER_HELD / PLAYER_RELEASED (id
        `hold:<request_id>`, actor the admin). The request is claimed under its id first, so an id
        reused for another change is refused before the cashier is asked; then the cashier's change
        (idempotent by the same id), then the audit event: a retry after a failure anywhere in
        between completes both, once."""
        self._check_request_id(request_id)
        check_id(player_id, "player_id")
        self._check_reason(reason)
        if case_id:
            await self.get_case(case_id)
        if self._holds is None:
            raise Unavailable("UNAVAILABLE", "this history service has no cashier to keep holds")
        now_us = int(self._clock().timestamp() * 1_000_000)
        claim = await self._claim_hold(
            HoldRequest(request_id, player_id, held, reason, case_id, admin, now_us, done=False)
        )
        hold = await self._holds.set_hold(request_id, player_id, held, reason)
        await self._complete_hold(claim, hold)
        return _hold_pb(hold), hold.existing

    async def _claim_hold(self, request: HoldRequest) -> HoldRequest:
        """This request claimed under its id, or the earlier claim of the same change (a retry);
        IDEMPOTENCY_CONFLICT when the id was claimed for another change, or, before claims were kept
        (migration 0005), audited as another one."""
        for attempt in range(ATTEMPTS):
            try:
                async with self._writing() as session:
                    earlier = await hold_storage.hold_request(session, request.request_id)
                    if earlier is None:
                        audited = await storage.audit_event_bytes(session, _hold_event_id(request.request_id))
                        if audited is not None and not _audits(
                            history_pb2.AuditEvent.FromString(audited), request
                        ):
                            raise _conflict("request_id")
                        await hold_storage.insert_hold_request(session, request)
                        return request
            except IntegrityError:
                # Another try of this id claimed it at the same moment: look again.
                await asyncio.sleep(random.uniform(0, 0.005 * (attempt + 1)))
                continue
            for field, was, asked in (
                ("player_id", earlier.player_id, request.player_id),
                ("request_id", earlier.held, request.held),  # a HoldPlayer's id in ReleasePlayer
                ("reason", earlier.reason, request.reason),
                ("case_id", earlier.case_id, request.case_id),
            ):
                if was != asked:
                    raise _conflict(field)
            return earlier
        raise AlreadyExists(
            "IDEMPOTENCY_CONFLICT", "concurrent requests kept racing; retry", {"field": "request_id"}
        )

    async def _complete_hold(self, claim: HoldRequest, hold: Hold) -> None:
        """Audit the cashier's change and mark the claim done, in one transaction (once: a retry of a
        completed request writes nothing)."""
        if claim.done:
            return
        event = history_pb2.AuditEvent(
            event_id=_hold_event_id(claim.request_id),
            time=_timestamp(hold.change_time),
            actor=claim.actor,
            kind=PLAYER_HELD if claim.held else PLAYER_RELEASED,
            subject=claim.player_id,
            details=_hold_details(claim.actor, claim.held, claim.reason, claim.case_id),
            player_ids=[claim.player_id],
        )
        for attempt in range(ATTEMPTS):
            try:
                async with self._writing() as session:
                    if await storage.audit_event_bytes(session, event.event_id) is None:
                        await storage.insert_audit_event(session, event, storage.serialise(event))
                    await hold_storage.mark_hold_request_done(session, claim.request_id)
                return
            except IntegrityError:
                # A concurrent retry of the same request wrote the event first: it is there now.
                await asyncio.sleep(random.uniform(0, 0.005 * (attempt + 1)))
        raise AlreadyExists(
            "IDEMPOTENCY_CONFLICT", "concurrent requests kept racing; retry", {"field": "request_id"}
        )


def _hold_event_id(request_id: str) -> str:
    return f"hold:{request_id}"


def _hold_details(admin: str, held: bool, reason: str, case_id: str) -> str:
    return f"{'held' if held else 'released'} by {admin}: {reason}" + (
        f" (case {case_id})" if case_id else ""
    )


def _audits(event: history_pb2.AuditEvent, request: HoldRequest) -> bool:
    """Is this (pre-claim) audit event the change the request asks for, by whichever admin made it?"""
    return (
        event.kind == (PLAYER_HELD if request.held else PLAYER_RELEASED)
        and event.subject == request.player_id
        and event.details == _hold_details(event.actor, request.held, request.reason, request.case_id)
    )


def _conflict(field: str) -> AlreadyExists:
    return AlreadyExists(
        "IDEMPOTENCY_CONFLICT", "this request id was used for another change", {"field": field}
    )
