// The table screen's state and the one function that changes it: `reduce(state, input)` takes a
// stream message (the table's events and the view after them), a line the page adds (a seed step),
// or what the player does (types an amount, picks a preset, ticks a pre-action) and returns the next
// state. No DOM, no clock, no network: table_screen.ts draws the state in place and sends what
// `state.send` asks for; tests/web/test_table_model.py runs this in Node.
//
// What the player is typing (the raise amount, the buy-in) lives here, so a chat line or a notice
// never resets it: only a new turn gives the amount box its new minimum.
import { t } from "./i18n";
import { actionText, awardTexts, noticeText, type Who } from "./table_words";
import { cardText } from "./ui";
import {
  ActionKind, SeatStatus, Street, TablePhase, type ChatMessage, type LegalActions, type SeatView, type TableEvent, type TableView,
} from "./gen/poker/table/v1/table_pb";

/** A box ticked before the turn, applied by the page when the turn comes:
 * - `check-fold`: check if nothing is owed, else fold (once). A bet before the turn makes it `fold`.
 * - `call-any`: call whatever is bet (check if nothing is), once; a bet before the turn keeps it.
 * - `fold`: fold to any bet: checks while nothing is owed, on every turn of the hand, and folds at the
 *   first bet it faces.
 * A new hand clears it, and so does leaving the hand (folded, all-in, out). */
export type PreAction = "" | "check-fold" | "call-any" | "fold";

export type Preset = "min" | "half" | "two-thirds" | "pot" | "all-in";
export const PRESETS: readonly Preset[] = ["min", "half", "two-thirds", "pot", "all-in"];

/** An action the page is to send now (a pre-action met its turn). */
export interface Intent {
  handId: string;
  action: ActionKind;
  amount: bigint;
}

export interface LogLine {
  id: number;
  /** The hand's number in this page's log (1 for the first it saw), 0 for none. */
  hand: number;
  /** A hand's first line ("Hand 3") is drawn as a heading. */
  heading: boolean;
  text: string;
}

export interface ChatLine {
  id: number;
  who: string;
  text: string;
  sticker: string;
}

export interface TableState {
  me: string;
  spectate: boolean;
  view: TableView | null;
  /** Each hand's number in this log, by the table's hand id (never shown). */
  hands: Readonly<Record<string, number>>;
  /** How many hands this log has numbered (the last one's number). */
  handCount: number;
  log: readonly LogLine[];
  chat: readonly ChatLine[];
  nextId: number;
  preAction: PreAction;
  /** The raise or bet amount as the player typed it (or a preset put it). */
  amount: string;
  /** The turn the amount belongs to: a new one starts at its minimum. */
  amountTurn: string;
  /** The buy-in as the player typed it; "" until they do (the room's minimum is offered). */
  buyIn: string;
  send: Intent | null;
}

export type TableInput =
  | { type: "update"; view: TableView; events: readonly TableEvent[] }
  | { type: "note"; text: string }
  | { type: "pre"; choice: PreAction }
  | { type: "amount"; value: string }
  | { type: "preset"; preset: Preset }
  | { type: "buy-in"; value: string }
  | { type: "sent" };

export const LOG_LINES = 200;
export const CHAT_LINES = 50;

export function initialState(me: string, spectate: boolean): TableState {
  return { me, spectate, view: null, hands: {}, handCount: 0, log: [], chat: [], nextId: 1, preAction: "", amount: "", amountTurn: "", buyIn: "", send: null };
}

// ---------------------------------------------------------------- what the view says

export function mySeat(state: TableState): number {
  return state.view?.seats.find((s) => s.playerId === state.me && state.me !== "")?.seat ?? 0;
}

/** The legal actions when it is the player's turn, else null. */
export function myTurn(view: TableView | null): LegalActions | null {
  const legal = view?.legalActions;
  return legal && legal.actions.length > 0 ? legal : null;
}

