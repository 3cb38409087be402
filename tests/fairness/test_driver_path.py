"""The lifecycle's statements on the driver (prepared, pipelined, the COMMIT sent with the last
write), on SQLite and PostgreSQL: what they must keep of the guarantees the SQLAlchemy statements
gave. The chain stays whole when a process's remembered chain head is behind (another process
committed meanwhile); a transition's writes are committed all or none; a database that goes away
under a transition answers DATABASE_UNAVAILABLE, never INTERNAL."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import grpc
import psycopg
import psycopg.waiting
import pytest
from prometheus_client import REGISTRY
from sqlalchemy.engine import make_url

from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from service_runtime.database import Transactions, create_engine
from service_runtime.testing import auth_metadata, reason_of, running_server
from services.fairness import storage
from services.fairness.application import FairnessApplication
from services.fairness.assembly import ACCESS, fairness_service
from services.fairness.hands import ADMIN_READER, ClientSeedRecord, HandOutcome, HandState
from services.fairness.verification import verify_chain
from tests.fairness.conftest import DEV_VAULT

SERVICE = auth_metadata("table", "service")


@pytest.fixture
async def second_process(fairness_database_url: str) -> AsyncIterator[FairnessApplication]:
    """Another fairness process on the same database: its own engine and its own remembered heads."""
    engine = create_engine(fairness_database_url, pool_size=5)
    try:
        yield FairnessApplication(Transactions(engine), DEV_VAULT)
    finally:
        await engine.dispose()


async def test_commits_alternating_between_two_processes_keep_one_chain(
    application: FairnessApplication, second_process: FairnessApplication
) -> None:
    # Each process remembers the head it committed last; after the other one committed, that head
    # is behind, and the commit that links to it must not land: the chain stays one chain.
    table = f"two-{uuid.uuid4().hex[:8]}"
    for n in range(6):
        process = application if n % 2 == 0 else second_process
        committed = await process.commit_hand(f"{table}/{n}", table)
        assert committed.hand.sequence == n + 1
    for n in range(6, 12):  # and racing, both at once
        await asyncio.gather(
            application.commit_hand(f"{table}/{n}a", table),
            second_process.commit_hand(f"{table}/{n}b", table),
        )
    chain, _ = await application.list_table_commitments(table, reader=ADMIN_READER, page_size=100)
    assert [h.sequence for h in chain] == list(range(1, 19))
    assert verify_chain([h.chain_link() for h in chain]) is None


async def test_a_replayed_commit_after_the_other_process_moved_the_chain_is_the_same_hand(
    application: FairnessApplication, second_process: FairnessApplication
) -> None:
    table = f"replay-{uuid.uuid4().hex[:8]}"
    first = await application.commit_hand(f"{table}/1", table)
    await second_process.commit_hand(f"{table}/2", table)
    again = await application.commit_hand(f"{table}/1", table)
    assert again.hand == first.hand
    third = await application.commit_hand(f"{table}/3", table)
    assert third.hand.sequence == 3


async def test_writes_sent_together_are_committed_all_or_none(
    application: FairnessApplication, fairness_database_url: str
) -> None:
    # A seed for an open hand, then a seal of a hand that already ended: the second write finds its
    # hand moved on, so the first must not be committed either, although the COMMIT went with them.
    table = f"atomic-{uuid.uuid4().hex[:8]}"
    open_hand = (await application.commit_hand(f"{table}/1", table)).hand.hand_id
    ended = (await application.commit_hand(f"{table}/2", table)).hand.hand_id
    await application.reveal_hand(ended, HandOutcome.VOIDED)
    engine = create_engine(fairness_database_url)
    now = datetime.now(UTC)
    writes = [
        storage.seed_insert(open_hand, ClientSeedRecord(1, "p1", b"seed"), now),
        storage.sealing(ended, now, ("p1",), "0" * 64),
    ]
    try:
        with pytest.raises(storage.StateMoved):
            async with engine.begin() as connection:
                await storage.write(connection, ended, writes, commit=True)
    finally:
        await engine.dispose()
    after = await application.get_commitment(open_hand, reader=ADMIN_READER)
    assert (after.state, after.client_seeds) == (HandState.COMMITTED, ())
    assert (await application.get_commitment(ended, reader=ADMIN_READER)).state is HandState.VOIDED


@pytest.mark.postgres
async def test_a_database_gone_under_a_transition_answers_database_unavailable(
    application: FairnessApplication, fairness_database_url: str
) -> None:
    if not fairness_database_url.startswith("postgresql"):
        pytest.skip("a server whose connections can be dropped")
    async with running_server([fairness_service(application)], ACCESS) as (_, channel):
        stub = fairness_pb2_grpc.FairnessServiceStub(channel)
        table = f"outage-{uuid.uuid4().hex[:8]}"
        committed = await stub.CommitHand(
            fairness_pb2.CommitHandRequest(request_id=f"{table}/1", table_id=table), metadata=SERVICE
        )
        # Every connection the service holds is dropped by the server, as a restart would.
        url = make_url(fairness_database_url)
        conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as admin:
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (url.database,),
            )
        request = fairness_pb2.AddPlayerEntropyRequest(
            hand_id=committed.commitment.hand_id, seat=1, player_id="p1", client_seed=b"seed"
        )
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await stub.AddPlayerEntropy(request, metadata=SERVICE)
        assert (error.value.code(), reason_of(error.value)) == (
            grpc.StatusCode.UNAVAILABLE,
            "DATABASE_UNAVAILABLE",
        )
        # Dropped connections leave the pool: the client's retries go through once the pooled ones
        # (at most the pool's size) are spent, each refused as unavailable meanwhile.
        refusals: list[str | None] = []
        for _ in range(6):
            try:
                await stub.AddPlayerEntropy(request, metadata=SERVICE)
                break
            except grpc.aio.AioRpcError as retry_error:
                refusals.append(reason_of(retry_error))
        else:
            pytest.fail("the service never reconnected")
        assert set(refusals) <= {"DATABASE_UNAVAILABLE"}
        hand = await application.get_commitment(committed.commitment.hand_id, reader=ADMIN_READER)
        assert [s.seat for s in hand.client_seeds] == [1]


def sql_timed(backend: str, statement: str | None = None) -> float:
    """Statements (or psycopg pipelines) of `backend` in poker_sql_statement_seconds: of one kind, or all."""
    return sum(
        sample.value
        for family in REGISTRY.collect()
        if family.name == "poker_sql_statement_seconds"
        for sample in family.samples
        if sample.name.endswith("_count")
        and sample.labels["backend"] == backend
        and statement in (None, sample.labels["statement"])
    )


async def test_the_round_trips_on_the_driver_are_in_the_sql_latency_figure(
    application: FairnessApplication, fairness_database_url: str
) -> None:
    """The lifecycle skips SQLAlchemy, whose cursor events time every other statement: its own
    round trips must be timed too (PostgreSQL: each pipeline as one, PIPELINE; SQLite: each
    statement by its kind), or the SQL latency dashboard misses the fairness hot path."""
    backend = make_url(fairness_database_url).get_backend_name()
    table = f"timed-{uuid.uuid4().hex[:8]}"
    hand_id = (await application.commit_hand(f"{table}/1", table)).hand.hand_id
    before = sql_timed(backend, "PIPELINE" if backend == "postgresql" else None)
    await application.seal_hand(hand_id, participants=["ann", "bob"])
    await application.reveal_hand(hand_id, HandOutcome.VOIDED)
    after = sql_timed(backend, "PIPELINE" if backend == "postgresql" else None)
    # Each transition locks and reads its hand (one round trip), then writes (another): PostgreSQL
    # sends each pair of statements as one pipeline; SQLite runs at least three statements each.
    assert after - before >= (4 if backend == "postgresql" else 6)


@pytest.mark.postgres
async def test_a_unit_cancelled_entering_its_pipeline_leaves_no_connection_in_pipeline_mode(
    fairness_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """psycopg yields to the loop after a step that did not block once the loop has been busy for
    5 ms (always here: `MAX_BUSY_TIME` 0); a cancel at any point of a seal, also inside the
    pipeline's `__aenter__`, must leave no pooled connection in pipeline mode: the next read works
    (before: `ResourceClosedError`, VerifyHand INTERNAL in a CI run) and the hand can be sealed (no
    row lock left behind by a ROLLBACK that was only queued)."""
    if not fairness_database_url.startswith("postgresql"):
        pytest.skip("the pipeline is PostgreSQL's")
    engine = create_engine(fairness_database_url, pool_size=1)
    application = FairnessApplication(Transactions(engine), DEV_VAULT)
    table = f"cancel-{uuid.uuid4().hex[:8]}"
    failures = []
    try:
        for steps in range(30):
            hand = (await application.commit_hand(f"{table}/{steps}", table)).hand.hand_id
            with monkeypatch.context() as patch:
                patch.setattr(psycopg.waiting, "MAX_BUSY_TIME", 0.0)
                task = asyncio.create_task(application.seal_hand(hand))
                for _ in range(steps):
                    await asyncio.sleep(0)
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
            try:
                await application.get_commitment(hand, reader=ADMIN_READER)
                await asyncio.wait_for(application.seal_hand(hand), 10)
            except Exception as error:
                failures.append((steps, repr(error)[:120]))
    finally:
        await engine.dispose()
    assert failures == []
