-- A receipt is found by its id (the primary key), then checked against its tenant or mandate:
-- no query reads receipts by owner alone, so the two owner indexes were written at every
-- receipt and read by nothing. On SQLite every index a commit touches is one more page in the
-- log, and the gate commits a group of refusals every few hundred microseconds under load:
-- without them a refused call writes about 40% fewer log bytes (issue 18). What remains: the
-- primary key, and `receipts_agent_status` for an agent's success rate.
DROP INDEX receipts_tenant;
DROP INDEX receipts_mandate;
