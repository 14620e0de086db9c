-- The console (`/console` on the gateway): a signed-in browser's session, kept here so that any
-- gateway on the same database knows it (several gateways behind one load balancer), and ended
-- at once by signing out. Only the SHA-256 of the cookie's secret is stored, as for API keys.
CREATE TABLE console_sessions (
    id_sha256 TEXT PRIMARY KEY,
    account TEXT NOT NULL REFERENCES accounts(name),
    csrf TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_ms);

-- The console's runs list: an account's runs, newest first (run ids are UUIDv7, so in time
-- order), by agent too. Only runs that passed the gate are rows here, so the gate's refusals
-- (issue 18: no index on their path) write nothing more.
CREATE INDEX runs_tenant ON runs (tenant, id);
CREATE INDEX runs_tenant_agent ON runs (tenant, agent, id);

-- A mandate's approvals, newest first (the console's pending list).
CREATE INDEX approvals_mandate ON approvals (mandate, created_ms);
