-- The job engine's event journal: append-only, in sequence order.
-- AUTOINCREMENT keeps sequence numbers from being reused once old events
-- are compacted away.

CREATE TABLE journal_events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    kind        TEXT    NOT NULL,
    data        BLOB    NOT NULL,
    recorded_at INTEGER NOT NULL
);
