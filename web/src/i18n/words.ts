// What the services send as stable codes or in English, in the page's words: refusal reasons, the
// round's and the statement's codes, the engine's names of hands ("Two pair, Aces and Kings"), the
// table's notices ("posts small blind 5") and a house round's notes ("TIMEOUT box 1 FOLD"). As
// poker-play says them (clients/play/words.py, notices.py), from the same catalogue entries.
import { known, t, type Key, type Params } from "./index";

/** A refused call in words: the reason's sentence; without a reason, the Connect code's; a reason
 * this page does not know yet, a general sentence with the reason's code (never the server's
 * developer wording). */
export function refusalText(failure: { code: string; reason: string }): string {
  const reasonKey = `reason.${failure.reason}`;
  if (failure.reason && known(reasonKey)) return t(reasonKey);
  const statusKey = `status.${failure.code}`;
  if (!failure.reason && known(statusKey)) return t(statusKey);
  return t("refusal.unknown", { reason: failure.reason || failure.code });
}

/** A stable code of a house round (phase, box state, settlement item, outcome, reason, decision) in
 * words; one this page does not know, in lower case (a code a newer table release added). */
export function codeWords(code: string): string {
  if (!code) return "";
  const upper = code.toUpperCase();
  const key = `code.${upper}`;
  if (known(key)) return t(key);
  let match = /^JACKPOT_CONTRIBUTION_(\d+)_PERCENT$/.exec(upper);
  if (match) return t("code.jackpot_contribution_percent", { percent: match[1] });
  match = /^JACKPOT_(\d+)_PERCENT$/.exec(upper);
  if (match) return t("code.jackpot_percent", { percent: match[1] });
  match = /^(COMBINATION|BONUS)_([A-Z_]+)$/.exec(upper);
  const combination = match ? `combination.${match[2]}` : "";
  if (match && known(combination)) {
    return t(match[1] === "BONUS" ? "code.bonus_combination" : "code.combination", { combination: t(combination) });
  }
  return code.toLowerCase().replace(/_/g, " ");
}

/** A balance change's reason (history's statement) in words. */
export function changeWords(reason: string): string {
  const key = `change.${reason}`;
  return known(key) ? t(key) : t("change.other");
}

/** A house round's note in words: `TIMEOUT box 1 FOLD` is `box 1: time ran out - fold (the rules'
 * default)`. */
export function noteText(note: string): string {
  const timeout = /^TIMEOUT box (\d+) ([A-Z_]+)$/.exec(note);
  if (timeout) return t("note.timeout", { box: timeout[1], decision: codeWords(timeout[2]) });
  if (note === "RESUMED after a shard restart or takeover") return t("note.resumed_after_restart");
  if (note.startsWith("RESUMED")) return t("note.resumed");
  return note;
}

// The engine's names of hands (poker_engine.evaluator.describe_strength): the pattern, the entry, and
// per rank in it the parameter it fills and the form of the rank it takes there.
type RankForm = "one" | "of_one" | "many" | "of_many" | "on_many";
const HANDS: readonly [RegExp, Key, readonly (readonly [string, RankForm])[]][] = [
  [/^Royal flush$/, "hand.royal_flush", []],
  [/^Straight flush, (\w+) high$/, "hand.straight_flush", [["high", "of_one"]]],
  [/^Four of a kind, (\w+)$/, "hand.four_of_a_kind", [["rank", "of_many"]]],
  [/^Full house, (\w+) full of (\w+)$/, "hand.full_house", [["three", "many"], ["pair", "on_many"]]],
  [/^Flush, (\w+) high$/, "hand.flush", [["high", "of_one"]]],
  [/^Straight, (\w+) high$/, "hand.straight", [["high", "of_one"]]],
  [/^Three of a kind, (\w+)$/, "hand.three_of_a_kind", [["rank", "of_many"]]],
  [/^Two pair, (\w+) and (\w+)$/, "hand.two_pair", [["high", "many"], ["low", "many"]]],
  [/^One pair, (\w+)$/, "hand.one_pair", [["rank", "of_many"]]],
  [/^High card, (\w+)$/, "hand.high_card", [["rank", "one"]]],
];
const RANKS = ["Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten", "Jack", "Queen", "King", "Ace"];
const PLURAL_RANKS: Readonly<Record<string, string>> = { Sixes: "Six" };

/** The rank an engine's word names (`Kings` and `King` are `King`), or null. */
function rankOf(word: string): string | null {
  if (RANKS.includes(word)) return word;
  const one = PLURAL_RANKS[word] ?? word.replace(/s$/, "");
  return RANKS.includes(one) ? one : null;
}

/** The engine's name of a hand in the page's language ("Две пары, тузы и короли"); one it does not
 * recognise as it came. */
