-- The newest change at a path, as of a version, is one index lookup (blame answers a leaf
-- that no recent change explains this way, whatever the length of the key's history).
DROP INDEX change_key_path;
CREATE INDEX change_key_path ON change_log(key, path, seq);
