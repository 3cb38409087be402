// A cash table: seats with cards, stacks, bets and whose turn (with the countdown and time bank),
// the board and each pot, the action bar at the bottom (legal actions with amounts on the step, bet
// presets, pre-actions), the hand log, chat and stickers, sit out / in and leave. Spectators see the
// table about 20 seconds late and no hidden card.
//
// The state is table_model.ts's (a pure reducer of stream messages and the player's input); this
// module draws it in place: the felt keyed by seat, the log and chat appended, the bar built again
// only when the turn or what it offers changes, so an update never resets what the player is typing.
// Each seat shows its player's photo or initials (avatar.ts); a card dealt slides in, a betting
// round's bets fly to the pot and a pot to its winner (motion.ts; still under reduced motion), never
// holding anything back.
import { lobby, table, describe, newRequestId } from "./api";
import { h, mount, chips, card, dismissToast, toast } from "./ui";
import { language, t } from "./i18n";
import { go, type Screen } from "./router";
import { loadLines, restoreLines, saveLines } from "./table_memory";
import { me } from "./session";
import { confirmLeaving, setSeated, yourTurn, youWon } from "./telegram";
import { header, balancesLine } from "./lobby";
import { TableFeed, type LinkState, type TableUpdate } from "./table_feed";
import { ownRandomness, seedStep, setOwnRandomness } from "./seeds";
import { awardTexts, potTexts, type Who } from "./table_words";
import { avatar } from "./avatar";
import { FLIGHT_MS, flyChip } from "./motion";
import {
  betKind, initialState, leavingFoldsHand, mySeat, whoAt as seatWho, myTurn, preActionsOffered, presetAmounts, reduce, secondsLeft, typedAmount,
  type PreAction, type Preset, type TableInput,
} from "./table_model";
import { ActionKind, SeatStatus, Street, TablePhase, type TableView, type LegalActions } from "./gen/poker/table/v1/table_pb";
import type { Room } from "./gen/poker/lobby/v1/lobby_pb";

export const STICKERS = ["thumbs-up", "clap", "laugh", "cool", "think", "wow", "gg", "nice-hand", "good-luck", "bluff", "fire"];
const STICKER_FACE: Record<string, string> = {
  "thumbs-up": "👍", clap: "👏", laugh: "😂", cool: "😎", think: "🤔", wow: "😮", gg: "🤝",
  "nice-hand": "🃏", "good-luck": "🍀", bluff: "🎭", fire: "🔥",
};
/** The cards of the main pot's winning hand, shown at the showdown (the table sends them only once
 * the winner showed: the board and the winner's own two). */
function winningCards(view: TableView): Set<string> {
  return new Set((view.awards[0]?.winningCards ?? []).map((c) => c.text));
}

/** A card of the winning hand, marked so the felt lights it up. */
function winning(node: HTMLElement, wins: boolean): HTMLElement {
  if (wins) node.classList.add("win");
  return node;
}

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

/** A container's children drawn again only when what they show (their key) changed: everything else
 * on the screen stays as it is, the input the player is typing in included. */
function keyed(container: HTMLElement, key: string, build: () => (Node | null)[]): boolean {
  if (container.dataset.key === key) return false;
  container.dataset.key = key;
  container.replaceChildren(...build().filter((n): n is Node => n !== null));
  return true;
}

/** A text set only when it changed (a node the player looks at is not touched for nothing). */
function patch(element: HTMLElement, text: string): void {
  if (element.textContent !== text) element.textContent = text;
}

