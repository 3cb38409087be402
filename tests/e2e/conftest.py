from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cluster import Cluster, running_cluster
from tests.e2e.faults import own_servers
from tests.own_servers import OwnPostgres, OwnRedis


@pytest.fixture
def cluster(
    postgres_server_url: str, redis_server_url: str, redis_prefix: str, tmp_path: Path
) -> Iterator[Cluster]:
    with running_cluster(postgres_server_url, redis_server_url, redis_prefix, tmp_path) as started:
        yield started


@pytest.fixture
def own_backends() -> Iterator[tuple[OwnPostgres, OwnRedis]]:
    with own_servers() as servers:
        yield servers
