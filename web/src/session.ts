// Who the page is signed in as. Only the short-lived player token is kept (sessionStorage, so a
// reload of the WebView keeps the seat's session and nothing outlives the tab); the device id is a
// random id in localStorage the gateway digests with the user agent (never sent to anyone else).
import { gateway, useToken, failure } from "./api";
import type { Session } from "./gen/poker/gateway/v1/gateway_pb";

const SESSION_KEY = "poker.session";
const DEVICE_KEY = "poker.device";

export interface Signed {
  playerId: string;
  displayName: string;
  token: string;
  expiresAt: number; // ms
  renewAt: number; // ms
}

let current: Signed | null = null;
let renewTimer = 0;
const listeners: ((s: Signed | null) => void)[] = [];

export function onSessionChange(listener: (s: Signed | null) => void): void {
  listeners.push(listener);
}

export function deviceId(): string {
  let id = localStorage.getItem(DEVICE_KEY);
  if (!id || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    id = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    localStorage.setItem(DEVICE_KEY, id);
  }
  return id;
}

export function session(): Signed | null {
  return current;
}

useToken(() => current?.token ?? "");

function adopt(s: Session): Signed {
  const signed: Signed = {
    playerId: s.playerId,
    displayName: s.displayName,
    token: s.token,
    expiresAt: Number(s.expireTime?.seconds ?? 0n) * 1000,
    renewAt: Number(s.renewTime?.seconds ?? 0n) * 1000,
  };
  set(signed);
  return signed;
}

function set(signed: Signed | null): void {
  current = signed;
  window.clearTimeout(renewTimer);
  if (signed) {
    sessionStorage.setItem(SESSION_KEY, JSON.stringify(signed));
    renewTimer = window.setTimeout(() => void renew(), Math.max(1000, signed.renewAt - Date.now()));
  } else {
    sessionStorage.removeItem(SESSION_KEY);
  }
  for (const listener of listeners) listener(signed);
}

export async function renew(): Promise<boolean> {
  if (!current) return false;
  if (current.expiresAt <= Date.now()) {
    set(null);
    return false;
  }
  try {
    const reply = await gateway.renewToken({ deviceId: deviceId() });
    const name = current.displayName;
    const renewed = adopt(reply.session!);
    renewed.displayName = name;
    sessionStorage.setItem(SESSION_KEY, JSON.stringify(renewed));
    return true;
  } catch (error) {
    const f = failure(error);
    if (f.code === "Unauthenticated" || f.code === "PermissionDenied") set(null);
    else renewTimer = window.setTimeout(() => void renew(), 5000);
    return false;
  }
}

/** The session kept by this tab, renewed at once (after a reload or a long sleep). */
export async function resume(): Promise<Signed | null> {
  const raw = sessionStorage.getItem(SESSION_KEY);
  if (!raw) return null;
  try {
    const stored = JSON.parse(raw) as Signed;
    if (!stored.token || stored.expiresAt <= Date.now() + 5000) {
      set(null);
      return null;
    }
    set(stored);
    await renew();
    return current;
  } catch {
    set(null);
    return null;
  }
}

/** Telegram's initData: from the Web App script if it loaded, else from the launch URL. */
export function telegramInitData(): string {
  const telegram = (window as unknown as { Telegram?: { WebApp?: { initData?: string } } }).Telegram;
  if (telegram?.WebApp?.initData) return telegram.WebApp.initData;
  const hash = new URLSearchParams(location.hash.slice(1));
  return hash.get("tgWebAppData") ?? "";
}

export async function signInWithTelegram(initData: string): Promise<Signed> {
  const reply = await gateway.signIn({ method: { case: "telegramInitData", value: initData }, deviceId: deviceId() });
  return adopt(reply.session!);
}

export async function signInByName(name: string): Promise<Signed> {
  const reply = await gateway.signIn({ method: { case: "developmentName", value: name }, deviceId: deviceId() });
  return adopt(reply.session!);
}

/** Ends the session at the gateway (every token of this sign-in and every stream it opened), then
 * here; forgotten here even when the gateway cannot be reached (the token then just expires). */
export async function signOut(): Promise<void> {
  if (current) {
    try {
      await gateway.signOut({});
    } catch {
      // Signed out here all the same.
    }
  }
  set(null);
}

/** The signed-in player's id ("" when signed out). */
export function me(): string {
  return current?.playerId ?? "";
}
