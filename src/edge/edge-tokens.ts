import type { SdkToken } from '../domain/access/authenticate.js';
import { hashToken } from '../shared/secrets.js';
import type { BackedUpToken } from './edge-backup.js';
import { UpstreamUnavailable, type UpstreamClient, type UpstreamToken } from './upstream-client.js';

/** What the edge knows of a token a request came with. */
export type TokenCheck =
  | { kind: 'valid'; token: SdkToken; scope: Omit<UpstreamToken, 'token'> }
  | { kind: 'invalid' }
  /** The upstream could not be asked, and the token was not known before. */
  | { kind: 'unavailable' };

/** How the edge's access check asks about a token: the upstream's tokens (EdgeTokens), or offline mode's own. */
export interface TokenChecker {
  check(secret: string): Promise<TokenCheck>;
  byHash(hash: string): TokenCheck;
  /** What `check` would answer at once, without asking anyone: only for a token already trusted. */
  trusted(secret: string): Extract<TokenCheck, { kind: 'valid' }> | undefined;
  /** The tokens it serves, as Unleash Edge's `/internal-backstage/tokens` lists them (their secrets masked). */
  listed(): { tokens: BackstageToken[]; invalidCount: number };
}

/** A token as Unleash Edge's backstage shows one: its scope, and `****` where its secret is. */
export interface BackstageToken {
  token: string;
  type: 'backend' | 'frontend';
  environment: string;
  projects: string[];
  status: 'Validated' | 'Trusted';
}

/**
 * A token's visible part, `<project>:<environment>.****`. Unleash Edge shows six characters of the secret at each
 * end; Vexil shows none, since anyone who reaches the backstage can read it.
 */
export function maskedToken(scope: Pick<UpstreamToken, 'environment' | 'projects'>): string {
  const project = scope.projects.length === 1 ? scope.projects[0]! : scope.projects.includes('*') ? '*' : '[]';
  return `${project}:${scope.environment}.****`;
}

const backstageToken = (scope: Omit<UpstreamToken, 'token'>, status: BackstageToken['status']): BackstageToken => ({
  token: maskedToken(scope),
  type: scope.type === 'frontend' ? 'frontend' : 'backend',
  environment: scope.environment,
  projects: scope.projects,
  status,
});

interface KnownToken {
  sdkToken: SdkToken;
  scope: Omit<UpstreamToken, 'token'>;
  /** What `check` answers for it, made once. */
  check: Extract<TokenCheck, { kind: 'valid' }>;
  /** Absent for a token restored from a backup, known by its hash until a request brings it again. */
  secret?: string;
}

/** A token the upstream refused is refused without asking again for this long. */
const REFUSED_FOR_MS = 60_000;
/** Tokens remembered as refused at most; past this the memory starts anew (an attacker's random tokens). */
const MAX_REFUSED = 10_000;
/** Tokens asked about in one request to the upstream, as its `/edge/validate` bounds them. */
const VALIDATE_BATCH = 100;

/**
 * The tokens the edge serves: each checked with the upstream the first time a request brings it (requests that
 * arrive together share one check), then trusted, and checked again on the revalidation interval. Kept by their
 * hash, so the backup can hold them without their secrets.
 */
/** Secrets remembered at most (tokens of the requests seen); past this the memory starts anew, and hashes are computed again. */
const MAX_REMEMBERED_SECRETS = 10_000;

export class EdgeTokens implements TokenChecker {
  private readonly known = new Map<string, KnownToken>();
  /** Known tokens by their secret, so a request costs no hash (SDKs poll every few seconds with the same token). */
  private readonly bySecret = new Map<string, KnownToken>();
  private readonly refused = new Map<string, number>();
  private readonly checking = new Map<string, Promise<TokenCheck>>();
  /** Hashes of the PRETRUSTED_TOKENS. */
  private readonly pretrusted = new Set<string>();
  private nextId = 1;

  constructor(
    private readonly upstream: UpstreamClient,
    private readonly now: () => number,
  ) {}

  private remember(hash: string, scope: Omit<UpstreamToken, 'token'>, secret?: string): KnownToken {
    const existing = this.known.get(hash);
    const projects = scope.projects.includes('*') ? '*' : scope.projects;
    const sdkToken: SdkToken = {
      id: existing?.sdkToken.id ?? this.nextId++,
      type: scope.type,
      environment: scope.environment,
      projects,
      expiresAt: null,
    };
    const known = { type: scope.type, environment: scope.environment, projects: scope.projects };
    const knownSecret = secret ?? existing?.secret;
    const entry: KnownToken = {
      sdkToken,
      scope: known,
      check: { kind: 'valid', token: sdkToken, scope: known },
      ...(knownSecret ? { secret: knownSecret } : {}),
    };
    this.known.set(hash, entry);
    if (knownSecret && this.bySecret.has(knownSecret)) this.bySecret.set(knownSecret, entry);
    return entry;
  }

  /** Tokens served without asking the upstream (PRETRUSTED_TOKENS): never revalidated, never forgotten. */
  trust(tokens: Array<{ secret: string; environment: string; projects: string[] }>): void {
    for (const { secret, environment, projects } of tokens) {
      const hash = hashToken(secret);
      this.remember(hash, { type: 'frontend', environment, projects }, secret);
      this.pretrusted.add(hash);
    }
  }

