// A live table as its spectators see it (every staff role: SpectateTable through the staff door with
// the staff token): the public view, late, never a hidden card. Read-only: the seats with their names,
// stacks, bets and cards as the view gives them (face down unless shown), the board, the pot, whose
// turn it is, the hand's state and its log. The stream is the players' (feed_loop.ts: re-opened with
// backoff after a break, at once after its token's expiry) and so is the log (table_model.ts); here it
// is opened with the staff's client, re-opened when the staff token is renewed, and closed by `stop()`
// (leaving the screen, another table, the close button).
import { h, card, chips } from "../ui";
import { t, formatNumber } from "../i18n";
import { st } from "../i18n/staff_words";
import { FeedLoop, type LinkState, type TableUpdate } from "../feed_loop";
import { initialState, reduce, type TableState } from "../table_model";
import { SeatStatus, Street, TablePhase, type SeatView, type TableView } from "../gen/poker/table/v1/table_pb";
import { tableStreams } from "./api";
import { onSessionChange } from "./session";

export interface LiveTable {
  element: HTMLElement;
  /** Closes the stream (the view stays as it was last drawn). */
  stop(): void;
}

/** The lines of the hand log shown (the newest last). */
const LOG_SHOWN = 12;

function streetWords(street: Street): string {
  switch (street) {
    case Street.PREFLOP: return t("street.preflop");
    case Street.FLOP: return t("street.flop");
    case Street.TURN: return t("street.turn");
    case Street.RIVER: return t("street.river");
    case Street.SHOWDOWN: return t("street.showdown");
    default: return "";
  }
}

/** The hand's state in words: waiting, between hands, paused, or the hand's street. */
export function handState(view: TableView): string {
  switch (view.phase) {
    case TablePhase.WAITING_FOR_PLAYERS: return st("live.waiting");
    case TablePhase.BETWEEN_HANDS: return st("live.between_hands");
    case TablePhase.PAUSED: return st("live.paused");
    case TablePhase.HAND_IN_PROGRESS: return st("live.in_hand", { street: streetWords(view.street) || "—" });
    default: return "—";
  }
}

function seatName(seat: SeatView): string {
  return seat.displayName || t("seat.label", { seat: seat.seat });
}

function seatState(seat: SeatView): string {
  if (seat.folded) return st("live.seat_folded");
  if (seat.allIn) return st("live.seat_all_in");
  switch (seat.status) {
    case SeatStatus.WAITING: return st("live.seat_waiting");
    case SeatStatus.SITTING_OUT: return st("live.seat_sitting_out");
    case SeatStatus.DISCONNECTED: return st("live.seat_disconnected");
    default: return st("live.seat_playing");
  }
}

