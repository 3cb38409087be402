// A house game (Casino Hold'em or Russian Poker): place antes on boxes, see the cards, decide per box
// with the price of each decision, and the settlement line by line. Where the round is reads as a
// sentence; only the decisions the round allows now are offered; Russian Poker's exchange is two steps
// (pick the cards, then exchange) and says so; the rules and the pay tables open in a sheet.
import { table, describe, newRequestId } from "./api";
import { h, mount, card, signedChips, toast } from "./ui";
import { CASINO_HOLDEM_ANTE, CASINO_HOLDEM_BET_ODDS, RUSSIAN_POKER_BET, RUSSIAN_POKER_BONUS, RUSSIAN_POKER_JACKPOT_PERCENT, type Combination, type PayLine } from "./house_pay_tables";
import { known, t, type Key } from "./i18n";
import { codeWords, noteText } from "./i18n/words";
import { go, type Screen } from "./router";
import { header, balancesLine, variantName } from "./lobby";
import { TableFeed, type LinkState } from "./table_feed";
import { HouseDecisionKind, type HouseBoxView, type HouseDecisionOption, type HouseRoundView, type TableView } from "./gen/poker/table/v1/table_pb";
import { GameVariant } from "./gen/poker/common/v1/common_pb";

/** A decision's button label, in words. */
function decisionName(decision: HouseDecisionKind): string {
  const key = `decision.${HouseDecisionKind[decision]}`;
  return known(key) ? t(key) : t("decision.other");
}

/** A combination's name in words. */
function combinationName(code: Combination): string {
  const key = `combination.${code}`;
  return known(key) ? t(key) : "";
}

function payTable(title: string, lines: readonly PayLine[], id: string): HTMLElement {
  return h("table", { class: "pay-table", id },
    h("caption", {}, title),
    h("thead", {}, h("tr", {}, h("th", {}, t("house.combination")), h("th", {}, t("house.pays")))),
    h("tbody", {}, ...lines.map((line) => h("tr", { "data-combination": line.combination },
      h("td", {}, combinationName(line.combination)), h("td", {}, t("house.odds", { odds: line.odds }))))));
}

/** The rules and the pay tables of the game, in a sheet over the table (closed with ×, a tap
 * outside it, or Escape). */
/** The dealer's cards not shown yet, face down, once the round is dealt: the view sends only the
 * cards the player may see (Russian Poker's up-card, Casino Hold'em's none until the reveal), but the
 * dealer holds five (Russian Poker) or two (Casino Hold'em) from the deal on. */
function dealerBacks(round: HouseRoundView, russian: boolean): HTMLElement[] {
  const dealt = round.boxes.some((box) => box.cards.length > 0);
  const missing = dealt ? Math.max(0, (russian ? 5 : 2) - round.dealerCards.length) : 0;
  return Array.from({ length: missing }, () => card("", true));
}

function rulesSheet(russian: boolean, payout: bigint, onClose: () => void): HTMLElement {
  const rules: Key[] = russian
    ? ["house.rules.russian.deal", "house.rules.russian.exchange", "house.rules.russian.decide", "house.rules.russian.dealer", "house.rules.russian.dark"]
    : ["house.rules.casino.deal", "house.rules.casino.decide", "house.rules.casino.showdown", "house.rules.casino.dealer"];
  const tables = russian
    ? [
        payTable(t("house.pay_table_bet"), RUSSIAN_POKER_BET, "pay-table-bet"),
        payTable(t("house.pay_table_bonus"), RUSSIAN_POKER_BONUS, "pay-table-bonus"),
        h("p", { class: "muted" }, ...RUSSIAN_POKER_JACKPOT_PERCENT.map((j, i) =>
          (i ? " · " : "") + t("house.jackpot_share", { combination: combinationName(j.combination), percent: j.percent }))),
      ]
    : [
        payTable(t("house.pay_table_ante"), CASINO_HOLDEM_ANTE, "pay-table-ante"),
        h("p", { class: "muted" }, t("house.bet_pays", { odds: CASINO_HOLDEM_BET_ODDS })),
      ];
  const close = h("button", { type: "button", class: "quiet sheet-close", id: "house-rules-close", "aria-label": t("message.close"), title: t("message.close"), onclick: onClose }, "×");
  const sheet = h("section", { class: "sheet", id: "house-rules-sheet", role: "dialog", "aria-modal": "true", "aria-labelledby": "house-rules-title" },
    h("div", { class: "sheet-head" }, h("h2", { id: "house-rules-title" }, russian ? t("house.rules_title_russian") : t("house.rules_title_casino")), close),
    h("ol", { class: "rules" }, ...rules.map((key) => h("li", {}, t(key)))),
    h("p", { class: "muted" }, t("house.rules.max_payout", { payout })),
    ...tables);
  const backdrop = h("div", { class: "sheet-backdrop", id: "house-rules", onclick: (event: Event) => { if (event.target === backdrop) onClose(); } }, sheet);
  return backdrop;
}

