// The session reminder (responsible gaming, docs/cashier.md): when the player has set one
// (SetSessionReminder, read back with GetSelfLimits), a notice after that many minutes since the
// session began (the page's start, or a sign-in), and again every that many minutes. The notice stays
// until the player closes it or the next one replaces it. Nothing is enforced: the cashier only keeps
// the minutes.
import { cashier } from "./api";
import { onSessionChange } from "./session";
import { h } from "./ui";
import { t } from "./i18n";

/** When the session began (ms): the sign-in, or the page's start where a kept session resumes. */
let started = Date.now();
let minutes = 0;
let timer = 0;
let signedAs = "";

/** The reminder's minutes now (0: off). */
export function reminderMinutes(): number {
  return minutes;
}

/** The minutes the player set (0: off): the notices follow them from now on, counted from the
 * session's start. */
export function useReminder(value: number): void {
  minutes = value > 0 ? value : 0;
  schedule();
}

function schedule(): void {
  window.clearTimeout(timer);
  timer = 0;
  if (!minutes || !signedAs) return;
  const period = minutes * 60_000;
  const due = started + (Math.floor((Date.now() - started) / period) + 1) * period;
  timer = window.setTimeout(() => {
    notice(Math.round((Date.now() - started) / 60_000));
    schedule();
  }, Math.max(0, due - Date.now()));
}

function notice(played: number): void {
  document.getElementById("session-reminder")?.remove();
  const box = h(
    "div",
    { id: "session-reminder", role: "alert", class: "reminder-notice", "data-minutes": played },
    h("span", { class: "reminder-text" }, t("reminder.notice", { count: played })),
    h("button", { type: "button", class: "quiet toast-close", "aria-label": t("message.close"), title: t("message.close"), onclick: () => box.remove() }, "×"),
  );
  document.body.append(box);
}

// A sign-in starts a session (a renewal of the same player's token does not); signing out ends it.
onSessionChange((signed) => {
  if (!signed) {
    signedAs = "";
    useReminder(0);
    document.getElementById("session-reminder")?.remove();
    return;
  }
  if (signed.playerId === signedAs) return;
  started = Date.now();
  signedAs = signed.playerId;
  cashier.getSelfLimits({}).then((reply) => useReminder(reply.sessionReminderMinutes)).catch(() => undefined);
});
