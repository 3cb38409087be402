// The table feed: the one module that knows the table stream's contract: WatchTable /
// SpectateTable, one message per table step (issue 28) with every event the step caused, in order,
// and the full view after them (a message with no event is a full view alone: the first, or the one
// that replaces what a slow stream missed). The screens get a `TableUpdate` per message.
//
// It stays open by itself: after a dropped link (network, a gateway or shard restart, a table that
// moved) it re-opens with backoff and says so; the seat is kept meanwhile (a seat is held by its
// cashier session, not by the stream), and the first update after a re-open is a full view. A stream
// ended by its token's expiry (UNAUTHENTICATED TOKEN_EXPIRED) is re-opened at once with the renewed
// token (session.ts renews at half-life), without a word to the player.
import { tableStreams, failure } from "./api";
import { t } from "./i18n";
import { refusalText } from "./i18n/words";
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

const PERMANENT = new Set(["NotFound", "PermissionDenied", "InvalidArgument", "Unauthenticated"]);

export function reconnectDelay(attempt: number): number {
  return Math.min(3000, 200 * 2 ** Math.max(0, attempt - 1));
}

export class TableFeed {
  private controller: AbortController | null = null;
  private stopped = false;
  private wake: (() => void) | null = null;
  reconnects = 0;

  constructor(
    private readonly tableId: string,
    private readonly spectate: boolean,
    private readonly onUpdate: (update: TableUpdate) => void,
    private readonly onLink: (state: LinkState) => void,
  ) {
    window.addEventListener("online", this.retryNow);
    window.addEventListener("offline", this.dropNow);
  }

  private retryNow = (): void => {
    this.wake?.();
  };

  // The WebView says the network is gone: drop the stream now rather than wait for a dead socket to
  // time out, and re-open as soon as it is back.
  private offline = false;
  private dropNow = (): void => {
    this.offline = true;
    this.controller?.abort();
  };

  start(): void {
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    this.controller?.abort();
    this.wake?.();
    window.removeEventListener("online", this.retryNow);
    window.removeEventListener("offline", this.dropNow);
  }

  private open(signal: AbortSignal): AsyncIterable<{ view?: TableView; events: TableEvent[] }> {
    const request = { tableId: this.tableId };
    return this.spectate
      ? tableStreams.spectateTable(request, { signal })
      : tableStreams.watchTable(request, { signal });
  }

  private async run(): Promise<void> {
    let failures = 0;
    let everLive = false;
    let renewing = false;
    this.onLink({ link: "connecting", text: t("link.connecting"), attempts: 0 });
    while (!this.stopped) {
      this.controller = new AbortController();
      let offline = false;
      let live = false;
      try {
        for await (const message of this.open(this.controller.signal)) {
          if (!live && renewing) {
            live = true;
            renewing = false;
          } else if (!live) {
            live = true;
            if (everLive || failures) this.reconnects += 1;
            this.onLink({
              link: "live",
              text: everLive || failures ? t("link.reconnected") : t("link.connected"),
              attempts: 0,
            });
            failures = 0;
            everLive = true;
          }
          if (message.view) this.onUpdate({ view: message.view, events: message.events });
        }
      } catch (error) {
        if (this.stopped) return;
        const f = failure(error);
        if (live && f.reason === "TOKEN_EXPIRED") {
          // No stream outlives its token: this one ended with the token it was opened with. Open it
          // again at once with the renewed one (its first message is a full view): no visible break.
          renewing = true;
          continue;
        }
        if (PERMANENT.has(f.code)) {
          this.onLink({ link: "failed", text: t("link.refused", { why: refusalText(f) }), attempts: 0 });
          return;
        }
        offline = this.offline;
      }
      if (this.stopped) return;
      renewing = false; // a break the player is told of, and then of the way back
      failures += 1;
      this.onLink({ link: "reconnecting", text: t(offline ? "link.lost_offline" : "link.lost", { attempt: failures }), attempts: failures });
      await new Promise<void>((resolve) => {
        const timer = window.setTimeout(resolve, reconnectDelay(failures));
        this.wake = () => {
          window.clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
      if (!navigator.onLine) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
      }
      this.offline = false;
    }
  }
}
