"""My recent hands and balance changes (history service), one hand in detail as history lets me see
it, and the hand's fairness checked here against the revealed seed (docs/fairness.md)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.widgets import Button, DataTable, Footer, Header, Static

from clients.play import view_model as vm
from clients.play.app import SessionScreen, error_text
from clients.play.gateway import PlayError
from clients.play.texts import t
from clients.play.view_model import FairnessReport


class HistoryScreen(SessionScreen):
    BINDINGS: ClassVar[list[BindingType]] = [("escape", "back", "app.back")]

    def __init__(self) -> None:
        super().__init__()
        self.hand_ids: list[str] = []
        self.selected_hand = ""
        self.report: FairnessReport | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(t("history.recent"), classes="note")
        yield DataTable(id="hands", cursor_type="row")
        with Horizontal(classes="row"):
            yield Button(t("history.show"), id="show-hand")
            yield Button(t("history.verify"), id="verify", variant="primary")
            yield Button(t("app.refresh"), id="refresh")
            yield Button(t("app.back"), id="back")
        yield Static("", id="detail")
        yield Static("", id="verdict")
        yield Static(t("history.changes"), classes="note")
        yield DataTable(id="changes", cursor_type="row")
        yield Static("", id="message", classes="message")
        yield Footer()

    async def on_mount(self) -> None:
        self.query_one("#hands", DataTable).add_columns(
            *(t(f"history.column_{name}") for name in ("hand", "table", "ended", "net", "pool"))
        )
        self.query_one("#changes", DataTable).add_columns(
            *(t(f"history.column_{name}") for name in ("when", "reason", "change", "balance", "reference"))
        )
        await self.load()

    async def load(self) -> None:
        platform = self.session.platform
        message = []
        try:
            hands = await platform.my_hands()
        except PlayError as error:
            hands = []
            message.append(t("history.hands_failed", error=error_text(error)))
        try:
            changes = await platform.balance_changes()
        except PlayError as error:
            changes = []
            message.append(t("history.changes_failed", error=error_text(error)))
        table = self.query_one("#hands", DataTable)
        keep = self.selected_hand
        table.clear()
        self.hand_ids = [h.hand_id for h in hands]
        for hand in hands:
            table.add_row(*vm.hand_row(hand), key=hand.hand_id)
        if keep in self.hand_ids:
            self.select_hand(keep)
        statement = self.query_one("#changes", DataTable)
        statement.clear()
        for row in vm.balance_rows(changes):
            statement.add_row(*row)
        if not hands:
            message.append(t("history.no_hands"))
        self.query_one("#message", Static).update("; ".join(message))

    def select_hand(self, hand_id: str) -> None:
        """Move the cursor to a hand (keyboard users arrow to it; tests call this)."""
        self.selected_hand = hand_id
        self.query_one("#hands", DataTable).move_cursor(row=self.hand_ids.index(hand_id))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "hands" and event.row_key.value is not None:
            self.selected_hand = str(event.row_key.value)

    def _selected(self) -> str | None:
        if self.selected_hand in self.hand_ids:
            return self.selected_hand
        return self.hand_ids[0] if self.hand_ids else None

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "refresh":
            await self.load()
        elif event.button.id == "back":
            self.action_back()
        elif event.button.id in ("show-hand", "verify"):
            hand_id = self._selected()
            if hand_id is None:
                self.query_one("#message", Static).update(t("history.nothing_to_show"))
                return
            await self.show(hand_id, verify=event.button.id == "verify")

    async def show(self, hand_id: str, *, verify: bool) -> None:
        platform = self.session.platform
        try:
            record = await platform.hand(hand_id)
        except PlayError as error:
            self.query_one("#message", Static).update(
                t("history.hand_failed", hand=hand_id, error=error_text(error))
            )
            return
        self.query_one("#detail", Static).update(
            "\n".join(vm.hand_lines(record, platform.identity.player_id))
        )
        if not verify:
            return
        self.query_one("#verdict", Static).update("")
        try:
            self.report = await platform.verify(
                record,
                self.session.commitments.get(hand_id, ""),
                self.session.client_seeds.get(hand_id, ""),
                self.session.seed_hash_sets.get(hand_id),
            )
        except PlayError as error:
            # A hand revealed moments ago may not be revealed yet (HAND_NOT_FINISHED): say so.
            self.query_one("#verdict", Static).update(t("history.cannot_verify", error=error_text(error)))
            return
        self.query_one("#verdict", Static).update("\n".join(self.report.lines))

    def action_back(self) -> None:
        self.app.pop_screen()
