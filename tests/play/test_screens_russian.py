"""The screens in Russian (`--lang ru`): sign-in, lobby, a hand at the table, a Russian Poker round and
the history, driven by Textual's pilot against the fake platform of test_screens.py. Each screen shows
the Russian poker words, and no English word of the catalogue leaks onto it (`Fold`, `Call`, `Between
hands`, `won`): every text on it, the footer's keys and the table's log included."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest
from textual.app import App
from textual.widget import Widget
from textual.widgets import Button, Checkbox, DataTable, Header, Input, Log, Static

from clients.play import app as app_module
from clients.play import texts
from clients.play import view_model as vm
from clients.play.app import LobbyScreen, PokerPlayApp, SignInScreen
from clients.play.catalogue import CATALOGUE
from clients.play.history_screen import HistoryScreen
from clients.play.house_screen import HouseScreen
from clients.play.identity import development_identity
from clients.play.settings import PlaySettings
from clients.play.table_screen import TableScreen
from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2
from poker.table.v1 import table_pb2
from tests.play.test_play_session import press, text_of, type_into, until
from tests.play.test_screens import (
    GRAM,
    ME,
    FakePlatform,
    action,
    board,
    card,
    hand_view,
    house_round,
    notice,
    opened,
    room_of,
    seat_view,
    shown_decisions,
)

T = table_pb2
COMMITMENT = "c" * 64
LATIN_WORD = re.compile(r"[A-Za-z]{3,}")


def english_words() -> frozenset[str]:
    """The catalogue's English words that are not in its Russian too (as GRAM or UTC are)."""

    def latin(text: str) -> set[str]:
        return {w.lower() for w in LATIN_WORD.findall(re.sub(r"\{\w+\}", "", text))}

    english = set().union(*(latin(entry["en"]) for entry in CATALOGUE.values()))
    russian = set().union(*(latin(entry["ru"]) for entry in CATALOGUE.values()))
    return frozenset(english - russian)


ENGLISH = english_words()


class RussianFake(FakePlatform):
    """The fake platform, its one English answer (the fairness report) made as the client makes it."""

    def __init__(self) -> None:
        super().__init__()
        self.hands: list[history_pb2.HandSummary] = []

    async def verify(self, record: history_pb2.HandRecord, *args: object) -> vm.FairnessReport:
        return vm.fairness_report(
            hand_id=record.hand_id,
            commitment=COMMITMENT,
            shuffle_version=3,
            client_seed_seats=[1],
            mismatch=None,
            dealt_checked=7,
            computed_commitment=COMMITMENT,
            server_verdict_pass=True,
            own_seed_line=vm.own_seed_check([(1, ME, b"s")], ME, "s")[1],
            openings_checked=9,
            hash_set_line=vm.hash_set_line([1, 2]),
        )

    async def my_hands(self, page_size: int = 50) -> list[history_pb2.HandSummary]:
        return list(self.hands)


@pytest.fixture
def platform(monkeypatch: pytest.MonkeyPatch) -> RussianFake:
    fake = RussianFake()
    monkeypatch.setattr(app_module, "Platform", lambda settings, identity: fake)
    return fake


def russian_app(*, signed_in: bool = True) -> PokerPlayApp:
    """The client as `poker-play --lang ru` starts it."""
    identity = development_identity(ME, PlaySettings().auth_keys) if signed_in else None
    return PokerPlayApp(PlaySettings(lang="ru"), identity)


def shown_text(app: App[None]) -> str:
    """Every text of the screen shown: labels, buttons, fields, lists, the log, the footer's keys and
    the sub-title; the program's name on the header left out."""
    parts = [str(app.sub_title)]
    parts += [b.binding.description for b in app.active_bindings.values() if b.binding.show]
    for widget in app.screen.query("*").results(Widget):
        if any(isinstance(node, Header) for node in (widget, *widget.ancestors)):
            continue
        if widget.border_title:
            parts.append(str(widget.border_title))
        if isinstance(widget, Button | Checkbox):
            parts.append(str(widget.label))
        elif isinstance(widget, Static):
            parts.append(str(widget.render()))
        elif isinstance(widget, Input):
            parts += [widget.placeholder, widget.value]
        elif isinstance(widget, DataTable):
            parts += [str(column.label) for column in widget.columns.values()]
            parts += [str(cell) for row in range(widget.row_count) for cell in widget.get_row_at(row)]
        elif isinstance(widget, Log):
            parts += [str(line) for line in widget.lines]
    return "\n".join(parts)


