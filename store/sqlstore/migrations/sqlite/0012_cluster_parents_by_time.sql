-- The console lists the newest cluster parents as rows of its jobs page.

CREATE INDEX cluster_parent_created ON cluster_parent (created_at);
