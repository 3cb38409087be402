// A second implementation of version 3 of docs/fairness.md (leaves, tree, commitment, client-seed
// hashes, deal order, openings), in JavaScript with node:crypto, written from the spec alone.
// Usage: node spec_v3.mjs < hands.json  -> one JSON line per hand:
//   {name, deck_root, commitment, client_seed_hashes, order, dealt, proofs, openings_hold, tampered_fail}
import { createHash, createHmac } from "node:crypto";
import { readFileSync } from "node:fs";

const hmac = (key, message) => createHmac("sha256", key).update(message).digest();
const sha256 = (message) => createHash("sha256").update(message).digest();
const u32 = (n) => { const b = Buffer.alloc(4); b.writeUInt32BE(n); return b; };
const u64 = (n) => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(n)); return b; };
const prefixed = (text) => { const b = Buffer.from(text, "utf8"); return Buffer.concat([u32(b.length), b]); };
const label = (text) => Buffer.from(`poker-fairness/v3/${text}`);

function stream(key, tag) {
  let counter = 0, block = Buffer.alloc(0), offset = 0;
  return () => {
    if (offset === block.length) { block = hmac(key, Buffer.concat([tag, u64(counter++)])); offset = 0; }
    const word = block.readUInt32BE(offset);
    offset += 4;
    return word;
  };
}

function fisherYates(nextWord) {
  const cards = Array.from({ length: 52 }, (_, i) => i);
  for (let i = 51; i > 0; i--) {
    const n = i + 1, limit = 2 ** 32 - (2 ** 32 % n);
    let word = nextWord();
    while (word >= limit) word = nextWord();
    const j = word % n;
    [cards[i], cards[j]] = [cards[j], cards[i]];
  }
  return cards;
}

function secretDeck(deckSecret) {
  const key = hmac(deckSecret, label("secret-deck"));
  const cards = fisherYates(stream(key, label("secret-deck")));
  const salts = cards.map((_, q) => hmac(deckSecret, Buffer.concat([label("salt"), u32(q)])));
  return { cards, salts };
}

const leaf = (q, card, salt) => sha256(Buffer.concat([label("leaf"), u32(q), Buffer.from([card]), salt]));
const node = (left, right) => sha256(Buffer.concat([label("node"), left, right]));

function levels({ cards, salts }) {
  let level = [];
  for (let q = 0; q < 64; q++) level.push(q < 52 ? leaf(q, cards[q], salts[q]) : sha256(Buffer.concat([label("padding-leaf"), u32(q)])));
  const all = [level];
  while (level.length > 1) {
    const next = [];
    for (let i = 0; i < level.length; i += 2) next.push(node(level[i], level[i + 1]));
    all.push(next);
    level = next;
  }
  return all;
}

const proofOf = (all, q) => Array.from({ length: 6 }, (_, k) => all[k][(q >> k) ^ 1]);

function rootFrom(q, card, salt, proof) {
  let h = leaf(q, card, salt);
  for (let k = 0; k < 6; k++) h = (q >> k) & 1 ? node(proof[k], h) : node(h, proof[k]);
  return h;
}

function order(serverSeed, nonce, clientSeeds, commitment) {
  const sorted = [...clientSeeds].sort((a, b) => a.seat - b.seat);
  const parts = [label("client-seeds"), u32(sorted.length)];
  for (const { seat, seed } of sorted) parts.push(u32(seat), u32(seed.length), seed);
  const digest = sha256(Buffer.concat(parts));
  const prk = hmac(nonce, serverSeed);
  const key = hmac(prk, Buffer.concat([label("deck-key"), commitment, digest, Buffer.from([1])]));
  return fisherYates(stream(key, label("stream")));
}

const input = JSON.parse(readFileSync(0, "utf8"));
for (const v of input.hands) {
  const serverSeed = Buffer.from(v.server_seed, "hex"), nonce = Buffer.from(v.nonce, "hex");
  const deck = secretDeck(Buffer.from(v.deck_secret, "hex"));
  const all = levels(deck);
  const root = all[6][0];
  const commitment = sha256(Buffer.concat([
    label("commitment"), u32(3), prefixed(v.table_id), prefixed(v.hand_id), u64(v.sequence),
    Buffer.from(v.previous_commitment, "hex"), nonce, sha256(serverSeed), root,
  ]));
  const clientSeeds = v.client_seeds.map((c) => ({ seat: c.seat, seed: Buffer.from(c.client_seed, "hex") }));
  const seedHashes = clientSeeds.map(({ seat, seed }) => sha256(Buffer.concat([
    label("client-seed-hash"), commitment, u32(seat), u32(seed.length), seed,
  ])).toString("hex"));
  const dealOrder = order(serverSeed, nonce, clientSeeds, commitment);
  const dealt = dealOrder.map((q) => deck.cards[q]);
  // The openings the other implementation made must hold here; a flipped salt byte must not.
  let hold = true, tamperedFail = true;
  for (const o of v.openings || []) {
    const salt = Buffer.from(o.salt, "hex"), proof = o.proof.map((p) => Buffer.from(p, "hex"));
    const ok = dealOrder[o.deal_position] === o.committed_position && rootFrom(o.committed_position, o.card, salt, proof).equals(root);
    hold = hold && ok;
    salt[0] ^= 1;
    tamperedFail = tamperedFail && !rootFrom(o.committed_position, o.card, salt, proof).equals(root);
  }
  console.log(JSON.stringify({
    name: v.name, deck_root: root.toString("hex"), commitment: commitment.toString("hex"),
    client_seed_hashes: seedHashes, order: dealOrder, dealt,
    proof_of_deal_position_0: proofOf(all, dealOrder[0]).map((h) => h.toString("hex")),
    openings_hold: hold, tampered_fail: tamperedFail,
  }));
}