export function showTable(roomId: string, tableId: string, spectate: boolean): Screen {
  // The chat and the hand log as this tab last showed them at this table (a reload keeps them).
  let state = restoreLines(initialState(me(), spectate), loadLines(sessionStorage, tableId, spectate), language());
  let keptThrough = state.nextId;
  let room: Room | null = null;
  let acting = false;
  let alive = true; // until the screen is left
  // When the shown view arrived: a seat's clock counts down from what the view says was left then.
  let viewReceivedAt = 0;

  const link = h("span", { class: "link", id: "link" }, t("link.connecting"));
  const balances = h("div", { class: "balances", id: "balances" });
  const felt = h("section", { class: "felt", id: "felt" });
  const controls = h("section", { class: "controls bar", id: "controls" });
  const spacer = h("div", { class: "bar-spacer" });
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
  randomnessBox.addEventListener("change", () => { setOwnRandomness(randomnessBox.checked); void seedStep(tableId, () => state.view, mySeat(state), note); });
  const randomness = h("label", { class: "pre own-randomness", title: t("table.own_randomness_hint") }, randomnessBox, t("table.own_randomness"));

  // The felt's parts, made once and kept: each is drawn again only when what it shows changed.
  const street = h("div", { class: "street" });
  const board = h("div", { class: "board", id: "board" });
  const pots = h("div", { class: "pots", id: "pots" });
  const awards = h("div", { class: "awards" });
  const oval = h("div", { class: "table-oval" }, h("div", { class: "center" }, street, board, pots, awards));
  felt.append(oval);
  const seatNodes = new Map<number, HTMLElement>();
  // Each seat's picture, kept while its photo and name stay (drawn again with the seat, it is moved,
  // not loaded again).
  const avatars = new Map<number, { key: string; node: HTMLElement }>();
  // The view the felt shows, to see what changed (a betting round over, a pot awarded), and the
  // cards of this hand already on it (by place: a seat or the board, and index): a card that comes
  // for the first time is dealt (it slides in), one drawn again stays still. Nothing moves for the
  // first view the page draws (a reload, a reconnect mid-hand).
  let drawnView: TableView | null = null;
  let lastAward = "";
  const dealtCards = new Set<string>();
  let dealtHand = "";

  mount(
    header(spectate ? t("table.watching") : t("table.title"), link, seatToggle, leaveButton),
    spectate ? h("p", { class: "banner", id: "delay-banner" }, t("table.spectating")) : balances,
    felt,
    spectate ? h("span", {}) : randomness,
    h("details", { class: "log", open: true }, h("summary", {}, t("table.log")), log),
    spectate ? h("p", { class: "muted" }, t("table.spectators_no_chat")) : h("section", { class: "chat-box" }, chatList, stickers, chatForm),
    controls,
    spacer,
  );
  if (spectate) seatToggle.remove();
  controls.hidden = spectate;
  spacer.hidden = spectate;
  // The action bar is fixed at the bottom (the thumb zone); the spacer keeps the end of the page
  // (the chat) scrollable above it, and the toast is lifted over it.
  // (In the next frame: a change of layout inside the observer's callback could resize what it
  // observes again in the same frame, which the browser reports as an error.)
  const bar = new ResizeObserver(() => requestAnimationFrame(() => {
    const height = controls.hidden ? 0 : controls.offsetHeight;
    spacer.style.setProperty("height", `${height + 8}px`);
    document.documentElement.style.setProperty("--table-bar", `${height}px`);
  }));
  bar.observe(controls);

  void lobby.getRoom({ roomId }).then((reply) => { room = reply.room ?? null; render(); }).catch(() => undefined);
  if (!spectate) void balancesLine(balances);

  const whoAt = (seat: number): Who => (state.view ? seatWho(state, state.view, seat) : { name: t("seat.number", { seat }), you: false });
  const seatName = (seat: number): string => whoAt(seat).name;

  function dispatch(input: TableInput): void {
    state = reduce(state, input);
    if (state.nextId !== keptThrough) {
      keptThrough = state.nextId;
      saveLines(sessionStorage, tableId, spectate, state, language());
    }
    render();
    const intent = state.send;
    if (intent) {
      state = reduce(state, { type: "sent" });
      void act(intent.action, intent.amount, intent.handId);
    }
  }

  function note(text: string): void {
    dispatch({ type: "note", text });
  }

  function onUpdate(update: TableUpdate): void {
    viewReceivedAt = Date.now();
    dispatch({ type: "update", view: update.view, events: update.events });
    const view = update.view;
    if (!spectate) void seedStep(tableId, () => state.view, mySeat(state), note);
    if (!spectate) {
      // Telegram: no closing by a swipe while seated, a tap felt on the player's turn and on a win.
      const seat = mySeat(state);
      setSeated(seat > 0);
      yourTurn(myTurn(view) !== null);
      const awarded = update.events.some((e) => e.kind.case === "notice" && e.kind.value.code === "POT_AWARDED");
      if (seat > 0 && awarded && view.awards.some((a) => a.seats.includes(seat))) youWon();
    }
  }

  function onLink(linkState: LinkState): void {
    link.textContent = linkState.text;
    link.className = `link ${linkState.link}`;
  }

  const feed = new TableFeed(tableId, spectate, onUpdate, onLink);
  feed.start();

  async function act(action: ActionKind, amount = 0n, handId = state.view?.handId ?? ""): Promise<void> {
    if (!state.view || acting) return;
    acting = true;
    try {
      await table.act({ requestId: newRequestId(), tableId, handId, action, amount });
      dismissToast(); // a refusal of an earlier try is past
    } catch (error) {
      toast(describe(error), "error");
    } finally {
      acting = false;
    }
  }

  async function sendChat(content: { text?: string; sticker?: string }): Promise<void> {
    try {
      await table.sendChat({
        requestId: newRequestId(),
        tableId,
        content: content.sticker ? { case: "stickerId", value: content.sticker } : { case: "text", value: (content.text ?? "").trim() },
      });
      if (!content.sticker) chatInput.value = "";
    } catch (error) {
      toast(describe(error), "error");
    }
  }

  async function toggleSitOut(): Promise<void> {
    const seat = state.view?.seats.find((s) => s.playerId === state.me);
    if (!seat) return;
    try {
      if (seat.status === SeatStatus.SITTING_OUT) await table.sitIn({ requestId: newRequestId(), tableId });
      else await table.sitOut({ requestId: newRequestId(), tableId });
    } catch (error) {
      toast(describe(error), "error");
    }
  }

  /** The panel's Sit down: the buy-in typed, else the room's minimum. A tap before the room's buy-in
   *  range had arrived sent a buy-in of 0 (AMOUNT_INVALID; a CI run's Telegram stub tapped that fast
   *  on a loaded machine): the room is read first then. */
  async function sitDownFromPanel(): Promise<void> {
    if (room === null) room = (await lobby.getRoom({ roomId }).catch(() => undefined))?.room ?? null;
    const min = room?.minBuyIn ?? 0n;
    await sitDown(BigInt(Math.floor(Number(state.buyIn || String(min)) || 0)));
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
    if (!spectate && mySeat(state)) {
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

  // Telegram's BackButton: in the middle of a hand the player is in, leaving folds it, so it asks
  // first (Telegram's popup); seated between hands or out of the hand, it leaves at once.
  let asking = false;
  async function back(): Promise<void> {
    if (asking) return;
    if (leavingFoldsHand(state)) {
      asking = true;
      const sure = await confirmLeaving(t("table.leave_confirm")).finally(() => (asking = false));
      if (!sure || !alive) return;
    }
    await leave();
  }

  // ------------------------------------------------------------------ the felt, keyed by seat

  /** A card of this hand at `place`, marked dealt (it slides in) the first time it is drawn there;
   * `fresh` counts the cards dealt in this drawing, each a little after the one before. */
  function dealt(node: HTMLElement, view: TableView, place: string, index: number, fresh: { count: number }): HTMLElement {
    if (view.handId !== dealtHand) {
      dealtCards.clear();
      dealtHand = view.handId;
    }
    const key = `${place}/${index}`;
    if (dealtCards.has(key)) return node;
    dealtCards.add(key);
    if (drawnView !== null) {
      node.classList.add("dealt");
      node.style.setProperty("animation-delay", `${Math.min(fresh.count, 4) * 70}ms`);
      fresh.count += 1;
    }
    return node;
  }

  function seatAvatar(seatNumber: number, url: string, name: string): HTMLElement {
    const key = JSON.stringify([url, name]);
    const kept = avatars.get(seatNumber);
    if (kept && kept.key === key) return kept.node;
    const node = avatar(url, name);
    avatars.set(seatNumber, { key, node });
    return node;
  }

  function drawSeat(seatNumber: number, total: number, view: TableView): void {
    let node = seatNodes.get(seatNumber);
    if (!node) {
      node = h("div", { class: "seat", "data-seat": seatNumber });
      seatNodes.set(seatNumber, node);
      oval.append(node);
    }
    const s = view.seats.find((x) => x.seat === seatNumber);
    // The player's own seat at the bottom, the others clockwise from it, out towards the rail so the
    // middle (board, pots, awards) stays clear of them.
    const angle = (2 * Math.PI * (seatNumber - (mySeat(state) || 1))) / total + Math.PI / 2;
    node.style.setProperty("left", `${50 + 39 * Math.cos(angle)}%`);
    node.style.setProperty("top", `${50 + 39 * Math.sin(angle)}%`);
    if (!s || !s.playerId) {
      node.className = "seat empty";
      avatars.delete(seatNumber);
      keyed(node, "empty", () => [h("span", { class: "seat-free" }, t("seat.free"))]);
      return;
    }
    const turn = view.toActSeat === seatNumber && view.phase === TablePhase.HAND_IN_PROGRESS;
    const status = s.status === SeatStatus.SITTING_OUT ? t("seat.sitting_out") : s.status === SeatStatus.WAITING ? t("seat.waiting") : s.status === SeatStatus.DISCONNECTED ? t("seat.away") : "";
    node.className = `seat${turn ? " turn" : ""}${s.folded ? " folded" : ""}${s.playerId === state.me ? " mine" : ""}`;
    const name = whoAt(seatNumber).name;
    const dealer = view.buttonSeat === seatNumber;
    const cards = s.holeCards.map((c) => (c.hidden ? "?" : c.text)).join(" ");
    const won = winningCards(view);
    const wins = s.holeCards.map((c) => !c.hidden && won.has(c.text));
    // The picture is of the player's own name (the seat's label "You" is not a name).
    const picture = seatAvatar(seatNumber, s.avatarUrl, s.displayName || name);
    const key = JSON.stringify([name, s.avatarUrl, view.handId, dealer, cards, wins, String(s.stack), s.allIn, String(s.betThisRound), status, turn, s.timeBankSeconds]);
    const fresh = { count: 0 };
    if (keyed(node, key, () => [
      h("div", { class: "seat-head" }, picture, h("div", { class: "seat-name" }, name), dealer ? h("span", { class: "dealer", title: t("seat.dealer_name") }, t("seat.dealer")) : null),
      h("div", { class: "seat-cards" }, ...s.holeCards.map((c, i) => dealt(winning(card(c.text, c.hidden), wins[i] ?? false), view, `seat-${seatNumber}`, i, fresh))),
      h("div", { class: "seat-stack" }, chips(s.stack), s.allIn ? t("seat.all_in") : ""),
      s.betThisRound > 0n ? h("div", { class: "seat-bet" }, chips(s.betThisRound)) : null,
      status ? h("div", { class: "seat-status" }, status) : null,
      turn ? h("div", { class: "seat-clock", "data-clock": seatNumber, "data-bank": s.timeBankSeconds }) : null,
    ])) tickClocks();
  }

  function drawFelt(view: TableView): void {
    const total = view.seats.length || room?.seatsPerTable || 6;
    felt.dataset.phase = TablePhase[view.phase] ?? ""; // a code, for tests and styles
    // The table holds a hand that ended with cards shown (its awards, cards face up at the seats)
    // before the next countdown: that is the showdown, not yet "between hands".
    const heldShowdown = view.awards.length > 0 && view.seats.some((x) => x.playerId !== state.me && x.holeCards.some((c) => !c.hidden));
    const between = view.closing ? t("table.closing") : view.phase === TablePhase.WAITING_FOR_PLAYERS ? t("table.waiting_for_players") : t("table.between_hands");
    // A table an operator closes says so in every view (a player who connects late heard no notice).
    patch(street, (view.closing && view.phase === TablePhase.HAND_IN_PROGRESS ? `${streetName(view.street) ?? ""} · ${t("table.closing_after_hand")}` : streetName(view.street)) ?? (heldShowdown ? t("street.showdown") : between));
    const won = winningCards(view);
    const fresh = { count: 0 };
    keyed(board, JSON.stringify([view.handId, view.board.map((c) => [c.text, won.has(c.text)])]), () => view.board.map((c, i) => dealt(winning(card(c.text), won.has(c.text)), view, "board", i, fresh)));
    const potLines = potTexts(view.pots, seatName);
    keyed(pots, JSON.stringify(potLines), () => potLines.map((text) => h("span", { class: "pot" }, text)));
    // Each pot's award by the pot's name ("Main pot: Ann won 600 with ..."), as the hand log says it.
    const awardTextLines = awardTexts(view.awards, whoAt);
    const awardLines = view.awards.map((a, i) => ({ seats: a.seats.join(" "), text: awardTextLines[i] ?? "" }));
    keyed(awards, JSON.stringify(awardLines), () => awardLines.map((a) => h("div", { class: "award", "data-seats": a.seats }, a.text)));
    const present = new Set(view.seats.map((s) => s.seat));
    for (const [seat, node] of seatNodes) {
      if (!present.has(seat)) {
        node.remove();
        seatNodes.delete(seat);
        avatars.delete(seat);
      }
    }
    for (const s of view.seats) drawSeat(s.seat, total, view);
    moveChips(view);
  }

  /** What moved since the view drawn before: a betting round over (the street changed, or the hand
   * was awarded) sends each seat's bet to the pot; a pot awarded goes from the middle to each of its
   * winners (after the bets, when both come at once). */
  function moveChips(view: TableView): void {
    const before = drawnView;
    drawnView = view;
    const award = view.awards.length > 0 ? `${view.handId}/${view.awards.length}` : "";
    const awarded = award !== "" && award !== lastAward;
    lastAward = award;
    if (!before || before === view || before.handId !== view.handId) return;
    const roundOver = before.street !== view.street || (view.awards.length > 0 && before.awards.length === 0);
    const middle = pots.childElementCount > 0 ? pots : board;
    let betsFly = false;
    if (roundOver) {
      for (const s of before.seats) {
        const node = seatNodes.get(s.seat);
        if (s.betThisRound <= 0n || !node) continue;
        flyChip(oval, node, middle, "bet");
        betsFly = true;
      }
    }
    if (!awarded) return;
    for (const a of view.awards) {
      for (const seat of a.seats) {
        const node = seatNodes.get(seat);
        if (node) flyChip(oval, board, node, "pot", betsFly ? Math.round(FLIGHT_MS * 0.6) : 0);
      }
    }
  }

  // ------------------------------------------------------------------ the log and the chat, appended

  let logShown = 0;
  function drawLog(): void {
    const fresh = state.log.filter((line) => line.id > logShown);
    if (fresh.length === 0) return;
    const atEnd = log.scrollHeight - log.scrollTop - log.clientHeight < 24;
    log.append(...fresh.map((line) => h("li", { class: line.heading ? "hand-mark" : "", "data-hand": line.hand }, line.text)));
    logShown = fresh[fresh.length - 1].id;
    while (log.children.length > state.log.length) log.firstElementChild?.remove();
    if (atEnd) log.scrollTop = log.scrollHeight;
  }

  let chatShown = 0;
  function drawChat(): void {
    const fresh = state.chat.filter((line) => line.id > chatShown);
    if (fresh.length === 0) return;
    chatList.append(...fresh.map((line) => h("li", { class: "chat-line" }, h("b", {}, t("chat.line", { who: line.who })),
      line.sticker ? h("span", { class: "sticker-shown", "data-sticker": line.sticker }, STICKER_FACE[line.sticker] ?? line.sticker) : line.text)));
    chatShown = fresh[fresh.length - 1].id;
    while (chatList.children.length > state.chat.length) chatList.firstElementChild?.remove();
    chatList.scrollTop = chatList.scrollHeight;
  }

  // ------------------------------------------------------------------ the action bar

  let amountBox: HTMLInputElement | null = null;
  let slider: HTMLInputElement | null = null;
  let myClock: HTMLElement | null = null;

  function drawTurn(legal: LegalActions): void {
    const can = (a: ActionKind): boolean => legal.actions.includes(a);
    const kind = betKind(legal);
    const presets = presetAmounts(state);
    const key = JSON.stringify(["turn", state.view?.handId, state.view?.street, legal.actions, String(legal.callAmount), String(legal.minAmount), String(legal.maxAmount), String(legal.allInAmount), presets.map((p) => String(p.amount))]);
    keyed(controls, key, () => {
      myClock = h("span", { class: "clock", id: "my-clock" });
      amountBox = null;
      slider = null;
      let sizing: HTMLElement | null = null;
      if (kind !== null && legal.minAmount < legal.maxAmount) {
        const step = String(legal.step || 1n);
        const box = h("input", { type: "number", id: "amount", inputmode: "numeric", min: String(legal.minAmount), max: String(legal.maxAmount), step, value: state.amount, "aria-label": t("act.amount") });
        const range = h("input", { type: "range", id: "amount-slider", min: String(legal.minAmount), max: String(legal.maxAmount), step, value: state.amount, "aria-label": t("act.amount_slider") });
        box.addEventListener("input", () => dispatch({ type: "amount", value: box.value }));
        box.addEventListener("change", () => dispatch({ type: "amount", value: String(typedAmount(state)) }));
        range.addEventListener("input", () => dispatch({ type: "amount", value: range.value }));
        amountBox = box;
        slider = range;
        sizing = h("div", { class: "sizing" },
          h("div", { class: "presets", id: "presets" }, ...presets.map((p) =>
            h("button", { type: "button", class: "quiet preset", "data-preset": p.preset, onclick: () => dispatch({ type: "preset", preset: p.preset }) }, presetLabel(p.preset)))),
          h("div", { class: "amount-row" }, range, box));
      }
      return [
        h("div", { class: "your-turn" }, t("turn.yours"), " ", myClock),
        sizing,
        h("div", { class: "actions", id: "actions" },
          can(ActionKind.FOLD) ? h("button", { id: "act-fold", class: "fold", onclick: () => void act(ActionKind.FOLD) }, t("act.fold")) : null,
          can(ActionKind.CHECK) ? h("button", { id: "act-check", onclick: () => void act(ActionKind.CHECK) }, t("act.check")) : null,
          can(ActionKind.CALL) ? h("button", { id: "act-call", onclick: () => void act(ActionKind.CALL) }, t("act.call", { amount: legal.callAmount })) : null,
          kind !== null ? h("button", { id: "act-bet", class: "play", onclick: () => void act(kind, typedAmount(state)) }, kind === ActionKind.BET ? t("act.bet") : t("act.raise")) : null,
          can(ActionKind.ALL_IN) ? h("button", { id: "act-all-in", onclick: () => void act(ActionKind.ALL_IN) }, t("act.all_in", { amount: legal.allInAmount })) : null,
        ),
      ];
    });
    // What the player typed stays; a preset or the slider puts its amount in the box.
    if (amountBox && amountBox.value !== state.amount) amountBox.value = state.amount;
    if (slider && state.amount !== "" && slider.value !== state.amount) slider.value = state.amount;
    tickClocks();
  }

  function drawPreActions(offered: PreAction[]): void {
    keyed(controls, `pre/${offered.join(",")}`, () => [
      h("div", { class: "pre-actions", id: "pre-actions" }, ...offered.map((value) => {
        const box = h("input", { type: "checkbox", "data-pre": value });
        box.addEventListener("change", () => dispatch({ type: "pre", choice: box.checked ? value : "" }));
        return h("label", { class: "pre" }, box, preActionLabel(value));
      })),
    ]);
    for (const box of controls.querySelectorAll<HTMLInputElement>("input[data-pre]")) {
      const checked = box.dataset.pre === state.preAction;
      if (box.checked !== checked) box.checked = checked;
    }
  }

  function drawSit(): void {
    const min = room?.minBuyIn ?? 0n;
    const max = room?.maxBuyIn ?? 0n;
    keyed(controls, `sit/${min}/${max}`, () => {
      const buyIn = h("input", { type: "number", id: "buy-in", inputmode: "numeric", min: String(min), max: String(max), step: 1, value: state.buyIn || String(min), "aria-label": t("sit.buy_in_label") });
      buyIn.addEventListener("input", () => dispatch({ type: "buy-in", value: buyIn.value }));
      return [
        h("div", { class: "sit" }, h("label", {}, min === max ? t("sit.buy_in_fixed", { amount: min }) : t("sit.buy_in", { min, max }), " ", buyIn),
          h("button", { id: "sit-down", class: "play", onclick: () => void sitDownFromPanel() }, t("room.sit_down"))),
      ];
    });
  }

  function drawBar(view: TableView): void {
    if (spectate) return;
    const seat = view.seats.find((s) => s.playerId === state.me);
    if (!seat) return drawSit();
    const legal = myTurn(view);
    if (legal) return drawTurn(legal);
    const offered = preActionsOffered(state);
    if (offered.length > 0) return drawPreActions(offered);
    const betting = view.street >= Street.PREFLOP && view.street <= Street.RIVER && view.phase === TablePhase.HAND_IN_PROGRESS;
    const text = betting ? t("turn.out_of_hand") : t("turn.next_hand");
    keyed(controls, `wait/${text}`, () => [h("p", { class: "muted" }, text)]);
  }

  function render(): void {
    drawLog();
    drawChat();
    const view = state.view;
    if (!view) return;
    drawFelt(view);
    const seat = view.seats.find((s) => s.playerId === state.me);
    patch(seatToggle, seat?.status === SeatStatus.SITTING_OUT ? t("table.sit_in") : t("table.sit_out"));
    seatToggle.hidden = !seat;
    drawBar(view);
  }

  // ------------------------------------------------------------------ the clocks

  // Whose turn and how long, at the seat, for everybody: "to act · 12s · bank 15s".
  function tickClocks(): void {
    const left = secondsLeft(state.view, viewReceivedAt, Date.now());
    for (const clock of felt.querySelectorAll<HTMLElement>("[data-clock]")) {
      const bank = Number(clock.dataset.bank ?? 0);
      patch(clock, left === null ? t("seat.clock_bank", { bank }) : t("seat.clock", { left, bank }));
      clock.classList.toggle("urgent", left !== null && left <= 5);
    }
    if (myClock?.isConnected) {
      patch(myClock, left === null ? "" : t("turn.seconds", { left }));
      myClock.classList.toggle("urgent", left !== null && left <= 5);
    }
  }
  const clocks = window.setInterval(tickClocks, 250);
  render(); // the kept lines, before the table's first message

  return {
    back: () => void back(),
    leave: () => {
      alive = false;
      feed.stop();
      window.clearInterval(clocks);
      bar.disconnect();
      document.documentElement.style.removeProperty("--table-bar");
    },
  };
}

function presetLabel(preset: Preset): string {
  switch (preset) {
    case "min": return t("preset.min");
    case "half": return t("preset.half_pot");
    case "two-thirds": return t("preset.two_thirds_pot");
    case "pot": return t("preset.pot");
    case "all-in": return t("preset.all_in");
  }
}

function preActionLabel(pre: PreAction): string {
  switch (pre) {
    case "check-fold": return t("pre.check_fold");
    case "call-any": return t("pre.call_any");
    case "fold": return t("pre.fold");
    default: return "";
  }
}
