import type { ColumnType, Generated } from 'kysely';

/**
 * Row types of Vexil's tables, snake_case as in SQL. Rows are mapped to API shapes explicitly (no
 * CamelCasePlugin: it would also rewrite keys inside jsonb payloads).
 */
type CreatedAt = ColumnType<Date, Date | undefined, never>;
type Json = ColumnType<unknown, string, string>;

export interface UsersTable {
  id: Generated<number>;
  username: string | null;
  email: string | null;
  /** Whether an Admin, an identity provider or SCIM vouched for the email; false for invite sign-ups. */
  email_verified: Generated<boolean>;
  name: string | null;
  image_url: string | null;
  password_hash: string | null;
  root_role: RootRoleName;
  login_attempts: Generated<number>;
  created_at: CreatedAt;
  seen_at: Date | null;
  oidc_issuer: Generated<string | null>;
  oidc_subject: Generated<string | null>;
  is_service: Generated<boolean>;
  /** Created or adopted by an identity provider over SCIM, which then manages the person. */
  scim_managed: Generated<boolean>;
  /** The identity provider's own id for the person (SCIM `externalId`). */
  scim_external_id: Generated<string | null>;
  /** What the provider sent over SCIM that Vexil does not model, returned to it as sent. */
  scim_attributes: ColumnType<unknown, string | null | undefined, string | null>;
  /** Set while the person may not sign in or use a token (SCIM `active: false`). */
  deactivated_at: Generated<Date | null>;
  updated_at: Generated<Date | null>;
  /** A custom root role held instead of `root_role` (which then stays the built-in baseline, Viewer). */
  custom_root_role_id: Generated<number | null>;
}

export type RootRoleName = 'Admin' | 'Editor' | 'Viewer';
export type ProjectRoleName = 'Owner' | 'Member' | 'Viewer';

/** A link that lets a person choose a new password (migration 0025); only the hash of its token is kept. */
export interface PasswordResetTokensTable {
  token_hash: string;
  user_id: number;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  created_by: string;
}

/** An invite link (Unleash's public sign-up token, migration 0029); only the hash of its secret is kept. */
export interface InviteLinksTable {
  id: Generated<number>;
  secret_hash: string;
  name: string;
  root_role: Generated<RootRoleName>;
  enabled: Generated<boolean>;
  expires_at: Date;
  created_at: Date;
  created_by: string;
}

export interface InviteLinkUsersTable {
  invite_link_id: number;
  user_id: number;
}

/** An Edge that may be issued client tokens (migration 0031); its secret is derived, never stored. */
export interface EdgeClientsTable {
  client_id: string;
  name: string;
  salt: string;
  created_at: Date;
  created_by: string;
}

/** Which generation of a scope's token an edge client holds: a deleted token is issued again with the next. */
export interface EdgeClientTokensTable {
  client_id: string;
  scope: string;
  generation: number;
}

export interface EdgeRequestNoncesTable {
  client_id: string;
  nonce: string;
  expires_at: Date;
}

/** A feedback questionnaire a person answered or declined (migration 0022). */
export interface UserFeedbackTable {
  user_id: number;
  feedback_id: string;
  given: Date | null;
  never_show: Generated<boolean>;
}

/** A splash screen a person has seen (migration 0022). */
export interface UserSplashTable {
  user_id: number;
  splash_id: string;
  seen: Generated<boolean>;
}

export interface GroupsTable {
  id: Generated<number>;
  name: string;
  description: string | null;
  mappings_sso: string[];
  root_role: RootRoleName | null;
  created_by: string | null;
  created_at: CreatedAt;
  scim_managed: Generated<boolean>;
  scim_external_id: Generated<string | null>;
  updated_at: Generated<Date | null>;
  custom_root_role_id: Generated<number | null>;
}

/** A SAML request an answer was accepted for, kept until the request would have expired. */
export interface SamlAnsweredRequestsTable {
  request_id: string;
  expires_at: Date;
}

