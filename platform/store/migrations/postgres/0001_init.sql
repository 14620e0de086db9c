-- The store's first schema (spec §15). Amounts are BIGINT nano-units (10⁻⁹ of a unit).

CREATE TABLE accounts (
    name TEXT PRIMARY KEY,
    currency TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    key_sha256 TEXT UNIQUE
);

-- One row per ledger account: a tenant (`acme`, what it can spend), its held money
-- (`acme@held`, open reservations) and the platform's funding account (`@funding`, the only
-- one that may go negative: money enters the ledger through it). Kept in the same transaction
-- as the entries, so `amount` always equals the sum of the account's entries.
CREATE TABLE balances (
    account TEXT PRIMARY KEY,
    amount BIGINT NOT NULL,
    CHECK (amount >= 0 OR account = '@funding')
);
INSERT INTO balances (account, amount) VALUES ('@funding', 0);

-- Append-only: rows are inserted, never updated or deleted.
CREATE TABLE transfers (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    debit_account TEXT NOT NULL,
    credit_account TEXT NOT NULL,
    amount BIGINT NOT NULL CHECK (amount > 0),
    currency TEXT NOT NULL,
    run TEXT,
    at_ms BIGINT NOT NULL
);

-- Exactly two per transfer: its debit (credit = 0) and its credit (credit = 1).
CREATE TABLE entries (
    id BIGSERIAL PRIMARY KEY,
    transfer TEXT NOT NULL REFERENCES transfers(id),
    account TEXT NOT NULL,
    credit BIGINT NOT NULL CHECK (credit IN (0, 1)),
    amount BIGINT NOT NULL CHECK (amount > 0),
    kind TEXT NOT NULL,
    at_ms BIGINT NOT NULL,
    UNIQUE (transfer, credit)
);
CREATE INDEX entries_account ON entries (account, id);

CREATE TABLE mandates (
    account TEXT NOT NULL REFERENCES accounts(name),
    name TEXT NOT NULL,
    budget BIGINT NOT NULL,
    currency TEXT NOT NULL,
    threshold BIGINT NOT NULL,
    allow TEXT NOT NULL,
    deny TEXT NOT NULL,
    expires_ms BIGINT,
    created_ms BIGINT NOT NULL,
    spent BIGINT NOT NULL DEFAULT 0 CHECK (spent >= 0),
    reserved BIGINT NOT NULL DEFAULT 0 CHECK (reserved >= 0),
    PRIMARY KEY (account, name),
    CHECK (spent + reserved <= budget)
);

-- state: open (reserved, running) → finished (receipt stored) or voided (by recover).
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL REFERENCES accounts(name),
    agent TEXT NOT NULL,
    version TEXT NOT NULL,
    input_sha256 TEXT NOT NULL,
    idempotency_key TEXT,
    mandate TEXT,
    reserved BIGINT NOT NULL,
    currency TEXT NOT NULL,
    state TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    finished_ms BIGINT
);
CREATE INDEX runs_open ON runs (state);

-- A key claimed by a run: `running` until the run finishes (then `done` with its receipt);
-- deleted when recover voids the run, so the key can be used again.
CREATE TABLE idempotency (
    tenant TEXT NOT NULL,
    key TEXT NOT NULL,
    run TEXT NOT NULL,
    input_sha256 TEXT NOT NULL,
    state TEXT NOT NULL,
    receipt TEXT,
    PRIMARY KEY (tenant, key)
);
CREATE INDEX idempotency_run ON idempotency (run);

CREATE TABLE receipts (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    agent TEXT NOT NULL,
    version TEXT NOT NULL,
    status TEXT NOT NULL,
    code TEXT,
    mandate TEXT,
    json TEXT NOT NULL,
    at_ms BIGINT NOT NULL
);
CREATE INDEX receipts_agent_status ON receipts (agent, status);
CREATE INDEX receipts_tenant ON receipts (tenant, id);
CREATE INDEX receipts_mandate ON receipts (mandate, id);

-- state: pending → approved | rejected; approved → used. Expiry is computed from the
-- caller's clock, never stored as a state.
CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    mandate TEXT NOT NULL,
    agent TEXT NOT NULL,
    version TEXT NOT NULL,
    input_sha256 TEXT NOT NULL,
    input_json TEXT NOT NULL,
    worst_case BIGINT NOT NULL,
    currency TEXT NOT NULL,
    state TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    decided_ms BIGINT,
    used_ms BIGINT
);

CREATE TABLE files (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size BIGINT NOT NULL,
    media_type TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT,
    source TEXT
);
CREATE INDEX files_tenant ON files (tenant, id);
