"""Fairness version 3 through the real gRPC server (issue 24): a participant verifies every card they
saw against the commitment made before the deal; nobody but an admin ever receives an opening of a
position they did not see (folded, mucked, undealt), whatever ids they try; seeds given as a hash
first must match it; house-game rounds open only to their player."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import random
import uuid
from collections.abc import AsyncIterator, Awaitable

import grpc
import pytest
import sqlalchemy as sa

from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from service_runtime.auth import STAFF_ROLES
from service_runtime.database import Transactions, create_engine
from service_runtime.testing import auth_metadata, reason_of, running_server, token_for
from services.fairness.application import FairnessApplication
from services.fairness.assembly import ACCESS, fairness_service
from services.fairness.deck_commitment import client_seed_hash
from services.fairness.seed_vault import SeedVault
from services.fairness.settings import DEV_SEED_KEY_HEX, DEV_SEED_KEY_ID
from services.fairness.tables import client_seeds, hands
from services.fairness.verification import DealtCard, openings_from, published_hand, verify_hand
from services.fairness.verify import main

SERVICE = auth_metadata("table", "service")
ADMIN = auth_metadata("ops", *STAFF_ROLES)
PLAYERS = ("ann", "bob", "cat")
CALLERS = {name: auth_metadata(name) for name in (*PLAYERS, "eve")}
# Hold'em for three: hole cards at deal positions (0, 3), (1, 4), (2, 5); burns at 6, 10, 12; the
# board at 7, 8, 9, 11, 13. Cat folds; ann and bob show down.
HOLE = {"ann": [0, 3], "bob": [1, 4], "cat": [2, 5]}
BOARD = [7, 8, 9, 11, 13]
SHOWN = HOLE["ann"] + HOLE["bob"]

Stub = fairness_pb2_grpc.FairnessServiceStub


@pytest.fixture
async def stub(application: FairnessApplication) -> AsyncIterator[Stub]:
    async with running_server([fairness_service(application)], ACCESS) as (_, channel):
        yield fairness_pb2_grpc.FairnessServiceStub(channel)


async def _refused(call: Awaitable[object]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call
    return error.value.code(), reason_of(error.value)


async def _played_hand(
    stub: Stub,
    *,
    public: list[int] | None = None,
    hole: dict[str, list[int]] | None = None,
    seeds: bool = True,
) -> tuple[fairness_pb2.Commitment, list[int], fairness_pb2.RevealHandResponse]:
    """A version 3 hand of three players (ann gives her seed as a hash first, bob in one step),
    dealt, finished and reported with who saw what. (commitment, dealt deck, RevealHand answer)"""
    table = f"v3-{uuid.uuid4().hex[:8]}"
    committed = (
        await stub.CommitHand(
            fairness_pb2.CommitHandRequest(request_id=uuid.uuid4().hex, table_id=table), metadata=SERVICE
        )
    ).commitment
    assert (committed.shuffle_version, len(committed.deck_root)) == (3, 64)
    hand_id = committed.hand_id
    client_seeds = []
    if seeds:
        ann_seed = b"ann's fresh seed"
        await stub.AddPlayerEntropy(
            fairness_pb2.AddPlayerEntropyRequest(
                hand_id=hand_id,
                seat=1,
                player_id="ann",
                client_seed_hash=client_seed_hash(committed.commitment, 1, ann_seed),
            ),
            metadata=SERVICE,
        )
        await stub.AddPlayerEntropy(
            fairness_pb2.AddPlayerEntropyRequest(
                hand_id=hand_id, seat=2, player_id="bob", client_seed=b"bob"
            ),
            metadata=SERVICE,
        )
        client_seeds = [fairness_pb2.ClientSeed(seat=1, player_id="ann", client_seed=ann_seed)]
    sealed = await stub.SealHand(
        fairness_pb2.SealHandRequest(
            hand_id=hand_id, client_seeds=client_seeds, participant_ids=list(PLAYERS)
        ),
        metadata=SERVICE,
    )
    deck = [c.index for c in sealed.deck]
    assert sorted(deck) == list(range(52))
    hole = HOLE if hole is None else hole
    revealed = await stub.RevealHand(
        fairness_pb2.RevealHandRequest(
            hand_id=hand_id,
            outcome=fairness_pb2.HAND_OUTCOME_FINISHED,
            public_positions=BOARD + SHOWN if public is None else public,
            seen=[
                fairness_pb2.SeenPositions(player_id=p, positions=positions) for p, positions in hole.items()
            ],
        ),
        metadata=SERVICE,
    )
    return sealed.commitment, deck, revealed


def _published_of(reveal: fairness_pb2.Reveal) -> fairness_pb2.PublishedHand:
    """A reveal as the published values VerifyHand takes (every seat's client-seed hash included)."""
    record = reveal.commitment
    return fairness_pb2.PublishedHand(
        server_seed=reveal.server_seed, client_seeds=record.client_seeds, nonce=record.nonce,
        commitment=record.commitment, shuffle_version=record.shuffle_version, table_id=record.table_id,
        hand_id=record.hand_id, sequence=record.sequence, previous_commitment=record.previous_commitment,
        server_seed_hash=record.server_seed_hash, deck_root=record.deck_root, openings=reveal.openings,
    )  # fmt: skip


def _opened(reveal: fairness_pb2.Reveal) -> set[int]:
    return {o.deal_position for o in reveal.openings}


async def test_a_participant_verifies_every_card_they_saw_against_the_commitment_made_before_the_deal(
    stub: Stub,
) -> None:
    commitment, deck, _ = await _played_hand(stub)
    reveal = (
        await stub.GetReveal(
            fairness_pb2.GetRevealRequest(hand_id=commitment.hand_id), metadata=CALLERS["cat"]
        )
    ).reveal
    assert not reveal.deck  # version 3 never reveals the deck
    # Cat folded: her own hole cards, the board and the cards shown at showdown; nothing else.
    assert _opened(reveal) == set(HOLE["cat"] + BOARD + SHOWN)
    for opening in reveal.openings:
        assert opening.card.index == deck[opening.deal_position]
    # The same check in this process, from the published values alone.
    published = published_hand(bytes(reveal.server_seed), reveal.commitment)
    published = dataclasses.replace(published, openings=openings_from(reveal.openings))
    seen = [DealtCard(p, deck[p]) for p in HOLE["cat"] + BOARD]
    local = verify_hand(published, seen)
    assert local.passed, local.first_mismatch
    assert local.openings_checked == 11
    # And by the service, by hand id, with the commitment shown before the deal.
    verdict = await stub.VerifyHand(
        fairness_pb2.VerifyHandRequest(
            hand_id=commitment.hand_id,
            shown_commitment=commitment.commitment,
            dealt_cards=[fairness_pb2.DealtCard(position=d.position, card_index=d.card) for d in seen],
        ),
        metadata=CALLERS["cat"],
    )
    assert verdict.verdict == fairness_pb2.VERDICT_PASS, verdict.first_mismatch
    assert (verdict.openings_checked, verdict.dealt_cards_checked, len(verdict.deck)) == (11, 7, 0)
    # A card she claims at her own position that is not the committed one fails.
    wrong = await stub.VerifyHand(
        fairness_pb2.VerifyHandRequest(
            hand_id=commitment.hand_id,
            dealt_cards=[fairness_pb2.DealtCard(position=2, card_index=(deck[2] + 1) % 52)],
        ),
        metadata=CALLERS["cat"],
    )
    assert wrong.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_DEALT_CARD


def _hidden_salts(admin_reveal: fairness_pb2.Reveal, visible: set[int]) -> dict[int, bytes]:
    return {o.deal_position: bytes(o.salt) for o in admin_reveal.openings if o.deal_position not in visible}


async def test_nobody_but_an_admin_receives_an_opening_of_a_position_they_did_not_see(stub: Stub) -> None:
    # Several hands with random reports of who saw what; every caller asks for every hand through
    # every read, with their own and others' ids; no answer may carry a hidden position's salt.
    rng = random.Random(24)
    for _ in range(4):
        public = sorted(rng.sample(range(6, 52), rng.randrange(0, 10)))
        hole = {p: sorted(rng.sample([i for i in range(52) if i not in public], 2)) for p in PLAYERS}
        commitment, deck, revealed = await _played_hand(stub, public=public, hole=hole)
        hand_id = commitment.hand_id
        admin = (await stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=ADMIN)).reveal
        assert _opened(admin) == set(range(52))  # admins, for disputes
        # The table's own answer opens the public positions only.
        assert _opened(revealed.reveal) == set(public)
        for caller, metadata in CALLERS.items():
            visible = set(public) | set(hole.get(caller, []))
            hidden = _hidden_salts(admin, visible)
            answers: list[bytes] = []
            reveal = (
                await stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=metadata)
            ).reveal
            assert _opened(reveal) == visible, caller
            answers.append(reveal.SerializeToString())
            answers.append(
                (
                    await stub.GetCommitment(
                        fairness_pb2.GetCommitmentRequest(hand_id=hand_id), metadata=metadata
                    )
                ).SerializeToString()
            )
            answers.append(
                (
                    await stub.ListTableCommitments(
                        fairness_pb2.ListTableCommitmentsRequest(table_id=commitment.table_id),
                        metadata=metadata,
                    )
                ).SerializeToString()
            )
            # Try every position with the true card and a wrong one: the verdict on a position the
            # caller did not see is NOT_OPENED either way, so it tells them nothing.
            for position in range(52):
                verdicts = []
                for card in (deck[position], (deck[position] + 1) % 52):
                    verdict = await stub.VerifyHand(
                        fairness_pb2.VerifyHandRequest(
                            hand_id=hand_id,
                            dealt_cards=[fairness_pb2.DealtCard(position=position, card_index=card)],
                        ),
                        metadata=metadata,
                    )
                    answers.append(verdict.SerializeToString())
                    verdicts.append(verdict)
                true_card, wrong_card = verdicts
                if position in visible:
                    assert true_card.verdict == fairness_pb2.VERDICT_PASS
                    assert wrong_card.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_DEALT_CARD
                else:
                    assert true_card.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_NOT_OPENED
                    # The same answer with the true card and a wrong one: the verdict tells nothing.
                    assert true_card == wrong_card
            for salt in hidden.values():
                assert not any(salt in answer for answer in answers), caller
        # The service role, which deals, reads nothing back.
        assert await _refused(
            stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=SERVICE)
        ) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "ROLE_REQUIRED",
        )


