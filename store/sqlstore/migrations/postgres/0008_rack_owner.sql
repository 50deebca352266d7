-- Rack owners, in cluster mode: which member owns each rack, under which
-- epoch and until when. The epoch of a rack only ever grows (a row is
-- never deleted; a release ends the lease at once), and every journal
-- write a member makes for a rack checks in its transaction that the
-- epoch is still its own and the lease unexpired.

CREATE TABLE rack_owner (
    rack_id    TEXT        NOT NULL PRIMARY KEY,
    member     TEXT        NOT NULL,
    epoch      BIGINT      NOT NULL,
    since      TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
