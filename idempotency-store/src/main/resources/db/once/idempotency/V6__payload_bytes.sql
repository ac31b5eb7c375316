-- Once 0.1: an event's payload is kept byte for byte, as the application appended it, with its media type, so that
-- the value on Kafka is exactly those bytes: JSON with its own spacing, member order and duplicate members, a digest
-- over it, a schema-registry framing, Avro or Protobuf. jsonb kept none of that (it re-renders the document).
-- Existing rows keep their content: their jsonb rendering, in UTF-8, as a JSON payload. The table is rewritten once.
ALTER TABLE outbox_event
    ALTER COLUMN payload TYPE bytea USING convert_to(payload::text, 'UTF8'),
    ADD COLUMN content_type text NOT NULL DEFAULT 'application/json';
