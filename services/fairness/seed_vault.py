"""Encryption at rest of the seeds of unrevealed hands: AES-256-GCM bound to the hand id.

The associated data names the hand, so a ciphertext copied onto another hand's row does not decrypt.
Keys carry ids so they can rotate: the first key encrypts, every configured key decrypts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

_AAD_LABEL = b"poker-fairness/seed-at-rest/v1\x00"
# Version 3's deck secret (every card and salt of the committed deck) under its own label, so a seed
# ciphertext and a deck-secret ciphertext can never stand in for each other.
DECK_SECRET_LABEL = b"poker-fairness/deck-secret-at-rest/v3\x00"
_NONCE_BYTES = 12


class SeedVaultError(Exception):
    """A stored seed cannot be decrypted: unknown key id, wrong key, or tampered ciphertext."""


class SeedVault:
    """Encrypts and decrypts seeds; never logs or shows them."""

    def __init__(self, keys: Mapping[str, bytes], active_key_id: str) -> None:
        if active_key_id not in keys:
            raise ValueError("the active seed key id must be one of the keys")
        self._ciphers = {key_id: AESGCM(key) for key_id, key in keys.items()}
        self._active = active_key_id

    @classmethod
    def from_settings(cls, pairs: Sequence[str]) -> SeedVault:
        """From `KEY_ID:HEX64` pairs as validated by the settings; the first one encrypts."""
        keys = {}
        for pair in pairs:
            key_id, _, secret = pair.partition(":")
            keys[key_id] = bytes.fromhex(secret)
        return cls(keys, pairs[0].partition(":")[0])

    @property
    def active_key_id(self) -> str:
        return self._active

    def encrypt(self, hand_id: str, seed: bytes, label: bytes = _AAD_LABEL) -> tuple[str, bytes]:
        """(key id, nonce || ciphertext || tag) for storing the seed of `hand_id` (or, with
        `DECK_SECRET_LABEL`, its deck secret)."""
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._ciphers[self._active].encrypt(nonce, seed, label + hand_id.encode())
        return self._active, nonce + sealed

    def decrypt(self, hand_id: str, key_id: str, blob: bytes, label: bytes = _AAD_LABEL) -> bytes:
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            raise SeedVaultError(f"no seed key with id {key_id!r} is configured")
        try:
            return cipher.decrypt(blob[:_NONCE_BYTES], blob[_NONCE_BYTES:], label + hand_id.encode())
        except InvalidTag as exc:
            raise SeedVaultError("a stored seed failed authentication") from exc

    def __repr__(self) -> str:
        return f"SeedVault(active_key_id={self._active!r}, keys={sorted(self._ciphers)!r})"
