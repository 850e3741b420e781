-- A snapshot byte for byte the same as the last one is unchanged without being parsed:
-- `input` is the blake3 of the raw bytes of the snapshot that wrote `doc`, salted with the
-- array rules that shaped it (`Txn::put_json`); NULL when anything else wrote `doc`.
ALTER TABLE doc ADD COLUMN input BLOB;
