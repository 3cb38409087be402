// The lobby's choices, pure (no DOM, no network), so Node can test them (web/e2e/lobby_cases.ts):
// which tab a room is in, the rooms of a tab and pool in the order the page lists them, the stakes a
// player can pick for "Play now", the best table for a stake, the buy-in "Play now" takes, and the
// tab and pool the player chose last time.
import { ChipPool, GameVariant } from "./gen/poker/common/v1/common_pb";
import type { Room } from "./gen/poker/lobby/v1/lobby_pb";

export type Tab = "no_limit" | "fixed_limit" | "house";
export const TABS: readonly Tab[] = ["no_limit", "fixed_limit", "house"];
export type PoolCode = "GRAM" | "MPX";
export const POOLS: readonly PoolCode[] = ["GRAM", "MPX"];

export function tabOf(variant: GameVariant): Tab | null {
  switch (variant) {
    case GameVariant.NO_LIMIT_HOLDEM:
      return "no_limit";
    case GameVariant.FIXED_LIMIT_HOLDEM:
      return "fixed_limit";
    case GameVariant.CASINO_HOLDEM:
    case GameVariant.RUSSIAN_POKER:
      return "house";
    default:
      return null;
  }
}

export function poolCode(pool: ChipPool): PoolCode {
  return pool === ChipPool.MPX ? "MPX" : "GRAM";
}

/** A room's stake as a pair: blinds (no-limit), small and big bet (fixed-limit), ante range (house). */
export function stakePair(room: Room): [bigint, bigint] {
  switch (room.stakes.case) {
    case "blinds":
      return [room.stakes.value.smallBlind, room.stakes.value.bigBlind];
    case "limits":
      return [room.stakes.value.smallBet, room.stakes.value.bigBet];
    case "antes":
      return [room.stakes.value.minAnte, room.stakes.value.maxAnte];
    default:
      return [0n, 0n];
  }
}

const compareBig = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

/** The rooms of one tab and pool, as the page lists them: by stake, smallest first; at one stake the
 * smaller table first (a duel before a 4-max), then Casino Hold'em before Russian Poker, then by id. */
export function roomsOf(rooms: readonly Room[], tab: Tab, pool: PoolCode): Room[] {
  return rooms
    .filter((room) => !room.disabled && tabOf(room.variant) === tab && poolCode(room.pool) === pool)
    .sort((a, b) => {
      const [a1, a2] = stakePair(a);
      const [b1, b2] = stakePair(b);
      return compareBig(a2, b2) || compareBig(a1, b1) || a.seatsPerTable - b.seatsPerTable || a.variant - b.variant || a.roomId.localeCompare(b.roomId);
    });
}

/** How many rooms each tab has in a pool (the tab's badge). */
export function tabCounts(rooms: readonly Room[], pool: PoolCode): Record<Tab, number> {
  const counts: Record<Tab, number> = { no_limit: 0, fixed_limit: 0, house: 0 };
  for (const tab of TABS) counts[tab] = roomsOf(rooms, tab, pool).length;
  return counts;
}

/** One stake a player can pick for "Play now": the rooms of a cash tab that play it. */
export interface StakeGroup {
  key: string;
  small: bigint;
  big: bigint;
  rooms: Room[];
}

/** The stakes of a cash tab in a pool, smallest first (none for the house games: their rooms are
 * played from the wallet, each with its own Play button). */
export function stakeGroups(rooms: readonly Room[], tab: Tab, pool: PoolCode): StakeGroup[] {
  if (tab === "house") return [];
  const groups = new Map<string, StakeGroup>();
  for (const room of roomsOf(rooms, tab, pool)) {
    const [small, big] = stakePair(room);
    const key = `${small}/${big}`;
    let group = groups.get(key);
    if (!group) {
      group = { key, small, big, rooms: [] };
      groups.set(key, group);
    }
    group.rooms.push(room);
  }
  return [...groups.values()];
}

/** A table as "Play now" weighs it (from ListTables). */
export interface TableChoice {
  roomId: string;
  tableId: string;
  seated: number;
  seats: number;
  waiting: number;
}

/** The best table to sit at: the fullest table with a free seat (most players seated; at equal
 * counts the one with fewer free seats, so it fills and deals sooner; then fewer waiting; then the
 * first by id); null when no table has a free seat. */
export function bestTable(tables: readonly TableChoice[]): TableChoice | null {
  const open = tables.filter((table) => table.seated < table.seats);
  if (!open.length) return null;
  return [...open].sort(
    (a, b) => b.seated - a.seated || a.seats - a.seated - (b.seats - b.seated) || a.waiting - b.waiting || a.tableId.localeCompare(b.tableId),
  )[0];
}

/** Where "Play now" seats the player at a stake: the best table of its rooms, else (every table full,
 * or none listed) the room with the most seats with no table named, so the lobby picks or opens one. */
export function playNowTarget(rooms: readonly Room[], tables: readonly TableChoice[]): { roomId: string; tableId: string } | null {
  const ours = new Set(rooms.map((room) => room.roomId));
  const best = bestTable(tables.filter((table) => ours.has(table.roomId)));
  if (best) return { roomId: best.roomId, tableId: best.tableId };
  const biggest = [...rooms].sort((a, b) => b.seatsPerTable - a.seatsPerTable || a.roomId.localeCompare(b.roomId))[0];
  return biggest ? { roomId: biggest.roomId, tableId: "" } : null;
}

/** The buy-in "Play now" takes: as much as the room allows and the wallet holds, at least the room's
 * smallest (the table then refuses a wallet short of it, in its own words). */
export function playNowBuyIn(room: Room, balance: bigint): bigint {
  const most = balance < room.maxBuyIn ? balance : room.maxBuyIn;
  return most < room.minBuyIn ? room.minBuyIn : most;
}

/** The buy-in as the page says it: one figure when it is fixed, else the range; null for none. */
export function buyInRange(room: Room): { amount: bigint } | { min: bigint; max: bigint } | null {
  if (!room.minBuyIn && !room.maxBuyIn) return null;
  return room.minBuyIn === room.maxBuyIn || !room.maxBuyIn ? { amount: room.minBuyIn } : { min: room.minBuyIn, max: room.maxBuyIn };
}

export interface LobbyChoice {
  tab: Tab;
  pool: PoolCode;
}

/** The tab and pool the player chose last (kept as JSON in localStorage); the no-limit tab and GRAM
 * for nothing or anything unreadable. */
export function readChoice(stored: string | null | undefined): LobbyChoice {
  const choice: LobbyChoice = { tab: "no_limit", pool: "GRAM" };
  try {
    const value = JSON.parse(stored ?? "") as Partial<Record<string, unknown>>;
    if (TABS.includes(value.tab as Tab)) choice.tab = value.tab as Tab;
    if (POOLS.includes(value.pool as PoolCode)) choice.pool = value.pool as PoolCode;
  } catch {
    // Nothing kept, or not ours: the defaults.
  }
  return choice;
}
