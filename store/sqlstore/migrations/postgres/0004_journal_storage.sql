-- The journal's rows are written once and read back only at start: keep
-- them uncompressed, so a commit does not spend the server's CPU on
-- compressing them.
ALTER TABLE journal_events ALTER COLUMN data SET STORAGE EXTERNAL;
