-- The heartbeat of a firmware object's download (microseconds since the
-- Unix epoch; see the PostgreSQL migration for why). Objects stored
-- before this column take their last change as their heartbeat.

ALTER TABLE firmware_objects ADD COLUMN download_seen_at INTEGER NOT NULL DEFAULT 0;
UPDATE firmware_objects SET download_seen_at = updated_at;
