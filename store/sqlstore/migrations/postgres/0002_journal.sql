-- The job engine's event journal: append-only, in sequence order. An
-- identity column never reuses a value, also once old events are
-- compacted away; appends are serialised (an advisory lock), so events
-- become visible in sequence order.

CREATE TABLE journal_events (
    seq         BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind        TEXT        NOT NULL,
    data        BYTEA       NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL
);
