"""The staff allow-list: who may sign in to the back office, under which name, with which roles (pure).

Set by the operator in POKER_GATEWAY_STAFF_ALLOW_LIST (docs/backoffice.md, "Adding a staff member"):
entries `<telegram user id>=<name>:<role>+<role>` separated by `;`, e.g.
`1001=olga:operations+support;1002=rita:risk`. The name is the staff member's identity everywhere
(their token's subject, the audit trail's actor): letters, digits, `.`, `_`, `@`, `-`, at most 56, not
a service's or the history's own writer names; each id and each name once; roles are staff roles
(`support`, `risk`, `finance`, `operations`, `admin`). The list is read at start-up; a change takes a
restart (a rolling one), and a person taken off it loses the back office at their next renewal.
"""

from __future__ import annotations

from dataclasses import dataclass

from service_runtime.auth import Role
from service_runtime.staff_names import STAFF_ROLE_NAMES, valid_staff_name


class StaffListError(ValueError):
    """The allow-list's text is not valid; the message says which entry and why."""


@dataclass(frozen=True)
class StaffMember:
    telegram_id: int
    name: str
    roles: frozenset[Role]


@dataclass(frozen=True)
class StaffList:
    by_id: dict[int, StaffMember]

    @property
    def by_name(self) -> dict[str, StaffMember]:
        return {m.name: m for m in self.by_id.values()}

    def member(self, telegram_id: int) -> StaffMember | None:
        return self.by_id.get(telegram_id)

    def named(self, name: str) -> StaffMember | None:
        return next((m for m in self.by_id.values() if m.name == name), None)


def parse_staff_list(text: str) -> StaffList:
    members: dict[int, StaffMember] = {}
    names: set[str] = set()
    staff_roles = STAFF_ROLE_NAMES
    for number, raw in enumerate(text.split(";"), start=1):
        entry = raw.strip()
        if not entry:
            continue
        ident, eq, rest = entry.partition("=")
        name, colon, role_text = rest.partition(":")
        where = f"entry {number} ({entry[:40]!r})"
        if not eq or not colon:
            raise StaffListError(f"{where}: each entry is <telegram id>=<name>:<role>+<role>")
        if not ident.strip().isdigit() or int(ident) <= 0:
            raise StaffListError(f"{where}: the Telegram id is a positive number")
        name = name.strip()
        if not valid_staff_name(name):
            raise StaffListError(
                f"{where}: a name is 1-56 letters, digits, '.', '_', '@' or '-' (not service:, admin:, history-, tg:)"
            )
        roles: set[Role] = set()
        for role in role_text.split("+"):
            if role.strip() not in staff_roles:
                raise StaffListError(f"{where}: roles are {', '.join(sorted(staff_roles))} joined by '+'")
            roles.add(staff_roles[role.strip()])
        telegram_id = int(ident)
        if telegram_id in members or name.lower() in names:
            raise StaffListError(f"{where}: each Telegram id and each name is listed once")
        members[telegram_id] = StaffMember(telegram_id, name, frozenset(roles))
        names.add(name.lower())
    return StaffList(members)
