"""Four-eyes on money (issue 38): who counts as one person when one staff member asks and another
decides (the cashier's house funding, history's releases of held chips)."""

from __future__ import annotations

import re

from service_runtime.errors import PermissionDenied

# A staff member's name as four-eyes can tell people apart by: plain ASCII, no space or control
# character (a token minted for `anna<TAB>` or `\u0430nna` is no second person); compared ignoring case.
_STAFF_NAME = re.compile(r"[A-Za-z0-9._@:+-]{1,128}")


def staff_person(subject: str) -> str:
    """The person a staff token names, as four-eyes compares them; PERMISSION_DENIED for a name that
    cannot be told apart from another (found by a tester: `ANNA`, `anna ` and `anna<TAB>` decided
    anna's own request)."""
    if not _STAFF_NAME.fullmatch(subject):
        raise PermissionDenied(
            "FOUR_EYES_REQUIRED",
            "a money operation needs a staff name of plain letters, digits and . _ @ : + - "
            "(one that cannot be mistaken for another person's)",
            {},
        )
    return subject.casefold()
