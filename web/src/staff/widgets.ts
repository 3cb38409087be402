// The console's building blocks over ../ui.ts's `h` (text nodes only, never markup): a labelled field,
// a table, a tile, and the action form every change goes through (its fields, the staff member's
// required reason, one request id per action kept for its retries, the answer in words).
import { h, toast } from "../ui";
import { formatDateTime } from "../i18n";
import { st } from "../i18n/staff_words";
import { Action, describe, REASON_MAX } from "./api";
import { cleanReason } from "./reason";
import { ChipPool } from "../gen/poker/common/v1/common_pb";
import type { Timestamp } from "@bufbuild/protobuf/wkt";

type Child = Node | string | null | undefined | false;

/** A label with its control. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  return h("label", { class: "field" }, h("span", { class: "field-label" }, label), control, hint ? h("span", { class: "field-hint muted" }, hint) : null);
}

export function input(name: string, attributes: Record<string, string | number | boolean | undefined> = {}): HTMLInputElement {
  return h("input", { name, id: attributes.id as string | undefined, ...attributes });
}

export function select(name: string, options: readonly (readonly [string, string])[], chosen = ""): HTMLSelectElement {
  const element = h("select", { name });
  for (const [value, label] of options) {
    const option = h("option", { value }, label);
    if (value === chosen) option.selected = true;
    element.append(option);
  }
  return element;
}

export function checkbox(name: string, label: string, checked = false): { element: HTMLElement; box: HTMLInputElement } {
  const box = h("input", { type: "checkbox", name });
  box.checked = checked;
  return { element: h("label", { class: "check" }, box, h("span", {}, label)), box };
}

/** A table: its head and rows of cells (a cell is text or a node). */
export function table(head: readonly string[], rows: readonly (readonly Child[])[], attributes: Record<string, string> = {}): HTMLElement {
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "grid", ...attributes },
      h("thead", {}, h("tr", {}, ...head.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, ...rows.map((cells) => h("tr", {}, ...cells.map((c) => h("td", {}, c))))),
    ),
  );
}

/** A dashboard tile: a title, a figure and lines under it. */
export function tile(id: string, title: string, ...body: Child[]): HTMLElement {
  return h("section", { class: "tile", id }, h("h3", {}, title), ...body);
}

export function panel(id: string, title: string, ...body: Child[]): HTMLElement {
  return h("section", { class: "panel", id }, h("h2", {}, title), ...body);
}

/** A timestamp as the language writes it ("" when unset). */
export function when(time: Timestamp | undefined): string {
  if (!time || (!time.seconds && !time.nanos)) return "";
  return formatDateTime(Number(time.seconds) * 1000 + Math.floor(time.nanos / 1_000_000));
}

export function poolName(pool: ChipPool): string {
  return pool === ChipPool.UNSPECIFIED ? st("pool.any") : ChipPool[pool];
}

/** A line that says what is happening (loading, an answer, a refusal). */
export function status(id: string): HTMLElement {
  return h("p", { class: "status muted", id, role: "status", "aria-live": "polite" });
}

export function say(line: HTMLElement, text: string, kind: "muted" | "error" | "ok" = "muted"): void {
  line.textContent = text;
  line.className = `status ${kind}`;
}

/** A read that fills `out`: loading words first, then what `fill` makes, or the refusal in words. */
export async function load(out: HTMLElement, fill: () => Promise<Child | Child[]>): Promise<void> {
  out.replaceChildren(h("p", { class: "muted" }, st("common.loading")));
  try {
    const made = await fill();
    out.replaceChildren(...(Array.isArray(made) ? made : [made]).filter((c): c is Node | string => !!c));
  } catch (error) {
    out.replaceChildren(h("p", { class: "error", role: "alert" }, describe(error)));
  }
}

export interface Choice {
  /** What the button chooses (`approve`), handed to `run`. */
  choice: string;
  label: string;
  danger?: boolean;
  disabled?: boolean;
}

export interface ActionFormOptions {
  id: string;
  /** The button's words (one button). */
  submit?: string;
  /** Or the buttons of a choice (approve / reject). */
  choices?: Choice[];
  /** The form's own fields (besides the reason). */
  fields?: Child[];
  /** A change that takes something away (disable, reject, hold): the button says so by its colour. */
  danger?: boolean;
  /** The change: given the reason, the action's request id and the button pressed; returns the
   * words of its result. */
  run: (reason: string, requestId: string, choice: string) => Promise<string>;
  /** After it went through. */
  then?: () => void;
}

/** The form of one change: its fields, the staff member's reason (required, their own words, up to
 * 500 characters), the button. Its request id stays the same for every retry of the same change (the
 * same fields and reason) and is new once the change went through or the fields changed. */
export function actionForm(options: ActionFormOptions): HTMLFormElement {
  const action = new Action();
  let last = "";
  const reason = h("textarea", {
    name: "reason",
    class: "reason",
    required: true,
    maxlength: REASON_MAX,
    rows: 2,
    placeholder: st("reason.placeholder"),
  });
  const choices: Choice[] = options.choices ?? [{ choice: "", label: options.submit ?? "", danger: options.danger }];
  const buttons = choices.map((c) =>
    h("button", { type: "submit", "data-choice": c.choice || undefined, class: c.danger ? "danger" : "", disabled: c.disabled }, c.label),
  );
  const line = status(`${options.id}-status`);
  const form: HTMLFormElement = h(
    "form",
    {
      class: "action-form",
      id: options.id,
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const words = cleanReason(reason.value);
        if (!words) {
          say(line, st("reason.required"), "error");
          reason.focus();
          return;
        }
        const pressed = (event as SubmitEvent).submitter;
        const choice = pressed instanceof HTMLButtonElement ? (pressed.dataset.choice ?? "") : "";
        const fingerprint = JSON.stringify([choice, ...[...new FormData(form).entries()].map(([k, v]) => [k, String(v)])]);
        if (fingerprint !== last) {
          if (last) action.done();
          last = fingerprint;
        }
        const before = buttons.map((b) => b.disabled);
        for (const b of buttons) b.disabled = true;
        say(line, st("common.sending"));
        try {
          const result = await options.run(words, action.requestId, choice);
          action.done();
          last = "";
          reason.value = "";
          say(line, result, "ok");
          toast(result);
          options.then?.();
        } catch (error) {
          const text = describe(error);
          say(line, text, "error");
          toast(text, "error");
        } finally {
          buttons.forEach((b, i) => (b.disabled = before[i]));
        }
      },
    },
    ...(options.fields ?? []),
    field(st("reason.label"), reason, st("reason.hint")),
    h("div", { class: "form-actions" }, ...buttons),
    line,
  );
  return form;
}

/** A foldable section (closed until opened). */
export function fold(summary: string, ...body: Child[]): HTMLDetailsElement {
  return h("details", { class: "fold" }, h("summary", {}, summary), ...body);
}