def assert_russian(text: str, data: Sequence[str], *expected: str) -> None:
    """The expected words are shown, and no English word of the catalogue is, once the data given
    (the names of players, rooms, tables and hands, which are nobody's words) is taken out."""
    missing = [words for words in expected if words not in text]
    assert not missing, f"not shown: {missing}\n{text}"
    for item in sorted(data, key=len, reverse=True):
        text = text.replace(item, " ")
    leaked = sorted({w for w in LATIN_WORD.findall(text) if w.lower() in ENGLISH})
    assert not leaked, f"English on a Russian screen: {leaked}\n{text}"


def room_data(platform: FakePlatform) -> list[str]:
    """The lobby's own names of its rooms and tables (data, not the client's words)."""
    names = [room.room_id for room in platform.room_list] + [room.display_name for room in platform.room_list]
    return [*names, *(f"{room.room_id}.1" for room in platform.room_list), ME, "bob"]


def test_the_english_words_checked_for_include_the_poker_words() -> None:
    assert {"fold", "call", "check", "raise", "between", "hands", "won", "pot", "board", "flop"} <= ENGLISH


async def test_signing_in_reads_in_russian(platform: RussianFake) -> None:
    app = russian_app(signed_in=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SignInScreen), what="sign-in")
        await type_into(pilot, "#name", "-x")
        await press(pilot, "#sign-in")
        await until(pilot, lambda: text_of(app.screen, "#message") != "", what="refused")
        assert_russian(shown_text(app), [], "Войти", "Вход для разработки", "имя - от 1 до 32", "Выход")
    assert texts.language() == "ru"  # the client chose Russian (the test's fixture puts English back)


async def test_the_lobby_reads_in_russian(platform: RussianFake) -> None:
    app = russian_app()
    async with app.run_test(size=(160, 60)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LobbyScreen), what="lobby")
        lobby = app.screen
        assert isinstance(lobby, LobbyScreen)
        rooms = lobby.query_one("#rooms", DataTable)
        await until(pilot, lambda: rooms.row_count == 20, what="rooms listed")
        await lobby.select_room("flhe-gram-10")
        await pilot.pause()
        assert_russian(
            shown_text(app),
            room_data(platform),
            "Безлимитный холдем",
            "Лимитный холдем",
            "Казино холдем",
            "Русский покер",
            "Сесть за стол",
            "Смотреть",
            "Игра против дилера",
            "Мои раздачи",
            "кошелёк GRAM: 5,000",
            "5/10 лимит",
            "открытых столов пока нет",
            "Обновить",
            "Выход",
        )


