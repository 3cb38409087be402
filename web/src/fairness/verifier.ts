// The fairness check of a hand, done in the browser from the published values (docs/fairness.md):
// recompute the commitment and the deck from the revealed seed, the nonce and the client seeds, and
// compare them with the commitment shown before the deal and with the cards the player saw. The
// server's own verdict is never needed. Each shuffle version is one `ShuffleVerifier`; version 3
// checks, instead of a recomputed deck, the openings of exactly the cards the player saw against the
// per-position commitment made before the deal (the same algorithm as tests/fairness/spec_v3.mjs).
// Its problems are said in the page's language (src/i18n).
import { t } from "../i18n";

export interface ClientSeed {
  seat: number;
  seed: Uint8Array;
  /** Version 3: the client-seed hash the seat recorded before the seal (hex, either case); a seat
   * with a hash and an empty seed withheld its seed and is left out of the deal. */
  hash?: string;
}

export interface PublishedHand {
  version: number;
  tableId: string;
  handId: string;
  sequence: bigint;
  previousCommitment: string;
  nonce: string;
  serverSeed: Uint8Array;
  serverSeedHash: string;
  commitment: string;
  clientSeeds: ClientSeed[];
  /** Version 3: the Merkle root the commitment binds, and the openings the reveal gave this player. */
  deckRoot?: string;
  openings?: CardOpening[];
}

/** Version 3: proof that the card dealt at `dealPosition` was fixed before the deal. */
export interface CardOpening {
  dealPosition: number;
  committedPosition: number;
  card: number;
  salt: Uint8Array;
  proof: Uint8Array[];
}

/** A card the player saw and where it sat in the deck (position 0 is dealt first). */
export interface SeenCard {
  position: number;
  card: number;
}

export interface Verdict {
  ok: boolean;
  checkedCards: number;
  computedCommitment: string;
  problems: string[];
}

export interface ShuffleVerifier {
  readonly version: number;
  verify(hand: PublishedHand, seen: SeenCard[], shownCommitment: string): Promise<Verdict>;
}

const encoder = new TextEncoder();

export function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function fromHex(text: string): Uint8Array {
  if (!/^([0-9a-f]{2})*$/i.test(text)) throw new Error("not hex");
  return Uint8Array.from(text.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function u32(n: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n);
  return b;
}

function u64(n: bigint): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, n);
  return b;
}

function prefixed(text: string): Uint8Array {
  const bytes = encoder.encode(text);
  return concat(u32(bytes.length), bytes);
}

async function sha256(data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", data as BufferSource));
}

