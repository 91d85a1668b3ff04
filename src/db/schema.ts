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
  name: string | null;
  image_url: string | null;
  password_hash: string | null;
  root_role: RootRoleName;
  login_attempts: Generated<number>;
  created_at: CreatedAt;
  seen_at: Date | null;
}

export type RootRoleName = 'Admin' | 'Editor' | 'Viewer';
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

export interface UserSessionsTable {
  id_hash: string;
  user_id: number;
  created_at: CreatedAt;
  expires_at: Date;
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
}

export interface Database {
  users: UsersTable;
  api_tokens: ApiTokensTable;
  api_token_projects: ApiTokenProjectsTable;
  personal_access_tokens: PersonalAccessTokensTable;
  user_sessions: UserSessionsTable;
  environments: EnvironmentsTable;
  projects: ProjectsTable;
  project_environments: ProjectEnvironmentsTable;
  events: EventsTable;
}
