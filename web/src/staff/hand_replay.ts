// A hand opened by staff (the fair-play case's hands, for risk; a player's hands, for support and
// risk): the players' replayer (../replayer_screen.ts) stepping through it with every card face up
// (GetHand answers staff with the whole record: every seat's hole cards), and under it the record as
// a table (handView: seats, cards, actions with decision times, pots). One replayer plays
// at a time; leaving the screen stops it.
import { h, chips, signedChips, cardText } from "../ui";
import { formatNumber } from "../i18n";
import { playWord, st } from "../i18n/staff_words";
import { history } from "./api";
import { load, poolName, table, when } from "./widgets";
import type { HandRecord } from "../gen/poker/history/v1/history_pb";
import { replayerView, type ReplayerView } from "../replayer_screen";

function cards(list: readonly { text: string; hidden: boolean }[]): string {
  return list.map((c) => (c.hidden || !c.text ? "▒" : cardText(c.text))).join(" "); // i18n-neutral: card notation
}

/** A hand as staff read it: the seats with every card, the board, the actions, the pots. */
export function handView(hand: HandRecord): HTMLElement {
  const seatName = (seat: number): string => {
    const s = hand.seats.find((x) => x.seat === seat);
    return s ? s.displayName || s.playerId : st("hand.seat_number", { seat: seat + 1 });
  };
  return h(
    "div",
    { class: "hand", id: "hand-view", "data-hand": hand.handId },
    h("h4", {}, st("hand.title", { hand: hand.handId, table: hand.tableId })),
    h("p", { class: "muted" }, st("hand.when", { start: when(hand.startTime), end: when(hand.endTime), pool: poolName(hand.pool) })),
    hand.voided ? h("p", { class: "warn" }, st("hand.voided")) : null,
    table(
      [st("hand.seat"), st("hand.player"), st("hand.cards"), st("hand.start_stack"), st("hand.result")],
      hand.seats.map((s) => [
        formatNumber(s.seat + 1),
        h("span", {}, s.displayName || s.playerId, " ", h("code", { class: "muted" }, s.playerId)),
        cards(s.holeCards),
        chips(s.startingStack),
        h("span", { class: s.netResult > 0n ? "ok" : s.netResult < 0n ? "bad" : "" }, signedChips(s.netResult)),
      ]),
    ),
    h("p", {}, st("hand.board", { cards: hand.board.length ? cards(hand.board) : "—" })),
    h(
      "ol",
      { class: "actions-list" },
      ...hand.actions.map((a) =>
        h("li", {}, st("hand.action", { street: playWord(a.street), player: seatName(a.seat), action: playWord(a.kind), amount: a.to || a.amount, ms: a.decisionMs })),
      ),
    ),
    h("p", {}, st("hand.pots", { pots: hand.pots.map((p) => chips(p.amount)).join(" + ") || "0", rake: hand.rake })),
  );
}

let playing: ReplayerView | null = null;

/** Stops the replayer that is open (if any). */
export function stopReplay(): void {
  playing?.stop();
  playing = null;
}

/** Loads the hand into `out`: the replayer with every card, then the record. */
export function openHand(out: HTMLElement, handId: string): void {
  stopReplay();
  void load(out, async () => {
    const hand = (await history.getHand({ handId })).hand!;
    const view = replayerView(hand, "", () => {
      if (playing === view) playing = null;
      view.element.remove();
    }, true);
    view.element.classList.add("every-card");
    playing = view;
    return [view.element, handView(hand)];
  });
}