async def test_a_seed_given_as_a_hash_first_must_match_it_and_a_seat_that_never_gives_it_is_left_out(
    stub: Stub,
) -> None:
    committed = (
        await stub.CommitHand(
            fairness_pb2.CommitHandRequest(request_id=uuid.uuid4().hex, table_id="v3-seeds"), metadata=SERVICE
        )
    ).commitment
    hand_id = committed.hand_id
    for seat, player in ((1, "ann"), (2, "bob")):
        await stub.AddPlayerEntropy(
            fairness_pb2.AddPlayerEntropyRequest(
                hand_id=hand_id,
                seat=seat,
                player_id=player,
                client_seed_hash=client_seed_hash(committed.commitment, seat, player.encode()),
            ),
            metadata=SERVICE,
        )
    # The hash list is public before the deal, the seeds are not.
    listed = (
        await stub.GetCommitment(fairness_pb2.GetCommitmentRequest(hand_id=hand_id), metadata=CALLERS["eve"])
    ).commitment
    assert [(s.seat, bytes(s.client_seed), len(s.client_seed_hash)) for s in listed.client_seeds] == [
        (1, b"", 64),
        (2, b"", 64),
    ]
    mismatch = fairness_pb2.SealHandRequest(
        hand_id=hand_id,
        client_seeds=[fairness_pb2.ClientSeed(seat=1, player_id="ann", client_seed=b"not ann")],
    )
    assert await _refused(stub.SealHand(mismatch, metadata=SERVICE)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "CLIENT_SEED_HASH_MISMATCH",
    )
    still = (
        await stub.GetCommitment(fairness_pb2.GetCommitmentRequest(hand_id=hand_id), metadata=ADMIN)
    ).commitment
    assert still.state == fairness_pb2.HAND_STATE_COMMITTED
    # Bob never gives his seed: only ann's goes into the deal order.
    sealed = await stub.SealHand(
        fairness_pb2.SealHandRequest(
            hand_id=hand_id,
            client_seeds=[fairness_pb2.ClientSeed(seat=1, player_id="ann", client_seed=b"ann")],
            participant_ids=["ann", "bob"],
        ),
        metadata=SERVICE,
    )
    assert [bytes(s.client_seed) for s in sealed.commitment.client_seeds] == [b"ann", b""]
    deck = [c.index for c in sealed.deck]
    await stub.RevealHand(
        fairness_pb2.RevealHandRequest(
            hand_id=hand_id,
            outcome=fairness_pb2.HAND_OUTCOME_FINISHED,
            seen=[fairness_pb2.SeenPositions(player_id="bob", positions=[1, 3])],
        ),
        metadata=SERVICE,
    )
    verdict = await stub.VerifyHand(
        fairness_pb2.VerifyHandRequest(
            hand_id=hand_id,
            dealt_cards=[fairness_pb2.DealtCard(position=p, card_index=deck[p]) for p in (1, 3)],
        ),
        metadata=CALLERS["bob"],
    )
    assert verdict.verdict == fairness_pb2.VERDICT_PASS, verdict.first_mismatch
    # From the published values too: bob's seat is listed with its hash and an empty seed, which a
    # verifier leaves out of the deal (docs/fairness.md), not a malformed seed of 0 bytes.
    reveal = (
        await stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=CALLERS["bob"])
    ).reveal
    assert [
        (s.seat, bytes(s.client_seed), len(s.client_seed_hash)) for s in reveal.commitment.client_seeds
    ] == [
        (1, b"ann", 64),
        (2, b"", 64),
    ]
    by_values = await stub.VerifyHand(
        fairness_pb2.VerifyHandRequest(
            published=_published_of(reveal),
            dealt_cards=[fairness_pb2.DealtCard(position=p, card_index=deck[p]) for p in (1, 3)],
        ),
        metadata=CALLERS["eve"],
    )
    assert by_values.verdict == fairness_pb2.VERDICT_PASS, by_values.first_mismatch
    # A hash for a version 2 hand is refused.
    v2 = (
        await stub.CommitHand(
            fairness_pb2.CommitHandRequest(
                request_id=uuid.uuid4().hex, table_id="v2-seeds", shuffle_version=2
            ),
            metadata=SERVICE,
        )
    ).commitment
    assert v2.shuffle_version == 2
    assert await _refused(
        stub.AddPlayerEntropy(
            fairness_pb2.AddPlayerEntropyRequest(
                hand_id=v2.hand_id, seat=1, player_id="ann", client_seed_hash="ab" * 32
            ),
            metadata=SERVICE,
        )
    ) == (grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID")


async def test_the_report_of_who_saw_what_is_checked_and_fixed_once(stub: Stub) -> None:
    commitment, _, _ = await _played_hand(stub, seeds=False)
    retry = fairness_pb2.RevealHandRequest(
        hand_id=commitment.hand_id,
        outcome=fairness_pb2.HAND_OUTCOME_FINISHED,
        public_positions=BOARD + SHOWN,
        seen=[fairness_pb2.SeenPositions(player_id=p, positions=positions) for p, positions in HOLE.items()],
    )
    await stub.RevealHand(retry, metadata=SERVICE)  # the same report again: idempotent
    retry.public_positions.append(2)  # cat's folded card made public afterwards: refused
    assert await _refused(stub.RevealHand(retry, metadata=SERVICE)) == (
        grpc.StatusCode.ALREADY_EXISTS,
        "IDEMPOTENCY_CONFLICT",
    )
    other = (
        await stub.CommitHand(
            fairness_pb2.CommitHandRequest(request_id=uuid.uuid4().hex, table_id="v3-r"), metadata=SERVICE
        )
    ).commitment
    await stub.SealHand(
        fairness_pb2.SealHandRequest(hand_id=other.hand_id, participant_ids=["ann"]), metadata=SERVICE
    )
    for bad in (
        [fairness_pb2.SeenPositions(player_id="eve", positions=[0])],  # not a participant
        [fairness_pb2.SeenPositions(player_id="ann", positions=[52])],
        [
            fairness_pb2.SeenPositions(player_id="ann", positions=[0]),
            fairness_pb2.SeenPositions(player_id="ann"),
        ],
    ):
        request = fairness_pb2.RevealHandRequest(
            hand_id=other.hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED, seen=bad
        )
        assert await _refused(stub.RevealHand(request, metadata=SERVICE)) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "FIELD_INVALID",
        )


