// The lobby: balances, buying chips, and the rooms with their stakes, free seats and waiting players.
import { cashier, gateway, lobby, describe, newRequestId } from "./api";
import { h, mount, toast, languageSwitch } from "./ui";
import { t } from "./i18n";
import { go, type Screen } from "./main";
import { session, signOut } from "./session";
import { ChipPool, GameVariant } from "./gen/poker/common/v1/common_pb";
import type { Room } from "./gen/poker/lobby/v1/lobby_pb";
import { PurchaseMethod } from "./gen/poker/gateway/v1/gateway_pb";

/** The pool's name as the page shows it (also its code in `data-pool`). */
export const POOL = (pool: ChipPool): string => (pool === ChipPool.MPX ? t("pool.MPX") : t("pool.GRAM"));
const POOL_CODE = (pool: ChipPool): string => ChipPool[pool === ChipPool.MPX ? ChipPool.MPX : ChipPool.GRAM];

export function variantName(variant: GameVariant): string {
  switch (variant) {
    case GameVariant.NO_LIMIT_HOLDEM:
      return t("variant.no_limit");
    case GameVariant.FIXED_LIMIT_HOLDEM:
      return t("variant.fixed_limit");
    case GameVariant.CASINO_HOLDEM:
      return t("variant.casino_holdem");
    case GameVariant.RUSSIAN_POKER:
      return t("variant.russian_poker");
    default:
      return "";
  }
}

/** A room's name in the page's language: the operator's seeded rooms (lobby migration 0002) by their
 * form, so a list reads in one language; any other room as the operator named it. */
export function roomName(displayName: string): string {
  const seeded = /^(.+) (GRAM|MPX)$/.exec(displayName);
  if (!seeded) return displayName;
  const [, name, pool] = seeded;
  if (name === "Дуэль") return t("room_name.duel", { pool });
  if (name === "Casino Hold'em") return t("room_name.casino_holdem", { pool });
  if (name === "Русский покер") return t("room_name.russian_poker", { pool });
  const limit = /^Limit (\d+)\/(\d+) (\d+)-max$/.exec(name);
  if (limit) return t("room_name.limit", { small: BigInt(limit[1]), big: BigInt(limit[2]), seats: limit[3], pool });
  return displayName;
}

export function isHouse(variant: GameVariant): boolean {
  return variant === GameVariant.CASINO_HOLDEM || variant === GameVariant.RUSSIAN_POKER;
}

function stakes(room: Room): string {
  switch (room.stakes.case) {
    case "blinds":
      return t("stakes.blinds", { small: room.stakes.value.smallBlind, big: room.stakes.value.bigBlind });
    case "limits":
      return t("stakes.limits", { small: room.stakes.value.smallBet, big: room.stakes.value.bigBet });
    case "antes":
      return t("stakes.antes", { min: room.stakes.value.minAnte, max: room.stakes.value.maxAnte });
    default:
      return "";
  }
}

export async function balancesLine(target: HTMLElement): Promise<void> {
  try {
    const reply = await cashier.getBalances({});
    target.replaceChildren(
      ...reply.wallets.map((w) => h("span", { class: "balance", "data-pool": POOL_CODE(w.pool) }, t("lobby.balance", { pool: POOL(w.pool), amount: w.balance }))),
    );
  } catch (error) {
    target.textContent = describe(error);
  }
}

