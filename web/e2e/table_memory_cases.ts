// Runs the table's kept lines (src/table_memory.ts) with the screen's reducer (src/table_model.ts) on
// scenarios read as JSON from stdin: a player at a table, and steps that are table messages (a hand
// starting, a chat line), a line the page adds, or a reload of the page (a fresh state restored from
// what was kept, maybe as another player, in another language or at another table). Lines are kept as
// table_screen.ts keeps them: after every change that added one. The storage is a stand-in for
// sessionStorage (one per scenario; `full` makes it refuse writes). Prints one JSON line per step.
import { create } from "@bufbuild/protobuf";
import {
  ChatMessageSchema, SeatViewSchema, Street, TableEventSchema, TableNoticeSchema, TablePhase, TableViewSchema, type TableEvent,
} from "../src/gen/poker/table/v1/table_pb";
import { useLanguage, type Language } from "../src/i18n";
import { initialState, reduce, type TableState } from "../src/table_model";
import { KEPT_LINES, linesKey, loadLines, restoreLines, saveLines, type LineStore } from "../src/table_memory";

type Step =
  | { hand: string }
  | { view: string }
  | { chat: string; from?: string }
  | { note: string }
  | { reload: { me?: string; lang?: Language; table?: string; spectate?: boolean } }
  | { corrupt: string }
  | { full: boolean };
interface Scenario { me: string; table: string; lang?: Language; steps: Step[] }

const ANN = "p-0a1b2c3d4e5f";

function viewOf(me: string, hand: string) {
  return create(TableViewSchema, {
    tableId: "t", handId: hand, phase: TablePhase.HAND_IN_PROGRESS, street: Street.PREFLOP, toActSeat: 1, buttonSeat: 1,
    seats: [
      create(SeatViewSchema, { seat: 1, playerId: ANN, displayName: "Ann", stack: 1000n }),
      create(SeatViewSchema, { seat: 2, playerId: me, displayName: "Me", stack: 1000n }),
    ],
  });
}

class Store implements LineStore {
  items = new Map<string, string>();
  full = false;
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    if (this.full) throw new Error("QuotaExceededError");
    this.items.set(key, value);
  }
}

function shown(state: TableState, store: Store, table: string) {
  const ids = [...state.log.map((l) => l.id), ...state.chat.map((c) => c.id)];
  return {
    log: state.log.map((l) => (l.heading ? `# ${l.text}` : l.text)),
    chat: state.chat.map((c) => `${c.who}: ${c.text}`),
    nextId: state.nextId,
    handCount: state.handCount,
    idsUnique: new Set(ids).size === ids.length,
    idsBelowNext: ids.every((id) => id < state.nextId),
    keptBytes: store.items.get(linesKey(table, false))?.length ?? 0,
  };
}

let input = "";
for await (const chunk of process.stdin) input += chunk;
const scenarios = JSON.parse(input) as Scenario[];
console.log(JSON.stringify({ kept: KEPT_LINES }));
for (const [index, scenario] of scenarios.entries()) {
  const store = new Store();
  let me = scenario.me;
  let table = scenario.table;
  let lang: Language = scenario.lang ?? "en";
  let spectate = false;
  useLanguage(lang);
  let state = restoreLines(initialState(me, false), loadLines(store, table, false), lang);
  let hand = "";
  for (const step of scenario.steps) {
    const before = state.nextId;
    if ("hand" in step) {
      hand = step.hand;
      const event: TableEvent = create(TableEventSchema, { kind: { case: "notice", value: create(TableNoticeSchema, { code: "HAND_STARTED", text: `hand ${hand} started` }) } });
      state = reduce(state, { type: "update", view: viewOf(me, hand), events: [event] });
    } else if ("view" in step) {
      hand = step.view; // a full view alone (the first message after a reload)
      state = reduce(state, { type: "update", view: viewOf(me, hand), events: [] });
    } else if ("chat" in step) {
      const from = step.from === "me" ? me : ANN;
      const event = create(TableEventSchema, { seat: from === me ? 2 : 1, kind: { case: "chat", value: create(ChatMessageSchema, { playerId: from, seat: from === me ? 2 : 1, text: step.chat }) } });
      state = reduce(state, { type: "update", view: viewOf(me, hand), events: [event] });
    } else if ("note" in step) {
      state = reduce(state, { type: "note", text: step.note });
    } else if ("reload" in step) {
      me = step.reload.me ?? me;
      lang = step.reload.lang ?? lang;
      table = step.reload.table ?? table;
      spectate = step.reload.spectate ?? false;
      useLanguage(lang);
      state = restoreLines(initialState(me, spectate), loadLines(store, table, spectate), lang);
    } else if ("corrupt" in step) {
      store.items.set(linesKey(table, false), step.corrupt);
    } else if ("full" in step) {
      store.full = step.full;
    }
    if (!("reload" in step) && state.nextId !== before) saveLines(store, table, spectate, state, lang);
    console.log(JSON.stringify({ scenario: index, ...shown(state, store, table) }));
  }
}
