-- Schema 11: each checkpoint's leaves, so that a read whose changes only replace values
-- patches the checkpoint's text in place (`store::leaves`).
--
-- `leaves` (zstd) lists, in document order, the values of the checkpoint's document that a
-- change can replace where they stand (scalars, opaque arrays, empty containers; not the
-- key fields of keyed elements, nor set elements) and whose paths are numbered in `path`:
-- each as its number among all the document's values in document order, and its path's
-- number. NULL: not indexed (checkpoints written before schema 11, or rebuilt by `gc`):
-- reads from it replay its changes as before.
ALTER TABLE checkpoint ADD COLUMN leaves BLOB;
