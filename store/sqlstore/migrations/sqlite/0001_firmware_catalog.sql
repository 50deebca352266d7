-- The firmware catalog: objects from firmware manifests, the artifacts each
-- needs cached, one default object per hardware type, and the history of
-- stored objects applied to racks. Times are microseconds since the Unix
-- epoch (UTC); booleans are 0 or 1.

CREATE TABLE firmware_objects (
    seq                INTEGER PRIMARY KEY AUTOINCREMENT, -- order of insertion
    id                 TEXT    NOT NULL UNIQUE,           -- {ProductName}_{Name}
    hardware_type      TEXT    NOT NULL,
    config_json        TEXT    NOT NULL,                  -- the manifest as given
    available          INTEGER NOT NULL DEFAULT 0 CHECK (available IN (0, 1)),
    unavailable_reason TEXT    NOT NULL DEFAULT '',
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    UNIQUE (id, hardware_type)
);

CREATE INDEX firmware_objects_newest ON firmware_objects (created_at DESC, seq DESC);

CREATE TABLE firmware_artifacts (
    object_id     TEXT    NOT NULL REFERENCES firmware_objects (id) ON DELETE CASCADE,
    name          TEXT    NOT NULL,
    pos           INTEGER NOT NULL,                     -- the caller's order
    location      TEXT    NOT NULL,
    sha256        TEXT    NOT NULL,                     -- lower-case hex, or ''
    firmware_type TEXT    NOT NULL,
    state         TEXT    NOT NULL CHECK (state IN ('pending', 'downloading', 'ready', 'failed')),
    local_path    TEXT    NOT NULL,
    error         TEXT    NOT NULL,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (object_id, name)
);

-- One row per hardware type: its default object. The primary key makes a
-- second default impossible; the foreign key ties the row to an object of
-- that very hardware type and goes with the object when it is deleted.
CREATE TABLE firmware_defaults (
    hardware_type TEXT PRIMARY KEY,
    object_id     TEXT NOT NULL UNIQUE,
    FOREIGN KEY (object_id, hardware_type)
        REFERENCES firmware_objects (id, hardware_type) ON DELETE CASCADE
);

-- Apply history outlives the objects it names: no foreign key.
CREATE TABLE firmware_apply_history (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    object_id     TEXT    NOT NULL,
    rack_id       TEXT    NOT NULL,
    node_ids      TEXT    NOT NULL,                     -- JSON array of strings
    firmware_type TEXT    NOT NULL,
    hardware_type TEXT    NOT NULL,
    job_id        TEXT    NOT NULL,
    operation     TEXT    NOT NULL,
    requester     TEXT    NOT NULL,
    applied_at    INTEGER NOT NULL
);

CREATE INDEX firmware_apply_history_object ON firmware_apply_history (object_id);
CREATE INDEX firmware_apply_history_rack ON firmware_apply_history (rack_id);
CREATE INDEX firmware_apply_history_newest ON firmware_apply_history (applied_at DESC, seq DESC);
