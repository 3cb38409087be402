"""Redis client factory: one async client per process, every key under a configurable prefix."""

from __future__ import annotations

import redis.asyncio as redis


def create_redis(url: str) -> redis.Redis:
    """A pooled async client; decode_responses off because event logs store bytes."""
    return redis.Redis.from_url(url, decode_responses=False, health_check_interval=30)