async def test_a_hand_at_the_table_reads_in_russian(platform: RussianFake) -> None:
    """Blinds, every action, the board, the showdown and the result (`bob won 395 with One pair,
    Kings` as a Russian room says it), the buttons of my turn, refusals typed on screen, the verdict."""
    platform.records["h1"] = history_pb2.HandRecord(
        hand_id="h1",
        seats=[
            history_pb2.HandSeat(seat=0, player_id=ME, display_name=ME, net_result=-200),
            history_pb2.HandSeat(seat=1, player_id="bob", display_name="bob", net_result=195),
        ],
    )
    app = russian_app()
    async with app.run_test(size=(160, 60)) as pilot:
        room = room_of(platform, "nlhe-gram-10")
        table = await opened(pilot, TableScreen(room, "nlhe-gram-10.1", "fake:1", seat=1))

        async def step(view: T.TableView, *events: T.TableEvent) -> None:
            await platform.updates.put((events, view))
            await until(pilot, lambda: table.view is view, what="update shown")

        def seats(alice: int, bob: int, a_bet: int = 0, b_bet: int = 0) -> list[T.SeatView]:
            mine = seat_view(1, ME, alice, a_bet, ["As", "Ks"])
            mine.status = T.SEAT_STATUS_ACTIVE
            return [mine, seat_view(2, "bob", bob, b_bet, ["", ""])]

        my_turn = T.LegalActions(
            actions=[T.ACTION_KIND_FOLD, T.ACTION_KIND_CALL, T.ACTION_KIND_RAISE, T.ACTION_KIND_ALL_IN],
            call_amount=5,
            min_amount=20,
            max_amount=995,
            step=5,
            all_in_amount=995,
        )
        await step(
            hand_view(
                "h1",
                T.STREET_PREFLOP,
                seats(995, 990, 5, 10),
                pots=[T.Pot(amount=15)],
                button_seat=1,
                to_act_seat=1,
                seed_commitment=COMMITMENT,
                legal_actions=my_turn,
            ),
            notice("HAND_STARTED", "hand h1 started"),
            notice("BLIND_POSTED", "posts small blind 5", seat=1),
            notice("BLIND_POSTED", "posts big blind 10", seat=2),
            T.TableEvent(seat=1, cards=T.CardsRevealed(cards=[card("As"), card("Ks")])),
            T.TableEvent(seat=2, cards=T.CardsRevealed(cards=[card("", hidden=True)] * 2)),
        )
        await until(pilot, lambda: table.query_one("#act-raise", Button).visible, what="my buttons")
        # Refusals said on screen before anything is sent.
        table.query_one("#amount", Input).value = "7"
        await table.act(T.ACTION_KIND_RAISE)
        assert "сумма должна быть от 20 до 995 с шагом 5" in text_of(table, "#message")
        assert_russian(
            shown_text(app),
            room_data(platform),
            "Фолд (f)",
            "Колл 5 (c)",
            "Рейз до 20-995 (r)",
            "Олл-ин 995 (a)",
            "ВАШ ХОД",
            "баттон",
            "банк 15",
        )
        await table.act(T.ACTION_KIND_CHECK)
        assert text_of(table, "#message") == "это действие вам сейчас недоступно"

        await step(
            hand_view("h1", T.STREET_FLOP, seats(900, 900), pots=[T.Pot(amount=200)], to_act_seat=2),
            action(1, T.ACTION_KIND_RAISE, 85, 90),
            action(2, T.ACTION_KIND_CALL, 80, 90),
            board("2s", "7s", "9d"),
            action(1, T.ACTION_KIND_CHECK),
            action(2, T.ACTION_KIND_BET, 100, 100),
            T.TableEvent(seat=2, chat=T.ChatMessage(player_id="bob", sticker_id="nice-hand")),
        )
        ended = hand_view(
            "h1",
            T.STREET_SHOWDOWN,
            seats(795, 1195),
            awards=[T.PotAward(pot_index=0, seats=[2], amounts=[395], hand_description="One pair, Kings")],
        )
        await step(
            ended,
            action(1, T.ACTION_KIND_ALL_IN, 100, 100),
            action(2, T.ACTION_KIND_FOLD),
            board("Kd"),
            board("3c"),
            T.TableEvent(seat=2, cards=T.CardsRevealed(cards=[card("Kh"), card("Qd")], shown_by_player=True)),
            notice("POT_AWARDED", "pot 0: seat 2 wins 395"),
            notice("HAND_ENDED", "hand ended, rake 5"),
        )
        await until(
            pilot,
            lambda: any("УСПЕХ" in line for line in table.log_lines),
            what=f"verdict: {table.log_lines}",
        )
        await step(
            T.TableView(
                table_id="nlhe-gram-10.1",
                variant=common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM,
                pool=GRAM,
                phase=T.TABLE_PHASE_BETWEEN_HANDS,
                seats=seats(795, 1195),
                awards=ended.awards,
            )
        )
        assert_russian(
            shown_text(app),
            [*room_data(platform), "h1"],
            "раздача h1 началась",
            "alice: ставит малый блайнд 5",
            "bob: ставит большой блайнд 10",
            "alice получает A♠ K♠",
            "alice: рейз до 90 (+85)",
            "bob: колл 80",
            "борд: 2♠ 7♠ 9♦",
            "alice: чек",
            "bob: бет 100",
            "bob отправляет 👏 хорошая рука",
            "alice: олл-ин до 100",
            "bob: фолд",
            "bob показывает K♥ Q♦",
            "раздача окончена, рейк 5",
            "банк 395: победитель - bob, комбинация: Пара королей",
            "скоро следующая раздача",
            "Безлимитный холдем",
            "Встать из-за стола",
            "Пропускать (s)",
            "вы в игре",
            "Мой сид - в каждую раздачу",
            "Уйти / назад",
            "Пропуск / в игру",
        )


