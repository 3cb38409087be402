// Players (support, risk, finance): find a player by id or by the start of their name, then their
// balances and open seat, their statement (paged), their hands (support, risk; one opened in the
// players' replayer with every card: hand_replay.ts), the notes on them (support, risk: notes.ts), the
// requests to release their hold and where they stand (risk, finance: releases.ts), the limits they
// set on themself (support, risk, finance: GetSelfLimits, read only; no form, staff cannot change
// them; greyed out for a role without the read) and, for support, muting them in the chat.
import { h, chips, signedChips } from "../ui";
import { roleList, st, type StaffKey } from "../i18n/staff_words";
import { transferKindName } from "../i18n/staff_words";
import { because, cashier, history, lobby, table as tableService } from "./api";
import { may, rolesOf } from "./roles";
import type { Signed } from "./session";
import { actionForm, field, input, load, panel, poolName, select, table, when } from "./widgets";
import { concerns, pendingFirst, releasesIn, releaseTable } from "./releases";
import { openHand, stopReplay } from "./hand_replay";
import { notesPanel } from "./notes";
import { ChipPool } from "../gen/poker/common/v1/common_pb";
import { BreakKind, SeatSessionState, SelfLimitKind } from "../gen/poker/cashier/v1/cashier_pb";

function balancesOf(out: HTMLElement, playerId: string): void {
  void load(out, async () => {
    const reply = await cashier.getBalances({ playerId });
    const seat = reply.openSeatSession;
    return [
      table(
        [st("player.pool"), st("player.balance"), st("player.locked"), st("player.unlocks")],
        reply.wallets.map((w) => [poolName(w.pool), chips(w.balance), chips(w.lockedAmount), when(w.nextUnlockTime) || "—"]),
        { id: "balances" },
      ),
      seat && seat.state === SeatSessionState.OPEN
        ? h("p", { id: "open-seat" }, st("player.open_seat", { table: seat.tableId, seat: seat.seatIndex + 1, stack: seat.stack, buy_in: seat.buyInAmount, time: when(seat.openTime) }))
        : h("p", { class: "muted", id: "open-seat" }, st("player.no_open_seat")),
    ];
  });
}

const SELF_KINDS: Record<number, StaffKey> = {
  [SelfLimitKind.PURCHASE_DAILY]: "self.kind.PURCHASE_DAILY",
  [SelfLimitKind.PURCHASE_WEEKLY]: "self.kind.PURCHASE_WEEKLY",
  [SelfLimitKind.PURCHASE_MONTHLY]: "self.kind.PURCHASE_MONTHLY",
  [SelfLimitKind.LOSS_DAILY]: "self.kind.LOSS_DAILY",
  [SelfLimitKind.LOSS_WEEKLY]: "self.kind.LOSS_WEEKLY",
  [SelfLimitKind.LOSS_MONTHLY]: "self.kind.LOSS_MONTHLY",
};

/** The limits the player set on themself, their reminder and break (GetSelfLimits): read only. */
function selfLimitsOf(out: HTMLElement, playerId: string): void {
  void load(out, async () => {
    const reply = await cashier.getSelfLimits({ playerId });
    const limits = [...reply.limits].sort((a, b) => a.pool - b.pool || a.kind - b.kind);
    const running = reply.activeBreak;
    return [
      h("p", { class: "muted" }, st("self.read_only")),
      limits.length
        ? table(
            [st("player.pool"), st("self.kind"), st("self.amount"), st("self.used"), st("self.left"), st("self.pending")],
            limits.map((l) => [
              poolName(l.pool),
              st(SELF_KINDS[l.kind] ?? "self.kind.PURCHASE_DAILY"),
              l.amount ? chips(l.amount) : "—",
              chips(l.used),
              l.amount ? chips(l.remaining) : "—",
              !l.pendingTime ? "—" : l.pendingAmount ? st("self.pending_at", { amount: chips(l.pendingAmount), time: when(l.pendingTime) }) : st("self.pending_removal", { time: when(l.pendingTime) }),
            ]),
            { id: "self-limits" },
          )
        : h("p", { class: "muted", id: "self-limits-none" }, st("self.none")),
      h("p", { id: "self-reminder" }, reply.sessionReminderMinutes ? st("self.reminder", { minutes: String(reply.sessionReminderMinutes) }) : st("self.reminder_off")),
      h(
        "p",
        { id: "self-break", "data-kind": running ? BreakKind[running.kind] : "" },
        !running
          ? st("self.no_break")
          : st(running.kind === BreakKind.SELF_EXCLUSION ? "self.self_exclusion" : "self.cooling_off", { time: when(running.endTime), start: when(running.startTime) }),
      ),
    ];
  });
}

