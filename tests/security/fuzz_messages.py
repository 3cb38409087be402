"""Seeded generators of hostile requests for any protobuf method: garbage bytes and extreme field values.

Messages are built from the descriptors, so every field of every request type is covered without a
list kept by hand: empty, huge, negative, over-long, unicode, NUL and control characters, unknown
enum numbers, oversized repeated fields, nested messages. Strings are often drawn from a small pool
of plausible ids, so some calls reach deep into a service instead of failing the first check.
"""

from __future__ import annotations

import contextlib
import random
from typing import Any

from google.protobuf import descriptor, message_factory
from google.protobuf.message import Message

GARBAGE_PAYLOADS = (
    b"\xff\xff\xff",
    b"\x0a\xff\xff\xff\xff\x0f",  # a length prefix far beyond the body
    b"\x08" + b"\xff" * 10 + b"\x01",  # an over-long varint
    bytes(range(256)),
    b"\x0b" * 64,  # start-group tags with no end
)

PLAUSIBLE_IDS = (
    "alice",
    "bob",
    "t-1",
    "table-1",
    "room-1",
    "h-1",
    "GRAM",
    "MPX",
    "house",
    "wallet:GRAM:alice",
    # A seeded room and its first table, where the fuzz seeds two seated players and a hand.
    "nlhe-gram-duel",
    "nlhe-gram-duel.1",
)
INT_EXTREMES = (0, 1, -1, 2**31, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63), 10**9, 25)
UINT_EXTREMES = (0, 1, 2**32 - 1, 2**64 - 1, 7)
HOSTILE_STRINGS = (
    "",
    "x" * 120,
    "x" * 128,
    "x" * 129,
    "\x00",
    "y" * 20_000,
    "nul\x00inside",
    "tab\tand\nnewline",
    "\u202eright-to-left",
    "emoji-\U0001f0a1",
    "ÿ" * 64,
    "../../etc/passwd",
    "' OR 1=1 --",
    "%s%s%n",
    # Forged page tokens: base64 of what a naive token might hold, with absurd numbers.
    "c3RhdGVtZW50Ojk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTotNQ==",
    "c3RhdGVtZW50Oi0xOi0x",
)

_T = descriptor.FieldDescriptor


def _scalar(field: descriptor.FieldDescriptor, rng: random.Random) -> Any:
    kind = field.type
    if kind == _T.TYPE_STRING:
        roll = rng.random()
        if roll < 0.45:
            return rng.choice(PLAUSIBLE_IDS)
        if roll < 0.55:
            return f"id-{rng.randrange(1000)}"
        return rng.choice(HOSTILE_STRINGS)
    if kind == _T.TYPE_BYTES:
        return rng.choice(
            (
                b"",
                b"\x00" * 32,
                bytes(rng.randrange(256) for _ in range(rng.choice((1, 31, 32, 33, 65)))),
                b"z" * 20_000,
            )
        )
    if kind == _T.TYPE_BOOL:
        return rng.random() < 0.5
    if kind == _T.TYPE_ENUM:
        numbers = [v.number for v in field.enum_type.values]
        return rng.choice([*numbers, *numbers, 999, -1, 2**31 - 1])
    if kind in (_T.TYPE_UINT32, _T.TYPE_FIXED32):
        return rng.choice([v for v in UINT_EXTREMES if v < 2**32])
    if kind in (_T.TYPE_UINT64, _T.TYPE_FIXED64):
        return rng.choice(UINT_EXTREMES)
    if kind in (_T.TYPE_INT32, _T.TYPE_SINT32, _T.TYPE_SFIXED32):
        return rng.choice([v for v in INT_EXTREMES if -(2**31) <= v < 2**31])
    if kind in (_T.TYPE_INT64, _T.TYPE_SINT64, _T.TYPE_SFIXED64):
        return rng.choice(INT_EXTREMES)
    if kind in (_T.TYPE_DOUBLE, _T.TYPE_FLOAT):
        return rng.choice((0.0, -1.0, 1e308, float("nan"), float("inf")))
    raise AssertionError(f"unhandled field type {kind}")


def _fill(message: Message, rng: random.Random, depth: int) -> None:
    for field in message.DESCRIPTOR.fields:
        if rng.random() < 0.3:
            continue  # left at its default
        is_message = field.type == _T.TYPE_MESSAGE
        if field.is_repeated:
            if is_message and field.message_type.GetOptions().map_entry:
                continue  # no map fields in request types today; leave empty
            count = rng.choice((0, 1, 2, 3, 60 if depth == 0 else 2, 1500 if depth == 0 else 3))
            container = getattr(message, field.name)
            for _ in range(count):
                if is_message:
                    if depth < 3:
                        _fill(container.add(), rng, depth + 1)
                    else:
                        container.add()
                else:
                    container.append(_scalar(field, rng))
        elif is_message:
            if depth < 3:
                _fill(getattr(message, field.name), rng, depth + 1)
        else:
            # A value the field cannot hold (a negative number into an unsigned one) keeps the default.
            with contextlib.suppress(ValueError, TypeError):
                setattr(message, field.name, _scalar(field, rng))


def random_request(method: descriptor.MethodDescriptor, rng: random.Random) -> bytes:
    """One serialised request of the method's input type with random, often hostile, fields."""
    cls = message_factory.GetMessageClass(method.input_type)
    message = cls()
    _fill(message, rng, 0)
    return bytes(message.SerializeToString())