/** A custom role: `root-custom` (held instead of a root role) or `custom` (held in projects). */
export interface RolesTable {
  id: Generated<number>;
  name: string;
  description: string | null;
  type: 'root-custom' | 'custom';
  created_by: string;
  created_at: Date;
  updated_at: Date | null;
}

/** A permission of a custom role; an environment permission of a project role names its environment. */
export interface RolePermissionsTable {
  role_id: number;
  permission: string;
  environment: string | null;
}

/** The token an identity provider provisions with; one at a time, stored as its hash. */
export interface ScimTokensTable {
  id: Generated<number>;
  secret_hash: string;
  created_by: string;
  created_at: Date;
  seen_at: Date | null;
}

export interface GroupUsersTable {
  group_id: number;
  user_id: number;
  /**
   * `sso`: added by a sign-in from the provider's groups claim, and removed by a later one without it; `scim`:
   * pushed by an identity provider over SCIM.
   */
  source: 'manual' | 'sso' | 'scim';
  created_by: string | null;
  joined_at: CreatedAt;
}

/** A role in one project, held by a user or by a group (exactly one of the two). */
export interface ProjectAccessTable {
  id: Generated<number>;
  project_id: string;
  user_id: number | null;
  group_id: number | null;
  /** A built-in project role, or null when `custom_role_id` names a custom one. */
  role: ProjectRoleName | null;
  custom_role_id: Generated<number | null>;
  created_at: CreatedAt;
}

/** Keys the instances share (sealing sign-ins in progress), made once by whichever instance needs one first. */
export interface ServerKeysTable {
  name: string;
  key: string;
  created_at: Date;
}

export interface ReleasePlanTemplatesTable {
  id: string;
  name: string;
  description: string | null;
  milestones: Json;
  created_by_user_id: number;
  created_at: Date;
  archived_at: Date | null;
}

export interface ReleasePlansTable {
  id: string;
  template_id: string | null;
  name: string;
  description: string | null;
  feature_name: string;
  environment: string;
  active_milestone_id: string | null;
  paused_at: Date | null;
  paused_reason: string | null;
  created_by_user_id: number;
  created_at: Date;
}

export interface ReleasePlanMilestonesTable {
  id: string;
  release_plan_id: string;
  name: string;
  sort_order: number;
  strategies: Json;
  transition_interval_minutes: number | null;
  started_at: Date | null;
  /** When the scheduler starts the next milestone; set while this one is active and has a transition. */
  progress_at: Date | null;
}

export type SafeguardAggregation = 'count' | 'rps' | 'avg' | 'sum';

export interface ReleasePlanSafeguardsTable {
  id: string;
  release_plan_id: string;
  metric_name: string;
  app_name: string | null;
  label_selectors: Json;
  aggregation: SafeguardAggregation;
  window_minutes: number;
  operator: '>' | '<';
  threshold: number;
  rollback: boolean;
  triggered_at: Date | null;
  created_at: Date;
  /** When it was last set or its plan resumed: its window starts no earlier. */
  armed_at: Date | null;
}

export type ImpactMetricType = 'counter' | 'gauge' | 'histogram';

export interface ImpactMetricSeriesTable {
  id: Generated<number>;
  app_name: string;
  environment: string;
  name: string;
  type: ImpactMetricType;
  labels: Json;
  labels_key: string;
  help: string | null;
  created_at: Date;
}

export interface ImpactMetricMinutesTable {
  series_id: number;
  minute: Date;
  value: number;
  samples: string | number;
  last: number;
}

export interface SignalEndpointsTable {
  id: Generated<number>;
  name: string;
  description: string | null;
  enabled: boolean;
  created_by_user_id: number;
  created_at: Date;
}

export interface SignalEndpointTokensTable {
  id: Generated<number>;
  signal_endpoint_id: number;
  name: string;
  secret_hash: string;
  created_by_user_id: number;
  created_at: Date;
}

export interface SignalsTable {
  id: Generated<string>;
  signal_endpoint_id: number;
  token_id: number | null;
  payload: Json;
  created_at: Date;
}

