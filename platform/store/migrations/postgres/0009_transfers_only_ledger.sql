-- A ledger of transfers only (issue 42): a transfer has one debit and one credit account, so its
-- two entries are derivable from it, and writing them as rows of their own was two thirds of
-- the ledger's writes (a transfer was a row and two index entries in `transfers` and two rows
-- with three index entries each in `entries`; the run writer's most expensive statements).
-- `entries` becomes a view over `transfers`, with the same columns, and `transfers` gets an
-- index per side so that one account's entries are still found without a scan.
--
-- History stays as it was read: each transfer written before this migration keeps the ids its
-- two entries had (`debit_entry`, `credit_entry`), so `entries` gives the same rows in the same
-- `id` order as before (two concurrent transactions could interleave entry ids, so one number a
-- transfer would not do). A transfer written after it has NULL there and its entries' ids are
-- `2 * seq` (debit) and `2 * seq + 1` (credit), above every older id.
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

-- `seq` orders transfers as they were written (from a sequence, as the entries' ids were); a
-- transfer from before takes the larger of its entries' ids, and the sequence starts above.
ALTER TABLE transfers ADD COLUMN seq BIGINT,
    ADD COLUMN debit_entry BIGINT,
    ADD COLUMN credit_entry BIGINT;
UPDATE transfers t SET seq = GREATEST(d.id, c.id), debit_entry = d.id, credit_entry = c.id
FROM entries d, entries c
WHERE d.transfer = t.id AND d.credit = 0 AND c.transfer = t.id AND c.credit = 1;
CREATE SEQUENCE transfers_seq OWNED BY transfers.seq;
SELECT setval('transfers_seq', COALESCE((SELECT MAX(seq) FROM transfers), 0) + 1, false);
ALTER TABLE transfers ALTER COLUMN seq SET DEFAULT nextval('transfers_seq'),
    ALTER COLUMN seq SET NOT NULL;
DROP TABLE entries;
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
