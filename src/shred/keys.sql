-- hist keys.db, schema version 1: the secrets of crypto-shredding, kept apart from the log.
-- Owner-only permissions (0600); secure_delete on; rollback journal (no WAL to keep old pages).

CREATE TABLE meta (
    name    TEXT PRIMARY KEY,
    value   ANY NOT NULL
    -- identity:      the repository's age X25519 identity (AGE-SECRET-KEY-1…)
    -- master:        the 32-byte master key, age-encrypted to that identity
    -- shredded_tx:   the newest forget transaction whose keys were deleted here
    -- shredded_hash: that transaction's chain hash (detects a hist.db from another history)
) STRICT;

CREATE TABLE subject_key (
    subject     TEXT PRIMARY KEY,   -- subject id (keyed blake3 of the subject)
    since_tx    INTEGER NOT NULL,   -- the transaction that created the key
    key         BLOB NOT NULL       -- nonce ‖ XChaCha20-Poly1305(master, data key), aad = subject id
) STRICT;
