// The staff directory (admin): who may sign in to the console besides the gateway Secret's first
// administrators, under which name and with which roles (ListStaff), and the form that adds a person,
// changes their roles or takes them off (SetStaffMember, with the administrator's reason; the door
// records it in the audit trail). A change reaches the person at their next renewal. The service
// refuses a name another person has, a new name for a listed person and anybody's own entry; the
// form says so in words.
import { h } from "../ui";
import { roleName, st } from "../i18n/staff_words";
import { because, history } from "./api";
import { ROLES, type Role } from "./roles";
import type { Signed } from "./session";
import { actionForm, checkbox, field, input, load, panel, table, when } from "./widgets";
import type { StaffMember } from "../gen/poker/history/v1/history_pb";

const PAGE = 200;
const PAGES = 10;

async function everyone(includeInactive: boolean): Promise<StaffMember[]> {
  const found: StaffMember[] = [];
  let token = "";
  for (let page = 0; page < PAGES; page++) {
    const reply = await history.listStaff({ includeInactive, page: { pageSize: PAGE, pageToken: token } });
    found.push(...reply.members);
    token = reply.page?.nextPageToken ?? "";
    if (!token) break;
  }
  return found;
}

/** A Telegram account's id as typed (digits only, positive), or null. */
export function telegramIdOf(text: string): bigint | null {
  const digits = text.trim();
  if (!/^[0-9]{1,16}$/.test(digits)) return null;
  const id = BigInt(digits);
  return id > 0n ? id : null;
}

export function showStaffDirectory(root: HTMLElement, s: Signed): void {
  const list = h("div", { id: "staff-list" });
  const shown = checkbox("include_off", st("staff.include_off"));
  shown.box.id = "staff-include-off";

  // The browser checks what it can before a submit (the service checks everything again).
  const telegram = input("telegram_id", { id: "staff-telegram-id", inputmode: "numeric", maxlength: 16, autocomplete: "off", required: true, pattern: "[0-9]{1,16}", title: st("staff.bad_telegram_id") });
  const name = input("name", { id: "staff-name", maxlength: 56, autocomplete: "off", spellcheck: false, required: true, pattern: "[A-Za-z0-9._@\\-]{1,56}", title: st("staff.name_hint") });
  const boxes = new Map<Role, HTMLInputElement>();
  const roleBoxes = h(
    "div",
    { class: "row", id: "staff-roles" },
    ...ROLES.map((role) => {
      const c = checkbox(`role-${role}`, roleName(role));
      c.box.dataset.role = role;
      boxes.set(role, c.box);
      return c.element;
    }),
  );
  const listed = checkbox("active", st("staff.keep_listed"), true);
  listed.box.id = "staff-active";
  // A listed person has a role: the first box says so until one is ticked (or the person is taken off).
  const checkRoles = (): void => {
    const none = listed.box.checked && ![...boxes.values()].some((b) => b.checked);
    boxes.get(ROLES[0])?.setCustomValidity(none ? st("staff.no_role") : "");
  };
  for (const box of [...boxes.values(), listed.box]) box.addEventListener("change", checkRoles);
  checkRoles();

  const edit = (m: StaffMember): void => {
    telegram.value = m.telegramId.toString();
    name.value = m.name;
    for (const [role, box] of boxes) box.checked = m.roles.includes(role);
    listed.box.checked = m.active;
    checkRoles();
    name.focus();
  };

  const refresh = (): void => {
    void load(list, async () => {
      const members = await everyone(shown.box.checked);
      if (!members.length) return h("p", { class: "muted" }, st("staff.none"));
      return table(
        [st("staff.name"), st("staff.telegram_id"), st("staff.roles"), st("staff.state"), st("staff.changed_by"), ""],
        members.map((m) => [
          h("span", { class: "data staff-member", "data-name": m.name, "data-active": String(m.active), "data-roles": m.roles.join("+") }, m.name),
          h("code", {}, m.telegramId.toString()),
          m.roles.map((r) => roleName(r)).join(", "),
          h("span", { class: m.active ? "ok" : "muted" }, st(m.active ? "staff.listed" : "staff.taken_off")),
          h("span", { class: "data" }, `${m.updatedBy} · ${when(m.updateTime)}`),
          m.name.toLowerCase() === s.staff.toLowerCase()
            ? ""
            : h("button", { type: "button", class: "quiet", "data-edit": m.name, onclick: () => edit(m) }, st("staff.edit")),
        ]),
        { id: "staff-table" },
      );
    });
  };
  shown.box.addEventListener("change", refresh);

  const form = actionForm({
    id: "staff-form",
    submit: st("staff.save"),
    fields: [
      h("p", { class: "muted" }, st("staff.form_hint")),
      h("div", { class: "row" }, field(st("staff.telegram_id"), telegram, st("staff.telegram_hint")), field(st("staff.name"), name, st("staff.name_hint"))),
      field(st("staff.roles"), roleBoxes),
      listed.element,
    ],
    run: async (reason, requestId) => {
      const telegramId = telegramIdOf(telegram.value) ?? 0n; // 0: the service's FIELD_REQUIRED
      const roles = ROLES.filter((r) => boxes.get(r)?.checked);
      const active = listed.box.checked;
      const reply = await history.setStaffMember({ requestId, telegramId, name: name.value.trim(), roles, active }, because(reason));
      const m = reply.member;
      return m?.active
        ? st("staff.saved_listed", { name: m.name, roles: m.roles.map((r) => roleName(r)).join(", ") })
        : st("staff.saved_off", { name: m?.name ?? name.value });
    },
    then: refresh,
  });

  refresh();
  root.append(
    h("h2", {}, st("menu.staff")),
    panel("staff-directory-panel", st("staff.directory"), h("p", { class: "muted" }, st("staff.directory_hint")), shown.element, list),
    panel("staff-form-panel", st("staff.form"), form),
  );
}
