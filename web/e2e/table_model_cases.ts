// Runs the table screen's reducer (src/table_model.ts) on scenarios read as JSON from stdin: each a
// player (`me`) and a list of steps, a step being a stream message (a view in short form and its
// events) or what the player does. Prints one JSON line per step: the state as the screen would draw
// it (the pre-action, what is to be sent, the amount box, the presets, the boxes offered, the log, the
// chat and the seats' names). In English unless a scenario says `lang`.
import { create } from "@bufbuild/protobuf";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import {
  ActionKind, ActionTakenSchema, CardsRevealedSchema, ChatMessageSchema, LegalActionsSchema, PotAwardSchema, PotSchema,
  SeatViewSchema, Street, TableEventSchema, TableNoticeSchema, TablePhase, TableViewSchema, type TableEvent,
} from "../src/gen/poker/table/v1/table_pb";
import { CardSchema } from "../src/gen/poker/common/v1/common_pb";
import { useLanguage } from "../src/i18n";
import { initialState, leavingFoldsHand, preActionsOffered, presetAmounts, reduce, typedAmount, whoAt, type TableInput, type TableState } from "../src/table_model";

interface SeatSpec { seat: number; player?: string; name?: string; stack?: number; bet?: number; folded?: boolean; allIn?: boolean; cards?: string[] }
interface LegalSpec { actions: (keyof typeof ActionKind)[]; call?: number; min?: number; max?: number; step?: number; allIn?: number }
interface ViewSpec {
  hand: string; street?: keyof typeof Street; phase?: keyof typeof TablePhase; toAct?: number; button?: number;
  seats: SeatSpec[]; pots?: number[]; legal?: LegalSpec; board?: string[];
  awards?: { pot: number; seats: number[]; amounts: number[]; hand?: string }[];
}
interface EventSpec {
  seat?: number;
  action?: { kind: keyof typeof ActionKind; amount?: number; to?: number };
  notice?: { code: string; text: string };
  chat?: { player: string; name?: string; seat?: number; text?: string; sticker?: string };
  cards?: { cards: string[]; shown?: boolean };
}
type StepSpec = { update: ViewSpec; events?: EventSpec[] } | Exclude<TableInput, { type: "update" }>;
interface Scenario { me: string; lang?: "ru" | "en"; spectate?: boolean; steps: StepSpec[] }

const cardOf = (text: string) => (text === "?" ? create(CardSchema, { hidden: true }) : create(CardSchema, { text }));

function viewOf(spec: ViewSpec) {
  const legal = spec.legal;
  return create(TableViewSchema, {
    tableId: "t1",
    handId: spec.hand,
    phase: TablePhase[spec.phase ?? "HAND_IN_PROGRESS"],
    street: Street[spec.street ?? "PREFLOP"],
    toActSeat: spec.toAct ?? 0,
    buttonSeat: spec.button ?? 1,
    board: (spec.board ?? []).map(cardOf),
    seats: spec.seats.map((s) => create(SeatViewSchema, {
      seat: s.seat, playerId: s.player ?? "", displayName: s.name ?? s.player ?? "", stack: BigInt(s.stack ?? 1000),
      betThisRound: BigInt(s.bet ?? 0), folded: !!s.folded, allIn: !!s.allIn, holeCards: (s.cards ?? (s.player ? ["?", "?"] : [])).map(cardOf),
    })),
    pots: (spec.pots ?? []).map((amount) => create(PotSchema, { amount: BigInt(amount), eligibleSeats: [] })),
    legalActions: legal
      ? create(LegalActionsSchema, {
        actions: legal.actions.map((a) => ActionKind[a]), callAmount: BigInt(legal.call ?? 0), minAmount: BigInt(legal.min ?? 0),
        maxAmount: BigInt(legal.max ?? 0), step: BigInt(legal.step ?? 1), allInAmount: BigInt(legal.allIn ?? legal.max ?? 0),
      })
      : undefined,
    awards: (spec.awards ?? []).map((a) => create(PotAwardSchema, { potIndex: a.pot, seats: a.seats, amounts: a.amounts.map(BigInt), handDescription: a.hand ?? "" })),
    asOf: create(TimestampSchema, { seconds: 100n }),
  });
}

function eventOf(spec: EventSpec): TableEvent {
  const seat = spec.seat ?? 0;
  if (spec.action) return create(TableEventSchema, { seat, kind: { case: "action", value: create(ActionTakenSchema, { action: ActionKind[spec.action.kind], amount: BigInt(spec.action.amount ?? 0), to: BigInt(spec.action.to ?? 0) }) } });
  if (spec.notice) return create(TableEventSchema, { seat, kind: { case: "notice", value: create(TableNoticeSchema, spec.notice) } });
  if (spec.chat) return create(TableEventSchema, { seat, kind: { case: "chat", value: create(ChatMessageSchema, { playerId: spec.chat.player, displayName: spec.chat.name ?? "", seat: spec.chat.seat ?? 0, text: spec.chat.text ?? "", stickerId: spec.chat.sticker ?? "" }) } });
  return create(TableEventSchema, { seat, kind: { case: "cards", value: create(CardsRevealedSchema, { cards: (spec.cards?.cards ?? []).map(cardOf), shownByPlayer: !!spec.cards?.shown }) } });
}

function shown(state: TableState) {
  return {
    pre: state.preAction,
    send: state.send ? { action: ActionKind[state.send.action], amount: Number(state.send.amount), hand: state.send.handId } : null,
    amount: state.amount,
    typed: Number(typedAmount(state)),
    presets: Object.fromEntries(presetAmounts(state).map((p) => [p.preset, Number(p.amount)])),
    offered: preActionsOffered(state),
    log: state.log.map((l) => (l.heading ? `# ${l.text}` : l.text)),
    chat: state.chat.map((c) => `${c.who}: ${c.sticker ? `[${c.sticker}]` : c.text}`),
    // Each occupied seat's name as the felt shows it.
    seats: state.view ? state.view.seats.filter((s) => s.playerId).map((s) => whoAt(state, state.view!, s.seat).name) : [],
    buyIn: state.buyIn,
    // Whether Telegram's BackButton asks before leaving (leaving would fold the player's hand).
    leavingFolds: leavingFoldsHand(state),
  };
}

let input = "";
for await (const chunk of process.stdin) input += chunk;
const scenarios = JSON.parse(input) as Scenario[];
for (const [index, scenario] of scenarios.entries()) {
  useLanguage(scenario.lang ?? "en");
  let state = initialState(scenario.me, !!scenario.spectate);
  for (const step of scenario.steps) {
    const action: TableInput = "update" in step ? { type: "update", view: viewOf(step.update), events: (step.events ?? []).map(eventOf) } : step;
    state = reduce(state, action);
    console.log(JSON.stringify({ scenario: index, ...shown(state) }));
    // The screen takes what is to be sent at once.
    if (state.send) state = reduce(state, { type: "sent" });
  }
}
