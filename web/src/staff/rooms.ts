// Rooms and tables (operations changes them; support reads): the catalogue with disabled rooms, a
// room's live tables with their occupancy, its maintenance switches, its allow-list and invite codes
// when private; for operations, creating and editing rooms, disabling and enabling them, the lobby's
// and a room's maintenance switches, invite codes and allow-list changes, and closing a cash table
// after its hand (CloseTable: its players cashed out). Every change carries the staff member's reason.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs, type Timestamp } from "@bufbuild/protobuf/wkt";
import { h, chips } from "../ui";
import { formatNumber } from "../i18n";
import { st, variantName } from "../i18n/staff_words";
import { because, lobby, table as tableService } from "./api";
import { may } from "./roles";
import type { Signed } from "./session";
import { allRooms } from "./dashboard";
import { actionForm, checkbox, field, fold, input, load, panel, poolName, select, table, when } from "./widgets";
import { liveTable, type LiveTable } from "./live_table";
import { ChipPool, GameVariant } from "../gen/poker/common/v1/common_pb";
import { RoomSchema, type Maintenance, type Room, type TableSummary } from "../gen/poker/lobby/v1/lobby_pb";
import type { CloseTableResponse } from "../gen/poker/table/v1/table_pb";

export function stakesText(room: Room): string {
  switch (room.stakes.case) {
    case "blinds":
      return st("room.blinds", { small: room.stakes.value.smallBlind, big: room.stakes.value.bigBlind });
    case "limits":
      return st("room.limits", { small: room.stakes.value.smallBet, big: room.stakes.value.bigBet });
    case "antes":
      return st("room.antes", { min: room.stakes.value.minAnte, max: room.stakes.value.maxAnte });
    default:
      return "";
  }
}

const stampMs = (t: Timestamp): number => Number(t.seconds) * 1000 + Math.floor(t.nanos / 1_000_000);

/** A window's bounds in words ("from 12.12 01:00 until 12.12 01:30"); empty without one. */
function windowText(m: Maintenance): string {
  const parts = [
    m.startTime ? st("maintenance.from", { time: when(m.startTime) }) : "",
    m.endTime ? st("maintenance.until", { time: when(m.endTime) }) : "",
  ].filter(Boolean);
  return parts.join(" ");
}

/** The switches as they stand: off, on now, scheduled (a window not open yet), or a window over. */
function maintenanceText(m: Maintenance | undefined): string {
  if (!m || (!m.noNewSeats && !m.noNewHands)) return st("maintenance.off");
  const parts = [m.noNewSeats ? st("maintenance.no_new_seats") : "", m.noNewHands ? st("maintenance.no_new_hands") : ""].filter(Boolean);
  const window = windowText(m);
  const switches = [parts.join(", "), window].filter(Boolean).join("; ");
  const state = m.inForce ? "maintenance.on" : m.endTime && stampMs(m.endTime) <= Date.now() ? "maintenance.ended" : "maintenance.scheduled";
  return st(state, { switches, by: m.setBy || "—", time: when(m.updateTime) || "—" });
}

