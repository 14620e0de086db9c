-- The sweep of expired files (issue 45) reads the files whose expiry has passed, soonest first:
-- indexed, so a sweep costs what it deletes, not the size of the table.
CREATE INDEX files_expiry ON files (expires_ms) WHERE expires_ms IS NOT NULL;