/** Whether the player holds cards in a betting round and may act later in it (pre-actions apply). */
export function inHand(state: TableState): boolean {
  const view = state.view;
  if (!view || state.spectate || view.phase !== TablePhase.HAND_IN_PROGRESS) return false;
  if (view.street < Street.PREFLOP || view.street > Street.RIVER) return false;
  return view.seats.some((s) => s.playerId === state.me && !s.folded && !s.allIn && s.holeCards.length > 0 && s.status !== SeatStatus.SITTING_OUT);
}

/** Whether leaving now would fold the player's hand: they hold a seat, were dealt into the hand that
 * is running and are still in it (all-in included). Telegram's BackButton asks first then; seated
 * between hands, out of the hand, or not seated, it goes back at once. */
export function leavingFoldsHand(state: TableState): boolean {
  const view = state.view;
  if (!view || state.spectate || !state.me || view.phase !== TablePhase.HAND_IN_PROGRESS) return false;
  const seat = view.seats.find((s) => s.playerId === state.me);
  return !!seat && !seat.folded && seat.holeCards.length > 0;
}

/** The chips the player owes to stay in (the highest bet this round less their own), 0 when none. */
export function owed(state: TableState): bigint {
  const view = state.view;
  if (!view) return 0n;
  const top = view.seats.reduce((m, s) => (s.betThisRound > m ? s.betThisRound : m), 0n);
  const mine = view.seats.find((s) => s.playerId === state.me)?.betThisRound ?? 0n;
  return top > mine ? top - mine : 0n;
}

/** The pre-action boxes offered now: none on the player's turn or out of the hand; facing a bet,
 * check/fold is gone (it would fold). */
export function preActionsOffered(state: TableState): PreAction[] {
  if (!inHand(state) || myTurn(state.view)) return [];
  return owed(state) > 0n ? ["call-any", "fold"] : ["check-fold", "call-any", "fold"];
}

/** An amount on the legal step, within the legal range (an all-in, the maximum, may be off the step). */
export function onStep(value: bigint, legal: LegalActions): bigint {
  const step = legal.step > 0n ? legal.step : 1n;
  let amount = value < legal.minAmount ? legal.minAmount : value > legal.maxAmount ? legal.maxAmount : value;
  if (amount !== legal.maxAmount) amount -= amount % step;
  return amount < legal.minAmount ? legal.minAmount : amount;
}

/** The bet or raise the player may make now (BET when nothing is bet, else RAISE), or null. */
export function betKind(legal: LegalActions | null): ActionKind.BET | ActionKind.RAISE | null {
  if (!legal) return null;
  if (legal.actions.includes(ActionKind.BET)) return ActionKind.BET;
  if (legal.actions.includes(ActionKind.RAISE)) return ActionKind.RAISE;
  return null;
}

/** Each preset's amount (a bet, or the total a raise goes to), from the view's pots, bets and legal
 * range: a fraction of the pot is that fraction of what the pot holds once the player has called
 * (the pots include this round's bets), on top of the bet to call; min and all-in are the legal
 * minimum and maximum. Empty when the player cannot bet or raise, or the amount is fixed. */
export function presetAmounts(state: TableState): { preset: Preset; amount: bigint }[] {
  const legal = myTurn(state.view);
  if (!legal || betKind(legal) === null || legal.minAmount >= legal.maxAmount) return [];
  const view = state.view!;
  const top = view.seats.reduce((m, s) => (s.betThisRound > m ? s.betThisRound : m), 0n);
  const pot = view.pots.reduce((n, p) => n + p.amount, 0n) + legal.callAmount;
  const part = (num: bigint, den: bigint): bigint => onStep(top + (pot * num) / den, legal);
  return [
    { preset: "min", amount: legal.minAmount },
    { preset: "half", amount: part(1n, 2n) },
    { preset: "two-thirds", amount: part(2n, 3n) },
    { preset: "pot", amount: part(1n, 1n) },
    { preset: "all-in", amount: legal.maxAmount },
  ];
}

