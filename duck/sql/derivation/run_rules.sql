-- The rules of the state machine for a run (see run_states.sql), as macros
-- that window_states.sql applies with lags to the windowed runs and
-- run_states.sql without to fold_windowless's runs. Within a run the state is
-- `before` until its crossing row and `after` from it on:
--   T: moving, then moved;
--   F: moved or opted_out throughout if the host was so before the run (a
--      moved host that fails stays moved; a failed check is no allowed one
--      that could bring an opted-out host back); else dying (or discovered
--      if never alive), then dead;
--   A: reviving, then live, if the host was dead before the run; else live;
--   O: opted_out; M: moved.
-- The state before a run is the end state of the previous run (the carry's
-- pre_run_state for a run that continues the carried one, discovered for a
-- host's first run). F only needs to know whether that was moved or
-- opted_out (decided by O/M/T runs alone), and A only whether it was dead (decided by F), so three
-- lags settle it without recursion.

-- A check's class: A alive, O opted_out, M moved (permanent redirect), T
-- moving (temporary redirect), F any failure.
CREATE OR REPLACE TEMP MACRO check_class(outcome) AS
    CASE outcome WHEN 'alive' THEN 'A' WHEN 'opted_out' THEN 'O' WHEN 'moved' THEN 'M'
                 WHEN 'moving' THEN 'T' ELSE 'F' END;
-- Whether the check at ts, the n-th of a run of class begun at run_start,
-- is past the run's threshold: F, T: n > failures_to_dead and dead_after
-- since the run began; A: revive_after since the run began (it matters only
-- after dead).
CREATE OR REPLACE TEMP MACRO run_crosses(class, n, ts, run_start) AS
    CASE WHEN class IN ('F', 'T') THEN n > {{failures_to_dead}} AND ts >= run_start + to_microseconds({{dead_after_us}})
         WHEN class = 'A' THEN ts >= run_start + to_microseconds({{revive_after_us}})
         ELSE false END;
-- Whether an alive check at ts opens a new stretch of the live list: no
-- alive check before it (prev_alive), or none within live_days days.
CREATE OR REPLACE TEMP MACRO opens_live_stretch(ts, prev_alive) AS
    prev_alive IS NULL OR ts::DATE - prev_alive::DATE > {{live_days}};

-- The end state of a run as far as its class alone decides it.
CREATE OR REPLACE TEMP MACRO run_e1(class, crossed) AS
    CASE class WHEN 'O' THEN 'opted_out' WHEN 'M' THEN 'moved'
               WHEN 'T' THEN CASE WHEN crossed THEN 'moved' ELSE 'moving' END END;
-- ... and once a failing run knows whether the host was moved or opted
-- out before it.
CREATE OR REPLACE TEMP MACRO run_e2(class, crossed, ever_alive, e1, prev_e1) AS
    CASE WHEN class = 'F' THEN
        CASE WHEN prev_e1 IN ('moved', 'opted_out') THEN prev_e1
             WHEN crossed THEN 'dead'
             WHEN ever_alive THEN 'dying'
             ELSE 'discovered' END
    ELSE e1 END;
-- ... and once an alive run knows whether the host was dead before it.
CREATE OR REPLACE TEMP MACRO run_end(class, crossed, e2, prev_e2) AS
    CASE WHEN class = 'A' THEN
        CASE WHEN prev_e2 = 'dead' AND NOT crossed THEN 'reviving' ELSE 'live' END
    ELSE e2 END;
-- The same rules over a run's inputs as one value (run_inputs), with those
-- of the runs before it (NULL where there is none), for window_states.sql:
-- the state before a run is the carry's for the carried run, else the end
-- state of the run before it.
CREATE OR REPLACE TEMP MACRO run_inputs(class, crossed, ever_alive, carry_run, carry_pre) AS
    {'class': class, 'crossed': crossed, 'ever_alive': ever_alive, 'carry_run': carry_run, 'carry_pre': carry_pre};
CREATE OR REPLACE TEMP MACRO run_e1_of(x) AS run_e1(x.class, x.crossed);
CREATE OR REPLACE TEMP MACRO run_e2_of(x, x1) AS
    run_e2(x.class, x.crossed, x.ever_alive, run_e1_of(x), CASE WHEN x.carry_run THEN x.carry_pre ELSE run_e1_of(x1) END);
CREATE OR REPLACE TEMP MACRO run_end_of(x, x1, x2) AS
    run_end(x.class, x.crossed, run_e2_of(x, x1), CASE WHEN x.carry_run THEN x.carry_pre ELSE run_e2_of(x1, x2) END);
-- The state of a run's checks before its crossing row ...
CREATE OR REPLACE TEMP MACRO run_before(class, pre, ever_alive, end_state) AS
    CASE class WHEN 'T' THEN 'moving'
               WHEN 'F' THEN CASE WHEN pre IN ('moved', 'opted_out') THEN pre WHEN ever_alive THEN 'dying' ELSE 'discovered' END
               WHEN 'A' THEN CASE WHEN pre = 'dead' THEN 'reviving' ELSE 'live' END
               ELSE end_state END;
-- ... and from it on.
CREATE OR REPLACE TEMP MACRO run_after(class, pre, end_state) AS
    CASE class WHEN 'T' THEN 'moved'
               WHEN 'F' THEN CASE WHEN pre IN ('moved', 'opted_out') THEN pre ELSE 'dead' END
               WHEN 'A' THEN 'live'
               ELSE end_state END;
