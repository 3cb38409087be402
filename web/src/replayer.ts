// The hand replayer's model: what is drawn at each step of a finished hand, a pure function of the
// hand's record as history gives it to the reader (GetHand) and the step's index. No DOM, no clock,
// no network: hands_screen.ts draws the frame and moves the step; tests/web/test_replayer.py runs
// this in Node on real hands (the engine's, redacted by history for each reader).
//
// The steps: the deal (step 0), then one per action of the record in order (blinds, decisions, each
// street's board, uncalled bets returned, cards shown or mucked), then the pots awarded (the last).
// At each: the board as dealt so far, every seat's stack and the bet in front of it, the pot in the
// middle (the bets of the streets before), the rake once taken, and the step in words ("Bob raises to
// 40"). Chips are conserved at every step: stacks + bets + pot + rake = the stacks the hand started
// with; after the award every stack is the one the record ends with.
//
// Cards: the reader's own hole cards from the deal; another player's only from the step they showed
// them, and only as the record shows them: history already hides what the reader may not see (others'
// unshown and mucked cards), and nothing here turns a hidden card up; a mucked hand stays face down.
// Players by name ("You" for the reader, else the name the record gives, else the seat's label),
// never an id.
import { create } from "@bufbuild/protobuf";
import { t } from "./i18n";
import { actionText, awardTexts, type Who } from "./table_words";
import { cardText } from "./ui";
import { ActionCause, type HandAction, type HandRecord, type HandSeat } from "./gen/poker/history/v1/history_pb";
import { ActionKind, ActionTakenSchema, PotAwardSchema } from "./gen/poker/table/v1/table_pb";

export type StreetCode = "PREFLOP" | "FLOP" | "TURN" | "RIVER" | "SHOWDOWN";

export interface ReplaySeat {
  /** The record's seat number (from 0, the engine's). */
  seat: number;
  name: string;
  you: boolean;
  stack: bigint;
  /** The chips in front of the seat this street. */
  bet: bigint;
  /** Each hole card's text, or null for one drawn face down. */
  cards: (string | null)[];
  folded: boolean;
  allIn: boolean;
  button: boolean;
  /** What the hand netted the seat, on the last step only (null before). */
  net: bigint | null;
}

export interface ReplayFrame {
  step: number;
  steps: number;
  street: StreetCode;
  board: string[];
  /** The chips in the middle: the bets of the streets before this one (this street's are at the seats). */
  pot: bigint;
  /** The rake, once the pots are awarded. */
  rake: bigint;
  /** The seat this step is about, or null (the deal, a board card, the award). */
  acting: number | null;
  /** The step in words (the award: one line per pot). */
  lines: string[];
  seats: ReplaySeat[];
}

/** How many steps a hand has: the deal, each action, the award. */
export function replaySteps(record: HandRecord): number {
  return record.actions.length + 2;
}

const STREETS: ReadonlySet<string> = new Set(["PREFLOP", "FLOP", "TURN", "RIVER", "SHOWDOWN"]);

function streetOf(code: string, before: StreetCode): StreetCode {
  return STREETS.has(code) ? (code as StreetCode) : before;
}

/** A seat's name: "You" for the reader, else the record's name, else the seat's label ("Seat 3", the
 * seat counted from 1, as the table shows it). History names another player "Seat N" itself when it
 * has no name for them: that reads in the page's language too. Never a player id. */
export function replayName(seat: HandSeat, me: string): Who {
  if (me && seat.playerId === me) return { name: t("seat.you"), you: true };
  const label = t("seat.label", { seat: seat.seat + 1 });
  const name = seat.displayName.trim();
  if (!name || name === `Seat ${seat.seat + 1}` || (seat.playerId !== "" && name === seat.playerId)) return { name: label, you: false };
  return { name, you: false };
}

const visible = (cards: readonly { text: string; hidden: boolean }[]): string[] =>
  cards.filter((c) => !c.hidden && c.text).map((c) => c.text);

const shownText = (cards: readonly string[]): string => cards.map(cardText).join(" ");

const DECISIONS: Readonly<Record<string, ActionKind>> = {
  FOLD: ActionKind.FOLD,
  CHECK: ActionKind.CHECK,
  CALL: ActionKind.CALL,
  BET: ActionKind.BET,
  RAISE: ActionKind.RAISE,
};

type PostKey = "replay.post_small" | "replay.post_big" | "replay.post_extra_big" | "replay.post_dead_small";
const POSTS: Readonly<Record<string, PostKey>> = {
  POST_SMALL_BLIND: "replay.post_small",
  POST_BIG_BLIND: "replay.post_big",
  POST_EXTRA_BIG_BLIND: "replay.post_extra_big",
  POST_DEAD_SMALL_BLIND: "replay.post_dead_small",
};

