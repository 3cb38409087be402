// The table screen's words, apart from the page so they can be checked on their own
// (tests/web/test_table_words.py): an action as a hand log line, each pot with who can win it, the
// table's notices and who won each pot, in the page's language (src/i18n).
import { t, type Params } from "./i18n";
import { handText, noticeWords } from "./i18n/words";
import { ActionKind, type ActionTaken, type Pot, type PotAward, type TableNotice } from "./gen/poker/table/v1/table_pb";

/** Who a line is about: a seat's name, and whether it is the player reading (English says "You bet"
 * but "Ann bets"; Russian "Вы выигрываете" but "Анна выигрывает"). */
export interface Who {
  name: string;
  you: boolean;
}

type Did = "did.fold" | "did.check" | "did.call" | "did.bet" | "did.raise" | "did.all_in" | "did.all_in_bare" | "did.other";

function did(key: Did, who: Who, params: Params = {}): string {
  return who.you ? t(`${key}.you`, params) : t(key, { ...params, who: who.name });
}

/** One hand log line for an action. A bet, raise or all-in is said as its total this betting round
 * (`to`, the figure players say: "raises to 480"), with the chips it added beside it when they differ
 * ("(+475)"); a call as the chips it cost. */
export function actionText(who: Who, taken: ActionTaken): string {
  const kind = taken.action;
  let line: string;
  if ((kind === ActionKind.BET || kind === ActionKind.RAISE || kind === ActionKind.ALL_IN) && taken.to > 0n) {
    line = did(kind === ActionKind.BET ? "did.bet" : kind === ActionKind.RAISE ? "did.raise" : "did.all_in", who, { amount: taken.to });
    if (taken.amount !== taken.to) line = t("did.added", { line, added: taken.amount });
  } else if (kind === ActionKind.ALL_IN) {
    line = taken.amount ? did("did.all_in", who, { amount: taken.amount }) : did("did.all_in_bare", who);
  } else if (kind === ActionKind.CALL) {
    line = did("did.call", who, { amount: taken.amount });
  } else if (kind === ActionKind.FOLD) {
    line = did("did.fold", who);
  } else if (kind === ActionKind.CHECK) {
    line = did("did.check", who);
  } else {
    line = did("did.other", who);
  }
  return taken.timedOut ? t("did.timed_out", { line }) : line;
}

/** `Pot` alone, else `Main pot`, then `Side pot` (one) or `Side pot 1`, `Side pot 2`, ... (several). */
function potName(index: number, count: number): string {
  if (count === 1) return t("pot.single");
  if (index === 0) return t("pot.main");
  return count === 2 ? t("pot.side") : t("pot.side_numbered", { number: index });
}

/** Each pot with its amount and, once there are side pots, who can still win it. */
export function potTexts(pots: Pot[], seatName: (seat: number) => string): string[] {
  return pots.map((pot, i) => {
    const name = potName(i, pots.length);
    return pots.length > 1 && pot.eligibleSeats.length
      ? t("pot.amount_seats", { pot: name, amount: pot.amount, seats: pot.eligibleSeats.map(seatName).join(t("list.separator")) })
      : t("pot.amount", { pot: name, amount: pot.amount });
  });
}

/** Notices the log leaves out: the next hand's commitment, and the pot awards, which the log says
 * from the view's awards instead (awardTexts; the table's own words count pots from 0 and name seats). */
const UNLOGGED_NOTICES = new Set(["HAND_COMMITTED", "POT_AWARDED"]);

/** One hand log line for a table notice, naming the player it is about (`Ann: posts small blind 5`),
 * or null for a notice the log leaves out. */
export function noticeText(subject: string, notice: TableNotice): string | null {
  if (UNLOGGED_NOTICES.has(notice.code)) return null;
  const line = noticeWords(notice.code, notice.text);
  return subject ? t("log.notice", { who: subject, text: line }) : line;
}

/** Each winner of a pot with what they won: `Ann won 380, Bob won 380`. */
function winners(award: PotAward, whoAt: (seat: number) => Who): string {
  return award.seats
    .map((seat, i) => {
      const who = whoAt(seat);
      const amount = award.amounts[i] ?? 0n;
      return who.you ? t("award.winner.you", { amount }) : t("award.winner", { who: who.name, amount });
    })
    .join(t("list.separator"));
}

/** Who won each pot, by name, with the winning hand when there was a showdown:
 * `Main pot: Ann won 1,275 with Two pair, Aces and Kings`, `Side pot: Ann won 380, Bob won 380`
 * (the hand log's lines, and the felt's at the showdown). */
export function awardTexts(awards: PotAward[], whoAt: (seat: number) => Who): string[] {
  return awards.map((award) => {
    const pot = potName(award.potIndex, awards.length);
    return award.handDescription
      ? t("award.pot_with", { pot, winners: winners(award, whoAt), hand: handText(award.handDescription) })
      : t("award.pot", { pot, winners: winners(award, whoAt) });
  });
}
