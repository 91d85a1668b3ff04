import { BadDataError, ConflictError, NameExistsError, NotFoundError, ServiceUnavailableError, type ApiError } from '../shared/errors.js';

/**
 * PostgreSQL enforces uniqueness and references; this is the one place that turns its SQLSTATEs into the API's
 * errors, so no command needs a SELECT-then-INSERT check that could race. Both pg and PGlite report the
 * constraint name and a `Key (column)=(value)` detail.
 */
interface PgError {
  code: string;
  constraint?: string;
  detail?: string;
}

const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';

function isPgError(error: unknown): error is PgError {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    /^[0-9A-Z]{5}$/.test((error as { code: string }).code)
  );
}

/** The value inside `Key (column)=(value)`; for a multi-column key the values come comma-separated. */
function keyValue(detail: string | undefined): string {
  return detail?.match(/\)=\((.*)\)/)?.[1] ?? '';
}

const uniqueViolations: Record<string, (value: string) => ApiError> = {
  projects_pkey: (id) => new NameExistsError(`A project with id "${id}" already exists`),
  environments_pkey: (name) => new NameExistsError(`An environment named "${name}" already exists`),
  users_username_key: (name) => new NameExistsError(`A user with username "${name}" already exists`),
  users_email_key: (email) => new NameExistsError(`A user with email "${email}" already exists`),
  project_environments_pkey: (key) => {
    const [project, environment] = key.split(', ');
    return new NameExistsError(`Environment "${environment}" is already enabled in project "${project}"`);
  },
  strategy_definitions_pkey: (name) => new NameExistsError(`A strategy named "${name}" already exists`),
  personal_access_tokens_description_key: (key) =>
    new NameExistsError(`This user already has a token described "${key.split(', ').slice(1).join(', ')}"`),
  api_tokens_secret_hash_key: () => new NameExistsError('An API token with this secret already exists'),
  features_pkey: (name) =>
    new NameExistsError(`A flag named "${name}" already exists (flag names are unique across projects, archived flags included)`),
  segments_name_key: (name) => new NameExistsError(`A segment named "${name}" already exists`),
  tag_types_pkey: (name) => new NameExistsError(`A tag type named "${name}" already exists`),
  release_plan_templates_name_key: (name) => new NameExistsError(`A release plan template named "${name}" already exists`),
  release_plans_flag_environment_key: (key) => {
    const [flag, environment] = key.split(', ');
    return new NameExistsError(`Flag "${flag}" already has a release plan in environment "${environment}"; remove it first`);
  },
  signal_endpoints_name_key: (name) => new NameExistsError(`A signal endpoint named "${name}" already exists`),
  groups_name_key: (name) => new NameExistsError(`A group named "${name}" already exists`),
  context_fields_pkey: (name) => new NameExistsError(`A context field named "${name}" already exists`),
  experiment_metrics_name_key: (key) => {
    const [environment, name] = key.split(', ');
    return new NameExistsError(`Environment "${environment}" already has a metric named "${name}"`);
  },
  experiment_data_sources_name_key: (name) => new NameExistsError(`A data source named "${name}" already exists`),
  experiments_name_key: (key) => {
    const [project, name] = key.split(', ');
    return new NameExistsError(`Project "${project}" already has an experiment named "${name}"`);
  },
};

