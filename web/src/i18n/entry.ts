// The shape of a catalogue entry (./catalogue.ts): its own module, so the catalogue's parts (screens.ts,
// table.ts, house.ts, refusals.ts) name it without importing the catalogue that imports them.

/** A text with its plural forms: `one` and `other` always, `few` and `many` in Russian. */
export interface Plural {
  one: string;
  few?: string;
  many?: string;
  other: string;
}

export type Text = string | Plural;

export interface Entry {
  ru: Text;
  en: Text;
}
