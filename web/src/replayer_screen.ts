// The hand replayer on "My hands": a finished hand drawn step by step on a felt like the table's (the
// board so far, each seat's stack, bet and the cards the reader may see, the pot, the step in words),
// with first / previous / play-pause / next / last. What each step shows is replayer.ts's (pure); this
// module only draws it and moves the step (play: one step a second, stopping at the last).
import { h, card, chips, signedChips } from "./ui";
import { t } from "./i18n";
import { replayFrame, replaySteps, type ReplayFrame, type StreetCode } from "./replayer";
import type { HandRecord } from "./gen/poker/history/v1/history_pb";

export interface ReplayerView {
  element: HTMLElement;
  /** Stops playing (the view is being closed). */
  stop(): void;
}

export const REPLAY_STEP_MS = 1000;
const PLAY = "▶";
const PAUSE = "❚❚";

function streetWords(street: StreetCode): string {
  switch (street) {
    case "PREFLOP": return t("street.preflop");
    case "FLOP": return t("street.flop");
    case "TURN": return t("street.turn");
    case "RIVER": return t("street.river");
    case "SHOWDOWN": return t("street.showdown");
  }
}

/** The replayer of `record` for the reader `me`; `everyCard`: every hole card face up (staff). */
export function replayerView(record: HandRecord, me: string, onClose: () => void, everyCard = false): ReplayerView {
  const steps = replaySteps(record);
  let step = 0;
  let timer = 0;

  const street = h("div", { class: "street", id: "replay-street" });
  const board = h("div", { class: "board", id: "replay-board" });
  const pot = h("div", { class: "pots", id: "replay-pot" });
  const oval = h("div", { class: "table-oval" }, h("div", { class: "center" }, street, board, pot));
  const text = h("ol", { class: "replay-text", id: "replay-text", "aria-live": "polite" });
  const counter = h("span", { class: "replay-step", id: "replay-step" });
  const button = (id: string, label: string, face: string, onclick: () => void): HTMLButtonElement =>
    h("button", { type: "button", id, class: "quiet", title: label, "aria-label": label, onclick }, face);
  // Signs every phone's fonts have (the media symbols ⏮ ⏸ ⏭ are missing from some).
  const first = button("replay-first", t("replay.first"), "«", () => show(0));
  const previous = button("replay-prev", t("replay.previous"), "‹", () => show(step - 1));
  const play = button("replay-play", t("replay.play"), PLAY, () => (timer ? pause() : start()));
  const next = button("replay-next", t("replay.next"), "›", () => show(step + 1));
  const last = button("replay-last", t("replay.last"), "»", () => show(steps - 1));
  const element = h(
    "section",
    { class: "replayer", id: "replayer", "data-hand": record.handId },
    h("div", { class: "replay-head" },
      h("h3", {}, t("replay.title")),
      h("button", { type: "button", id: "replay-close", class: "quiet", onclick: () => { stop(); onClose(); } }, t("replay.close"))),
    h("section", { class: "felt" }, oval),
    text,
    h("div", { class: "replay-controls", role: "group", "aria-label": t("replay.title") }, first, previous, play, next, last, counter),
  );

  function seatNode(frame: ReplayFrame, index: number): HTMLElement {
    const s = frame.seats[index];
    const mine = frame.seats.find((x) => x.you)?.seat ?? frame.seats[0]?.seat ?? 0;
    const size = Math.max(record.tableSize, frame.seats.length, 2);
    // The reader's seat at the bottom, the others clockwise from it, as at the table.
    const angle = (2 * Math.PI * (s.seat - mine)) / size + Math.PI / 2;
    const node = h(
      "div",
      {
        class: `seat${s.you ? " mine" : ""}${frame.acting === s.seat ? " turn" : ""}${s.folded ? " folded" : ""}`,
        "data-seat": s.seat,
      },
      h("div", { class: "seat-name" }, s.name, s.button ? h("span", { class: "dealer", title: t("seat.dealer_name") }, t("seat.dealer")) : null),
      h("div", { class: "seat-cards" }, ...s.cards.map((c) => card(c ?? "", c === null))),
      h("div", { class: "seat-stack" }, chips(s.stack), s.allIn ? t("seat.all_in") : ""),
      s.bet > 0n ? h("div", { class: "seat-bet" }, chips(s.bet)) : null,
      s.net !== null ? h("div", { class: `seat-net ${s.net >= 0n ? "won" : "lost"}` }, t("replay.net", { net: signedChips(s.net) })) : null,
    );
    node.style.setProperty("left", `${50 + 34 * Math.cos(angle)}%`);
    node.style.setProperty("top", `${50 + 38 * Math.sin(angle)}%`);
    return node;
  }

  function draw(): void {
    const frame = replayFrame(record, me, step, everyCard);
    street.textContent = streetWords(frame.street);
    board.replaceChildren(...frame.board.map((c) => card(c)));
    pot.replaceChildren(...(frame.pot > 0n ? [h("span", { class: "pot" }, t("pot.amount", { pot: t("pot.single"), amount: frame.pot }))] : []));
    for (const node of oval.querySelectorAll(".seat")) node.remove();
    oval.append(...frame.seats.map((_, i) => seatNode(frame, i)));
    text.replaceChildren(...frame.lines.map((line) => h("li", {}, line)));
    counter.textContent = t("replay.step", { step: frame.step + 1, steps: frame.steps });
    element.dataset.step = String(frame.step);
    first.disabled = previous.disabled = frame.step === 0;
    next.disabled = last.disabled = frame.step === steps - 1;
  }

  function show(to: number): void {
    step = Math.max(0, Math.min(steps - 1, to));
    if (step === steps - 1) pause();
    draw();
  }

  function start(): void {
    if (step === steps - 1) show(0);
    play.textContent = PAUSE;
    play.title = t("replay.pause");
    play.setAttribute("aria-label", t("replay.pause"));
    play.setAttribute("aria-pressed", "true");
    timer = window.setInterval(() => show(step + 1), REPLAY_STEP_MS);
  }

  function pause(): void {
    window.clearInterval(timer);
    timer = 0;
    play.textContent = PLAY;
    play.title = t("replay.play");
    play.setAttribute("aria-label", t("replay.play"));
    play.setAttribute("aria-pressed", "false");
  }

  function stop(): void {
    pause();
  }

  draw();
  return { element, stop };
}
