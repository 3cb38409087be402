// The table's chat and hand log over a reload of the page (the WebView restarting, a pull to
// refresh): the last lines of each, per table, kept in the tab's sessionStorage and put back when the
// table is opened again in the same tab. Nothing outlives the tab, and only what the page already
// showed is kept (the lines as drawn, the hands' numbers in this log).
//
// Pure but for the storage it is handed (tests/web/test_table_memory.py runs it in Node with a stand-in):
// `keptLines` takes what to keep from the screen's state, `restoreLines` puts it into a fresh state.
// Lines are kept in the page's language for the player who saw them: another language (the switch
// redraws the table afresh) or another player signed in on the tab restores nothing.
import type { ChatLine, LogLine, TableState } from "./table_model";

/** Lines of each kind kept per table. */
export const KEPT_LINES = 50;
/** Hands whose numbers are kept (a restored log goes on numbering after the last). */
const KEPT_HANDS = 20;
const VERSION = 1;

export interface KeptLines {
  v: number;
  me: string;
  lang: string;
  log: LogLine[];
  chat: ChatLine[];
  hands: Record<string, number>;
  handCount: number;
  nextId: number;
}

/** The part of sessionStorage used here. */
export interface LineStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** The storage key of a table's lines (a spectator's apart: their view runs late). */
export function linesKey(tableId: string, spectate: boolean): string {
  return `poker.table.${spectate ? "watch." : ""}${tableId}`;
}

/** What is kept of the screen's state: the last lines of the log and the chat, the recent hands'
 * numbers and how many there were, and the next line's id. */
export function keptLines(state: TableState, lang: string): KeptLines {
  const hands = Object.fromEntries(Object.entries(state.hands).filter(([, n]) => n > state.handCount - KEPT_HANDS));
  return {
    v: VERSION,
    me: state.me,
    lang,
    log: state.log.slice(-KEPT_LINES).map((l) => ({ ...l })),
    chat: state.chat.slice(-KEPT_LINES).map((c) => ({ ...c })),
    hands,
    handCount: state.handCount,
    nextId: state.nextId,
  };
}

const isLine = (l: unknown): l is LogLine =>
  typeof l === "object" && l !== null && typeof (l as LogLine).id === "number" && typeof (l as LogLine).text === "string"
  && typeof (l as LogLine).hand === "number" && typeof (l as LogLine).heading === "boolean";
const isChat = (c: unknown): c is ChatLine =>
  typeof c === "object" && c !== null && typeof (c as ChatLine).id === "number" && typeof (c as ChatLine).who === "string"
  && typeof (c as ChatLine).text === "string" && typeof (c as ChatLine).sticker === "string";

/** The kept lines read back, or null for none or anything not written by this page. */
export function parseKept(raw: string | null): KeptLines | null {
  if (!raw) return null;
  try {
    const kept = JSON.parse(raw) as KeptLines;
    if (kept?.v !== VERSION || !Array.isArray(kept.log) || !Array.isArray(kept.chat)) return null;
    if (!kept.log.every(isLine) || !kept.chat.every(isChat)) return null;
    if (typeof kept.hands !== "object" || kept.hands === null || !Number.isInteger(kept.handCount) || !Number.isInteger(kept.nextId)) return null;
    return kept;
  } catch {
    return null;
  }
}

/** A fresh screen state with the kept lines put back (same player, same language), else as it was. */
export function restoreLines(state: TableState, kept: KeptLines | null, lang: string): TableState {
  if (!kept || kept.me !== state.me || kept.lang !== lang) return state;
  const log = kept.log.slice(-KEPT_LINES);
  const chat = kept.chat.slice(-KEPT_LINES);
  const highest = Math.max(0, ...log.map((l) => l.id), ...chat.map((c) => c.id));
  return {
    ...state,
    log,
    chat,
    hands: { ...kept.hands },
    handCount: Math.max(kept.handCount, ...Object.values(kept.hands)),
    nextId: Math.max(state.nextId, kept.nextId, highest + 1),
  };
}

export function loadLines(store: LineStore, tableId: string, spectate: boolean): KeptLines | null {
  try {
    return parseKept(store.getItem(linesKey(tableId, spectate)));
  } catch {
    return null; // storage refused (a WebView's privacy settings): nothing to restore
  }
}

export function saveLines(store: LineStore, tableId: string, spectate: boolean, state: TableState, lang: string): void {
  try {
    store.setItem(linesKey(tableId, spectate), JSON.stringify(keptLines(state, lang)));
  } catch {
    // Full or refused: the lines last as long as the page.
  }
}
