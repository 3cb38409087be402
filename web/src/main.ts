// The page: sign in (Telegram Mini App initData, or a development name), then the lobby, a table, a
// house game or the player's hands. One screen at a time; each screen cleans up when left.
import { gateway, describe } from "./api";
import { h, languageSwitch, mount, toast } from "./ui";
import { applyToDocument, onLanguageChange, t } from "./i18n";
import { resume, session, signInByName, signInWithTelegram, telegramInitData, onSessionChange } from "./session";
import { showLobby } from "./lobby";
import { showTable } from "./table_screen";
import { showHouse } from "./house_screen";
import { showHands } from "./hands_screen";
import { enterScreen, startTelegram } from "./telegram";

export interface Screen {
  leave(): void;
  /** What Telegram's BackButton does here (else: back to the lobby). */
  back?(): void;
}

let screen: Screen | null = null;

export type Route =
  | { name: "lobby" }
  | { name: "table"; roomId: string; tableId: string; spectate: boolean }
  | { name: "house"; roomId: string; tableId: string }
  | { name: "hands" };

const ROUTE_KEY = "poker.route";

export function go(route: Route): void {
  screen?.leave();
  screen = null;
  enterScreen(route.name === "lobby" ? null : () => (screen?.back ? screen.back() : go({ name: "lobby" })));
  sessionStorage.setItem(ROUTE_KEY, JSON.stringify(route));
  switch (route.name) {
    case "lobby":
      screen = showLobby();
      break;
    case "table":
      screen = showTable(route.roomId, route.tableId, route.spectate);
      break;
    case "house":
      screen = showHouse(route.roomId, route.tableId);
      break;
    case "hands":
      screen = showHands();
      break;
  }
}

function savedRoute(): Route {
  try {
    const route = JSON.parse(sessionStorage.getItem(ROUTE_KEY) ?? "") as Route;
    if (route && typeof route.name === "string") return route;
  } catch {
    // No saved screen: the lobby.
  }
  return { name: "lobby" };
}

async function showSignIn(): Promise<void> {
  screen?.leave();
  screen = null;
  enterScreen(null);
  const options = await gateway.getSignInOptions({}).catch(() => null);
  const name = h("input", { id: "name", name: "name", placeholder: t("sign_in.name"), maxlength: 32, autocomplete: "username" });
  const status = h("p", { class: "muted", id: "sign-in-status" });
  const form = h(
    "form",
    {
      class: "card-panel",
      id: "sign-in",
      onsubmit: async (event: Event) => {
        event.preventDefault();
        status.textContent = t("sign_in.signing_in");
        try {
          await signInByName(name.value.trim());
          go(savedRoute());
        } catch (error) {
          status.textContent = describe(error);
        }
      },
    },
    h("h2", {}, t("sign_in.title")),
    options?.development
      ? h("div", {}, h("p", {}, t("sign_in.development")), name, h("button", { type: "submit", id: "sign-in-button" }, t("sign_in.button")))
      : h("p", {}, t("sign_in.telegram")),
    status,
  );
  mount(h("header", { class: "top" }, h("h1", {}, t("app.title")), languageSwitch()), form);
  name.focus();
}

async function boot(): Promise<void> {
  applyToDocument();
  startTelegram();
  // The language switched on the page: the screen again, in its words.
  onLanguageChange(() => {
    if (session()) go(savedRoute());
    else void showSignIn();
  });
  onSessionChange((s) => {
    if (!s) void showSignIn();
  });
  const initData = telegramInitData();
  if (await resume()) {
    go(savedRoute());
    return;
  }
  if (initData) {
    try {
      await signInWithTelegram(initData);
      go(savedRoute());
      return;
    } catch (error) {
      toast(describe(error), "error");
    }
  }
  await showSignIn();
}

export function me(): string {
  return session()?.playerId ?? "";
}

void boot();
