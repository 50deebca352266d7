-- The cluster member that downloads a firmware object's artifacts, '' for a
-- single rmsd and for the objects stored before this column (see the
-- PostgreSQL migration for why). SQLite has the column so that both
-- engines share one schema history.

ALTER TABLE firmware_objects ADD COLUMN downloader TEXT NOT NULL DEFAULT '';
