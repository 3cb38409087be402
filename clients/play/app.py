"""The Textual application: sign in, then the lobby (balances, chips, rooms), from which a player
sits down, watches, plays a house game or reads their history. Screens call `gateway.Platform` and
render with `view_model`; they hold no rules of their own."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Button, DataTable, Footer, Header, Input, Label, Static

from clients.play import texts
from clients.play import view_model as vm
from clients.play.gateway import Platform, PlayError, new_request_id
from clients.play.identity import Identity, SignInError, development_identity, production_identity
from clients.play.settings import PlaySettings
from clients.play.texts import t
from clients.play.words import refusal_text
from poker.common.v1 import common_pb2
from poker.lobby.v1 import lobby_pb2

CSS = """
Screen { layout: vertical; }
.row { height: auto; }
.row Input { width: 24; }
.row Button { margin: 0 1 0 0; min-width: 8; }
/* The lobby's room list and the table's log take the rows the terminal has (issue 39). */
#rooms { height: 1fr; min-height: 7; }
#room-detail { height: 5; }
#hands, #changes { height: 12; }
#log { height: 1fr; min-height: 8; border: round $primary; }
/* Where the focus is, at a glance (issue 39): an accent frame on the focused widget, a heavy one on a
   focused list; the unfocused keep a quiet frame of the same size so nothing moves when focus does. */
Button:focus { border-top: tall $accent; border-bottom: tall $accent; text-style: bold reverse; }
Input:focus, Checkbox:focus { border: tall $accent; }
DataTable { border: round $panel-lighten-2; }
DataTable:focus { border: heavy $accent; }
#decisions { height: 3; }
.field-label { height: 3; width: auto; content-align: left middle; padding: 0 1 0 1; }
.message { color: $warning; height: auto; }
.line { height: 1; }
.note { color: $text-muted; height: auto; }
#turn { text-style: bold; }
#link { color: $accent; }
"""

BALANCE_REFRESH_SECONDS = 3.0


@dataclass
class Session:
    """What the client remembers while it runs: the commitment it was shown for each hand."""

    platform: Platform
    commitments: dict[str, str] = field(default_factory=dict)
    rooms: dict[str, lobby_pb2.Room] = field(default_factory=dict)
    # The client seed I set for each hand it went into (docs/fairness.md, player entropy).
    client_seeds: dict[str, str] = field(default_factory=dict)
    # Version 3: each hand's set of client-seed hashes as the table closed it, before any seed was
    # sent, (seat, hash) pairs: the reveal's seeds are checked against it.
    seed_hash_sets: dict[str, tuple[tuple[int, str], ...]] = field(default_factory=dict)

    def remember_commitment(self, hand_id: str, commitment: str, dealt: bool) -> None:
        # Only a commitment seen before any card counts as "shown before the deal".
        if hand_id and commitment and not dealt:
            self.commitments.setdefault(hand_id, commitment)


def error_text(error: PlayError) -> str:
    return refusal_text(error.code, error.reason, error.message)


def localize_bindings(node: DOMNode) -> None:
    """The footer's words in the chosen language: a class's BINDINGS give catalogue keys as their
    descriptions (Textual reads them when the class is made, before a language is chosen), said here
    for this one screen or app. Textual's own bindings keep their words."""
    bindings = node._bindings.key_to_bindings
    for key, listed in bindings.items():
        bindings[key] = [
            dataclasses.replace(b, description=t(b.description)) if texts.known(b.description) else b
            for b in listed
        ]


class SignInScreen(Screen[None]):
    def __init__(self, settings: PlaySettings) -> None:
        super().__init__()
        self.settings = settings

    def compose(self) -> ComposeResult:
        yield Header()
        if self.settings.development:
            yield Static(t("signin.development_note"), classes="note")
            yield Input(placeholder=t("signin.name_placeholder"), id="name")
        else:
            yield Static(t("signin.production_note"), classes="note")
            yield Input(placeholder=t("signin.token_placeholder"), id="token", password=True)
        yield Button(t("signin.button"), id="sign-in", variant="primary")
        yield Static("", id="message", classes="message")
        yield Footer()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._sign_in()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "sign-in":
            self._sign_in()

    def _sign_in(self) -> None:
        try:
            if self.settings.development:
                identity = development_identity(self.query_one("#name", Input).value, self.settings.auth_keys)
            else:
                identity = production_identity(self.query_one("#token", Input).value)
        except SignInError as error:
            self.query_one("#message", Static).update(str(error))
            return
        app = self.app
        assert isinstance(app, PokerPlayApp)
        app.start_session(identity)


