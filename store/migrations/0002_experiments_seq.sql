-- Newest experiments first, without reading every receipt: the TUI shows a
-- window of the newest ones.
CREATE INDEX experiments_seq ON experiments (seq);
