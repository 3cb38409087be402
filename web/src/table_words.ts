// The table screen's words, apart from the page so they can be checked on their own
// (tests/web/test_table_words.py): an action as a hand log line and each pot with who can win it.
import { chips } from "./ui";
import { ActionKind, type ActionTaken, type Pot, type PotAward, type TableNotice } from "./gen/poker/table/v1/table_pb";

const ACTION_WORD: Record<number, string> = {
  [ActionKind.FOLD]: "folds", [ActionKind.CHECK]: "checks", [ActionKind.CALL]: "calls",
  [ActionKind.BET]: "bets", [ActionKind.RAISE]: "raises to", [ActionKind.ALL_IN]: "goes all-in",
};

/** "You check", "Ann checks": the verb agrees with its subject. */
export function verb(subject: string, word: string): string {
  if (subject !== "You") return word;
  return word.replace(/^(\w+?)(e?s)\b/, (_m, stem: string, ending: string) => (ending === "es" && !stem.endsWith("o") ? stem + "e" : stem)).replace(/^goe\b/, "go");
}

/** One hand log line for an action. A bet, raise or all-in is said as its total this betting round
 * (`to`, the figure players say: "raises to 480"), with the chips it added beside it when they differ
 * ("(+475)"); a call as the chips it cost. */
export function actionText(subject: string, taken: ActionTaken): string {
  const timed = taken.timedOut ? " (time out)" : "";
  const kind = taken.action;
  let figure = "";
  if ((kind === ActionKind.BET || kind === ActionKind.RAISE || kind === ActionKind.ALL_IN) && taken.to > 0n) {
    const added = taken.amount !== taken.to ? ` (+${chips(taken.amount)})` : "";
    figure = `${kind === ActionKind.ALL_IN ? " to" : ""} ${chips(taken.to)}${added}`;
  } else if (taken.amount) {
    figure = ` ${chips(taken.amount)}`;
  }
  return `${subject} ${verb(subject, ACTION_WORD[kind] ?? "acts")}${figure}${timed}`;
}

/** `Pot` alone, else `Main pot`, then `Side pot` (one) or `Side pot 1`, `Side pot 2`, ... (several). */
function potName(index: number, count: number): string {
  if (count === 1) return "Pot";
  if (index === 0) return "Main pot";
  return count === 2 ? "Side pot" : `Side pot ${index}`;
}

/** Each pot with its amount and, once there are side pots, who can still win it. */
export function potTexts(pots: Pot[], seatName: (seat: number) => string): string[] {
  return pots.map((pot, i) => {
    const who = pots.length > 1 && pot.eligibleSeats.length ? ` (${pot.eligibleSeats.map(seatName).join(", ")})` : "";
    return `${potName(i, pots.length)}: ${chips(pot.amount)}${who}`;
  });
}

/** Notices the log leaves out: the next hand's commitment, and the pot awards, which the log says
 * from the view's awards instead (awardTexts; the table's own words count pots from 0 and name seats). */
const UNLOGGED_NOTICES = new Set(["HAND_COMMITTED", "POT_AWARDED"]);

/** One hand log line for a table notice, naming the player it is about (`Ann: posts small blind 5`),
 * or null for a notice the log leaves out. */
export function noticeText(subject: string, notice: TableNotice): string | null {
  if (UNLOGGED_NOTICES.has(notice.code)) return null;
  return subject ? `${subject}: ${notice.text}` : notice.text;
}

/** Who won each pot, by name, with the winning hand when there was a showdown:
 * `Main pot: Ann won 1,275 with Two pair, Aces and Kings`, `Side pot: Ann won 380, Bob won 380`. */
export function awardTexts(awards: PotAward[], seatName: (seat: number) => string): string[] {
  return awards.map((award) => {
    const winners = award.seats.map((seat, i) => `${seatName(seat)} won ${chips(award.amounts[i] ?? 0n)}`).join(", ");
    const how = award.handDescription ? ` with ${award.handDescription}` : "";
    return `${potName(award.potIndex, awards.length)}: ${winners}${how}`;
  });
}