class SessionScreen(Screen[None]):
    """A screen shown once signed in: it reads the running session."""

    def __init__(self) -> None:
        super().__init__()
        localize_bindings(self)

    @property
    def session(self) -> Session:
        app = self.app
        assert isinstance(app, PokerPlayApp)
        assert app.session is not None
        return app.session


class LobbyScreen(SessionScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        ("r", "refresh", "app.refresh"),
        ("h", "history", "app.my_hands"),
    ]
    # The room list is what a keyboard player moves through first (arrows, then Sit down or Watch).
    AUTO_FOCUS = "#rooms"

    def __init__(self) -> None:
        super().__init__()
        self.selected: lobby_pb2.Room | None = None
        self.wallets: dict[int, int] = {}
        self.open_table = ""

    def compose(self) -> ComposeResult:
        identity = self.session.platform.identity
        mode = t("lobby.mode_development") if identity.development else t("lobby.mode_production")
        yield Header()
        yield Static(t("lobby.signed_in", player=identity.player_id, mode=mode), id="who")
        yield Static(t("lobby.balances_loading"), id="balances")
        with Horizontal(classes="row"):
            yield Label(t("lobby.chips_to_buy"), classes="field-label")
            yield Input("1000", id="buy-amount", restrict=r"[0-9]*")
            yield Button(t("lobby.buy_gram"), id="buy-gram")
            yield Button(t("lobby.buy_mpx"), id="buy-mpx")
            yield Button(t("lobby.rejoin"), id="rejoin", disabled=True)
        if self.session.platform.can_buy_chips:
            note = t("lobby.buy_note_development")
        else:
            note = t("lobby.buy_note_production")
        yield Static(note, id="buy-note", classes="note")
        rooms: DataTable[str | Text] = DataTable(id="rooms", cursor_type="row")
        rooms.border_title = t("lobby.rooms_title")
        yield rooms
        yield Static("", id="room-detail")
        with Horizontal(classes="row"):
            yield Label(t("lobby.buy_in"), classes="field-label")
            yield Input("", id="buy-in", placeholder=t("lobby.buy_in_placeholder"), restrict=r"[0-9]*")
            yield Button(t("lobby.sit"), id="sit", variant="primary")
            yield Button(t("lobby.watch"), id="watch")
            yield Button(t("lobby.house"), id="house")
            yield Button(t("app.my_hands"), id="history")
            yield Button(t("app.refresh"), id="refresh")
        yield Static("", id="message", classes="message")
        yield Footer()

    async def on_mount(self) -> None:
        rooms = self.query_one("#rooms", DataTable)
        rooms.add_columns(
            *(t(f"lobby.column_{name}") for name in ("game", "room", "pool", "stakes", "buy_in", "seats"))
        )
        buttons = (self.query_one("#buy-gram", Button), self.query_one("#buy-mpx", Button))
        for button in buttons:
            button.disabled = not self.session.platform.can_buy_chips
        self.run_worker(self._show_profile_name(), exclusive=False)
        await self.action_refresh()
        self.set_interval(BALANCE_REFRESH_SECONDS, self.refresh_balances)

    def say(self, text: str) -> None:
        self.query_one("#message", Static).update(text)

    async def _show_profile_name(self) -> None:
        """The name the other players see (the lobby's profile), beside who the client is signed in as;
        the line stays as it was when the lobby cannot say."""
        try:
            profile = await self.session.platform.profile()
        except PlayError:
            return
        if not profile.display_name:
            return
        identity = self.session.platform.identity
        mode = t("lobby.mode_development") if identity.development else t("lobby.mode_production")
        who = t("lobby.signed_in_named", player=identity.player_id, mode=mode, name=profile.display_name)
        self.query_one("#who", Static).update(who)

    async def action_refresh(self) -> None:
        if await self.refresh_balances():
            await self._refresh_rooms()

    async def refresh_balances(self) -> bool:
        """Wallets and the open seat (a stack left mid-hand comes back once the hand settles)."""
        try:
            balances = await self.session.platform.balances()
        except PlayError as error:
            self.say(t("lobby.unreachable", error=error_text(error)))
            return False
        self.wallets = {w.pool: w.balance for w in balances.wallets}
        text = "  ".join(
            t("lobby.wallet", pool=vm.pool_name(w.pool), amount=vm.chips(w.balance)) for w in balances.wallets
        )
        seat = balances.open_seat_session
        self.open_table = seat.table_id if balances.HasField("open_seat_session") and seat.table_id else ""
        if self.open_table:
            seated = t(
                "lobby.seated_at",
                table=seat.table_id,
                amount=vm.chips(seat.stack),
                pool=vm.pool_name(seat.pool),
            )
            text += f"  |  {seated}"
        self.query_one("#balances", Static).update(text or t("lobby.no_wallet"))
        self.query_one("#rejoin", Button).disabled = not self.open_table
        return True

    async def _refresh_rooms(self) -> None:
        try:
            rooms = await self.session.platform.rooms()
        except PlayError as error:
            self.say(t("lobby.rooms_failed", error=error_text(error)))
            return
        self.session.rooms = {r.room_id: r for r in rooms}
        table = self.query_one("#rooms", DataTable)
        cursor = table.cursor_row
        table.clear()
        listed = vm.rooms_by_game(rooms)
        for heading, room in listed:
            row = vm.room_row(room)
            # Grouped by game: the group's first row names it in bold, the others repeat it dimmed.
            game = Text(row.game, style="bold" if heading else "dim")
            table.add_row(game, row.room_id, row.pool, row.stakes, row.buy_in, row.seats, key=row.room_id)
        if listed:
            self.selected = None  # show the selected room's tables afresh
            at = min(cursor, len(listed) - 1)
            table.move_cursor(row=at)
            await self._select(listed[at][1].room_id)

    async def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "rooms" and event.row_key.value is not None:
            await self._select(str(event.row_key.value))

    async def _select(self, room_id: str) -> None:
        room = self.session.rooms.get(room_id)
        if room is None or (self.selected is not None and self.selected.room_id == room_id):
            return
        self.selected = room
        row = vm.room_row(room)
        lines = [
            t(
                "lobby.room_detail",
                name=room.display_name,
                game=row.game,
                pool=row.pool,
                stakes=row.stakes,
                buy_in=row.buy_in,
            )
        ]
        if not row.house:
            self.query_one("#buy-in", Input).value = str(
                vm.default_buy_in(room, self.wallets.get(room.pool, 0))
            )
            try:
                tables = await self.session.platform.tables(room_id)
            except PlayError as error:
                lines.append(t("lobby.tables_failed", error=error_text(error)))
            else:
                lines.extend([vm.table_line(table) for table in tables] or [t("lobby.no_table")])
        self.query_one("#room-detail", Static).update("\n".join(lines))

    async def select_room(self, room_id: str) -> None:
        """Move the cursor to a room (keyboard users arrow to it; tests call this)."""
        table = self.query_one("#rooms", DataTable)
        table.move_cursor(row=table.get_row_index(room_id))
        await self._select(room_id)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        handlers = {
            "buy-gram": lambda: self._buy(common_pb2.CHIP_POOL_GRAM),
            "buy-mpx": lambda: self._buy(common_pb2.CHIP_POOL_MPX),
            "sit": self._sit,
            "watch": self._watch,
            "house": self._house,
            "history": self.action_history,
            "refresh": self.action_refresh,
            "rejoin": self._rejoin,
        }
        handler = handlers.get(event.button.id or "")
        if handler is not None:
            await handler()

    async def _buy(self, pool: int) -> None:
        text = self.query_one("#buy-amount", Input).value
        if not text.isdigit() or int(text) <= 0:
            self.say(t("lobby.type_chips"))
            return
        try:
            reply = await self.session.platform.buy_chips(pool, int(text), f"play-{new_request_id()}")
        except PlayError as error:
            self.say(t("lobby.purchase_refused", error=error_text(error)))
            return
        self.say(t("lobby.bought", amount=vm.chips(reply.transfer.amount), pool=vm.pool_name(pool)))
        await self.action_refresh()

    async def _join(self, spectate: bool) -> lobby_pb2.JoinTableResponse | None:
        if self.selected is None:
            self.say(t("lobby.choose_room"))
            return None
        try:
            return await self.session.platform.join(self.selected.room_id, spectate=spectate)
        except PlayError as error:
            self.say(t("lobby.join_failed", error=error_text(error)))
            return None

    async def _sit(self) -> None:
        from clients.play.table_screen import TableScreen

        room = self.selected
        if room is not None and room.variant in vm.HOUSE_VARIANTS:
            await self._house()
            return
        text = self.query_one("#buy-in", Input).value
        if room is None or not text.isdigit():
            self.say(t("lobby.choose_room_and_buy_in"))
            return
        joined = await self._join(spectate=False)
        if joined is None:
            return
        table_id = joined.table_id or f"{room.room_id}.1"
        try:
            seat = await self.session.platform.sit_down(joined.address, table_id, int(text), new_request_id())
        except PlayError as error:
            self.say(t("lobby.sit_failed", error=error_text(error)))
            return
        self.say("")
        await self.app.push_screen(TableScreen(room, table_id, joined.address, seat=seat.seat))

    async def _rejoin(self) -> None:
        from clients.play.table_screen import TableScreen

        if not self.open_table:
            return
        room_id = self.open_table.rsplit(".", 1)[0]
        room = self.session.rooms.get(room_id)
        if room is None:
            self.say(t("lobby.room_not_listed", table=self.open_table))
            return
        try:
            joined = await self.session.platform.join(room_id, self.open_table, spectate=True)
        except PlayError as error:
            self.say(t("lobby.table_not_found", error=error_text(error)))
            return
        await self.app.push_screen(TableScreen(room, self.open_table, joined.address))

    async def _watch(self) -> None:
        from clients.play.table_screen import TableScreen

        joined = await self._join(spectate=True)
        if joined is None or self.selected is None:
            return
        table_id = joined.table_id or f"{self.selected.room_id}.1"
        await self.app.push_screen(TableScreen(self.selected, table_id, joined.address, spectator=True))

    async def _house(self) -> None:
        from clients.play.house_screen import HouseScreen

        room = self.selected
        if room is None or room.variant not in vm.HOUSE_VARIANTS:
            self.say(t("lobby.choose_house_room"))
            return
        joined = await self._join(spectate=False)
        if joined is None:
            return
        await self.app.push_screen(HouseScreen(room, joined.table_id or f"{room.room_id}.1", joined.address))

    async def action_history(self) -> None:
        from clients.play.history_screen import HistoryScreen

        await self.app.push_screen(HistoryScreen())

    async def on_screen_resume(self) -> None:
        await self.action_refresh()


class PokerPlayApp(App[None]):
    CSS = CSS
    TITLE = "poker-play"
    ENABLE_COMMAND_PALETTE = False
    # The quit key on every screen's footer (issue 25 item 15: Textual's own ctrl+q is not shown).
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "app.quit", show=True, priority=True),
    ]

    def __init__(self, settings: PlaySettings, identity: Identity | None = None) -> None:
        if settings.lang:
            texts.set_language(settings.lang)
        super().__init__()
        localize_bindings(self)
        self.settings = settings
        self.session: Session | None = None
        self._identity = identity

    async def on_mount(self) -> None:
        if self._identity is not None:
            self.start_session(self._identity)
        else:
            await self.push_screen(SignInScreen(self.settings))

    def start_session(self, identity: Identity) -> None:
        self.session = Session(Platform(self.settings, identity))
        self.sub_title = t("app.sub_title", player=identity.player_id, address=self.settings.lobby_address)
        if isinstance(self.screen, SignInScreen):
            self.switch_screen(LobbyScreen())
        else:
            self.push_screen(LobbyScreen())

    async def on_unmount(self) -> None:
        if self.session is not None:
            await self.session.platform.close()