/** Where the round is, as a sentence (never the round's code). */
function phaseText(round: HouseRoundView | null, russian: boolean): string {
  if (!round) return t("house.phase.place_ante");
  switch (round.phase) {
    case "DECISIONS":
      return russian ? t("house.phase.russian_decisions") : t("house.phase.casino_decisions");
    case "NO_GAME_CHOICES":
      return t("house.phase.no_game");
    case "COMPLETE":
      return t("house.phase.complete", { change: signedChips(round.paidOut - round.staked) });
    default:
      return t("house.phase.other", { phase: codeWords(round.phase) });
  }
}

export function showHouse(roomId: string, tableId: string): Screen {
  let view: TableView | null = null;
  let round: HouseRoundView | null = null;
  const selected = new Map<number, Set<number>>();
  const link = h("span", { class: "link", id: "link" }, t("link.connecting"));
  const balances = h("div", { class: "balances", id: "balances" });
  const body = h("section", { class: "house", id: "house" });
  const isRussian = (): boolean => (view ? view.variant === GameVariant.RUSSIAN_POKER : roomId.startsWith("russian"));
  let sheet: HTMLElement | null = null;
  const closeRules = (): void => { sheet?.remove(); sheet = null; document.removeEventListener("keydown", onKey); };
  const onKey = (event: KeyboardEvent): void => { if (event.key === "Escape") closeRules(); };
  const openRules = (): void => {
    closeRules();
    sheet = rulesSheet(isRussian(), view?.house?.maxPayout ?? 0n, closeRules);
    document.body.append(sheet);
    document.addEventListener("keydown", onKey);
    sheet.querySelector<HTMLButtonElement>(".sheet-close")?.focus();
  };
  const rulesButton = h("button", { type: "button", class: "quiet", id: "house-rules-open", onclick: openRules }, t("house.rules_button"));
  mount(header(variantName(roomId.startsWith("russian") ? GameVariant.RUSSIAN_POKER : GameVariant.CASINO_HOLDEM), link, h("button", { id: "leave", onclick: () => go({ name: "lobby" }) }, t("house.leave"))), balances, body);
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
      selected.clear();
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
        cardIndexes: decision === HouseDecisionKind.EXCHANGE ? [...(selected.get(box) ?? [])] : [], amount,
      });
      round = reply.round ?? round;
      selected.delete(box);
      render();
      void balancesLine(balances);
    } catch (error) {
      toast(describe(error), "error");
    }
  }

  function decisionButton(box: HouseBoxView, option: HouseDecisionOption, chosen: Set<number>): HTMLElement {
    const kind = HouseDecisionKind[option.decision];
    if (option.decision === HouseDecisionKind.EXCHANGE) {
      // Two steps: the cards first, then this button (which says how many and what it costs).
      const picked = chosen.size;
      return h("button", { "data-decision": kind, class: picked ? "" : "quiet", disabled: !picked, onclick: () => void decide(box.box, option.decision) },
        picked ? t("house.exchange_picked", { count: picked, cost: option.cost }) : t("house.exchange_pick_first"));
    }
    return h("button", { "data-decision": kind, class: option.decision === HouseDecisionKind.FOLD ? "fold" : "", onclick: () => void decide(box.box, option.decision, option.decision === HouseDecisionKind.INSURE ? option.minAmount : 0n) },
      option.cost ? t("house.decision_cost", { decision: decisionName(option.decision), cost: option.cost }) : decisionName(option.decision));
  }

  function boxElement(box: HouseBoxView, deciding: boolean): HTMLElement {
    const chosen = selected.get(box.box) ?? new Set<number>();
    // Only the decisions the round allows now, and only on the box whose turn it is.
    const yours = deciding && (!round?.boxToAct || round.boxToAct === box.box);
    const options = yours ? box.options : [];
    const exchange = options.find((o) => o.decision === HouseDecisionKind.EXCHANGE);
    return h("div", { class: "box", "data-box": box.box },
      h("div", { "data-status": box.status }, t("house.box", { box: box.box, ante: box.ante, status: codeWords(box.status) })),
      exchange ? h("p", { class: "exchange-step", id: `exchange-step-${box.box}` }, t("house.exchange_step", { fee: exchange.cost })) : null,
      h("div", { class: exchange ? "box-cards pickable" : "box-cards" }, ...box.cards.map((c, i) => {
        const el = card(c.text, c.hidden);
        if (chosen.has(i)) el.classList.add("chosen");
        if (exchange) {
          el.setAttribute("role", "checkbox");
          el.setAttribute("aria-checked", String(chosen.has(i)));
          el.tabIndex = 0;
          const toggle = (): void => { chosen.has(i) ? chosen.delete(i) : chosen.add(i); selected.set(box.box, chosen); render(); };
          el.addEventListener("click", toggle);
          el.addEventListener("keydown", (event) => { if (event.key === " " || event.key === "Enter") { event.preventDefault(); toggle(); } });
        }
        return el;
      })),
      options.length ? h("div", { class: "actions" }, ...options.map((o) => decisionButton(box, o, chosen))) : null,
      ...box.settlement.map((line) => h("div", { class: "settlement" },
        t("house.settlement", { item: codeWords(line.item), outcome: codeWords(line.outcome), change: signedChips(line.amount), why: codeWords(line.reason) }))),
    );
  }

  function render(): void {
    const house = view?.house;
    const russian = isRussian();
    const min = house?.minAnte ?? 10n;
    const max = house?.maxAnte ?? 0n;
    const running = round && round.phase !== "COMPLETE";
    const deciding = !!round && (round.phase === "DECISIONS" || round.phase === "NO_GAME_CHOICES");
    const ante = h("input", { type: "number", id: "ante", min: String(min), max: String(max), value: String(min), inputmode: "numeric", "aria-label": t("house.ante_label") });
    const dark = h("input", { type: "checkbox", id: "dark" });
    const parts: Node[] = [
      h("div", { class: "house-head" },
        h("p", { class: "muted" }, t("house.limits", { min, max, payout: house?.maxPayout ?? 0n, jackpot: house?.jackpotBalance ?? 0n })),
        rulesButton),
      h("p", { class: "phase", id: "house-phase", "data-phase": round?.phase ?? "" }, phaseText(round, russian)),
    ];
    if (house?.paused) parts.push(h("p", { class: "banner" }, t("house.paused", { why: codeWords(house.pausedReason) })));
    if (round) {
      parts.push(
        h("div", { class: "dealer-row" }, h("span", {}, t("house.dealer"), " "), ...round.dealerCards.map((c) => card(c.text, c.hidden)), ...dealerBacks(round, russian)),
        round.board.length ? h("div", { class: "dealer-row", id: "board" }, h("span", {}, t("house.board"), " "), ...round.board.map((c) => card(c.text))) : h("span", {}),
        ...round.boxes.map((box) => boxElement(box, deciding)),
        h("p", { class: "round-figures", id: "round-figures", "data-phase": round.phase },
          t("house.round_figures", { staked: round.staked, paid: round.paidOut, phase: codeWords(round.phase) })),
        ...round.notes.map((n) => h("p", { class: "muted" }, noteText(n))),
      );
    }
    if (!running) {
      parts.push(h("div", { class: "sit" }, h("label", {}, t("house.ante"), " ", ante),
        russian ? h("label", { title: t("house.dark_box_hint") }, dark, " ", t("house.dark_box")) : null,
        h("button", { id: "deal", class: "play", onclick: () => void deal(BigInt(Math.floor(Number(ante.value) || 0)), dark.checked) }, round ? t("house.next_round") : t("house.deal"))));
    }
    body.replaceChildren(...parts);
  }

  return { leave: () => { feed.stop(); closeRules(); } };
}