/** A datetime-local field's value (the browser's time zone) for `t`. */
function localValue(t: Timestamp | undefined): string {
  if (!t) return "";
  const d = new Date(stampMs(t));
  const pad = (n: number): string => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

const VARIANTS: readonly GameVariant[] = [GameVariant.NO_LIMIT_HOLDEM, GameVariant.FIXED_LIMIT_HOLDEM, GameVariant.CASINO_HOLDEM, GameVariant.RUSSIAN_POKER];

interface RoomFields {
  nodes: HTMLElement[];
  read(): Room;
}

const num = (e: HTMLInputElement): bigint => BigInt(Math.max(0, Math.trunc(Number(e.value) || 0)));

/** The fields of a room (a new one, or the changeable ones of `room`). */
function roomFields(room?: Room): RoomFields {
  const isNew = !room;
  const id = input("room_id", { required: isNew, pattern: "[a-z0-9-]{1,64}", maxlength: 64, value: room?.roomId ?? "" });
  const name = input("display_name", { required: true, maxlength: 64, value: room?.displayName ?? "" });
  const variant = select("variant", VARIANTS.map((v) => [String(v), variantName(v)] as const), String(room?.variant ?? GameVariant.NO_LIMIT_HOLDEM));
  const pool = select("pool", [[String(ChipPool.GRAM), "GRAM"], [String(ChipPool.MPX), "MPX"]], String(room?.pool ?? ChipPool.GRAM));
  const seats = input("seats_per_table", { type: "number", min: 1, max: 10, value: room?.seatsPerTable ?? 6 });
  const b = room?.stakes.case === "blinds" ? room.stakes.value : undefined;
  const l = room?.stakes.case === "limits" ? room.stakes.value : undefined;
  const a = room?.stakes.case === "antes" ? room.stakes.value : undefined;
  const sb = input("small_blind", { type: "number", min: 1, value: String(b?.smallBlind ?? 5n) });
  const bb = input("big_blind", { type: "number", min: 1, value: String(b?.bigBlind ?? 10n) });
  const step = input("step", { type: "number", min: 1, value: String(b?.step ?? 5n) });
  const smallBet = input("small_bet", { type: "number", min: 1, value: String(l?.smallBet ?? 10n) });
  const minAnte = input("min_ante", { type: "number", min: 1, value: String(a?.minAnte ?? 10n) });
  const maxAnte = input("max_ante", { type: "number", min: 1, value: String(a?.maxAnte ?? 500n) });
  const maxPayout = input("max_payout", { type: "number", min: 0, value: String(a?.maxPayout ?? 0n) });
  const minBuyIn = input("min_buy_in", { type: "number", min: 0, value: String(room?.minBuyIn ?? 400n) });
  const maxBuyIn = input("max_buy_in", { type: "number", min: 0, value: String(room?.maxBuyIn ?? 2000n) });
  const rake = input("rake_basis_points", { type: "number", min: 0, max: 500, value: room?.rakeBasisPoints ?? 500 });
  const rakeCap = input("rake_cap", { type: "number", min: 0, max: 30, value: String(room?.rakeCap ?? 30n) });
  const tables = input("table_count", { type: "number", min: 1, max: 100, value: room?.tableCount || 1 });
  const noFlop = checkbox("rake_no_flop_no_drop", st("room.no_flop_no_drop"), room?.rakeNoFlopNoDrop ?? true);
  const priv = checkbox("private", st("room.private"), room?.private ?? false);
  const blindsBox = h("div", { class: "row stakes-blinds" }, field(st("room.small_blind"), sb), field(st("room.big_blind"), bb), field(st("room.step"), step));
  const limitsBox = h("div", { class: "row stakes-limits" }, field(st("room.small_bet"), smallBet));
  const antesBox = h("div", { class: "row stakes-antes" }, field(st("room.min_ante"), minAnte), field(st("room.max_ante"), maxAnte), field(st("room.max_payout"), maxPayout));
  const cashBox = h("div", { class: "row cash-only" }, field(st("room.min_buy_in"), minBuyIn), field(st("room.max_buy_in"), maxBuyIn), field(st("room.rake"), rake), field(st("room.rake_cap"), rakeCap));
  const shown = (): void => {
    const v = Number(variant.value) as GameVariant;
    blindsBox.hidden = v !== GameVariant.NO_LIMIT_HOLDEM;
    limitsBox.hidden = v !== GameVariant.FIXED_LIMIT_HOLDEM;
    antesBox.hidden = v === GameVariant.NO_LIMIT_HOLDEM || v === GameVariant.FIXED_LIMIT_HOLDEM;
    cashBox.hidden = !antesBox.hidden ? true : false;
  };
  variant.addEventListener("change", shown);
  variant.disabled = !isNew;
  pool.disabled = !isNew;
  seats.disabled = !isNew;
  shown();
  const nodes = [
    h("div", { class: "row" }, isNew ? field(st("room.id"), id, st("room.id_hint")) : null, field(st("room.name"), name)),
    h("div", { class: "row" }, field(st("room.variant"), variant), field(st("room.pool"), pool), field(st("room.seats"), seats), field(st("room.tables"), tables)),
    blindsBox,
    limitsBox,
    antesBox,
    cashBox,
    h("div", { class: "row" }, noFlop.element, priv.element),
  ];
  return {
    nodes,
    read(): Room {
      const v = Number(variant.value) as GameVariant;
      const made = create(RoomSchema, {
        roomId: room?.roomId ?? id.value.trim(),
        displayName: name.value.trim(),
        variant: room ? room.variant : v,
        pool: room ? room.pool : (Number(pool.value) as ChipPool),
        seatsPerTable: room ? room.seatsPerTable : Number(seats.value),
        minBuyIn: num(minBuyIn),
        maxBuyIn: num(maxBuyIn),
        private: priv.box.checked,
        rakeBasisPoints: Number(rake.value) || 0,
        rakeCap: num(rakeCap),
        rakeNoFlopNoDrop: noFlop.box.checked,
        tableCount: Number(tables.value) || 1,
      });
      if (v === GameVariant.NO_LIMIT_HOLDEM) made.stakes = { case: "blinds", value: { $typeName: "poker.lobby.v1.BlindStakes", smallBlind: num(sb), bigBlind: num(bb), step: num(step) } };
      else if (v === GameVariant.FIXED_LIMIT_HOLDEM) made.stakes = { case: "limits", value: { $typeName: "poker.lobby.v1.LimitStakes", smallBet: num(smallBet), bigBet: num(smallBet) * 2n } };
      else {
        made.stakes = { case: "antes", value: { $typeName: "poker.lobby.v1.AnteStakes", minAnte: num(minAnte), maxAnte: num(maxAnte), maxPayout: num(maxPayout) } };
        made.minBuyIn = 0n;
        made.maxBuyIn = 0n;
        made.rakeBasisPoints = 0;
        made.rakeCap = 0n;
      }
      return made;
    },
  };
}

function maintenanceForm(id: string, roomId: string, current: Maintenance | undefined, then: () => void): HTMLFormElement {
  const seats = checkbox("no_new_seats", st("maintenance.no_new_seats"), current?.noNewSeats ?? false);
  const hands = checkbox("no_new_hands", st("maintenance.no_new_hands"), current?.noNewHands ?? false);
  const message = input("message", { maxlength: 256, value: current?.message ?? "", placeholder: st("maintenance.message_hint") });
  // A window still to come or open is offered again as it is; one that is over is not.
  const keep = current && (current.inForce || (current.startTime && stampMs(current.startTime) > Date.now()));
  const start = input("start_time", { type: "datetime-local", value: keep ? localValue(current?.startTime) : "" });
  const end = input("end_time", { type: "datetime-local", value: keep ? localValue(current?.endTime) : "" });
  // new Date("YYYY-MM-DDTHH:MM") reads the browser's local time, as the field shows it.
  const moment = (e: HTMLInputElement): Timestamp | undefined => (e.value ? timestampFromMs(new Date(e.value).getTime()) : undefined);
  return actionForm({
    id,
    submit: st("maintenance.set"),
    fields: [
      h("div", { class: "row" }, seats.element, hands.element),
      field(st("maintenance.message"), message),
      h("div", { class: "row" }, field(st("maintenance.start"), start), field(st("maintenance.end"), end)),
    ],
    run: async (reason, requestId) => {
      await lobby.setMaintenance(
        {
          requestId,
          roomId,
          maintenance: {
            noNewSeats: seats.box.checked,
            noNewHands: hands.box.checked,
            message: message.value.trim(),
            startTime: moment(start),
            endTime: moment(end),
          },
        },
        because(reason),
      );
      return st(start.value || end.value ? "maintenance.done_window" : "maintenance.done");
    },
    then,
  });
}

/** The live table open on the screen (one at a time), closed on leaving the screen. */
let watching: LiveTable | null = null;

function stopWatching(): void {
  watching?.stop();
  watching = null;
}

/** Opens a table's spectator stream in `area` (closing the one open before). */
function watch(area: HTMLElement, tableId: string): void {
  stopWatching();
  const live = liveTable(tableId, () => {
    if (watching === live) watching = null;
    area.replaceChildren();
  });
  watching = live;
  area.replaceChildren(live.element);
  live.element.scrollIntoView({ block: "start" });
}

/** The variants whose tables CloseTable closes (cash tables; a house game's table is refused). */
const CASH_VARIANTS: readonly GameVariant[] = [GameVariant.NO_LIMIT_HOLDEM, GameVariant.FIXED_LIMIT_HOLDEM];

/** What CloseTable's answer means, in words: after the running hand or at once, and how many players
 * are cashed out. */
function closeAnswer(reply: Pick<CloseTableResponse, "handRunning" | "players">): string {
  if (!reply.players) return st("close.done_empty");
  return reply.handRunning ? st("close.done_after_hand", { count: reply.players }) : st("close.done_now", { count: reply.players });
}

/** The close of one table after its hand (operations), in `area`: what happens, in words, the reason
 * and the confirmation. The form keeps its request id for every retry of the same confirmation after
 * an error; once the close went through its answer replaces the form (a close is asked once). */
function askToClose(area: HTMLElement, listed: TableSummary, then: () => void): void {
  const tableId = listed.tableId;
  let answer = "";
  const cancel = h("button", { type: "button", class: "quiet", id: "close-table-cancel", onclick: () => area.replaceChildren() }, st("close.cancel"));
  const result = h("p", { class: "status ok", id: "close-table-answer", role: "status", "aria-live": "polite", hidden: true });
  const form = actionForm({
    id: "close-table-form",
    submit: st("close.confirm"),
    danger: true,
    run: async (reason, requestId) => {
      const reply = await tableService.closeTable({ requestId, tableId }, because(reason));
      answer = closeAnswer(reply);
      return answer;
    },
    then: () => {
      form.replaceWith(result);
      result.textContent = answer;
      result.hidden = false;
      cancel.textContent = st("close.hide");
      then();
    },
  });
  const section = h(
    "section",
    { class: "panel close-table", id: "close-table", "data-table": tableId },
    h(
      "div",
      { class: "replay-head" },
      h("h2", {}, st("close.title"), " ", h("code", {}, tableId)),
      cancel,
    ),
    h("p", { id: "close-table-what" }, st("close.what")),
    h(
      "p",
      { class: "muted", id: "close-table-now" },
      st(listed.handInProgress ? "close.now_in_hand" : "close.now_between_hands", { count: listed.seatedPlayers }),
    ),
    form,
  );
  area.replaceChildren(section);
  section.scrollIntoView({ block: "start" });
  form.querySelector("textarea")?.focus();
}

function roomDetail(out: HTMLElement, s: Signed, roomId: string, refreshList: () => void): void {
  stopWatching();
  const operations = may(s.roles, "changeRooms");
  const spectate = may(s.roles, "spectate");
  const liveArea = h("div", { id: "live-area" });
  const closeArea = h("div", { id: "close-area" });
  const reload = (): void => roomDetail(out, s, roomId, refreshList);
  void load(out, async () => {
    const [{ room }, maintenance] = await Promise.all([lobby.getRoom({ roomId }), lobby.getMaintenance({ roomId })]);
    if (!room) return null;
    // Closing a table after its hand: operations, and only a cash table (CloseTable refuses a house
    // game's); other roles are not offered it.
    const closer = may(s.roles, "closeTable") && CASH_VARIANTS.includes(room.variant);
    const tablesOut = h("div", { id: "room-tables" });
    const refreshTables = (): void => void load(tablesOut, async () => {
      const { tables } = await lobby.listTables({ roomId });
      if (!tables.length) return h("p", { class: "muted" }, st("tables.none"));
      return table(
        [st("tables.table"), st("tables.seated"), st("tables.waiting"), st("tables.hand"), st("tables.average_pot"), st("tables.hands_per_hour"), st("tables.shard"), st("tables.players"), ""],
        tables.map((t) => [
          t.tableId,
          st("tables.seated_of", { seated: t.seatedPlayers, seats: t.seats }),
          formatNumber(t.waitingPlayers),
          t.handInProgress ? st("tables.in_progress") : st("tables.idle"),
          chips(t.averagePot),
          formatNumber(t.handsPerHour),
          t.shardId || st("tables.no_shard"),
          // The players' names (data). The figures' seat numbers start at 1, as the live view's do
          // (docs/table.md): shown as they come.
          h(
            "span",
            { class: "taken-seats" },
            ...t.takenSeats.flatMap((seat, i) => [
              i ? "; " : "",
              h("span", { class: "data taken-seat", "data-seat": seat.seat }, st("tables.seat", { seat: seat.seat, name: seat.displayName, stack: seat.stack })),
            ]),
          ),
          h(
            "div",
            { class: "form-actions table-actions" },
            spectate ? h("button", { type: "button", class: "quiet watch-table", "data-table": t.tableId, onclick: () => watch(liveArea, t.tableId) }, st("tables.watch")) : null,
            // A table no shard serves has nothing to close (the call would open it first).
            closer && t.shardId ? h("button", { type: "button", class: "quiet close-table", "data-table": t.tableId, onclick: () => askToClose(closeArea, t, refreshTables) }, st("tables.close")) : null,
          ),
        ]),
        { id: "tables-of-room" },
      );
    });
    refreshTables();
    const parts: (HTMLElement | null)[] = [
      h("h3", { id: "room-title" }, h("span", { class: "data" }, room.displayName), " ", h("code", {}, room.roomId)),
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, st("room.variant")), h("dd", {}, variantName(room.variant)),
        h("dt", {}, st("room.stakes")), h("dd", {}, `${stakesText(room)} · ${poolName(room.pool)}`),
        h("dt", {}, st("room.buy_in")), h("dd", {}, room.maxBuyIn ? st("room.buy_in_range", { min: room.minBuyIn, max: room.maxBuyIn }) : "—"),
        h("dt", {}, st("room.state")), h("dd", { id: "room-state" }, room.disabled ? st("room.disabled") : st("room.enabled")),
        h("dt", {}, st("room.access")), h("dd", {}, room.private ? st("room.private") : st("room.public")),
        h("dt", {}, st("room.revision")), h("dd", {}, st("room.revision_value", { revision: room.revision, time: when(room.updateTime) || "—" })),
        h("dt", {}, st("maintenance.title")), h("dd", { id: "room-maintenance" }, maintenanceText(maintenance.room)),
      ),
      h("h3", {}, st("tables.title")),
      tablesOut,
      closeArea,
      liveArea,
    ];
    if (room.private && may(s.roles, "listAllowList")) {
      const listOut = h("div", { id: "allow-list" });
      void load(listOut, async () => {
        const { playerIds } = await lobby.listAllowList({ roomId, page: { pageSize: 500 } });
        return playerIds.length ? h("ul", { class: "plain" }, ...playerIds.map((p) => h("li", {}, p))) : h("p", { class: "muted" }, st("allow.empty"));
      });
      parts.push(h("h3", {}, st("allow.title")), listOut);
    }
    if (operations) {
      const fields = roomFields(room);
      parts.push(
        fold(st("room.edit"), actionForm({
          id: "update-room",
          submit: st("room.save"),
          fields: fields.nodes,
          run: async (reason, requestId) => {
            await lobby.updateRoom({ requestId, room: fields.read() }, because(reason));
            refreshList();
            return st("room.saved");
          },
          then: reload,
        })),
        fold(room.disabled ? st("room.enable") : st("room.disable"), actionForm({
          id: "room-switch",
          submit: room.disabled ? st("room.enable") : st("room.disable"),
          danger: !room.disabled,
          fields: [h("p", { class: "muted" }, room.disabled ? st("room.enable_hint") : st("room.disable_hint"))],
          run: async (reason, requestId) => {
            if (room.disabled) await lobby.enableRoom({ requestId, roomId }, because(reason));
            else await lobby.disableRoom({ requestId, roomId }, because(reason));
            refreshList();
            return room.disabled ? st("room.enabled_done") : st("room.disabled_done");
          },
          then: reload,
        })),
        fold(st("maintenance.room_title"), maintenanceForm("room-maintenance-form", roomId, maintenance.room, reload)),
      );
      if (room.private) {
        const add = input("add", { placeholder: st("allow.ids_hint") });
        const remove = input("remove", { placeholder: st("allow.ids_hint") });
        const ids = (e: HTMLInputElement): string[] => e.value.split(/[\s,;]+/).filter(Boolean);
        const uses = input("max_uses", { type: "number", min: 1, max: 100000, value: 1 });
        const hours = input("expire_hours", { type: "number", min: 0, value: 72 });
        const code = h("p", { class: "code", id: "invite-code" });
        parts.push(
          fold(st("allow.change"), actionForm({
            id: "allow-list-form",
            submit: st("allow.save"),
            fields: [field(st("allow.add"), add), field(st("allow.remove"), remove)],
            run: async (reason, requestId) => {
              const reply = await lobby.updateAllowList({ requestId, roomId, addPlayerIds: ids(add), removePlayerIds: ids(remove) }, because(reason));
              return st("allow.saved", { count: reply.playerCount });
            },
            then: reload,
          })),
          fold(st("invite.title"), actionForm({
            id: "invite-form",
            submit: st("invite.create"),
            fields: [h("div", { class: "row" }, field(st("invite.max_uses"), uses), field(st("invite.expire_hours"), hours, st("invite.expire_hint"))), code],
            run: async (reason, requestId) => {
              const hoursValue = Number(hours.value) || 0;
              const reply = await lobby.createInviteCode(
                { requestId, roomId, maxUses: Number(uses.value) || 1, expireTime: hoursValue > 0 ? timestampFromMs(Date.now() + hoursValue * 3_600_000) : undefined },
                because(reason),
              );
              code.textContent = reply.code;
              return st("invite.created", { code: reply.code });
            },
          })),
        );
      }
    }
    return parts;
  });
}

