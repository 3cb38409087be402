// The page's language and its words. Every text a player reads is an entry of one catalogue
// (./catalogue.ts: a stable key with its Russian and English text), filled in by `t`; numbers, chips
// and dates are formatted for the language with Intl. Russian first: the operator's players read it.
//
// The language is, in order: the player's own choice on the page (the RU/EN switch, kept in
// localStorage), Telegram's `language_code` of the player (Mini App), the browser's language
// (navigator.languages); Russian for `ru` and the languages whose speakers read Russian (RUSSIAN_READERS),
// English for any other, Russian when nothing says.
import { CATALOGUE, type Entry, type Key, type Plural } from "./catalogue";

export type { Key } from "./catalogue";
export type Language = "ru" | "en";
export const LANGUAGES: readonly Language[] = ["ru", "en"];
export const LANGUAGE_KEY = "poker.lang";

/** Languages (ISO 639) whose players get the Russian page: Russian, and those of the countries where
 * Russian is the shared second language (Belarusian, Ukrainian, Kazakh, Kyrgyz, Tajik, Uzbek, Turkmen,
 * Azerbaijani, Armenian, Georgian, Romanian of Moldova) and of the peoples of Russia (Tatar, Bashkir,
 * Chuvash, Chechen, Ossetian, Yakut). */
export const RUSSIAN_READERS: ReadonlySet<string> = new Set([
  "ru", "be", "uk", "kk", "ky", "tg", "uz", "tk", "az", "hy", "ka", "mo", "tt", "ba", "cv", "ce", "os", "sah",
]);

/** The page's language for a language tag (`ru`, `uk-UA`, `en_GB`), or null for none. */
export function languageOfTag(tag: string | null | undefined): Language | null {
  const base = (tag ?? "").trim().toLowerCase().split(/[-_]/)[0];
  if (!base) return null;
  return RUSSIAN_READERS.has(base) ? "ru" : "en";
}

export interface LanguageSources {
  /** What the player chose on the page ("ru" or "en"), if anything. */
  stored?: string | null;
  /** Telegram's `language_code` of the player. */
  telegram?: string | null;
  /** The browser's languages, most preferred first. */
  browser?: readonly string[];
}

/** The language the sources choose: the player's choice, else Telegram's, else the browser's first. */
export function pickLanguage(sources: LanguageSources): Language {
  if (sources.stored === "ru" || sources.stored === "en") return sources.stored;
  return languageOfTag(sources.telegram) ?? languageOfTag(sources.browser?.find((tag) => tag)) ?? "ru";
}

interface TelegramUser {
  language_code?: string;
}
interface TelegramGlobal {
  Telegram?: { WebApp?: { initDataUnsafe?: { user?: TelegramUser } } };
}

/** Telegram's `language_code` of the player: from the WebApp object, else from the launch URL's
 * `tgWebAppData` (its `user` field is JSON), when the WebApp script did not load. */
export function telegramLanguageCode(): string {
  const fromScript = (globalThis as TelegramGlobal).Telegram?.WebApp?.initDataUnsafe?.user?.language_code;
  if (fromScript) return fromScript;
  if (typeof location === "undefined") return "";
  try {
    const data = new URLSearchParams(location.hash.slice(1)).get("tgWebAppData");
    const user = data ? new URLSearchParams(data).get("user") : null;
    return user ? String((JSON.parse(user) as TelegramUser).language_code ?? "") : "";
  } catch {
    return "";
  }
}

function storage(): Storage | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    return null; // storage refused (a WebView's privacy settings): the choice lasts for the page
  }
}

function pageSources(): LanguageSources {
  const browser = typeof navigator === "undefined" ? [] : [...(navigator.languages ?? []), navigator.language];
  return { stored: storage()?.getItem(LANGUAGE_KEY), telegram: telegramLanguageCode(), browser };
}

let current: Language | null = null;
const listeners: ((language: Language) => void)[] = [];

export function language(): Language {
  current ??= pickLanguage(pageSources());
  return current;
}

/** Use a language without keeping the choice (tests, and the page's start). */
export function useLanguage(chosen: Language): void {
  current = chosen;
  applyToDocument();
}

/** The player's choice on the page: kept in localStorage, applied, and every screen told. */
export function chooseLanguage(chosen: Language): void {
  storage()?.setItem(LANGUAGE_KEY, chosen);
  const changed = chosen !== current;
  useLanguage(chosen);
  if (changed) for (const listener of listeners) listener(chosen);
}

export function onLanguageChange(listener: (language: Language) => void): void {
  listeners.push(listener);
}

/** `<html lang>` and the document's title in the language. */
export function applyToDocument(): void {
  if (typeof document === "undefined") return;
  document.documentElement.lang = language();
  document.title = t("app.title");
}

export function locale(): string {
  return language() === "ru" ? "ru-RU" : "en-US";
}

const numberFormats = new Map<string, Intl.NumberFormat>();

function numberFormat(signed: boolean): Intl.NumberFormat {
  const id = `${locale()}/${signed}`;
  let format = numberFormats.get(id);
  if (!format) {
    format = new Intl.NumberFormat(locale(), signed ? { signDisplay: "exceptZero" } : {});
    numberFormats.set(id, format);
  }
  return format;
}

/** A whole number as the language writes it: `12,500` in English; in Russian `12 500` with a narrow
 * no-break (thin) space between the groups, as Russian typesetting has it, so it never wraps. */
export function formatNumber(value: number | bigint, signed = false): string {
  const text = numberFormat(signed).format(value);
  return language() === "ru" ? text.replace(/[\u00a0 ]/g, "\u202f") : text;
}

/** A date and time, short, as the language writes it. */
export function formatDateTime(epochMs: number): string {
  return new Intl.DateTimeFormat(locale(), { dateStyle: "short", timeStyle: "short" }).format(new Date(epochMs));
}

/** The plural form of a count in the language (Intl.PluralRules: Russian one / few / many, English
 * one / other). Only the last digits decide, so a count beyond 2^53 keeps its form. */
export function pluralForm(count: number | bigint, chosen: Language = language()): Intl.LDMLPluralRule {
  let n: number;
  if (typeof count === "bigint") {
    const magnitude = count < 0n ? -count : count;
    n = magnitude < 1_000_000n ? Number(magnitude) : 1_000_000 + Number(magnitude % 1000n);
  } else {
    n = Math.abs(count);
  }
  return new Intl.PluralRules(chosen === "ru" ? "ru-RU" : "en-US").select(n);
}

export type Param = string | number | bigint;
export type Params = Readonly<Record<string, Param>>;

function textOf(entry: Entry, chosen: Language, params: Params): string {
  const text = entry[chosen];
  if (typeof text === "string") return text;
  const count = params.count;
  const form = typeof count === "number" || typeof count === "bigint" ? pluralForm(count, chosen) : "other";
  return (text as Plural & Partial<Record<Intl.LDMLPluralRule, string>>)[form] ?? text.other;
}

/** Fills `{name}` with params.name: numbers as the language writes them, strings as they are. */
export function fill(template: string, params: Params): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    if (value === undefined) return whole;
    return typeof value === "string" ? value : formatNumber(value);
  });
}

/** The catalogue's text for `key` in the page's language, its parameters filled in; an entry with
 * plural forms takes the form of `params.count`. */
export function t(key: Key, params: Params = {}): string {
  const chosen = language();
  return fill(textOf(CATALOGUE[key], chosen, params), params);
}

/** Whether the catalogue has `key` (for keys made from a code: `reason.${reason}`). */
export function known(key: string): key is Key {
  return Object.prototype.hasOwnProperty.call(CATALOGUE, key);
}
