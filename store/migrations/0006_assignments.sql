-- Assignments of the structured and frontier modes: which role works on
-- which claim, its operation count, the session it runs in and, once it
-- ended, its immutable handoff.
CREATE TABLE assignments (
    id              TEXT PRIMARY KEY,
    seq             INTEGER NOT NULL,
    status          TEXT NOT NULL,
    assignment_json TEXT NOT NULL
);
CREATE INDEX assignments_status ON assignments (status, seq);
