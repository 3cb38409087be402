"""The table: seats, cards, pots, whose turn with a countdown, the legal actions with amounts (typed,
or moved with the slider buttons), chat and stickers, leave; as a spectator the delayed public view."""

from __future__ import annotations

import asyncio
import time
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.widgets import Button, Footer, Header, Input, Static

from clients.play import view_model as vm
from clients.play.app import SessionScreen, error_text
from clients.play.feed import Link, LinkState, TableFeed, Update
from clients.play.gateway import PlayError, new_request_id
from clients.play.hand_log import HandLog
from clients.play.texts import t
from clients.play.words import words
from poker.lobby.v1 import lobby_pb2
from poker.table.v1 import table_pb2

ACTION_BUTTONS = {
    "act-fold": table_pb2.ACTION_KIND_FOLD,
    "act-check": table_pb2.ACTION_KIND_CHECK,
    "act-call": table_pb2.ACTION_KIND_CALL,
    "act-bet": table_pb2.ACTION_KIND_BET,
    "act-raise": table_pb2.ACTION_KIND_RAISE,
    "act-all-in": table_pb2.ACTION_KIND_ALL_IN,
}
BUTTON_OF = {kind: button for button, kind in ACTION_BUTTONS.items()}
# After a hand ends its record and reveal follow within moments: tried this often, this far apart.
VERIFY_ATTEMPTS = 40
VERIFY_RETRY_SECONDS = 0.5
AMOUNT_KINDS = (table_pb2.ACTION_KIND_BET, table_pb2.ACTION_KIND_RAISE)
# The last hands whose results are kept (history's record of each comes within moments).
KEPT_RESULTS = 8


# Keyboard shortcuts of the actions, shown on the buttons (issue 25 item 10). Fold has its own key and
# is never where the focus lands: one Enter can only check or call.
ACTION_KEYS = {
    table_pb2.ACTION_KIND_FOLD: "f",
    table_pb2.ACTION_KIND_CHECK: "k",
    table_pb2.ACTION_KIND_CALL: "c",
    table_pb2.ACTION_KIND_BET: "b",
    table_pb2.ACTION_KIND_RAISE: "r",
    table_pb2.ACTION_KIND_ALL_IN: "a",
}


def _awards_key(view: table_pb2.TableView) -> tuple[tuple[int, tuple[int, ...], tuple[int, ...]], ...]:
    """Which awards a view shows: each pot, who won it and how much. Not their cards: the views after
    the hand's end show the same awards without the winning cards once the board is cleared (the
    next hand's commitment), and the last-hand line must keep the nets then."""
    return tuple((a.pot_index, tuple(a.seats), tuple(a.amounts)) for a in view.awards)


