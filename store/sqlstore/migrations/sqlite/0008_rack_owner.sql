-- Rack owners belong to cluster mode, which needs PostgreSQL: SQLite has
-- the table so that both engines share one schema history, and never
-- writes to it (the rack ownership calls refuse a SQLite store).

CREATE TABLE rack_owner (
    rack_id    TEXT    NOT NULL PRIMARY KEY,
    member     TEXT    NOT NULL,
    epoch      INTEGER NOT NULL,
    since      INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
