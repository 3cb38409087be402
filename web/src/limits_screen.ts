// The limits a player sets on themself (responsible gaming, docs/cashier.md "Limits a player sets on
// themself"): per chip pool the six limits in force (chips bought or lost per day, week, month), what
// is left of each in its rolling window, the raises pending with the time they take effect, the
// session reminder and a break running; and the forms that change them. A stricter limit applies at
// once, a raise or a removal after 24 hours: the form says which before the player confirms. A break
// cannot be undone: its confirmation names its end. Each change keeps its request id for a retry of
// the same change after an error, and takes a new one once it went through or the fields changed.
import { cashier, describe, newRequestId } from "./api";
import { chips, dismissToast, h, mount, toast } from "./ui";
import { formatDateTime, t, type Key } from "./i18n";
import { go, type Screen } from "./router";
import { header, POOL } from "./lobby";
import { useReminder } from "./reminder";
import { ChipPool } from "./gen/poker/common/v1/common_pb";
import { BreakKind, SelfLimitKind, type GetSelfLimitsResponse, type SelfLimit } from "./gen/poker/cashier/v1/cashier_pb";
import type { Timestamp } from "@bufbuild/protobuf/wkt";

export const LIMIT_POOLS: readonly ChipPool[] = [ChipPool.GRAM, ChipPool.MPX];
export const LIMIT_KINDS: readonly SelfLimitKind[] = [
  SelfLimitKind.PURCHASE_DAILY, SelfLimitKind.PURCHASE_WEEKLY, SelfLimitKind.PURCHASE_MONTHLY,
  SelfLimitKind.LOSS_DAILY, SelfLimitKind.LOSS_WEEKLY, SelfLimitKind.LOSS_MONTHLY,
];
const KIND_WORDS: Record<number, Key> = {
  [SelfLimitKind.PURCHASE_DAILY]: "kind.PURCHASE_DAILY",
  [SelfLimitKind.PURCHASE_WEEKLY]: "kind.PURCHASE_WEEKLY",
  [SelfLimitKind.PURCHASE_MONTHLY]: "kind.PURCHASE_MONTHLY",
  [SelfLimitKind.LOSS_DAILY]: "kind.LOSS_DAILY",
  [SelfLimitKind.LOSS_WEEKLY]: "kind.LOSS_WEEKLY",
  [SelfLimitKind.LOSS_MONTHLY]: "kind.LOSS_MONTHLY",
};
const MAX_LIMIT = 1_000_000_000_000n;
const DAY_MS = 86_400_000;

export function kindName(kind: SelfLimitKind): string {
  return t(KIND_WORDS[kind] ?? "kind.PURCHASE_DAILY");
}

function ms(time: Timestamp | undefined): number {
  return time ? Number(time.seconds) * 1000 + Math.floor(time.nanos / 1_000_000) : 0;
}

/** One change's request id: the same for every retry of the same change (the same fields), a new one
 * once it went through or the fields changed. */
class Attempt {
  private id = newRequestId();
  private last = "";

  idFor(fingerprint: string): string {
    if (fingerprint !== this.last) {
      if (this.last) this.id = newRequestId();
      this.last = fingerprint;
    }
    return this.id;
  }

  done(): void {
    this.id = newRequestId();
    this.last = "";
  }
}

/** Whether a new amount for a limit now `current` (0: none) loosens it (a raise or a removal: after
 * 24 hours) rather than tightening it (at once). */
export function loosens(current: bigint, wanted: bigint): boolean {
  return current > 0n && (wanted === 0n || wanted > current);
}

function option(value: string, text: string, chosen = false): HTMLOptionElement {
  const element = h("option", { value }, text);
  element.selected = chosen;
  return element;
}

function labelled(text: string, control: HTMLElement): HTMLElement {
  return h("label", { class: "limits-field" }, h("span", { class: "muted" }, text), control);
}