async def test_a_house_round_opens_only_to_its_player(stub: Stub) -> None:
    committed = await stub.CommitHand(
        fairness_pb2.CommitHandRequest(
            request_id=uuid.uuid4().hex,
            table_id="house~1",
            deal_now=True,
            participant_ids=["ann"],
            participants_only=True,
        ),
        metadata=SERVICE,
    )
    hand_id = committed.commitment.hand_id
    deck = [c.index for c in committed.deck]
    await stub.RevealHand(
        fairness_pb2.RevealHandRequest(
            hand_id=hand_id,
            outcome=fairness_pb2.HAND_OUTCOME_FINISHED,
            seen=[fairness_pb2.SeenPositions(player_id="ann", positions=[0, 1, 2, 3])],
        ),
        metadata=SERVICE,
    )
    reveal = (
        await stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=CALLERS["ann"])
    ).reveal
    assert [(o.deal_position, o.card.index) for o in reveal.openings] == [(p, deck[p]) for p in range(4)]
    assert await _refused(
        stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=CALLERS["eve"])
    ) == (
        grpc.StatusCode.NOT_FOUND,
        "HAND_NOT_FOUND",
    )


async def test_the_command_verifies_a_version_3_hand_by_id_with_the_callers_openings(
    application: FairnessApplication,
) -> None:
    async with running_server([fairness_service(application)], ACCESS) as (running, channel):
        commitment, deck, _ = await _played_hand(fairness_pb2_grpc.FairnessServiceStub(channel))
        target = [
            "--hand-id",
            commitment.hand_id,
            "--target",
            f"127.0.0.1:{running.port}",
            "--token",
            token_for("ann"),
        ]
        seen = ",".join(f"{p}:{deck[p]}" for p in HOLE["ann"] + BOARD)
        out = io.StringIO()
        status = await asyncio.to_thread(
            main, [*target, "--commitment", commitment.commitment, "--dealt", seen], out
        )
        assert status == 0, out.getvalue()
        assert "the 9 cards you saw were fixed before the deal" in out.getvalue()
        out = io.StringIO()
        status = await asyncio.to_thread(main, [*target, "--dealt", f"2:{deck[2]}"], out)  # cat's folded card
        assert status == 1
        assert "NOT_OPENED" in out.getvalue()