export function liveTable(tableId: string, onClose: () => void): LiveTable {
  let state: TableState = initialState("", true);
  const link = h("p", { class: "status muted", id: "live-link", role: "status", "aria-live": "polite" });
  const facts = h("dl", { class: "facts", id: "live-facts" });
  const seats = h("div", { id: "live-seats" });
  const log = h("ol", { class: "live-log", id: "live-log" });
  let opened = 0;
  let loop: FeedLoop | null = null;
  let stopped = false;

  const element = h(
    "section",
    { class: "panel live-table", id: "live-table", "data-table": tableId },
    h(
      "div",
      { class: "replay-head" },
      h("h2", {}, st("live.title", { table: tableId })),
      h("button", { type: "button", class: "quiet", id: "live-close", onclick: () => { stop(); onClose(); } }, st("live.close")),
    ),
    h("p", { class: "warn", id: "live-delay" }, st("live.delayed")),
    link,
    facts,
    seats,
    h("h3", {}, st("live.log")),
    log,
  );

  function draw(view: TableView): void {
    const turn = view.phase === TablePhase.HAND_IN_PROGRESS ? view.seats.find((s) => s.seat === view.toActSeat && (s.playerId || s.displayName)) : undefined;
    const pot = view.pots.reduce((n, p) => n + p.amount, 0n) + view.seats.reduce((n, s) => n + s.betThisRound, 0n);
    facts.replaceChildren(
      h("dt", {}, st("live.state")), h("dd", { id: "live-state", "data-phase": TablePhase[view.phase] }, handState(view)),
      h("dt", {}, st("live.hand")), h("dd", {}, view.handId ? h("code", { id: "live-hand" }, view.handId) : "—"),
      h("dt", {}, st("live.turn")), h("dd", { id: "live-turn" }, turn ? h("span", { class: "data" }, seatName(turn)) : "—"),
      h("dt", {}, st("live.board")), h("dd", { id: "live-board", class: "board-cards" }, ...(view.board.length ? view.board.map((c) => card(c.text, c.hidden)) : ["—"])),
      h("dt", {}, st("live.pot")), h("dd", { id: "live-pot" }, chips(pot)),
    );
    const taken = view.seats.filter((s) => s.playerId || s.displayName).sort((a, b) => a.seat - b.seat);
    seats.replaceChildren(
      taken.length
        ? h(
            "div",
            { class: "table-wrap" },
            h(
              "table",
              { class: "grid", id: "live-seat-table" },
              h("thead", {}, h("tr", {}, ...[st("live.seat"), st("live.player"), st("live.stack"), st("live.bet"), st("live.seat_state"), st("live.cards")].map((c) => h("th", { scope: "col" }, c)))),
              h(
                "tbody",
                {},
                ...taken.map((s) =>
                  h(
                    "tr",
                    { class: `live-seat${turn === s ? " turn" : ""}${s.folded ? " folded" : ""}`, "data-seat": s.seat },
                    h("td", {}, formatNumber(s.seat), view.buttonSeat === s.seat ? h("span", { class: "dealer", title: t("seat.dealer_name") }, t("seat.dealer")) : null),
                    h("td", {}, h("span", { class: "data seat-name" }, seatName(s))),
                    h("td", {}, chips(s.stack)),
                    h("td", {}, s.betThisRound > 0n ? chips(s.betThisRound) : "—"),
                    h("td", {}, seatState(s)),
                    h("td", { class: "seat-cards" }, ...s.holeCards.map((c) => card(c.text, c.hidden))),
                  ),
                ),
              ),
            ),
          )
        : h("p", { class: "muted" }, st("live.no_one")),
    );
    const lines = state.log.slice(-LOG_SHOWN);
    log.replaceChildren(...lines.map((line) => h("li", { class: line.heading ? "heading" : "" }, line.text)));
  }

  const onUpdate = (update: TableUpdate): void => {
    state = reduce(state, { type: "update", view: update.view, events: update.events });
    element.dataset.updates = String(Number(element.dataset.updates ?? "0") + 1);
    draw(update.view);
  };
  const onLink = (s: LinkState): void => {
    link.textContent = s.text;
    link.dataset.link = s.link;
    link.className = `status ${s.link === "failed" ? "error" : s.link === "live" ? "ok" : "muted"}`;
  };

  function open(): void {
    loop?.stop();
    opened += 1;
    element.dataset.opened = String(opened);
    loop = new FeedLoop(
      {
        open: (signal) => tableStreams.spectateTable({ tableId }, { signal }),
        setTimer: (run, ms) => window.setTimeout(run, ms),
        clearTimer: (timer) => window.clearTimeout(timer),
        online: () => navigator.onLine,
      },
      onUpdate,
      onLink,
    );
    void loop.run();
  }

  // A renewed staff token: the stream opened with the old one is opened again with the new one (a
  // stream outlives no token; the first message of the new one is a full view).
  const forget = onSessionChange((s, why) => {
    if (!stopped && s && why === "renewed") open();
  });

  function stop(): void {
    if (stopped) return;
    stopped = true;
    forget();
    loop?.stop();
    loop = null;
    element.dataset.closed = "true";
  }

  open();
  return { element, stop };
}
