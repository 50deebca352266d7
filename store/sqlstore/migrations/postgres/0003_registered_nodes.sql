-- Registered nodes: identity in the clear, settings (credentials
-- included) sealed by rmsd with the key named by key_id.

CREATE TABLE registered_nodes (
    rack_id    TEXT        NOT NULL,
    node_id    TEXT        NOT NULL,
    key_id     TEXT        NOT NULL,
    sealed     BYTEA       NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (rack_id, node_id)
);