@pytest.mark.parametrize(
    ("column", "value"),
    [("visibility", "{not json"), ("deck_secret_ciphertext", None), ("deck_root", "zz")],
    ids=["report", "deck-secret", "deck-root"],
)
async def test_a_damaged_stored_version_3_hand_opens_nothing_and_answers_without_an_internal_error(
    stub: Stub, fairness_database_url: str, column: str, value: object
) -> None:
    commitment, deck, _ = await _played_hand(stub, seeds=False)
    engine = create_engine(fairness_database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                sa.update(hands).where(hands.c.hand_id == commitment.hand_id).values({column: value})
            )
    finally:
        await engine.dispose()
    for metadata in (CALLERS["ann"], CALLERS["eve"]):
        reveal = (
            await stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=commitment.hand_id), metadata=metadata)
        ).reveal
        assert not reveal.deck
        verdict = await stub.VerifyHand(
            fairness_pb2.VerifyHandRequest(
                hand_id=commitment.hand_id,
                dealt_cards=[fairness_pb2.DealtCard(position=0, card_index=deck[0])],
            ),
            metadata=metadata,
        )
        assert verdict.verdict == fairness_pb2.VERDICT_FAIL
        if column == "visibility":
            # Nothing opened any more, so a card cannot be checked: never a PASS over nothing.
            assert not reveal.openings
            assert verdict.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_NOT_OPENED
        else:
            # docs/fairness.md: a stored hand whose values cannot give a deck is answered like
            # published values, MALFORMED (a version 3 hand's deck is its deck secret).
            assert verdict.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_MALFORMED
            if column == "deck_secret_ciphertext":
                assert not reveal.openings
                assert verdict.first_mismatch.description.startswith("deck_secret:")


