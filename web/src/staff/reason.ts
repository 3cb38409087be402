// The staff member's reason for a change. It goes whole, in their own words and language, in the
// `x-staff-reason` header (1 to 500 characters; the door records it in the audit trail). Some requests
// also carry a reason of their own that the service keeps as printable ASCII of at most 128 characters
// (a hold's, a case decision's, a house funding's): there it is `asciiReason(words)`, the same words
// transliterated (Cyrillic to Latin) and cut to fit, so nothing is refused for the language it is
// written in. Pure (no page), so tests/web runs it.
const CYRILLIC: Record<string, string> = {
  а: "a", б: "b", в: "v", г: "g", д: "d", е: "e", ё: "e", ж: "zh", з: "z", и: "i", й: "i", к: "k",
  л: "l", м: "m", н: "n", о: "o", п: "p", р: "r", с: "s", т: "t", у: "u", ф: "f", х: "kh", ц: "ts",
  ч: "ch", ш: "sh", щ: "shch", ъ: "", ы: "y", ь: "", э: "e", ю: "iu", я: "ia", і: "i", ї: "i", є: "ie",
  ґ: "g", ў: "u", қ: "q", ң: "n", ү: "u", ұ: "u", ә: "a", ө: "o", һ: "h",
};
const PUNCTUATION: Record<string, string> = {
  "«": "\"", "»": "\"", "„": "\"", "“": "\"", "”": "\"", "‘": "'", "’": "'", "–": "-", "—": "-", "…": "...",
  "№": "No.", "\u00a0": " ", "\u202f": " ",
};

export const REASON_FIELD_MAX = 128;

/** The reason trimmed, or "" when it has nothing but spaces. */
export function cleanReason(words: string): string {
  return words.replace(/\s+/g, " ").trim();
}

/** The reason as printable ASCII of at most `max` characters (Cyrillic transliterated, other letters
 * without their marks, anything else `?`). */
export function asciiReason(words: string, max = REASON_FIELD_MAX): string {
  let out = "";
  for (const ch of cleanReason(words).normalize("NFC")) {
    if (ch >= " " && ch <= "~") {
      out += ch;
      continue;
    }
    const lower = ch.toLowerCase();
    const latin = CYRILLIC[lower];
    if (latin !== undefined) {
      out += ch !== lower && latin ? latin[0].toUpperCase() + latin.slice(1) : latin;
      continue;
    }
    if (PUNCTUATION[ch] !== undefined) {
      out += PUNCTUATION[ch];
      continue;
    }
    const bare = ch.normalize("NFD").replace(/[\u0300-\u036f]/g, "");
    out += /^[ -~]+$/.test(bare) ? bare : "?";
  }
  out = out.replace(/ +/g, " ").trim();
  if (out.length > max) out = `${out.slice(0, max - 3).trimEnd()}...`;
  return out || "?";
}
