import { sql, type Kysely } from 'kysely';

/**
 * Strategy definitions: the built-in strategies and the custom ones users define for their SDKs' own
 * strategy implementations. A flag's strategy must name a definition, so one in use cannot be deleted.
 */
const statements = [
  `CREATE TABLE strategy_definitions (
    name text PRIMARY KEY,
    title text,
    description text NOT NULL DEFAULT '',
    parameters jsonb NOT NULL DEFAULT '[]',
    built_in boolean NOT NULL DEFAULT false,
    deprecated boolean NOT NULL DEFAULT false,
    sort_order integer NOT NULL DEFAULT 9999,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `INSERT INTO strategy_definitions (name, title, description, parameters, built_in, sort_order) VALUES
    ('default', 'Standard', 'On for everyone', '[]', true, 0),
    ('flexibleRollout', 'Gradual rollout', 'Gradual rollout to a percentage of users, sticky on a context field',
      '[{"name":"rollout","type":"percentage","description":"Percentage of users to enable the flag for","required":false},
        {"name":"stickiness","type":"string","description":"The context field a user''s bucket is computed from","required":false},
        {"name":"groupId","type":"string","description":"Flags with the same group id bucket users alike","required":false}]',
      true, 1),
    ('userWithId', 'UserIDs', 'On for the listed user ids',
      '[{"name":"userIds","type":"list","description":"User ids to enable the flag for","required":true}]', true, 2),
    ('remoteAddress', 'IPs', 'On for the listed IP addresses',
      '[{"name":"IPs","type":"list","description":"IP addresses to enable the flag for","required":true}]', true, 3),
    ('applicationHostname', 'Hosts', 'On for the listed host names',
      '[{"name":"hostNames","type":"list","description":"Host names to enable the flag for","required":true}]', true, 4)`,
  `ALTER TABLE feature_strategies ADD CONSTRAINT feature_strategies_strategy_name_fkey
    FOREIGN KEY (strategy_name) REFERENCES strategy_definitions (name)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) {
    await sql.raw(statement).execute(db);
  }
}
