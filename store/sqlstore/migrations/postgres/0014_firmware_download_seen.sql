-- The heartbeat of a firmware object's download: when its downloader
-- (firmware_objects.downloader) was last seen at work on it (created, or
-- stamped while its download or re-verification runs). A cluster member
-- takes over the interrupted download of another member only once both
-- this and that member's cluster_member row are older than a bound
-- (hw/firmware/catalog, docs/cluster.md). Objects stored before this
-- column take their last change as their heartbeat.

ALTER TABLE firmware_objects ADD COLUMN download_seen_at TIMESTAMPTZ;
UPDATE firmware_objects SET download_seen_at = updated_at;
ALTER TABLE firmware_objects ALTER COLUMN download_seen_at SET NOT NULL;