async def _update(database_url: str, *statements: sa.Executable) -> None:
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            for statement in statements:
                await connection.execute(statement)
    finally:
        await engine.dispose()


async def test_swapped_deck_secrets_of_two_finished_hands_answer_without_openings_and_malformed(
    application: FairnessApplication, fairness_database_url: str
) -> None:
    """The independent tester's case: the deck-secret ciphertexts of two finished version 3 hands
    swapped in the database (each then fails its hand-bound authentication), the service restarted.
    docs/fairness.md: a stored hand whose values cannot give a deck is answered like published
    values, GetReveal without a deck (here: without openings) and VerifyHand and the command by hand
    id MALFORMED (exit 1, not 2), for every reader; never INTERNAL."""
    async with running_server([fairness_service(application)], ACCESS) as (_, channel):
        played = [await _played_hand(Stub(channel)) for _ in range(2)]
    (first, deck, _), (second, _, _) = played
    engine = create_engine(fairness_database_url)
    try:
        async with engine.connect() as connection:
            rows = dict(
                (
                    await connection.execute(
                        sa.select(hands.c.hand_id, hands.c.deck_secret_ciphertext).where(
                            hands.c.hand_id.in_([first.hand_id, second.hand_id])
                        )
                    )
                ).all()
            )
    finally:
        await engine.dispose()
    await _update(
        fairness_database_url,
        *(
            sa.update(hands).where(hands.c.hand_id == mine).values(deck_secret_ciphertext=rows[theirs])
            for mine, theirs in ((first.hand_id, second.hand_id), (second.hand_id, first.hand_id))
        ),
    )
    # The service restarted: a new process over the same database and key.
    engine = create_engine(fairness_database_url, pool_size=5)
    restarted = FairnessApplication(
        Transactions(engine), SeedVault({DEV_SEED_KEY_ID: bytes.fromhex(DEV_SEED_KEY_HEX)}, DEV_SEED_KEY_ID)
    )
    try:
        async with running_server([fairness_service(restarted)], ACCESS) as (running, channel):
            stub = Stub(channel)
            for hand in (first, second):
                for metadata in (CALLERS["ann"], CALLERS["eve"], ADMIN):
                    reveal = (
                        await stub.GetReveal(
                            fairness_pb2.GetRevealRequest(hand_id=hand.hand_id), metadata=metadata
                        )
                    ).reveal
                    assert (reveal.commitment.hand_id, list(reveal.deck), list(reveal.openings)) == (
                        hand.hand_id,
                        [],
                        [],
                    )
                    assert len(reveal.server_seed) == 32
                    verdict = await stub.VerifyHand(
                        fairness_pb2.VerifyHandRequest(hand_id=hand.hand_id), metadata=metadata
                    )
                    assert verdict.verdict == fairness_pb2.VERDICT_FAIL
                    assert verdict.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_MALFORMED
                    assert verdict.first_mismatch.description.startswith("deck_secret:")
            target = [
                "--hand-id",
                first.hand_id,
                "--target",
                f"127.0.0.1:{running.port}",
                "--token",
                token_for("ann"),
            ]
            out = io.StringIO()
            status = await asyncio.to_thread(main, [*target, "--dealt", f"0:{deck[0]}"], out)
            assert status == 1, out.getvalue()
            assert "first mismatch: MALFORMED: deck_secret:" in out.getvalue()
    finally:
        await engine.dispose()


