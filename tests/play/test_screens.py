"""What a person sees on the lobby, table, house-game and history screens (issue 39), driven by
Textual's pilot against a fake platform: the calls the screens make answer with the messages the
services send, so each screen is checked as it is drawn at a given terminal size."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import TypeVar

import pytest
from textual.color import Color
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Button, Checkbox, DataTable, Input, Label, Log

from clients.play import app as app_module
from clients.play import view_model as vm
from clients.play.app import LobbyScreen, PokerPlayApp
from clients.play.feed import Update
from clients.play.gateway import PlayError
from clients.play.history_screen import HistoryScreen
from clients.play.house_screen import HouseScreen
from clients.play.identity import development_identity
from clients.play.settings import PlaySettings
from clients.play.table_screen import TableScreen
from poker.cashier.v1 import cashier_pb2
from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2
from poker.lobby.v1 import lobby_pb2
from poker.table.v1 import table_pb2
from tests.play.test_play_session import press, text_of, until

GRAM = common_pb2.CHIP_POOL_GRAM
ScreenT = TypeVar("ScreenT", bound=Screen[None])
ME = "alice"
T = table_pb2


def catalogue() -> list[lobby_pb2.Room]:
    """Twenty rooms as the seeded lobby has them, listed in no particular order (the lobby's own)."""
    rooms = []
    for pool, low in ((GRAM, "gram"), (common_pb2.CHIP_POOL_MPX, "mpx")):
        games: list[tuple[str, int, int, dict[str, object]]] = [
            (f"nlhe-{low}-{big}", common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM, 6,
             {"blinds": lobby_pb2.BlindStakes(small_blind=big // 2, big_blind=big, step=1),
              "min_buy_in": big * 50, "max_buy_in": big * 100})
            for big in (2, 10, 50, 200)
        ]  # fmt: skip
        games += [
            (f"flhe-{low}-{big}", common_pb2.GAME_VARIANT_FIXED_LIMIT_HOLDEM, 6,
             {"limits": lobby_pb2.LimitStakes(small_bet=big // 2, big_bet=big),
              "min_buy_in": big * 10, "max_buy_in": big * 100})
            for big in (10, 40)
        ]  # fmt: skip
        games += [
            (
                f"{key}-{low}-{ante}",
                variant,
                7,
                {"antes": lobby_pb2.AnteStakes(min_ante=ante, max_ante=ante * 100)},
            )
            for variant, key in (
                (common_pb2.GAME_VARIANT_RUSSIAN_POKER, "russian-poker"),
                (common_pb2.GAME_VARIANT_CASINO_HOLDEM, "casino-holdem"),
            )
            for ante in (10, 100)
        ]
        rooms += [
            lobby_pb2.Room(
                room_id=room_id,
                display_name=room_id.replace("-", " "),
                variant=variant,  # type: ignore[arg-type]
                pool=pool,
                seats_per_table=seats,
                **fields,  # type: ignore[arg-type]
            )
            for room_id, variant, seats, fields in games
        ]
    return sorted(rooms, key=lambda r: r.room_id[::-1])  # scrambled: the client orders them


class FakePlatform:
    """The calls the screens make, answered as the services would; the table stream is a queue the
    test feeds."""

    def __init__(self) -> None:
        self.identity = development_identity(ME, PlaySettings().auth_keys)
        self.can_buy_chips = True
        self.room_list = catalogue()
        self.updates: asyncio.Queue[Update] = asyncio.Queue()
        self.records: dict[str, history_pb2.HandRecord] = {}
        self.changes: list[history_pb2.BalanceChange] = []
        self.house_rounds: list[table_pb2.HouseRoundView] = []

    async def close(self) -> None:
        return None

    async def balances(self) -> cashier_pb2.GetBalancesResponse:
        return cashier_pb2.GetBalancesResponse(
            player_id=ME, wallets=[cashier_pb2.WalletBalance(pool=GRAM, balance=5000)]
        )

    async def profile(self) -> lobby_pb2.PlayerProfile:
        return lobby_pb2.PlayerProfile(display_name="Alice")

    async def rooms(self) -> list[lobby_pb2.Room]:
        return list(self.room_list)

    async def tables(self, room_id: str) -> list[lobby_pb2.TableSummary]:
        return []

    async def join(
        self, room_id: str, table_id: str = "", spectate: bool = False
    ) -> lobby_pb2.JoinTableResponse:
        return lobby_pb2.JoinTableResponse(table_id=table_id or f"{room_id}.1", address="fake:1")

    async def stream(self, address: str, table_id: str, *, spectate: bool) -> AsyncIterator[Update]:
        while True:
            yield await self.updates.get()

    async def hand(self, hand_id: str) -> history_pb2.HandRecord:
        if hand_id not in self.records:
            raise PlayError("NOT_FOUND", "HAND_NOT_FOUND", "no such hand yet")
        return self.records[hand_id]

    async def verify(self, record: history_pb2.HandRecord, *args: object) -> vm.FairnessReport:
        return vm.FairnessReport(True, ("VERDICT: PASS - the 2 cards you saw were fixed before the deal",))

    async def my_hands(self, page_size: int = 50) -> list[history_pb2.HandSummary]:
        return []

    async def balance_changes(self, page_size: int = 50) -> list[history_pb2.BalanceChange]:
        return list(self.changes)

    async def place_house_bets(
        self, address: str, table_id: str, boxes: Sequence[table_pb2.HouseBox], request_id: str
    ) -> table_pb2.PlaceHouseBetsResponse:
        return table_pb2.PlaceHouseBetsResponse(
            round_id="r1", staked=common_pb2.Chips(pool=GRAM, amount=10), round=self.house_rounds.pop(0)
        )

    async def house_decision(
        self, address: str, request: table_pb2.MakeHouseDecisionRequest
    ) -> table_pb2.MakeHouseDecisionResponse:
        return table_pb2.MakeHouseDecisionResponse(round=self.house_rounds.pop(0))


@pytest.fixture
def platform(monkeypatch: pytest.MonkeyPatch) -> FakePlatform:
    fake = FakePlatform()
    monkeypatch.setattr(app_module, "Platform", lambda settings, identity: fake)
    return fake


def signed_in() -> PokerPlayApp:
    return PokerPlayApp(PlaySettings(), development_identity(ME, PlaySettings().auth_keys))


def room_of(platform: FakePlatform, room_id: str) -> lobby_pb2.Room:
    return next(r for r in platform.room_list if r.room_id == room_id)


async def opened(pilot: Pilot[None], screen: ScreenT) -> ScreenT:
    """The screen, opened over the lobby once the lobby is up."""
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="lobby")
    await app.push_screen(screen)
    await pilot.pause()
    return screen


def table_screen(platform: FakePlatform) -> TableScreen:
    return TableScreen(room_of(platform, "nlhe-gram-10"), "nlhe-gram-10.1", "fake:1", seat=1)


# --------------------------------------------------------------------------------------------- lobby


async def test_the_lobby_shows_where_the_focus_is_and_every_room_fits_or_scrolls_into_reach(
    platform: FakePlatform,
) -> None:
    """Issue 39 item 3: the focus was invisible and 13 of 20 rooms fitted at 90 rows, Russian Poker
    below the fold. The focused widget has an accent frame; the room list takes the rows the terminal
    has, grouped by game, and at a small terminal the keyboard scrolls to the last room."""
    app = signed_in()
    async with app.run_test(size=(160, 90)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="lobby")
        lobby = app.screen
        rooms = lobby.query_one("#rooms", DataTable)
        await until(pilot, lambda: rooms.row_count == 20, what="rooms listed")
        await pilot.pause()
        # The name the other players see (the lobby's profile) beside who the client signed in as.
        await until(pilot, lambda: "your name at the tables is Alice" in text_of(lobby, "#who"), what="name")
        # The two number fields say what they are.
        assert {"Chips to buy", "Buy-in"} <= {
            str(label.render()) for label in lobby.query(Label).results(Label)
        }
        # Every room is on screen at 90 rows, no scrolling needed.
        assert rooms.max_scroll_y == 0
        assert rooms.scrollable_content_region.height >= 21  # the header and twenty rooms
        # Grouped by game: each game's rooms together, in the catalogue's order of games.
        games = [vm.room_row(room_of(platform, str(key.value))).game for key in rooms.rows]
        assert games == sorted(games, key=[vm.variant_name(v) for v in vm.VARIANTS].index)
        headings = [str(rooms.get_row_at(i)[0]) for i in range(rooms.row_count)]
        assert headings[0] == "No-limit Hold'em"
        assert headings[-1] == "Russian Poker"

        # The focus: the room list has it first, with a heavy accent frame; a focused button gets the
        # accent on its edges, which no unfocused button has.
        accent = Color.parse(app.get_css_variables()["accent"])
        assert app.focused is rooms
        assert rooms.styles.border_top == ("heavy", accent)
        refresh = lobby.query_one("#refresh", Button)
        watch = lobby.query_one("#watch", Button)
        refresh.focus()
        await pilot.pause()
        assert rooms.styles.border_top[0] == "round"
        assert refresh.styles.border_top[1] == accent
        assert refresh.styles.border_bottom[1] == accent
        assert watch.styles.border_top[1] != accent
        buy = lobby.query_one("#buy-amount", Input)
        buy.focus()
        await pilot.pause()
        assert buy.styles.border_top[1] == accent
        assert refresh.styles.border_top[1] != accent

    app = signed_in()
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="lobby")
        lobby = app.screen
        assert isinstance(lobby, LobbyScreen)
        rooms = lobby.query_one("#rooms", DataTable)
        await until(pilot, lambda: rooms.row_count == 20, what="rooms listed")
        assert rooms.max_scroll_y > 0  # not all fit: the list scrolls
        for _ in range(rooms.row_count - 1):
            await pilot.press("down")
        await pilot.pause()
        last = rooms.row_count - 1
        height = rooms.scrollable_content_region.height
        # The last room (a Russian Poker one) is selected and scrolled into the window under the header.
        assert rooms.scroll_y + 1 <= last + 1 < rooms.scroll_y + height
        assert lobby.selected is not None
        assert lobby.selected.variant == common_pb2.GAME_VARIANT_RUSSIAN_POKER
        assert "Russian Poker" in text_of(lobby, "#room-detail")


# --------------------------------------------------------------------------------------------- table


def card(text: str, hidden: bool = False) -> common_pb2.Card:
    return common_pb2.Card(hidden=True) if hidden else common_pb2.Card(text=text, index=1)


def seat_view(seat: int, who: str, stack: int, bet: int = 0, cards: Sequence[str] = ()) -> T.SeatView:
    return T.SeatView(
        seat=seat,
        player_id=who,
        display_name=who,
        stack=stack,
        bet_this_round=bet,
        hole_cards=[card(c, hidden=who != ME) for c in cards],
    )


def hand_view(hand_id: str, street: int, seats: Sequence[T.SeatView], **fields: object) -> T.TableView:
    return T.TableView(
        table_id="nlhe-gram-10.1",
        variant=common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM,
        pool=GRAM,
        phase=T.TABLE_PHASE_HAND_IN_PROGRESS,
        hand_id=hand_id,
        street=street,  # type: ignore[arg-type]
        seats=seats,
        **fields,  # type: ignore[arg-type]
    )


def notice(code: str, text: str, seat: int = 0) -> T.TableEvent:
    return T.TableEvent(seat=seat, notice=T.TableNotice(code=code, text=text))


def action(seat: int, kind: int, amount: int = 0, to: int = 0) -> T.TableEvent:
    return T.TableEvent(seat=seat, action=T.ActionTaken(action=kind, amount=amount, to=to))  # type: ignore[arg-type]


def board(*cards: str) -> T.TableEvent:
    return T.TableEvent(cards=T.CardsRevealed(cards=[card(c) for c in cards]))


def chat(text: str) -> T.TableEvent:
    return T.TableEvent(seat=2, chat=T.ChatMessage(player_id="bob", text=text))


async def test_the_table_log_fills_the_terminal_and_keeps_the_end_of_a_hand_until_the_next_deal(
    platform: FakePlatform,
) -> None:
    """Issue 39 items 1 and 2: the log showed 7 lines at 90 rows and the end of a hand (my all-in,
    the call, the showdown, the result) scrolled away before the next deal; the last-hand line said
    the pot (`alice +2,000`) where I netted +1,000."""
    app = signed_in()
    async with app.run_test(size=(160, 90)) as pilot:
        table = await opened(pilot, table_screen(platform))
        # Most of a 90-row terminal is the log (it had 10 rows, 7 lines of text).
        assert table.query_one("#log", Log).scrollable_content_region.height >= 40

    app = signed_in()
    async with app.run_test(size=(160, 50)) as pilot:
        table = await opened(pilot, table_screen(platform))
        log = table.query_one("#log", Log)
        height = log.scrollable_content_region.height
        assert 8 <= height < 30

        async def step(view: T.TableView, *events: T.TableEvent) -> None:
            lines = len(table.log_lines)
            await platform.updates.put((events, view))
            await until(
                pilot, lambda: table.view is view, what=f"update shown after {table.log_lines[lines:]}"
            )

        def seats(alice: int, bob: int, a_bet: int = 0, b_bet: int = 0) -> list[T.SeatView]:
            return [
                seat_view(1, ME, alice, a_bet, ["As", "Ks"]),
                seat_view(2, "bob", bob, b_bet, ["", ""]),
            ]

        preflop = hand_view("h1", T.STREET_PREFLOP, seats(995, 990, 5, 10), pots=[T.Pot(amount=15)])
        await step(
            preflop,
            notice("HAND_STARTED", "hand h1 started"),
            notice("BLIND_POSTED", "posts small blind 5", seat=1),
            notice("BLIND_POSTED", "posts big blind 10", seat=2),
            T.TableEvent(seat=1, cards=T.CardsRevealed(cards=[card("As"), card("Ks")])),
        )
        await step(
            hand_view("h1", T.STREET_FLOP, seats(990, 990), pots=[T.Pot(amount=20)]),
            action(1, T.ACTION_KIND_CALL, 5, 10),
            action(2, T.ACTION_KIND_CHECK),
            board("2s", "7s", "9d"),
            *(chat(f"a long hand, line {i}") for i in range(12)),
        )
        end_block_from = len(table.log_lines)
        await step(
            hand_view("h1", T.STREET_FLOP, seats(0, 0, 990, 990), pots=[T.Pot(amount=2000)]),
            action(2, T.ACTION_KIND_CHECK),
            action(1, T.ACTION_KIND_ALL_IN, 990, 990),
            action(2, T.ACTION_KIND_CALL, 990, 990),
        )
        ended = hand_view(
            "h1",
            T.STREET_SHOWDOWN,
            seats(2000, 0),
            awards=[
                T.PotAward(
                    pot_index=0,
                    seats=[1],
                    amounts=[2000],
                    hand_description="a flush",
                    winning_cards=[card(c) for c in ("As", "Ks", "2s", "7s", "3s")],
                )
            ],
        )
        await step(
            ended,
            board("Td"),
            board("3s"),
            T.TableEvent(seat=2, cards=T.CardsRevealed(cards=[card("Qh"), card("Qd")], shown_by_player=True)),
            T.TableEvent(seat=1, cards=T.CardsRevealed(cards=[card("As"), card("Ks")], shown_by_player=True)),
            notice("POT_AWARDED", "pot 0: seat 1 wins 2000"),
            notice("HAND_ENDED", "hand ended, rake 0"),
        )
        result = "last hand - you +1,000, bob -1,000 - pot 2,000 won by you with a flush"
        assert table.log_lines[-1] == f"· {result}"
        assert text_of(table, "#awards") == result
        end_block = list(range(end_block_from, len(table.log_lines)))
        assert table.log_lines[end_block[0]] == "bob checks"
        assert any(
            "goes all-in" in table.log_lines[i] or "all-in to" in table.log_lines[i] for i in end_block
        )

        # Between hands more lines come (chat, the seed, the verdict): the end of the hand stays.
        await step(
            hand_view("h1", T.STREET_SHOWDOWN, seats(2000, 0), awards=ended.awards),
            *(chat(f"nice hand {i}") for i in range(2 * height)),
        )
        await pilot.pause()

        def on_screen(line: int) -> bool:
            return log.scroll_y <= line < log.scroll_y + height

        assert all(on_screen(line) for line in end_block), (log.scroll_y, height, end_block)
        # ... at the top of the window when there is room, so what came after it shows below it.
        assert log.scroll_y == end_block[0]
        assert on_screen(end_block[-1] + 1)
        assert not log.is_vertical_scroll_end

        # The next hand's commitment comes while the last hand's awards still show, without its
        # cards (the board is cleared): the last-hand line keeps the nets (a tmux play-through saw
        # "last hand - pot 265 won by you" lose "you +135, ..." at that moment).
        committed = T.TableView()
        committed.CopyFrom(ended)
        committed.hand_id, committed.phase = "h2", T.TABLE_PHASE_BETWEEN_HANDS
        committed.board.clear()  # type: ignore[attr-defined]
        for award in committed.awards:
            del award.winning_cards[:]
        await step(committed)
        assert text_of(table, "#awards") == result

        # The next deal: the log follows the play again.
        await step(
            hand_view("h2", T.STREET_PREFLOP, seats(1990, 0, 10, 0), pots=[T.Pot(amount=10)]),
            notice("HAND_STARTED", "hand h2 started"),
        )
        await pilot.pause()
        assert log.is_vertical_scroll_end
        assert on_screen(len(table.log_lines) - 1)
        assert text_of(table, "#awards") == ""

        # A hand whose start this client did not see (it came back mid-hand): no net is made up, the
        # pot is named as a pot; then history's record gives the nets.
        platform.records["h3"] = history_pb2.HandRecord(
            hand_id="h3",
            seats=[
                history_pb2.HandSeat(seat=0, player_id=ME, display_name=ME, net_result=-30),
                history_pb2.HandSeat(seat=1, player_id="bob", display_name="bob", net_result=30),
            ],
        )
        await step(hand_view("h3", T.STREET_TURN, seats(1960, 60), pots=[T.Pot(amount=60)]))
        await step(
            hand_view(
                "h3",
                T.STREET_TURN,
                seats(1960, 60),
                awards=[T.PotAward(pot_index=0, seats=[2], amounts=[60])],
            ),
            action(1, T.ACTION_KIND_FOLD),
            notice("HAND_ENDED", "hand ended, rake 0"),
        )
        assert "· last hand - pot 60 won by bob" in table.log_lines
        await until(
            pilot,
            lambda: "· hand h3 result, as history has it: bob +30, you -30" in table.log_lines,
            what=f"history's nets: {table.log_lines[-3:]}",
        )
        assert text_of(table, "#awards") == "last hand - bob +30, you -30 - pot 60 won by bob"


# --------------------------------------------------------------------------------------- house games


def house_round(phase: str, *options: tuple[int, int], **fields: object) -> T.HouseRoundView:
    view = T.HouseRoundView(round_id="r1", phase=phase, **fields)  # type: ignore[arg-type]
    box = view.boxes.add(box=1, cards=[card(c) for c in ("2s", "5d", "9c", "Jh", "Kd")], ante=10)
    for decision, cost in options:
        box.options.add(
            decision=decision, cost=cost, min_amount=10 if cost else 0, max_amount=50 if cost else 0
        )
    return view


def shown_decisions(screen: HouseScreen) -> dict[str, str]:
    return {
        b.id or "": str(b.label)
        for b in screen.query("#decisions Button").results(Button)
        if b.display and not b.disabled
    }


async def test_a_russian_poker_screen_labels_its_fields_and_shows_only_the_decisions_allowed(
    platform: FakePlatform,
) -> None:
    """Issue 39 item 4: `10 [X] dark box 0 Place bets` with seven decision buttons before any round.
    Each field has a label; only the options the table lists for the box are shown, none before a
    round or after it."""
    platform.house_rounds = [
        house_round(
            "DECISIONS",
            (T.HOUSE_DECISION_KIND_CALL, 20),
            (T.HOUSE_DECISION_KIND_FOLD, 0),
            (T.HOUSE_DECISION_KIND_EXCHANGE, 10),
            (T.HOUSE_DECISION_KIND_BUY_SIXTH_CARD, 10),
        ),
        house_round(
            "NO_GAME_CHOICES", (T.HOUSE_DECISION_KIND_TAKE_ANTE, 0), (T.HOUSE_DECISION_KIND_BUY_GAME, 10)
        ),
        house_round("COMPLETE", staked=30, paid_out=40),
    ]
    app = signed_in()
    async with app.run_test(size=(160, 50)) as pilot:
        room = room_of(platform, "russian-poker-gram-10")
        house = await opened(pilot, HouseScreen(room, "russian-poker-gram-10.1", "fake:1"))
        labels = [str(label.render()) for label in house.query(Label).results(Label) if label.display]
        assert "Ante" in labels
        assert "Bonus bet (dark box only)" in labels
        assert str(house.query_one("#dark", Checkbox).label) == "Dark box: no"
        # Before a round: no decision at all, and no exchange or insurance field.
        assert shown_decisions(house) == {}
        assert house.query_one("#no-decision", Label).display
        assert not house.query_one("#exchange-row").display
        assert not house.query_one("#insurance-row").display
        # The bonus bet goes with a dark box only (rules: "в тёмную").
        assert house.query_one("#bonus", Input).disabled
        assert await pilot.click("#dark")
        await until(pilot, lambda: not house.query_one("#bonus", Input).disabled, what="bonus field open")
        assert str(house.query_one("#dark", Checkbox).label) == "Dark box: yes"

        await press(pilot, "#place-bets")
        await until(pilot, lambda: bool(shown_decisions(house)), what="the round's options")
        assert shown_decisions(house) == {
            "decide-call": "call (20)",
            "decide-fold": "fold",
            "decide-exchange": "exchange (10)",
            "decide-sixth": "buy a sixth card (10)",
        }
        assert not house.query_one("#no-decision", Label).display
        assert house.query_one("#exchange-row").display  # with its label
        assert "Cards to exchange (1 to 5 from the left)" in [
            str(label.render()) for label in house.query("#exchange-row Label").results(Label)
        ]
        assert not house.query_one("#insurance-row").display
        assert "round r1 (your decision)" in text_of(house, "#round")

        await press(pilot, "#decide-call")
        await until(pilot, lambda: "decide-take-ante" in shown_decisions(house), what="no-game choices")
        assert shown_decisions(house) == {
            "decide-take-ante": "take the ante",
            "decide-buy-game": "buy a game (10)",
        }
        assert not house.query_one("#exchange-row").display
        assert "the dealer has no game" in text_of(house, "#round")

        await press(pilot, "#decide-take-ante")
        await until(pilot, lambda: "paid out" in text_of(house, "#round"), what="settled")
        assert shown_decisions(house) == {}
        assert house.query_one("#no-decision", Label).display
        assert "COMPLETE" not in text_of(house, "#round")


# ------------------------------------------------------------------------------------------- history


async def test_my_balance_changes_read_in_words_one_line_per_hand(platform: FakePlatform) -> None:
    """Issue 39 item 5, on the screen: `HOUSE_GAME_RESULT -10 GRAM`, and a won hand as two lines."""

    def change(
        reason: str, amount: int, after: int, reference: str, account: str
    ) -> history_pb2.BalanceChange:
        return history_pb2.BalanceChange(
            reason=reason,
            change=common_pb2.Chips(pool=GRAM, amount=amount),
            balance_after=after,
            reference=reference,
            account_id=account,
        )

    wallet = f"wallet:GRAM:{ME}"
    platform.changes = [
        change("HAND_RESULT", 10, 1445, "h1", "seat:s1"),
        change("HAND_RESULT", 435, 1435, "h1", "seat:s1"),
        change("HOUSE_GAME_RESULT", -10, 990, "r1:box1", wallet),
        change("PURCHASE", 1000, 1000, "p1", wallet),
    ]
    app = signed_in()
    async with app.run_test(size=(160, 50)) as pilot:
        history = await opened(pilot, HistoryScreen())
        statement = history.query_one("#changes", DataTable)
        await until(pilot, lambda: statement.row_count > 0, what="statement")
        rows = [[str(cell) for cell in statement.get_row_at(i)] for i in range(statement.row_count)]
        assert [row[1:3] for row in rows] == [
            ["hand result", "+445 GRAM"],
            ["house game", "-10 GRAM"],
            ["purchase", "+1,000 GRAM"],
        ]
        assert not any("_" in row[1] or row[1].isupper() for row in rows)  # the reason: words
