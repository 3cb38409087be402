"""A staff member's name: their identity in every token and in the audit trail (pure).

Shared by the gateway's allow-list (its Secret) and history's staff directory, so both admit the same
names: 1-56 letters, digits, `.`, `_`, `@` or `-`, never a service's name nor one of the prefixes the
trail's own writers go by (`service:`, `admin:`, `admin#`, `history-`) or players' (`tg:`).
"""

from __future__ import annotations

import re

from service_runtime.auth import STAFF_ROLES, Role, ServiceName

_NAME = re.compile(r"[A-Za-z0-9._@-]{1,56}")
_RESERVED_PREFIXES = ("service:", "admin:", "admin#", "history-", "tg:")
STAFF_ROLE_NAMES: dict[str, Role] = {role.value: role for role in STAFF_ROLES}


def valid_staff_name(name: str) -> bool:
    """A name no service, and none of history's own writers, goes by."""
    return (
        bool(_NAME.fullmatch(name))
        and not name.lower().startswith(_RESERVED_PREFIXES)
        and name.lower() not in {service.value for service in ServiceName}
    )
