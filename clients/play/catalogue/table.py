"""The table: its state, the seats, pots and turn, the actions (buttons and the log's words), the
last hand's result, the log's lines and the table's notices, the link, chat and the client seed."""

from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
    # Where the table is.
    "phase.waiting": {"ru": "ожидание игроков", "en": "waiting for players"},
    "phase.between_hands": {"ru": "скоро следующая раздача", "en": "next hand starting"},
    "phase.in_progress": {"ru": "идёт раздача", "en": "hand in progress"},
    "phase.paused": {"ru": "пауза", "en": "paused"},
    "phase.connecting": {"ru": "подключение", "en": "connecting"},
    "street.preflop": {"ru": "префлоп", "en": "preflop"},
    "street.flop": {"ru": "флоп", "en": "flop"},
    "street.turn": {"ru": "тёрн", "en": "turn"},
    "street.river": {"ru": "ривер", "en": "river"},
    "street.showdown": {"ru": "вскрытие", "en": "showdown"},
    # The action buttons (what to do) ...
    "action.fold": {"ru": "Фолд", "en": "fold"},
    "action.check": {"ru": "Чек", "en": "check"},
    "action.call": {"ru": "Колл", "en": "call"},
    "action.bet": {"ru": "Бет", "en": "bet"},
    "action.raise": {"ru": "Рейз до", "en": "raise to"},
    "action.all_in": {"ru": "Олл-ин", "en": "all-in"},
    "action.call_amount": {"ru": "Колл {amount}", "en": "call {amount}"},
    "action.all_in_amount": {"ru": "Олл-ин {amount}", "en": "all-in {amount}"},
    # ... and the log's words (what a player did).
    "did.fold": {"ru": "фолд", "en": "folds"},
    "did.check": {"ru": "чек", "en": "checks"},
    "did.call": {"ru": "колл", "en": "calls"},
    "did.bet": {"ru": "бет", "en": "bets"},
    "did.raise": {"ru": "рейз до", "en": "raises to"},
    "did.all_in": {"ru": "олл-ин", "en": "goes all-in"},
    "did.all_in_to": {"ru": "олл-ин до", "en": "all-in to"},
    "did.other": {"ru": "ход", "en": "acts"},
    "log.action_to": {"ru": "{who}: {word} {to}{added}{timed}", "en": "{who} {word} {to}{added}{timed}"},
    "log.action": {"ru": "{who}: {word}{amount}{timed}", "en": "{who} {word}{amount}{timed}"},
    "log.time_ran_out": {"ru": "(время вышло)", "en": "(time ran out)"},
    "log.shows": {"ru": "{who} показывает {cards}", "en": "{who} shows {cards}"},
    "log.dealt": {"ru": "{who} получает {cards}", "en": "{who} is dealt {cards}"},
    "log.board": {"ru": "борд: {cards}", "en": "board: {cards}"},
    "log.sticker": {"ru": "{who} отправляет {sticker}", "en": "{who} sent {sticker}"},
    "chat.someone": {"ru": "игрок", "en": "a player"},
    "sticker.gg": {"ru": "🤝 gg", "en": "🤝 gg"},
    "sticker.nice-hand": {"ru": "👏 хорошая рука", "en": "👏 nice hand"},
    "sticker.thinking": {"ru": "🤔 думаю", "en": "🤔 thinking"},
    "sticker.lol": {"ru": "😂 лол", "en": "😂 lol"},
    # The seats.
    "seat.name": {"ru": "место {seat}", "en": "seat {seat}"},
    "seat.you": {"ru": "(вы)", "en": "(you)"},
    "seat.empty": {"ru": "(свободно)", "en": "(empty)"},
    "seat.line": {
        "ru": "{marker} {seat}  {name} стек {stack}",
        "en": "{marker} {seat}  {name} stack {stack}",
    },
    "seat.bet": {"ru": "ставка {amount}", "en": "bet {amount}"},
    "seat.button": {"ru": "баттон", "en": "button"},
    "seat.folded": {"ru": "фолд", "en": "folded"},
    "seat.all_in": {"ru": "олл-ин", "en": "all-in"},
    "seat.sitting_out": {"ru": "пропускает раздачи", "en": "sitting out"},
    "seat.waiting": {"ru": "ожидает", "en": "waiting"},
    "seat.disconnected": {"ru": "не на связи", "en": "disconnected"},
    "seat_state.sitting_out": {
        "ru": "вы пропускаете раздачи: новых раздач не будет, пока не вернётесь (текущая доигрывается) "
        "- s: вернуться",
        "en": "you are sitting out: no new hand until you sit in (one you are in plays on) - s: sit in",
    },
    "seat_state.away": {
        "ru": "вы не на связи (место сохраняется на время)",
        "en": "you are away (the seat is kept for a while)",
    },
    "seat_state.in": {
        "ru": "вы в игре: вам сдаётся каждая раздача - s: пропускать",
        "en": "you are in: dealt into every hand - s: sit out",
    },
    # Board and pots.
    "board.none": {"ru": "(борда ещё нет)", "en": "(no board yet)"},
    "board.line": {"ru": "борд: {board}    {pots}", "en": "board: {board}    {pots}"},
    "pot.single": {"ru": "банк", "en": "pot"},
    "pot.main": {"ru": "основной банк", "en": "main pot"},
    "pot.side": {"ru": "побочный банк", "en": "side pot"},
    "pot.side_numbered": {"ru": "побочный банк {number}", "en": "side pot {number}"},
    "pot.seats": {"ru": "(места {seats})", "en": "(seats {seats})"},
    # The status lines.
    "table.hand": {"ru": "раздача {hand}", "en": "hand {hand}"},
    "table.spectating": {
        "ru": "ПРОСМОТР: вы видите стол с задержкой {lag} (около 20 с, правила 14); закрытых карт не видно",
        "en": "SPECTATING: you see the table {lag} late (about 20 s, rules 14); no hidden card",
    },
    "table.lag_seconds": {"ru": "{seconds} с", "en": "{seconds} s"},
    "table.lag_about": {"ru": "около 20 с", "en": "about 20 s"},
    "table.commitment": {"ru": "коммит: {commitment}", "en": "commitment: {commitment}"},
    "table.commitment_pending": {
        "ru": "коммит: (ещё не опубликован)",
        "en": "commitment: (not yet published)",
    },
    "turn.mine": {
        "ru": "ВАШ ХОД - осталось {left} с (включая банк времени {bank} с)",
        "en": "YOUR TURN - {left}s left (time bank {bank}s included)",
    },
    "turn.other_clock": {
        "ru": "ходит место {seat} ({name}) - осталось {left} с (банк времени {bank} с)",
        "en": "seat {seat} ({name}) to act - {left}s left (time bank {bank}s)",
    },
    "turn.other": {
        "ru": "ходит место {seat} ({name}) - банк времени {bank} с",
        "en": "seat {seat} ({name}) to act - time bank {bank}s",
    },
    # The last hand: each player's net, then each pot and who won it with what.
    "result.you": {"ru": "вы", "en": "you"},
    "awards.won_by": {"ru": "победитель - {who}", "en": "won by {who}"},
    "awards.split": {"ru": "делёж: {shares}", "en": "split: {shares}"},
    "awards.pot": {"ru": "{pot} {amount}: {winners}", "en": "{pot} {amount} {winners}"},
    "awards.pot_with": {
        "ru": "{pot} {amount}: {winners}, комбинация: {hand}",
        "en": "{pot} {amount} {winners} with {hand}",
    },
    "awards.last": {"ru": "прошлая раздача - {pots}", "en": "last hand - {pots}"},
    "awards.last_nets": {"ru": "прошлая раздача - {nets}; {pots}", "en": "last hand - {nets} - {pots}"},
    # A typed bet or raise.
    "amount.rule": {"ru": "от {low} до {high}", "en": "{low} to {high}"},
    "amount.rule_step": {
        "ru": "от {low} до {high} с шагом {step}",
        "en": "{low} to {high} in steps of {step}",
    },
    "amount.whole": {"ru": "введите целое число фишек: {rule}", "en": "type a whole number of chips: {rule}"},
    "amount.range": {"ru": "сумма должна быть {rule}", "en": "the amount must be {rule}"},
    # The table screen.
    "table.key_leave": {"ru": "Уйти / назад", "en": "Leave / back"},
    "table.key_sit_out": {"ru": "Пропуск / в игру", "en": "Sit out / in"},
    "table.amount_placeholder": {"ru": "сумма", "en": "amount"},
    "table.half_pot": {"ru": "½ банка", "en": "½ pot"},
    "table.pot": {"ru": "банк", "en": "pot"},
    "table.max": {"ru": "макс.", "en": "max"},
    "table.chat_placeholder": {"ru": "чат (Enter шлёт)", "en": "chat (Enter sends)"},
    "table.seed_placeholder": {"ru": "мой клиентский сид", "en": "my client seed"},
    "table.use_seed": {"ru": "Мой сид - в каждую раздачу", "en": "Use my seed for every hand"},
    "table.leave": {"ru": "Встать из-за стола", "en": "Leave table"},
    "table.sit_out": {"ru": "Пропускать (s)", "en": "Sit out (s)"},
    "table.sit_in": {"ru": "Вернуться (s)", "en": "Sit in (s)"},
    "table.spectating_unsupported": {
        "ru": "Просмотр в роли зрителя (публичный вид с задержкой около 20 секунд) эта версия стола пока "
        "не поддерживает: {reason}. Лучше ничего не показывать, чем выдуманный стол.",
        "en": "Watching as a spectator (the public view, about 20 seconds late) is not served by this "
        "table release yet: {reason}. Nothing is shown rather than a made-up table.",
    },
    "table.history_result": {
        "ru": "· раздача {hand}, итог по истории: {results}",
        "en": "· hand {hand} result, as history has it: {results}",
    },
    "table.action_closed": {
        "ru": "это действие вам сейчас недоступно",
        "en": "that action is not open to you now",
    },
    "table.refused": {"ru": "стол отклонил: {error}", "en": "the table refused: {error}"},
    "table.chat_refused": {"ru": "сообщение отклонено: {error}", "en": "chat refused: {error}"},
    "table.sit_in_failed": {"ru": "вернуться в игру: {error}", "en": "sit in: {error}"},
    "table.sit_out_failed": {"ru": "пропускать раздачи: {error}", "en": "sit out: {error}"},
    "table.leave_failed": {"ru": "не удалось встать из-за стола: {error}", "en": "cannot leave: {error}"},
    "table.folded_out": {
        "ru": "ваши карты сброшены; стек будет выведен, когда раздача будет рассчитана",
        "en": "folded out of the hand; the stack is cashed out once it settles",
    },
    "table.cashed_out": {"ru": "выведено со стола: {amount}", "en": "cashed out {amount}"},
    # The client seed at the table (docs/fairness.md).
    "seed.invalid": {
        "ru": "клиентский сид - от 1 до 64 печатных символов без пробелов",
        "en": "a client seed is 1 to 64 printable characters, no spaces",
    },
    "seed.set": {
        "ru": "ваш клиентский сид пойдёт в каждую раздачу, начиная со следующего коммита: {seed} "
        "(версия 3: в каждой раздаче новый сид, начинающийся с него, сначала его хеш)",
        "en": "your client seed goes into every hand from the next commitment on: {seed} "
        "(version 3: a fresh seed starting with it each hand, its hash first)",
    },
    "seed.not_in_set": {
        "ru": "· хеша вашего сида НЕТ в закрытом наборе раздачи {hand}",
        "en": "· your seed hash is NOT in the closed set of hand {hand}",
    },
    "seed.missed": {
        "ru": "· ваш сид не попал в раздачу {hand} ({why})",
        "en": "· your seed missed hand {hand} ({why})",
    },
    "seed.hash_recorded": {
        "ru": "· хеш вашего сида записан для раздачи {hand}",
        "en": "· your seed hash is recorded for hand {hand}",
    },
    "seed.taken": {"ru": "· ваш сид идёт в раздачу {hand}", "en": "· your seed goes into hand {hand}"},
    "verify.verdict": {"ru": "· раздача {hand}: {verdict}", "en": "· hand {hand}: {verdict}"},
    "verify.not_yet": {
        "ru": "· раздача {hand} ещё не проверена ({why}): см. «Мои раздачи»",
        "en": "· hand {hand} not verified yet ({why}): see My hands",
    },
    # The link to the table.
    "link.connecting": {"ru": "подключение…", "en": "connecting…"},
    "link.connected": {"ru": "подключено", "en": "connected"},
    "link.reconnected": {
        "ru": "соединение восстановлено - ваше место сохранено",
        "en": "reconnected - your seat was kept",
    },
    "link.reconnecting": {
        "ru": "связь потеряна ({reason}); переподключение (попытка {attempt})…",
        "en": "connection lost ({reason}); reconnecting (attempt {attempt})…",
    },
    "link.unsupported": {
        "ru": "эта версия пока не поддерживает ({reason})",
        "en": "not served by this release yet ({reason})",
    },
    "link.failed": {
        "ru": "стол отказал в потоке ({reason})",
        "en": "the table refused the stream ({reason})",
    },
    "link.stream_closed": {"ru": "стол закрыл поток", "en": "the table closed the stream"},
    # The table's notices (the services write them in English; clients/play/notices.py reads them).
    "notice.table_open": {"ru": "стол открыт", "en": "the table is open"},
    "notice.hand_started": {"ru": "раздача {hand} началась", "en": "hand {hand} started"},
    "notice.hand_continued": {
        "ru": "раздача {hand} продолжается с того же места",
        "en": "hand {hand} goes on where it was",
    },
    "notice.hand_committed": {
        "ru": "следующая раздача {hand}: коммит опубликован",
        "en": "next hand {hand} committed",
    },
    "notice.seed_hashes_closed": {
        "ru": "приём хешей клиентских сидов раздачи {hand} закрыт (места: {seats}); отправляйте сиды",
        "en": "client-seed hashes of hand {hand} closed (seats: {seats}); send your seeds",
    },
    "notice.table_moving": {
        "ru": "стол переезжает на другой сервер; ваше место сохраняется",
        "en": "the table moves to another server; your seat is kept",
    },
    "notice.table_paused": {
        "ru": "ждём, пока касса рассчитает раздачу",
        "en": "waiting for the cashier to settle the hand",
    },
    "notice.hand_settled": {"ru": "раздача {hand} рассчитана", "en": "hand {hand} settled"},
    "notice.blind_posted": {"ru": "ставит {post} {amount}", "en": "posts {post} {amount}"},
    "notice.post_small_blind": {"ru": "малый блайнд", "en": "small blind"},
    "notice.post_big_blind": {"ru": "большой блайнд", "en": "big blind"},
    "notice.post_extra_big_blind": {"ru": "дополнительный большой блайнд", "en": "extra big blind"},
    "notice.post_dead_small_blind": {"ru": "мёртвый малый блайнд", "en": "dead small blind"},
    "notice.uncalled_returned": {
        "ru": "возвращено {amount} (неуравненная ставка)",
        "en": "{amount} returned",
    },
    "notice.mucked": {"ru": "карты сброшены без показа", "en": "mucked"},
    "notice.hand_ended": {"ru": "раздача окончена, рейк {rake}", "en": "hand ended, rake {rake}"},
    "notice.sat_down": {"ru": "{player} садится на место {seat}", "en": "{player} sat at seat {seat}"},
    "notice.left": {"ru": "{player} освобождает место {seat}", "en": "{player} left seat {seat}"},
    "notice.sat_in": {"ru": "{player} возвращается в игру", "en": "{player} sits in"},
    "notice.sat_out": {"ru": "{player} пропускает раздачи", "en": "{player} sits out"},
    "notice.timed_out": {
        "ru": "{player} пропускает раздачи: время хода вышло в раздачах подряд: {hands}",
        "en": "{player} timed out {hands} hands in a row",
    },
    "notice.back": {"ru": "{player} снова на связи", "en": "{player} is back"},
    "notice.away": {
        "ru": "{player} не на связи; место сохраняется {seconds} с",
        "en": "{player} is away; the seat is kept {seconds} s",
    },
    "notice.removed": {
        "ru": "{player}: место за столом освобождено",
        "en": "{player} is removed from the table",
    },
    "notice.round_started": {"ru": "раунд {round} сдан", "en": "round {round} dealt"},
    "notice.round_resumed": {"ru": "раунд {round} возобновлён", "en": "round {round} resumed"},
    "notice.round_settled": {"ru": "раунд {round} рассчитан", "en": "round {round} settled"},
    "notice.round_committed": {
        "ru": "следующий раунд {round}: коммит опубликован",
        "en": "next round {round} committed",
    },
    "notice.house_decision": {"ru": "бокс {box}: {decision}", "en": "box {box}: {decision}"},
}