export interface ActionSetsTable {
  id: Generated<number>;
  project: string;
  name: string;
  description: string | null;
  enabled: boolean;
  actor_id: number;
  source_id: number;
  match_payload: Json;
  actions: Json;
  created_by_user_id: number;
  created_at: Date;
}

/** One run of an action set on a signal, with how it went (the last ones per set are kept). */
export interface ActionSetEventsTable {
  id: Generated<number>;
  action_set_id: number;
  /** The signal it ran on, while that signal is still kept. */
  signal_id: number | null;
  state: 'success' | 'failed';
  message: string | null;
  created_at: Date;
}

export interface FeatureVariantUsageHourlyTable {
  feature_name: string;
  environment: string;
  app_name: string;
  hour: Date;
  variant: string;
  count: ColumnType<string, number, number>;
}

/** Flag names an application evaluated that no flag has, so its page can warn (bounded per application). */
export interface ClientApplicationMissingFlagsTable {
  app_name: string;
  environment: string;
  feature_name: string;
  last_seen_at: Date;
}

export type ApiTokenType = 'admin' | 'client' | 'frontend';

export interface ApiTokensTable {
  id: Generated<number>;
  secret_hash: string;
  token_name: string;
  type: ApiTokenType;
  /** null for admin tokens, which span every environment. */
  environment: string | null;
  expires_at: Date | null;
  created_at: CreatedAt;
  seen_at: Date | null;
}

/** A token with no rows here spans every project (`*`). */
export interface ApiTokenProjectsTable {
  token_id: number;
  project_id: string;
}

export interface PersonalAccessTokensTable {
  id: Generated<number>;
  user_id: number;
  description: string;
  secret_hash: string;
  expires_at: Date;
  created_at: CreatedAt;
  seen_at: Date | null;
}

/** An MCP client that registered itself for OAuth (migration 0033): a public client, PKCE only. */
export interface OauthClientsTable {
  id: Generated<number>;
  client_id: string;
  name: string;
  redirect_uris: Json;
  created_at: Date;
  /** When a person last granted it a token; clients never granted one are the first to go when the table is full. */
  authorized_at: Date | null;
}

export interface OauthAuthorizationCodesTable {
  code_hash: string;
  client_id: number;
  user_id: number;
  redirect_uri: string;
  /** PKCE: the S256 challenge the token request's verifier must answer. */
  code_challenge: string;
  expires_at: Date;
}

/** A token a person granted an MCP client: it works on the MCP endpoint only, as that person. */
export interface OauthAccessTokensTable {
  id: Generated<number>;
  secret_hash: string;
  client_id: number;
  user_id: number;
  created_at: Date;
  expires_at: Date;
  seen_at: Date | null;
}

export interface UserSessionsTable {
  /** What a session is named by in the API; the cookie's hash (`id_hash`) never leaves the database. */
  id: Generated<number>;
  id_hash: string;
  user_id: number;
  created_at: CreatedAt;
  expires_at: Date;
  /** Refreshed at most once a minute, as tokens' are. */
  seen_at: Date | null;
  address: string | null;
  user_agent: string | null;
}

export interface SignonsTable {
  id: Generated<number>;
  created_at: Date;
  user_id: number | null;
  /** What the person signed in as: the username typed, or the provider's email. */
  username: string | null;
  auth_type: 'password' | 'oidc' | 'saml';
  successful: boolean;
  failure_reason: string | null;
  address: string | null;
  user_agent: string | null;
}

export interface EnvironmentsTable {
  name: string;
  type: string;
  sort_order: number;
  enabled: Generated<boolean>;
  created_at: CreatedAt;
}

export interface ProjectsTable {
  id: string;
  name: string;
  description: string | null;
  mode: string;
  default_stickiness: string;
  created_at: CreatedAt;
  updated_at: Date | null;
}

export interface ProjectEnvironmentsTable {
  project_id: string;
  environment_name: string;
  /** What turning a flag on here without strategies adds (a normalized strategy; groupId '' is the flag's name). */
  default_strategy: ColumnType<unknown, string | null | undefined, string | null>;
}