/** Referencing rows that do not exist (insert) or deleting rows still referenced (delete). */
const foreignKeyViolations: Record<string, { missing: (value: string) => ApiError; inUse: (value: string) => ApiError }> = {
  experiments_data_source_id_fkey: {
    missing: (id) => new NotFoundError(`Could not find data source ${id}`),
    inUse: () => new ConflictError('The data source is still analysed by experiments; delete them or move them off it first'),
  },
  api_token_projects_project_fkey: {
    missing: (project) => new NotFoundError(`Could not find project "${project}"`),
    inUse: (project) => new ConflictError(`Project "${project}" is still used by API tokens; delete those tokens first`),
  },
  features_project_fkey: {
    missing: (project) => new NotFoundError(`Could not find project "${project}"`),
    inUse: (project) => new ConflictError(`Project "${project}" still has flags; archive and delete them first`),
  },
  feature_strategy_segments_segment_fkey: {
    missing: (segment) => new NotFoundError(`Could not find segment ${segment}`),
    inUse: (segment) => new ConflictError(`Segment ${segment} is still used by strategies`),
  },
  feature_strategies_strategy_name_fkey: {
    missing: (name) => new BadDataError(`Unknown strategy "${name}"; define it first`),
    inUse: (name) => new ConflictError(`Strategy "${name}" is still used by flags; remove it from them first`),
  },
  segments_project_fkey: {
    missing: (project) => new NotFoundError(`Could not find project "${project}"`),
    inUse: (project) => new ConflictError(`Project "${project}" still has segments; delete them first`),
  },
  feature_dependencies_parent_fkey: {
    missing: (parent) => new NotFoundError(`Could not find flag "${parent}"`),
    inUse: (parent) => new ConflictError(`Flag "${parent}" has dependent flags`),
  },
  feature_tags_tag_type_fkey: {
    missing: (type) => new NotFoundError(`Could not find tag type "${type}"`),
    inUse: (type) => new ConflictError(`Tag type "${type}" is still used by flags`),
  },
  addon_deliveries_addon_id_fkey: {
    missing: (id) => new NotFoundError(`Could not find integration configuration ${id}`),
    inUse: (id) => new ConflictError(`Integration configuration ${id} still has deliveries`),
  },
  api_tokens_environment_fkey: {
    missing: (environment) => new NotFoundError(`Could not find environment "${environment}"`),
    inUse: (environment) => new ConflictError(`Environment "${environment}" is still used by API tokens; delete those tokens first`),
  },
};

// Text PostgreSQL cannot store (NUL characters, invalid encodings) is the client's mistake, not a server failure.
const UNSTORABLE_TEXT = new Set(['22021', '22P05']);
// A statement timeout or a cancellation (the client went away) of a bounded read.
const QUERY_CANCELED = '57014';

/**
 * The database is away (restarting, failing over, not yet up, refusing connections), not wrong: SQLSTATE classes 08
 * (connection exception) and 57P (operator intervention: shutting down, starting up), 53300 (too many connections),
 * and the driver's own errors for a connection it could not open or lost.
 */
const UNAVAILABLE_SQLSTATE = /^(08|57P0[1-4]|53300)/;
const UNAVAILABLE_SOCKET = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const UNAVAILABLE_MESSAGE =
  /^Connection terminated|^timeout expired|^timeout exceeded when trying to connect|Client has encountered a connection error/;
/** How long a client is told to wait before trying again while the database is away. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_SOCKET.has(code) || (isPgError(error) && UNAVAILABLE_SQLSTATE.test(code)))) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message);
}

export function translateDatabaseError(error: unknown): ApiError | undefined {
  if (isDatabaseUnavailable(error)) {
    return new ServiceUnavailableError('The database does not answer right now; try again shortly', DATABASE_RETRY_AFTER_SECONDS);
  }
  if (!isPgError(error)) return undefined;
  if (UNSTORABLE_TEXT.has(error.code)) {
    return new BadDataError('The request contains characters that cannot be stored, such as the NUL character');
  }
  if (error.code === QUERY_CANCELED) {
    return new ServiceUnavailableError(
      'The request took too long and was stopped; narrow it down (fewer filters, a shorter period) and try again',
    );
  }
  if (!error.constraint) return undefined;
  const value = keyValue(error.detail);
  if (error.code === UNIQUE_VIOLATION) return uniqueViolations[error.constraint]?.(value);
  if (error.code === FOREIGN_KEY_VIOLATION) {
    const translation = foreignKeyViolations[error.constraint];
    if (!translation) return undefined;
    return error.detail?.includes('still referenced') ? translation.inUse(value) : translation.missing(value);
  }
  return undefined;
}
