// A few DOM helpers: elements are built with text nodes only (never innerHTML), so a player's name or
// a chat line can never become markup.
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

export function chips(amount: bigint | number): string {
  return BigInt(amount).toLocaleString("en-US");
}

/** A short message at the bottom of the screen, gone after four seconds. */
export function toast(text: string, kind: "info" | "error" = "info"): void {
  document.getElementById("toast")?.remove();
  const box = h("div", { id: "toast", role: "status", class: `toast ${kind}` }, text);
  document.body.append(box);
  window.setTimeout(() => box.remove(), 4000);
}

const SUITS: Record<string, string> = { c: "♣", d: "♦", h: "♥", s: "♠" };

export function card(text: string, hidden = false): HTMLElement {
  if (hidden || !text) return h("span", { class: "card back", "aria-label": "hidden card" });
  const rank = text[0] === "T" ? "10" : text[0];
  const suit = text[1];
  return h("span", { class: `card suit-${suit}`, "data-card": text }, rank, SUITS[suit] ?? suit);
}
