// A cash table: seats with cards, stacks, bets and whose turn (with the countdown and time bank),
// the board and each pot, the legal actions with amounts on the step, pre-actions, chat and stickers,
// sit out / in and leave. Spectators see the table about 20 seconds late and no hidden card.
import { lobby, table, describe, newRequestId } from "./api";
import { h, mount, chips, card, cardText, dismissToast, toast } from "./ui";
import { t } from "./i18n";
import { go, me, type Screen } from "./main";
import { setSeated, yourTurn, youWon } from "./telegram";
import { header, balancesLine } from "./lobby";
import { TableFeed, type LinkState, type TableUpdate } from "./table_feed";
import { ownRandomness, seedStep, setOwnRandomness } from "./seeds";
import { actionText, awardTexts, feltAwardText, noticeText, potTexts, type Who } from "./table_words";
import { ActionKind, SeatStatus, Street, TablePhase, type TableEvent, type TableView, type LegalActions } from "./gen/poker/table/v1/table_pb";
import type { Room } from "./gen/poker/lobby/v1/lobby_pb";

export const STICKERS = ["thumbs-up", "clap", "laugh", "cool", "think", "wow", "gg", "nice-hand", "good-luck", "bluff", "fire"];
const STICKER_FACE: Record<string, string> = {
  "thumbs-up": "👍", clap: "👏", laugh: "😂", cool: "😎", think: "🤔", wow: "😮", gg: "🤝",
  "nice-hand": "🃏", "good-luck": "🍀", bluff: "🎭", fire: "🔥",
};
function streetName(street: Street): string | undefined {
  switch (street) {
    case Street.PREFLOP: return t("street.preflop");
    case Street.FLOP: return t("street.flop");
    case Street.TURN: return t("street.turn");
    case Street.RIVER: return t("street.river");
    case Street.SHOWDOWN: return t("street.showdown");
    default: return undefined;
  }
}

/** A sticker's name (its button's title), in words. */
function stickerName(id: string): string {
  switch (id) {
    case "thumbs-up": return t("sticker.thumbs-up");
    case "clap": return t("sticker.clap");
    case "laugh": return t("sticker.laugh");
    case "cool": return t("sticker.cool");
    case "think": return t("sticker.think");
    case "wow": return t("sticker.wow");
    case "gg": return t("sticker.gg");
    case "nice-hand": return t("sticker.nice-hand");
    case "good-luck": return t("sticker.good-luck");
    case "bluff": return t("sticker.bluff");
    case "fire": return t("sticker.fire");
    default: return STICKER_FACE[id] ?? "";
  }
}

type PreAction = "" | "check-fold" | "call-any" | "fold";

export function onStep(value: bigint, legal: LegalActions): bigint {
  const step = legal.step > 0n ? legal.step : 1n;
  let amount = value < legal.minAmount ? legal.minAmount : value > legal.maxAmount ? legal.maxAmount : value;
  if (amount !== legal.maxAmount) amount -= amount % step;
  return amount < legal.minAmount ? legal.minAmount : amount;
}

