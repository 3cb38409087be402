// A third implementation of docs/fairness.md (shuffle versions 1 and 2), in JavaScript with
// node:crypto, written from the spec alone to show it can be re-implemented outside Python.
// Usage: node spec_shuffle.mjs < vectors.json   -> prints one JSON line per vector: {name, commitment, deck}
import { createHash, createHmac } from "node:crypto";
import { readFileSync } from "node:fs";

const hmac = (key, message) => createHmac("sha256", key).update(message).digest();
const sha256 = (message) => createHash("sha256").update(message).digest();
const u32 = (n) => { const b = Buffer.alloc(4); b.writeUInt32BE(n); return b; };
const u64 = (n) => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(n)); return b; };
const prefixed = (text) => { const b = Buffer.from(text, "utf8"); return Buffer.concat([u32(b.length), b]); };

// Version 1: SHA-256 of the seed. Version 2: SHA-256 over everything published before the deal.
function commitment(v, seed, nonce) {
  if (v.shuffle_version === 1) return sha256(seed).toString("hex");
  return sha256(Buffer.concat([
    Buffer.from("poker-fairness/v2/commitment"), u32(2), prefixed(v.table_id), prefixed(v.hand_id),
    u64(v.sequence), Buffer.from(v.previous_commitment, "hex"), nonce, sha256(seed),
  ])).toString("hex");
}

function deck(version, serverSeed, nonce, clientSeeds, commitmentHex) {
  const label = (step) => Buffer.from(`poker-fairness/v${version}/${step}`);
  const ordered = [...clientSeeds].sort((a, b) => a.seat - b.seat);
  const parts = [label("client-seeds"), u32(ordered.length)];
  for (const { seat, seed } of ordered) parts.push(u32(seat), u32(seed.length), seed);
  const digest = sha256(Buffer.concat(parts));
  const bound = version === 2 ? Buffer.from(commitmentHex, "hex") : Buffer.alloc(0);
  const prk = hmac(nonce, serverSeed);
  const key = hmac(prk, Buffer.concat([label("deck-key"), bound, digest, Buffer.from([1])]));
  let counter = 0, block = Buffer.alloc(0), offset = 0;
  const nextWord = () => {
    if (offset === block.length) {
      block = hmac(key, Buffer.concat([label("stream"), u64(counter++)]));
      offset = 0;
    }
    const word = block.readUInt32BE(offset);
    offset += 4;
    return word;
  };
  const cards = Array.from({ length: 52 }, (_, i) => i);
  for (let i = 51; i > 0; i--) {
    const n = i + 1;
    const limit = 2 ** 32 - (2 ** 32 % n);
    let word = nextWord();
    while (word >= limit) word = nextWord();
    const j = word % n;
    [cards[i], cards[j]] = [cards[j], cards[i]];
  }
  return cards;
}

const input = JSON.parse(readFileSync(0, "utf8"));
for (const v of input.shuffle_vectors) {
  const seed = Buffer.from(v.server_seed, "hex");
  const nonce = Buffer.from(v.nonce, "hex");
  const clientSeeds = v.client_seeds.map((c) => ({ seat: c.seat, seed: Buffer.from(c.client_seed, "hex") }));
  const computed = commitment(v, seed, nonce);
  console.log(JSON.stringify({ name: v.name, commitment: computed, deck: deck(v.shuffle_version, seed, nonce, clientSeeds, computed) }));
}
