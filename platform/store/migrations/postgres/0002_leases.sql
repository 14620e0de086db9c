-- Runs belong to the process that began them (its instance name), and a process holds a lease
-- that it renews while it lives. `recover` voids only the open runs of its own earlier life and
-- those of processes whose lease ran out, never the runs a live process has in flight on a
-- shared database. Runs begun before this migration have the owner '' (no lease: recoverable).
ALTER TABLE runs ADD COLUMN owner TEXT NOT NULL DEFAULT '';

CREATE TABLE leases (
    owner TEXT PRIMARY KEY,
    until_ms BIGINT NOT NULL
);
