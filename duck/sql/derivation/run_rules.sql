-- The state machine, as macros every step of the fold applies: a check's
-- class, whether a run of checks has crossed its threshold, and the table of
-- transitions (run_state). A host's checks in order form runs of one class;
-- a run's state depends on its class, the state before it (pre) and
-- whether it has crossed its threshold, so a fold needs no recursion.

-- A check's class: A alive, O opted_out, M moved (permanent redirect), T
-- moving (temporary redirect), F any failure.
CREATE OR REPLACE TEMP MACRO check_class(outcome) AS
    CASE outcome WHEN 'alive' THEN 'A' WHEN 'opted_out' THEN 'O' WHEN 'moved' THEN 'M'
                 WHEN 'moving' THEN 'T' ELSE 'F' END;

-- The thresholds: whether the check at ts, the n-th of a run of class begun
-- at run_start, is past its run's threshold. F and T: more than
-- failures_to_dead checks and dead_after since the run began; A:
-- revive_after since the run began (it matters only after dead).
CREATE OR REPLACE TEMP MACRO run_crosses(class, n, ts, run_start) AS
    CASE WHEN class IN ('F', 'T') THEN n > {{failures_to_dead}} AND ts >= run_start + to_microseconds({{dead_after_us}})
         WHEN class = 'A' THEN ts >= run_start + to_microseconds({{revive_after_us}})
         ELSE false END;

-- The transitions: the state of a run's check of class, given the state
-- before the run (pre: NULL or discovered for a host's first run), whether
-- the run has crossed its threshold by that check, and whether the host
-- was ever alive. The first row that matches wins.
CREATE OR REPLACE TEMP MACRO run_state(pre, class, crossed, ever_alive) AS
    CASE
    --   class        state before the run               threshold       → state
    WHEN class = 'O'                                                     THEN 'opted_out'
    WHEN class = 'M'                                                     THEN 'moved'
    WHEN class = 'T'                                     AND crossed     THEN 'moved'
    WHEN class = 'T'                                                     THEN 'moving'
    WHEN class = 'F' AND pre IN ('moved', 'opted_out')                   THEN pre
    WHEN class = 'F'                                     AND crossed     THEN 'dead'
    WHEN class = 'F' AND ever_alive                                      THEN 'dying'
    WHEN class = 'F'                                                     THEN 'discovered'
    WHEN class = 'A' AND pre = 'dead'                    AND NOT crossed THEN 'reviving'
    WHEN class = 'A'                                                     THEN 'live'
    END;

-- Whether an alive check at ts opens a new stretch of the live list: no
-- alive check before it (prev_alive), or none within live_days days.
CREATE OR REPLACE TEMP MACRO opens_live_stretch(ts, prev_alive) AS
    prev_alive IS NULL OR ts::DATE - prev_alive::DATE > {{live_days}};

-- The windowed fold (window_states.sql) knows each run's inputs (x, as
-- run_inputs) and those of the runs before it (x1, x2: NULL where there is
-- none), not their states: the state before a run is the end state of the
-- run before it (the carry's for the carried run). The table needs little
-- of it: O, M and T runs none; F runs only whether it was moved or
-- opted_out, which O, M and T runs alone decide (run_e1_of); A runs only
-- whether it was dead, which F runs decide (run_e2_of). So three lags
-- settle a run's end state without recursion.
CREATE OR REPLACE TEMP MACRO run_inputs(class, crossed, ever_alive, carry_run, carry_pre) AS
    {'class': class, 'crossed': crossed, 'ever_alive': ever_alive, 'carry_run': carry_run, 'carry_pre': carry_pre};
CREATE OR REPLACE TEMP MACRO run_e1_of(x) AS
    CASE WHEN x.class IN ('O', 'M', 'T') THEN run_state(NULL, x.class, x.crossed, NULL) END;
CREATE OR REPLACE TEMP MACRO run_e2_of(x, x1) AS
    CASE WHEN x.class = 'F'
         THEN run_state(CASE WHEN x.carry_run THEN x.carry_pre ELSE run_e1_of(x1) END, 'F', x.crossed, x.ever_alive)
         ELSE run_e1_of(x) END;
CREATE OR REPLACE TEMP MACRO run_end_of(x, x1, x2) AS
    CASE WHEN x.class = 'A'
         THEN run_state(CASE WHEN x.carry_run THEN x.carry_pre ELSE run_e2_of(x1, x2) END, 'A', x.crossed, NULL)
         ELSE run_e2_of(x, x1) END;
