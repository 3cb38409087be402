// My client seed in each hand (docs/fairness.md, "The seed flow at a table"), when the player chose
// to add their own randomness: a fresh seed of 32 random bytes for every hand (a seed is public
// after its hand), its hash first while the table takes hashes, then, once the table closed and
// listed the hash set, the seed itself, and only if my hash is in that set; a version 2 hand takes
// the seed in one step. What was sent and the set as it closed are kept (for this tab) so the
// fairness check of a hand can compare them with the reveal.
import { table, describe, newRequestId } from "./api";
import { t } from "./i18n";
import { clientSeedHash, type KeptHash } from "./fairness/verifier";
import { SeedPhase, type TableView } from "./gen/poker/table/v1/table_pb";

export interface HandSeed {
  seed: string;
  hash: string;
  sent: boolean; // the seed itself was taken
}

/** Per hand id: my seed (and hash), and the hash set as the table closed it. */
export const handSeeds = new Map<string, HandSeed>();
export const hashSets = new Map<string, KeptHash[]>();
const busy = new Set<string>(); // hands with a call on its way (or done)
const ENABLED_KEY = "poker.own-randomness";

export function ownRandomness(): boolean {
  return localStorage.getItem(ENABLED_KEY) === "1";
}

export function setOwnRandomness(on: boolean): void {
  localStorage.setItem(ENABLED_KEY, on ? "1" : "0");
}

/** 32 bytes from the browser's CSPRNG as 43 URL-safe characters (the table takes 1 to 64 printable). */
export function freshSeed(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The next step for the table as it is now (`latest`), if any; `say` gets a line for the hand log. */
export async function seedStep(tableId: string, latest: () => TableView | null, mySeat: number, say: (line: string) => void): Promise<void> {
  const view = latest();
  if (!view) return;
  const handId = view.handId;
  const dealt = view.board.length > 0 || view.seats.some((s) => s.holeCards.length > 0);
  if (handId && dealt) {
    // Dealt before my seed went in (its time ran out on the way): the deal left my seat out.
    const late = handSeeds.get(handId);
    if (late && !late.sent && !busy.has(`${handId}/late`)) {
      busy.add(`${handId}/late`);
      say(t("seed.dealt_first", { hand: handId.slice(0, 8) }));
    }
    return;
  }
  if (!handId || !view.seedCommitment || !mySeat) return;
  if (view.seedPhase === SeedPhase.SEEDS && !hashSets.has(handId)) {
    hashSets.set(handId, view.seedHashes.map((h) => ({ seat: h.seat, hash: h.clientSeedHash })));
  }
  if (!ownRandomness()) return;
  const short = handId.slice(0, 8);
  const mine = handSeeds.get(handId);
  try {
    if (view.seedPhase === SeedPhase.ONE_STEP && !busy.has(handId)) {
      busy.add(handId);
      const seed = freshSeed();
      await table.setPlayerSeed({ requestId: newRequestId(), tableId, clientSeed: seed });
      handSeeds.set(handId, { seed, hash: "", sent: true });
      say(t("seed.went_in", { hand: short }));
    } else if (view.seedPhase === SeedPhase.HASHES && !busy.has(handId)) {
      busy.add(handId);
      const seed = freshSeed();
      const hash = await clientSeedHash(view.seedCommitment, mySeat, new TextEncoder().encode(seed));
      await table.setPlayerSeed({ requestId: newRequestId(), tableId, clientSeedHash: hash });
      handSeeds.set(handId, { seed, hash, sent: false });
      say(t("seed.hash_in", { hand: short }));
      // The hash set may have closed while the hash was on its way.
      await seedStep(tableId, latest, mySeat, say);
    } else if (view.seedPhase === SeedPhase.SEEDS && mine && !mine.sent && !busy.has(`${handId}/seed`)) {
      busy.add(`${handId}/seed`);
      if (!(hashSets.get(handId) ?? []).some((k) => k.seat === mySeat && k.hash === mine.hash)) {
        say(t("seed.not_in_set", { hand: short }));
        return;
      }
      await table.setPlayerSeed({ requestId: newRequestId(), tableId, clientSeed: mine.seed });
      mine.sent = true;
      say(t("seed.went_in", { hand: short }));
    }
  } catch (error) {
    say(t("seed.missed", { hand: short, why: describe(error) }));
  }
}
