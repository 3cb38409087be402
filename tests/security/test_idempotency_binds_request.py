"""A request id binds the whole request (issue 41): for every idempotent mutating RPC of the cashier,
the lobby and the table (and, where it is cheap, of history and fairness), the same id with any other
field changed in turn is ALREADY_EXISTS `IDEMPOTENCY_CONFLICT` and changes nothing.

Issue 41: the gateway's `StartPurchase` with request id R credited 100 GRAM chips, then R again with
`pool: MPX` credited 100 MPX chips, because the cashier keyed a purchase by (source, payment
reference). Here each RPC is called once against the services running as real processes
(`service_processes.running_services`, embedded defaults), then again with its id and each other
field of the request changed in turn, to a value the RPC would otherwise take; every answer must be
the conflict, the state the case reads (balances, rooms, seats, holds, commitments) must be what it
was after the first call, and the first request sent again must still be answered as a retry.

Which RPCs: every method of the five services is classified in `idempotency_cases.py` (with the
cases and the state each reads), by its request message: a case (`RPCS`), a request whose only fields are its key and its address (`KEY_ONLY`, checked against the
descriptor), not keyed by a caller's id at all (`NOT_KEYED`, reads and routing), or, for history and
fairness only, too dear to set up here (`NOT_CHEAP`). A new method fails
`test_every_method_of_every_service_is_classified` until it is classified; a new field of a request
with a case fails that case until a variant changes it (or says why not). Known gaps of history and
fairness are `xfail(strict=True)`, one param per field (`Rpc.gaps`; none at present).
This module runs the cases. The issue itself is reproduced through the gateway's development purchase at the end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from google.protobuf import descriptor_pool
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message

from poker.cashier.v1 import cashier_pb2
from poker.common.v1 import common_pb2
from poker.fairness.v1 import fairness_pb2
from poker.gateway.v1 import gateway_pb2
from poker.history.v1 import history_pb2
from poker.lobby.v1 import lobby_pb2, shard_directory_pb2
from poker.table.v1 import table_pb2
from service_runtime.testing import token_for
from services.gateway.access import GATEWAY_SERVICE
from tests.gateway.connect_http import call as connect_call
from tests.gateway.gateway_process import running_gateway

from .idempotency_cases import (
    GRAM,
    KEY_ONLY,
    MPX,
    NOT_CHEAP,
    NOT_KEYED,
    RPCS,
    SERVICES,
    Rpc,
    connected,
    fresh,
    money,
)
from .service_processes import FULL_NAMES, ServiceProcess, running_services

# Message types compared as one value (their fields are not the request's own).
OPAQUE_TYPES = ("google.protobuf.Timestamp",)
# Services a process serves beside its own (a table shard answers the lobby's directory calls).
ALSO_SERVED = {"table": ("poker.lobby.v1.ShardDirectoryService",)}
GENERATED = (cashier_pb2, lobby_pb2, shard_directory_pb2, table_pb2, history_pb2, fairness_pb2)


# Field paths ---------------------------------------------------------------------------------------


def leaf_paths(descriptor: Descriptor, prefix: str = "") -> set[str]:
    """Every field of a request as a dotted path, down to scalars (a repeated message's fields
    without an index: `boxes.ante`)."""
    paths: set[str] = set()
    for field_descriptor in descriptor.fields:
        path = f"{prefix}{field_descriptor.name}"
        nested = field_descriptor.message_type
        if nested is not None and nested.full_name not in OPAQUE_TYPES:
            paths |= leaf_paths(nested, f"{path}.")
        else:
            paths.add(path)
    return paths


def _step(part: str) -> tuple[str, int | None]:
    name, _, index = part.partition("[")
    return name, int(index.rstrip("]")) if index else None


def with_fields(request: Message, changes: Mapping[str, Any]) -> Message:
    """A copy of `request` with each path set (`boxes[0].ante`; lists replace repeated fields)."""
    copy = type(request)()
    copy.CopyFrom(request)
    for path, value in changes.items():
        *parents, last = path.split(".")
        target: Any = copy
        for part in parents:
            name, index = _step(part)
            target = getattr(target, name) if index is None else getattr(target, name)[index]
        name, index = _step(last)
        if index is not None:
            getattr(target, name)[index] = value
        elif isinstance(value, Message):
            getattr(target, name).CopyFrom(value)
        elif isinstance(value, list):
            container = getattr(target, name)
            del container[:]
            container.extend(value)
        else:
            setattr(target, name, value)
    assert copy != request, f"changing {sorted(changes)} left the request as it was"
    return copy


def plain(path: str) -> str:
    return ".".join(_step(part)[0] for part in path.split("."))


def covered(leaf: str, by: set[str]) -> bool:
    return any(leaf == path or leaf.startswith(f"{path}.") for path in by)


def served_methods() -> dict[str, Descriptor]:
    """Every method the five processes serve, named `service.Method` (`table.ShardDirectoryService.X`
    for the directory the shard serves beside its own), with its request type."""
    pool = descriptor_pool.Default()
    methods = {}
    for name in SERVICES:
        for full_name in (FULL_NAMES[name], *ALSO_SERVED.get(name, ())):
            service = pool.FindServiceByName(full_name)
            prefix = name if full_name == FULL_NAMES[name] else f"{name}.{service.name}"
            for method in service.methods:
                methods[f"{prefix}.{method.name}"] = method.input_type
    return methods


def test_every_method_of_every_service_is_classified() -> None:
    """Each served method has a case, or its request has nothing to change, or no caller's id; each
    case's key and exempt fields exist. (That a case changes every other field of its request is
    checked by the case itself, against the request it sends.)"""
    assert GENERATED  # importing the generated modules fills the descriptor pool
    methods = served_methods()
    cases = {rpc.name: rpc for rpc in RPCS}
    classified = [*cases, *KEY_ONLY, *NOT_KEYED, *NOT_CHEAP]
    assert len(classified) == len(set(classified)), "a method is classified twice"
    assert set(classified) == set(methods), {
        "not classified (add a case, or say why it needs none)": sorted(set(methods) - set(classified)),
        "classified but not served": sorted(set(classified) - set(methods)),
    }
    for name, request in methods.items():
        fields = leaf_paths(request)
        if name in NOT_KEYED:
            # A mutation carries a caller's id: such a request must have a case or be key-only.
            assert "request_id" not in fields, name
        elif name in NOT_CHEAP:
            assert name.startswith(("history.", "fairness.")), name
        elif name in KEY_ONLY:
            assert fields == set(KEY_ONLY[name][0]), (name, fields)
        else:
            rpc = cases[name]
            named = {*rpc.key, *rpc.exempt, *rpc.gaps}
            assert all(any(covered(leaf, {path}) for leaf in fields) for path in named), (name, named)


@dataclass
class Run:
    rpc: Rpc
    only: frozenset[str] | None  # the variants of these paths only (a known gap's param)


def _params() -> Iterator[Any]:
    for rpc in RPCS:
        yield pytest.param(Run(rpc, None), id=rpc.name)
        for path, reason in rpc.gaps.items():
            mark = pytest.mark.xfail(strict=True, reason=reason)
            yield pytest.param(Run(rpc, frozenset({path})), id=f"{rpc.name}[{path}]", marks=mark)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ServiceProcess]]:
    data_dir: Path = tmp_path_factory.mktemp("idempotency")
    # Hands start a second after two players sit (the heads-up case plays one).
    with running_services(data_dir, {"POKER_TABLE_COUNTDOWN_SECONDS": "1"}) as services:
        yield services


async def _run(services: Mapping[str, ServiceProcess], run: Run) -> None:
    rpc = run.rpc
    async with connected(services) as c:
        trial = await rpc.trial(c)
        variants = [v for v in trial.variants if run.only is None or {plain(p) for p in v} & run.only]
        if run.only is None:
            variants = [v for v in variants if not {plain(p) for p in v} & set(rpc.gaps)]
            varied = {plain(path) for variant in trial.variants for path in variant}
            if rpc.complete:
                named = varied | set(rpc.key) | set(rpc.exempt) | set(rpc.gaps)
                missing = sorted(
                    leaf
                    for leaf in leaf_paths(cast(Descriptor, trial.request.DESCRIPTOR))
                    if not covered(leaf, named)
                )
                assert not missing, f"{rpc.name}: no variant changes {missing}"
            assert not varied & set(rpc.key), "a variant changes the key"
        changed = [(variant, with_fields(trial.request, variant)) for variant in variants]

        async def answer(request: Message) -> str:
            label, reply = await c.outcome(
                rpc.service, rpc.method, request, trial.caller, wait_unavailable=True
            )
            return trial.label(reply) if reply is not None else label

        try:
            first = await answer(trial.request)
            assert first in trial.first, f"{rpc.name}: the first call answered {first}"
            before = await trial.state()
            answers = {", ".join(sorted(variant)): await answer(request) for variant, request in changed}
            retried = await answer(trial.request)
            after = await trial.state()
        finally:
            if trial.cleanup is not None:
                await trial.cleanup()
        wrong = {fields: label for fields, label in answers.items() if label != trial.conflict}
        assert not wrong, f"{rpc.name}: the same id with these fields changed was not a conflict: {wrong}"
        assert retried == (trial.retried or first), f"{rpc.name}: the first request again answered {retried}"
        assert after == before, f"{rpc.name}: the refused calls changed the state"


@pytest.mark.parametrize("run", list(_params()))
def test_the_same_id_with_any_field_changed_is_a_conflict_and_changes_nothing(
    cluster: dict[str, ServiceProcess], run: Run
) -> None:
    asyncio.run(_run(cluster, run))


def test_issue_41_the_gateways_purchase_again_with_another_pool_is_a_conflict(
    cluster: dict[str, ServiceProcess],
) -> None:
    """The issue as reported, through the gateway's development purchase: request id R bought 100
    GRAM chips; R again with the MPX pool must not buy 100 MPX chips."""
    name = fresh("gwen")
    path = f"/{GATEWAY_SERVICE}/StartPurchase"

    def buy(gateway: ServiceProcess, pool: common_pb2.ChipPool.ValueType, chips: int) -> str:
        request = gateway_pb2.StartPurchaseRequest(
            request_id="R", method=gateway_pb2.PURCHASE_METHOD_DEVELOPMENT, pool=pool, chips=chips
        )
        body = request.SerializeToString()
        return connect_call(gateway.address, path, body, token=token_for(name), timeout=10).label

    async def wallets() -> object:
        async with connected(cluster) as c:
            return (await money(c, name))[0]

    with running_gateway(cluster) as gateway:
        assert buy(gateway, GRAM, 100) == "ok"
        bought = asyncio.run(wallets())
        for pool, chips in ((MPX, 100), (MPX, 1), (GRAM, 200)):
            assert buy(gateway, pool, chips) == "already_exists IDEMPOTENCY_CONFLICT", (pool, chips)
        assert buy(gateway, GRAM, 100) == "ok"  # the retry
    assert asyncio.run(wallets()) == bought == [[(GRAM, 100), (MPX, 0)], ""]
