-- Journal streams, for cluster mode: every rack's job engine journals in
-- the rack's own stream (its rack id), written only under the rack's
-- lease; the single-process journal is the stream ''. Sequence numbers
-- stay one global series. job_rack records which rack's stream recorded
-- each job's creation, so that any member can find a job's rack.

ALTER TABLE journal_events ADD COLUMN stream TEXT NOT NULL DEFAULT '';
CREATE INDEX journal_events_stream_seq ON journal_events (stream, seq);

CREATE TABLE job_rack (
    job_id   TEXT        NOT NULL PRIMARY KEY,
    rack_id  TEXT        NOT NULL,
    recorded TIMESTAMPTZ NOT NULL
);

CREATE INDEX job_rack_recorded ON job_rack (recorded);