/** The amount the bet button sends: what the box says, on the step and in range. */
export function typedAmount(state: TableState): bigint {
  const legal = myTurn(state.view);
  if (!legal) return 0n;
  const typed = /^\s*\d+\s*$/.test(state.amount) ? BigInt(state.amount.trim()) : legal.minAmount;
  return onStep(typed, legal);
}

/** What a pre-action does on the player's turn, and whether it stays for the next turn. */
export function preActionMove(pre: PreAction, legal: LegalActions): { action: ActionKind; keep: boolean } | null {
  const can = (a: ActionKind): boolean => legal.actions.includes(a);
  switch (pre) {
    case "check-fold":
      return { action: can(ActionKind.CHECK) ? ActionKind.CHECK : ActionKind.FOLD, keep: false };
    case "fold":
      return can(ActionKind.CHECK) ? { action: ActionKind.CHECK, keep: true } : { action: ActionKind.FOLD, keep: false };
    case "call-any":
      if (can(ActionKind.CALL)) return { action: ActionKind.CALL, keep: false };
      if (can(ActionKind.CHECK)) return { action: ActionKind.CHECK, keep: false };
      return null;
    default:
      return null;
  }
}

/** A turn's identity: the hand, the street, whose turn and what they face. */
function turnKey(view: TableView): string {
  const legal = view.legalActions;
  return `${view.handId}/${view.street}/${view.toActSeat}/${legal?.minAmount ?? 0n}/${legal?.callAmount ?? 0n}`;
}

// ---------------------------------------------------------------- names and log lines

/** A seat's label when the table does not know its player's name ("Seat 3"): never a player id or
 * the table's handle of the player. */
export function seatLabel(seat: number): string {
  return t("seat.label", { seat });
}

/** The name of the player at a seat: "You" for the player, else the name the view gives them, else
 * the seat's label (never the id or handle the seat carries). */
function nameAt(state: TableState, seat: SeatView): string {
  if (seat.playerId === state.me && state.me !== "") return t("seat.you");
  return seat.displayName || seatLabel(seat.seat);
}

/** Who sits at a seat, by the name the view gives them ("You" for the player), or the seat's number. */
export function whoAt(state: TableState, view: TableView, seat: number): Who {
  const s = view.seats.find((x) => x.seat === seat && x.playerId);
  if (!s) return { name: t("seat.number", { seat }), you: false };
  return { name: nameAt(state, s), you: s.playerId === state.me && state.me !== "" };
}

/** The player's own seat in a view (found by their player id, which only their own seat carries), 0
 * for none. */
function seatOf(state: TableState, view: TableView): number {
  return state.me ? view.seats.find((s) => s.playerId === state.me)?.seat ?? 0 : 0;
}

/** Who sent a chat line: "You" from the player's own seat, else the sender's name, else their seat's
 * name in the view (or its label). */
function chatSender(state: TableState, view: TableView, chat: ChatMessage): string {
  const mine = seatOf(state, view);
  if (chat.seat && chat.seat === mine) return t("seat.you");
  if (chat.displayName) return chat.displayName;
  const seat = chat.seat ? view.seats.find((s) => s.seat === chat.seat && s.playerId) : view.seats.find((s) => s.playerId && s.playerId === chat.playerId);
  if (seat) return seat.playerId === state.me && state.me !== "" ? t("seat.you") : seat.displayName || seatLabel(seat.seat);
  return chat.seat ? seatLabel(chat.seat) : t("player.unknown");
}

/** The player a player notice is about and the rest of its line: the table starts the line with the
 * seat's name (which may have spaces), or `seat N` when it has none. The name is the seat's in the
 * view that came with the notice or the one before it (a player who left is only in that one); null
 * for a line that starts with neither (it is shown as the table wrote it). */
function noticePlayer(state: TableState, view: TableView, seat: number, text: string): { name: string; rest: string } | null {
  if (!seat) return null;
  const names = [view, state.view]
    .map((v) => v?.seats.find((s) => s.seat === seat && s.playerId)?.displayName ?? "")
    .filter((name) => name);
  const starts = (prefix: string): boolean => text === prefix || text.startsWith(`${prefix} `);
  const named = names.find(starts);
  if (named) return { name: named, rest: text.slice(named.length) };
  const table = `seat ${seat}`; // i18n-neutral: the table's own words for a seat without a name
  if (starts(table)) return { name: names[0] ?? seatLabel(seat), rest: text.slice(table.length) };
  return null;
}