async function hmac(key: Uint8Array, message: Uint8Array): Promise<Uint8Array> {
  const imported = await crypto.subtle.importKey("raw", key as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", imported, message as BufferSource));
}

/** Versions 1 and 2 of docs/fairness.md (the same algorithm as tests/fairness/spec_shuffle.mjs). */
class HmacShuffle implements ShuffleVerifier {
  constructor(readonly version: 1 | 2) {}

  private label(step: string, labels = `v${this.version}`): Uint8Array {
    return encoder.encode(`poker-fairness/${labels}/${step}`);
  }

  async commitment(hand: PublishedHand): Promise<string> {
    if (this.version === 1) return hex(await sha256(hand.serverSeed));
    return hex(
      await sha256(
        concat(
          encoder.encode("poker-fairness/v2/commitment"),
          u32(2),
          prefixed(hand.tableId),
          prefixed(hand.handId),
          u64(hand.sequence),
          fromHex(hand.previousCommitment),
          fromHex(hand.nonce),
          await sha256(hand.serverSeed),
        ),
      ),
    );
  }

  /** The deck (versions 1 and 2), or under `labels = "v3"` version 3's deal order. */
  async deck(hand: PublishedHand, commitment: string, labels = `v${this.version}`): Promise<number[]> {
    const ordered = [...hand.clientSeeds].sort((a, b) => a.seat - b.seat);
    const parts: Uint8Array[] = [this.label("client-seeds", labels), u32(ordered.length)];
    for (const { seat, seed } of ordered) parts.push(u32(seat), u32(seed.length), seed);
    const digest = await sha256(concat(...parts));
    const bound = this.version === 2 ? fromHex(commitment) : new Uint8Array(0);
    const prk = await hmac(fromHex(hand.nonce), hand.serverSeed);
    const key = await hmac(prk, concat(this.label("deck-key", labels), bound, digest, Uint8Array.of(1)));
    let counter = 0n;
    let block: Uint8Array = new Uint8Array(0);
    let offset = 0;
    const nextWord = async (): Promise<number> => {
      if (offset === block.length) {
        block = await hmac(key, concat(this.label("stream", labels), u64(counter)));
        counter += 1n;
        offset = 0;
      }
      const word = new DataView(block.buffer, block.byteOffset).getUint32(offset);
      offset += 4;
      return word;
    };
    const cards = Array.from({ length: 52 }, (_, i) => i);
    for (let i = 51; i > 0; i--) {
      const n = i + 1;
      const limit = 2 ** 32 - (2 ** 32 % n);
      let word = await nextWord();
      while (word >= limit) word = await nextWord();
      const j = word % n;
      [cards[i], cards[j]] = [cards[j], cards[i]];
    }
    return cards;
  }

  async verify(hand: PublishedHand, seen: SeenCard[], shownCommitment: string): Promise<Verdict> {
    const problems: string[] = [];
    const computed = await this.commitment(hand);
    if (computed !== hand.commitment) problems.push(t("fairness.commitment_mismatch"));
    if (shownCommitment && shownCommitment !== hand.commitment) {
      problems.push(t("fairness.commitment_not_shown"));
    }
    if (this.version === 2 && hex(await sha256(hand.serverSeed)) !== hand.serverSeedHash) {
      problems.push(t("fairness.seed_hash_mismatch"));
    }
    const deck = await this.deck(hand, hand.commitment);
    let checked = 0;
    for (const { position, card } of seen) {
      if (deck[position] !== card) problems.push(t("fairness.card_not_dealt", { position: String(position) }));
      else checked += 1;
    }
    return { ok: problems.length === 0, checkedCards: checked, computedCommitment: computed, problems };
  }
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** Version 3 of docs/fairness.md: per-position commitments under a Merkle root, openings per reader. */
class OpeningsVerifier implements ShuffleVerifier {
  readonly version = 3;
  private readonly orderOf = new HmacShuffle(2);

  private label(step: string): Uint8Array {
    return encoder.encode(`poker-fairness/v3/${step}`);
  }

  async commitment(hand: PublishedHand): Promise<string> {
    return hex(
      await sha256(
        concat(
          this.label("commitment"),
          u32(3),
          prefixed(hand.tableId),
          prefixed(hand.handId),
          u64(hand.sequence),
          fromHex(hand.previousCommitment),
          fromHex(hand.nonce),
          fromHex(hand.serverSeedHash),
          fromHex(hand.deckRoot ?? ""),
        ),
      ),
    );
  }

  async rootOf(opening: CardOpening): Promise<Uint8Array> {
    let node = await sha256(concat(this.label("leaf"), u32(opening.committedPosition), Uint8Array.of(opening.card), opening.salt));
    for (let k = 0; k < 6; k++) {
      const sibling = opening.proof[k] ?? new Uint8Array(0);
      const pair = (opening.committedPosition >> k) & 1 ? concat(sibling, node) : concat(node, sibling);
      node = await sha256(concat(this.label("node"), pair));
    }
    return node;
  }

  async verify(hand: PublishedHand, seen: SeenCard[], shownCommitment: string): Promise<Verdict> {
    const problems: string[] = [];
    if (hex(await sha256(hand.serverSeed)) !== hand.serverSeedHash) problems.push(t("fairness.seed_hash_mismatch"));
    const computed = await this.commitment(hand);
    if (computed !== hand.commitment) problems.push(t("fairness.commitment_mismatch"));
    if (shownCommitment && shownCommitment !== hand.commitment) {
      problems.push(t("fairness.commitment_not_shown"));
    }
    // Each seed in the deal gives the hash its seat recorded before the seal (step 3): the
    // hash-first guarantee, checked here as the service's verdict (CLIENT_SEED_HASH) checks it.
    for (const { seat, seed, hash } of hand.clientSeeds) {
      if (seed.length === 0 && hash) continue; // withheld: left out of the deal
      if (seed.length === 0) problems.push(t("fairness.seat_seed_empty", { seat }));
      else if (!hash) problems.push(t("fairness.seat_seed_without_hash", { seat }));
      else if ((await clientSeedHash(hand.commitment, seat, seed)) !== hash.toLowerCase()) {
        problems.push(t("fairness.seat_seed_hash_mismatch", { seat }));
      }
    }
    // The deal order: version 2's steps under the version 3 labels, over the seeds that went in.
    const order = await this.orderOf.deck(
      { ...hand, clientSeeds: hand.clientSeeds.filter((s) => s.seed.length > 0) },
      hand.commitment,
      "v3",
    );
    const root = fromHex(hand.deckRoot ?? "");
    const opened = new Map<number, CardOpening>();
    const cards = new Set<number>();
    for (const opening of hand.openings ?? []) {
      if (order[opening.dealPosition] !== opening.committedPosition) {
        problems.push(t("fairness.opening_position", { deal: String(opening.dealPosition), committed: String(opening.committedPosition) }));
      } else if (opening.salt.length !== 32 || opening.proof.length !== 6 || !equal(await this.rootOf(opening), root)) {
        problems.push(t("fairness.opening_root", { deal: String(opening.dealPosition) }));
      } else if (cards.has(opening.card)) {
        problems.push(t("fairness.opening_twice"));
      }
      cards.add(opening.card);
      opened.set(opening.dealPosition, opening);
    }
    let checked = 0;
    for (const { position, card } of seen) {
      const opening = opened.get(position);
      if (!opening) problems.push(t("fairness.position_not_opened", { position: String(position) }));
      else if (opening.card !== card) problems.push(t("fairness.card_not_committed", { position: String(position) }));
      else checked += 1;
    }
    return { ok: problems.length === 0, checkedCards: checked, computedCommitment: computed, problems };
  }
}

/** Version 3 step 3 of docs/fairness.md: the hash a player sends before the seed, over the
 * hand's commitment, their seat and the seed (64 lower-case hex digits). */
export async function clientSeedHash(commitment: string, seat: number, seed: Uint8Array): Promise<string> {
  return hex(await sha256(concat(encoder.encode("poker-fairness/v3/client-seed-hash"), fromHex(commitment), u32(seat), u32(seed.length), seed)));
}

/** One seat's hash as the table listed it when it closed the hash set (before any seed was sent). */
export interface KeptHash {
  seat: number;
  hash: string;
}

/** The reveal's seeds against the hash set kept from the view at its close: "" when every seed in
 * the deal is at a seat of the set and matches its hash there, else the first problem. A seat with
 * no seed withheld it and is not in the deal. */
export async function hashSetProblem(kept: KeptHash[], revealed: ClientSeed[], commitment: string): Promise<string> {
  const closed = new Map(kept.map((k) => [k.seat, k.hash]));
  for (const { seat, seed } of revealed) {
    if (seed.length === 0) continue;
    const hash = closed.get(seat);
    if (hash === undefined) return t("fairness.seed_not_in_set", { seat });
    if ((await clientSeedHash(commitment, seat, seed)) !== hash) return t("fairness.seed_not_its_hash", { seat });
  }
  return "";
}

const VERIFIERS = new Map<number, ShuffleVerifier>();

export function registerVerifier(verifier: ShuffleVerifier): void {
  VERIFIERS.set(verifier.version, verifier);
}

registerVerifier(new HmacShuffle(1));
registerVerifier(new HmacShuffle(2));
registerVerifier(new OpeningsVerifier());

export async function verify(hand: PublishedHand, seen: SeenCard[], shownCommitment: string): Promise<Verdict> {
  const verifier = VERIFIERS.get(hand.version);
  if (!verifier) {
    return {
      ok: false,
      checkedCards: 0,
      computedCommitment: "",
      problems: [t("fairness.version_unknown", { version: String(hand.version) })],
    };
  }
  return verifier.verify(hand, seen, shownCommitment);
}
