-- Notes gain a kind and may supersede an earlier note (history is never
-- deleted). Notes recorded before have no kind ('') and supersede nothing.
-- The indexes page notes newest first, by kind, and find a note's successor.
ALTER TABLE notes ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE notes ADD COLUMN supersedes INTEGER;
CREATE INDEX notes_kind ON notes (kind, seq);
CREATE UNIQUE INDEX notes_supersedes ON notes (supersedes) WHERE supersedes IS NOT NULL;