function buyDialog(onBought: () => void): HTMLElement {
  const dialog = h("div", { class: "card-panel", id: "buy" }, h("h3", {}, t("purchase.title")), h("p", { class: "muted" }, t("app.loading")));
  void gateway.listPurchaseOptions({}).then((reply) => {
    const rows = reply.options.map((option) => {
      const amount = h("input", { type: "number", min: 1, step: 1, value: 5000, "aria-label": t("purchase.chips"), class: "amount" });
      const button = h(
        "button",
        {
          disabled: !option.available,
          "data-pool": POOL_CODE(option.pool),
          "data-method": PurchaseMethod[option.method],
          onclick: async () => {
            try {
              const result = await gateway.startPurchase({
                requestId: newRequestId(),
                method: option.method,
                pool: option.pool,
                chips: BigInt(Math.max(1, Math.floor(Number(amount.value)))),
              });
              if (result.outcome.case === "credited") toast(t("purchase.credited", { count: result.outcome.value.amount }));
              else if (result.outcome.case === "paymentUrl") window.open(result.outcome.value, "_blank", "noopener");
              onBought();
            } catch (error) {
              toast(describe(error), "error");
            }
          },
        },
        t("purchase.buy"),
      );
      return h(
        "div",
        { class: "buy-row" },
        h("span", {}, t("purchase.option", { method: methodName(option.method, option.text), pool: POOL(option.pool) })),
        option.available ? amount : h("span", { class: "muted" }, unavailableText(option.method, option.unavailableText)),
        button,
      );
    });
    dialog.replaceChildren(h("h3", {}, t("purchase.title")), ...rows);
  });
  return dialog;
}

/** A purchase method's name: ours in words, an operator's flow's as it names it. */
function methodName(method: PurchaseMethod, text: string): string {
  if (method === PurchaseMethod.DEVELOPMENT) return t("purchase.development");
  if (method === PurchaseMethod.TELEGRAM_STARS) return t("purchase.stars");
  return text;
}

function unavailableText(method: PurchaseMethod, text: string): string {
  return method === PurchaseMethod.DEVELOPMENT || method === PurchaseMethod.TELEGRAM_STARS || !text ? t("purchase.not_available") : text;
}

export function header(title: string, ...extra: Node[]): HTMLElement {
  const s = session();
  return h(
    "header",
    { class: "top" },
    h("h1", {}, title),
    h("span", { class: "who", id: "who" }, s ? s.displayName : ""),
    ...extra,
    languageSwitch(),
  );
}

export function showLobby(): Screen {
  const balances = h("div", { class: "balances", id: "balances" });
  const rooms = h("div", { class: "rooms", id: "rooms" }, h("p", { class: "muted" }, t("lobby.loading_rooms")));
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
      t("lobby.title"),
      h("button", { id: "buy-chips", onclick: () => buyArea.replaceChildren(buyDialog(() => void refresh())) }, t("lobby.buy_chips")),
      h("button", { id: "my-hands", onclick: () => go({ name: "hands" }) }, t("lobby.my_hands")),
      h("button", { class: "quiet", id: "sign-out", onclick: () => void signOut() }, t("sign_out")),
    ),
    balances,
    buyArea,
    rooms,
  );
  void refresh();
  timer = window.setInterval(() => void refresh(), 5000);
  return { leave: () => window.clearInterval(timer) };
}

function buyIn(room: Room): string {
  return room.minBuyIn === room.maxBuyIn
    ? t("room.buy_in_fixed", { amount: room.minBuyIn })
    : t("room.buy_in", { min: room.minBuyIn, max: room.maxBuyIn });
}

function roomCard(room: Room): HTMLElement {
  const o = room.occupancy;
  const house = isHouse(room.variant);
  const figures = house
    ? [t("room.boxes", { count: room.seatsPerTable })]
    : [
        t("room.free_seats", { count: o?.seatsFree ?? 0 }),
        t("room.playing", { count: o?.seatsTaken ?? 0 }),
        t("room.waiting", { count: o?.playersWaiting ?? 0 }),
      ];
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
    h("div", { class: "room-name" }, roomName(room.displayName), h("span", { class: `pool pool-${POOL_CODE(room.pool)}` }, POOL(room.pool))),
    h("div", { class: "room-game" }, t("room.game", { variant: variantName(room.variant), stakes: stakes(room) })),
    h("div", { class: "room-figures" }, [...figures, ...(!house && room.minBuyIn ? [buyIn(room)] : [])].join(" · ")),
    h(
      "div",
      { class: "room-actions" },
      h("button", { class: "play", onclick: () => void join(false) }, house ? t("room.play") : t("room.sit_down")),
      house ? null : h("button", { class: "watch quiet", onclick: () => void join(true) }, t("room.watch")),
    ),
  );
}
