"""A player through the gateway over raw HTTP: signed in by name, and seated at a table."""

from __future__ import annotations

from poker.common.v1 import common_pb2
from poker.gateway.v1 import gateway_pb2
from poker.lobby.v1 import lobby_pb2
from poker.table.v1 import table_pb2
from tests.gateway.connect_http import call

GATEWAY = "/poker.gateway.v1.GatewayService"
LOBBY = "/poker.lobby.v1.LobbyService"
TABLE = "/poker.table.v1.TableService"


def sign_in(address: str, name: str) -> str:
    """A development sign-in's token."""
    request = gateway_pb2.SignInRequest(development_name=name, device_id="raw-device")
    outcome = call(address, f"{GATEWAY}/SignIn", request.SerializeToString())
    assert outcome.code == "ok", outcome
    return str(gateway_pb2.SignInResponse.FromString(outcome.body).session.token)


def seat(address: str, token: str, name: str, room: str = "nlhe-gram-prestige") -> str:
    """Buys 10,000 development chips and sits down with them at a table of `room`: the table id."""
    buy = gateway_pb2.StartPurchaseRequest(
        request_id=f"{name}-buy",
        method=gateway_pb2.PURCHASE_METHOD_DEVELOPMENT,
        pool=common_pb2.CHIP_POOL_GRAM,
        chips=10_000,
    )
    assert call(address, f"{GATEWAY}/StartPurchase", buy.SerializeToString(), token=token).code == "ok"
    joined = call(
        address,
        f"{LOBBY}/JoinTable",
        lobby_pb2.JoinTableRequest(room_id=room).SerializeToString(),
        token=token,
    )
    table_id = str(lobby_pb2.JoinTableResponse.FromString(joined.body).table_id)
    sit = table_pb2.SitDownRequest(request_id=f"{name}-sit", table_id=table_id, buy_in=10_000)
    assert call(address, f"{TABLE}/SitDown", sit.SerializeToString(), token=token).code == "ok"
    return table_id