/** The notices whose line starts with the player they are about. */
const PLAYER_NOTICES = new Set([
  "PLAYER_SAT_DOWN", "PLAYER_LEFT", "PLAYER_SAT_IN", "PLAYER_SAT_OUT", "PLAYER_RECONNECTED", "PLAYER_DISCONNECTED",
  "SEAT_RESERVE_EXPIRED", "SIT_OUT_EXPIRED",
]);
const PLAYER_MARK = "\u2063player\u2063"; // i18n-neutral: a mark replaced by the player's name

/** The notices that name a hand by the table's id, and where (its first group). */
const HAND_IDS: Readonly<Record<string, RegExp>> = {
  HAND_STARTED: /^hand (\S+) started$/,
  HAND_CONTINUED: /^hand (\S+) goes on/,
  HAND_SETTLED: /^hand (\S+) settled$/,
  HAND_COMMITTED: /^next hand (\S+) committed$/,
  SEED_HASHES_CLOSED: /^client-seed hashes of hand (\S+) closed/,
};

/** A hand's number in this log, the first time it is seen given the next one (and a heading line). */
function numberHand(state: TableState, handId: string): TableState {
  if (!handId || state.hands[handId]) return state;
  const number = state.handCount + 1;
  const next = { ...state, hands: { ...state.hands, [handId]: number }, handCount: number };
  return addLine(next, t("log.hand", { number }), true);
}

/** A line the page wrote with a hand's short id (seeds.ts: the first 8 characters) says its number. */
function withHandNumbers(state: TableState, text: string): string {
  let line = text;
  for (const [id, number] of Object.entries(state.hands)) {
    const short = id.slice(0, 8);
    if (short) line = line.split(short).join(String(number));
  }
  return line;
}

function addLine(state: TableState, text: string, heading = false): TableState {
  const hand = state.view ? state.hands[state.view.handId] ?? 0 : 0;
  const line: LogLine = { id: state.nextId, hand: heading ? state.handCount : hand, heading, text };
  const log = [...state.log, line];
  return { ...state, log: log.length > LOG_LINES ? log.slice(log.length - LOG_LINES) : log, nextId: state.nextId + 1 };
}

/** One event into the log or the chat (the names from the view that came with it). */
function logEvent(state: TableState, view: TableView, event: TableEvent): TableState {
  switch (event.kind.case) {
    case "action":
      return addLine(state, actionText(whoAt(state, view, event.seat), event.kind.value));
    case "cards": {
      const shown = event.kind.value.cards.filter((c) => !c.hidden && c.text).map((c) => cardText(c.text)).join(" ");
      if (!shown) return state; // another player's cards, face down
      const who = whoAt(state, view, event.seat);
      if (event.kind.value.shownByPlayer) return addLine(state, who.you ? t("log.shows.you", { cards: shown }) : t("log.shows", { who: who.name, cards: shown }));
      if (event.seat) return addLine(state, who.you ? t("log.dealt.you", { cards: shown }) : t("log.dealt", { who: who.name, cards: shown }));
      return addLine(state, t("log.board", { cards: shown }));
    }
    case "notice": {
      const notice = event.kind.value;
      // A hand is named by its number in this log, never by the table's id.
      const id = HAND_IDS[notice.code]?.exec(notice.text)?.[1];
      let next = state;
      if (notice.code === "HAND_STARTED" && id) return numberHand(next, id);
      let text = notice.text;
      if (id && notice.code !== "HAND_COMMITTED") {
        next = numberHand(next, id);
        text = text.split(id).join(String(next.hands[id]));
      }
      if (PLAYER_NOTICES.has(notice.code)) {
        // The line starts with its player's name (or `seat N`): the name is the seat's, put in after
        // the words are found (a name may have spaces the table's pattern does not).
        const player = noticePlayer(next, view, event.seat, text);
        const line = noticeText("", { ...notice, text: player ? `${PLAYER_MARK}${player.rest}` : text });
        return line === null ? next : addLine(next, player ? line.split(PLAYER_MARK).join(player.name) : line);
      }
      const line = noticeText(event.seat ? whoAt(next, view, event.seat).name : "", { ...notice, text });
      return line === null ? next : addLine(next, line);
    }
    case "chat": {
      const chat = event.kind.value;
      const line: ChatLine = { id: state.nextId, who: chatSender(state, view, chat), text: chat.stickerId ? "" : chat.text, sticker: chat.stickerId };
      const lines = [...state.chat, line];
      return { ...state, chat: lines.length > CHAT_LINES ? lines.slice(lines.length - CHAT_LINES) : lines, nextId: state.nextId + 1 };
    }
    default:
      return state;
  }
}

