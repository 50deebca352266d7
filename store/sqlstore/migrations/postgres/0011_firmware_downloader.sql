-- The cluster member that downloads a firmware object's artifacts (the one
-- that received AddFirmwareObject), '' for a single rmsd and for the
-- objects stored before this column. Members sharing one firmware_dir
-- re-verify at start only the interrupted downloads they ran themselves:
-- another member's may still be under way.

ALTER TABLE firmware_objects ADD COLUMN downloader TEXT NOT NULL DEFAULT '';