export function showRooms(root: HTMLElement, s: Signed): () => void {
  const operations = may(s.roles, "changeRooms");
  const listOut = h("div", { id: "rooms-list" });
  const detail = h("div", { id: "room-detail", class: "detail" });
  const lobbyOut = h("div", { id: "lobby-maintenance" });
  const refreshList = (): void => {
    void load(listOut, async () => {
      const rooms = await allRooms();
      if (!rooms.length) return h("p", { class: "muted" }, st("rooms.none"));
      return table(
        [st("room.id"), st("room.name"), st("room.variant"), st("room.stakes"), st("room.seats"), st("room.tables"), st("room.access"), st("room.state"), st("room.occupancy"), ""],
        rooms.map((r) => [
          h("code", {}, r.roomId),
          h("span", { class: "data" }, r.displayName),
          variantName(r.variant),
          `${stakesText(r)} · ${poolName(r.pool)}`,
          formatNumber(r.seatsPerTable),
          formatNumber(r.tableCount),
          r.private ? st("room.private") : st("room.public"),
          h("span", { class: r.disabled ? "bad" : "ok" }, r.disabled ? st("room.disabled") : st("room.enabled")),
          st("room.occupancy_value", { seated: r.occupancy?.seatsTaken ?? 0, free: r.occupancy?.seatsFree ?? 0, running: r.occupancy?.runningTables ?? 0 }),
          h("button", { type: "button", class: "quiet open-room", "data-room": r.roomId, onclick: () => { roomDetail(detail, s, r.roomId, refreshList); detail.scrollIntoView({ block: "start" }); } }, st("common.open")),
        ]),
        { id: "rooms" },
      );
    });
  };
  const refreshLobby = (): void => {
    void load(lobbyOut, async () => {
      const m = await lobby.getMaintenance({ roomId: "" });
      return [
        h("p", { id: "lobby-maintenance-state" }, maintenanceText(m.lobby)),
        operations ? fold(st("maintenance.lobby_change"), maintenanceForm("lobby-maintenance-form", "", m.lobby, refreshLobby)) : null,
      ];
    });
  };
  refreshList();
  refreshLobby();
  const parts: HTMLElement[] = [h("h2", {}, st("menu.rooms")), panel("lobby-maintenance-panel", st("maintenance.lobby_title"), lobbyOut)];
  if (operations) {
    const fields = roomFields();
    parts.push(
      fold(st("room.create"), actionForm({
        id: "create-room",
        submit: st("room.create_button"),
        fields: fields.nodes,
        run: async (reason, requestId) => {
          const room = fields.read();
          const reply = await lobby.createRoom({ requestId, room, tableCount: room.tableCount }, because(reason));
          return st("room.created", { id: reply.room?.roomId ?? room.roomId });
        },
        then: refreshList,
      })),
    );
  } else {
    parts.push(h("p", { class: "muted" }, st("rooms.read_only")));
  }
  parts.push(panel("rooms-panel", st("rooms.catalogue"), listOut), detail);
  root.append(...parts);
  return stopWatching;
}
