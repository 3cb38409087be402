// A house game against the dealer (Casino Hold'em, Russian Poker): the screen, the decisions, and the
// round's stable codes (phases, box states, settlement items, outcomes and reasons) in words, so no
// screen shows an enum name such as DEALER_DOES_NOT_QUALIFY.
import type { Entry } from "./entry";

export const HOUSE = {
  "house.leave": { ru: "Уйти", en: "Leave" },
  "house.limits": {
    ru: "Анте {min}–{max} · наибольший выигрыш бокса {payout} · джекпот {jackpot}",
    en: "Ante {min}–{max} · the most one box wins {payout} · jackpot {jackpot}",
  },
  "house.paused": { ru: "Новые раунды приостановлены: {why}.", en: "New rounds are paused ({why})." },
  "house.dealer": { ru: "Дилер", en: "Dealer" },
  "house.board": { ru: "Борд", en: "Board" },
  "house.box": { ru: "Бокс {box} · анте {ante} · {status}", en: "Box {box} · ante {ante} · {status}" },
  "house.decision_cost": { ru: "{decision} ({cost})", en: "{decision} ({cost})" },
  "house.settlement": { ru: "{item}: {outcome} {change} · {why}", en: "{item} {outcome} {change} · {why}" },
  "house.round_figures": {
    ru: "поставлено {staked} · выплачено {paid} · {phase}",
    en: "staked {staked} · paid out {paid} · {phase}",
  },
  "house.ante": { ru: "Анте", en: "Ante" },
  "house.ante_label": { ru: "анте", en: "ante" },
  "house.dark_box": { ru: "тёмный бокс", en: "dark box" },
  "house.deal": { ru: "Сдать", en: "Deal" },
  "house.next_round": { ru: "Следующий раунд", en: "Next round" },
  "house.dark_box_hint": {
    ru: "Анте и ставка (два анте) ставятся до раздачи, вслепую; решений по тёмному боксу нет.",
    en: "The ante and the bet (two antes) go in before the deal, blind; a dark box takes no decisions.",
  },
  // Where the round is, as a sentence.
  "house.phase.place_ante": { ru: "Поставьте анте и нажмите «Сдать».", en: "Put an ante on the box and press Deal." },
  "house.phase.casino_decisions": {
    ru: "Ваш ход: «Колл» — ставка в два анте, или «Фолд» — анте проиграно.",
    en: "Your move: Call (a bet of two antes) or Fold (the ante is lost).",
  },
  "house.phase.russian_decisions": {
    ru: "Ваш ход: «Колл» или «Фолд». Перед этим можно один раз обменять карты или купить шестую.",
    en: "Your move: Call or Fold. Before that you may once exchange cards or buy a sixth card.",
  },
  "house.phase.no_game": {
    ru: "У дилера нет игры: заберите анте (1:1) или купите игру за одно анте.",
    en: "The dealer has no game: take the ante (paid 1:1) or buy a game for one ante.",
  },
  "house.phase.complete": { ru: "Раунд окончен, итог: {change}.", en: "Round over, result: {change}." },
  "house.phase.other": { ru: "Раунд: {phase}.", en: "Round: {phase}." },
  // Russian Poker's exchange: the cards first, then the button.
  "house.exchange_step": {
    ru: "Обмен в два шага: 1) нажмите на карты, которые хотите сменить; 2) нажмите «Обменять». Плата — {fee}, один раз за раунд.",
    en: "Exchange in two steps: 1) tap the cards you want to replace; 2) press Exchange. The fee is {fee}, once a round.",
  },
  "house.exchange_pick_first": { ru: "Обмен: сначала выберите карты", en: "Exchange: pick cards first" },
  "house.exchange_picked": {
    ru: {
      one: "Обменять {count} карту ({cost})",
      few: "Обменять {count} карты ({cost})",
      many: "Обменять {count} карт ({cost})",
      other: "Обменять {count} карты ({cost})",
    },
    en: { one: "Exchange {count} card ({cost})", other: "Exchange {count} cards ({cost})" },
  },
  // The rules and pay tables sheet.
  "house.rules_button": { ru: "Правила и выплаты", en: "Rules and pay table" },
  "house.rules_title_casino": { ru: "Казино холдем: правила и выплаты", en: "Casino Hold'em: rules and pay table" },
  "house.rules_title_russian": { ru: "Русский покер: правила и выплаты", en: "Russian Poker: rules and pay table" },
  "house.rules.casino.deal": {
    ru: "Поставьте анте и нажмите «Сдать»: вам и дилеру по две карты, на стол — три общие карты (флоп).",
    en: "Put an ante on the box and press Deal: two cards to you and to the dealer, three shared cards on the board (the flop).",
  },
  "house.rules.casino.decide": {
    ru: "Решите: «Колл» — ставка в два анте, или «Фолд» — анте проиграно.",
    en: "Decide: Call adds a bet of two antes; Fold gives up the ante.",
  },
  "house.rules.casino.showdown": {
    ru: "Затем открываются ещё две общие карты и карты дилера; играют лучшие пять из семи карт.",
    en: "Then two more shared cards and the dealer's cards are shown; the best five of seven cards count.",
  },
  "house.rules.casino.dealer": {
    ru: "Дилер играет с парой четвёрок и выше. Не играет: анте оплачивается по таблице, ставка возвращается. Играет: ваша комбинация старше — анте по таблице и ставка 1:1; равны — всё возвращается; старше у дилера — анте и ставка проиграны.",
    en: "The dealer qualifies with a pair of fours or better. If not, the ante pays by the table and the bet is returned. If so: your hand higher, the ante pays by the table and the bet 1:1; equal, both are returned; the dealer's higher, both are lost.",
  },
  "house.rules.russian.deal": {
    ru: "Поставьте анте и нажмите «Сдать»: пять карт вам и пять дилеру, одна карта дилера открыта.",
    en: "Put an ante on the box and press Deal: five cards to you and five to the dealer, one of the dealer's face up.",
  },
  "house.rules.russian.exchange": {
    ru: "Обмен — в два шага: сначала нажмите на карты, которые хотите сменить (они отмечаются), затем «Обменять». Обмен стоит одно анте и бывает один раз; вместо него можно купить шестую карту за анте.",
    en: "Exchanging takes two steps: first tap the cards you want to replace (they are marked), then press Exchange. It costs one ante, once; instead you may buy a sixth card for one ante.",
  },
  "house.rules.russian.decide": {
    ru: "Затем «Колл» — ставка в два анте, или «Фолд» — анте проиграно. С тройкой и выше можно застраховать бокс.",
    en: "Then Call (a bet of two antes) or Fold (the ante is lost). With three of a kind or better you may insure the box.",
  },
  "house.rules.russian.dealer": {
    ru: "У дилера игра — от туза-короля. Нет игры: заберите анте (1:1) или купите игру за анте. Ваша комбинация старше — ставка оплачивается по таблице, анте возвращается; старше у дилера — анте и ставка проиграны.",
    en: "The dealer has a game with ace-king or better. No game: take the ante (paid 1:1) or buy a game for one ante. Your hand higher: the bet pays by the table and the ante is returned; the dealer's higher: both are lost.",
  },
  "house.rules.russian.dark": {
    ru: "Тёмный бокс: анте и ставка ставятся до раздачи, вслепую, без обмена и других решений.",
    en: "A dark box: the ante and the bet go in before the deal, blind, with no exchange or other decision.",
  },
  "house.rules.max_payout": { ru: "Наибольший выигрыш одного бокса за раунд — {payout}.", en: "One box wins at most {payout} a round." },
  "house.pay_table_ante": { ru: "Выплаты на анте", en: "The ante pays" },
  "house.pay_table_bet": { ru: "Выплаты на ставку", en: "The bet pays" },
  "house.pay_table_bonus": { ru: "Бонус (на пять сданных карт)", en: "Bonus (on the five cards dealt)" },
  "house.combination": { ru: "Комбинация", en: "Hand" },
  "house.pays": { ru: "Выплата", en: "Pays" },
  "house.odds": { ru: "{odds}:1", en: "{odds}:1" },
  "house.bet_pays": { ru: "Ставка (колл) оплачивается {odds}:1.", en: "The bet (the call) pays {odds}:1." },
  "house.jackpot_share": { ru: "{combination}: {percent}% джекпота", en: "{combination}: {percent}% of the jackpot" },
  "house.exchange_hint": {
    ru: "Для обмена отметьте карты бокса (нажмите на них), затем «Обмен».",
    en: "To exchange, pick the box's cards (tap them), then Exchange.",
  },

  // The decisions on the buttons.
  "decision.CALL": { ru: "Колл", en: "Call" },
  "decision.FOLD": { ru: "Фолд", en: "Fold" },
  "decision.EXCHANGE": { ru: "Обмен", en: "Exchange" },
  "decision.BUY_SIXTH_CARD": { ru: "Купить 6-ю карту", en: "Buy 6th card" },
  "decision.INSURE": { ru: "Страховка", en: "Insure" },
  "decision.BUY_GAME": { ru: "Купить игру", en: "Buy a game" },
  "decision.TAKE_ANTE": { ru: "Забрать анте", en: "Take ante" },
  "decision.other": { ru: "Решение", en: "Decide" },

  // The round's codes. Where the round is ...
  "code.DECISIONS": { ru: "ваше решение", en: "your decision" },
  "code.NO_GAME_CHOICES": {
    ru: "у дилера нет игры: заберите анте или купите игру",
    en: "the dealer has no game: take the ante or buy a game",
  },
  "code.STAKING": { ru: "ставки принимаются", en: "staking" },
  "code.DEALING": { ru: "раздача карт", en: "dealing" },
  "code.RESUMING": { ru: "восстановление", en: "resuming" },
  "code.PLAYING": { ru: "идёт игра", en: "playing" },
  "code.SETTLING": { ru: "расчёт", en: "settling" },
  "code.COMPLETE": { ru: "рассчитан", en: "settled" },
  "code.SETTLED": { ru: "рассчитан", en: "settled" },
  "code.REFUNDING": { ru: "возврат ставок", en: "refunding" },
  "code.VOIDING": { ru: "отмена", en: "voiding" },
  "code.VOIDED": { ru: "отменён", en: "voided" },
  "code.REFUSED": { ru: "ставки отклонены", en: "refused" },
  // ... what a box did ...
  "code.WAITING": { ru: "ждёт решения", en: "waiting" },
  "code.CALLED": { ru: "играет", en: "played" },
  "code.FOLDED": { ru: "сброшен", en: "folded" },
  "code.DARK": { ru: "тёмный бокс", en: "dark box" },
  // ... what a settlement line is for, how it came out and why ...
  "code.ANTE": { ru: "анте", en: "ante" },
  "code.BET": { ru: "ставка", en: "bet" },
  "code.EXCHANGE_FEE": { ru: "плата за обмен", en: "exchange fee" },
  "code.SIXTH_CARD_FEE": { ru: "плата за шестую карту", en: "sixth card fee" },
  "code.BUY_GAME_FEE": { ru: "плата за покупку игры", en: "buy-a-game fee" },
  "code.BONUS": { ru: "бонус", en: "bonus" },
  "code.JACKPOT": { ru: "джекпот", en: "jackpot" },
  "code.JACKPOT_CONTRIBUTION": { ru: "взнос в джекпот", en: "jackpot contribution" },
  "code.INSURANCE": { ru: "страховка", en: "insurance" },
  "code.SECOND_COMBINATION": { ru: "вторая комбинация", en: "second combination" },
  "code.WON": { ru: "выигрыш", en: "won" },
  "code.LOST": { ru: "проигрыш", en: "lost" },
  "code.RETURNED": { ru: "возврат", en: "returned" },
  "code.DEALER_DOES_NOT_QUALIFY": { ru: "у дилера нет квалификации", en: "dealer does not qualify" },
  "code.DEALER_NO_GAME": { ru: "у дилера нет игры", en: "dealer has no game" },
  "code.DEALER_STILL_NO_GAME": { ru: "у дилера по-прежнему нет игры", en: "dealer still has no game" },
  "code.DEALER_HIGHER": { ru: "комбинация дилера старше", en: "dealer's hand higher" },
  "code.PLAYER_HIGHER": { ru: "ваша комбинация старше", en: "your hand higher" },
  "code.TIE": { ru: "ничья", en: "tie" },
  "code.DEALER_GAME_LOWER": { ru: "игра дилера младше", en: "dealer's game lower" },
  "code.DEALER_EQUAL_OR_HIGHER": { ru: "игра дилера не младше", en: "dealer's game equal or higher" },
  "code.ANTE_RETURNED_ON_WIN": { ru: "при выигрыше анте возвращается", en: "ante returned on a win" },
  // ... the decisions as the round's notes and history name them ...
  "code.CALL": { ru: "колл", en: "call" },
  "code.PLAY": { ru: "играть", en: "play" },
  "code.FOLD": { ru: "фолд", en: "fold" },
  "code.EXCHANGE": { ru: "обмен", en: "exchange" },
  "code.BUY_SIXTH_CARD": { ru: "купить шестую карту", en: "buy a sixth card" },
  "code.INSURE": { ru: "страховка", en: "insure" },
  "code.BUY_GAME": { ru: "купить игру", en: "buy a game" },
  "code.TAKE_ANTE": { ru: "забрать анте", en: "take the ante" },
  // ... and why new rounds may be paused.
  "code.HOUSE_BANK_PAUSED": { ru: "банк заведения пополняется", en: "the house bank is being refilled" },
  "code.MAINTENANCE_NO_NEW_HANDS": { ru: "техническое обслуживание", en: "maintenance" },
  // Codes with a figure or a combination in them (Russian Poker's settlement reasons).
  "code.combination": { ru: "комбинация: {combination}", en: "combination {combination}" },
  "code.bonus_combination": { ru: "бонус: {combination}", en: "bonus {combination}" },
  "code.jackpot_percent": { ru: "джекпот {percent}%", en: "jackpot {percent} percent" },
  "code.jackpot_contribution_percent": { ru: "взнос в джекпот {percent}%", en: "jackpot contribution {percent} percent" },
  "combination.NO_COMBINATION": { ru: "нет комбинации", en: "no combination" },
  "combination.HIGH_CARD": { ru: "старшая карта", en: "high card" },
  "combination.ACE_KING": { ru: "туз-король", en: "ace king" },
  "combination.ONE_PAIR": { ru: "пара", en: "one pair" },
  "combination.TWO_PAIR": { ru: "две пары", en: "two pair" },
  "combination.THREE_OF_A_KIND": { ru: "тройка", en: "three of a kind" },
  "combination.STRAIGHT": { ru: "стрит", en: "straight" },
  "combination.FLUSH": { ru: "флеш", en: "flush" },
  "combination.FULL_HOUSE": { ru: "фулл-хаус", en: "full house" },
  "combination.FOUR_OF_A_KIND": { ru: "каре", en: "four of a kind" },
  "combination.STRAIGHT_FLUSH": { ru: "стрит-флеш", en: "straight flush" },
  "combination.ROYAL_FLUSH": { ru: "роял-флеш", en: "royal flush" },
  // A round's notes: what happened that the player did not choose.
  "note.timeout": {
    ru: "бокс {box}: время вышло — {decision} (решение по правилам)",
    en: "box {box}: time ran out - {decision} (the rules' default)",
  },
  "note.resumed_after_restart": {
    ru: "раунд возобновлён после перезапуска или смены сервера",
    en: "resumed after a shard restart or takeover",
  },
  "note.resumed": { ru: "раунд возобновлён", en: "resumed" },
} satisfies Record<string, Entry>;
