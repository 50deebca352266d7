-- Cluster parents belong to cluster mode, which needs PostgreSQL: SQLite
-- has the tables so that both engines share one schema history (see the
-- PostgreSQL migration for what they hold).

CREATE TABLE cluster_parent (
    id         TEXT    NOT NULL PRIMARY KEY,
    job_type   TEXT    NOT NULL,
    method     TEXT    NOT NULL,
    member     TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE cluster_parent_rack (
    parent_id TEXT    NOT NULL REFERENCES cluster_parent (id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    rack_id   TEXT    NOT NULL,
    job_id    TEXT    NOT NULL,
    failure   TEXT    NOT NULL,
    PRIMARY KEY (parent_id, position)
);
