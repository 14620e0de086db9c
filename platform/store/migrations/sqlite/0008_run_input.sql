-- What the console shows of a run (issue 44): the input document it was called with, kept
-- compressed like a receipt's document (`src/document.rs`; NULL when the gateway runs with
-- `--no-keep-inputs`, and for runs begun before this migration), and the id of the trace its
-- spans went to (NULL when traces are off or the run was not sampled). Both are written in the
-- statement that begins the run, so a run never exists without them; the gate's refusals begin
-- no run and write neither.
ALTER TABLE runs ADD COLUMN input BLOB;
ALTER TABLE runs ADD COLUMN trace_id TEXT;