async def test_a_russian_poker_round_reads_in_russian(platform: RussianFake) -> None:
    settled = T.HouseRoundView(
        round_id="r1", phase="COMPLETE", staked=30, paid_out=70, notes=["TIMEOUT box 1 TAKE_ANTE"]
    )
    settled.boxes.add(
        box=1,
        status="CALLED",
        cards=[card(c) for c in ("Ks", "Kd", "9c", "9h", "2d")],
        settlement=[
            T.HouseSettlementLine(
                item="ANTE", stake=10, outcome="RETURNED", amount=0, reason="ANTE_RETURNED_ON_WIN"
            ),
            T.HouseSettlementLine(
                item="BET", stake=20, outcome="WON", amount=40, reason="COMBINATION_TWO_PAIR"
            ),
            T.HouseSettlementLine(
                item="BONUS", stake=5, outcome="LOST", amount=-5, reason="BONUS_NO_COMBINATION"
            ),
        ],
    )
    platform.house_rounds = [
        house_round(
            "DECISIONS",
            (T.HOUSE_DECISION_KIND_CALL, 20),
            (T.HOUSE_DECISION_KIND_FOLD, 0),
            (T.HOUSE_DECISION_KIND_EXCHANGE, 10),
            (T.HOUSE_DECISION_KIND_BUY_SIXTH_CARD, 10),
            (T.HOUSE_DECISION_KIND_INSURE, 10),
        ),
        house_round(
            "NO_GAME_CHOICES", (T.HOUSE_DECISION_KIND_TAKE_ANTE, 0), (T.HOUSE_DECISION_KIND_BUY_GAME, 10)
        ),
        settled,
    ]
    app = russian_app()
    async with app.run_test(size=(160, 50)) as pilot:
        room = room_of(platform, "russian-poker-gram-10")
        house = await opened(pilot, HouseScreen(room, "russian-poker-gram-10.1", "fake:1"))
        data = [*room_data(platform), "r1"]
        assert_russian(
            shown_text(app),
            data,
            "Русский покер",
            "Анте",
            "Тёмный бокс: нет",
            "Сделать ставки",
            "решений нет",
        )
        await press(pilot, "#place-bets")
        await until(pilot, lambda: bool(shown_decisions(house)), what="the round's options")
        await type_into(pilot, "#positions", "9")
        await press(pilot, "#decide-exchange")
        await until(pilot, lambda: text_of(house, "#message") != "", what="refused")
        assert_russian(
            shown_text(app),
            data,
            "Колл (20)",
            "Фолд",
            "Обмен (10)",
            "Купить шестую карту (10)",
            "Страховка (10-50)",
            "раунд r1 (ваше решение)",
            "можно: Колл (20), Фолд",
            "карты - от 1 до 5 слева",
            "поставлено 10 GRAM",
        )
        await press(pilot, "#decide-call")
        await until(pilot, lambda: "decide-take-ante" in shown_decisions(house), what="no-game choices")
        assert_russian(shown_text(app), data, "Забрать анте", "Купить игру (10)", "у дилера нет игры")
        await press(pilot, "#decide-take-ante")
        await until(pilot, lambda: "выплачено" in text_of(house, "#round"), what="settled")
        assert_russian(
            shown_text(app),
            data,
            "раунд r1 (рассчитан)",
            "бокс 1: K♠ K♦ 9♣ 9♥ 2♦ [играет]",
            "анте: ставка 10, возврат - получено 10 (0) - при выигрыше анте возвращается",
            "бет: ставка 20, выигрыш - получено 60 (+40) - комбинация: две пары",
            "бонус: ставка 5, проигрыш - получено 0 (-5) - бонус: нет комбинации",
            "заметка: бокс 1: время вышло - забрать анте (решение по правилам)",
            "поставлено 30, выплачено 70",
            "Назад",
        )


