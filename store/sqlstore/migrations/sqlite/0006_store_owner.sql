-- The store's owner: one row, the process holding the store's lock and the
-- epoch of its acquisition. Every write of an owning process checks in its
-- transaction that the epoch is still its own.

CREATE TABLE store_owner (
    id    INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    epoch INTEGER NOT NULL,
    host  TEXT    NOT NULL,
    pid   INTEGER NOT NULL,
    since INTEGER NOT NULL
);
