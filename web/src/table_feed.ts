// The table feed: the one module that knows the table stream's contract: WatchTable /
// SpectateTable, one message per table step (issue 28) with every event the step caused, in order,
// and the full view after them (a message with no event is a full view alone: the first, or the one
// that replaces what a slow stream missed). The screens get a `TableUpdate` per message.
//
// It stays open by itself (feed_loop.ts decides how): after a dropped link (network, a gateway or
// shard restart, a table that moved) it re-opens with backoff and says so; the seat is kept meanwhile
// (a seat is held by its cashier session, not by the stream), and the first update after a re-open is
// a full view. A stream ended by its token's expiry (UNAUTHENTICATED TOKEN_EXPIRED) is re-opened at
// once with the renewed token (session.ts renews at half-life), without a word to the player. Here:
// the gateway's stream, the window's timers and the WebView's online / offline events.
import { tableStreams } from "./api";
import { FeedLoop, type LinkState, type TableUpdate } from "./feed_loop";

export { reconnectDelay, type Link, type LinkState, type TableUpdate } from "./feed_loop";

export class TableFeed {
  private readonly loop: FeedLoop;

  constructor(tableId: string, spectate: boolean, onUpdate: (update: TableUpdate) => void, onLink: (state: LinkState) => void) {
    const request = { tableId };
    this.loop = new FeedLoop(
      {
        open: (signal) => (spectate ? tableStreams.spectateTable(request, { signal }) : tableStreams.watchTable(request, { signal })),
        setTimer: (run, ms) => window.setTimeout(run, ms),
        clearTimer: (timer) => window.clearTimeout(timer),
        online: () => navigator.onLine,
      },
      onUpdate,
      onLink,
    );
    window.addEventListener("online", this.online);
    window.addEventListener("offline", this.offline);
  }

  get reconnects(): number {
    return this.loop.reconnects;
  }

  private online = (): void => this.loop.wake();

  // The WebView says the network is gone: drop the stream now, and re-open as soon as it is back.
  private offline = (): void => this.loop.drop();

  start(): void {
    void this.loop.run();
  }

  stop(): void {
    this.loop.stop();
    window.removeEventListener("online", this.online);
    window.removeEventListener("offline", this.offline);
  }
}