// ---------------------------------------------------------------- the reducer

export function reduce(state: TableState, input: TableInput): TableState {
  switch (input.type) {
    case "update":
      return update(state, input.view, input.events);
    case "note":
      return addLine(state, withHandNumbers(state, input.text));
    case "pre":
      if (input.choice !== "" && !preActionsOffered(state).includes(input.choice)) return state;
      return { ...state, preAction: input.choice };
    case "amount":
      return { ...state, amount: input.value };
    case "preset": {
      const found = presetAmounts(state).find((p) => p.preset === input.preset);
      return found ? { ...state, amount: String(found.amount) } : state;
    }
    case "buy-in":
      return { ...state, buyIn: input.value };
    case "sent":
      return { ...state, send: null };
  }
}

function update(before: TableState, view: TableView, events: readonly TableEvent[]): TableState {
  let state = before;
  // The events are named from the view that came with them (a player who just sat down is in it).
  let awarded = false;
  for (const event of events) {
    state = logEvent(state, view, event);
    // The pots just awarded, by name and hand, where the table says so (from the view that came
    // with them: the felt's award is gone with the next view).
    if (!awarded && event.kind.case === "notice" && event.kind.value.code === "POT_AWARDED") {
      awarded = true;
      for (const line of awardTexts(view.awards, (seat) => whoAt(state, view, seat))) state = addLine(state, line);
    }
  }
  state = numberHand(state, view.handId);
  const newHand = view.handId !== (before.view?.handId ?? "");
  state = { ...state, view };
  // The pre-action: cleared by a new hand or leaving the hand; check/fold facing a bet is fold.
  let pre: PreAction = newHand ? "" : state.preAction;
  const legal = myTurn(view);
  if (pre && !legal && !inHand(state)) pre = "";
  if (pre === "check-fold" && !legal && owed(state) > 0n) pre = "fold";
  let send = state.send;
  if (pre && legal) {
    const move = preActionMove(pre, legal);
    if (move) send = { handId: view.handId, action: move.action, amount: 0n };
    pre = move?.keep ? pre : "";
  }
  // A new turn starts the amount box at its minimum; the same turn keeps what the player typed.
  let { amount, amountTurn } = state;
  if (legal && betKind(legal) !== null) {
    const key = turnKey(view);
    if (key !== amountTurn) {
      amount = String(legal.minAmount);
      amountTurn = key;
    }
  }
  return { ...state, preAction: pre, send, amount, amountTurn };
}

/** Seconds left to act, from what the view said was left when it came (deadline less as-of), so
 * neither the browser's clock nor a spectator's delay skews it; null without a deadline. */
export function secondsLeft(view: TableView | null, receivedAt: number, now: number): number | null {
  const deadline = view?.toActDeadline;
  const asOf = view?.asOf;
  if (!deadline || !asOf) return null;
  const leftAtView = Number(deadline.seconds - asOf.seconds) * 1000 + (deadline.nanos - asOf.nanos) / 1e6;
  return Math.max(0, Math.ceil((leftAtView - (now - receivedAt)) / 1000));
}