/** One action of the record in the words of the table's hand log. */
function actionWords(action: HandAction, who: Who): string {
  const decision = DECISIONS[action.kind];
  if (decision !== undefined) {
    // A bet or raise that put the last chip in is said as the all-in it was ("goes all-in to 2,084").
    const kind = action.allIn && (decision === ActionKind.BET || decision === ActionKind.RAISE) ? ActionKind.ALL_IN : decision;
    let line = actionText(who, create(ActionTakenSchema, {
      action: kind,
      amount: action.amount,
      to: action.to,
      timedOut: action.cause === ActionCause.TIMEOUT,
    }));
    if (action.allIn && decision === ActionKind.CALL) line = t("replay.all_in_call", { line });
    if (action.cause === ActionCause.LEFT_TABLE) line = t("replay.left_table", { line });
    return line;
  }
  const post = POSTS[action.kind];
  if (post) return who.you ? t(`${post}.you`, { amount: action.amount }) : t(post, { who: who.name, amount: action.amount });
  switch (action.kind) {
    case "DEAL_BOARD": {
      const cards = shownText(visible(action.cards));
      if (action.street === "FLOP") return t("replay.flop", { cards });
      if (action.street === "TURN") return t("replay.turn", { cards });
      if (action.street === "RIVER") return t("replay.river", { cards });
      return t("log.board", { cards });
    }
    case "UNCALLED_RETURN":
      return who.you ? t("replay.uncalled.you", { amount: action.amount }) : t("replay.uncalled", { who: who.name, amount: action.amount });
    case "SHOW": {
      const cards = shownText(visible(action.cards));
      return who.you ? t("log.shows.you", { cards }) : t("log.shows", { who: who.name, cards });
    }
    case "MUCK":
      return who.you ? t("replay.muck.you") : t("replay.muck", { who: who.name });
    default:
      return who.you ? t("did.other.you") : t("did.other", { who: who.name });
  }
}

interface SeatState {
  record: HandSeat;
  who: Who;
  stack: bigint;
  bet: bigint;
  cards: (string | null)[];
  folded: boolean;
  allIn: boolean;
}

/** What is drawn at `step` (clamped to the hand's steps) of the hand, for the reader `me`. With
 * `everyCard` (the staff console: history gives staff the whole hand), every hole card the record
 * shows is face up from the deal; a card the record hides stays down either way. */
export function replayFrame(record: HandRecord, me: string, step: number, everyCard = false): ReplayFrame {
  const steps = replaySteps(record);
  const at = Math.max(0, Math.min(steps - 1, Math.floor(step)));
  const seats = new Map<number, SeatState>();
  for (const s of [...record.seats].sort((a, b) => a.seat - b.seat)) {
    const who = replayName(s, me);
    // Only the reader's own cards are face up from the deal (as the record gives them: a hidden one
    // stays down); everyone else's are down until they show them.
    const cards = s.holeCards.map((c) => ((who.you || everyCard) && !c.hidden && c.text ? c.text : null));
    seats.set(s.seat, { record: s, who, stack: s.startingStack, bet: 0n, cards, folded: false, allIn: false });
  }
  const whoAt = (seat: number): Who => seats.get(seat)?.who ?? { name: t("seat.label", { seat: seat + 1 }), you: false };
  let street: StreetCode = "PREFLOP";
  let pot = 0n;
  let rake = 0n;
  const board: string[] = [];
  let acting: number | null = null;
  const mine = [...seats.values()].find((s) => s.who.you)?.cards.filter((c): c is string => c !== null) ?? [];
  let lines = [mine.length ? t("log.dealt.you", { cards: shownText(mine) }) : t("replay.dealt")];

  const collect = (): void => {
    for (const s of seats.values()) {
      pot += s.bet;
      s.bet = 0n;
    }
  };

  for (const action of record.actions.slice(0, at)) {
    const next = streetOf(action.street, street);
    if (next !== street) collect(); // a new street: the bets go to the middle
    street = next;
    const seat = seats.get(action.seat);
    acting = action.kind === "DEAL_BOARD" ? null : action.seat;
    switch (action.kind) {
      case "DEAL_BOARD":
        board.push(...visible(action.cards));
        break;
      case "UNCALLED_RETURN": {
        if (seat) {
          // Back from the seat's bet (the street's), the rest (if any) from the middle.
          const fromBet = seat.bet < action.amount ? seat.bet : action.amount;
          seat.bet -= fromBet;
          pot -= action.amount - fromBet;
          seat.stack += action.amount;
        }
        break;
      }
      case "SHOW":
        if (seat && !seat.who.you) {
          const shown = visible(action.cards);
          seat.cards = Array.from({ length: Math.max(seat.cards.length, shown.length) }, (_, i) => shown[i] ?? null);
        }
        break;
      case "MUCK":
        break; // the cards stay as they were: face down for everyone but their owner
      default:
        if (seat) {
          seat.stack -= action.amount;
          seat.bet += action.amount;
          if (action.kind === "FOLD") seat.folded = true;
          if (action.allIn) seat.allIn = true;
        }
    }
    lines = [actionWords(action, whoAt(action.seat))];
  }

  const last = at === steps - 1;
  if (last) {
    // The award: every chip in the middle and in front of the seats goes to the pots' winners (the
    // record's pots are after rake); a voided hand gives every chip back.
    collect();
    acting = null;
    if (record.voided) {
      for (const s of seats.values()) s.stack = s.record.startingStack;
      pot = 0n;
      lines = [t("replay.voided")];
    } else {
      for (const p of record.pots) {
        p.winnerSeats.forEach((seat, i) => {
          const s = seats.get(seat);
          if (s) s.stack += p.winnerAmounts[i] ?? 0n;
        });
      }
      rake = record.rake;
      pot -= record.pots.reduce((n, p) => n + p.amount, 0n) + rake;
      const awards = record.pots.map((p, i) => create(PotAwardSchema, { potIndex: i, seats: p.winnerSeats, amounts: p.winnerAmounts }));
      lines = awardTexts(awards, whoAt);
      if (rake > 0n) lines.push(t("replay.rake", { amount: rake }));
    }
  }

  return {
    step: at,
    steps,
    street,
    board,
    pot,
    rake,
    acting,
    lines,
    seats: [...seats.values()].map((s) => ({
      seat: s.record.seat,
      name: s.who.name,
      you: s.who.you,
      stack: s.stack,
      bet: s.bet,
      cards: s.cards,
      folded: s.folded,
      allIn: s.allIn,
      button: !record.houseGame && s.record.seat === record.buttonSeat,
      net: last ? s.stack - s.record.startingStack : null,
    })),
  };
}
