from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cluster import Cluster, running_cluster


@pytest.fixture
def cluster(
    postgres_server_url: str, redis_server_url: str, redis_prefix: str, tmp_path: Path
) -> Iterator[Cluster]:
    with running_cluster(postgres_server_url, redis_server_url, redis_prefix, tmp_path) as started:
        yield started
