-- Each table's place in its signed chain of batches (platform/log_signing.py): the digest of
-- the last batch projected, which the next one must name, and whether a signed batch has been
-- projected (after which an unsigned one is refused). A projection made before signing began
-- starts with none, as the table service does.
ALTER TABLE games ADD COLUMN last_batch_sha256 bytea NOT NULL DEFAULT ''::bytea;
ALTER TABLE games ADD COLUMN signed boolean NOT NULL DEFAULT false;
