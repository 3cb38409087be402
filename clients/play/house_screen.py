"""A house-game round (Casino Hold'em, Russian Poker) against the dealer: open a box with an ante
(Russian Poker: dark box and bonus bet), then decide on it. Everything shown is the table's answer:
the round as the table shows it (cards, decisions with their cost, the deadline, every settlement
line); a table release that does not serve house games says UNIMPLEMENTED, and the screen says so."""

from __future__ import annotations

import time
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.widgets import Button, Checkbox, Footer, Header, Input, Label, Static

from clients.play import view_model as vm
from clients.play.app import SessionScreen, error_text
from clients.play.gateway import PlayError, new_request_id
from clients.play.texts import t
from poker.common.v1 import common_pb2
from poker.lobby.v1 import lobby_pb2
from poker.table.v1 import table_pb2

DECISION_BUTTONS = {
    "decide-call": table_pb2.HOUSE_DECISION_KIND_CALL,
    "decide-fold": table_pb2.HOUSE_DECISION_KIND_FOLD,
    "decide-exchange": table_pb2.HOUSE_DECISION_KIND_EXCHANGE,
    "decide-sixth": table_pb2.HOUSE_DECISION_KIND_BUY_SIXTH_CARD,
    "decide-insure": table_pb2.HOUSE_DECISION_KIND_INSURE,
    "decide-buy-game": table_pb2.HOUSE_DECISION_KIND_BUY_GAME,
    "decide-take-ante": table_pb2.HOUSE_DECISION_KIND_TAKE_ANTE,
}
CASINO_HOLDEM_DECISIONS = {table_pb2.HOUSE_DECISION_KIND_CALL, table_pb2.HOUSE_DECISION_KIND_FOLD}
DARK_LABELS = {False: "house.dark_no", True: "house.dark_yes"}


