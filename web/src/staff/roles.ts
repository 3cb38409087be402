// Which staff role may do what (docs/access.md, the grant of each RPC at the staff door): the console
// shows a screen, a tile or an action only to the roles that have it. The server checks again; a
// refusal reads as ROLE_REQUIRED in words.
export type Role = "support" | "risk" | "finance" | "operations" | "admin";
export const ROLES: readonly Role[] = ["support", "risk", "finance", "operations", "admin"];

export function parseRoles(roles: readonly string[]): Role[] {
  return ROLES.filter((r) => roles.includes(r));
}

/** The calls the console makes, and the roles granted each. */
export const GRANTS = {
  listRooms: ROLES,
  listTables: ROLES,
  spectate: ROLES, // SpectateTable (the public view, late; no hidden card), GetTableSnapshot
  getMaintenance: ROLES,
  changeRooms: ["operations"], // CreateRoom, UpdateRoom, Disable/EnableRoom, SetMaintenance, CreateInviteCode, UpdateAllowList
  closeTable: ["operations"], // CloseTable (a cash table closes after its hand; its players cashed out)
  listAllowList: ["support", "operations"],
  findPlayers: ["support", "risk", "finance", "operations"],
  balances: ["support", "risk", "finance"], // GetBalances, GetStatement
  hands: ["support", "risk"], // ListMyHands (player_id), GetHand
  selfLimits: ["support", "risk", "finance"], // GetSelfLimits (player_id): read only, never a setting RPC
  seatSessions: ["support", "finance", "operations"],
  cases: ["risk"], // ListCases, GetCase, HoldPlayer, ReleasePlayer, ResolveCase
  conservation: ["finance"],
  houseBalances: ["finance", "operations"],
  playFigures: ROLES, // GetPlayFigures (the dashboard's hands and rake)
  fundings: ["finance"], // ListHouseFunding, RequestHouseFunding, DecideHouseFunding
  payouts: ["finance"], // ListWithdrawals (the payouts list; its totals are GetPlayFigures')
  releases: ["finance", "risk"], // ListReleaseRequests
  decideRelease: ["finance"], // DecideRelease (never the staff member who asked: four-eyes)
  audit: ROLES,
  notes: ["support", "risk"], // RecordAuditEvent (an OPERATOR_NOTE on a player)
  alerts: ROLES,
  staffDirectory: ["admin"], // ListStaff, SetStaffMember (nobody their own entry: the service refuses it)
} as const satisfies Record<string, readonly Role[]>;

export type Grant = keyof typeof GRANTS;

export function may(roles: readonly Role[], grant: Grant): boolean {
  return (GRANTS[grant] as readonly Role[]).some((r) => roles.includes(r));
}

/** The screens of the console and the grant that shows each. */
export type ScreenName = "dashboard" | "rooms" | "players" | "fairplay" | "money" | "staff" | "audit";
export const SCREENS: readonly ScreenName[] = ["dashboard", "rooms", "players", "fairplay", "money", "staff", "audit"];
const SCREEN_ROLES: Record<ScreenName, readonly Role[]> = {
  dashboard: ROLES,
  rooms: ROLES, // every role reads rooms and tables and watches a live table; operations changes them
  players: ["support", "risk", "finance"],
  fairplay: ["risk"],
  money: ["finance"],
  staff: ["admin"],
  audit: ROLES,
};

/** The roles that open a screen (a menu entry greyed out for the others names them). */
export function screenRoles(name: ScreenName): readonly Role[] {
  return SCREEN_ROLES[name];
}

export function screensOf(roles: readonly Role[]): ScreenName[] {
  return SCREENS.filter((s) => SCREEN_ROLES[s].some((r) => roles.includes(r)));
}

export function rolesOf(grant: Grant): readonly Role[] {
  return GRANTS[grant];
}