async def test_a_revealed_seed_that_does_not_give_its_seats_recorded_hash_fails_client_seed_hash(
    stub: Stub, fairness_database_url: str
) -> None:
    """Ann fixed her seed by its hash before the seal; a reveal whose seed at her seat does not give
    that hash is refused by the verdict (by hand id, by the command and from published values), not
    left to the client (docs/fairness.md, version 3, "Verifying a version 3 hand")."""
    commitment, deck, _ = await _played_hand(stub)
    hand_id = commitment.hand_id
    seen = [fairness_pb2.DealtCard(position=p, card_index=deck[p]) for p in HOLE["ann"] + BOARD]
    honest = await stub.VerifyHand(
        fairness_pb2.VerifyHandRequest(hand_id=hand_id, dealt_cards=seen), metadata=CALLERS["ann"]
    )
    assert honest.verdict == fairness_pb2.VERDICT_PASS, honest.first_mismatch
    reveal = (
        await stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=CALLERS["ann"])
    ).reveal

    by_values = await stub.VerifyHand(
        fairness_pb2.VerifyHandRequest(published=_published_of(reveal), dealt_cards=seen),
        metadata=CALLERS["eve"],
    )
    assert by_values.verdict == fairness_pb2.VERDICT_PASS, by_values.first_mismatch
    # The published hash of ann's seat replaced by one of another seed: the seed is not what she fixed.
    forged = _published_of(reveal)
    forged.client_seeds[0].client_seed_hash = client_seed_hash(commitment.commitment, 1, b"another seed")
    verdict = await stub.VerifyHand(
        fairness_pb2.VerifyHandRequest(published=forged, dealt_cards=seen), metadata=CALLERS["eve"]
    )
    assert verdict.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_CLIENT_SEED_HASH
    # A seed in the deal without its hash is a published value of a bad shape.
    forged.client_seeds[0].client_seed_hash = ""
    verdict = await stub.VerifyHand(fairness_pb2.VerifyHandRequest(published=forged), metadata=CALLERS["eve"])
    assert verdict.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_MALFORMED
    assert verdict.first_mismatch.description.startswith("client_seeds:")
    # The stored record changed the same way: by hand id, and by the command, the same verdict.
    await _update(
        fairness_database_url,
        sa.update(client_seeds)
        .where(client_seeds.c.hand_id == hand_id, client_seeds.c.seat == 1)
        .values(client_seed_hash=client_seed_hash(commitment.commitment, 1, b"another seed")),
    )
    verdict = await stub.VerifyHand(
        fairness_pb2.VerifyHandRequest(hand_id=hand_id, dealt_cards=seen), metadata=CALLERS["ann"]
    )
    assert verdict.verdict == fairness_pb2.VERDICT_FAIL
    assert verdict.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_CLIENT_SEED_HASH
    assert "seat 1" in verdict.first_mismatch.description


