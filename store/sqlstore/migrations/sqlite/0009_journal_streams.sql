-- Journal streams belong to cluster mode, which needs PostgreSQL: SQLite
-- gets the same column and table so that both engines share one schema
-- history. Its journal is always the stream ''; job_rack stays empty.

ALTER TABLE journal_events ADD COLUMN stream TEXT NOT NULL DEFAULT '';
CREATE INDEX journal_events_stream_seq ON journal_events (stream, seq);

CREATE TABLE job_rack (
    job_id   TEXT    NOT NULL PRIMARY KEY,
    rack_id  TEXT    NOT NULL,
    recorded INTEGER NOT NULL
);

CREATE INDEX job_rack_recorded ON job_rack (recorded);
