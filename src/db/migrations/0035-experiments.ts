import { sql, type Kysely } from 'kysely';

/**
 * Experiments. A metric is an event SDKs track in an environment (or two, for a ratio), with how a unit's events
 * become its value. An experiment compares the variants of one strategy of a flag in one environment, on metrics of
 * that environment in roles; it runs in phases, a new one whenever the variants' weights change, and analysis reads
 * one phase. Exposures are one row per unit and phase (the unit's keyed hash, never its value), a unit seen in two
 * variants marked -1; tracked events are kept raw, per environment, event and unit hash. Snapshots keep each
 * analysis's results, so results read fast and their history draws the cumulative chart.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    `CREATE TABLE experiment_metrics (
       id serial PRIMARY KEY,
       environment text NOT NULL REFERENCES environments (name) ON DELETE CASCADE ON UPDATE CASCADE,
       name text NOT NULL,
       description text,
       kind text NOT NULL CONSTRAINT experiment_metrics_kind_check CHECK (kind IN ('proportion', 'mean', 'ratio')),
       event text NOT NULL,
       aggregation text NOT NULL DEFAULT 'sum' CONSTRAINT experiment_metrics_aggregation_check CHECK (aggregation IN ('sum', 'count')),
       denominator_event text,
       denominator_aggregation text CONSTRAINT experiment_metrics_denominator_aggregation_check CHECK (denominator_aggregation IN ('sum', 'count')),
       window_hours integer CONSTRAINT experiment_metrics_window_check CHECK (window_hours > 0),
       cap double precision CONSTRAINT experiment_metrics_cap_check CHECK (cap > 0),
       lower_is_better boolean NOT NULL DEFAULT false,
       created_at timestamptz NOT NULL,
       CONSTRAINT experiment_metrics_name_key UNIQUE (environment, name),
       CONSTRAINT experiment_metrics_ratio_check CHECK ((kind = 'ratio') = (denominator_event IS NOT NULL))
     )`,

    `CREATE TABLE experiments (
       id serial PRIMARY KEY,
       project text NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
       name text NOT NULL,
       hypothesis text,
       feature_name text NOT NULL REFERENCES features (name) ON DELETE CASCADE ON UPDATE CASCADE,
       environment text NOT NULL REFERENCES environments (name) ON DELETE CASCADE ON UPDATE CASCADE,
       strategy_id uuid REFERENCES feature_strategies (id) ON DELETE SET NULL,
       engine text NOT NULL DEFAULT 'bayesian' CONSTRAINT experiments_engine_check CHECK (engine IN ('bayesian', 'frequentist')),
       difference text NOT NULL DEFAULT 'relative' CONSTRAINT experiments_difference_check CHECK (difference IN ('relative', 'absolute')),
       alpha double precision NOT NULL DEFAULT 0.05 CONSTRAINT experiments_alpha_check CHECK (alpha > 0 AND alpha < 0.5),
       sequential_tuning integer CONSTRAINT experiments_sequential_check CHECK (sequential_tuning > 0),
       cuped_lookback_days integer CONSTRAINT experiments_cuped_check CHECK (cuped_lookback_days > 0),
       correction text NOT NULL DEFAULT 'none' CONSTRAINT experiments_correction_check CHECK (correction IN ('none', 'holm', 'benjamini-hochberg')),
       status text NOT NULL DEFAULT 'draft' CONSTRAINT experiments_status_check CHECK (status IN ('draft', 'running', 'stopped', 'shipped')),
       shipped_variant text,
       created_by_user_id integer,
       created_at timestamptz NOT NULL,
       started_at timestamptz,
       stopped_at timestamptz,
       CONSTRAINT experiments_name_key UNIQUE (project, name)
     )`,
    `CREATE INDEX experiments_running_idx ON experiments (environment, feature_name) WHERE status = 'running'`,

    `CREATE TABLE experiment_metric_roles (
       experiment_id integer NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
       metric_id integer NOT NULL REFERENCES experiment_metrics (id),
       role text NOT NULL CONSTRAINT experiment_metric_roles_role_check CHECK (role IN ('goal', 'guardrail', 'secondary')),
       position integer NOT NULL,
       PRIMARY KEY (experiment_id, metric_id)
     )`,
    `CREATE INDEX experiment_metric_roles_metric_idx ON experiment_metric_roles (metric_id)`,

    `CREATE TABLE experiment_phases (
       experiment_id integer NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
       phase integer NOT NULL,
       started_at timestamptz NOT NULL,
       ended_at timestamptz,
       group_id text NOT NULL,
       stickiness text NOT NULL,
       variants jsonb NOT NULL,
       variant_mismatches bigint NOT NULL DEFAULT 0,
       PRIMARY KEY (experiment_id, phase)
     )`,

    `CREATE TABLE experiment_exposures (
       experiment_id integer NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
       phase integer NOT NULL,
       unit_hash bytea NOT NULL,
       variant smallint NOT NULL,
       first_at timestamptz NOT NULL,
       source smallint NOT NULL,
       PRIMARY KEY (experiment_id, phase, unit_hash)
     )`,

    `CREATE TABLE tracked_events (
       environment text NOT NULL REFERENCES environments (name) ON DELETE CASCADE ON UPDATE CASCADE,
       event text NOT NULL,
       unit_hash bytea NOT NULL,
       at timestamptz NOT NULL,
       value double precision NOT NULL
     )`,
    `CREATE INDEX tracked_events_unit_idx ON tracked_events (environment, event, unit_hash, at)`,
    `CREATE INDEX tracked_events_at_idx ON tracked_events (at)`,

    `CREATE TABLE tracked_event_drops (
       environment text NOT NULL REFERENCES environments (name) ON DELETE CASCADE ON UPDATE CASCADE,
       event text NOT NULL,
       dropped bigint NOT NULL,
       last_seen_at timestamptz NOT NULL,
       PRIMARY KEY (environment, event)
     )`,

    `CREATE TABLE experiment_snapshots (
       id serial PRIMARY KEY,
       experiment_id integer NOT NULL REFERENCES experiments (id) ON DELETE CASCADE,
       phase integer NOT NULL,
       taken_at timestamptz NOT NULL,
       results jsonb NOT NULL
     )`,
    `CREATE INDEX experiment_snapshots_experiment_idx ON experiment_snapshots (experiment_id, phase, taken_at)`,
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
