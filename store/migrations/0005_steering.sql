-- Operator guidance (simjecture steer): advisory messages, delivered to the
-- worker at turn starts. A request key names one message; delivered_at is
-- NULL until a worker prompt carried the message.
CREATE TABLE steering (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL UNIQUE,
    request_key  TEXT,
    text         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    delivered_at TEXT
);
CREATE UNIQUE INDEX steering_request_key ON steering (request_key) WHERE request_key IS NOT NULL;
CREATE INDEX steering_undelivered ON steering (seq) WHERE delivered_at IS NULL;