class TableScreen(SessionScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        ("escape", "leave", "table.key_leave"),
        *((key, f"key_act({kind})", vm.ACTION_WORDS[kind]) for kind, key in ACTION_KEYS.items()),
        ("s", "toggle_sit_out", "table.key_sit_out"),
    ]

    def __init__(
        self,
        room: lobby_pb2.Room,
        table_id: str,
        address: str,
        *,
        seat: int = 0,
        spectator: bool = False,
    ) -> None:
        super().__init__()
        self.room = room
        self.table_id = table_id
        self.address = address
        self.spectator = spectator
        self.seat = seat
        self.view: table_pb2.TableView | None = None
        self.link = LinkState(Link.CONNECTING, t("link.connecting"))
        self.log_lines: list[str] = []
        self.feed: TableFeed | None = None
        self._turn_key = ""
        self.client_seed = ""
        self._seeded: set[str] = set()  # hands my seed was sent for (or kept back from)
        # Version 3: hands whose hash was sent or is on its way, and each hand's seed and hash once
        # the table took the hash (docs/fairness.md, the seed flow at a table).
        self._hashing: set[str] = set()
        self._hashed: dict[str, tuple[str, str]] = {}
        self._verifying: set[str] = set()  # hands checked (or being checked) after they ended
        # What each player netted (issue 39: the pot is not a win): each hand's starting stacks as
        # soon as a view can tell them, then the results of the last hand that ended, kept with its
        # awards (the view shows them until the next hand starts).
        self._starts: dict[str, dict[int, tuple[str, int]]] = {}
        self._results: dict[str, tuple[vm.SeatResult, ...]] = {}
        self._last_hand = ""
        self._last_awards: tuple[tuple[int, tuple[int, ...], tuple[int, ...]], ...] = ()

    @property
    def me(self) -> str:
        return "" if self.spectator else self.session.platform.identity.player_id

    def compose(self) -> ComposeResult:
        yield Header()
        # Fixed heights: a line that comes and goes must not move the buttons under a pointer.
        yield Static("", id="link", classes="line")
        yield Static(f"{self.table_id}", id="status", classes="line")
        yield Static("", id="commitment", classes="line note")
        seats = Static("", id="seats")
        seats.styles.height = max(2, self.room.seats_per_table)
        yield seats
        yield Static("", id="board", classes="line")
        yield Static("", id="turn", classes="line")
        yield Static("", id="awards", classes="line")
        with Horizontal(classes="row", id="actions"):
            for button_id, kind in ACTION_BUTTONS.items():
                button = Button(vm.action_word(kind), id=button_id)
                # Fold takes its key or a click, never a stray Enter on a focused button.
                button.can_focus = kind != table_pb2.ACTION_KIND_FOLD
                yield button
        with Horizontal(classes="row", id="amount-row"):
            yield Button("−", id="amount-down")
            yield Input("", id="amount", placeholder=t("table.amount_placeholder"), restrict=r"[0-9,]*")
            yield Button("+", id="amount-up")
            yield Button(t("table.half_pot"), id="amount-half")
            yield Button(t("table.pot"), id="amount-pot")
            yield Button(t("table.max"), id="amount-max")
        yield HandLog(id="log")
        with Horizontal(classes="row", id="chat-row"):
            yield Input("", id="chat", placeholder=t("table.chat_placeholder"), max_length=200)
            for sticker in vm.STICKERS:
                yield Button(vm.sticker_label(sticker), id=f"sticker-{sticker}")
        with Horizontal(classes="row", id="seed-row"):
            yield Input("", id="seed", placeholder=t("table.seed_placeholder"), max_length=vm.MAX_CLIENT_SEED)
            yield Button(t("table.use_seed"), id="set-seed")
        with Horizontal(classes="row"):
            yield Button(t("app.back") if self.spectator else t("table.leave"), id="leave", variant="error")
            if not self.spectator:
                yield Button(t("table.sit_out"), id="sit-out")
                yield Static("", id="seat-state", classes="line")
        yield Static("", id="message", classes="line message")
        yield Footer()

    def on_mount(self) -> None:
        if self.spectator:
            self.query_one("#status").styles.height = 2  # the delay line above the status
            self.query_one("#actions").display = False
            self.query_one("#amount-row").display = False
            self.query_one("#chat-row").display = False
            self.query_one("#seed-row").display = False
        self._show_actions(None)
        platform = self.session.platform
        self.feed = TableFeed(
            lambda address: platform.stream(address, self.table_id, spectate=self.spectator),
            self._locate,
            self.address,
            self._apply_update,
            self._show_link,
        )
        self.run_worker(self.feed.run(), group="feed", exclusive=True)
        self.set_interval(0.5, self._tick)

    async def _locate(self) -> str:
        joined = await self.session.platform.join(self.room.room_id, self.table_id, spectate=True)
        return joined.address or self.address

    # ------------------------------------------------------------------------------ rendering

    def say(self, text: str) -> None:
        self.query_one("#message", Static).update(text)

    def _show_link(self, state: LinkState) -> None:
        self.link = state
        if state.link is Link.UNSUPPORTED and self.spectator:
            text = t("table.spectating_unsupported", reason=state.text)
        else:
            text = state.text
        self.query_one("#link", Static).update(text)
        reconnected = state.link is Link.LIVE and state.reconnected
        if reconnected or (state.link is Link.RECONNECTING and state.attempts == 1):
            self._log(f"· {state.text}")

    def _log(self, line: str) -> None:
        self.log_lines.append(line)
        self.query_one("#log", HandLog).add(line)

    def _apply_update(self, update: Update) -> None:
        events, view = update
        # The seats' names from this view, and from the one before for a player who just left.
        names = {**(vm.seat_names(self.view) if self.view is not None else {}), **vm.seat_names(view)}
        self.view = view
        if not self.spectator:
            self.seat = vm.my_seat(view, self.me)
        self.session.remember_commitment(view.hand_id, view.seed_commitment, dealt=bool(self._any_card(view)))
        log = self.query_one("#log", HandLog)
        for event in events:
            log.note(event)
            line = vm.event_line(event, names, 0 if self.spectator else self.seat)
            if line:
                self._log(line)
            if event.WhichOneof("kind") == "notice" and event.notice.code == "HAND_ENDED":
                self._hand_ended(view)
        starts = vm.starting_stacks(view)
        if starts is not None:
            self._starts.setdefault(view.hand_id, starts)
        self._render_view(view)
        self._seed_step(view)

    def _hand_ended(self, view: table_pb2.TableView) -> None:
        """What each player netted (from the stacks at the start and now), who won each pot with what,
        in the log (where the end of the hand stays in view until the next deal) and on the last-hand
        line."""
        hand_id = view.hand_id
        starts = self._starts.pop(hand_id, None)
        if starts is not None:
            self._results[hand_id] = vm.hand_results(view, starts)
        for old in list(self._results)[:-KEPT_RESULTS]:
            del self._results[old]
        self._last_hand = hand_id
        self._last_awards = _awards_key(view)
        line = f"· {self._awards_text(view)}"
        self.log_lines.append(line)
        self.query_one("#log", HandLog).add_result(line)
        self._verify_when_recorded(view)

    def _awards_text(self, view: table_pb2.TableView) -> str:
        """The last-hand line: the players' nets when this client knows them for these awards."""
        same = _awards_key(view) == self._last_awards
        results = self._results.get(self._last_hand) if same else None
        return vm.awards_text(view, results, self.me)

    def _history_results(self, hand_id: str, record_results: tuple[vm.SeatResult, ...]) -> None:
        """History's record has the authoritative nets: shown when the view could not tell them (the
        client joined mid-hand) or told them otherwise."""

        def nets(results: tuple[vm.SeatResult, ...]) -> dict[int, int]:
            return {r.seat: r.net for r in results if r.net}

        if not record_results or nets(self._results.get(hand_id, ())) == nets(record_results):
            return
        self._results[hand_id] = record_results
        self._log(
            t(
                "table.history_result",
                hand=vm.short_id(hand_id),
                results=vm.results_text(record_results, self.me),
            )
        )
        if self.view is not None:
            self.query_one("#awards", Static).update(self._awards_text(self.view))

    def _seed_step(self, view: table_pb2.TableView) -> None:
        """A committed hand not yet dealt takes client seeds (docs/fairness.md, the seed flow at a
        table): version 2 the seed I set, in one step; version 3 a fresh seed's hash while the table
        takes hashes, then, once the hash set is closed (and kept here to check the reveal with), the
        seed itself."""
        hand_id = view.hand_id
        if self.spectator or not (hand_id and view.seed_commitment) or self._any_card(view):
            return
        if view.seed_phase == table_pb2.SEED_PHASE_SEEDS:
            self.session.seed_hash_sets.setdefault(
                hand_id, tuple((h.seat, h.client_seed_hash) for h in view.seed_hashes)
            )
        if not self.client_seed or hand_id in self._seeded:
            return
        if view.seed_phase == table_pb2.SEED_PHASE_ONE_STEP:
            self._seeded.add(hand_id)
            self.run_worker(self._send_seed(hand_id, self.client_seed), group="seed")
        elif view.seed_phase == table_pb2.SEED_PHASE_HASHES and hand_id not in self._hashing and self.seat:
            self._hashing.add(hand_id)
            seed = vm.fresh_hand_seed(self.client_seed)
            digest = vm.seed_hash_of(view.seed_commitment, self.seat, seed)
            self.run_worker(self._send_hash(hand_id, seed, digest), group="seed")
        elif view.seed_phase == table_pb2.SEED_PHASE_SEEDS and hand_id in self._hashed:
            self._seeded.add(hand_id)
            seed, digest = self._hashed[hand_id]
            if (self.seat, digest) not in self.session.seed_hash_sets[hand_id]:
                # The table closed a set without my hash: my seed stays with me (nothing to open).
                self._log(t("seed.not_in_set", hand=vm.short_id(hand_id)))
                return
            self.run_worker(self._send_seed(hand_id, seed), group="seed")

    def _table_address(self) -> str:
        return self.feed.address if self.feed else self.address

    async def _send_hash(self, hand_id: str, seed: str, digest: str) -> None:
        try:
            await self.session.platform.set_seed(
                self._table_address(), self.table_id, "", new_request_id(), seed_hash=digest
            )
        except PlayError as error:
            # SEED_HASHES_CLOSED, ENTROPY_CLOSED: too late for this hand; the next one gets a new seed.
            self._log(t("seed.missed", hand=vm.short_id(hand_id), why=words(error.reason or error.code)))
            return
        self._hashed[hand_id] = (seed, digest)
        self._log(t("seed.hash_recorded", hand=vm.short_id(hand_id)))
        if self.view is not None:
            self._seed_step(self.view)  # the hash set may have closed while the hash was on its way

    async def _send_seed(self, hand_id: str, seed: str) -> None:
        try:
            taken = await self.session.platform.set_seed(
                self._table_address(), self.table_id, seed, new_request_id()
            )
        except PlayError as error:
            # ENTROPY_CLOSED: the hand was sealed first; the seed goes into the next one.
            self._log(t("seed.missed", hand=vm.short_id(hand_id), why=words(error.reason or error.code)))
            return
        self.session.client_seeds[taken] = seed
        self._log(t("seed.taken", hand=vm.short_id(taken)))

    def _verify_when_recorded(self, view: table_pb2.TableView) -> None:
        """After a hand I was dealt into: check it as *Verify fairness* does, once history and the
        reveal have it, and say the verdict in the log."""
        hand_id = view.hand_id
        mine = next((s for s in view.seats if s.player_id == self.me), None)
        if self.spectator or mine is None or not mine.hole_cards or hand_id in self._verifying:
            return
        self._verifying.add(hand_id)
        self.run_worker(self._verify_hand(hand_id), group="verify")

    async def _verify_hand(self, hand_id: str) -> None:
        platform = self.session.platform
        last = ""
        for _ in range(VERIFY_ATTEMPTS):
            try:
                record = await platform.hand(hand_id)
                self._history_results(hand_id, vm.record_results(record))
                report = await platform.verify(
                    record,
                    self.session.commitments.get(hand_id, ""),
                    self.session.client_seeds.get(hand_id, ""),
                    self.session.seed_hash_sets.get(hand_id),
                )
            except PlayError as error:
                # Right after the hand its record or reveal may not be there yet: try again.
                last = words(error.reason or error.code)
                await asyncio.sleep(VERIFY_RETRY_SECONDS)
                continue
            self._log(t("verify.verdict", hand=vm.short_id(hand_id), verdict=vm.verdict_line(report)))
            return
        self._log(t("verify.not_yet", hand=vm.short_id(hand_id), why=last))

    @staticmethod
    def _any_card(view: table_pb2.TableView) -> bool:
        return bool(view.board) or any(s.hole_cards for s in view.seats)

    def _render_view(self, view: table_pb2.TableView) -> None:
        status = vm.status_text(view)
        if self.spectator:
            status = f"{vm.spectator_text(view, time.time())}\n{status}"
        self.query_one("#status", Static).update(status)
        self.query_one("#commitment", Static).update(vm.commitment_text(view))
        self.query_one("#seats", Static).update("\n".join(line.text for line in vm.seat_lines(view, self.me)))
        self.query_one("#board", Static).update(
            t("board.line", board=vm.board_text(view), pots=vm.pots_text(view))
        )
        self.query_one("#awards", Static).update(self._awards_text(view))
        if not self.spectator:
            mine = next((s for s in view.seats if s.seat == self.seat and s.player_id == self.me), None)
            self._show_seat_state(int(mine.status) if mine is not None else 0)
        self._tick()
        legal = view.legal_actions if view.legal_actions.actions and not self.spectator else None
        self._show_actions(legal)
        if legal is not None:
            key = f"{view.hand_id}:{view.street}:{len(view.board)}:{legal.min_amount}:{legal.call_amount}"
            if key != self._turn_key:
                # A new decision: start the amount at the smallest legal bet or raise.
                self._turn_key = key
                self.query_one("#amount", Input).value = str(legal.min_amount) if legal.min_amount else ""
                # The turn starts on the safe default (check, else call) so that Enter and the keys act,
                # unless the player is in a text field (a chat line, a seed), even one still empty: the
                # focus moved away under a person about to type would turn their letters into actions
                # (the `c` of "good luck" checked).
                focused = self.focused
                if not (isinstance(focused, Input) and focused.id != "amount"):
                    self._focus_safe_default(legal)

    def _tick(self) -> None:
        if self.view is not None:
            self.query_one("#turn", Static).update(vm.turn_text(self.view, self.me, time.time()))

    def _show_actions(self, legal: table_pb2.LegalActions | None) -> None:
        choices = {c.kind: c for c in vm.action_choices(legal)} if legal is not None else {}
        focused = self.focused
        for button_id, kind in ACTION_BUTTONS.items():
            button = self.query_one(f"#{button_id}", Button)
            choice = choices.get(kind)
            # Hidden but still taking its place: the rows below never jump (issue 25 item 12).
            button.visible = choice is not None
            button.disabled = choice is None
            if choice is not None:
                button.label = f"{choice.label} ({ACTION_KEYS[kind]})"
        open_amount = any(k in choices for k in AMOUNT_KINDS)
        for widget in self.query("#amount-row > *"):
            widget.disabled = not open_amount
        # The focus is never left on something destructive: on an action button it moves to check or
        # call (the safe default).
        if legal is not None and choices and (focused is None or focused.id in ACTION_BUTTONS):
            self._focus_safe_default(legal)

    def _focus_safe_default(self, legal: table_pb2.LegalActions) -> None:
        for kind in (table_pb2.ACTION_KIND_CHECK, table_pb2.ACTION_KIND_CALL):
            if kind in legal.actions:
                self.query_one(f"#{BUTTON_OF[kind]}", Button).focus()
                return

    # ------------------------------------------------------------------------------- actions

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        button_id = event.button.id or ""
        if button_id in ACTION_BUTTONS:
            await self.act(ACTION_BUTTONS[button_id])
        elif button_id.startswith("amount-"):
            self._slide(button_id)
        elif button_id.startswith("sticker-"):
            await self._chat(sticker_id=button_id.removeprefix("sticker-"))
        elif button_id == "set-seed":
            self._use_seed()
        elif button_id == "leave":
            await self.action_leave()
        elif button_id == "sit-out":
            await self.action_toggle_sit_out()

    def _show_seat_state(self, status: int) -> None:
        out = status == table_pb2.SEAT_STATUS_SITTING_OUT
        self.query_one("#sit-out", Button).label = t("table.sit_in") if out else t("table.sit_out")
        self.query_one("#seat-state", Static).update(vm.seat_state_text(status))

    async def action_key_act(self, kind: int) -> None:
        """An action's shortcut: only when that action is legal now (else nothing happens)."""
        view = self.view
        if self.spectator or view is None or kind not in view.legal_actions.actions:
            return
        await self.act(kind)

    async def action_toggle_sit_out(self) -> None:
        """Sit out, or sit back in (posting what is owed at once); the seat's state is shown."""
        if self.spectator or self.view is None or not self.seat:
            return
        mine = next((s for s in self.view.seats if s.seat == self.seat), None)
        back_in = mine is not None and mine.status == table_pb2.SEAT_STATUS_SITTING_OUT
        try:
            status = await self.session.platform.sit_out(
                self.address, self.table_id, back_in, new_request_id()
            )
        except PlayError as error:
            self.say(t("table.sit_in_failed" if back_in else "table.sit_out_failed", error=error_text(error)))
            return
        self._show_seat_state(status)

    def _use_seed(self) -> None:
        try:
            self.client_seed = vm.check_client_seed(self.query_one("#seed", Input).value)
        except vm.AmountError as error:
            self.say(str(error))
            return
        self.say(t("seed.set", seed=self.client_seed))
        if self.view is not None:
            self._seed_step(self.view)

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "chat" and event.value.strip():
            await self._chat(text=event.value.strip())
            event.input.value = ""

    def _slide(self, button_id: str) -> None:
        view = self.view
        if view is None or not view.legal_actions.actions:
            return
        legal = view.legal_actions
        field = self.query_one("#amount", Input)
        current = (
            int(field.value.replace(",", "")) if field.value.replace(",", "").isdigit() else legal.min_amount
        )
        amounts = {
            "amount-down": lambda: vm.nudge_amount(current, legal, -1),
            "amount-up": lambda: vm.nudge_amount(current, legal, 1),
            "amount-half": lambda: vm.pot_sized_amount(view, legal, 0.5),
            "amount-pot": lambda: vm.pot_sized_amount(view, legal, 1.0),
            "amount-max": lambda: legal.max_amount,
        }
        field.value = str(amounts[button_id]())

    async def act(self, kind: int) -> None:
        view = self.view
        if view is None or kind not in view.legal_actions.actions:
            self.say(t("table.action_closed"))
            return
        amount = 0
        if kind in AMOUNT_KINDS:
            try:
                amount = vm.parse_amount(self.query_one("#amount", Input).value, view.legal_actions)
            except vm.AmountError as error:
                self.say(str(error))
                return
        try:
            await self.session.platform.act(
                self.feed.address if self.feed else self.address,
                self.table_id,
                view.hand_id,
                kind,
                amount,
                new_request_id(),
            )
        except PlayError as error:
            self.say(t("table.refused", error=error_text(error)))
            return
        self.say("")

    async def _chat(self, *, text: str = "", sticker_id: str = "") -> None:
        try:
            await self.session.platform.chat(
                self.feed.address if self.feed else self.address,
                self.table_id,
                text=text,
                sticker_id=sticker_id,
            )
        except PlayError as error:
            self.say(t("table.chat_refused", error=error_text(error)))

    async def action_leave(self) -> None:
        if not self.spectator:
            try:
                reply = await self.session.platform.leave(
                    self.feed.address if self.feed else self.address, self.table_id, new_request_id()
                )
            except PlayError as error:
                if error.reason != "NOT_SEATED":
                    self.say(t("table.leave_failed", error=error_text(error)))
                    return
            else:
                if reply.folded_mid_hand:
                    self.notify(t("table.folded_out"))
                else:
                    self.notify(t("table.cashed_out", amount=vm.chips(reply.cashed_out.amount)))
        self.workers.cancel_group(self, "feed")
        self.app.pop_screen()
