-- Each message of operator guidance keeps the sha256 of its text, taken when
-- it was queued, so verify can tell a message rewritten in place. Messages
-- queued before have none (NULL) and are checked against their event only.
ALTER TABLE steering ADD COLUMN text_sha256 TEXT;
