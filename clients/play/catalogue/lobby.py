"""The lobby: balances, buying chips, the rooms grouped by game and the selected room's tables."""

from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
    "lobby.mode_development": {
        "ru": "разработка: токен выпущен здесь ключом из настроек",
        "en": "development: token minted here with the configured key",
    },
    "lobby.mode_production": {"ru": "рабочий токен", "en": "production token"},
    "lobby.signed_in": {"ru": "Вы вошли как {player} ({mode})", "en": "Signed in as {player} ({mode})"},
    "lobby.signed_in_named": {
        "ru": "Вы вошли как {player} ({mode}); за столами вас зовут {name}",
        "en": "Signed in as {player} ({mode}); your name at the tables is {name}",
    },
    "lobby.balances_loading": {"ru": "балансы: …", "en": "balances: …"},
    "lobby.chips_to_buy": {"ru": "Сколько фишек купить", "en": "Chips to buy"},
    "lobby.buy_gram": {"ru": "Купить фишки GRAM", "en": "Buy GRAM chips"},
    "lobby.buy_mpx": {"ru": "Купить фишки MPX", "en": "Buy MPX chips"},
    "lobby.rejoin": {"ru": "Вернуться за мой стол", "en": "Back to my table"},
    "lobby.buy_note_development": {
        "ru": "Разработка: покупка записывается служебным токеном платёжного шлюза, выпущенным здесь "
        "(касса принимает покупки только от платёжного шлюза).",
        "en": "Development: a purchase is recorded with a payments-gateway service token minted here "
        "(the cashier lets only the payments gateway record purchases).",
    },
    "lobby.buy_note_production": {
        "ru": "Покупки проходят через платёжный шлюз; этот клиент не может их записать.",
        "en": "Purchases go through the payments gateway; this client cannot record them.",
    },
    "lobby.rooms_title": {
        "ru": "Комнаты по играм - стрелки выбирают, прокрутка показывает остальные",
        "en": "Rooms by game - arrows move, scroll for more",
    },
    "lobby.buy_in": {"ru": "Бай-ин", "en": "Buy-in"},
    "lobby.buy_in_placeholder": {"ru": "бай-ин", "en": "buy-in"},
    "lobby.sit": {"ru": "Сесть за стол", "en": "Sit down"},
    "lobby.watch": {"ru": "Смотреть", "en": "Watch"},
    "lobby.house": {"ru": "Игра против дилера", "en": "House game"},
    "lobby.column_game": {"ru": "игра", "en": "game"},
    "lobby.column_room": {"ru": "комната", "en": "room"},
    "lobby.column_pool": {"ru": "пул", "en": "pool"},
    "lobby.column_stakes": {"ru": "ставки", "en": "stakes"},
    "lobby.column_buy_in": {"ru": "бай-ин", "en": "buy-in"},
    "lobby.column_seats": {"ru": "места", "en": "seats"},
    "lobby.unreachable": {"ru": "платформа недоступна: {error}", "en": "cannot reach the platform: {error}"},
    "lobby.wallet": {"ru": "кошелёк {pool}: {amount}", "en": "{pool} wallet {amount}"},
    "lobby.seated_at": {
        "ru": "вы за столом {table}, стек {amount} {pool}",
        "en": "seated at {table} with {amount} {pool}",
    },
    "lobby.no_wallet": {"ru": "кошелька ещё нет: купите фишки", "en": "no wallet yet: buy chips"},
    "lobby.rooms_failed": {
        "ru": "не удалось получить список комнат: {error}",
        "en": "cannot list the rooms: {error}",
    },
    "lobby.room_detail": {
        "ru": "{name} - {game}, {pool}, ставки {stakes}, бай-ин {buy_in}",
        "en": "{name} - {game}, {pool}, stakes {stakes}, buy-in {buy_in}",
    },
    "lobby.tables_failed": {"ru": "столы: {error}", "en": "tables: {error}"},
    "lobby.no_table": {"ru": "открытых столов пока нет", "en": "no table open yet"},
    "lobby.type_chips": {"ru": "введите, сколько фишек купить", "en": "type how many chips to buy"},
    "lobby.purchase_refused": {"ru": "покупка отклонена: {error}", "en": "purchase refused: {error}"},
    "lobby.bought": {"ru": "куплено фишек {pool}: {amount}", "en": "bought {amount} {pool} chips"},
    "lobby.choose_room": {"ru": "сначала выберите комнату", "en": "choose a room first"},
    "lobby.join_failed": {"ru": "не удалось присоединиться: {error}", "en": "cannot join: {error}"},
    "lobby.choose_room_and_buy_in": {"ru": "выберите комнату и бай-ин", "en": "choose a room and a buy-in"},
    "lobby.sit_failed": {"ru": "не удалось сесть за стол: {error}", "en": "cannot sit down: {error}"},
    "lobby.room_not_listed": {
        "ru": "комнаты стола {table} нет в списке",
        "en": "the room of {table} is not listed",
    },
    "lobby.table_not_found": {"ru": "стол не найден: {error}", "en": "cannot find the table: {error}"},
    "lobby.choose_house_room": {
        "ru": "для игры против дилера выберите комнату «Казино холдем» или «Русский покер»",
        "en": "choose a Casino Hold'em or Russian Poker room for a house game",
    },
    # The games, in the order the lobby groups them.
    "variant.no_limit_holdem": {"ru": "Безлимитный холдем", "en": "No-limit Hold'em"},
    "variant.fixed_limit_holdem": {"ru": "Лимитный холдем", "en": "Fixed-limit Hold'em"},
    "variant.casino_holdem": {"ru": "Казино холдем", "en": "Casino Hold'em"},
    "variant.russian_poker": {"ru": "Русский покер", "en": "Russian Poker"},
    # A room's row and its tables.
    "room.stakes_limit": {"ru": "{small}/{big} лимит", "en": "{small}/{big} limit"},
    "room.stakes_ante": {"ru": "анте {low}-{high}", "en": "ante {low}-{high}"},
    "room.from_wallet": {"ru": "из кошелька", "en": "from wallet"},
    "room.boxes": {"ru": "боксов: {count}", "en": "{count} boxes"},
    "room.seats": {
        "ru": "занято {taken}, свободно {free} из {seats}",
        "en": "{taken} taken, {free} free of {seats}/table",
    },
    "room.hand_running": {"ru": "идёт раздача", "en": "hand running"},
    "room.between_hands": {"ru": "между раздачами", "en": "between hands"},
    "room.table_empty": {"ru": "никого", "en": "empty"},
    "room.table_line": {
        "ru": "{table}: за столом {seated}/{seats}, {running} - {players}",
        "en": "{table}: {seated}/{seats} seated, {running} - {players}",
    },
}
