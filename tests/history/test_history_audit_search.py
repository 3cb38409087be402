"""The audit trail searchable by actor and by player (issue 38: the staff console searches it), on both
backends, through a real server: each filter alone and together with the kind, paged, bad input
refused, and the players' index filled for events written before it existed (migration 0006)."""

from __future__ import annotations

import uuid

import grpc
import pytest
import sqlalchemy as sa

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2, history_pb2_grpc
from service_runtime.auth import Role
from service_runtime.testing import auth_metadata, reason_of
from services.history import storage
from services.history.application import HistoryApplication
from services.history.tables import audit_event_players, audit_events

TABLE = auth_metadata("table", "service")
RISK = auth_metadata("rita", Role.RISK)
SUPPORT = auth_metadata("sam", Role.SUPPORT)
Stub = history_pb2_grpc.HistoryServiceStub


async def search(
    stub: Stub, page_size: int = 100, token: str = "", **filters: str
) -> history_pb2.ListAuditEventsResponse:
    return await stub.ListAuditEvents(  # type: ignore[no-any-return]
        history_pb2.ListAuditEventsRequest(
            page=common_pb2.PageRequest(page_size=page_size, page_token=token), **filters
        ),
        metadata=SUPPORT,
    )


async def write(
    stub: Stub, who: tuple[tuple[str, str], ...], event_id: str, kind: str, players: list[str]
) -> None:
    event = history_pb2.AuditEvent(event_id=event_id, kind=kind, subject=event_id, player_ids=players)
    await stub.RecordAuditEvent(history_pb2.RecordAuditEventRequest(event=event), metadata=who)


async def test_the_trail_is_searched_by_actor_and_by_player_alone_and_together(stub: Stub) -> None:
    tag = uuid.uuid4().hex[:8]
    anna, boris = f"anna-{tag}", f"boris-{tag}"
    await write(stub, TABLE, f"v1-{tag}", "HAND_VOIDED", [anna, boris])
    await write(stub, TABLE, f"s1-{tag}", "SUSPICIOUS_PLAY", [boris])
    await write(stub, RISK, f"n1-{tag}", "OPERATOR_NOTE", [anna])
    await write(stub, RISK, f"n2-{tag}", "OPERATOR_NOTE", [anna, anna])  # a player named twice counts once

    def subjects(reply: history_pb2.ListAuditEventsResponse) -> list[str]:
        return [e.subject.split("-")[0] for e in reply.events if e.subject.endswith(tag)]

    assert subjects(await search(stub, player_id=anna)) == ["n2", "n1", "v1"]
    assert subjects(await search(stub, player_id=boris)) == ["s1", "v1"]
    assert subjects(await search(stub, actor="rita")) == ["n2", "n1"]
    assert subjects(await search(stub, actor="rita", player_id=boris)) == []
    assert subjects(await search(stub, actor="service:table", player_id=anna)) == ["v1"]
    assert subjects(await search(stub, kind="OPERATOR_NOTE", player_id=anna)) == ["n2", "n1"]
    # Paged one at a time, the filter kept across pages.
    seen: list[str] = []
    token = ""
    while True:
        page = await search(stub, page_size=1, token=token, player_id=anna)
        seen += subjects(page)
        token = page.page.next_page_token
        if not token:
            break
    assert seen == ["n2", "n1", "v1"]
    # A page token is bound to its filters: another player's search cannot continue it.
    first = await search(stub, page_size=1, player_id=anna)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await search(stub, page_size=1, token=first.page.next_page_token, player_id=boris)
    assert (caught.value.code(), reason_of(caught.value)) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "PAGE_TOKEN_INVALID",
    )


@pytest.mark.parametrize(
    ("filters", "field"),
    [({"player_id": "a b"}, "player_id"), ({"player_id": "x" * 129}, "player_id"), ({"actor": "a\x00b"}, "actor"),
     ({"actor": "y" * 161}, "actor")],
)  # fmt: skip
async def test_a_bad_filter_is_refused(stub: Stub, filters: dict[str, str], field: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await search(stub, **filters)
    assert (caught.value.code(), reason_of(caught.value)) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_INVALID",
    )


async def test_the_history_services_own_events_are_found_by_player(
    application: HistoryApplication, stub: Stub
) -> None:
    """Events history writes itself (a hold, a case) go through the same insert: found by player."""
    tag = uuid.uuid4().hex[:8]
    player = f"held-{tag}"
    event = history_pb2.AuditEvent(
        event_id=f"hold:{tag}", kind="PLAYER_HELD", actor="rita", subject=player, player_ids=[player]
    )
    event.time.GetCurrentTime()
    async with application._writing() as session:
        await storage.insert_audit_event(session, event, storage.serialise(event))
    assert [e.event_id for e in (await search(stub, player_id=player)).events] == [f"hold:{tag}"]
    assert [e.event_id for e in (await search(stub, actor="rita", player_id=player)).events] == [
        f"hold:{tag}"
    ]
    async with application._writing() as session:
        rows = (
            await session.execute(
                sa.select(audit_event_players.c.player_id)
                .join(audit_events, audit_events.c.number == audit_event_players.c.number)
                .where(audit_events.c.event_id == f"hold:{tag}")
            )
        ).all()
    assert [r.player_id for r in rows] == [player]


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_events_written_before_the_search_existed_are_found_after_the_migration(
    backend: str, request: pytest.FixtureRequest
) -> None:
    from alembic import command

    from service_runtime.database import sync_url
    from service_runtime.migrations import alembic_config
    from services.history.storage import MIGRATIONS_DIR, VERSION_TABLE

    url = request.getfixturevalue("postgres_url" if backend == "postgres" else "sqlite_url")
    config = alembic_config(url, MIGRATIONS_DIR, VERSION_TABLE)
    command.upgrade(config, "0005")
    old = history_pb2.AuditEvent(
        event_id="service:table/v1", kind="HAND_VOIDED", actor="service:table", subject="h1",
        player_ids=["anna", "boris", "anna"],
    )  # fmt: skip
    engine = sa.create_engine(sync_url(url))
    try:
        with engine.begin() as connection:
            connection.execute(
                sa.text(
                    "INSERT INTO history_audit_events (event_id, time_us, kind, record) "
                    "VALUES (:event_id, 1, 'HAND_VOIDED', :record)"
                ),
                {"event_id": old.event_id, "record": old.SerializeToString(deterministic=True)},
            )
        command.upgrade(config, "head")
        with engine.connect() as connection:
            actor = connection.execute(sa.select(audit_events.c.actor)).scalar_one()
            players = sorted(
                r.player_id for r in connection.execute(sa.select(audit_event_players.c.player_id))
            )
        assert (actor, players) == ("service:table", ["anna", "boris"])
        command.downgrade(config, "0005")
        command.upgrade(config, "head")
    finally:
        engine.dispose()
