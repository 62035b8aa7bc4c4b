-- The state machine, as macros every later step applies (docs/data.md,
-- "The state rules", says the same in prose).

-- A check's class: A alive, O opted_out, M moved (permanent redirect), T
-- moving (temporary redirect), F any failure.
CREATE OR REPLACE TEMP MACRO check_class(outcome) AS
    CASE outcome WHEN 'alive' THEN 'A' WHEN 'opted_out' THEN 'O' WHEN 'moved' THEN 'M'
                 WHEN 'moving' THEN 'T' ELSE 'F' END;

-- The thresholds: whether the n-th check of a run (a host's checks in a row
-- of one class) begun at run_start, made at ts, has reached its run's.
CREATE OR REPLACE TEMP MACRO run_crosses(class, n, ts, run_start) AS
    CASE WHEN class IN ('F', 'T') THEN n > {{failures_to_dead}} AND ts >= run_start + to_microseconds({{dead_after_us}})
         WHEN class = 'A' THEN ts >= run_start + to_microseconds({{revive_after_us}})
         ELSE false END;

-- The transitions: the state after a check, from the state before it (NULL:
-- discovered). The first row that matches wins.
CREATE OR REPLACE TEMP MACRO next_state(state, class, crossed, ever_alive) AS
    CASE
    --   check        state before                       threshold       → next state
    WHEN class = 'O'                                                     THEN 'opted_out'
    WHEN class = 'M'                                                     THEN 'moved'
    WHEN class = 'T'                                     AND crossed     THEN 'moved'
    WHEN class = 'T'                                                     THEN 'moving'
    WHEN class = 'F' AND state IN ('moved', 'opted_out')                 THEN state
    WHEN class = 'F'                                     AND crossed     THEN 'dead'
    WHEN class = 'F' AND ever_alive                                      THEN 'dying'
    WHEN class = 'F'                                                     THEN 'discovered'
    WHEN class = 'A' AND state IN ('dead', 'reviving')   AND NOT crossed THEN 'reviving'
    WHEN class = 'A'                                                     THEN 'live'
    END;

-- Whether an alive check at ts opens a stretch of the live list: no alive
-- check before it (prev_alive), or none within live_days days.
CREATE OR REPLACE TEMP MACRO opens_live_stretch(ts, prev_alive) AS
    prev_alive IS NULL OR ts::DATE - prev_alive::DATE > {{live_days}};

-- The state after a run x (its class, crossed, ever_alive, and for the
-- carried run carry_run and carry_pre) from the state before it.
CREATE OR REPLACE TEMP MACRO run_end(x, pre) AS
    next_state(CASE WHEN x.carry_run THEN x.carry_pre ELSE pre END, x.class, x.crossed, x.ever_alive);

-- Where a host's new checks, all of class, fall: on its carried run (c_*)
-- when they continue it, else on a run of their own; n is the run's length
-- at the last of them, pre the state before the run.
CREATE OR REPLACE TEMP MACRO run_placed(c_checks, c_class, c_n, c_start, c_pre, c_state, class, checks, first_at) AS
    CASE WHEN coalesce(c_checks, 0) > 0 AND c_class = class
         THEN {'continues': true, 'n': c_n + checks, 'run_start': c_start, 'pre': c_pre}
         ELSE {'continues': false, 'n': checks, 'run_start': first_at, 'pre': c_state} END;
