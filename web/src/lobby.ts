// The lobby: balances, buying chips, and the rooms with their stakes, free seats and waiting players.
import { cashier, gateway, lobby, describe, newRequestId } from "./api";
import { h, mount, chips, toast } from "./ui";
import { go, type Screen } from "./main";
import { session, signOut } from "./session";
import { ChipPool, GameVariant } from "./gen/poker/common/v1/common_pb";
import type { Room } from "./gen/poker/lobby/v1/lobby_pb";
import { PurchaseMethod } from "./gen/poker/gateway/v1/gateway_pb";

export const POOL = (pool: ChipPool): string => (pool === ChipPool.MPX ? "MPX" : "GRAM");

const VARIANT: Record<number, string> = {
  [GameVariant.NO_LIMIT_HOLDEM]: "No-limit Hold'em",
  [GameVariant.FIXED_LIMIT_HOLDEM]: "Fixed-limit Hold'em",
  [GameVariant.CASINO_HOLDEM]: "Casino Hold'em",
  [GameVariant.RUSSIAN_POKER]: "Russian Poker",
};

export function isHouse(variant: GameVariant): boolean {
  return variant === GameVariant.CASINO_HOLDEM || variant === GameVariant.RUSSIAN_POKER;
}

function stakes(room: Room): string {
  switch (room.stakes.case) {
    case "blinds":
      return `blinds ${chips(room.stakes.value.smallBlind)}/${chips(room.stakes.value.bigBlind)}`;
    case "limits":
      return `limits ${chips(room.stakes.value.smallBet)}/${chips(room.stakes.value.bigBet)}`;
    case "antes":
      return `ante ${chips(room.stakes.value.minAnte)}–${chips(room.stakes.value.maxAnte)}`;
    default:
      return "";
  }
}

export async function balancesLine(target: HTMLElement): Promise<void> {
  try {
    const reply = await cashier.getBalances({});
    target.replaceChildren(
      ...reply.wallets.map((w) => h("span", { class: "balance", "data-pool": POOL(w.pool) }, `${POOL(w.pool)} ${chips(w.balance)}`)),
    );
  } catch (error) {
    target.textContent = describe(error);
  }
}

function buyDialog(onBought: () => void): HTMLElement {
  const dialog = h("div", { class: "card-panel", id: "buy" }, h("h3", {}, "Buy chips"), h("p", { class: "muted" }, "loading…"));
  void gateway.listPurchaseOptions({}).then((reply) => {
    const rows = reply.options.map((option) => {
      const amount = h("input", { type: "number", min: 1, step: 1, value: 5000, "aria-label": "chips", class: "amount" });
      const button = h(
        "button",
        {
          disabled: !option.available,
          "data-pool": POOL(option.pool),
          "data-method": PurchaseMethod[option.method],
          onclick: async () => {
            try {
              const result = await gateway.startPurchase({
                requestId: newRequestId(),
                method: option.method,
                pool: option.pool,
                chips: BigInt(Math.max(1, Math.floor(Number(amount.value)))),
              });
              if (result.outcome.case === "credited") toast(`${chips(result.outcome.value.amount)} chips credited`);
              else if (result.outcome.case === "paymentUrl") window.open(result.outcome.value, "_blank", "noopener");
              onBought();
            } catch (error) {
              toast(describe(error), "error");
            }
          },
        },
        "Buy",
      );
      return h(
        "div",
        { class: "buy-row" },
        h("span", {}, `${option.text} · ${POOL(option.pool)}`),
        option.available ? amount : h("span", { class: "muted" }, option.unavailableText),
        button,
      );
    });
    dialog.replaceChildren(h("h3", {}, "Buy chips"), ...rows);
  });
  return dialog;
}

export function header(title: string, ...extra: Node[]): HTMLElement {
  const s = session();
  return h(
    "header",
    { class: "top" },
    h("h1", {}, title),
    h("span", { class: "who", id: "who" }, s ? s.displayName : ""),
    ...extra,
  );
}

export function showLobby(): Screen {
  const balances = h("div", { class: "balances", id: "balances" });
  const rooms = h("div", { class: "rooms", id: "rooms" }, h("p", { class: "muted" }, "loading rooms…"));
  const buyArea = h("div", {});
  let timer = 0;
  const refresh = async (): Promise<void> => {
    void balancesLine(balances);
    try {
      const reply = await lobby.listRooms({ page: { pageSize: 500 } });
      rooms.replaceChildren(...[...reply.rooms].sort((a, b) => a.variant - b.variant || a.roomId.localeCompare(b.roomId)).map(roomCard));
    } catch (error) {
      rooms.replaceChildren(h("p", { class: "error" }, describe(error)));
    }
  };
  mount(
    header(
      "Lobby",
      h("button", { id: "buy-chips", onclick: () => buyArea.replaceChildren(buyDialog(() => void refresh())) }, "Buy chips"),
      h("button", { id: "my-hands", onclick: () => go({ name: "hands" }) }, "My hands"),
      h("button", { class: "quiet", onclick: () => void signOut() }, "Sign out"),
    ),
    balances,
    buyArea,
    rooms,
  );
  void refresh();
  timer = window.setInterval(() => void refresh(), 5000);
  return { leave: () => window.clearInterval(timer) };
}

function roomCard(room: Room): HTMLElement {
  const o = room.occupancy;
  const house = isHouse(room.variant);
  const join = async (spectate: boolean): Promise<void> => {
    try {
      const joined = await lobby.joinTable({ roomId: room.roomId, spectate });
      if (house) go({ name: "house", roomId: room.roomId, tableId: joined.tableId });
      else go({ name: "table", roomId: room.roomId, tableId: joined.tableId, spectate });
    } catch (error) {
      toast(describe(error), "error");
    }
  };
  return h(
    "article",
    { class: "room", "data-room": room.roomId },
    h("div", { class: "room-name" }, room.displayName, h("span", { class: `pool pool-${POOL(room.pool)}` }, POOL(room.pool))),
    h("div", { class: "room-game" }, `${VARIANT[room.variant] ?? ""} · ${stakes(room)}`),
    h(
      "div",
      { class: "room-figures" },
      house
        ? `${room.seatsPerTable} boxes`
        : `${o?.seatsFree ?? 0} free seats · ${o?.seatsTaken ?? 0} playing · ${o?.playersWaiting ?? 0} waiting`,
      !house && room.minBuyIn ? ` · buy-in ${chips(room.minBuyIn)}–${chips(room.maxBuyIn)}` : "",
    ),
    h(
      "div",
      { class: "room-actions" },
      h("button", { class: "play", onclick: () => void join(false) }, house ? "Play" : "Sit down"),
      house ? null : h("button", { class: "watch quiet", onclick: () => void join(true) }, "Watch"),
    ),
  );
}
