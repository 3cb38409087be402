"""A house-game round against the dealer (Casino Hold'em, Russian Poker): the screen, its decisions
and the round as the table shows it."""

from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
    "house.info": {
        "ru": "{game}, стол {table} ({pool}) - {stakes}",
        "en": "{game} at {table} ({pool}) - {stakes}",
    },
    "house.ante": {"ru": "Анте", "en": "Ante"},
    "house.ante_placeholder": {"ru": "анте", "en": "ante"},
    "house.dark_no": {"ru": "Тёмный бокс: нет", "en": "Dark box: no"},
    "house.dark_yes": {"ru": "Тёмный бокс: да", "en": "Dark box: yes"},
    "house.bonus": {"ru": "Бонус (тёмный бокс)", "en": "Bonus bet (dark box only)"},
    "house.bonus_placeholder": {"ru": "бонус", "en": "bonus bet"},
    "house.place_bets": {"ru": "Сделать ставки", "en": "Place bets"},
    "house.no_decision": {"ru": "решений нет: сделайте ставки", "en": "no decision open: place your bets"},
    "house.no_decision_box": {
        "ru": "для вашего бокса сейчас решений нет",
        "en": "no decision open for your box now",
    },
    "house.exchange": {"ru": "Карты на обмен (1-5 слева)", "en": "Cards to exchange (1 to 5 from the left)"},
    "house.exchange_placeholder": {"ru": "слева: 1 3 5", "en": "from the left: 1 3 5"},
    "house.insurance": {"ru": "Страховка", "en": "Insurance stake"},
    "house.insurance_range": {"ru": "Страховка ({low}-{high})", "en": "Insurance stake ({low}-{high})"},
    "house.insurance_placeholder": {"ru": "страховка", "en": "insurance"},
    "house.not_served": {
        "ru": "Игры против дилера эта версия стола пока не поддерживает ({reason}). Ничего не поставлено; "
        "лучше не показывать раунд, чем выдуманный.",
        "en": "House games are not served by this table release yet ({reason}). Nothing was staked; "
        "no round is shown rather than a made-up one.",
    },
    "house.bets_refused": {"ru": "ставки отклонены: {error}", "en": "bets refused: {error}"},
    "house.decision_refused": {"ru": "решение отклонено: {error}", "en": "decision refused: {error}"},
    "house.type_ante": {"ru": "введите анте ({stakes})", "en": "type an ante ({stakes})"},
    "house.staked": {"ru": "поставлено {amount} {pool}", "en": "staked {amount} {pool}"},
    "house.bets_first": {"ru": "сначала сделайте ставки", "en": "place your bets first"},
    "house.type_insurance": {"ru": "введите сумму страховки", "en": "type the insurance stake"},
    "house.positions_type": {
        "ru": "введите карты на обмен, от 1 до 5 слева, например `1 4`",
        "en": "type the cards to exchange, 1 to 5 from the left, e.g. `1 4`",
    },
    "house.positions_range": {
        "ru": "карты - от 1 до 5 слева, каждая один раз",
        "en": "cards are 1 to 5 from the left, each once",
    },
    # The decisions on the buttons and in the round's lines.
    "decision.call": {"ru": "Колл", "en": "call"},
    "decision.fold": {"ru": "Фолд", "en": "fold"},
    "decision.exchange": {"ru": "Обмен", "en": "exchange"},
    "decision.buy_sixth_card": {"ru": "Купить шестую карту", "en": "buy a sixth card"},
    "decision.insure": {"ru": "Страховка", "en": "insure"},
    "decision.buy_game": {"ru": "Купить игру", "en": "buy a game"},
    "decision.take_ante": {"ru": "Забрать анте", "en": "take the ante"},
    # The round as the table shows it.
    "round.line": {"ru": "раунд {round} ({phase})", "en": "round {round} ({phase})"},
    "round.dealt": {"ru": "сдан", "en": "dealt"},
    "round.dealer": {"ru": "дилер: {cards}", "en": "dealer: {cards}"},
    "round.box": {"ru": "бокс {box}: {cards}", "en": "box {box}: {cards}"},
    "round.you_may": {"ru": "можно: {choices}", "en": "you may: {choices}"},
    "round.withheld": {"ru": "(удержано {amount})", "en": "(withheld {amount})"},
    "round.settlement": {
        "ru": "{item}: ставка {stake}, {outcome} - получено {back} ({change}){why}",
        "en": "{item}: staked {stake}, {outcome} - back {back} ({change}){why}",
    },
    "round.decide_within": {
        "ru": "решите за {left} с (потом - решение по правилам)",
        "en": "decide within {left}s (then the rules' default)",
    },
    "round.note": {"ru": "заметка: {note}", "en": "note: {note}"},
    "round.summary": {
        "ru": "поставлено {staked}, выплачено {paid}",
        "en": "staked {staked}, paid out {paid}",
    },
    "note.timeout": {
        "ru": "бокс {box}: время вышло - {decision} (решение по правилам)",
        "en": "box {box}: time ran out - {decision} (the rules' default)",
    },
    "note.resumed": {"ru": "возобновлён {rest}", "en": "resumed {rest}"},
    "note.resumed_after_restart": {
        "ru": "возобновлён после перезапуска или смены сервера",
        "en": "resumed after a shard restart or takeover",
    },
}