export function handText(description: string): string {
  for (const [pattern, key, ranks] of HANDS) {
    const match = pattern.exec(description);
    if (!match) continue;
    const params: Record<string, string> = {};
    for (const [i, [name, form]] of ranks.entries()) {
      const rank = rankOf(match[i + 1]);
      const rankKey = `rank.${rank}.${form}`;
      if (!rank || !known(rankKey)) return description;
      params[name] = t(rankKey);
    }
    return t(key, params);
  }
  return description;
}

// The table's notices: per code the forms of its English line, each a pattern whose named groups are
// the entry's parameters (amounts and counts are read as numbers, to be written as the language does).
const NOTICES: Readonly<Record<string, readonly (readonly [RegExp, Key])[]>> = {
  TABLE_OPEN: [[/^the table is open$/, "notice.table_open"]],
  HAND_STARTED: [[/^hand (?<hand>\S+) started$/, "notice.hand_started"]],
  HAND_CONTINUED: [[/^hand (?<hand>\S+) goes on where it was$/, "notice.hand_continued"]],
  HAND_COMMITTED: [[/^next hand (?<hand>\S+) committed$/, "notice.hand_committed"]],
  SEED_HASHES_CLOSED: [
    [/^client-seed hashes of hand (?<hand>\S+) closed \(seats: (?<seats>[^)]*)\); send your seeds$/, "notice.seed_hashes_closed"],
  ],
  TABLE_MOVING: [[/^the table moves to another server; your seat is kept$/, "notice.table_moving"]],
  TABLE_CLOSING: [[/^this table closes after the hand; your chips go back to your wallet$/, "notice.table_closing"]],
  TABLE_PAUSED: [[/^waiting for the cashier to settle the hand$/, "notice.table_paused"]],
  HAND_SETTLED: [[/^hand (?<hand>\S+) settled$/, "notice.hand_settled"]],
  BLIND_POSTED: [
    [/^posts small blind (?<amount>\d+)$/, "notice.blind_small"],
    [/^posts big blind (?<amount>\d+)$/, "notice.blind_big"],
    [/^posts extra big blind (?<amount>\d+)$/, "notice.blind_extra_big"],
    [/^posts dead small blind (?<amount>\d+)$/, "notice.blind_dead_small"],
  ],
  UNCALLED_BET_RETURNED: [[/^(?<amount>\d+) returned$/, "notice.uncalled_returned"]],
  CARDS_MUCKED: [[/^mucked$/, "notice.mucked"]],
  HAND_ENDED: [[/^hand ended, rake (?<rake>\d+)$/, "notice.hand_ended"]],
  PLAYER_SAT_DOWN: [[/^(?<player>\S+) sat at seat (?<seat>\d+)$/, "notice.sat_down"]],
  PLAYER_LEFT: [[/^(?<player>\S+) left seat (?<seat>\d+)$/, "notice.left"]],
  PLAYER_SAT_IN: [[/^(?<player>\S+)$/, "notice.sat_in"]],
  PLAYER_SAT_OUT: [
    [/^(?<player>\S+) timed out (?<count>\d+) hands in a row$/, "notice.timed_out"],
    [/^(?<player>\S+)$/, "notice.sat_out"],
  ],
  PLAYER_RECONNECTED: [[/^(?<player>\S+) is back$/, "notice.back"]],
  PLAYER_DISCONNECTED: [[/^(?<player>\S+) is away; the seat is kept (?<seconds>\S+) s$/, "notice.away"]],
  SEAT_RESERVE_EXPIRED: [[/^(?<player>\S+) is removed from the table$/, "notice.removed"]],
  SIT_OUT_EXPIRED: [[/^(?<player>\S+) is removed from the table$/, "notice.removed"]],
  ROUND_STARTED: [[/^round (?<round>\S+) dealt$/, "notice.round_started"]],
  ROUND_RESUMED: [[/^round (?<round>\S+) resumed$/, "notice.round_resumed"]],
  ROUND_SETTLED: [[/^round (?<round>\S+) settled$/, "notice.round_settled"]],
  ROUND_COMMITTED: [[/^next round (?<round>\S+) committed$/, "notice.round_committed"]],
  HOUSE_DECISION: [[/^box (?<box>\d+): (?<decision>[A-Z_]+)$/, "notice.house_decision"]],
};
const NUMBERS = new Set(["amount", "rake", "count"]);

/** A table notice's line in the page's language (its figures read from the table's English line);
 * a line of a form this page does not know, as it came (a notice from a newer table release). */
export function noticeWords(code: string, text: string): string {
  for (const [pattern, key] of NOTICES[code] ?? []) {
    const match = pattern.exec(text);
    if (!match) continue;
    const params: Record<string, Params[string]> = {};
    for (const [name, value] of Object.entries(match.groups ?? {})) {
      params[name] = name === "decision" ? codeWords(value) : NUMBERS.has(name) ? BigInt(value) : value;
    }
    return t(key, params);
  }
  return text;
}
