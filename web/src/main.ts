// The page: sign in (Telegram Mini App initData, or a development name), then the lobby, a table, a
// house game, the player's hands or their limits (limits_screen.ts; the session reminder runs beside
// every screen: reminder.ts). One screen at a time (router.ts); each screen cleans up when left.
import { gateway, describe } from "./api";
import { h, languageSwitch, mount, toast } from "./ui";
import { applyToDocument, onLanguageChange, t } from "./i18n";
import { resume, session, signInByName, signInWithTelegram, telegramInitData, onSessionChange } from "./session";
import { showLobby } from "./lobby";
import { showTable } from "./table_screen";
import { showHouse } from "./house_screen";
import { showHands } from "./hands_screen";
import { showLimits } from "./limits_screen";
import "./reminder";
import { enterScreen, startTelegram } from "./telegram";
import { go, leaveScreen, savedRoute, useScreens, type Route, type Screen } from "./router";

useScreens((route: Route): Screen => {
  switch (route.name) {
    case "lobby":
      return showLobby();
    case "table":
      return showTable(route.roomId, route.tableId, route.spectate);
    case "house":
      return showHouse(route.roomId, route.tableId);
    case "hands":
      return showHands();
    case "limits":
      return showLimits();
  }
});

async function showSignIn(): Promise<void> {
  leaveScreen();
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

void boot();
