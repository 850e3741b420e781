-- Crypto-shredding (personal paths, forget): the log remembers every forget.
-- A subject is named by its id (a keyed blake3 hash), never by the subject itself.

CREATE TABLE forgotten (
    subject TEXT NOT NULL,              -- subject id, 32 hex digits
    tx      INTEGER NOT NULL REFERENCES tx(id),
    PRIMARY KEY (subject, tx)
) STRICT, WITHOUT ROWID;
CREATE INDEX forgotten_tx ON forgotten(tx);

CREATE VIEW forgets(subject, tx, at, actor, reason) AS
    SELECT f.subject, f.tx, t.at, t.actor, t.reason FROM forgotten f JOIN tx t ON t.id = f.tx;