  /** Tokens a backup knew: served (while the upstream is away too) by their hash. */
  restore(tokens: BackedUpToken[]): void {
    for (const { tokenHash, ...scope } of tokens) this.remember(tokenHash, scope);
  }

  backedUp(): BackedUpToken[] {
    return [...this.known].map(([tokenHash, { scope }]) => ({ tokenHash, ...scope }));
  }

  byHash(hash: string): TokenCheck {
    return this.known.get(hash)?.check ?? { kind: 'invalid' };
  }

  listed(): { tokens: BackstageToken[]; invalidCount: number } {
    const tokens = [...this.known].map(([hash, { scope }]) => backstageToken(scope, this.pretrusted.has(hash) ? 'Trusted' : 'Validated'));
    return { tokens, invalidCount: this.refused.size };
  }

  trusted(secret: string): Extract<TokenCheck, { kind: 'valid' }> | undefined {
    return this.bySecret.get(secret)?.check;
  }

  async check(secret: string): Promise<TokenCheck> {
    const remembered = this.trusted(secret);
    if (remembered) return remembered;
    const hash = hashToken(secret);
    const entry = this.known.get(hash);
    if (entry) {
      entry.secret ??= secret;
      if (this.bySecret.size >= MAX_REMEMBERED_SECRETS) this.bySecret.clear();
      this.bySecret.set(secret, entry);
      return entry.check;
    }
    const refusedUntil = this.refused.get(hash);
    if (refusedUntil !== undefined && refusedUntil > this.now()) return { kind: 'invalid' };
    let checking = this.checking.get(hash);
    if (!checking) {
      checking = this.ask(hash, secret).finally(() => this.checking.delete(hash));
      this.checking.set(hash, checking);
    }
    return checking;
  }

  private async ask(hash: string, secret: string): Promise<TokenCheck> {
    let valid: UpstreamToken[];
    try {
      valid = await this.upstream.validate([secret]);
    } catch (error) {
      if (error instanceof UpstreamUnavailable) return { kind: 'unavailable' };
      throw error;
    }
    const scope = valid.find((token) => token.token === secret);
    if (!scope) {
      if (this.refused.size >= MAX_REFUSED) this.refused.clear();
      this.refused.set(hash, this.now() + REFUSED_FOR_MS);
      return { kind: 'invalid' };
    }
    return this.remember(hash, scope, secret).check;
  }

  /**
   * Asks the upstream about every token the edge holds the secret of; those it no longer knows are forgotten and
   * returned (their hashes). Nothing changes while the upstream is away.
   */
  async revalidate(): Promise<string[]> {
    const held = [...this.known].filter(([hash, entry]) => entry.secret !== undefined && !this.pretrusted.has(hash));
    const forgotten: string[] = [];
    for (let start = 0; start < held.length; start += VALIDATE_BATCH) {
      const batch = held.slice(start, start + VALIDATE_BATCH);
      const valid = await this.upstream.validate(batch.map(([, entry]) => entry.secret!));
      const scopes = new Map(valid.map((token) => [token.token, token]));
      for (const [hash, entry] of batch) {
        const scope = scopes.get(entry.secret!);
        if (scope) this.remember(hash, scope);
        else {
          this.known.delete(hash);
          this.bySecret.delete(entry.secret!);
          forgotten.push(hash);
        }
      }
    }
    return forgotten;
  }
}

/** A token as Unleash and Vexil write them: `<project, * or []>:<environment>.<secret>`. */
const TOKEN_PARTS = /^([^:]+):([^.]+)\./;

/**
 * Offline mode's tokens: those given in CLIENT_TOKENS and FRONTEND_TOKENS, taken without asking anyone, each seeing
 * the project its name gives (all of them for `*` and `[]`).
 */
export class OfflineTokens implements TokenChecker {
  private readonly known = new Map<string, Extract<TokenCheck, { kind: 'valid' }>>();

  constructor(
    tokens: { client: string[]; frontend: string[] },
    pretrusted: Array<{ secret: string; environment: string; projects: string[] }> = [],
  ) {
    const given = (['client', 'frontend'] as const).flatMap((type) =>
      tokens[type].map((secret) => {
        const [, project, environment] = TOKEN_PARTS.exec(secret) ?? [];
        const projects = !project || project === '*' || project === '[]' ? ['*'] : [project];
        return { type, secret, environment: environment ?? 'default', projects };
      }),
    );
    const all = [...given, ...pretrusted.map((token) => ({ ...token, type: 'frontend' as const }))];
    for (const [index, { type, secret, environment, projects }] of all.entries()) {
      const token: SdkToken = { id: index + 1, type, environment, projects: projects.includes('*') ? '*' : projects, expiresAt: null };
      this.known.set(hashToken(secret), { kind: 'valid', token, scope: { type, environment, projects } });
    }
  }

  async check(secret: string): Promise<TokenCheck> {
    return this.trusted(secret) ?? { kind: 'invalid' };
  }

  trusted(secret: string): Extract<TokenCheck, { kind: 'valid' }> | undefined {
    return this.known.get(hashToken(secret));
  }

  byHash(hash: string): TokenCheck {
    return this.known.get(hash) ?? { kind: 'invalid' };
  }

  listed(): { tokens: BackstageToken[]; invalidCount: number } {
    return { tokens: [...this.known.values()].map((check) => backstageToken(check.scope, 'Trusted')), invalidCount: 0 };
  }
}