/** One row: the revision of what SDKs read (migration 0020). */
export interface ConfigurationRevisionTable {
  singleton: Generated<boolean>;
  revision: number;
}

export interface EventsTable {
  id: Generated<number>;
  created_at: Date;
  type: string;
  created_by: string;
  created_by_user_id: number | null;
  project: string | null;
  environment: string | null;
  feature_name: string | null;
  data: Json | null;
  pre_data: Json | null;
  tags: Json;
  /** The change request whose application wrote this event. */
  change_request_id: number | null;
  /** The agent the change came through (an MCP client's name and version). */
  via: string | null;
}

export interface FeaturesTable {
  name: string;
  project: string;
  type: string;
  description: string | null;
  impression_data: boolean;
  stale: Generated<boolean>;
  created_at: Date;
  created_by_user_id: number | null;
  /** The creator's name at creation, kept when the user is later deleted. */
  created_by: string;
  archived_at: Date | null;
}

export interface FeatureEnvironmentsTable {
  feature_name: string;
  environment: string;
  enabled: boolean;
  variants: Json;
}

export interface FeatureStrategiesTable {
  id: string;
  feature_name: string;
  environment: string;
  strategy_name: string;
  title: string | null;
  disabled: boolean;
  sort_order: number;
  parameters: Json;
  constraints: Json;
  variants: Json;
  created_at: Date;
  /** The release plan milestone this strategy came from; it goes when the plan moves on. */
  milestone_id: Generated<string | null>;
}

export interface FeatureStrategySegmentsTable {
  strategy_id: string;
  segment_id: number;
}

export interface SegmentsTable {
  id: Generated<number>;
  name: string;
  description: string | null;
  project: string | null;
  constraints: Json;
  created_at: Date;
  created_by: string | null;
}

export interface TagTypesTable {
  name: string;
  description: string | null;
  icon: string | null;
  created_at: CreatedAt;
}

/** A tag made on its own, before or beside the flags that carry it (migration 0023). */
export interface TagsTable {
  type: string;
  value: string;
  created_at: Date;
}

/** A link from a flag to what concerns it (migration 0024). */
export interface FeatureLinksTable {
  id: string;
  feature_name: string;
  url: string;
  title: string | null;
  created_at: Date;
  position: Generated<number>;
}

/** The days until a flag of a type is potentially stale; null: never (migration 0026). */
export interface FeatureTypeLifetimesTable {
  type: string;
  lifetime_days: number | null;
}

export interface FeatureTagsTable {
  feature_name: string;
  tag_type: string;
  tag_value: string;
  created_at: Date;
}

export interface FavoriteFeaturesTable {
  user_id: number;
  feature_name: string;
  created_at: Date;
}

export interface FavoriteProjectsTable {
  user_id: number;
  project: string;
  created_at: Date;
}

export interface FeatureDependenciesTable {
  parent: string;
  child: string;
  enabled: boolean;
  variants: Json;
}

export interface FeatureLifecyclesTable {
  feature_name: string;
  stage: string;
  status: string | null;
  status_value: string | null;
  created_at: Date;
}

