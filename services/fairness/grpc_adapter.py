"""The gRPC face of the fairness service: translates protobuf to application calls and back.

Who may call what is the access policy in `assembly.py`; the handlers that return a deck before the
reveal also check the service role themselves, so a policy mistake cannot leak a live deck.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from poker.common.v1 import common_pb2
from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from service_runtime.auth import Role, ServiceName, current_caller
from service_runtime.errors import InvalidArgument
from service_runtime.proto_time import to_timestamp
from services.fairness.application import FairnessApplication
from services.fairness.deck_commitment import CardOpening
from services.fairness.hands import ClientSeedRecord, HandOutcome, HandRecord, HandState, Reader, RevealedHand
from services.fairness.shuffle import card_text
from services.fairness.verification import (
    DealtCard,
    MalformedValue,
    PublishedHand,
    VerificationResult,
    dealt_from_prefix,
    published_hand,
)

SERVICE_NAME = "poker.fairness.v1.FairnessService"

_STATES = {
    HandState.COMMITTED: fairness_pb2.HAND_STATE_COMMITTED,
    HandState.SEALED: fairness_pb2.HAND_STATE_SEALED,
    HandState.FINISHED: fairness_pb2.HAND_STATE_FINISHED,
    HandState.VOIDED: fairness_pb2.HAND_STATE_VOIDED,
}
_OUTCOMES = {
    fairness_pb2.HAND_OUTCOME_FINISHED: HandOutcome.FINISHED,
    fairness_pb2.HAND_OUTCOME_VOIDED: HandOutcome.VOIDED,
}


def cards_pb(deck: Iterable[int]) -> list[common_pb2.Card]:
    return [common_pb2.Card(index=card, text=card_text(card)) for card in deck]


def _shown_player_id(player_id: str) -> str:
    """Who sat where is the table's business: services and admins see every player id, a
    player only their own, so a public reveal does not tell strangers who played the hand."""
    caller = current_caller()
    if caller.service is not None or caller.is_staff or caller.subject == player_id:
        return player_id
    return ""


def current_reader() -> Reader:
    """Who asks: an admin, a player by id, or (a service) a stranger to every hand."""
    caller = current_caller()
    if caller.is_staff:
        return Reader(admin=True)
    if caller.service is None and caller.has(Role.PLAYER):
        return Reader(player_id=caller.subject)
    return Reader()


def commitment_pb(hand: HandRecord) -> fairness_pb2.Commitment:
    return fairness_pb2.Commitment(
        hand_id=hand.hand_id,
        table_id=hand.table_id,
        sequence=hand.sequence,
        commitment=hand.commitment,
        server_seed_hash=hand.server_seed_hash,
        deck_root=hand.deck_root,
        previous_commitment=hand.previous_commitment,
        nonce=hand.nonce.hex(),
        shuffle_version=hand.shuffle_version,
        state=_STATES[hand.state],
        client_seeds=[
            fairness_pb2.ClientSeed(
                seat=s.seat,
                player_id=_shown_player_id(s.player_id),
                client_seed=s.client_seed,
                client_seed_hash=s.client_seed_hash,
            )
            for s in hand.client_seeds
        ],
        create_time=to_timestamp(hand.created_at),
        seal_time=to_timestamp(hand.sealed_at),
        reveal_time=to_timestamp(hand.revealed_at),
    )


def opening_pb(opening: CardOpening) -> fairness_pb2.CardOpening:
    return fairness_pb2.CardOpening(
        deal_position=opening.deal_position,
        committed_position=opening.committed_position,
        card=common_pb2.Card(index=opening.card, text=card_text(opening.card)),
        salt=opening.salt,
        proof=list(opening.proof),
    )


def reveal_pb(revealed: RevealedHand) -> fairness_pb2.Reveal:
    return fairness_pb2.Reveal(
        commitment=commitment_pb(revealed.hand),
        server_seed=revealed.server_seed,
        deck=cards_pb(revealed.deck),
        openings=[opening_pb(o) for o in revealed.openings],
    )


def verification_pb(result: VerificationResult) -> fairness_pb2.VerifyHandResponse:
    response = fairness_pb2.VerifyHandResponse(
        verdict=fairness_pb2.VERDICT_PASS if result.passed else fairness_pb2.VERDICT_FAIL,
        computed_commitment=result.computed_commitment,
        deck=cards_pb(result.deck),
        dealt_cards_checked=result.dealt_cards_checked,
        openings_checked=result.openings_checked,
    )
    mismatch = result.first_mismatch
    if mismatch is not None:
        response.first_mismatch.CopyFrom(
            fairness_pb2.Mismatch(
                kind=fairness_pb2.MismatchKind.Value(f"MISMATCH_KIND_{mismatch.kind.value}"),
                position=mismatch.position,
                expected=mismatch.expected,
                actual=mismatch.actual,
                description=mismatch.description,
            )
        )
    return response


def dealt_cards_from(request: fairness_pb2.VerifyHandRequest) -> list[DealtCard]:
    """The dealt cards of both request forms; a card given identically in both is checked once."""
    dealt = [DealtCard(int(d.position), int(d.card_index)) for d in request.dealt_cards]
    given = set(dealt)
    dealt.extend(d for d in dealt_from_prefix(int(c) for c in request.dealt_prefix) if d not in given)
    return dealt


def published_from(published: fairness_pb2.PublishedHand) -> PublishedHand:
    """The request's published values; a nonce that is not hex raises `MalformedValue`, which the
    handler answers with a MALFORMED verdict like any other value of a bad shape."""
    return published_hand(bytes(published.server_seed), published)


class FairnessServicer(fairness_pb2_grpc.FairnessServiceServicer):
    """One thin handler per RPC over the application."""

    def __init__(self, application: FairnessApplication) -> None:
        self._application = application

    async def CommitHand(  # noqa: N802 - the generated servicer names methods after the RPCs
        self, request: fairness_pb2.CommitHandRequest, context: Any
    ) -> fairness_pb2.CommitHandResponse:
        current_caller().require(ServiceName.TABLE)  # the dealing service (house tables run in it too)
        committed = await self._application.commit_hand(
            request.request_id,
            request.table_id,
            deal_now=request.deal_now,
            participants=list(request.participant_ids),
            participants_only=request.participants_only,
            private_room=request.private_room,
            shuffle_version=int(request.shuffle_version),
        )
        return fairness_pb2.CommitHandResponse(
            commitment=commitment_pb(committed.hand), deck=cards_pb(committed.deck or ())
        )

    async def AddPlayerEntropy(  # noqa: N802
        self, request: fairness_pb2.AddPlayerEntropyRequest, context: Any
    ) -> fairness_pb2.AddPlayerEntropyResponse:
        hand = await self._application.add_player_entropy(
            request.hand_id,
            int(request.seat),
            request.player_id,
            bytes(request.client_seed),
            request.client_seed_hash,
        )
        return fairness_pb2.AddPlayerEntropyResponse(commitment=commitment_pb(hand))

    async def SealHand(  # noqa: N802
        self, request: fairness_pb2.SealHandRequest, context: Any
    ) -> fairness_pb2.SealHandResponse:
        current_caller().require(ServiceName.TABLE)  # the dealing service (house tables run in it too)
        seeds = [
            ClientSeedRecord(int(s.seat), s.player_id, bytes(s.client_seed)) for s in request.client_seeds
        ]
        dealt = await self._application.seal_hand(request.hand_id, seeds, list(request.participant_ids))
        return fairness_pb2.SealHandResponse(commitment=commitment_pb(dealt.hand), deck=cards_pb(dealt.deck))

    async def RevealHand(  # noqa: N802
        self, request: fairness_pb2.RevealHandRequest, context: Any
    ) -> fairness_pb2.RevealHandResponse:
        outcome = _OUTCOMES.get(request.outcome)
        if outcome is None:
            raise InvalidArgument(
                "FIELD_REQUIRED", "outcome must be FINISHED or VOIDED", {"field": "outcome"}
            )
        revealed = await self._application.reveal_hand(
            request.hand_id,
            outcome,
            [int(p) for p in request.public_positions],
            [(s.player_id, [int(p) for p in s.positions]) for s in request.seen],
        )
        return fairness_pb2.RevealHandResponse(reveal=reveal_pb(revealed))

    async def GetCommitment(  # noqa: N802
        self, request: fairness_pb2.GetCommitmentRequest, context: Any
    ) -> fairness_pb2.GetCommitmentResponse:
        hand = await self._application.get_commitment(request.hand_id, reader=current_reader())
        return fairness_pb2.GetCommitmentResponse(commitment=commitment_pb(hand))

    async def ListTableCommitments(  # noqa: N802
        self, request: fairness_pb2.ListTableCommitmentsRequest, context: Any
    ) -> fairness_pb2.ListTableCommitmentsResponse:
        hands, next_token = await self._application.list_table_commitments(
            request.table_id,
            reader=current_reader(),
            page_size=request.page.page_size,
            page_token=request.page.page_token,
        )
        return fairness_pb2.ListTableCommitmentsResponse(
            commitments=[commitment_pb(h) for h in hands],
            page=common_pb2.PageResponse(next_page_token=next_token),
        )

    async def GetReveal(  # noqa: N802
        self, request: fairness_pb2.GetRevealRequest, context: Any
    ) -> fairness_pb2.GetRevealResponse:
        return fairness_pb2.GetRevealResponse(
            reveal=reveal_pb(await self._application.get_reveal(request.hand_id, reader=current_reader()))
        )

    async def VerifyHand(  # noqa: N802
        self, request: fairness_pb2.VerifyHandRequest, context: Any
    ) -> fairness_pb2.VerifyHandResponse:
        dealt: Sequence[DealtCard] = dealt_cards_from(request)
        which = request.WhichOneof("hand")
        if which == "hand_id":
            result = await self._application.verify_stored_hand(
                request.hand_id, dealt, reader=current_reader(), shown_commitment=request.shown_commitment
            )
        elif which == "published":
            try:
                published = published_from(request.published)
            except MalformedValue as bad:
                return verification_pb(bad.result())
            result = self._application.verify_published_hand(published, dealt)
        else:
            raise InvalidArgument(
                "FIELD_REQUIRED", "give a hand_id or the published values", {"field": "hand"}
            )
        return verification_pb(result)
