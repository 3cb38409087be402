// Telegram Mini App: what the page does inside Telegram's WebView through `Telegram.WebApp`
// (https://core.telegram.org/bots/webapps), loaded by index.html from telegram.org before the bundle.
// Outside Telegram (a plain browser, or the script blocked or offline) there is no WebApp, or one
// with no launch data, and every function here does nothing: the page is the same web page.
//
// - start: the theme's colours as CSS variables (light or dark, again on `themeChanged`), the safe
//   areas (`safeAreaChanged`, `contentSafeAreaChanged`) and the stable viewport height as CSS
//   variables, then `ready()` and `expand()`.
// - enterScreen: Telegram's BackButton, shown on every screen but the lobby, doing what it is given.
// - confirmLeaving: a yes / no question in Telegram's own popup (showConfirm), the browser's confirm
//   outside Telegram.
// - setSeated: while the player holds a seat, closing asks first and a swipe down does not close the
//   app mid-hand; both back as they were once they leave.
// - yourTurn / youWon: haptic feedback.
// Every call is guarded: a client too old for a method (each has a Bot API version) or one that
// throws never breaks the page.

interface Insets {
  top?: number;
  bottom?: number;
  left?: number;
  right?: number;
}

interface WebApp {
  initData?: string;
  initDataUnsafe?: { user?: { language_code?: string } };
  platform?: string;
  colorScheme?: string;
  themeParams?: Record<string, unknown>;
  safeAreaInset?: Insets;
  contentSafeAreaInset?: Insets;
  viewportStableHeight?: number;
  isClosingConfirmationEnabled?: boolean;
  isVerticalSwipesEnabled?: boolean;
  isVersionAtLeast?(version: string): boolean;
  ready?(): void;
  expand?(): void;
  onEvent?(event: string, handler: (...args: unknown[]) => void): void;
  enableClosingConfirmation?(): void;
  disableClosingConfirmation?(): void;
  enableVerticalSwipes?(): void;
  disableVerticalSwipes?(): void;
  BackButton?: { show(): void; hide(): void; onClick(handler: () => void): void };
  showConfirm?(message: string, callback?: (ok: boolean) => void): void;
  HapticFeedback?: { impactOccurred(style: string): void; notificationOccurred(kind: string): void };
}

const SIDES = ["top", "right", "bottom", "left"] as const;
// Telegram passes colours as #rrggbb; nothing else is written into the page's style.
const COLOUR = /^#[0-9a-fA-F]{3,8}$/;

let app: WebApp | null = null;
let backAction: (() => void) | null = null;
let seated = false;
let confirmationBefore = false;
let swipesBefore = true;
let myTurn = false;
let themed = new Set<string>();

/** The WebApp when the page runs inside Telegram; null in a plain browser (no script, or the
 * script's stand-in with no launch data and platform "unknown"). */
function webApp(): WebApp | null {
  const found = (window as unknown as { Telegram?: { WebApp?: WebApp } }).Telegram?.WebApp;
  if (!found) return null;
  const inTelegram = Boolean(found.initData) || (typeof found.platform === "string" && found.platform !== "unknown");
  return inTelegram ? found : null;
}

function supports(version: string): boolean {
  try {
    return app?.isVersionAtLeast?.(version) === true;
  } catch {
    return false;
  }
}

function attempt(call: () => void): void {
  try {
    call();
  } catch {
    // Telegram refused (an older client, or not available here): the page goes on without it.
  }
}

function brightness(hex: string): number {
  const digits = hex.length === 4 ? [...hex.slice(1)].map((d) => d + d).join("") : hex.slice(1, 7);
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(digits.slice(i, i + 2), 16));
  return Math.sqrt(0.299 * r * r + 0.587 * g * g + 0.114 * b * b);
}

/** Every theme colour as `--tg-theme-<key>` (Telegram's own names: bg_color is --tg-theme-bg-color),
 * and the scheme as `data-theme` on the root, which style.css reads for the colours Telegram does not
 * pass. A colour the new theme no longer has is removed, so its default shows again. */
function applyTheme(): void {
  if (!app) return;
  const root = document.documentElement;
  const now = new Set<string>();
  for (const [key, value] of Object.entries(app.themeParams ?? {})) {
    if (typeof value !== "string" || !COLOUR.test(value) || !/^[a-z_]+$/.test(key)) continue;
    const name = `--tg-theme-${key.replace(/_/g, "-")}`;
    root.style.setProperty(name, value);
    now.add(name);
  }
  for (const name of themed) if (!now.has(name)) root.style.removeProperty(name);
  themed = now;
  const background = app.themeParams?.bg_color;
  let scheme = app.colorScheme;
  if (scheme !== "light" && scheme !== "dark") {
    scheme = typeof background === "string" && COLOUR.test(background) && brightness(background) >= 120 ? "light" : "dark";
  }
  if (now.size > 0) {
    root.dataset.theme = scheme;
    root.style.setProperty("color-scheme", scheme);
  } else {
    delete root.dataset.theme;
    root.style.removeProperty("color-scheme");
  }
}

