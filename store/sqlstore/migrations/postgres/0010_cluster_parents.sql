-- Cluster parents, in cluster mode: a job request whose nodes were in
-- several racks, split into one job per rack admitted by each rack's
-- owner. The member that received it records the parent and each rack's
-- job (or the in-band failure that left the rack without one) before it
-- answers the parent's id; any member answers the parent's status from
-- this record and the racks' jobs. Rows are written once, never changed.

CREATE TABLE cluster_parent (
    id         TEXT        NOT NULL PRIMARY KEY,
    job_type   TEXT        NOT NULL,
    method     TEXT        NOT NULL,
    member     TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE cluster_parent_rack (
    parent_id TEXT    NOT NULL REFERENCES cluster_parent (id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    rack_id   TEXT    NOT NULL,
    job_id    TEXT    NOT NULL,
    failure   TEXT    NOT NULL,
    PRIMARY KEY (parent_id, position)
);
