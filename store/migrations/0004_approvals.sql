-- Contract-review decisions of the structured and frontier modes, keyed by
-- the sha256 of the packet the reviewer judged: a changed contract or bound
-- source makes a new packet, which no approval covers.
CREATE TABLE approvals (
    id            TEXT PRIMARY KEY,
    seq           INTEGER NOT NULL,
    status        TEXT NOT NULL,
    approval_json TEXT NOT NULL
);
