-- Registered racks: a rack keeps its product family, and stays registered
-- when its last node is deleted.

CREATE TABLE registered_racks (
    rack_id TEXT NOT NULL PRIMARY KEY,
    family  TEXT NOT NULL
);
