// A house game (Casino Hold'em or Russian Poker): place antes on boxes, see the cards, decide per box
// with the price of each decision, and the settlement line by line.
import { table, describe, newRequestId } from "./api";
import { h, mount, card, signedChips, toast } from "./ui";
import { known, t } from "./i18n";
import { codeWords, noteText } from "./i18n/words";
import { go, type Screen } from "./main";
import { header, balancesLine, variantName } from "./lobby";
import { TableFeed, type LinkState } from "./table_feed";
import { HouseDecisionKind, type HouseRoundView, type TableView } from "./gen/poker/table/v1/table_pb";
import { GameVariant } from "./gen/poker/common/v1/common_pb";

/** A decision's button label, in words. */
function decisionName(decision: HouseDecisionKind): string {
  const key = `decision.${HouseDecisionKind[decision]}`;
  return known(key) ? t(key) : t("decision.other");
}

export function showHouse(roomId: string, tableId: string): Screen {
  let view: TableView | null = null;
  let round: HouseRoundView | null = null;
  const selected = new Map<number, Set<number>>();
  const link = h("span", { class: "link", id: "link" }, t("link.connecting"));
  const balances = h("div", { class: "balances", id: "balances" });
  const body = h("section", { class: "house", id: "house" });
  const russian = roomId.startsWith("russian");
  mount(header(variantName(russian ? GameVariant.RUSSIAN_POKER : GameVariant.CASINO_HOLDEM), link, h("button", { id: "leave", onclick: () => go({ name: "lobby" }) }, t("house.leave"))), balances, body);
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
    const ante = h("input", { type: "number", id: "ante", min: String(min), max: String(max), value: String(min), "aria-label": t("house.ante_label") });
    const dark = h("input", { type: "checkbox", id: "dark" });
    const parts: Node[] = [
      h("p", { class: "muted" }, t("house.limits", { min, max, payout: house?.maxPayout ?? 0n, jackpot: house?.jackpotBalance ?? 0n })),
    ];
    if (house?.paused) parts.push(h("p", { class: "banner" }, t("house.paused", { why: codeWords(house.pausedReason) })));
    if (round) {
      parts.push(
        h("div", { class: "dealer-row" }, h("span", {}, t("house.dealer"), " "), ...round.dealerCards.map((c) => card(c.text, c.hidden))),
        round.board.length ? h("div", { class: "dealer-row", id: "board" }, h("span", {}, t("house.board"), " "), ...round.board.map((c) => card(c.text))) : h("span", {}),
        ...round.boxes.map((box) => {
          const chosen = selected.get(box.box) ?? new Set<number>();
          return h("div", { class: "box", "data-box": box.box },
            h("div", { "data-status": box.status }, t("house.box", { box: box.box, ante: box.ante, status: codeWords(box.status) })),
            h("div", { class: "box-cards" }, ...box.cards.map((c, i) => {
              const el = card(c.text, c.hidden);
              if (chosen.has(i)) el.classList.add("chosen");
              el.addEventListener("click", () => { chosen.has(i) ? chosen.delete(i) : chosen.add(i); selected.set(box.box, chosen); render(); });
              return el;
            })),
            h("div", { class: "actions" }, ...box.options.map((o) =>
              h("button", { "data-decision": HouseDecisionKind[o.decision], onclick: () => void decide(box.box, o.decision, o.decision === HouseDecisionKind.INSURE ? o.minAmount : 0n) },
                o.cost ? t("house.decision_cost", { decision: decisionName(o.decision), cost: o.cost }) : decisionName(o.decision)))),
            box.options.some((o) => o.decision === HouseDecisionKind.EXCHANGE) ? h("p", { class: "muted" }, t("house.exchange_hint")) : null,
            ...box.settlement.map((line) => h("div", { class: "settlement" },
              t("house.settlement", { item: codeWords(line.item), outcome: codeWords(line.outcome), change: signedChips(line.amount), why: codeWords(line.reason) }))),
          );
        }),
        h("p", { class: "round-figures", id: "round-figures", "data-phase": round.phase },
          t("house.round_figures", { staked: round.staked, paid: round.paidOut, phase: codeWords(round.phase) })),
        ...round.notes.map((n) => h("p", { class: "muted" }, noteText(n))),
      );
    }
    if (!running) {
      parts.push(h("div", { class: "sit" }, h("label", {}, t("house.ante"), " ", ante),
        view?.variant === GameVariant.RUSSIAN_POKER || russian ? h("label", {}, dark, " ", t("house.dark_box")) : null,
        h("button", { id: "deal", class: "play", onclick: () => void deal(BigInt(Math.floor(Number(ante.value) || 0)), dark.checked) }, round ? t("house.next_round") : t("house.deal"))));
    }
    body.replaceChildren(...parts);
  }

  return { leave: () => feed.stop() };
}
