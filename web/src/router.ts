// Which screen the page shows, and the way to another: `go(route)` leaves the current screen (it
// cleans up), shows the next and keeps the route in sessionStorage (a reload comes back to it). The
// screens themselves are given by main.ts (`useScreens`), so no screen imports main.ts and main.ts
// imports every screen: the page's modules import one another without a circle
// (tests/web/test_import_cycles.py).
import { enterScreen } from "./telegram";

export interface Screen {
  leave(): void;
  /** What Telegram's BackButton does here (else: back to the lobby). */
  back?(): void;
}

export type Route =
  | { name: "lobby" }
  | { name: "table"; roomId: string; tableId: string; spectate: boolean }
  | { name: "house"; roomId: string; tableId: string }
  | { name: "hands" }
  | { name: "limits" };

const ROUTE_KEY = "poker.route";

let screen: Screen | null = null;
let show: ((route: Route) => Screen) | null = null;

/** main.ts: the function that shows a route's screen. */
export function useScreens(shower: (route: Route) => Screen): void {
  show = shower;
}

export function go(route: Route): void {
  leaveScreen();
  enterScreen(route.name === "lobby" ? null : () => (screen?.back ? screen.back() : go({ name: "lobby" })));
  sessionStorage.setItem(ROUTE_KEY, JSON.stringify(route));
  if (show) screen = show(route);
}

/** The screen shown now is left (before the sign-in, which is no route). */
export function leaveScreen(): void {
  screen?.leave();
  screen = null;
}

/** The route this tab showed last (a reload comes back to it), else the lobby. */
export function savedRoute(): Route {
  try {
    const route = JSON.parse(sessionStorage.getItem(ROUTE_KEY) ?? "") as Route;
    if (route && typeof route.name === "string") return route;
  } catch {
    // No saved screen: the lobby.
  }
  return { name: "lobby" };
}
