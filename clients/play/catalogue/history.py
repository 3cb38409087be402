"""My hands and balance changes, one hand in detail, and its fairness checked here."""

from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
    # The history screen.
    "history.recent": {"ru": "Мои последние раздачи", "en": "My recent hands"},
    "history.show": {"ru": "Показать раздачу", "en": "Show hand"},
    "history.verify": {"ru": "Проверить честность", "en": "Verify fairness"},
    "history.changes": {"ru": "Движение моего баланса", "en": "My balance changes"},
    "history.column_hand": {"ru": "раздача", "en": "hand"},
    "history.column_table": {"ru": "стол", "en": "table"},
    "history.column_ended": {"ru": "окончена (UTC)", "en": "ended (UTC)"},
    "history.column_net": {"ru": "итог", "en": "net"},
    "history.column_pool": {"ru": "пул", "en": "pool"},
    "history.column_when": {"ru": "когда (UTC)", "en": "when (UTC)"},
    "history.column_reason": {"ru": "причина", "en": "reason"},
    "history.column_change": {"ru": "изменение", "en": "change"},
    "history.column_balance": {"ru": "баланс", "en": "balance"},
    "history.column_reference": {"ru": "ссылка", "en": "reference"},
    "history.hands_failed": {"ru": "раздачи: {error}", "en": "hands: {error}"},
    "history.changes_failed": {"ru": "движение баланса: {error}", "en": "balance changes: {error}"},
    "history.no_hands": {"ru": "раздач пока нет", "en": "no hands yet"},
    "history.nothing_to_show": {"ru": "нет раздачи для показа", "en": "no hand to show"},
    "history.hand_failed": {"ru": "раздача {hand}: {error}", "en": "hand {hand}: {error}"},
    "history.cannot_verify": {"ru": "проверить пока нельзя: {error}", "en": "cannot verify yet: {error}"},
    "account.wallet": {"ru": "кошелёк", "en": "wallet"},
    "account.seat": {"ru": "стол", "en": "seat"},
    # One hand in detail.
    "hand.header": {
        "ru": "раздача {hand} за столом {table} ({game}, {pool})",
        "en": "hand {hand} at {table} ({game}, {pool})",
    },
    "hand.blinds": {"ru": "блайнды {small}/{big}, рейк {rake}", "en": "blinds {small}/{big}, rake {rake}"},
    "hand.voided": {"ru": "АННУЛИРОВАНА", "en": "VOIDED"},
    "hand.seat": {
        "ru": "место {seat}: {name}{you} [{cards}] {start} -> {final} ({net})",
        "en": "seat {seat}: {name}{you} [{cards}] {start} -> {final} ({net})",
    },
    "hand.actions": {"ru": "действия:", "en": "actions:"},
    "record.action": {
        "ru": "{who}: {word}{figure}{all_in}{timed}",
        "en": "{who} {word}{figure}{all_in}{timed}",
    },
    "record.all_in": {"ru": "олл-ин", "en": "all-in"},
    "record.POST_SMALL_BLIND": {"ru": "малый блайнд", "en": "posts the small blind"},
    "record.POST_BIG_BLIND": {"ru": "большой блайнд", "en": "posts the big blind"},
    "record.POST_EXTRA_BIG_BLIND": {"ru": "дополнительный большой блайнд", "en": "posts a big blind"},
    "record.POST_DEAD_SMALL_BLIND": {"ru": "мёртвый малый блайнд", "en": "posts a dead small blind"},
    "record.FOLD": {"ru": "фолд", "en": "folds"},
    "record.CHECK": {"ru": "чек", "en": "checks"},
    "record.CALL": {"ru": "колл", "en": "calls"},
    "record.BET": {"ru": "бет", "en": "bets"},
    "record.RAISE": {"ru": "рейз до", "en": "raises to"},
    "record.SHOW": {"ru": "показывает", "en": "shows"},
    "record.MUCK": {"ru": "сбрасывает без показа", "en": "mucks"},
    "record.UNCALLED_RETURN": {"ru": "возврат неуравненной ставки", "en": "gets back uncalled"},
    # A house round in detail.
    "round.header": {
        "ru": "раунд {round} за столом {table} ({game}, {pool})",
        "en": "round {round} at {table} ({game}, {pool})",
    },
    "round.decided": {
        "ru": "бокс {box}, решение: {decision}{cost}{timed}",
        "en": "box {box} decided: {decision}{cost}{timed}",
    },
    "round.timed_out": {
        "ru": "(время вышло: решение по правилам)",
        "en": "(time ran out: the rules' default)",
    },
    # The fairness check (docs/fairness.md).
    "fairness.header": {
        "ru": "раздача {hand} (версия тасовки {version})",
        "en": "hand {hand} (shuffle version {version})",
    },
    "fairness.published": {
        "ru": "опубликованный коммит  {commitment}",
        "en": "published commitment  {commitment}",
    },
    "fairness.recomputed": {
        "ru": "пересчитан здесь       {commitment}",
        "en": "recomputed here       {commitment}",
    },
    "fairness.seed_seats": {"ru": "клиентские сиды мест   {seats}", "en": "client seeds at seats {seats}"},
    "fairness.none": {"ru": "нет", "en": "none"},
    "fairness.openings": {
        "ru": "раскрытий проверено по коммиту: {count}",
        "en": "openings checked against the commitment: {count}",
    },
    "fairness.checked_openings": {
        "ru": "ваших карт проверено по раскрытиям: {count}",
        "en": "cards you saw checked against the openings: {count}",
    },
    "fairness.checked_deck": {
        "ru": "ваших карт проверено по пересчитанной колоде: {count}",
        "en": "cards you saw checked against the recomputed deck: {count}",
    },
    "fairness.server": {
        "ru": "собственный вердикт службы честности: {verdict}",
        "en": "fairness service's own verdict: {verdict}",
    },
    "fairness.pass": {"ru": "УСПЕХ", "en": "PASS"},
    "fairness.fail": {"ru": "ПРОВАЛ", "en": "FAIL"},
    "fairness.verdict_pass_openings": {
        "ru": "ВЕРДИКТ: УСПЕХ - все увиденные вами карты ({count}) были зафиксированы до раздачи",
        "en": "VERDICT: PASS - the {count} cards you saw were fixed before the deal",
    },
    "fairness.verdict_pass_deck": {
        "ru": "ВЕРДИКТ: УСПЕХ - колода получена из опубликованного сида",
        "en": "VERDICT: PASS - the deck came from the committed seed",
    },
    "fairness.verdict_fail": {"ru": "ВЕРДИКТ: ПРОВАЛ - {mismatch}", "en": "VERDICT: FAIL - {mismatch}"},
    "fairness.verdict_nothing": {
        "ru": "ВЕРДИКТ: НЕ ПРОВЕРЕНО - ни одну из увиденных вами карт проверить не удалось (подтверждать нечего)",
        "en": "VERDICT: NOT VERIFIED - no card you saw could be checked (nothing to pass)",
    },
    "fairness.own_seed_missing": {
        "ru": "ваш клиентский сид: НЕ участвует в тасовке (на вашем месте нет записи)",
        "en": "your client seed: NOT in the shuffle (no entry at your seat)",
    },
    "fairness.own_seed_changed": {
        "ru": "ваш клиентский сид: запись на месте {seat} - НЕ тот сид, что вы задали",
        "en": "your client seed: the entry at seat {seat} is NOT the seed you set",
    },
    "fairness.own_seed_ok": {
        "ru": "ваш клиентский сид: участвует в тасовке на месте {seat}",
        "en": "your client seed: in the shuffle at seat {seat}",
    },
    "fairness.seed_not_in_set": {
        "ru": "сида места {seat} не было в наборе хешей, закрытом до приёма сидов",
        "en": "the seed at seat {seat} was not in the hash set closed before the seeds",
    },
    "fairness.seed_mismatch": {
        "ru": "сид места {seat} не совпадает со своим хешем, показанным до приёма сидов",
        "en": "the seed at seat {seat} does not match its hash shown before the seeds",
    },
    "fairness.hash_set_ok": {
        "ru": "хеши сидов закрыты до приёма сидов (места {seats}): все сиды совпадают",
        "en": "seed hashes closed before any seed (seats {seats}): every seed matches",
    },
    "fairness.not_opened": {
        "ru": "карты {card} из раунда нет среди раскрытых вам",
        "en": "{card} of the round is not among the cards opened to you",
    },
    "fairness.an_opened_card": {"ru": "раскрытая карта", "en": "an opened card"},
    "fairness.malformed": {"ru": "опубликованные значения повреждены", "en": "malformed published values"},
    # The first failed check; in English the fairness library's own description of it.
    "mismatch.line": {
        "ru": "{description}{where}{detail} ({kind})",
        "en": "{kind}{where}: {description}{detail}",
    },
    "mismatch.where": {"ru": "на позиции колоды {position}", "en": "at deck position {position}"},
    "mismatch.detail": {
        "ru": "(ожидалось {expected}, найдено {actual})",
        "en": "(expected {expected}, found {actual})",
    },
    "mismatch.COMMITMENT": {
        "ru": "сид не соответствует коммиту",
        "en": "the seed does not match the commitment",
    },
    "mismatch.DEALT_CARD": {
        "ru": "сданная карта не совпадает с колодой",
        "en": "a dealt card is not the deck's",
    },
    "mismatch.DEALT_CARD_INVALID": {"ru": "неверная сданная карта", "en": "a dealt card is not a card"},
    "mismatch.CHAIN_LINK": {
        "ru": "нарушена цепочка раздач стола",
        "en": "the table's chain of hands is broken",
    },
    "mismatch.MALFORMED": {"ru": "опубликованные значения повреждены", "en": "malformed published values"},
    "mismatch.SERVER_SEED_HASH": {
        "ru": "хеш серверного сида не совпадает",
        "en": "the server seed's hash does not match",
    },
    "mismatch.SHOWN_BEFORE_DEAL": {
        "ru": "коммит, показанный до раздачи, не совпадает",
        "en": "the commitment shown before the deal does not match",
    },
    "mismatch.OPENING": {
        "ru": "раскрытие карты не совпадает с коммитом",
        "en": "a card's opening does not match the commitment",
    },
    "mismatch.PERMUTATION": {"ru": "раскрытия не образуют колоду", "en": "the openings do not make a deck"},
    "mismatch.NOT_OPENED": {"ru": "карта не была раскрыта вам", "en": "a card was not opened to you"},
    "mismatch.DUPLICATE_CARD": {"ru": "карта повторяется", "en": "a card appears twice"},
    "mismatch.CLIENT_SEED_HASH": {
        "ru": "раскрытый сид игрока не совпадает с хешем, переданным до раздачи",
        "en": "a player's revealed seed does not match the hash they sent before the deal",
    },
}
