-- The state machine, as macros every step of the fold applies: a check's
-- class, its run's thresholds, and the table of transitions (next_state).

-- A check's class: A alive, O opted_out, M moved (permanent redirect), T
-- moving (temporary redirect), F any failure.
CREATE OR REPLACE TEMP MACRO check_class(outcome) AS
    CASE outcome WHEN 'alive' THEN 'A' WHEN 'opted_out' THEN 'O' WHEN 'moved' THEN 'M'
                 WHEN 'moving' THEN 'T' ELSE 'F' END;

-- The thresholds, counted along a run (a host's consecutive checks of one
-- class): whether the check at ts, the n-th of a run begun at run_start, has
-- reached its run's threshold. F and T: more than failures_to_dead checks
-- and dead_after since the run began; A: revive_after since the run began.
CREATE OR REPLACE TEMP MACRO run_crosses(class, n, ts, run_start) AS
    CASE WHEN class IN ('F', 'T') THEN n > {{failures_to_dead}} AND ts >= run_start + to_microseconds({{dead_after_us}})
         WHEN class = 'A' THEN ts >= run_start + to_microseconds({{revive_after_us}})
         ELSE false END;

-- The transitions: the state after a check of class, from the state before
-- it (NULL: discovered), whether its run has reached its threshold
-- (run_crosses) and whether the host was ever alive. The first row that
-- matches wins.
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
-- Applied along a run, the table settles at once: a check's next state is
-- the same from the state before it as from the state before its run (pre),
-- since a threshold once reached stays reached. So the fold gives each check
-- next_state(pre, ...), and a run changes state at most twice (at its first
-- check and where it reaches its threshold), with no recursion.

-- Whether an alive check at ts opens a new stretch of the live list: no
-- alive check before it (prev_alive), or none within live_days days.
CREATE OR REPLACE TEMP MACRO opens_live_stretch(ts, prev_alive) AS
    prev_alive IS NULL OR ts::DATE - prev_alive::DATE > {{live_days}};

-- The state before a run is the end state of the run before it, and the
-- windowed fold (window_states.sql) knows the runs' inputs (run_inputs), not
-- their states. The table reads little of the state before: O, M and T runs
-- none; F runs only whether it was moved or opted_out, which the O, M and T
-- runs alone decide (run_e1_of); A runs only whether it was dead, which F
-- runs decide (run_e2_of). So the inputs of a run (x) and of the two before
-- it (x1, x2; NULL where there is none) settle its end state (run_end_of).
CREATE OR REPLACE TEMP MACRO run_inputs(class, crossed, ever_alive, carry_run, carry_pre) AS
    {'class': class, 'crossed': crossed, 'ever_alive': ever_alive, 'carry_run': carry_run, 'carry_pre': carry_pre};
CREATE OR REPLACE TEMP MACRO run_e1_of(x) AS
    CASE WHEN x.class IN ('O', 'M', 'T') THEN next_state(NULL, x.class, x.crossed, NULL) END;
CREATE OR REPLACE TEMP MACRO run_e2_of(x, x1) AS
    CASE WHEN x.class = 'F'
         THEN next_state(CASE WHEN x.carry_run THEN x.carry_pre ELSE run_e1_of(x1) END, 'F', x.crossed, x.ever_alive)
         ELSE run_e1_of(x) END;
CREATE OR REPLACE TEMP MACRO run_end_of(x, x1, x2) AS
    CASE WHEN x.class = 'A'
         THEN next_state(CASE WHEN x.carry_run THEN x.carry_pre ELSE run_e2_of(x1, x2) END, 'A', x.crossed, NULL)
         ELSE run_e2_of(x, x1) END;
