// The audit trail (every role): history's events, newest first, filtered by actor, player and kind,
// paged; each STAFF_ACTION as who, roles, what, target, why, when and the answer. "Export JSON lines"
// downloads the filtered trail, every page of it, one event a line (audit_lines.ts).
import { h } from "../ui";
import { kindName, roleName, staffRefusal, st } from "../i18n/staff_words";
import { history } from "./api";
import { auditLines, exportFileName } from "./audit_lines";
import type { Signed } from "./session";
import { field, input, load, panel, say, status, when } from "./widgets";
import type { AuditEvent } from "../gen/poker/history/v1/history_pb";

type Kind = "" | "STAFF_ACTION" | "PLAYER_HELD" | "PLAYER_RELEASED" | "RELEASE_DECIDED" | "FAIR_PLAY_CASE_OPENED" | "FAIR_PLAY_CASE_RESOLVED" | "MAINTENANCE_SET" | "HAND_VOIDED";
const KINDS: readonly Kind[] = ["", "STAFF_ACTION", "PLAYER_HELD", "PLAYER_RELEASED", "RELEASE_DECIDED", "FAIR_PLAY_CASE_OPENED", "FAIR_PLAY_CASE_RESOLVED", "MAINTENANCE_SET", "HAND_VOIDED"];

interface Filter {
  kind: string;
  actor: string;
  playerId: string;
}

/** The short name of a method (`poker.cashier.v1.CashierService/DecideHouseFunding`: DecideHouseFunding). */
export function methodName(method: string): string {
  return method.slice(method.lastIndexOf("/") + 1);
}

function answer(code: string, reason: string): string {
  if (!code || code === "OK") return st("audit.ok");
  if (code === "ASKED") return st("audit.asked"); // a change's record written before the change
  const connect = code.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  return st("audit.refused", { words: staffRefusal({ code: connect[0].toUpperCase() + connect.slice(1), reason }), reason: reason || code });
}

/** The sentence `key` with `value` in place of `{name}`, and the part `data` of it (a name, an id)
 * marked as data rather than the console's words. */
function withData(key: "audit.target", name: string, value: string, data: string): (string | HTMLElement)[] {
  const text = st(key, { [name]: value });
  const at = data ? text.lastIndexOf(data) : -1;
  if (at < 0) return [text];
  return [text.slice(0, at), h("span", { class: "data" }, data), text.slice(at + data.length)].filter((c) => c !== "");
}

function eventRow(e: AuditEvent): HTMLElement {
  const a = e.staffAction;
  if (e.kind === "STAFF_ACTION" && a) {
    const words = [a.roomId && st("audit.room", { id: a.roomId }), a.caseId && st("audit.case", { id: a.caseId }), e.playerIds.length ? st("audit.players", { ids: e.playerIds.join(", ") }) : ""].filter(Boolean).join("; ");
    // The subject (a name, an id) is data, not the console's words.
    const subject = e.subject && !e.playerIds.includes(e.subject) && e.subject !== a.roomId && e.subject !== a.caseId ? e.subject : "";
    const target = [words, subject].filter(Boolean).join("; ");
    return h(
      "li",
      { class: `event staff-action ${a.code === "OK" || !a.code ? "ok-line" : a.code === "ASKED" ? "asked-line" : "refused-line"}`, "data-kind": e.kind, "data-code": a.code, "data-method": methodName(a.method), "data-actor": e.actor, "data-event": e.eventId },
      h("p", { class: "event-head" }, h("strong", { class: "actor" }, e.actor), " ", ...a.roles.map((r) => h("span", { class: "role" }, roleName(r))), " ", h("span", { class: "method" }, methodName(a.method)), a.mutating ? h("span", { class: "badge" }, st("audit.change")) : null, " ", h("span", { class: "muted" }, when(e.time))),
      target ? h("p", { class: "target" }, ...withData("audit.target", "target", target, subject)) : null,
      a.why ? h("p", { class: "why quote" }, a.why) : null,
      h("p", { class: "answer muted" }, answer(a.code, a.reason), a.requestId ? ` · ${a.requestId}` : ""),
    );
  }
  return h(
    "li",
    { class: "event", "data-kind": e.kind, "data-actor": e.actor, "data-event": e.eventId },
    h("p", { class: "event-head" }, h("strong", { class: "kind" }, kindName(e.kind)), " ", h("span", { class: "actor" }, e.actor), " ", h("span", { class: "muted" }, when(e.time))),
    e.subject ? h("p", { class: "target" }, ...withData("audit.target", "target", e.subject, e.subject)) : null,
    e.details ? h("p", { class: "details data" }, e.details) : null,
  );
}

