-- The PostgreSQL migration of this number stores the journal's rows
-- uncompressed; SQLite never compresses a BLOB, so there is nothing to change.
SELECT 1;
