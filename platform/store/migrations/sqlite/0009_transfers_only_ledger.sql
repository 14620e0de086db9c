-- A ledger of transfers only (issue 42): a transfer has one debit and one credit account, so its
-- two entries are derivable from it, and writing them as rows of their own was two thirds of
-- the ledger's writes (a transfer was a row and two index entries in `transfers` and two rows
-- with three index entries each in `entries`; the run writer's most expensive statements).
-- `entries` becomes a view over `transfers`, with the same columns, and `transfers` gets an
-- index per side so that one account's entries are still found without a scan.
--
-- History stays as it was read: each transfer written before this migration keeps the ids its
-- two entries had (`debit_entry`, `credit_entry`), so `entries` gives the same rows in the same
-- `id` order as before (on PostgreSQL two concurrent transactions could interleave entry ids,
-- so one number a transfer would not do). A transfer written after it has NULL there and its
-- entries' ids are `2 * seq` (debit) and `2 * seq + 1` (credit), above every older id.
--
-- The migration refuses to run (a failed CHECK named `every_entry_matches_its_transfer`) on a
-- database whose entries are not exactly the two sides of its transfers, rather than drop
-- anything a derived view would not give back.
CREATE TABLE ledger_0009_check (
    ok INTEGER NOT NULL CONSTRAINT every_entry_matches_its_transfer CHECK (ok = 1)
);
INSERT INTO ledger_0009_check
SELECT CASE WHEN
    (SELECT COUNT(*) FROM entries) = 2 * (SELECT COUNT(*) FROM transfers)
    AND NOT EXISTS (
        SELECT 1 FROM entries e LEFT JOIN transfers t ON t.id = e.transfer
        WHERE t.id IS NULL OR e.amount <> t.amount OR e.kind <> t.kind OR e.at_ms <> t.at_ms
           OR e.account <> CASE e.credit WHEN 1 THEN t.credit_account ELSE t.debit_account END)
    AND NOT EXISTS (
        SELECT 1 FROM transfers t
        WHERE (SELECT COUNT(*) FROM entries e WHERE e.transfer = t.id AND e.credit = 0) <> 1
           OR (SELECT COUNT(*) FROM entries e WHERE e.transfer = t.id AND e.credit = 1) <> 1)
THEN 1 ELSE 0 END;
DROP TABLE ledger_0009_check;

-- `seq`, the rowid, orders transfers as they were written: SQLite gives a new row one more than
-- the largest (no AUTOINCREMENT: the ledger is append-only, so the largest is never deleted and
-- a number is never given twice). A transfer from before takes the larger of its entries' ids.
CREATE TABLE transfers_0009 (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    debit_account TEXT NOT NULL,
    credit_account TEXT NOT NULL,
    amount BIGINT NOT NULL CHECK (amount > 0),
    currency TEXT NOT NULL,
    run TEXT,
    at_ms BIGINT NOT NULL,
    debit_entry BIGINT,
    credit_entry BIGINT
);
INSERT INTO transfers_0009 (seq, id, kind, debit_account, credit_account, amount, currency, run,
                            at_ms, debit_entry, credit_entry)
SELECT MAX(d.id, c.id), t.id, t.kind, t.debit_account, t.credit_account, t.amount, t.currency,
       t.run, t.at_ms, d.id, c.id
FROM transfers t
JOIN entries d ON d.transfer = t.id AND d.credit = 0
JOIN entries c ON c.transfer = t.id AND c.credit = 1
ORDER BY 1;
DROP TABLE entries;
DROP TABLE transfers;
ALTER TABLE transfers_0009 RENAME TO transfers;
CREATE INDEX transfers_debit ON transfers (debit_account, seq);
CREATE INDEX transfers_credit ON transfers (credit_account, seq);

-- Each transfer's debit (credit = 0) and credit (credit = 1), as the table of that name held
-- them: `read_entries` and ad-hoc SQL read it as before.
CREATE VIEW entries (id, transfer, account, credit, amount, kind, at_ms) AS
SELECT COALESCE(debit_entry, 2 * seq), id, debit_account, CAST(0 AS BIGINT), amount, kind, at_ms
FROM transfers
UNION ALL
SELECT COALESCE(credit_entry, 2 * seq + 1), id, credit_account, CAST(1 AS BIGINT), amount, kind,
       at_ms
FROM transfers;
