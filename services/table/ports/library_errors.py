"""The pure engine's refusals as the table answers them: the engine's reason, with the status code the
error catalogue (protos/poker/common/v1/common.proto, ErrorReason) gives that reason.

tests/runtime/test_error_catalogue.py checks every reason the engine can raise against the catalogue,
so the code a client gets and the code the catalogue documents are one.
"""

from __future__ import annotations

from poker_engine.errors import EngineError
from service_runtime.errors import DomainError, FailedPrecondition, InvalidArgument

# Bad input whatever the state of the hand or table; every other refusal is illegal only now.
_INVALID_ARGUMENT_REASONS = frozenset(
    {"AMOUNT_REQUIRED", "INVALID_AMOUNT", "INVALID_SEAT", "INVALID_STACK", "INVALID_TABLE"}
)


def engine_refusal(error: EngineError) -> DomainError:
    """An action or seating change the engine refused, with its reason passed through."""
    if error.reason in _INVALID_ARGUMENT_REASONS:
        return InvalidArgument(error.reason, str(error))
    return FailedPrecondition(error.reason, str(error))