function statementOf(out: HTMLElement, playerId: string): void {
  const pool = select("pool", [[String(ChipPool.UNSPECIFIED), st("pool.any")], [String(ChipPool.GRAM), "GRAM"], [String(ChipPool.MPX), "MPX"]]);
  const rows = h("div", {});
  const more = h("button", { type: "button", class: "quiet", id: "statement-more", hidden: true }, st("common.more"));
  let token = "";
  const page = async (first: boolean): Promise<void> => {
    more.disabled = true;
    try {
      const reply = await cashier.getStatement({ playerId, pool: Number(pool.value) as ChipPool, page: { pageSize: 25, pageToken: first ? "" : token } });
      token = reply.page?.nextPageToken ?? "";
      const lines = reply.entries.map((e) =>
        h(
          "li",
          {},
          h("span", { class: e.amount >= 0n ? "ok" : "bad" }, signedChips(e.amount)),
          " ",
          st("statement.line", { kind: transferKindName(e.kind), pool: poolName(e.pool), balance: e.balanceAfter, time: when(e.createTime), account: e.accountId }),
          e.reference ? h("code", { class: "muted" }, ` ${e.reference}`) : null,
        ),
      );
      if (first) rows.replaceChildren(lines.length ? h("ul", { class: "statement", id: "statement" }, ...lines) : h("p", { class: "muted" }, st("statement.empty")));
      else rows.querySelector("ul")?.append(...lines);
      more.hidden = !token;
    } catch (error) {
      void load(rows, () => Promise.reject(error));
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener("click", () => void page(false));
  pool.addEventListener("change", () => void page(true));
  out.replaceChildren(field(st("player.pool"), pool), rows, more);
  void page(true);
}

function handsOf(out: HTMLElement, playerId: string): void {
  const opened = h("div", { id: "opened-hand" });
  const list = h("ul", { class: "hands-list", id: "player-hands" });
  const more = h("button", { type: "button", class: "quiet", hidden: true }, st("common.more"));
  let token = "";
  const page = async (): Promise<void> => {
    try {
      const reply = await history.listMyHands({ playerId, page: { pageSize: 20, pageToken: token } });
      token = reply.page?.nextPageToken ?? "";
      more.hidden = !token;
      if (!reply.hands.length && !list.children.length) list.replaceWith(h("p", { class: "muted" }, st("hands.none")));
      list.append(
        ...reply.hands.map((hand) =>
          h(
            "li",
            { "data-hand": hand.handId },
            h("button", { type: "button", class: "link-button open-hand", "data-hand": hand.handId, onclick: () => openHand(opened, hand.handId) }, hand.handId),
            " ",
            st("hands.line", { table: hand.tableId, time: when(hand.endTime), result: signedChips(hand.netResult) }),
          ),
        ),
      );
    } catch (error) {
      void load(opened, () => Promise.reject(error));
    }
  };
  more.addEventListener("click", () => void page());
  out.replaceChildren(list, more, opened);
  void page();
}

/** The player's holds and releases as the audit trail has them (history makes every hold change
 * through the cashier and audits it, PLAYER_HELD / PLAYER_RELEASED), newest first: when, which,
 * who (an operator, or `history-detectors` for an automatic hold) and the recorded words; the
 * newest says whether and why the player is held now. */
function holdsOf(out: HTMLElement, playerId: string): void {
  void load(out, async () => {
    const [held, released] = await Promise.all(
      ["PLAYER_HELD", "PLAYER_RELEASED"].map((kind) => history.listAuditEvents({ kind, playerId, page: { pageSize: 50 } })),
    );
    const events = [...held.events, ...released.events].sort((a, b) => Number((b.time?.seconds ?? 0n) - (a.time?.seconds ?? 0n)) || (b.time?.nanos ?? 0) - (a.time?.nanos ?? 0));
    if (!events.length) return h("p", { class: "muted", id: "player-holds-none" }, st("player.holds_none"));
    return table(
      [st("player.hold_when"), st("player.hold_what"), st("player.hold_by"), st("player.hold_details")],
      events.map((e) => [
        when(e.time),
        h("span", { class: e.kind === "PLAYER_HELD" ? "warn hold-state" : "ok hold-state", "data-kind": e.kind }, e.kind === "PLAYER_HELD" ? st("player.hold_held") : st("player.hold_released")),
        e.actor,
        h("span", { class: "data" }, e.details),
      ]),
      { id: "player-hold-table" },
    );
  });
}

function playerPanel(out: HTMLElement, s: Signed, playerId: string, name: string): void {
  stopReplay();
  const balances = h("div", {});
  const statement = h("div", {});
  const hands = h("div", {});
  const parts: HTMLElement[] = [h("h3", { id: "player-title" }, st("player.title", { name: name || playerId, id: playerId }))];
  parts.push(panel("player-balances", st("player.balances"), balances));
  balancesOf(balances, playerId);
  parts.push(panel("player-statement", st("player.statement"), statement));
  statementOf(statement, playerId);
  if (may(s.roles, "selfLimits")) {
    const limits = h("div", {});
    parts.push(panel("player-self-limits", st("self.title"), limits));
    selfLimitsOf(limits, playerId);
  } else {
    parts.push(panel("player-self-limits", st("self.title"), h("p", { class: "muted not-yours" }, st("dashboard.read_by", { roles: roleList(rolesOf("selfLimits")) }))));
  }
  if (may(s.roles, "hands")) {
    parts.push(panel("player-hands-panel", st("player.hands"), hands));
    handsOf(hands, playerId);
  }
  const holds = h("div", { id: "player-hold-list" });
  parts.push(panel("player-holds", st("player.holds"), holds));
  holdsOf(holds, playerId);
  if (may(s.roles, "notes")) parts.push(panel("player-notes-panel", st("notes.title"), notesPanel(playerId)));
  if (may(s.roles, "releases")) {
    const releases = h("div", { id: "player-release-list" });
    parts.push(panel("player-releases", st("player.releases"), releases));
    void load(releases, async () => {
      const theirs = pendingFirst((await releasesIn()).filter((r) => concerns(r, "", [playerId]))).slice(0, 20);
      return theirs.length ? releaseTable(theirs, "player-release-table") : h("p", { class: "muted" }, st("player.releases_none"));
    });
  }
  if (s.roles.includes("support")) {
    const minutes = input("minutes", { type: "number", min: 0, max: 43200, value: 60 });
    parts.push(
      panel(
        "player-mute",
        st("mute.title"),
        actionForm({
          id: "mute-form",
          submit: st("mute.button"),
          fields: [field(st("mute.minutes"), minutes, st("mute.hint"))],
          run: async (reason, requestId) => {
            const seconds = BigInt(Math.max(0, Math.trunc(Number(minutes.value) || 0)) * 60);
            const reply = await tableService.mutePlayer({ requestId, playerId, tableId: "", durationSeconds: seconds }, because(reason));
            return reply.mutedUntil ? st("mute.done", { time: when(reply.mutedUntil) }) : st("mute.lifted");
          },
        }),
      ),
    );
  }
  out.replaceChildren(...parts);
}

export function showPlayers(root: HTMLElement, s: Signed): () => void {
  const query = input("query", { id: "player-query", type: "search", required: true, maxlength: 64, placeholder: st("players.query_hint") });
  const results = h("div", { id: "player-results" });
  const detail = h("div", { id: "player-detail", class: "detail" });
  const search = h(
    "form",
    {
      class: "inline-form",
      id: "player-search",
      onsubmit: (event: Event) => {
        event.preventDefault();
        const q = query.value.trim();
        if (!q) return;
        void load(results, async () => {
          const { players } = await lobby.findPlayers({ query: q, page: { pageSize: 50 } });
          if (!players.length) return h("p", { class: "muted" }, st("players.none"));
          return h(
            "ul",
            { class: "matches" },
            ...players.map((p) =>
              h(
                "li",
                {},
                h("button", { type: "button", class: "link-button open-player", "data-player": p.playerId, onclick: () => playerPanel(detail, s, p.playerId, p.displayName) }, h("span", { class: "data" }, p.displayName || p.playerId)),
                " ",
                h("code", { class: "muted" }, p.playerId),
              ),
            ),
          );
        });
      },
    },
    h("div", { class: "row" }, query, h("button", { type: "submit", id: "player-search-button" }, st("players.search"))),
  );
  root.append(h("h2", {}, st("menu.players")), panel("players-search", st("players.find"), search, results), detail);
  return stopReplay;
}
