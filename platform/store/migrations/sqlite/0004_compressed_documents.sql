-- A receipt's document is stored compressed (`src/document.rs`: a tag byte and a zstd frame
-- over a dictionary of receipt text), so the column holds bytes and is named for what it
-- holds. Rows written before stay plain JSON, now as bytes; readers take both forms.
ALTER TABLE receipts RENAME COLUMN json TO document;
UPDATE receipts SET document = CAST(document AS BLOB);
