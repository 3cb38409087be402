// Signing in: the Telegram Login Widget when the door names a bot, a development name when the door
// offers it (never in production). The widget's script is made here, by the bundle (the staff door's
// Content-Security-Policy allows no inline script); it runs in redirect mode (`data-auth-url`: the
// widget sends the browser back to this page with the user's signed fields in the query), because its
// callback mode (`data-onauth`) evaluates the callback's text, which the policy (no 'unsafe-eval')
// refuses. `window.onStaffTelegramAuth(user)` takes the same user object, for a page that hands it
// over itself.
import { h, languageSwitch, mount } from "../ui";
import { language } from "../i18n";
import { st } from "../i18n/staff_words";
import { describe, door } from "./api";
import { signInByName, signInWithTelegram, type WidgetUser } from "./session";
import { say, status } from "./widgets";

const WIDGET = "https://telegram.org/js/telegram-widget.js?22";
const FIELDS = ["id", "first_name", "last_name", "username", "photo_url", "auth_date", "hash"] as const;
let refusal = "";

declare global {
  interface Window {
    onStaffTelegramAuth?: (user: WidgetUser) => void;
  }
}

async function telegramSignIn(user: WidgetUser): Promise<void> {
  try {
    await signInWithTelegram(user);
  } catch (error) {
    refusal = describe(error);
    await showSignIn();
  }
}

window.onStaffTelegramAuth = (user) => void telegramSignIn(user);

/** The widget's redirect back (`?id=…&auth_date=…&hash=…`): signs in with it and takes it out of the
 * address. True when there was one. */
export async function takeWidgetRedirect(): Promise<boolean> {
  const query = new URLSearchParams(location.search);
  if (!query.get("hash") || !query.get("id") || !query.get("auth_date")) return false;
  const user: Record<string, string> = {};
  for (const name of FIELDS) {
    const value = query.get(name);
    if (value !== null) user[name] = value;
  }
  history.replaceState(null, "", location.pathname + location.hash);
  await telegramSignIn(user as unknown as WidgetUser);
  return true;
}

function widget(bot: string): HTMLElement {
  const holder = h("div", { class: "telegram-widget", id: "telegram-widget" });
  const script = document.createElement("script");
  script.async = true;
  script.src = WIDGET;
  script.setAttribute("data-telegram-login", bot);
  script.setAttribute("data-size", "large");
  script.setAttribute("data-userpic", "false");
  script.setAttribute("data-lang", language());
  script.setAttribute("data-auth-url", location.origin + location.pathname);
  holder.append(script);
  return holder;
}

export async function showSignIn(): Promise<void> {
  const line = status("sign-in-status");
  const head = h("header", { class: "session-bar" }, h("h1", {}, st("app.title")), languageSwitch());
  const box = h("section", { class: "panel sign-in", id: "sign-in" }, h("h2", {}, st("sign_in.title")), h("p", { class: "muted" }, st("sign_in.loading")));
  mount(head, h("div", { class: "screen" }, box));
  let options;
  try {
    options = await door.getStaffSignInOptions({});
  } catch (error) {
    box.replaceChildren(h("h2", {}, st("sign_in.title")), h("p", { class: "error", role: "alert" }, describe(error)));
    return;
  }
  const parts: HTMLElement[] = [h("h2", {}, st("sign_in.title")), h("p", {}, st("sign_in.intro"))];
  if (options.telegramBotUsername) {
    parts.push(h("p", { class: "muted" }, st("sign_in.telegram")), widget(options.telegramBotUsername));
  }
  if (options.development) {
    const name = h("input", { id: "staff-name", name: "staff-name", autocomplete: "username", maxlength: 64, required: true, placeholder: st("sign_in.name") });
    const button = h("button", { type: "submit", id: "sign-in-button" }, st("sign_in.button"));
    parts.push(
      h(
        "form",
        {
          id: "development-sign-in",
          class: "inline-form",
          onsubmit: async (event: Event) => {
            event.preventDefault();
            if (!name.value.trim()) return;
            button.disabled = true;
            say(line, st("sign_in.signing_in"));
            try {
              await signInByName(name.value.trim());
            } catch (error) {
              say(line, describe(error), "error");
              button.disabled = false;
            }
          },
        },
        h("p", { class: "muted" }, st("sign_in.development")),
        h("div", { class: "row" }, name, button),
      ),
    );
  }
  if (!options.telegramBotUsername && !options.development) parts.push(h("p", { class: "error" }, st("sign_in.none")));
  parts.push(line);
  box.replaceChildren(...parts);
  if (refusal) {
    say(line, refusal, "error");
    refusal = "";
  }
  document.getElementById("staff-name")?.focus();
}
