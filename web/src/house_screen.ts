// A house game (Casino Hold'em or Russian Poker): place antes on boxes, see the cards, decide per box
// with the price of each decision, and the settlement line by line.
import { table, describe, newRequestId } from "./api";
import { h, mount, chips, card, toast } from "./ui";
import { go, type Screen } from "./main";
import { header, balancesLine } from "./lobby";
import { TableFeed, type LinkState } from "./table_feed";
import { HouseDecisionKind, type HouseRoundView, type TableView } from "./gen/poker/table/v1/table_pb";
import { GameVariant } from "./gen/poker/common/v1/common_pb";

const DECISION: Record<number, string> = {
  [HouseDecisionKind.CALL]: "Call", [HouseDecisionKind.FOLD]: "Fold", [HouseDecisionKind.EXCHANGE]: "Exchange",
  [HouseDecisionKind.BUY_SIXTH_CARD]: "Buy 6th card", [HouseDecisionKind.INSURE]: "Insure",
  [HouseDecisionKind.BUY_GAME]: "Buy a game", [HouseDecisionKind.TAKE_ANTE]: "Take ante",
};

/** A stable code in words: DEALER_DOES_NOT_QUALIFY -> dealer does not qualify. */
function words(code: string): string {
  return code.toLowerCase().replace(/_/g, " ");
}

export function showHouse(roomId: string, tableId: string): Screen {
  let view: TableView | null = null;
  let round: HouseRoundView | null = null;
  const selected = new Map<number, Set<number>>();
  const link = h("span", { class: "link", id: "link" }, "connecting…");
  const balances = h("div", { class: "balances", id: "balances" });
  const body = h("section", { class: "house", id: "house" });
  const russian = roomId.startsWith("russian");
  mount(header(russian ? "Russian Poker" : "Casino Hold'em", link, h("button", { id: "leave", onclick: () => go({ name: "lobby" }) }, "Leave")), balances, body);
  void balancesLine(balances);

  const feed = new TableFeed(tableId, false, (update) => {
    view = update.view;
    if (view.house?.round) round = view.house.round;
    render();
  }, (state: LinkState) => { link.textContent = state.text; link.className = `link ${state.link}`; });
  feed.start();

  async function deal(ante: bigint, dark: boolean): Promise<void> {
    try {
      const reply = await table.placeHouseBets({ requestId: newRequestId(), tableId, boxes: [{ box: 1, ante, dark, bonusBet: 0n }] });
      round = reply.round ?? round;
      render();
      void balancesLine(balances);
    } catch (error) {
      toast(describe(error), "error");
    }
  }

  async function decide(box: number, decision: HouseDecisionKind, amount = 0n): Promise<void> {
    if (!round) return;
    try {
      const reply = await table.makeHouseDecision({
        requestId: newRequestId(), tableId, roundId: round.roundId, box, decision,
        cardIndexes: [...(selected.get(box) ?? [])], amount,
      });
      round = reply.round ?? round;
      selected.delete(box);
      render();
      void balancesLine(balances);
    } catch (error) {
      toast(describe(error), "error");
    }
  }

  function render(): void {
    const house = view?.house;
    const min = house?.minAnte ?? 10n;
    const max = house?.maxAnte ?? 0n;
    const running = round && round.phase !== "COMPLETE";
    const ante = h("input", { type: "number", id: "ante", min: String(min), max: String(max), value: String(min), "aria-label": "ante" });
    const dark = h("input", { type: "checkbox", id: "dark" });
    const parts: Node[] = [
      h("p", { class: "muted" }, `Ante ${chips(min)}–${chips(max)} · the most one box wins ${chips(house?.maxPayout ?? 0n)} · jackpot ${chips(house?.jackpotBalance ?? 0n)}`),
    ];
    if (house?.paused) parts.push(h("p", { class: "banner" }, `New rounds are paused (${house.pausedReason}).`));
    if (round) {
      parts.push(
        h("div", { class: "dealer-row" }, h("span", {}, "Dealer "), ...round.dealerCards.map((c) => card(c.text, c.hidden))),
        round.board.length ? h("div", { class: "dealer-row", id: "board" }, h("span", {}, "Board "), ...round.board.map((c) => card(c.text))) : h("span", {}),
        ...round.boxes.map((box) => {
          const chosen = selected.get(box.box) ?? new Set<number>();
          return h("div", { class: "box", "data-box": box.box },
            h("div", {}, `Box ${box.box} · ante ${chips(box.ante)} · ${box.status}`),
            h("div", { class: "box-cards" }, ...box.cards.map((c, i) => {
              const el = card(c.text, c.hidden);
              if (chosen.has(i)) el.classList.add("chosen");
              el.addEventListener("click", () => { chosen.has(i) ? chosen.delete(i) : chosen.add(i); selected.set(box.box, chosen); render(); });
              return el;
            })),
            h("div", { class: "actions" }, ...box.options.map((o) =>
              h("button", { "data-decision": HouseDecisionKind[o.decision], onclick: () => void decide(box.box, o.decision, o.decision === HouseDecisionKind.INSURE ? o.minAmount : 0n) },
                `${DECISION[o.decision] ?? HouseDecisionKind[o.decision]}${o.cost ? ` (${chips(o.cost)})` : ""}`))),
            ...box.settlement.map((line) => h("div", { class: "settlement" }, `${words(line.item)} ${words(line.outcome)} ${line.amount >= 0n ? "+" : ""}${chips(line.amount)} · ${words(line.reason)}`)),
          );
        }),
        h("p", { class: "round-figures", id: "round-figures" }, `staked ${chips(round.staked)} · paid out ${chips(round.paidOut)} · ${round.phase}`),
        ...round.notes.map((n) => h("p", { class: "muted" }, n)),
      );
    }
    if (!running) {
      parts.push(h("div", { class: "sit" }, h("label", {}, "Ante ", ante),
        view?.variant === GameVariant.RUSSIAN_POKER || russian ? h("label", {}, dark, " dark box") : null,
        h("button", { id: "deal", class: "play", onclick: () => void deal(BigInt(Math.floor(Number(ante.value) || 0)), dark.checked) }, round ? "Next round" : "Deal")));
    }
    body.replaceChildren(...parts);
  }

  return { leave: () => feed.stop() };
}
