// The dashboard (every role): players seated and tables running (the lobby's tables of every room),
// open fair-play cases (risk), house balances per pool (finance, operations), fundings waiting for a
// second person (finance), releases of held chips awaiting finance's approval (finance, risk), the
// alerts firing (the operator's Prometheus, when the door has one), and per pool the hands (and house
// rounds) settled in the last hour and the rake taken since today's 00:00 UTC (GetPlayFigures, every
// role). Every tile is read when the dashboard is shown (opened, the menu, a reload, the language).
// A tile the role cannot read says which roles read it.
import { h, chips } from "../ui";
import { formatNumber } from "../i18n";
import { roleList, st } from "../i18n/staff_words";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { cashier, door, history, lobby } from "./api";
import { may, rolesOf, type Grant } from "./roles";
import type { Signed } from "./session";
import { load, poolName, tile, when } from "./widgets";
import { releasesIn } from "./releases";
import { ChipPool } from "../gen/poker/common/v1/common_pb";
import { CaseResolution, ReleaseRequestState } from "../gen/poker/history/v1/history_pb";
import { HouseFundingState, PoolPlayFiguresSchema, type PoolPlayFigures } from "../gen/poker/cashier/v1/cashier_pb";
import type { Room } from "../gen/poker/lobby/v1/lobby_pb";

export const POOLS = [ChipPool.GRAM, ChipPool.MPX] as const;

/** Every room of the catalogue, disabled ones too (all pages). */
export async function allRooms(): Promise<Room[]> {
  const rooms: Room[] = [];
  let token = "";
  for (let page = 0; page < 20; page++) {
    const reply = await lobby.listRooms({ includeDisabled: true, page: { pageSize: 500, pageToken: token } });
    rooms.push(...reply.rooms);
    token = reply.page?.nextPageToken ?? "";
    if (!token) break;
  }
  return rooms;
}

function figure(id: string, value: bigint | number, label: string): HTMLElement {
  return h("p", { class: "figure" }, h("strong", { id }, formatNumber(value)), " ", h("span", { class: "muted" }, label));
}

const HOUR_MS = 3_600_000;
export const UTC = "UTC"; // i18n-neutral: the time zone's name, the same in every language