async def test_the_command_refuses_a_seed_that_does_not_give_its_recorded_hash(
    application: FairnessApplication, fairness_database_url: str
) -> None:
    async with running_server([fairness_service(application)], ACCESS) as (running, channel):
        commitment, deck, _ = await _played_hand(Stub(channel))
        target = ["--hand-id", commitment.hand_id, "--target", f"127.0.0.1:{running.port}"]
        target += ["--token", token_for("ann"), "--dealt", ",".join(f"{p}:{deck[p]}" for p in HOLE["ann"])]
        out = io.StringIO()
        assert await asyncio.to_thread(main, target, out) == 0, out.getvalue()
        await _update(
            fairness_database_url,
            sa.update(client_seeds)
            .where(client_seeds.c.hand_id == commitment.hand_id, client_seeds.c.seat == 2)
            .values(client_seed_hash="ab" * 32),
        )
        out = io.StringIO()
        assert await asyncio.to_thread(main, target, out) == 1
        assert "first mismatch: CLIENT_SEED_HASH:" in out.getvalue()


async def test_a_seed_hash_in_upper_case_is_recorded_in_lower_case_and_its_seed_then_matches(
    stub: Stub,
) -> None:
    """Hex is read in either case everywhere in fairness (docs/fairness.md): AddPlayerEntropy takes
    an upper-case `client_seed_hash` as the same digits, records and shows it in lower case, and the
    seed that gives it is accepted at the seal."""
    committed = (
        await stub.CommitHand(
            fairness_pb2.CommitHandRequest(request_id=uuid.uuid4().hex, table_id="v3-case"), metadata=SERVICE
        )
    ).commitment
    seed_hash = client_seed_hash(committed.commitment, 1, b"ann")
    request = fairness_pb2.AddPlayerEntropyRequest(
        hand_id=committed.hand_id, seat=1, player_id="ann", client_seed_hash=seed_hash.upper()
    )
    recorded = (await stub.AddPlayerEntropy(request, metadata=SERVICE)).commitment
    assert [s.client_seed_hash for s in recorded.client_seeds] == [seed_hash]
    again = (await stub.AddPlayerEntropy(request, metadata=SERVICE)).commitment  # an idempotent retry
    assert [s.client_seed_hash for s in again.client_seeds] == [seed_hash]
    sealed = await stub.SealHand(
        fairness_pb2.SealHandRequest(
            hand_id=committed.hand_id,
            client_seeds=[fairness_pb2.ClientSeed(seat=1, player_id="ann", client_seed=b"ann")],
            participant_ids=["ann"],
        ),
        metadata=SERVICE,
    )
    assert [(s.client_seed, s.client_seed_hash) for s in sealed.commitment.client_seeds] == [
        (b"ann", seed_hash)
    ]


