import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Clock } from '../../shared/clock.js';

/** One MCP client's session on this instance: its protocol server and transport, and whose credential opened it. */
export interface McpSession {
  id: string;
  /** The identity that opened it (`user:<id>`, `token:<id>`): no other may use it. */
  owner: string;
  server: Server;
  transport: StreamableHTTPServerTransport;
  lastUsedAt: number;
}

export interface McpLimits {
  /** Open sessions per identity; opening one more ends that identity's least recently used. */
  sessionsPerOwner: number;
  /** Open sessions on the instance; past it, sessions idle the longest end first, and a new one is refused when none is idle. */
  sessions: number;
  /** A session unused this long is ended. */
  idleMs: number;
  /** Tool calls per identity per minute. */
  toolCallsPerMinute: number;
}

export const MCP_LIMITS: McpLimits = { sessionsPerOwner: 10, sessions: 500, idleMs: 30 * 60_000, toolCallsPerMinute: 120 };

/**
 * The MCP sessions an instance holds, bounded per identity and in all, and each identity's tool calls of the last
 * minute. Sessions live in this process: a client whose session another instance holds (or one that restarted) gets
 * MCP's 404 and opens a new one, as the protocol asks of clients.
 */
export class McpSessions {
  readonly #sessions = new Map<string, McpSession>();
  readonly #calls = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    readonly limits: McpLimits = MCP_LIMITS,
  ) {}

  /** The session of this id for this owner, marked as used; undefined when it is unknown, ended or another's. */
  use(id: string, owner: string): McpSession | undefined {
    const session = this.#sessions.get(id);
    if (!session || session.owner !== owner) return undefined;
    session.lastUsedAt = this.clock.now().getTime();
    return session;
  }

  /** Whether a new session may open now: idle ones are ended first to make room. */
  makeRoom(owner: string): boolean {
    const now = this.clock.now().getTime();
    for (const session of this.#sessions.values()) {
      if (now - session.lastUsedAt > this.limits.idleMs) this.end(session);
    }
    const owned = [...this.#sessions.values()].filter((session) => session.owner === owner);
    if (owned.length >= this.limits.sessionsPerOwner) this.end(owned.sort((a, b) => a.lastUsedAt - b.lastUsedAt)[0]!);
    return this.#sessions.size < this.limits.sessions;
  }

  add(session: Omit<McpSession, 'lastUsedAt'>): void {
    this.#sessions.set(session.id, { ...session, lastUsedAt: this.clock.now().getTime() });
  }

  /** Forgets a session the client ended or the transport closed. */
  forget(id: string): void {
    this.#sessions.delete(id);
  }

  /** Counts a tool call of `owner`; false when it is over its calls of the last minute. */
  takeToolCall(owner: string): boolean {
    const now = this.clock.now().getTime();
    const recent = (this.#calls.get(owner) ?? []).filter((at) => now - at < 60_000);
    if (recent.length >= this.limits.toolCallsPerMinute) {
      this.#calls.set(owner, recent);
      return false;
    }
    recent.push(now);
    this.#calls.set(owner, recent);
    if (this.#calls.size > this.limits.sessions * 4) this.#forgetQuietCallers(now);
    return true;
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Ends every session (shutdown). */
  async close(): Promise<void> {
    await Promise.all([...this.#sessions.values()].map((session) => this.end(session)));
  }

  private end(session: McpSession): Promise<void> {
    this.#sessions.delete(session.id);
    return session.server.close().catch(() => undefined);
  }

  #forgetQuietCallers(now: number): void {
    for (const [owner, calls] of this.#calls) if (calls.every((at) => now - at >= 60_000)) this.#calls.delete(owner);
  }
}