/** Today's 00:00 UTC (the rake tile's window starts there, whatever the browser's time zone). */
export function startOfTodayUtc(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

/** Every pool's hands settled and rake taken since `since`, in POOLS' order (zeros for a pool the
 * answer leaves out). */
export async function playFigures(since: Date): Promise<PoolPlayFigures[]> {
  const reply = await cashier.getPlayFigures({ since: timestampFromDate(since) });
  const byPool = new Map<ChipPool, PoolPlayFigures>(reply.pools.map((p) => [p.pool, p]));
  return POOLS.map((pool) => byPool.get(pool) ?? create(PoolPlayFiguresSchema, { pool }));
}

/** One pool's line of a figures tile: the pool, the number (`data-value` holds it whole), its words. */
function poolFigure(kind: "hands" | "rake", pool: ChipPool, value: string, whole: bigint, words: string): HTMLElement {
  return h(
    "p",
    { class: `figure pool-figure ${kind}-line`, "data-pool": ChipPool[pool] },
    h("span", { class: "pool-name" }, poolName(pool)),
    " ",
    h("strong", { id: `${kind}-${ChipPool[pool]}`, "data-value": whole.toString() }, value),
    " ",
    h("span", { class: "muted" }, words),
  );
}

function guarded(s: Signed, grant: Grant, id: string, title: string, fill: (body: HTMLElement) => Promise<void>): HTMLElement {
  if (!may(s.roles, grant)) {
    return tile(id, title, h("p", { class: "muted not-yours" }, st("dashboard.read_by", { roles: roleList(rolesOf(grant)) })));
  }
  const body = h("div", { class: "tile-body" });
  void fill(body);
  return tile(id, title, body);
}

export function showDashboard(root: HTMLElement, s: Signed): void {
  const tiles = h(
    "div",
    { class: "tiles" },
    guarded(s, "listTables", "tile-tables", st("dashboard.tables"), (body) =>
      load(body, async () => {
        const rooms = (await allRooms()).filter((r) => !r.disabled);
        let seated = 0;
        let running = 0;
        let unreachable = 0;
        await Promise.all(
          rooms.map(async (room) => {
            try {
              const { tables } = await lobby.listTables({ roomId: room.roomId });
              for (const t of tables) {
                seated += t.seatedPlayers;
                if (t.seatedPlayers > 0) running += 1;
              }
            } catch {
              // A room whose shard does not answer: its last published occupancy.
              unreachable += 1;
              seated += room.occupancy?.seatsTaken ?? 0;
              running += room.occupancy?.runningTables ?? 0;
            }
          }),
        );
        return [
          figure("players-seated", seated, st("dashboard.players_seated", { count: seated })),
          figure("tables-running", running, st("dashboard.tables_running", { count: running })),
          h("p", { class: "muted" }, st("dashboard.rooms_open", { count: rooms.length })),
          unreachable ? h("p", { class: "warn" }, st("dashboard.rooms_unreachable", { count: unreachable })) : null,
        ];
      }),
    ),
    guarded(s, "cases", "tile-cases", st("dashboard.cases"), (body) =>
      load(body, async () => {
        const { cases } = await history.listCases({ page: { pageSize: 500 } });
        const open = cases.filter((c) => c.resolution === CaseResolution.UNSPECIFIED);
        const strong = open.filter((c) => c.threshold > 0 && c.score >= c.threshold);
        return [
          figure("open-cases", open.length, st("dashboard.open_cases", { count: open.length })),
          h("p", { class: strong.length ? "warn" : "muted" }, st("dashboard.strong_cases", { count: strong.length })),
          h("a", { href: "#fairplay" }, st("dashboard.to_cases")),
        ];
      }),
    ),
    guarded(s, "houseBalances", "tile-house", st("dashboard.house"), (body) =>
      load(body, async () => {
        const pools = await Promise.all(POOLS.map((pool) => cashier.getHouseBalances({ pool })));
        return pools.map((p) =>
          h(
            "p",
            { class: "house-line", "data-pool": ChipPool[p.pool] },
            h("strong", {}, poolName(p.pool)),
            " ",
            st("dashboard.house_line", { bank: p.bankBalance, jackpot: p.jackpotBalance, reserved: p.reservedBalance }),
          ),
        );
      }),
    ),
    guarded(s, "playFigures", "tile-hands", st("dashboard.hands"), (body) =>
      load(body, async () => {
        const pools = await playFigures(new Date(Date.now() - HOUR_MS));
        return [
          ...pools.map((p) => poolFigure("hands", p.pool, formatNumber(p.handsSettled), p.handsSettled, st("dashboard.hands_settled", { count: p.handsSettled }))),
          h("p", { class: "muted" }, st("dashboard.hands_note")),
        ];
      }),
    ),
    guarded(s, "playFigures", "tile-rake", st("dashboard.rake", { zone: UTC }), (body) =>
      load(body, async () => {
        const pools = await playFigures(startOfTodayUtc(new Date()));
        return pools.map((p) => poolFigure("rake", p.pool, chips(p.rake), p.rake, st("dashboard.rake_chips", { count: p.rake })));
      }),
    ),
    guarded(s, "fundings", "tile-fundings", st("dashboard.fundings"), (body) =>
      load(body, async () => {
        const { fundings } = await cashier.listHouseFunding({ state: HouseFundingState.PENDING, page: { pageSize: 100 } });
        return [
          figure("pending-fundings", fundings.length, st("dashboard.pending_fundings", { count: fundings.length })),
          h("a", { href: "#money" }, st("dashboard.to_money")),
        ];
      }),
    ),
    guarded(s, "releases", "tile-releases", st("dashboard.releases"), (body) =>
      load(body, async () => {
        const pending = await releasesIn(ReleaseRequestState.PENDING);
        // Finance decides them on the money screen; risk asked them on the fair-play screen.
        const decides = may(s.roles, "decideRelease");
        return [
          figure("pending-releases", pending.length, st("dashboard.pending_releases", { count: pending.length })),
          h("a", { href: decides ? "#money" : "#fairplay" }, decides ? st("dashboard.to_money") : st("dashboard.to_cases")),
        ];
      }),
    ),
    guarded(s, "alerts", "tile-alerts", st("dashboard.alerts"), (body) =>
      load(body, async () => {
        const reply = await door.listFiringAlerts({});
        if (!reply.configured) return h("p", { class: "muted", id: "alerts-not-configured" }, st("dashboard.alerts_not_configured"));
        if (!reply.alerts.length) return h("p", { class: "ok", id: "alerts-none" }, st("dashboard.alerts_none"));
        return h(
          "ul",
          { class: "alerts", id: "alerts" },
          ...reply.alerts.map((a) =>
            h(
              "li",
              { class: `alert severity-${a.severity || "none"}` },
              h("strong", {}, a.name),
              a.severity ? h("span", { class: "badge" }, a.severity) : null,
              a.summary ? h("span", { class: "data" }, a.summary) : null,
              a.activeSince ? h("span", { class: "muted" }, st("dashboard.alert_since", { time: when(a.activeSince) })) : null,
            ),
          ),
        );
      }),
    ),
  );
  root.append(h("h2", {}, st("menu.dashboard")), tiles);
}