class HouseScreen(SessionScreen):
    BINDINGS: ClassVar[list[BindingType]] = [("escape", "back", "app.back")]

    def __init__(self, room: lobby_pb2.Room, table_id: str, address: str) -> None:
        super().__init__()
        self.room = room
        self.table_id = table_id
        self.address = address
        self.round_id = ""
        self.box = 1
        self.russian = room.variant == common_pb2.GAME_VARIANT_RUSSIAN_POKER

    def compose(self) -> ComposeResult:
        row = vm.room_row(self.room)
        yield Header()
        yield Static(
            t("house.info", game=row.game, table=self.table_id, pool=row.pool, stakes=row.stakes),
            id="house-info",
        )
        # Every field says what it is (issue 39: `10 [X] dark box 0` read as unlabelled boxes).
        with Horizontal(classes="row"):
            yield Label(t("house.ante"), classes="field-label")
            yield Input(
                str(self.room.antes.min_ante or ""),
                id="ante",
                placeholder=t("house.ante_placeholder"),
                restrict=r"[0-9]*",
            )
            if self.russian:
                # The box glyph looks the same ticked or not in many terminals: the label says which.
                yield Checkbox(t(DARK_LABELS[False]), id="dark")
                yield Label(t("house.bonus"), classes="field-label")
                yield Input(
                    "0",
                    id="bonus",
                    placeholder=t("house.bonus_placeholder"),
                    restrict=r"[0-9]*",
                    disabled=True,
                )
            yield Button(t("house.place_bets"), id="place-bets", variant="primary")
        yield Static("", id="round")
        # Only the decisions the round allows now are shown, with their cost; none before a round.
        with Horizontal(classes="row", id="decisions"):
            yield Label(t("house.no_decision"), id="no-decision", classes="field-label")
            for button_id, kind in DECISION_BUTTONS.items():
                if self.russian or kind in CASINO_HOLDEM_DECISIONS:
                    button = Button(vm.decision_word(kind), id=button_id, disabled=True)
                    button.display = False
                    yield button
        if self.russian:
            with Horizontal(classes="row", id="exchange-row"):
                yield Label(t("house.exchange"), classes="field-label")
                yield Input("", id="positions", placeholder=t("house.exchange_placeholder"))
            with Horizontal(classes="row", id="insurance-row"):
                yield Label(t("house.insurance"), id="insurance-label", classes="field-label")
                yield Input(
                    "", id="insurance", placeholder=t("house.insurance_placeholder"), restrict=r"[0-9]*"
                )
        with Horizontal(classes="row"):
            yield Button(t("app.back"), id="back")
        yield Static("", id="message", classes="message")
        yield Footer()

    def on_mount(self) -> None:
        self._show_options(None)

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        if event.checkbox.id == "dark":
            event.checkbox.label = t(DARK_LABELS[event.value])
            # The rules take a bonus bet only with a dark box (russian-poker.txt: "в тёмную").
            self.query_one("#bonus", Input).disabled = not event.value

    def _show_options(self, round_view: table_pb2.HouseRoundView | None) -> None:
        """The decision buttons (and the exchange and insurance fields) of the options the table lists
        for my box now; the others hidden. None before a round and once it is settled."""
        box = (
            next((b for b in round_view.boxes if b.box == self.box), None) if round_view is not None else None
        )
        options = {o.decision: o for o in box.options} if box is not None else {}
        for button in self.query("#decisions Button").results(Button):
            option = options.get(DECISION_BUTTONS[button.id or ""])
            button.display = option is not None
            button.disabled = option is None
            if option is not None:
                word = vm.decision_word(option.decision)
                button.label = f"{word} ({vm.chips(option.cost)})" if option.cost else word
        self.query_one("#no-decision", Label).display = not options
        if round_view is None or round_view.phase in ("", "COMPLETE"):
            self.query_one("#no-decision", Label).update(t("house.no_decision"))
        else:
            self.query_one("#no-decision", Label).update(t("house.no_decision_box"))
        if self.russian:
            self.query_one("#exchange-row").display = table_pb2.HOUSE_DECISION_KIND_EXCHANGE in options
            insure = options.get(table_pb2.HOUSE_DECISION_KIND_INSURE)
            self.query_one("#insurance-row").display = insure is not None
            if insure is not None:
                self.query_one("#insurance-label", Label).update(
                    t(
                        "house.insurance_range",
                        low=vm.chips(insure.min_amount),
                        high=vm.chips(insure.max_amount),
                    )
                )

    def say(self, text: str) -> None:
        self.query_one("#message", Static).update(text)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        button_id = event.button.id or ""
        if button_id == "place-bets":
            await self.place_bets()
        elif button_id in DECISION_BUTTONS:
            await self.decide(DECISION_BUTTONS[button_id])
        elif button_id == "back":
            self.action_back()

    def _refused(self, error: PlayError, what: str) -> None:
        """`what`: the catalogue key of the refusal (`house.bets_refused`)."""
        self.say(
            t("house.not_served", reason=f"{error.code} {error.reason}".strip())
            if error.unimplemented
            else t(what, error=error_text(error))
        )

    async def place_bets(self) -> None:
        ante_text = self.query_one("#ante", Input).value
        if not ante_text.isdigit() or int(ante_text) <= 0:
            self.say(t("house.type_ante", stakes=vm.stakes_text(self.room)))
            return
        box = table_pb2.HouseBox(box=self.box, ante=int(ante_text))
        if self.russian:
            box.dark = self.query_one("#dark", Checkbox).value
            bonus = self.query_one("#bonus", Input).value
            box.bonus_bet = int(bonus) if bonus.isdigit() and box.dark else 0
        try:
            reply = await self.session.platform.place_house_bets(
                self.address, self.table_id, [box], new_request_id()
            )
        except PlayError as error:
            self._refused(error, "house.bets_refused")
            return
        self.round_id = reply.round_id
        self.query_one("#round", Static).update(
            "\n".join(
                [
                    t(
                        "house.staked",
                        amount=vm.chips(reply.staked.amount),
                        pool=vm.pool_name(reply.staked.pool),
                    ),
                    *vm.house_round_lines(reply.round, time.time()),
                ]
            )
        )
        self._show_options(reply.round)
        self.say("")

    async def decide(self, kind: int) -> None:
        if not self.round_id:
            self.say(t("house.bets_first"))
            return
        request = table_pb2.MakeHouseDecisionRequest(
            request_id=new_request_id(),
            table_id=self.table_id,
            round_id=self.round_id,
            box=self.box,
            decision=kind,  # type: ignore[arg-type]
        )
        try:
            if kind == table_pb2.HOUSE_DECISION_KIND_EXCHANGE:
                request.card_indexes.extend(
                    vm.parse_card_positions(self.query_one("#positions", Input).value)
                )
            if kind == table_pb2.HOUSE_DECISION_KIND_INSURE:
                text = self.query_one("#insurance", Input).value
                if not text.isdigit():
                    raise vm.AmountError(t("house.type_insurance"))
                request.amount = int(text)
        except vm.AmountError as error:
            self.say(str(error))
            return
        try:
            reply = await self.session.platform.house_decision(self.address, request)
        except PlayError as error:
            self._refused(error, "house.decision_refused")
            return
        self.query_one("#round", Static).update("\n".join(vm.house_round_lines(reply.round, time.time())))
        self._show_options(reply.round)
        self.say("")

    def action_back(self) -> None:
        self.app.pop_screen()
