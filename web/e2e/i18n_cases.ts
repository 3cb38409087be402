// Checks the page's catalogue (src/i18n) and runs its functions on cases read as JSON from stdin; one
// JSON line per answer:
//   {"catalogue": [problems]}  every entry has Russian and English, none empty, every plural form,
//                              the same parameters in both; Russian has no English word and English
//                              no Russian one (but names that are the same in both); a fixture
//                              catalogue given as `catalogue` is checked instead of the page's;
//   {"uncovered": {...}}       refusal reasons of the proto (ErrorReason) and Connect codes without words;
//   {"pick": ...}, {"text": ...}, {"number": ...}, {"hand": ...}, {"notice": ...}, {"refusal": ...}.
import { Code } from "@connectrpc/connect";
import { ErrorReason } from "../src/gen/poker/common/v1/common_pb";
import { CATALOGUE } from "../src/i18n/catalogue";
import { formatNumber, known, pickLanguage, t, useLanguage, type Key, type Language, type LanguageSources } from "../src/i18n";
import { handText, noticeWords, refusalText } from "../src/i18n/words";

type Forms = Record<string, string>;
type Entry = Record<string, string | Forms>;

// Words that read the same in both languages: the pools, the payment's and the language's own names.
const SHARED_LATIN = new Set(["GRAM", "MPX", "Telegram", "Stars", "RU", "EN", "English"]);
const SHARED_CYRILLIC = new Set(["Русский"]);
const FORMS: Record<Language, string[]> = { ru: ["one", "few", "many", "other"], en: ["one", "other"] };

function parameters(text: string): string[] {
  return [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
}

function catalogueProblems(catalogue: Record<string, Entry>): string[] {
  const problems: string[] = [];
  for (const [key, entry] of Object.entries(catalogue)) {
    if (!/^[a-z_]+(\.[A-Za-z0-9_-]+)+$|^[a-z_]+$/.test(key)) problems.push(`${key}: the key is not words.and.dots`);
    const named: Record<string, Set<string>> = {};
    for (const language of ["ru", "en"] as Language[]) {
      const text = entry?.[language];
      named[language] = new Set();
      if (text === undefined) {
        problems.push(`${key}: no ${language}`);
        continue;
      }
      const forms: Forms = typeof text === "string" ? { text } : text;
      if (typeof text !== "string") {
        for (const form of FORMS[language]) if (!(form in text)) problems.push(`${key}: ${language} has no plural form "${form}"`);
        for (const form of Object.keys(text)) if (!FORMS[language].includes(form)) problems.push(`${key}: ${language} has a form "${form}" it does not use`);
      }
      for (const [form, value] of Object.entries(forms)) {
        if (typeof value !== "string" || !value.trim()) {
          problems.push(`${key}: ${language} ${form === "text" ? "" : `(${form}) `}is empty`);
          continue;
        }
        for (const name of parameters(value)) named[language].add(name);
        const words = value.replace(/\{\w+\}/g, " ").match(/[\p{L}]{2,}/gu) ?? [];
        for (const word of words) {
          if (language === "ru" && /^[A-Za-z]+$/.test(word) && !SHARED_LATIN.has(word)) problems.push(`${key}: ru has the English word "${word}"`);
          if (language === "en" && /\p{Script=Cyrillic}/u.test(word) && !SHARED_CYRILLIC.has(word)) problems.push(`${key}: en has the Russian word "${word}"`);
        }
      }
    }
    const ru = [...named.ru].sort().join(",");
    const en = [...named.en].sort().join(",");
    if (entry?.ru !== undefined && entry?.en !== undefined && ru !== en) problems.push(`${key}: ru fills {${ru}} but en {${en}}`);
  }
  return problems;
}

interface Cases {
  catalogue?: Record<string, Entry>;
  pick?: LanguageSources[];
  texts?: { lang: Language; key: string; params?: Record<string, number | string> }[];
  numbers?: { lang: Language; value: string; signed?: boolean }[];
  hands?: { lang: Language; description: string }[];
  notices?: { lang: Language; code: string; text: string }[];
  refusals?: { lang: Language; code: string; reason: string }[];
}

let input = "";
for await (const chunk of process.stdin) input += chunk;
const cases = JSON.parse(input) as Cases;

console.log(JSON.stringify({ catalogue: catalogueProblems(cases.catalogue ?? (CATALOGUE as unknown as Record<string, Entry>)) }));
const reasons = Object.values(ErrorReason).filter((v): v is string => typeof v === "string" && v !== "UNSPECIFIED");
const codes = Object.values(Code).filter((v): v is string => typeof v === "string");
console.log(JSON.stringify({
  uncovered: {
    reasons: reasons.filter((r) => !known(`reason.${r}`)),
    codes: codes.filter((c) => !known(`status.${c}`)),
  },
  reasons: reasons.length,
}));
for (const sources of cases.pick ?? []) console.log(JSON.stringify({ pick: pickLanguage(sources) }));
for (const c of cases.texts ?? []) {
  useLanguage(c.lang);
  const params = Object.fromEntries(Object.entries(c.params ?? {}).map(([k, v]) => [k, typeof v === "number" ? BigInt(v) : v]));
  console.log(JSON.stringify({ text: t(c.key as Key, params) }));
}
for (const c of cases.numbers ?? []) {
  useLanguage(c.lang);
  console.log(JSON.stringify({ number: formatNumber(BigInt(c.value), c.signed) }));
}
for (const c of cases.hands ?? []) {
  useLanguage(c.lang);
  console.log(JSON.stringify({ hand: handText(c.description) }));
}
for (const c of cases.notices ?? []) {
  useLanguage(c.lang);
  console.log(JSON.stringify({ notice: noticeWords(c.code, c.text) }));
}
for (const c of cases.refusals ?? []) {
  useLanguage(c.lang);
  console.log(JSON.stringify({ refusal: refusalText({ code: c.code, reason: c.reason }) }));
}
