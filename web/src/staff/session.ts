// Who the console is signed in as: the staff session (name, roles, the short-lived staff token), kept
// in sessionStorage (a reload keeps it; nothing outlives the tab), renewed at its `renew_time` and
// given up at its `session_end_time` (then the staff member signs in again). Signing out ends the
// session at the door (StaffSignOut) and forgets the token here.
import { door, failure, useToken } from "./api";
import { create } from "@bufbuild/protobuf";
import { TelegramLoginSchema, type StaffSession, type TelegramLogin } from "../gen/poker/gateway/v1/staff_pb";
import { parseRoles, type Role } from "./roles";

const SESSION_KEY = "poker.staff.session";

export interface Signed {
  staff: string;
  roles: Role[];
  token: string;
  expiresAt: number; // ms
  renewAt: number; // ms
  endsAt: number; // ms: no renewal after it
}

let current: Signed | null = null;
let renewTimer = 0;
const listeners: ((s: Signed | null, why: "signed" | "renewed" | "ended" | "out") => void)[] = [];

/** Calls `listener` at every change of the session; the function returned stops it. */
export function onSessionChange(listener: (s: Signed | null, why: "signed" | "renewed" | "ended" | "out") => void): () => void {
  listeners.push(listener);
  return () => {
    const at = listeners.indexOf(listener);
    if (at >= 0) listeners.splice(at, 1);
  };
}

export function session(): Signed | null {
  return current;
}

useToken(() => current?.token ?? "");

const ms = (t: { seconds: bigint } | undefined): number => Number(t?.seconds ?? 0n) * 1000;

function adopt(s: StaffSession, why: "signed" | "renewed"): Signed {
  const signed: Signed = {
    staff: s.staff,
    roles: parseRoles(s.roles),
    token: s.token,
    expiresAt: ms(s.expireTime),
    renewAt: ms(s.renewTime),
    endsAt: ms(s.sessionEndTime),
  };
  set(signed, why);
  return signed;
}

function set(signed: Signed | null, why: "signed" | "renewed" | "ended" | "out"): void {
  current = signed;
  window.clearTimeout(renewTimer);
  if (signed) {
    sessionStorage.setItem(SESSION_KEY, JSON.stringify(signed));
    const at = Math.min(signed.renewAt || signed.expiresAt, signed.endsAt || Infinity);
    renewTimer = window.setTimeout(() => void renew(), Math.max(1000, at - Date.now()));
  } else {
    sessionStorage.removeItem(SESSION_KEY);
  }
  for (const listener of [...listeners]) listener(signed, why);
}

/** Renews the token (at its renew time); past the session's end, or refused, the session ends. */
export async function renew(): Promise<boolean> {
  if (!current) return false;
  const now = Date.now();
  if (current.expiresAt <= now || (current.endsAt && current.endsAt <= now)) {
    set(null, "ended");
    return false;
  }
  try {
    const reply = await door.renewStaffToken({});
    adopt(reply.session!, "renewed");
    return true;
  } catch (error) {
    const f = failure(error);
    if (f.code === "Unauthenticated" || f.code === "PermissionDenied") set(null, "ended");
    else renewTimer = window.setTimeout(() => void renew(), 5000);
    return false;
  }
}

/** The session this tab kept, renewed at once (after a reload). */
export async function resume(): Promise<Signed | null> {
  const raw = sessionStorage.getItem(SESSION_KEY);
  if (!raw) return null;
  try {
    const stored = JSON.parse(raw) as Signed;
    if (!stored.token || stored.expiresAt <= Date.now() + 5000) {
      sessionStorage.removeItem(SESSION_KEY);
      return null;
    }
    current = stored;
    return (await renew()) ? current : null;
  } catch {
    sessionStorage.removeItem(SESSION_KEY);
    return null;
  }
}

export async function signInByName(name: string): Promise<Signed> {
  const reply = await door.staffSignIn({ method: { case: "developmentName", value: name } });
  return adopt(reply.session!, "signed");
}

/** The Telegram Login Widget's user object, as it hands it over. */
export interface WidgetUser {
  id: number | string;
  first_name?: string;
  last_name?: string;
  username?: string;
  photo_url?: string;
  auth_date: number | string;
  hash: string;
}

export function telegramLogin(user: WidgetUser): TelegramLogin {
  return create(TelegramLoginSchema, {
    id: BigInt(user.id),
    firstName: user.first_name ?? "",
    lastName: user.last_name ?? "",
    username: user.username ?? "",
    photoUrl: user.photo_url ?? "",
    authDate: BigInt(user.auth_date),
    hash: user.hash,
  });
}

export async function signInWithTelegram(user: WidgetUser): Promise<Signed> {
  const reply = await door.staffSignIn({ method: { case: "telegramLogin", value: telegramLogin(user) } });
  return adopt(reply.session!, "signed");
}

/** Ends the staff session at the door (StaffSignOut: every token of this sign-in is refused from
 * now on, and the sign-out is recorded), then forgets it here. A door that cannot be reached still
 * leaves the page signed out: the token expires by itself within minutes. */
export async function signOut(): Promise<void> {
  if (current) {
    try {
      await door.staffSignOut({});
    } catch {
      // Forgotten here regardless; the door refuses it once it expires.
    }
  }
  set(null, "out");
}

export function hasRole(...roles: Role[]): boolean {
  return !!current && roles.some((r) => current!.roles.includes(r));
}
