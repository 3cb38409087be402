// A few DOM helpers: elements are built with text nodes only (never innerHTML), so a player's name or
// a chat line can never become markup.
import { chooseLanguage, formatNumber, language, t } from "./i18n";
type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | ((event: Event) => void) | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") element.addEventListener(key.replace(/^on/, ""), value);
    else if (key === "style") {
      // Through the CSSOM: the page's Content-Security-Policy refuses style attributes.
      for (const rule of String(value).split(";")) {
        const [name, ...rest] = rule.split(":");
        if (name && rest.length) element.style.setProperty(name.trim(), rest.join(":").trim());
      }
    }
    else if (value === true) element.setAttribute(key, "");
    else element.setAttribute(key, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function mount(...nodes: Node[]): void {
  const root = document.getElementById("app")!;
  root.replaceChildren(...nodes);
}

/** Chips as the page's language writes a number (`12,500`; Russian `12 500` with a thin space). */
export function chips(amount: bigint | number): string {
  return formatNumber(BigInt(amount));
}

/** Chips with their sign (`+445`, `-445`, `0`). */
export function signedChips(amount: bigint | number): string {
  return formatNumber(BigInt(amount), true);
}

let toastTimer = 0;

/** A message at the bottom of the screen. A refusal (`error`) stays until the player closes it or
 * another message replaces it; news (`info`) goes after four seconds. */
export function toast(text: string, kind: "info" | "error" = "info"): void {
  dismissToast();
  const box = h(
    "div",
    { id: "toast", role: kind === "error" ? "alert" : "status", class: `toast ${kind}` },
    h("span", { class: "toast-text" }, text),
    h("button", { type: "button", class: "quiet toast-close", "aria-label": t("message.close"), title: t("message.close"), onclick: () => box.remove() }, "×"),
  );
  document.body.append(box);
  if (kind === "info") toastTimer = window.setTimeout(() => box.remove(), 4000);
}

export function dismissToast(): void {
  window.clearTimeout(toastTimer);
  document.getElementById("toast")?.remove();
}

/** The RU / EN switch: the current language pressed; a press chooses the other (kept for next time). */
export function languageSwitch(): HTMLElement {
  const button = (chosen: "ru" | "en", label: string, name: string): HTMLElement =>
    h("button", {
      type: "button",
      id: `lang-${chosen}`,
      class: language() === chosen ? "lang" : "lang quiet",
      lang: chosen,
      title: name,
      "aria-pressed": String(language() === chosen),
      onclick: () => chooseLanguage(chosen),
    }, label);
  return h("span", { class: "lang-switch", role: "group", "aria-label": t("language.switch") },
    button("ru", t("language.ru"), t("language.ru_name")),
    button("en", t("language.en"), t("language.en_name")));
}

const SUITS: Record<string, string> = { c: "♣", d: "♦", h: "♥", s: "♠" };

/** A card as text for a line of words: `Ah` as `A♥`, `Td` as `10♦` (the same in every language). */
export function cardText(text: string): string {
  return `${text[0] === "T" ? "10" : text[0]}${SUITS[text[1]] ?? text[1]}`;
}

export function card(text: string, hidden = false): HTMLElement {
  if (hidden || !text) return h("span", { class: "card back", "aria-label": t("card.hidden") });
  const rank = text[0] === "T" ? "10" : text[0];
  const suit = text[1];
  return h("span", { class: `card suit-${suit}`, "data-card": text }, rank, SUITS[suit] ?? suit);
}
