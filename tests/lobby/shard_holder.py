"""A stand-in table shard for the lobby's process tests (the table service of issue 13 was not on
this branch yet): `python -m tests.lobby.shard_holder ...`.

It serves ShardDirectoryService (service tokens only) on port 0 with one table per room given
(OpenTable opens any: the lobby asks the room's owner to open a table it routes a player to). With
--redis-url it also holds a lease in the shard registry (heartbeat) under that address, resolves the
rooms it is told about on every beat and publishes one table per room it owns to the table
directory, exactly as a table shard does. It prints one JSON line `{"event": "ready", "port": N}`
once ready.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from typing import Any

from poker.lobby.v1 import shard_directory_pb2, shard_directory_pb2_grpc
from service_runtime.access import AccessPolicy, services
from service_runtime.auth import ServiceName, TokenKeys
from service_runtime.redis_client import create_redis
from service_runtime.server import GrpcService, create_server
from service_runtime.service_settings import DEV_KEY_ID, DEV_SIGNING_KEY
from service_runtime.shard_registry import RedisShardRegistry, ShardInfo, ShardLease
from service_runtime.table_directory import (
    RedisTableDirectory,
    SeatFigures,
    TableFigures,
    figures_to_summary,
    table_id_for,
)


def figures_for(shard_id: str, room_id: str, seats: int = 4) -> TableFigures:
    return TableFigures(
        table_id=table_id_for(room_id, 1),
        room_id=room_id,
        shard_id=shard_id,
        seats=seats,
        taken_seats=(SeatFigures(0, f"guest of {shard_id}", 1_000),),
        average_pot=100,
        hands_per_hour=60,
    )


class Directory(shard_directory_pb2_grpc.ShardDirectoryServiceServicer):
    def __init__(self, shard_id: str, rooms: list[str], seats: int) -> None:
        self._shard_id = shard_id
        self._rooms = rooms
        self._seats = seats

    async def ListShardTables(  # noqa: N802
        self, request: shard_directory_pb2.ListShardTablesRequest, context: Any
    ) -> shard_directory_pb2.ListShardTablesResponse:
        rooms = [r for r in self._rooms if not request.room_id or r == request.room_id]
        return shard_directory_pb2.ListShardTablesResponse(
            tables=[figures_to_summary(figures_for(self._shard_id, r, self._seats)) for r in rooms]
        )

    async def OpenTable(  # noqa: N802
        self, request: shard_directory_pb2.OpenTableRequest, context: Any
    ) -> shard_directory_pb2.OpenTableResponse:
        return shard_directory_pb2.OpenTableResponse(table_id=request.table_id)


async def hold_lease(args: argparse.Namespace, stop: asyncio.Event) -> None:
    running, port = await start_directory(args)
    client = create_redis(args.redis_url)
    registry = RedisShardRegistry(client, prefix=args.prefix, lease_seconds=args.lease)
    directory = RedisTableDirectory(client, prefix=args.prefix, ttl_seconds=args.lease * 1.5)
    shard = ShardInfo(args.shard_id, f"127.0.0.1:{port}")
    lease = ShardLease(registry, shard)
    await lease.start()
    print(json.dumps({"event": "ready", "port": port}), flush=True)
    try:
        while not stop.is_set():
            owners = await registry.owners_of(args.rooms)
            for room_id, owner in owners.items():
                if owner.shard == shard:
                    await directory.publish(figures_for(shard.shard_id, room_id, args.seats))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=lease.interval)
    finally:
        await lease.stop()
        await client.aclose()
        await running.stop(grace_seconds=0.5)


async def start_directory(args: argparse.Namespace) -> tuple[Any, int]:
    name = "poker.lobby.v1.ShardDirectoryService"
    servicer = Directory(args.shard_id, args.rooms, args.seats)
    running, port = await create_server(
        "127.0.0.1:0",
        services=[
            GrpcService(
                name,
                lambda s: shard_directory_pb2_grpc.add_ShardDirectoryServiceServicer_to_server(servicer, s),
            )
        ],
        # Only the lobby lists a shard's tables this way.
        access=AccessPolicy.for_service(
            name, {"ListShardTables": services(ServiceName.LOBBY), "OpenTable": services(ServiceName.LOBBY)}
        ),
        token_keys=TokenKeys(keys={DEV_KEY_ID: DEV_SIGNING_KEY.encode()}, signing_key_id=DEV_KEY_ID),
    )
    await running.start()
    return running, port


async def serve_directory(args: argparse.Namespace, stop: asyncio.Event) -> None:
    running, port = await start_directory(args)
    print(json.dumps({"event": "ready", "port": port}), flush=True)
    await stop.wait()
    await running.stop(grace_seconds=0.5)


async def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shard-id", required=True)
    parser.add_argument("--redis-url", default="")
    parser.add_argument("--prefix", default="poker:")
    parser.add_argument("--lease", type=float, default=1.0)
    parser.add_argument("--rooms", nargs="*", default=[])
    parser.add_argument("--seats", type=int, default=4)
    args = parser.parse_args(argv)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    await (hold_lease(args, stop) if args.redis_url else serve_directory(args, stop))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
