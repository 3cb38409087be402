"""The five services and a gateway in front of them, as real processes, once per test module."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.gateway.gateway_process import running_gateway
from tests.security.service_processes import ServiceProcess, running_services

# A made-up bot: the gateway verifies initData with it; the tests sign with it as Telegram would.
BOT_TOKEN = "123456789:TEST-bot-token-for-the-gateway-tests-only"


@dataclass
class Cluster:
    services: dict[str, ServiceProcess]
    gateway: ServiceProcess

    @property
    def address(self) -> str:
        return self.gateway.address

    @property
    def url(self) -> str:
        return f"http://{self.gateway.address}"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with (
        running_services(tmp_path_factory.mktemp("gateway")) as services,
        running_gateway(
            services,
            {
                "POKER_GATEWAY_TELEGRAM_BOT_TOKEN": BOT_TOKEN,
                "POKER_GATEWAY_SIGN_INS_PER_MINUTE_PER_ADDRESS": "600",
                "POKER_GATEWAY_CALLS_PER_SECOND_PER_ADDRESS": "200",
                "POKER_GATEWAY_CALL_BURST_PER_ADDRESS": "400",
                # Short read deadlines: the streams of the tests outlive them (a deadline is for
                # reading a request, never for its answer).
                "POKER_GATEWAY_HEAD_TIMEOUT_SECONDS": "2",
                "POKER_GATEWAY_BODY_TIMEOUT_SECONDS": "2",
            },
        ) as gateway,
    ):
        yield Cluster(services, gateway)
