// The table's movements: a card dealt slides and fades into place (style.css's `.card.dealt`, a CSS
// animation), and chips fly across the felt with the Web Animations API: a betting round's bets from
// the seats to the pot, a pot from the middle to its winner's seat. Decoration only: a chip is an
// element of its own on top of the felt that takes no pointer and is gone when it lands, nothing
// waits for it, and the felt, the cards and the action bar are drawn at once as always.
// With `prefers-reduced-motion: reduce` nothing moves: a card only fades in (style.css) and no chip
// flies (the stacks and pots change in place).
import { h } from "./ui";

/** How long a chip takes from a seat to the pot or the pot to a seat. */
export const FLIGHT_MS = 420;

/** Whether the player asked for reduced motion (asked each time: the setting can change live). */
export function reducedMotion(): boolean {
  return typeof window.matchMedia === "function" && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}

function centre(box: DOMRect, origin: DOMRect): { x: number; y: number } {
  return { x: box.left + box.width / 2 - origin.left, y: box.top + box.height / 2 - origin.top };
}

/** A chip (`kind`: a bet going to the pot, or a pot going to a winner) flying inside `layer` (a
 * positioned element, the felt's oval) from the middle of `from` to the middle of `to`, `delay` ms
 * after now; nothing under reduced motion. */
export function flyChip(layer: HTMLElement, from: Element, to: Element, kind: "bet" | "pot", delay = 0): void {
  if (reducedMotion() || typeof Element.prototype.animate !== "function") return;
  const origin = layer.getBoundingClientRect();
  const start = centre(from.getBoundingClientRect(), origin);
  const end = centre(to.getBoundingClientRect(), origin);
  const chip = h("span", { class: `chip-fly ${kind}`, "aria-hidden": "true" });
  chip.style.setProperty("left", `${start.x}px`);
  chip.style.setProperty("top", `${start.y}px`);
  layer.append(chip);
  const dx = end.x - start.x;
  const dy = end.y - start.y;
  const flight = chip.animate(
    [
      { transform: "translate(-50%, -50%) scale(1)", opacity: 1 },
      { transform: `translate(calc(-50% + ${dx}px), calc(-50% + ${dy}px)) scale(0.85)`, opacity: 1, offset: 0.85 },
      { transform: `translate(calc(-50% + ${dx}px), calc(-50% + ${dy}px)) scale(0.7)`, opacity: 0 },
    ],
    { duration: FLIGHT_MS, delay, easing: "cubic-bezier(0.3, 0.7, 0.4, 1)", fill: "both" },
  );
  const land = (): void => chip.remove();
  flight.addEventListener("finish", land);
  flight.addEventListener("cancel", land);
}
