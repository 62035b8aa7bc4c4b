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
    pass_id            VARCHAR NOT NULL,
    peers_etag          VARCHAR,
    peers_last_modified VARCHAR,
    peers_not_modified  BOOLEAN,
    -- Added later, so NULL in older files: the version a NodeInfo document
    -- gave itself (nodeinfo_version is the schema its link named), and the
    -- NodeInfo fields it gave in a form the check could not use, as field
    -- paths: an empty list when a document was read and every field was
    -- usable, NULL when no document was read.
    nodeinfo_document_version VARCHAR,
    unusable_fields           VARCHAR[],
    -- Added later, so NULL in older files: the bytes the check read from
    -- the network (TLS, headers, bodies before decoding).
    wire_bytes                BIGINT
);

CREATE TABLE discoveries_schema (
    host          VARCHAR NOT NULL,
    discovered_at TIMESTAMP NOT NULL,
    via           VARCHAR NOT NULL
);

-- One row per crawl pass: the crawler's own health. One column per outcome
-- so a chart is a plain SELECT.
CREATE TABLE passes_schema (
    pass_id         VARCHAR NOT NULL,
    started_at      TIMESTAMP NOT NULL,
    ended_at        TIMESTAMP NOT NULL,
    due             BIGINT NOT NULL,
    checked         BIGINT NOT NULL,
    discovered      BIGINT NOT NULL,
    bytes           BIGINT NOT NULL,
    errors          BIGINT NOT NULL,
    not_started     BIGINT NOT NULL,
    cut_short       VARCHAR,
    alive           BIGINT NOT NULL,
    opted_out       BIGINT NOT NULL,
    not_fediverse   BIGINT NOT NULL,
    moved           BIGINT NOT NULL,
    moving          BIGINT NOT NULL,
    unreachable     BIGINT NOT NULL,
    http_error      BIGINT NOT NULL,
    too_large       BIGINT NOT NULL,
    blocked_address BIGINT NOT NULL,
    checker_failed  BIGINT NOT NULL,
    error           BIGINT NOT NULL,
    -- Added later, so NULL in older files: what the pass left out of its due
    -- list (blocklisted hosts, new hosts over their domain's budget) and
    -- per-address politeness (hosts skipped for their address's budget,
    -- addresses requested, the busiest one's requests, addresses over
    -- budget), for tuning the budgets with SQL.
    blocklisted              BIGINT,
    over_domain_budget       BIGINT,
    skipped_address_budget   BIGINT,
    addresses                BIGINT,
    busiest_address_requests BIGINT,
    addresses_over_budget    BIGINT,
    -- Added later still: checks not recorded, so their hosts stay due like
    -- the not started ones: under way when the pass was interrupted, or
    -- finished but lost when writing the snapshots failed.
    abandoned                BIGINT,
    -- Added later still: what bounded the growth of the known set, new
    -- peers-list entries dropped for the cap per list (repeats included) and
    -- new hosts dropped for the cap per pass.
    over_list_cap            BIGINT,
    over_pass_cap            BIGINT,
    -- Added later still: the bytes the pass's checks read from the network
    -- (the sum of their wire_bytes; bytes counts decoded bodies).
    wire_bytes               BIGINT
);
