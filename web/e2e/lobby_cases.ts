// Runs the lobby's choices (src/lobby_model.ts) on cases read as JSON from stdin: `rooms` (the lobby's
// rooms, as ListRooms gives them: id, variant, pool, seats, stakes, buy-ins, occupancy) and a list of
// `asks`, each printed as one JSON line: the rooms of a tab and pool in order, the tab counts, the
// stakes of a tab, the best table and "Play now"'s target for a set of tables, its buy-in, the buy-in
// range as the page writes it, and the tab and pool read back from what was kept.
import { create } from "@bufbuild/protobuf";
import { ChipPool, GameVariant } from "../src/gen/poker/common/v1/common_pb";
import { RoomSchema, type Room } from "../src/gen/poker/lobby/v1/lobby_pb";
import {
  bestTable, buyInRange, playNowBuyIn, playNowTarget, readChoice, roomsOf, stakeGroups, tabCounts,
  type PoolCode, type Tab, type TableChoice,
} from "../src/lobby_model";

interface RoomCase {
  id: string;
  variant: keyof typeof GameVariant;
  pool: "GRAM" | "MPX";
  seats: number;
  stakes: [number, number];
  buyIn?: [number, number];
  disabled?: boolean;
}
type Ask =
  | { rooms: { tab: Tab; pool: PoolCode } }
  | { counts: PoolCode }
  | { stakes: { tab: Tab; pool: PoolCode } }
  | { best: TableChoice[] }
  | { target: { stake: { tab: Tab; pool: PoolCode; key: string }; tables: TableChoice[] } }
  | { buyIn: { room: string; balance: number } }
  | { range: string }
  | { choice: string | null };

let input = "";
for await (const chunk of process.stdin) input += chunk;
const given = JSON.parse(input) as { rooms: RoomCase[]; asks: Ask[] };

function room(c: RoomCase): Room {
  const [low, high] = c.stakes.map(BigInt);
  const variant = GameVariant[c.variant];
  const stakes =
    variant === GameVariant.NO_LIMIT_HOLDEM ? { case: "blinds" as const, value: { smallBlind: low, bigBlind: high, step: low } }
    : variant === GameVariant.FIXED_LIMIT_HOLDEM ? { case: "limits" as const, value: { smallBet: low, bigBet: high } }
    : { case: "antes" as const, value: { minAnte: low, maxAnte: high, maxPayout: 50_000n } };
  return create(RoomSchema, {
    roomId: c.id, displayName: c.id, variant, pool: c.pool === "MPX" ? ChipPool.MPX : ChipPool.GRAM, seatsPerTable: c.seats,
    stakes, minBuyIn: BigInt(c.buyIn?.[0] ?? 0), maxBuyIn: BigInt(c.buyIn?.[1] ?? 0), disabled: !!c.disabled,
  });
}

const rooms = given.rooms.map(room);
const text = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (_, v: unknown) => (typeof v === "bigint" ? Number(v) : v)));
for (const ask of given.asks) {
  if ("rooms" in ask) console.log(JSON.stringify({ rooms: roomsOf(rooms, ask.rooms.tab, ask.rooms.pool).map((r) => r.roomId) }));
  else if ("counts" in ask) console.log(JSON.stringify({ counts: tabCounts(rooms, ask.counts) }));
  else if ("stakes" in ask) console.log(JSON.stringify({ stakes: stakeGroups(rooms, ask.stakes.tab, ask.stakes.pool).map((g) => ({ key: g.key, rooms: g.rooms.map((r) => r.roomId) })) }));
  else if ("best" in ask) console.log(JSON.stringify({ best: bestTable(ask.best)?.tableId ?? null }));
  else if ("target" in ask) {
    const group = stakeGroups(rooms, ask.target.stake.tab, ask.target.stake.pool).find((g) => g.key === ask.target.stake.key);
    console.log(JSON.stringify({ target: group ? playNowTarget(group.rooms, ask.target.tables) : null }));
  } else if ("buyIn" in ask) {
    const r = rooms.find((x) => x.roomId === ask.buyIn.room)!;
    console.log(JSON.stringify({ buyIn: Number(playNowBuyIn(r, BigInt(ask.buyIn.balance))) }));
  } else if ("range" in ask) console.log(JSON.stringify({ range: text(buyInRange(rooms.find((x) => x.roomId === ask.range)!)) }));
  else if ("choice" in ask) console.log(JSON.stringify({ choice: readChoice(ask.choice) }));
}
