"""Redis client factory: one async client per process, every key under a configurable prefix."""

from __future__ import annotations

import redis.asyncio as redis

from service_runtime.storage_metrics import TimedRedis


def create_redis(url: str) -> redis.Redis:
    """A pooled async client; decode_responses off because event logs store bytes. Every command's
    latency goes to the metrics (storage_metrics)."""
    return TimedRedis.from_url(url, decode_responses=False, health_check_interval=30)
