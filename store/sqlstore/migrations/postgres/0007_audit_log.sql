-- The audit log: one row per mutating RPC (and admin-service call), with
-- the caller, the ids the request named, the jobs the reply named and the
-- outcome. Never a request body. audit_target indexes the rack and node
-- ids of each record for the read service's filters.

CREATE TABLE audit_log (
    seq         BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    recorded_at TIMESTAMPTZ NOT NULL,
    caller      TEXT        NOT NULL,
    identity    TEXT        NOT NULL,                   -- JSON: verified, subject, cn, ou, dns, uris, addr
    method      TEXT        NOT NULL,
    rack_ids    TEXT        NOT NULL,                   -- JSON array of strings
    node_ids    TEXT        NOT NULL,                   -- JSON array of strings
    job_ids     TEXT        NOT NULL,                   -- JSON array of strings
    outcome     TEXT        NOT NULL,
    reason      TEXT        NOT NULL
);

CREATE INDEX audit_log_recorded ON audit_log (recorded_at);

CREATE TABLE audit_target (
    seq  BIGINT NOT NULL,
    kind TEXT   NOT NULL CHECK (kind IN ('rack', 'node')),
    id   TEXT   NOT NULL,
    PRIMARY KEY (kind, id, seq)
);

CREATE INDEX audit_target_seq ON audit_target (seq);