async def test_a_hand_voided_before_the_seal_opens_nothing_even_to_admins(stub: Stub) -> None:
    """No card of a hand voided before the seal was dealt (the table never had a deck), so there is
    nothing to dispute and nobody, admins included, needs any of its committed cards; a hand voided
    after the seal still opens all 52 to admins (the deck was handed to the table)."""
    hands_by_seal: dict[bool, str] = {}
    for sealed in (False, True):
        committed = (
            await stub.CommitHand(
                fairness_pb2.CommitHandRequest(
                    request_id=uuid.uuid4().hex, table_id=f"v3-void-{uuid.uuid4().hex[:6]}"
                ),
                metadata=SERVICE,
            )
        ).commitment
        await stub.AddPlayerEntropy(
            fairness_pb2.AddPlayerEntropyRequest(
                hand_id=committed.hand_id, seat=1, player_id="ann", client_seed=b"ann"
            ),
            metadata=SERVICE,
        )
        if sealed:
            await stub.SealHand(
                fairness_pb2.SealHandRequest(hand_id=committed.hand_id, participant_ids=["ann"]),
                metadata=SERVICE,
            )
        voided = await stub.RevealHand(
            fairness_pb2.RevealHandRequest(
                hand_id=committed.hand_id, outcome=fairness_pb2.HAND_OUTCOME_VOIDED
            ),
            metadata=SERVICE,
        )
        assert voided.reveal.commitment.state == fairness_pb2.HAND_STATE_VOIDED
        assert not voided.reveal.openings
        hands_by_seal[sealed] = committed.hand_id
    for sealed, hand_id in hands_by_seal.items():
        reveal = (await stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=ADMIN)).reveal
        assert len(reveal.openings) == (52 if sealed else 0), sealed
        verdict = await stub.VerifyHand(fairness_pb2.VerifyHandRequest(hand_id=hand_id), metadata=ADMIN)
        assert verdict.verdict == fairness_pb2.VERDICT_PASS, verdict.first_mismatch
        assert verdict.openings_checked == (52 if sealed else 0)