function pixels(value: unknown): string {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? `${Math.round(value)}px` : "0px";
}

/** The device's safe area (notch, home indicator) and the part of it Telegram's own controls cover
 * in full screen, as Telegram's script names them; style.css pads the page by both (and by the
 * browser's env(safe-area-inset-*)). */
function applyInsets(): void {
  if (!app) return;
  const root = document.documentElement;
  for (const side of SIDES) {
    root.style.setProperty(`--tg-safe-area-inset-${side}`, pixels(app.safeAreaInset?.[side]));
    root.style.setProperty(`--tg-content-safe-area-inset-${side}`, pixels(app.contentSafeAreaInset?.[side]));
  }
}

/** The height of the visible part once it stops moving: the toast is pinned to its bottom. */
function applyViewport(stable: boolean): void {
  if (!app || !stable) return;
  const height = app.viewportStableHeight;
  if (typeof height === "number" && Number.isFinite(height) && height > 0) {
    document.documentElement.style.setProperty("--tg-viewport-stable-height", `${Math.round(height)}px`);
  }
}

/** Once, before the first screen: theme, insets, then tell Telegram the page is ready and take the
 * whole height. Nothing at all outside Telegram. */
export function startTelegram(): void {
  app = webApp();
  if (!app) return;
  applyTheme();
  applyInsets();
  applyViewport(true);
  const on = (event: string, handler: (...args: unknown[]) => void): void => attempt(() => app?.onEvent?.(event, handler));
  on("themeChanged", applyTheme);
  on("safeAreaChanged", applyInsets);
  on("contentSafeAreaChanged", applyInsets);
  on("viewportChanged", (...args: unknown[]) => applyViewport((args[0] as { isStateStable?: boolean } | undefined)?.isStateStable === true));
  if (supports("6.1")) attempt(() => app?.BackButton?.onClick(() => backAction?.()));
  attempt(() => app?.ready?.());
  attempt(() => app?.expand?.());
}

/** True inside Telegram (with the WebApp script). */
export function inTelegram(): boolean {
  return app !== null;
}

/** The language of the player's Telegram app (`en`, `ru`, ...), or "" outside Telegram. */
export function telegramLanguage(): string {
  const code = app?.initDataUnsafe?.user?.language_code;
  return typeof code === "string" ? code : "";
}

/** A new screen: Telegram's BackButton shown with `back` (the screen's way back), hidden with null
 * (the lobby, the sign-in); no seat held and no turn until the new screen says so. */
export function enterScreen(back: (() => void) | null): void {
  backAction = back;
  setSeated(false);
  myTurn = false;
  if (!app || !supports("6.1")) return;
  attempt(() => (back ? app?.BackButton?.show() : app?.BackButton?.hide()));
}

/** While the player holds a seat, closing the app asks first and a swipe down does not close it;
 * when they leave, both are as they were before they sat down. */
export function setSeated(now: boolean): void {
  if (!app || now === seated) return;
  seated = now;
  if (now) {
    confirmationBefore = app.isClosingConfirmationEnabled === true;
    swipesBefore = app.isVerticalSwipesEnabled !== false;
    if (supports("6.2")) attempt(() => app?.enableClosingConfirmation?.());
    if (supports("7.7")) attempt(() => app?.disableVerticalSwipes?.());
  } else {
    if (supports("6.2") && !confirmationBefore) attempt(() => app?.disableClosingConfirmation?.());
    if (supports("7.7") && swipesBefore) attempt(() => app?.enableVerticalSwipes?.());
  }
}

/** Asks the player a yes / no question: Telegram's popup (showConfirm, Bot API 6.2) inside Telegram,
 * else the browser's confirm. Resolves true for yes. */
export function confirmLeaving(message: string): Promise<boolean> {
  const popup = app?.showConfirm;
  if (app && popup && supports("6.2")) {
    return new Promise<boolean>((resolve) => {
      try {
        popup.call(app, message, (ok: boolean) => resolve(ok === true));
      } catch {
        resolve(window.confirm(message)); // Telegram refused the popup: the browser asks instead
      }
    });
  }
  return Promise.resolve(window.confirm(message));
}

/** Called with every table update: a tap felt when the turn comes to the player (once per turn). */
export function yourTurn(now: boolean): void {
  if (app && now && !myTurn && supports("6.1")) attempt(() => app?.HapticFeedback?.impactOccurred("medium"));
  myTurn = now;
}

/** The player won a pot. */
export function youWon(): void {
  if (app && supports("6.1")) attempt(() => app?.HapticFeedback?.notificationOccurred("success"));
}
