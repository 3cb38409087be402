// The fairness check of a house round (Casino Hold'em, Russian Poker) under fairness version 3: a
// round deals in its game's own order, so the page does not map its cards to deck positions; instead
// every card the round's record shows the player must be one of the cards opened to them, each of
// which the version 3 verifier has already held against the commitment made before the deal
// (docs/fairness.md; poker-play checks the same: clients/play/view_model.py::house_cards_opened).
import type { CardOpening } from "./verifier";
import { t } from "../i18n";

const RANKS = "23456789TJQKA"; // i18n-neutral: card notation, the same in every language
const SUITS = "cdhs"; // i18n-neutral: card notation

/** A card index 0..51 in words: 4 * rank + suit, so 0 is 2c and 51 is As. */
export function cardText(index: number): string {
  return `${RANKS[Math.floor(index / 4)] ?? "?"}${SUITS[index % 4] ?? "?"}`;
}

/** Every card a record shows face up, anywhere in it (the dealer's, the boxes', the board, the
 * steps), each once, in index order. */
export function shownCards(record: unknown): number[] {
  const found = new Set<number>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    if (value === null || typeof value !== "object" || value instanceof Uint8Array) return;
    const message = value as { $typeName?: string; index?: number; text?: string; hidden?: boolean };
    if (message.$typeName === "poker.common.v1.Card") {
      if (message.text && !message.hidden) found.add(message.index ?? 0);
      return;
    }
    for (const [key, inner] of Object.entries(value)) if (key !== "$typeName") walk(inner);
  };
  walk(record);
  return [...found].sort((a, b) => a - b);
}

/** The first card shown that was not opened to the player ("" when none), and how many cards were
 * checked (0 with a problem). */
export function houseCardsProblem(shown: number[], openings: CardOpening[]): { problem: string; checked: number } {
  const opened = new Set(openings.map((o) => o.card));
  for (const card of shown) {
    if (!opened.has(card)) return { problem: t("fairness.house_card_not_opened", { card: cardText(card) }), checked: 0 };
  }
  return { problem: "", checked: shown.length };
}