async function everyPage(filter: Filter): Promise<AuditEvent[]> {
  const events: AuditEvent[] = [];
  let token = "";
  for (let page = 0; page < 1000; page++) {
    const reply = await history.listAuditEvents({ ...filter, page: { pageSize: 500, pageToken: token } });
    events.push(...reply.events);
    token = reply.page?.nextPageToken ?? "";
    if (!token) break;
  }
  return events;
}

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" }));
  const link = h("a", { href: url, download: name, class: "hidden-link" });
  document.body.append(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function showAudit(root: HTMLElement, _s: Signed): void {
  const kind = h("select", { name: "kind", id: "audit-kind" }, ...KINDS.map((k) => h("option", { value: k }, k ? kindName(k) : st("audit.any_kind"))));
  const actor = input("actor", { id: "audit-actor", maxlength: 160, placeholder: st("audit.actor_hint") });
  const player = input("player_id", { id: "audit-player", maxlength: 128, placeholder: st("audit.player_hint") });
  const list = h("ul", { class: "events", id: "audit-events" });
  const out = h("div", {}, list);
  const more = h("button", { type: "button", class: "quiet", id: "audit-more", hidden: true }, st("common.more"));
  const exportLine = status("audit-export-status");
  let token = "";
  let filter: Filter = { kind: "", actor: "", playerId: "" };
  const page = async (first: boolean): Promise<void> => {
    if (first) {
      token = "";
      list.replaceChildren();
    }
    more.disabled = true;
    try {
      const reply = await history.listAuditEvents({ ...filter, page: { pageSize: 50, pageToken: token } });
      token = reply.page?.nextPageToken ?? "";
      list.append(...reply.events.map(eventRow));
      if (first && !reply.events.length) list.append(h("li", { class: "muted" }, st("audit.none")));
      more.hidden = !token;
    } catch (error) {
      void load(out, () => Promise.reject(error));
    } finally {
      more.disabled = false;
    }
  };
  const search = h(
    "form",
    {
      id: "audit-filter",
      class: "inline-form",
      onsubmit: (event: Event) => {
        event.preventDefault();
        filter = { kind: kind.value, actor: actor.value.trim(), playerId: player.value.trim() };
        out.replaceChildren(list);
        void page(true);
      },
    },
    h("div", { class: "row" }, field(st("audit.kind"), kind), field(st("audit.actor"), actor), field(st("audit.player"), player), h("button", { type: "submit", id: "audit-search" }, st("audit.search"))),
  );
  const exportButton = h(
    "button",
    {
      type: "button",
      class: "quiet",
      id: "audit-export",
      onclick: async () => {
        exportButton.disabled = true;
        say(exportLine, st("audit.exporting"));
        try {
          const events = await everyPage(filter);
          download(exportFileName(new Date()), auditLines(events));
          say(exportLine, st("audit.exported", { count: events.length }), "ok");
        } catch (error) {
          void load(out, () => Promise.reject(error));
          say(exportLine, "", "muted");
        } finally {
          exportButton.disabled = false;
        }
      },
    },
    st("audit.export"),
  );
  more.addEventListener("click", () => void page(false));
  root.append(h("h2", {}, st("menu.audit")), panel("audit-filter-panel", st("audit.filter"), search, h("div", { class: "row" }, exportButton, exportLine)), panel("audit-list", st("audit.events"), out, more));
  void page(true);
}
