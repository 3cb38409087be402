// The page around the games: its title, the language switch, signing in, messages, the lobby (rooms,
// balances, buying chips), my hands with their balance changes and the fairness check.
import type { Entry } from "./entry";

export const SCREENS = {
  "app.title": { ru: "Покер", en: "Poker" },
  "app.loading": { ru: "загрузка…", en: "loading…" },

  // The language switch: each language named in itself.
  "language.switch": { ru: "Язык", en: "Language" },
  "language.ru": { ru: "RU", en: "RU" },
  "language.en": { ru: "EN", en: "EN" },
  "language.ru_name": { ru: "Русский", en: "Русский" },
  "language.en_name": { ru: "English", en: "English" },

  "message.close": { ru: "Закрыть", en: "Close" },

  // Signing in.
  "sign_in.title": { ru: "Вход", en: "Sign in" },
  "sign_in.button": { ru: "Войти", en: "Sign in" },
  "sign_in.name": { ru: "ваше имя", en: "your name" },
  "sign_in.development": { ru: "Вход для разработки: выберите любое имя.", en: "Development sign-in: pick any name." },
  "sign_in.telegram": {
    ru: "Чтобы войти, откройте эту страницу из бота в Telegram.",
    en: "Open this page from the Telegram bot to sign in.",
  },
  "sign_in.signing_in": { ru: "вход…", en: "signing in…" },
  "sign_out": { ru: "Выйти", en: "Sign out" },

  // The player's name at the tables (the lobby's profile), in the header; tapping it changes it.
  "profile.unknown": { ru: "Ваше имя", en: "Your name" },
  "profile.edit": { ru: "Изменить имя", en: "Change your name" },
  "profile.title": { ru: "Имя за столами", en: "Your name at the tables" },
  "profile.name": { ru: "имя", en: "name" },
  "profile.hint": {
    ru: "От 2 до 24 символов: буквы любого алфавита, цифры, пробелы, точки, дефисы и подчёркивания, хотя бы одна буква. Имена не повторяются; менять имя можно раз в минуту.",
    en: "2 to 24 characters: letters of any alphabet, digits, spaces, dots, dashes and underscores, with at least one letter. No two players share a name; you can change it once a minute.",
  },
  "profile.save": { ru: "Сохранить", en: "Save" },
  "profile.cancel": { ru: "Отмена", en: "Cancel" },
  "profile.saving": { ru: "сохранение…", en: "saving…" },
  "profile.saved": { ru: "Теперь вас зовут {name}. За столом новое имя видно со следующей посадки.", en: "Your name is now {name}. Tables show it from your next seat." },
  // The player's Telegram photo at the tables (on unless they turn it off).
  "profile.show_avatar": { ru: "Показывать моё фото из Telegram за столами", en: "Show my Telegram photo at the tables" },
  "profile.show_avatar_hint": {
    ru: "Без фото за столом видны ваши инициалы. Изменение видно со следующей посадки.",
    en: "Without it, the tables show your initials. Tables follow the change from your next seat.",
  },
  "profile.no_avatar": {
    ru: "Фото появится после входа через Telegram, если оно у вас есть; пока за столом видны ваши инициалы.",
    en: "Your photo comes with a sign-in through Telegram, if you have one; until then the tables show your initials.",
  },

  // The lobby.
  "lobby.title": { ru: "Лобби", en: "Lobby" },
  "lobby.buy_chips": { ru: "Купить фишки", en: "Buy chips" },
  "lobby.my_hands": { ru: "Мои раздачи", en: "My hands" },
  "lobby.loading_rooms": { ru: "загрузка комнат…", en: "loading rooms…" },
  "lobby.balance": { ru: "{pool} {amount}", en: "{pool} {amount}" },
  "lobby.tabs": { ru: "Игры", en: "Games" },
  "lobby.tab.no_limit": { ru: "Безлимит", en: "No-limit" },
  "lobby.tab.fixed_limit": { ru: "Лимит", en: "Fixed-limit" },
  "lobby.tab.house": { ru: "Казино", en: "Casino" },
  "lobby.pool_filter": { ru: "Пул фишек", en: "Chip pool" },
  "lobby.stakes": { ru: "Ставки", en: "Stakes" },
  "lobby.stake": { ru: "{small}/{big}", en: "{small}/{big}" },
  "lobby.play_now": { ru: "Играть сейчас", en: "Play now" },
  "lobby.seating": { ru: "Ищем стол…", en: "Finding a table…" },
  "lobby.no_rooms": { ru: "В этом пуле таких комнат нет.", en: "No such rooms in this pool." },
  "pool.GRAM": { ru: "GRAM", en: "GRAM" },
  "pool.MPX": { ru: "MPX", en: "MPX" },
  "variant.no_limit": { ru: "Безлимитный холдем", en: "No-limit Hold'em" },
  "variant.fixed_limit": { ru: "Лимитный холдем", en: "Fixed-limit Hold'em" },
  "variant.casino_holdem": { ru: "Казино холдем", en: "Casino Hold'em" },
  "variant.russian_poker": { ru: "Русский покер", en: "Russian Poker" },
  "stakes.blinds": { ru: "блайнды {small}/{big}", en: "blinds {small}/{big}" },
  "stakes.limits": { ru: "лимит {small}/{big}", en: "limits {small}/{big}" },
  "stakes.antes": { ru: "анте {min}–{max}", en: "ante {min}–{max}" },
  "room.game": { ru: "{variant} · {stakes}", en: "{variant} · {stakes}" },
  "room.boxes": {
    ru: { one: "{count} бокс", few: "{count} бокса", many: "{count} боксов", other: "{count} бокса" },
    en: { one: "{count} box", other: "{count} boxes" },
  },
  "room.free_seats": {
    ru: {
      one: "{count} свободное место",
      few: "{count} свободных места",
      many: "{count} свободных мест",
      other: "{count} свободного места",
    },
    en: { one: "{count} free seat", other: "{count} free seats" },
  },
  "room.playing": {
    ru: { one: "{count} играет", few: "{count} играют", many: "{count} играют", other: "{count} играют" },
    en: { one: "{count} playing", other: "{count} playing" },
  },
  "room.waiting": {
    ru: { one: "{count} ждёт", few: "{count} ждут", many: "{count} ждут", other: "{count} ждут" },
    en: { one: "{count} waiting", other: "{count} waiting" },
  },
  "room.buy_in": { ru: "бай-ин {min}–{max}", en: "buy-in {min}–{max}" },
  "room.buy_in_fixed": { ru: "бай-ин {amount}", en: "buy-in {amount}" },
  "room.play": { ru: "Играть", en: "Play" },
  "room.sit_down": { ru: "Сесть", en: "Sit down" },
  "room.watch": { ru: "Смотреть", en: "Watch" },
  // The operator's seeded rooms by name (lobby migration 0002), so a list reads in one language; a
  // room the operator adds later keeps the name it was given. Brand names stay as they are.
  "room_name.duel": { ru: "Дуэль {pool}", en: "Duel {pool}" },
  "room_name.brand": { ru: "{name} {pool}", en: "{name} {pool}" },
  "room_name.casino_holdem": { ru: "Казино холдем {pool}", en: "Casino Hold'em {pool}" },
  "room_name.russian_poker": { ru: "Русский покер {pool}", en: "Russian Poker {pool}" },
  "room_name.limit": {
    ru: "Лимит {small}/{big}, {seats} мест, {pool}",
    en: "Limit {small}/{big} {seats}-max {pool}",
  },

  // Buying chips.
  "purchase.title": { ru: "Купить фишки", en: "Buy chips" },
  "purchase.chips": { ru: "сколько фишек", en: "chips" },
  "purchase.buy": { ru: "Купить", en: "Buy" },
  "purchase.option": { ru: "{method} · {pool}", en: "{method} · {pool}" },
  "purchase.development": { ru: "Фишки для разработки, без оплаты", en: "Development chips, no payment" },
  "purchase.stars": { ru: "Telegram Stars", en: "Telegram Stars" },
  "purchase.not_available": { ru: "пока недоступно", en: "not available yet" },
  "purchase.unavailable_note": { ru: " — {why}", en: " - {why}" },
  "purchase.credited": {
    ru: {
      one: "Зачислена {count} фишка",
      few: "Зачислены {count} фишки",
      many: "Зачислено {count} фишек",
      other: "Зачислено {count} фишки",
    },
    en: { one: "{count} chip credited", other: "{count} chips credited" },
  },

  // My hands and balance changes.
  "hands.title": { ru: "Мои раздачи", en: "My hands" },
  "hands.back": { ru: "Лобби", en: "Lobby" },
  "hands.hands": { ru: "Раздачи", en: "Hands" },
  "hands.balance_changes": { ru: "Изменения баланса", en: "Balance changes" },
  "hands.none": { ru: "Раздач пока нет.", en: "No hands yet." },
  "hands.check": { ru: "Проверить честность", en: "Check fairness" },
  "hands.line": { ru: "{time} · {room} · {pool} · ", en: "{time} · {room} · {pool} · " },
  "hands.change": { ru: "{reason} {change} {pool} → {balance}", en: "{reason} {change} {pool} → {balance}" },
  "hands.replay": { ru: "Повтор", en: "Replay" },

  // The hand replayer (replayer.ts): the hand step by step.
  "replay.title": { ru: "Повтор раздачи", en: "Hand replay" },
  "replay.close": { ru: "К моим раздачам", en: "Back to my hands" },
  "replay.first": { ru: "В начало", en: "First step" },
  "replay.previous": { ru: "Шаг назад", en: "Previous step" },
  "replay.next": { ru: "Шаг вперёд", en: "Next step" },
  "replay.last": { ru: "В конец", en: "Last step" },
  "replay.play": { ru: "Воспроизвести", en: "Play" },
  "replay.pause": { ru: "Пауза", en: "Pause" },
  "replay.step": { ru: "Шаг {step} из {steps}", en: "Step {step} of {steps}" },
  "replay.net": { ru: "итог {net}", en: "net {net}" },
  "replay.dealt": { ru: "Карты сданы", en: "The cards are dealt" },
  "replay.post_small.you": { ru: "Вы: малый блайнд {amount}", en: "You post the small blind {amount}" },
  "replay.post_small": { ru: "{who}: малый блайнд {amount}", en: "{who} posts the small blind {amount}" },
  "replay.post_big.you": { ru: "Вы: большой блайнд {amount}", en: "You post the big blind {amount}" },
  "replay.post_big": { ru: "{who}: большой блайнд {amount}", en: "{who} posts the big blind {amount}" },
  "replay.post_extra_big.you": { ru: "Вы: дополнительный большой блайнд {amount}", en: "You post an extra big blind {amount}" },
  "replay.post_extra_big": { ru: "{who}: дополнительный большой блайнд {amount}", en: "{who} posts an extra big blind {amount}" },
  "replay.post_dead_small.you": { ru: "Вы: мёртвый малый блайнд {amount}", en: "You post a dead small blind {amount}" },
  "replay.post_dead_small": { ru: "{who}: мёртвый малый блайнд {amount}", en: "{who} posts a dead small blind {amount}" },
  "replay.all_in_call": { ru: "{line}, олл-ин", en: "{line}, all-in" },
  "replay.left_table": { ru: "{line} (ушёл из-за стола)", en: "{line} (left the table)" },
  "replay.flop": { ru: "Флоп: {cards}", en: "Flop: {cards}" },
  "replay.turn": { ru: "Тёрн: {cards}", en: "Turn: {cards}" },
  "replay.river": { ru: "Ривер: {cards}", en: "River: {cards}" },
  "replay.uncalled.you": { ru: "Вам возвращено {amount} (неуравненная ставка)", en: "You get back the uncalled {amount}" },
  "replay.uncalled": { ru: "{who}: возвращено {amount} (неуравненная ставка)", en: "{who} gets back the uncalled {amount}" },
  "replay.muck.you": { ru: "Вы сбрасываете карты без показа", en: "You muck" },
  "replay.muck": { ru: "{who} сбрасывает карты без показа", en: "{who} mucks" },
  "replay.voided": { ru: "Раздача отменена: все фишки вернулись игрокам", en: "The hand was voided: every chip went back" },
  "replay.rake": { ru: "Рейк {amount}", en: "Rake {amount}" },
  "change.PURCHASE": { ru: "покупка", en: "purchase" },
  "change.WITHDRAWAL": { ru: "вывод", en: "withdrawal" },
  "change.BUY_IN": { ru: "бай-ин", en: "buy-in" },
  "change.CASH_OUT": { ru: "кэш-аут", en: "cash-out" },
  "change.HAND_RESULT": { ru: "итог раздачи", en: "hand result" },
  "change.RAKE": { ru: "рейк", en: "rake" },
  "change.HOUSE_GAME_RESULT": { ru: "игра против дилера", en: "house game" },
  "change.ADJUSTMENT": { ru: "корректировка", en: "adjustment" },
  "change.other": { ru: "прочее", en: "other" },

  // The fairness check, done in the page.
  "fairness.checking": { ru: "проверка…", en: "checking…" },
  "fairness.fair_v3": {
    ru: {
      one: "Честно: {count} карта, которую вы видели, была определена до раздачи (честность v3: каждая вскрыта по коммиту, показанному до раздачи).",
      few: "Честно: {count} карты, которые вы видели, были определены до раздачи (честность v3: каждая вскрыта по коммиту, показанному до раздачи).",
      many: "Честно: {count} карт, которые вы видели, были определены до раздачи (честность v3: каждая вскрыта по коммиту, показанному до раздачи).",
      other: "Честно: {count} карты, которые вы видели, были определены до раздачи (честность v3: каждая вскрыта по коммиту, показанному до раздачи).",
    },
    en: {
      one: "Fair: the {count} card you saw was fixed before the deal (fairness v3: each opened against the commitment shown before the deal).",
      other: "Fair: the {count} cards you saw were fixed before the deal (fairness v3: each opened against the commitment shown before the deal).",
    },
  },
  "fairness.fair_seed": {
    ru: {
      one: "Честно: раскрытый сид даёт коммит, показанный до раздачи, и {count} карту, которую вы видели (перемешивание v{version}).",
      few: "Честно: раскрытый сид даёт коммит, показанный до раздачи, и {count} карты, которые вы видели (перемешивание v{version}).",
      many: "Честно: раскрытый сид даёт коммит, показанный до раздачи, и {count} карт, которые вы видели (перемешивание v{version}).",
      other: "Честно: раскрытый сид даёт коммит, показанный до раздачи, и {count} карты, которые вы видели (перемешивание v{version}).",
    },
    en: {
      one: "Fair: the revealed seed gives the commitment shown before the deal, and the {count} card you saw (shuffle v{version}).",
      other: "Fair: the revealed seed gives the commitment shown before the deal, and the {count} cards you saw (shuffle v{version}).",
    },
  },
  "fairness.not_verified": { ru: "НЕ проверено: {problems}", en: "NOT verified: {problems}" },
  "fairness.nothing_checked": {
    ru: "НЕ проверено: ни одну из карт, которые вы видели, здесь проверить нельзя",
    en: "NOT verified: no card you saw could be checked here",
  },
  "fairness.problem_separator": { ru: "; ", en: "; " },
  "fairness.own_seed_missing": {
    ru: "вашего сида НЕТ в перемешивании в том виде, в каком вы его отправили",
    en: "your seed is NOT in the shuffle as you sent it",
  },
  "fairness.commitment_mismatch": {
    ru: "раскрытые значения не дают опубликованный коммит",
    en: "the revealed values do not give the published commitment",
  },
  "fairness.commitment_not_shown": {
    ru: "коммит, показанный до раздачи, не совпадает с раскрытым",
    en: "the commitment shown before the deal is not the one revealed",
  },
  "fairness.seed_hash_mismatch": {
    ru: "сид не совпадает со своим опубликованным хешем",
    en: "the seed does not match its published hash",
  },
  "fairness.card_not_dealt": {
    ru: "карта на позиции колоды {position} не та, что была сдана",
    en: "the card at deck position {position} is not the one dealt",
  },
  "fairness.seat_seed_empty": { ru: "сид места {seat} пуст", en: "the seed at seat {seat} is empty" },
  "fairness.seat_seed_without_hash": {
    ru: "сид места {seat} пришёл без хеша, записанного для этого места",
    en: "the seed at seat {seat} comes without the hash its seat recorded",
  },
  "fairness.seat_seed_hash_mismatch": {
    ru: "сид места {seat} не даёт хеш, записанный для этого места до запечатывания",
    en: "the seed at seat {seat} does not give the hash its seat recorded before the seal",
  },
  "fairness.opening_position": {
    ru: "сиды не сдают позицию {deal} из закоммиченной позиции {committed}",
    en: "the seeds do not deal position {deal} from committed position {committed}",
  },
  "fairness.opening_root": {
    ru: "вскрытие позиции {deal} не ведёт к закоммиченному корню",
    en: "the opening of deal position {deal} does not lead to the committed root",
  },
  "fairness.opening_twice": {
    ru: "два вскрытия показывают одну и ту же карту",
    en: "two openings show the same card",
  },
  "fairness.position_not_opened": {
    ru: "позиция колоды {position} вам не вскрыта",
    en: "deck position {position} was not opened to you",
  },
  "fairness.card_not_committed": {
    ru: "карта на позиции колоды {position} не та, что была закоммичена",
    en: "the card at deck position {position} is not the one committed",
  },
  "fairness.seed_not_in_set": {
    ru: "сида места {seat} не было в наборе хешей, закрытом до приёма сидов",
    en: "the seed at seat {seat} was not in the hash set closed before the seeds",
  },
  "fairness.seed_not_its_hash": {
    ru: "сид места {seat} не совпадает со своим хешем, показанным до приёма сидов",
    en: "the seed at seat {seat} does not match its hash shown before the seeds",
  },
  "fairness.version_unknown": {
    ru: "перемешивание версии {version} эта страница пока не проверяет",
    en: "shuffle version {version} is not checked by this page yet",
  },
  "fairness.house_card_not_opened": {
    ru: "{card} из этого раунда нет среди карт, вскрытых вам",
    en: "{card} of the round is not among the cards opened to you",
  },
} satisfies Record<string, Entry>;