export function showLimits(): Screen {
  let state: GetSelfLimitsResponse | null = null;
  const view = h("div", { id: "limits-view" }, h("p", { class: "muted" }, t("app.loading")));

  const limitOf = (pool: ChipPool, kind: SelfLimitKind): SelfLimit | undefined =>
    state?.limits.find((l) => l.pool === pool && l.kind === kind);

  function render(reply: GetSelfLimitsResponse): void {
    state = reply;
    const pools = LIMIT_POOLS.map((pool) =>
      h(
        "section",
        { class: "card-panel limits-pool", "data-pool": ChipPool[pool] },
        h("h3", {}, t("limits.pool", { pool: POOL(pool) })),
        h(
          "table",
          { class: "limits-table" },
          h("thead", {}, h("tr", {}, h("th", {}, t("limits.kind_head")), h("th", {}, t("limits.amount_head")), h("th", {}, t("limits.left_head")), h("th", {}, t("limits.pending_head")))),
          h("tbody", {}, ...LIMIT_KINDS.map((kind) => {
            const limit = limitOf(pool, kind);
            const amount = limit?.amount ?? 0n;
            const pendingAt = ms(limit?.pendingTime);
            const pending = !pendingAt
              ? t("limits.dash")
              : limit?.pendingAmount
                ? t("limits.pending", { amount: chips(limit.pendingAmount), time: formatDateTime(pendingAt) })
                : t("limits.pending_removal", { time: formatDateTime(pendingAt) });
            return h(
              "tr",
              { "data-kind": SelfLimitKind[kind], "data-amount": amount.toString(), "data-pending": pendingAt ? (limit?.pendingAmount ?? 0n).toString() : "" },
              h("th", { scope: "row" }, kindName(kind)),
              h("td", { class: "limit-amount" }, amount ? chips(amount) : t("limits.none")),
              h("td", { class: "limit-left" }, amount ? chips(limit?.remaining ?? 0n) : t("limits.dash")),
              h("td", { class: "limit-pending" }, pending),
            );
          })),
        ),
      ),
    );
    const minutes = reply.sessionReminderMinutes;
    const running = reply.activeBreak;
    const breakText = !running
      ? t("limits.no_break")
      : running.kind === BreakKind.SELF_EXCLUSION
        ? t("limits.break_exclusion", { time: formatDateTime(ms(running.endTime)) })
        : t("limits.break_cooling", { time: formatDateTime(ms(running.endTime)) });
    view.replaceChildren(
      ...pools,
      h("p", { class: "muted" }, t("limits.windows")),
      h("p", { id: "limits-reminder", "data-minutes": minutes }, minutes ? t("limits.reminder_every", { count: minutes }) : t("limits.reminder_off")),
      h("p", { id: "limits-break", class: running ? "warn-text" : "", "data-kind": running ? BreakKind[running.kind] : "" }, breakText),
    );
    reminderInput.value = String(minutes);
  }

  async function reload(): Promise<void> {
    try {
      const reply = await cashier.getSelfLimits({});
      render(reply);
      useReminder(reply.sessionReminderMinutes);
    } catch (error) {
      view.replaceChildren(h("p", { class: "error" }, describe(error)));
    }
  }

  // Setting a limit: pool, kind, chips; then what it does and when, confirmed.
  const limitAttempt = new Attempt();
  const poolSelect = h("select", { id: "limit-pool", name: "pool" }, ...LIMIT_POOLS.map((p) => option(String(p), POOL(p))));
  const kindSelect = h("select", { id: "limit-kind", name: "kind" }, ...LIMIT_KINDS.map((k) => option(String(k), kindName(k))));
  const amountInput = h("input", { id: "limit-amount", name: "amount", inputmode: "numeric", pattern: "[0-9]*", autocomplete: "off", value: "" });
  const limitStatus = h("p", { class: "muted", id: "limit-status", role: "status" });
  const limitConfirm = h("div", { id: "limit-confirm-box", class: "confirm-box", hidden: true });
  let limitSending = false;

  function askLimit(event: Event): void {
    event.preventDefault();
    limitStatus.className = "muted";
    limitStatus.textContent = "";
    const text = amountInput.value.trim();
    const amount = /^\d{1,13}$/.test(text) ? BigInt(text) : -1n;
    if (amount < 0n || amount > MAX_LIMIT) {
      limitStatus.className = "error";
      limitStatus.textContent = t("limits.amount_invalid");
      return;
    }
    const pool = Number(poolSelect.value) as ChipPool;
    const kind = Number(kindSelect.value) as SelfLimitKind;
    const current = limitOf(pool, kind)?.amount ?? 0n;
    const later = formatDateTime(Date.now() + DAY_MS);
    const words = { kind: kindName(kind), pool: POOL(pool), amount: chips(amount), time: later };
    const sentence = !loosens(current, amount)
      ? t("limits.confirm_at_once", words)
      : amount === 0n
        ? t("limits.confirm_removal", words)
        : t("limits.confirm_later", words);
    const confirm = h("button", { type: "button", id: "limit-confirm", "data-later": String(loosens(current, amount)) }, t("limits.confirm"));
    confirm.addEventListener("click", () => void sendLimit(pool, kind, amount, confirm));
    limitConfirm.replaceChildren(
      h("p", { id: "limit-confirm-text" }, sentence),
      h("div", { class: "name-actions" }, confirm, h("button", { type: "button", class: "quiet", id: "limit-cancel", onclick: () => { limitConfirm.hidden = true; } }, t("limits.cancel"))),
    );
    limitConfirm.hidden = false;
  }

  async function sendLimit(pool: ChipPool, kind: SelfLimitKind, amount: bigint, button: HTMLButtonElement): Promise<void> {
    if (limitSending) return;
    limitSending = true;
    button.disabled = true;
    limitStatus.className = "muted";
    limitStatus.textContent = t("limits.sending");
    try {
      const requestId = limitAttempt.idFor(JSON.stringify([pool, kind, amount.toString()]));
      const reply = await cashier.setSelfLimit({ requestId, pool, kind, amount });
      limitAttempt.done();
      const effective = ms(reply.effectiveTime);
      const text = effective > ms(reply.changeTime) + 1000 ? t("limits.set_later", { time: formatDateTime(effective) }) : t("limits.set_now");
      limitStatus.className = "ok";
      limitStatus.textContent = text;
      limitConfirm.hidden = true;
      toast(text);
      await reload();
    } catch (error) {
      limitStatus.className = "error";
      limitStatus.textContent = describe(error);
      toast(describe(error), "error");
    } finally {
      limitSending = false;
      button.disabled = false;
    }
  }

  const limitForm = h(
    "form",
    { class: "card-panel limits-form", id: "limit-form", onsubmit: askLimit },
    h("h3", {}, t("limits.set_title")),
    labelled(t("limits.pool_label"), poolSelect),
    labelled(t("limits.kind_label"), kindSelect),
    labelled(t("limits.amount_label"), amountInput),
    h("button", { type: "submit", id: "limit-set" }, t("limits.set")),
    limitConfirm,
    limitStatus,
  );
  for (const control of [poolSelect, kindSelect, amountInput]) control.addEventListener("input", () => { limitConfirm.hidden = true; });

  // The session reminder: 0 off, else 15 to 720 minutes.
  const reminderAttempt = new Attempt();
  const reminderInput = h("input", { id: "reminder-minutes", name: "minutes", inputmode: "numeric", pattern: "[0-9]*", autocomplete: "off", value: "0" });
  const reminderStatus = h("p", { class: "muted", id: "reminder-status", role: "status" });
  const reminderSave = h("button", { type: "submit", id: "reminder-save" }, t("limits.reminder_save"));
  const reminderForm = h(
    "form",
    {
      class: "card-panel limits-form",
      id: "reminder-form",
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const text = reminderInput.value.trim();
        const minutes = /^\d{1,4}$/.test(text) ? Number(text) : -1;
        if (minutes < 0 || (minutes > 0 && minutes < 15) || minutes > 720) {
          reminderStatus.className = "error";
          reminderStatus.textContent = t("limits.reminder_invalid");
          return;
        }
        reminderSave.disabled = true;
        reminderStatus.className = "muted";
        reminderStatus.textContent = t("limits.sending");
        try {
          const reply = await cashier.setSessionReminder({ requestId: reminderAttempt.idFor(String(minutes)), minutes });
          reminderAttempt.done();
          useReminder(reply.minutes);
          reminderStatus.className = "ok";
          reminderStatus.textContent = reply.minutes ? t("limits.reminder_saved", { count: reply.minutes }) : t("limits.reminder_turned_off");
          await reload();
        } catch (error) {
          reminderStatus.className = "error";
          reminderStatus.textContent = describe(error);
          toast(describe(error), "error");
        } finally {
          reminderSave.disabled = false;
        }
      },
    },
    h("h3", {}, t("limits.reminder_title")),
    labelled(t("limits.reminder_label"), reminderInput),
    reminderSave,
    reminderStatus,
  );

  // A break: its kind and days; then, confirmed by a button naming its end, started for good.
  const breakAttempt = new Attempt();
  const breakKind = h("select", { id: "break-kind", name: "kind" },
    option(String(BreakKind.COOLING_OFF), t("limits.cooling_off"), true),
    option(String(BreakKind.SELF_EXCLUSION), t("limits.self_exclusion")));
  const breakDays = h("input", { id: "break-days", name: "days", inputmode: "numeric", pattern: "[0-9]*", autocomplete: "off", value: "7" });
  const breakStatus = h("p", { class: "muted", id: "break-status", role: "status" });
  const breakConfirm = h("div", { id: "break-confirm-box", class: "confirm-box", hidden: true });
  let breakSending = false;

  function askBreak(event: Event): void {
    event.preventDefault();
    breakStatus.className = "muted";
    breakStatus.textContent = "";
    const kind = Number(breakKind.value) as BreakKind;
    const text = breakDays.value.trim();
    const days = /^\d{1,4}$/.test(text) ? Number(text) : -1;
    const exclusion = kind === BreakKind.SELF_EXCLUSION;
    if (exclusion ? days < 183 || days > 3650 : days < 1 || days > 42) {
      breakStatus.className = "error";
      breakStatus.textContent = exclusion ? t("limits.days_invalid_exclusion") : t("limits.days_invalid_cooling");
      return;
    }
    const end = formatDateTime(Date.now() + days * DAY_MS);
    const confirm = h("button", { type: "button", class: "danger", id: "break-confirm" },
      exclusion ? t("limits.break_confirm_exclusion", { time: end }) : t("limits.break_confirm_cooling", { time: end }));
    confirm.addEventListener("click", () => void sendBreak(kind, days, confirm));
    breakConfirm.replaceChildren(
      h("p", { class: "warn-text", id: "break-warning" }, t("limits.break_warning", { time: end })),
      h("div", { class: "name-actions" }, confirm, h("button", { type: "button", class: "quiet", id: "break-cancel", onclick: () => { breakConfirm.hidden = true; } }, t("limits.cancel"))),
    );
    breakConfirm.hidden = false;
  }

  async function sendBreak(kind: BreakKind, days: number, button: HTMLButtonElement): Promise<void> {
    if (breakSending) return;
    breakSending = true;
    button.disabled = true;
    breakStatus.className = "muted";
    breakStatus.textContent = t("limits.sending");
    try {
      const reply = await cashier.startBreak({ requestId: breakAttempt.idFor(JSON.stringify([kind, days])), kind, days });
      breakAttempt.done();
      const text = t("limits.break_started", { time: formatDateTime(ms(reply.endTime)) });
      breakStatus.className = "ok";
      breakStatus.textContent = text;
      breakConfirm.hidden = true;
      toast(text);
      await reload();
    } catch (error) {
      breakStatus.className = "error";
      breakStatus.textContent = describe(error);
      toast(describe(error), "error");
    } finally {
      breakSending = false;
      button.disabled = false;
    }
  }

  const breakForm = h(
    "form",
    { class: "card-panel limits-form", id: "break-form", onsubmit: askBreak },
    h("h3", {}, t("limits.break_title")),
    labelled(t("limits.break_kind_label"), breakKind),
    labelled(t("limits.days_label"), breakDays),
    h("button", { type: "submit", class: "danger", id: "break-start" }, t("limits.break_start")),
    breakConfirm,
    breakStatus,
  );
  for (const control of [breakKind, breakDays]) control.addEventListener("input", () => { breakConfirm.hidden = true; });

  mount(
    header(t("limits.title"), h("button", { id: "back", onclick: () => go({ name: "lobby" }) }, t("limits.back"))),
    h("p", { class: "muted limits-intro" }, t("limits.intro")),
    view,
    limitForm,
    reminderForm,
    breakForm,
  );
  void reload();
  // Its answers and refusals go with it, so none covers the next screen.
  return { leave: () => dismissToast() };
}