export interface ContextFieldsTable {
  name: string;
  description: string | null;
  legal_values: Json;
  stickiness: boolean;
  sort_order: number;
  created_at: CreatedAt;
  /** The project the field belongs to; null for a field of the whole instance (migration 0030). */
  project: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface StrategyDefinitionsTable {
  name: string;
  title: string | null;
  description: string;
  parameters: Json;
  built_in: Generated<boolean>;
  deprecated: boolean;
  sort_order: Generated<number>;
  created_at: CreatedAt;
}

export interface SettingsTable {
  name: string;
  content: Json;
}

/** Exact event counts per scope (`*` = all events, `project:<id>`), split over shards summed on read. */
export interface EventCountsTable {
  scope: string;
  shard: number;
  count: number;
}

export interface FeatureEnvironmentUsageTable {
  feature_name: string;
  environment: string;
  last_seen_at: Date;
}

export interface FeatureUsageHourlyTable {
  feature_name: string;
  environment: string;
  app_name: string;
  hour: Date;
  yes: number;
  no: number;
}

/** Text arrays (`text[]`): both drivers read them as string arrays and write JS arrays as-is. */
type TextArray = ColumnType<string[], string[], string[]>;

export interface AddonsTable {
  id: Generated<number>;
  provider: string;
  description: string;
  enabled: boolean;
  /** Provider parameters as stored, secrets included: mask them before they leave the domain. */
  parameters: ColumnType<Record<string, string>, string, string>;
  events: TextArray;
  projects: TextArray;
  environments: TextArray;
  created_at: Date;
  updated_at: Date;
  /** Standard Webhooks secret (`whsec_` + base64): shown once, never read back, never in an event. */
  signing_secret: string;
  signing_secret_created_at: Date;
  /** The secret before the last rotation, still signing beside the new one until it expires. */
  previous_signing_secret: string | null;
  previous_signing_secret_expires_at: Date | null;
}

/** The integration outbox: one row per (event, configuration) until delivered or out of attempts. */
export interface AddonDeliveriesTable {
  id: Generated<number>;
  delivery_id: string;
  addon_id: number;
  event_id: number;
  attempts: Generated<number>;
  /** When the row is next due: the retry time, or the end of the lease of the worker holding it. */
  next_attempt_at: Date;
  lease_token: string | null;
  created_at: Date;
  /** Asked for again by hand, not owed by the event's recording. */
  redelivery: Generated<boolean>;
}

export type IntegrationEventState = 'success' | 'failed' | 'successWithErrors';

export interface IntegrationEventsTable {
  id: Generated<number>;
  integration_id: number;
  event_id: number;
  created_at: Date;
  state: IntegrationEventState;
  state_details: string;
  details: Json;
}

export interface ChangeRequestSettingsTable {
  project: string;
  environment: string;
  enabled: boolean;
  required_approvals: number;
}

export const CHANGE_REQUEST_STATES = ['Draft', 'In review', 'Approved', 'Scheduled', 'Applied', 'Cancelled', 'Rejected'] as const;
export type ChangeRequestState = (typeof CHANGE_REQUEST_STATES)[number];

export interface ChangeRequestsTable {
  id: Generated<number>;
  project: string;
  environment: string;
  title: string | null;
  state: ChangeRequestState;
  created_by_user_id: number;
  created_by: string;
  created_at: Date;
  scheduled_at: Date | null;
  schedule_status: 'pending' | 'failed' | null;
  schedule_failure_reason: string | null;
  scheduled_by_user_id: number | null;
  scheduled_by: string | null;
  applied_at: Date | null;
  applied_by_user_id: number | null;
  applied_by: string | null;
}

export interface ChangeRequestChangesTable {
  id: Generated<number>;
  change_request_id: number;
  action: string;
  feature_name: string | null;
  segment_id: number | null;
  /** What the change is about (`enabled`, `strategy:<id>`…); a later change with the same key replaces it. */
  change_key: string | null;
  payload: Json | null;
  /** The state the change was made against, compared with the live state to detect conflicts. */
  base: Json | null;
  created_by_user_id: number;
  created_by: string;
  created_at: Date;
}

export interface ChangeRequestReviewsTable {
  change_request_id: number;
  decision: 'approved' | 'rejected';
  user_id: number;
  username: string;
  created_at: Date;
}

export interface ChangeRequestCommentsTable {
  id: Generated<number>;
  change_request_id: number;
  text: string;
  created_by_user_id: number;
  created_by: string;
  created_at: Date;
}

export interface ClientApplicationsTable {
  app_name: string;
  strategies: TextArray;
  created_at: Date;
  seen_at: Date;
  /** Said by a person, not an SDK (migration 0027). */
  description: ColumnType<string | null, string | null | undefined, string | null>;
  url: ColumnType<string | null, string | null | undefined, string | null>;
  color: ColumnType<string | null, string | null | undefined, string | null>;
  icon: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ClientInstancesTable {
  app_name: string;
  instance_id: string;
  environment: string;
  sdk_version: string | null;
  client_ip: string | null;
  started_at: Date | null;
  interval_ms: number | null;
  created_at: Date;
  seen_at: Date;
}

export interface ExperimentMetricsTable {
  id: Generated<number>;
  environment: string;
  name: string;
  description: string | null;
  kind: 'proportion' | 'mean' | 'ratio';
  event: string;
  aggregation: 'sum' | 'count';
  denominator_event: string | null;
  denominator_aggregation: 'sum' | 'count' | null;
  window_hours: number | null;
  cap: number | null;
  lower_is_better: boolean;
  created_at: Date;
}

export interface ExperimentsTable {
  id: Generated<number>;
  project: string;
  name: string;
  hypothesis: string | null;
  feature_name: string;
  environment: string;
  strategy_id: string | null;
  engine: 'bayesian' | 'frequentist';
  difference: 'relative' | 'absolute';
  alpha: number;
  sequential_tuning: number | null;
  cuped_lookback_days: number | null;
  correction: 'none' | 'holm' | 'benjamini-hochberg';
  status: 'draft' | 'running' | 'stopped' | 'shipped';
  shipped_variant: string | null;
  created_by_user_id: number | null;
  created_at: Date;
  started_at: Date | null;
  stopped_at: Date | null;
  data_source_id: Generated<number | null>;
  experiment_key: Generated<string | null>;
}

export interface ExperimentDataSourcesTable {
  id: Generated<number>;
  name: string;
  kind: 'postgres';
  connection_sealed: string;
  address: string;
  assignment_query: string;
  events_query: string;
  created_at: Date;
}

export interface CodeReferencePushesTable {
  repository: string;
  branch: string;
  commit_sha: string;
  url_template: string | null;
  pushed_at: Date;
  reference_count: number;
}

export interface CodeReferencesTable {
  id: Generated<string>;
  repository: string;
  branch: string;
  feature_name: string;
  file: string;
  line: number;
  column_number: number;
  language: string;
  call: string;
  expression: string;
  context: Json;
}

export interface CodeReferenceRemovalsTable {
  feature_name: string;
  repository: string;
  branch: string;
  commit_sha: string;
  removed_at: Date;
}

export interface RemovalReadinessTable {
  feature_name: string;
  environment: string;
  verdict: string;
  reasons: ColumnType<string[], string, string>;
  judged_at: Date;
}

export interface ExperimentMetricRolesTable {
  experiment_id: number;
  metric_id: number;
  role: 'goal' | 'guardrail' | 'secondary';
  position: number;
}

export interface ExperimentPhasesTable {
  experiment_id: number;
  phase: number;
  started_at: Date;
  ended_at: Date | null;
  group_id: string;
  stickiness: string;
  variants: Json;
  variant_mismatches: Generated<number>;
}

export interface ExperimentExposuresTable {
  experiment_id: number;
  phase: number;
  unit_hash: Buffer;
  variant: number;
  first_at: Date;
  source: number;
}

export interface TrackedEventsTable {
  environment: string;
  event: string;
  unit_hash: Buffer;
  at: Date;
  value: number;
}

export interface TrackedEventDropsTable {
  environment: string;
  event: string;
  dropped: number;
  last_seen_at: Date;
}

export interface ExperimentSnapshotsTable {
  id: Generated<number>;
  experiment_id: number;
  phase: number;
  taken_at: Date;
  results: Json;
}

export interface Database {
  client_applications: ClientApplicationsTable;
  client_instances: ClientInstancesTable;
  addons: AddonsTable;
  addon_deliveries: AddonDeliveriesTable;
  integration_events: IntegrationEventsTable;
  users: UsersTable;
  api_tokens: ApiTokensTable;
  api_token_projects: ApiTokenProjectsTable;
  personal_access_tokens: PersonalAccessTokensTable;
  oauth_clients: OauthClientsTable;
  oauth_authorization_codes: OauthAuthorizationCodesTable;
  oauth_access_tokens: OauthAccessTokensTable;
  user_sessions: UserSessionsTable;
  signons: SignonsTable;
  scim_tokens: ScimTokensTable;
  roles: RolesTable;
  saml_answered_requests: SamlAnsweredRequestsTable;
  role_permissions: RolePermissionsTable;
  groups: GroupsTable;
  group_users: GroupUsersTable;
  user_feedback: UserFeedbackTable;
  password_reset_tokens: PasswordResetTokensTable;
  user_splash: UserSplashTable;
  tags: TagsTable;
  feature_links: FeatureLinksTable;
  feature_type_lifetimes: FeatureTypeLifetimesTable;
  invite_links: InviteLinksTable;
  edge_clients: EdgeClientsTable;
  edge_client_tokens: EdgeClientTokensTable;
  edge_request_nonces: EdgeRequestNoncesTable;
  invite_link_users: InviteLinkUsersTable;
  project_access: ProjectAccessTable;
  server_keys: ServerKeysTable;
  experiment_metrics: ExperimentMetricsTable;
  experiments: ExperimentsTable;
  experiment_metric_roles: ExperimentMetricRolesTable;
  experiment_phases: ExperimentPhasesTable;
  experiment_exposures: ExperimentExposuresTable;
  tracked_events: TrackedEventsTable;
  tracked_event_drops: TrackedEventDropsTable;
  experiment_snapshots: ExperimentSnapshotsTable;
  experiment_data_sources: ExperimentDataSourcesTable;
  code_reference_pushes: CodeReferencePushesTable;
  code_references: CodeReferencesTable;
  code_reference_removals: CodeReferenceRemovalsTable;
  removal_readiness: RemovalReadinessTable;
  action_set_events: ActionSetEventsTable;
  release_plan_templates: ReleasePlanTemplatesTable;
  release_plans: ReleasePlansTable;
  release_plan_milestones: ReleasePlanMilestonesTable;
  release_plan_safeguards: ReleasePlanSafeguardsTable;
  impact_metric_series: ImpactMetricSeriesTable;
  impact_metric_minutes: ImpactMetricMinutesTable;
  signal_endpoints: SignalEndpointsTable;
  signal_endpoint_tokens: SignalEndpointTokensTable;
  signals: SignalsTable;
  action_sets: ActionSetsTable;
  client_application_missing_flags: ClientApplicationMissingFlagsTable;
  feature_variant_usage_hourly: FeatureVariantUsageHourlyTable;
  environments: EnvironmentsTable;
  projects: ProjectsTable;
  project_environments: ProjectEnvironmentsTable;
  events: EventsTable;
  configuration_revision: ConfigurationRevisionTable;
  feature_environment_usage: FeatureEnvironmentUsageTable;
  feature_usage_hourly: FeatureUsageHourlyTable;
  event_counts: EventCountsTable;
  features: FeaturesTable;
  feature_environments: FeatureEnvironmentsTable;
  feature_strategies: FeatureStrategiesTable;
  feature_strategy_segments: FeatureStrategySegmentsTable;
  segments: SegmentsTable;
  tag_types: TagTypesTable;
  feature_tags: FeatureTagsTable;
  favorite_features: FavoriteFeaturesTable;
  favorite_projects: FavoriteProjectsTable;
  feature_dependencies: FeatureDependenciesTable;
  feature_lifecycles: FeatureLifecyclesTable;
  context_fields: ContextFieldsTable;
  strategy_definitions: StrategyDefinitionsTable;
  settings: SettingsTable;
  change_request_settings: ChangeRequestSettingsTable;
  change_requests: ChangeRequestsTable;
  change_request_changes: ChangeRequestChangesTable;
  change_request_reviews: ChangeRequestReviewsTable;
  change_request_comments: ChangeRequestCommentsTable;
}
