-- The snapshot schemas: the contract between the crawler and everything that
-- reads data/. These empty tables give the writer its column types and stand
-- in for a snapshot kind that has no file yet. Times are UTC, stored as
-- TIMESTAMP (no time zone) so every engine reads them alike.
-- Documented in docs/data.md; add columns only at the end (readers use
-- union_by_name, so older files without a new column read as NULL).

CREATE TABLE checks_schema (
    host               VARCHAR NOT NULL,
    checked_at         TIMESTAMP NOT NULL,
    outcome            VARCHAR NOT NULL,
    error              VARCHAR,
    http_status        INTEGER,
    software           VARCHAR,
    version            VARCHAR,
    nodeinfo_version   VARCHAR,
    users              BIGINT,
    active_month       BIGINT,
    active_halfyear    BIGINT,
    local_posts        BIGINT,
    open_registrations BOOLEAN,
    name               VARCHAR,
    description        VARCHAR,
    moved_to           VARCHAR,
    peers_fetched      BOOLEAN NOT NULL,
    peers_count        BIGINT NOT NULL,
    new_peers_count    BIGINT NOT NULL,
    duration_ms        BIGINT NOT NULL,
    pass_id            VARCHAR NOT NULL
);

CREATE TABLE discoveries_schema (
    host          VARCHAR NOT NULL,
    discovered_at TIMESTAMP NOT NULL,
    via           VARCHAR NOT NULL
);
