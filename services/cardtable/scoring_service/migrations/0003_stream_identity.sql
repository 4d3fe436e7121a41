-- Which stream the position counts in: a stream deleted and made again under the same name
-- starts its sequences anew, and a position from the old one would skip the new one's first
-- messages. NULL for a projection made before this column: the consumer adopts the stream it
-- finds then.
ALTER TABLE projection_position ADD COLUMN stream_created timestamptz;