async def test_my_hands_read_in_russian(platform: RussianFake) -> None:
    def act(kind: str, seat: int, amount: int = 0, **fields: object) -> history_pb2.HandAction:
        return history_pb2.HandAction(kind=kind, seat=seat, amount=amount, **fields)  # type: ignore[arg-type]

    platform.hands = [
        history_pb2.HandSummary(hand_id="h1", table_id="nlhe-gram-10.1", net_result=29, pool=GRAM)
    ]
    platform.records["h1"] = history_pb2.HandRecord(
        hand_id="h1",
        table_id="nlhe-gram-10.1",
        variant=common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM,
        pool=GRAM,
        small_blind=5,
        big_blind=10,
        rake=1,
        seed_commitment=COMMITMENT,
        seats=[
            history_pb2.HandSeat(
                seat=0, player_id=ME, display_name=ME, starting_stack=1000, final_stack=1029, net_result=29
            ),
            history_pb2.HandSeat(
                seat=1,
                player_id="bob",
                display_name="bob",
                starting_stack=1000,
                final_stack=970,
                net_result=-30,
            ),
        ],
        actions=[
            act("POST_SMALL_BLIND", 0, 5, street="PREFLOP"),
            act("POST_BIG_BLIND", 1, 10, street="PREFLOP"),
            act("RAISE", 0, 25, to=30, street="PREFLOP"),
            act("CALL", 1, 20, street="PREFLOP"),
            act("DEAL_BOARD", 0, street="FLOP", cards=[card("2c"), card("7d"), card("Ts")]),
            act("CHECK", 1, street="FLOP"),
            act("BET", 0, 970, to=970, all_in=True, street="FLOP"),
            act("FOLD", 1, street="FLOP", cause=history_pb2.ACTION_CAUSE_TIMEOUT),
            act("UNCALLED_RETURN", 0, 970, street="FLOP"),
        ],
        board=[card("2c"), card("7d"), card("Ts")],
        pots=[history_pb2.HandPot(amount=59, rake=1, winner_seats=[0], winner_amounts=[59])],
    )
    platform.changes = [
        history_pb2.BalanceChange(
            reason=reason,
            change=common_pb2.Chips(pool=GRAM, amount=amount),
            balance_after=after,
            reference=reference,
            account_id=account,
        )
        for reason, amount, after, reference, account in (
            ("HAND_RESULT", 29, 1029, "h1", "seat:s1"),
            ("BUY_IN", 1000, 1000, "s1", "seat:s1"),
            ("PURCHASE", 1000, 1000, "p1", f"wallet:GRAM:{ME}"),
        )
    ]
    app = russian_app()
    async with app.run_test(size=(160, 60)) as pilot:
        history = await opened(pilot, HistoryScreen())
        await until(pilot, lambda: history.query_one("#hands", DataTable).row_count == 1, what="my hands")
        await press(pilot, "#verify")
        await until(pilot, lambda: text_of(history, "#verdict") != "", what="verdict")
        data = [*room_data(platform), "h1", "s1", "p1"]
        assert_russian(
            shown_text(app),
            data,
            "Мои последние раздачи",
            "Движение моего баланса",
            "окончена (UTC)",
            "итог раздачи",
            "бай-ин",
            "покупка",
            "кошелёк 1,000",
            "раздача h1 за столом nlhe-gram-10.1 (Безлимитный холдем, GRAM)",
            "блайнды 5/10, рейк 1",
            "место 1: alice (вы) [-] 1,000 -> 1,029 (+29)",
            "действия:",
            "alice: малый блайнд 5",
            "alice: рейз до 30",
            "флоп: 2♣ 7♦ T♠",
            "alice: бет 970 олл-ин",
            "bob: фолд (время вышло)",
            "alice: возврат неуравненной ставки 970",
            "банк 59:",
            "коммит:",
            "ВЕРДИКТ: УСПЕХ - все увиденные вами карты (7) были зафиксированы до раздачи",
            "ваш клиентский сид: участвует в тасовке на месте 1",
            "все сиды совпадают",
            "Проверить честность",
            "Показать раздачу",
        )