export function showTable(roomId: string, tableId: string, spectate: boolean): Screen {
  let view: TableView | null = null;
  let room: Room | null = null;
  let preAction: PreAction = "";
  let preActionHand = "";
  let acting = false;
  let countdown = 0;
  // When the shown view arrived: a seat's clock counts down from what the view says was left then
  // (deadline minus as-of), so neither the browser's clock nor a spectator's delay skews it.
  let viewReceivedAt = 0;
  const chatLines: HTMLElement[] = [];

  const link = h("span", { class: "link", id: "link" }, t("link.connecting"));
  const balances = h("div", { class: "balances", id: "balances" });
  const felt = h("section", { class: "felt", id: "felt" });
  const controls = h("section", { class: "controls", id: "controls" });
  const log = h("ol", { class: "events", id: "events" });
  const chatList = h("ul", { class: "chat", id: "chat" });
  const chatInput = h("input", { id: "chat-input", maxlength: 200, placeholder: t("chat.placeholder"), "aria-label": t("chat.label") });
  const stickers = h(
    "div",
    { class: "stickers" },
    ...STICKERS.map((id) => h("button", { class: "sticker", "data-sticker": id, title: stickerName(id), "aria-label": stickerName(id), onclick: () => void sendChat({ sticker: id }) }, STICKER_FACE[id])),
  );
  const chatForm = h(
    "form",
    { class: "chat-form", onsubmit: (e: Event) => { e.preventDefault(); void sendChat({ text: chatInput.value }); } },
    chatInput,
    h("button", { type: "submit", id: "chat-send" }, t("chat.send")),
  );
  const seatToggle = h("button", { id: "sit-out", class: "quiet", onclick: () => void toggleSitOut() }, t("table.sit_out"));
  const leaveButton = h("button", { id: "leave", onclick: () => void leave() }, spectate ? t("table.back") : t("table.leave"));
  // Provably fair dealing: my own randomness in each hand (docs/fairness.md), hash first.
  const randomnessBox = h("input", { type: "checkbox", id: "own-randomness", checked: ownRandomness() });
  randomnessBox.addEventListener("change", () => { setOwnRandomness(randomnessBox.checked); void seedStep(tableId, () => view, mySeat(), note); });
  const randomness = h("label", { class: "pre own-randomness", title: t("table.own_randomness_hint") }, randomnessBox, t("table.own_randomness"));

  mount(
    header(spectate ? t("table.watching") : t("table.title"), link, seatToggle, leaveButton),
    spectate ? h("p", { class: "banner", id: "delay-banner" }, t("table.spectating")) : balances,
    felt,
    controls,
    spectate ? h("span", {}) : randomness,
    h("details", { class: "log", open: true }, h("summary", {}, t("table.log")), log),
    spectate ? h("p", { class: "muted" }, t("table.spectators_no_chat")) : h("section", { class: "chat-box" }, chatList, stickers, chatForm),
  );
  if (spectate) seatToggle.remove();

  void lobby.getRoom({ roomId }).then((reply) => { room = reply.room ?? null; render(); }).catch(() => undefined);
  if (!spectate) void balancesLine(balances);

  const mySeat = (): number => view?.seats.find((s) => s.playerId === me())?.seat ?? 0;
  const nameOf = (playerId: string): string =>
    playerId === me() ? t("seat.you") : view?.seats.find((s) => s.playerId === playerId)?.displayName || playerId;
  const seatName = (seat: number): string => {
    const s = view?.seats.find((x) => x.seat === seat);
    return s ? nameOf(s.playerId) : t("seat.number", { seat });
  };
  const whoAt = (seat: number): Who => {
    const s = view?.seats.find((x) => x.seat === seat);
    return { name: seatName(seat), you: s !== undefined && s.playerId === me() };
  };

  function addLog(event: TableEvent): void {
    let text = "";
    switch (event.kind.case) {
      case "action":
        text = actionText(whoAt(event.seat), event.kind.value);
        break;
      case "cards": {
        const shown = event.kind.value.cards.filter((c) => !c.hidden && c.text).map((c) => cardText(c.text)).join(" ");
        if (!shown) return; // another player's cards, face down
        const who = whoAt(event.seat);
        if (event.kind.value.shownByPlayer) text = who.you ? t("log.shows.you", { cards: shown }) : t("log.shows", { who: who.name, cards: shown });
        else if (event.seat) text = who.you ? t("log.dealt.you", { cards: shown }) : t("log.dealt", { who: who.name, cards: shown });
        else text = t("log.board", { cards: shown });
        break;
      }
      case "notice": {
        const line = noticeText(event.seat ? seatName(event.seat) : "", event.kind.value);
        if (line === null) return;
        text = line;
        break;
      }
      case "chat": {
        const line = h("li", { class: "chat-line" }, h("b", {}, t("chat.line", { who: nameOf(event.kind.value.playerId) })),
          event.kind.value.stickerId ? h("span", { class: "sticker-shown", "data-sticker": event.kind.value.stickerId }, STICKER_FACE[event.kind.value.stickerId] ?? event.kind.value.stickerId) : event.kind.value.text);
        chatLines.push(line);
        if (chatLines.length > 50) chatLines.shift();
        chatList.replaceChildren(...chatLines);
        chatList.scrollTop = chatList.scrollHeight;
        return;
      }
      default:
        return;
    }
    log.prepend(h("li", {}, text));
    while (log.children.length > 30) log.lastElementChild?.remove();
  }

  function note(text: string): void {
    log.prepend(h("li", {}, text));
    while (log.children.length > 30) log.lastElementChild?.remove();
  }

  function onUpdate(update: TableUpdate): void {
    view = update.view;
    viewReceivedAt = Date.now();
    for (const event of update.events) addLog(event);
    // The pots just awarded, by name and hand, from the view that came with them (the felt's award
    // is gone with the next view).
    if (update.events.some((e) => e.kind.case === "notice" && e.kind.value.code === "POT_AWARDED")) {
      for (const line of awardTexts(view.awards, whoAt).reverse()) note(line); // the log is newest first
    }
    if (!spectate) void seedStep(tableId, () => view, mySeat(), note);
    if (view.handId !== preActionHand) {
      preAction = "";
      preActionHand = view.handId;
    }
    render();
    if (!spectate) {
      // Telegram: no closing by a swipe while seated, a tap felt on the player's turn and on a win.
      const seat = mySeat();
      setSeated(seat > 0);
      yourTurn((view.legalActions?.actions.length ?? 0) > 0);
      const awarded = update.events.some((e) => e.kind.case === "notice" && e.kind.value.code === "POT_AWARDED");
      if (seat > 0 && awarded && view.awards.some((a) => a.seats.includes(seat))) youWon();
    }
    void runPreAction();
  }

  function onLink(state: LinkState): void {
    link.textContent = state.text;
    link.className = `link ${state.link}`;
  }

  const feed = new TableFeed(tableId, spectate, onUpdate, onLink);
  feed.start();

  async function act(action: ActionKind, amount = 0n): Promise<void> {
    if (!view || acting) return;
    acting = true;
    try {
      await table.act({ requestId: newRequestId(), tableId, handId: view.handId, action, amount });
      dismissToast(); // a refusal of an earlier try is past
    } catch (error) {
      toast(describe(error), "error");
    } finally {
      acting = false;
    }
  }

  async function runPreAction(): Promise<void> {
    const legal = view?.legalActions;
    if (!preAction || !legal || legal.actions.length === 0) return;
    const can = (a: ActionKind): boolean => legal.actions.includes(a);
    const chosen = preAction;
    preAction = "";
    if (chosen === "fold") await act(ActionKind.FOLD);
    else if (chosen === "check-fold") await act(can(ActionKind.CHECK) ? ActionKind.CHECK : ActionKind.FOLD);
    else if (chosen === "call-any") await act(can(ActionKind.CALL) ? ActionKind.CALL : ActionKind.CHECK);
  }

  async function sendChat(content: { text?: string; sticker?: string }): Promise<void> {
    try {
      await table.sendChat({
        requestId: newRequestId(),
        tableId,
        content: content.sticker ? { case: "stickerId", value: content.sticker } : { case: "text", value: (content.text ?? "").trim() },
      });
      chatInput.value = "";
    } catch (error) {
      toast(describe(error), "error");
    }
  }

  async function toggleSitOut(): Promise<void> {
    const seat = view?.seats.find((s) => s.playerId === me());
    if (!seat) return;
    try {
      if (seat.status === SeatStatus.SITTING_OUT) await table.sitIn({ requestId: newRequestId(), tableId });
      else await table.sitOut({ requestId: newRequestId(), tableId });
    } catch (error) {
      toast(describe(error), "error");
    }
  }

  async function sitDown(buyIn: bigint): Promise<void> {
    try {
      await table.sitDown({ requestId: newRequestId(), tableId, buyIn });
      void balancesLine(balances);
    } catch (error) {
      toast(describe(error), "error");
    }
  }

  async function leave(): Promise<void> {
    if (!spectate && mySeat()) {
      try {
        const left = await table.leaveTable({ requestId: newRequestId(), tableId });
        toast(left.foldedMidHand ? t("table.folded_out") : t("table.cashed_out", { amount: left.cashedOut?.amount ?? 0n }));
      } catch (error) {
        toast(describe(error), "error");
        return;
      }
    }
    go({ name: "lobby" });
  }

  function seatElement(seatNumber: number, total: number): HTMLElement {
    const s = view?.seats.find((x) => x.seat === seatNumber);
    // The player's own seat at the bottom, the others clockwise from it.
    const angle = (2 * Math.PI * (seatNumber - (mySeat() || 1))) / total + Math.PI / 2;
    const style = `left:${50 + 34 * Math.cos(angle)}%;top:${50 + 38 * Math.sin(angle)}%`;
    if (!s || !s.playerId) return h("div", { class: "seat empty", style, "data-seat": seatNumber }, t("seat.number", { seat: seatNumber }));
    const turn = view!.toActSeat === seatNumber && view!.phase === TablePhase.HAND_IN_PROGRESS;
    const status = s.status === SeatStatus.SITTING_OUT ? t("seat.sitting_out") : s.status === SeatStatus.WAITING ? t("seat.waiting") : s.status === SeatStatus.DISCONNECTED ? t("seat.away") : "";
    return h(
      "div",
      { class: `seat${turn ? " turn" : ""}${s.folded ? " folded" : ""}${s.playerId === me() ? " mine" : ""}`, style, "data-seat": seatNumber, "data-player": s.playerId },
      h("div", { class: "seat-name" }, nameOf(s.playerId), view!.buttonSeat === seatNumber ? h("span", { class: "dealer", title: t("seat.dealer_name") }, t("seat.dealer")) : null),
      h("div", { class: "seat-cards" }, ...s.holeCards.map((c) => card(c.text, c.hidden))),
      h("div", { class: "seat-stack" }, chips(s.stack), s.allIn ? t("seat.all_in") : ""),
      s.betThisRound > 0n ? h("div", { class: "seat-bet" }, chips(s.betThisRound)) : null,
      status ? h("div", { class: "seat-status" }, status) : null,
      turn ? h("div", { class: "seat-clock", "data-clock": seatNumber, "data-bank": s.timeBankSeconds }, seatClockText(s.timeBankSeconds)) : null,
    );
  }

  function secondsLeft(): number | null {
    const deadline = view?.toActDeadline;
    const asOf = view?.asOf;
    if (!deadline || !asOf) return null;
    const leftAtView = Number(deadline.seconds - asOf.seconds) * 1000 + (deadline.nanos - asOf.nanos) / 1e6;
    return Math.max(0, Math.ceil((leftAtView - (Date.now() - viewReceivedAt)) / 1000));
  }

  // Whose turn and how long, at the seat, for everybody: "to act · 12s · bank 15s".
  function seatClockText(bank: number): string {
    const left = secondsLeft();
    return left === null ? t("seat.clock_bank", { bank }) : t("seat.clock", { left, bank });
  }

  function tickSeatClocks(): void {
    for (const clock of felt.querySelectorAll<HTMLElement>("[data-clock]")) {
      clock.textContent = seatClockText(Number(clock.dataset.bank ?? 0));
      const left = secondsLeft();
      clock.classList.toggle("urgent", left !== null && left <= 5);
    }
  }

  function render(): void {
    if (!view) return;
    const total = view.seats.length || room?.seatsPerTable || 6;
    const potTotal = view.pots.reduce((n, p) => n + p.amount, 0n);
    felt.replaceChildren(
      h("div", { class: "table-oval" },
        h("div", { class: "center" },
          h("div", { class: "street" }, streetName(view.street) ?? (view.phase === TablePhase.WAITING_FOR_PLAYERS ? t("table.waiting_for_players") : t("table.between_hands"))),
          h("div", { class: "board", id: "board" }, ...view.board.map((c) => card(c.text))),
          h("div", { class: "pots", id: "pots" }, ...potTexts(view.pots, seatName).map((text) => h("span", { class: "pot" }, text))),
          ...view.awards.map((a) => h("div", { class: "award", "data-seats": a.seats.join(" ") }, feltAwardText(a, whoAt))),
        ),
        ...view.seats.map((s) => seatElement(s.seat, total)),
      ),
    );
    const seat = view.seats.find((s) => s.playerId === me());
    seatToggle.textContent = seat?.status === SeatStatus.SITTING_OUT ? t("table.sit_in") : t("table.sit_out");
    seatToggle.hidden = !seat;
    renderControls(seat !== undefined, potTotal);
  }

  function renderControls(seated: boolean, potTotal: bigint): void {
    window.clearInterval(countdown);
    controls.hidden = spectate;
    if (spectate || !view) {
      controls.replaceChildren();
      return;
    }
    if (!seated) {
      const min = room?.minBuyIn ?? 0n;
      const max = room?.maxBuyIn ?? 0n;
      const buyIn = h("input", { type: "number", id: "buy-in", min: String(min), max: String(max), step: 1, value: String(min), "aria-label": t("sit.buy_in_label") });
      controls.replaceChildren(
        h("div", { class: "sit" }, h("label", {}, min === max ? t("sit.buy_in_fixed", { amount: min }) : t("sit.buy_in", { min, max }), " ", buyIn),
          h("button", { id: "sit-down", class: "play", onclick: () => void sitDown(BigInt(Math.floor(Number(buyIn.value) || 0))) }, t("room.sit_down"))),
      );
      return;
    }
    const legal = view.legalActions;
    if (legal && legal.actions.length > 0) {
      const can = (a: ActionKind): boolean => legal.actions.includes(a);
      const clock = h("span", { class: "clock", id: "my-clock" });
      const tick = (): void => {
        const left = secondsLeft();
        clock.textContent = left === null ? "" : t("turn.seconds", { left });
        clock.classList.toggle("urgent", left !== null && left <= 5);
      };
      tick();
      countdown = window.setInterval(tick, 250);
      const betKind = can(ActionKind.BET) ? ActionKind.BET : can(ActionKind.RAISE) ? ActionKind.RAISE : null;
      const amount = h("input", { type: "number", id: "amount", min: String(legal.minAmount), max: String(legal.maxAmount), step: String(legal.step || 1n), value: String(legal.minAmount), "aria-label": t("act.amount") });
      const slider = h("input", { type: "range", id: "amount-slider", min: String(legal.minAmount), max: String(legal.maxAmount), step: String(legal.step || 1n), value: String(legal.minAmount), "aria-label": t("act.amount_slider") });
      slider.addEventListener("input", () => { amount.value = slider.value; });
      amount.addEventListener("change", () => { amount.value = String(onStep(BigInt(Math.floor(Number(amount.value) || 0)), legal)); slider.value = amount.value; });
      const preset = (label: string, value: bigint): HTMLElement =>
        h("button", { class: "quiet preset", onclick: () => { amount.value = String(onStep(value, legal)); slider.value = amount.value; } }, label);
      controls.replaceChildren(...[
        h("div", { class: "your-turn" }, t("turn.yours"), " ", clock),
        h("div", { class: "actions", id: "actions" },
          can(ActionKind.FOLD) ? h("button", { id: "act-fold", class: "fold", onclick: () => void act(ActionKind.FOLD) }, t("act.fold")) : null,
          can(ActionKind.CHECK) ? h("button", { id: "act-check", onclick: () => void act(ActionKind.CHECK) }, t("act.check")) : null,
          can(ActionKind.CALL) ? h("button", { id: "act-call", onclick: () => void act(ActionKind.CALL) }, t("act.call", { amount: legal.callAmount })) : null,
          betKind !== null ? h("button", { id: "act-bet", class: "play", onclick: () => void act(betKind, onStep(BigInt(Math.floor(Number(amount.value) || 0)), legal)) }, betKind === ActionKind.BET ? t("act.bet") : t("act.raise")) : null,
          can(ActionKind.ALL_IN) ? h("button", { id: "act-all-in", onclick: () => void act(ActionKind.ALL_IN) }, t("act.all_in", { amount: legal.allInAmount })) : null,
        ),
        betKind !== null
          ? h("div", { class: "sizing" }, slider, amount, preset(t("preset.min"), legal.minAmount), preset(t("preset.half_pot"), potTotal / 2n), preset(t("preset.pot"), potTotal), preset(t("preset.max"), legal.maxAmount))
          : null,
      ].filter((n): n is HTMLDivElement => n !== null));
      return;
    }
    const betting = view.street >= Street.PREFLOP && view.street <= Street.RIVER;
    const inHand = betting && view.phase === TablePhase.HAND_IN_PROGRESS && view.seats.some((s) => s.playerId === me() && !s.folded && !s.allIn && s.holeCards.length > 0);
    if (!inHand) {
      controls.replaceChildren(h("p", { class: "muted" }, betting && view.phase === TablePhase.HAND_IN_PROGRESS ? t("turn.out_of_hand") : t("turn.next_hand")));
      return;
    }
    const option = (value: PreAction, label: string): HTMLElement => {
      const box = h("input", { type: "checkbox", "data-pre": value, checked: preAction === value });
      box.addEventListener("change", () => { preAction = box.checked ? value : ""; render(); });
      return h("label", { class: "pre" }, box, label);
    };
    controls.replaceChildren(h("div", { class: "pre-actions", id: "pre-actions" }, option("check-fold", t("pre.check_fold")), option("call-any", t("pre.call_any")), option("fold", t("pre.fold"))));
  }

  const seatClocks = window.setInterval(tickSeatClocks, 250);

  return {
    back: () => void leave(),
    leave: () => {
      feed.stop();
      window.clearInterval(countdown);
      window.clearInterval(seatClocks);
    },
  };
}
