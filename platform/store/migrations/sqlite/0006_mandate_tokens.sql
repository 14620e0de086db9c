-- Bearer tokens of `/mcp` (MCP over Streamable HTTP), one mandate each (`aelc mandate token`).
-- Only a token's SHA-256 is stored; the token itself is shown once. `revoked_ms` is set by
-- `aelc mandate revoke`, which ends the token at once (every request re-reads this row).
CREATE TABLE mandate_tokens (
    token_sha256 TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    name TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT,
    revoked_ms BIGINT,
    FOREIGN KEY (account, name) REFERENCES mandates (account, name)
);
CREATE INDEX mandate_tokens_mandate ON mandate_tokens (account, name);
