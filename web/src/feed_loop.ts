// The table stream's reconnect logic, apart from the browser so it can be tested in Node
// (tests/web/test_feed_loop.py): what to do when a stream gives its first message or ends, as pure
// functions of what the loop remembers, and the loop itself over what it is handed (a way to open the
// stream, timers, whether the network is up). table_feed.ts hands it the gateway's stream, the
// window's timers and the WebView's online / offline events.
//
// - A stream that ends (a dropped link, a gateway or shard restart, a table that moved) is opened again
//   after a backoff of 0.2 s doubling to 3 s, and the player is told (attempt n); offline, it waits for
//   the network before trying. The first message after a re-open is a full view, and the player is told
//   they are back ("reconnected - your seat was kept").
// - A stream ended by its token's expiry (UNAUTHENTICATED TOKEN_EXPIRED) after it was live is opened
//   again at once with the renewed token (session.ts renews at half-life), without a word.
// - A refusal that another try would not change (not found, not allowed, a bad request, not signed in)
//   ends the loop, said in words.
import { t } from "./i18n";
import { refusalText } from "./i18n/words";
import { failure, type Failure } from "./errors";
import type { TableEvent, TableView } from "./gen/poker/table/v1/table_pb";

export interface TableUpdate {
  view: TableView;
  events: TableEvent[];
}

export type Link = "connecting" | "live" | "reconnecting" | "failed";

export interface LinkState {
  link: Link;
  text: string;
  attempts: number;
}

/** One message of the stream (a step's events and the view after them; no event: a full view). */
export interface FeedMessage {
  view?: TableView;
  events: TableEvent[];
}

const PERMANENT = new Set(["NotFound", "PermissionDenied", "InvalidArgument", "Unauthenticated"]);
export const FIRST_DELAY_MS = 200;
export const MAX_DELAY_MS = 3000;

/** The wait before re-open attempt `attempt` (from 1): 0.2 s doubling, at most 3 s. */
export function reconnectDelay(attempt: number): number {
  return Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.max(0, Math.min(attempt, 32) - 1));
}

/** What the loop remembers between streams. */
export interface FeedMemory {
  /** Breaks in a row since the stream was last live. */
  failures: number;
  /** Whether a stream was ever live (a later first message is a reconnect). */
  everLive: boolean;
  /** The stream was opened again for a renewed token: its first message says nothing. */
  renewing: boolean;
}

export const FRESH: FeedMemory = { failures: 0, everLive: false, renewing: false };

/** A stream's first message: what the player is told (nothing after a token renewal), and whether it
 * counts as a reconnect. */
export function firstMessage(memory: FeedMemory): { memory: FeedMemory; link: LinkState | null; reconnected: boolean } {
  if (memory.renewing) return { memory: { ...memory, renewing: false }, link: null, reconnected: false };
  const again = memory.everLive || memory.failures > 0;
  return {
    memory: { failures: 0, everLive: true, renewing: false },
    link: { link: "live", text: again ? t("link.reconnected") : t("link.connected"), attempts: 0 },
    reconnected: again,
  };
}

export type AfterEnd =
  | { then: "reopen" }
  | { then: "stop"; link: LinkState }
  | { then: "retry"; delay: number; link: LinkState };

/** A stream ended: with a failure (null: it just ended), after it was live or not, the network gone
 * or not. Open it again at once (a token renewal), stop (a refusal another try would not change), or
 * try again after the backoff, saying so. */
export function streamEnded(memory: FeedMemory, live: boolean, failed: Failure | null, offline: boolean): { memory: FeedMemory; next: AfterEnd } {
  if (failed && live && failed.reason === "TOKEN_EXPIRED") {
    // No stream outlives its token: this one ended with the token it was opened with. Open it again
    // at once with the renewed one (its first message is a full view): no visible break.
    return { memory: { ...memory, renewing: true }, next: { then: "reopen" } };
  }
  if (failed && PERMANENT.has(failed.code)) {
    return { memory, next: { then: "stop", link: { link: "failed", text: t("link.refused", { why: refusalText(failed) }), attempts: 0 } } };
  }
  // A break the player is told of, and then of the way back.
  const failures = memory.failures + 1;
  return {
    memory: { ...memory, failures, renewing: false },
    next: {
      then: "retry",
      delay: reconnectDelay(failures),
      link: { link: "reconnecting", text: t(offline ? "link.lost_offline" : "link.lost", { attempt: failures }), attempts: failures },
    },
  };
}

/** What the loop is handed: the stream, timers and the network's state. */
export interface FeedEnv {
  open(signal: AbortSignal): AsyncIterable<FeedMessage>;
  setTimer(run: () => void, ms: number): number;
  clearTimer(timer: number): void;
  online(): boolean;
}

/** The stream kept open: updates to `onUpdate`, the link's state to `onLink`, until `stop()`. */
export class FeedLoop {
  private controller: AbortController | null = null;
  private stopped = false;
  private wakeUp: (() => void) | null = null;
  private offline = false;
  /** Re-opens that reached a live stream again (a token renewal is not one). */
  reconnects = 0;

  constructor(
    private readonly env: FeedEnv,
    private readonly onUpdate: (update: TableUpdate) => void,
    private readonly onLink: (state: LinkState) => void,
  ) {}

  /** The network is back (or the player asked): try now rather than at the end of the wait. */
  wake(): void {
    this.wakeUp?.();
  }

  /** The network is gone: drop the stream now rather than wait for a dead socket to time out. */
  drop(): void {
    this.offline = true;
    this.controller?.abort();
  }

  stop(): void {
    this.stopped = true;
    this.controller?.abort();
    this.wakeUp?.();
  }

  async run(): Promise<void> {
    let memory = FRESH;
    this.onLink({ link: "connecting", text: t("link.connecting"), attempts: 0 });
    while (!this.stopped) {
      this.controller = new AbortController();
      let live = false;
      let failed: Failure | null = null;
      let offline = false;
      try {
        for await (const message of this.env.open(this.controller.signal)) {
          if (this.stopped) return;
          if (!live) {
            live = true;
            const first = firstMessage(memory);
            memory = first.memory;
            if (first.reconnected) this.reconnects += 1;
            if (first.link) this.onLink(first.link);
          }
          if (message.view) this.onUpdate({ view: message.view, events: message.events });
        }
      } catch (error) {
        if (this.stopped) return;
        failed = failure(error);
        offline = this.offline;
      }
      if (this.stopped) return;
      const ended = streamEnded(memory, live, failed, offline);
      memory = ended.memory;
      const next = ended.next;
      if (next.then === "reopen") continue;
      this.onLink(next.link);
      if (next.then === "stop") return;
      await new Promise<void>((resolve) => {
        const timer = this.env.setTimer(resolve, next.delay);
        this.wakeUp = () => {
          this.env.clearTimer(timer);
          resolve();
        };
      });
      this.wakeUp = null;
      if (!this.stopped && !this.env.online()) {
        await new Promise<void>((resolve) => (this.wakeUp = resolve));
        this.wakeUp = null;
      }
      this.offline = false;
    }
  }
}
