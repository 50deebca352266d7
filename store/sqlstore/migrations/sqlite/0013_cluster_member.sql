-- Cluster members' views, in cluster mode: one row per member id, the
-- actor system of its current process and the other members it sees
-- (JSON array of actor system ids). Each start of the member takes the
-- next epoch; writes name their epoch, so a replaced process cannot
-- overwrite its successor's row.
-- SQLite has the table so that both engines share one schema history,
-- and never writes to it.

CREATE TABLE cluster_member (
    member_id  TEXT    NOT NULL PRIMARY KEY,
    epoch      INTEGER NOT NULL,
    system_id  TEXT    NOT NULL,
    address    TEXT    NOT NULL,
    view       TEXT    NOT NULL,
    has_left   BOOLEAN NOT NULL,
    updated_at INTEGER NOT NULL
);
