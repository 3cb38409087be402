// The one catalogue of the page's words: every text a player reads is an entry here, a stable key with
// its Russian and English text. `{name}` marks a parameter (`t(key, { name })`); an entry whose text
// depends on a count has its plural forms (Russian one / few / many / other: 1, 2-4, 5-20 and 0,
// fractions; English one / other), chosen by `count` with Intl.PluralRules. A sentence is one entry
// with its parameters, never fragments glued in one language's word order.
//
// tests/web/test_i18n.py checks that every entry has both languages and every plural form, that both
// languages name the same parameters, that every refusal reason of protos/poker/common/v1/common.proto
// has its words, and that no text the page puts on screen comes from anywhere else.
import { SCREENS } from "./screens";
import { TABLE } from "./table";
import { HOUSE } from "./house";
import { REFUSALS } from "./refusals";
import { LIMITS } from "./limits";
import type { Entry } from "./entry";

export type { Entry, Plural, Text } from "./entry";

export const CATALOGUE = { ...SCREENS, ...TABLE, ...HOUSE, ...REFUSALS, ...LIMITS } satisfies Record<string, Entry>;

export type Key = keyof typeof CATALOGUE;
