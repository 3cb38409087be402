"""The table's field checks (grpc_adapter): an id is 1 to 128 printable ASCII characters, the whole of
it. Found by an independent tester: a trailing newline passed (`$` matches before a final "\\n"), so
`CloseTable(request_id="r\\n")` closed a table and every other RPC took such ids."""

from __future__ import annotations

import pytest

from service_runtime.errors import InvalidArgument
from services.table.grpc_adapter import _printable_id


@pytest.mark.parametrize("value", ["r\n", "r\r", "\nr", "r\n\n", "a\x00b", "é", "x" * 129, ""])
def test_an_id_that_is_not_printable_ascii_throughout_is_refused(value: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        _printable_id(value, "request_id")
    assert refused.value.reason in ("FIELD_INVALID", "FIELD_REQUIRED")


@pytest.mark.parametrize("value", ["r", "nlhe-gram-duel.1", "x" * 128, "a b~"])
def test_a_printable_id_passes_as_it_is(value: str) -> None:
    assert _printable_id(value, "request_id") == value
