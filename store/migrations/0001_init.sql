CREATE TABLE study (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    study_id      TEXT NOT NULL,
    contract_json TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    deadline      TEXT NOT NULL
);

CREATE TABLE supervisor (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    state_json TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE control (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    command      TEXT NOT NULL CHECK (command IN ('pause', 'cancel')),
    requested_at TEXT NOT NULL
);

CREATE TABLE experiments (
    id           TEXT PRIMARY KEY,
    seq          INTEGER NOT NULL,
    status       TEXT NOT NULL,
    receipt_json TEXT NOT NULL
);
CREATE INDEX experiments_status ON experiments (status, seq);

CREATE TABLE claims (
    id           TEXT PRIMARY KEY,
    seq          INTEGER NOT NULL,
    status       TEXT NOT NULL,
    claim_json   TEXT NOT NULL
);

CREATE TABLE reviews (
    id          TEXT PRIMARY KEY,
    seq         INTEGER NOT NULL,
    status      TEXT NOT NULL,
    review_json TEXT NOT NULL
);
CREATE INDEX reviews_status ON reviews (status, seq);

CREATE TABLE notes (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    note_json  TEXT NOT NULL
);

CREATE TABLE usage (
    thread        TEXT PRIMARY KEY,
    input_tokens  INTEGER,
    output_tokens INTEGER
);

CREATE TABLE events (
    seq       INTEGER PRIMARY KEY,
    time      TEXT NOT NULL,
    type      TEXT NOT NULL,
    payload   TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL
);

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only');
END;

CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only');
END;
