import { hostname } from 'node:os';
import { Address4 } from 'ip-address';
import type { ClientStrategy } from '../client-features/environment-configuration.js';
import type { EvaluationContext } from './context.js';
import { contextValue } from './context.js';
import { RolloutGroup } from './buckets.js';
import { NEVER, type Predicate } from './constraints.js';

/** A list parameter as the SDKs split it: on commas, with the spaces around them. */
const listOf = (text: string): string[] => text.split(/\s*,\s*/);

/** The host this process runs on, as the SDK names it for `applicationHostname`. */
const HOSTNAME = (process.env.HOSTNAME || hostname() || 'undefined').toLowerCase();

const ALWAYS: Predicate = () => true;

/** A percentage parameter as a number; the SDKs turn strategies with a non-positive one off. */
const percentageOf = (value: unknown): number => Number(value);

function flexibleRollout(parameters: Record<string, string>): Predicate {
  const percentage = percentageOf(parameters.rollout);
  if (!(percentage > 0)) return NEVER;
  const stickiness = parameters.stickiness || 'default';
  const random = () => `${Math.round(Math.random() * 10000) + 1}`;
  const stickinessOf: (context: EvaluationContext) => unknown =
    stickiness === 'default'
      ? (context) => context.userId || context.sessionId || random()
      : stickiness === 'random'
        ? random
        : (context) => contextValue(context, stickiness);
  if (!parameters.groupId) {
    // Without a groupId, the SDK groups by a `featureToggle` field of the context, if any.
    return (context) => {
      const id = stickinessOf(context);
      return id ? new RolloutGroup(context.featureToggle || '').percentile(id) <= percentage : false;
    };
  }
  const group = new RolloutGroup(parameters.groupId);
  if (stickiness === 'default') {
    // The common case, without the indirection of the general one.
    return (context) => {
      const id = context.userId || context.sessionId || random();
      return group.percentile(id) <= percentage;
    };
  }
  return (context) => {
    const id = stickinessOf(context);
    return id ? group.percentile(id) <= percentage : false;
  };
}

function gradualRollout(field: 'userId' | 'sessionId') {
  return (parameters: Record<string, string>): Predicate => {
    const percentage = percentageOf(parameters.percentage);
    if (!(percentage > 0)) return NEVER;
    const group = new RolloutGroup(parameters.groupId || '');
    return (context) => {
      const id = context[field];
      return id ? group.percentile(id) <= percentage : false;
    };
  };
}

function gradualRolloutRandom(parameters: Record<string, string>): Predicate {
  const percentage = percentageOf(parameters.percentage);
  return () => percentage >= Math.floor(Math.random() * 100) + 1;
}

function userWithId(parameters: Record<string, string>): Predicate {
  const ids = new Set<unknown>(parameters.userIds ? listOf(parameters.userIds) : []);
  return (context) => context.userId !== undefined && ids.has(context.userId);
}

function remoteAddress(parameters: Record<string, string>): Predicate {
  if (!parameters.IPs) return NEVER;
  const ranges = listOf(parameters.IPs).map((range) => {
    try {
      return { range, subnet: new Address4(range) as Address4 | undefined };
    } catch {
      return { range, subnet: undefined };
    }
  });
  return (context) => {
    let address: Address4 | null | undefined;
    for (const { range, subnet } of ranges) {
      if (range === context.remoteAddress) return true;
      if (!subnet) continue;
      if (address === undefined) {
        try {
          address = new Address4(context.remoteAddress || '');
        } catch {
          address = null;
        }
      }
      if (address?.isInSubnet(subnet)) return true;
    }
    return false;
  };
}

function applicationHostname(parameters: Record<string, string>): Predicate {
  if (!parameters.hostNames) return NEVER;
  return listOf(parameters.hostNames.toLowerCase()).includes(HOSTNAME) ? ALWAYS : NEVER;
}

/** The strategies every official SDK knows, compiled from their parameters. */
const BUILT_IN: Record<string, (parameters: Record<string, string>) => Predicate> = {
  default: () => ALWAYS,
  flexibleRollout,
  gradualRolloutUserId: gradualRollout('userId'),
  gradualRolloutSessionId: gradualRollout('sessionId'),
  gradualRolloutRandom,
  userWithId,
  remoteAddress,
  applicationHostname,
};

/** Whether every official SDK knows the strategy (else it is a custom one, needing a definition to be stored). */
export const isBuiltInStrategy = (name: string): boolean => Object.hasOwn(BUILT_IN, name);

/**
 * A strategy's own rule (its constraints aside), or `undefined` for a custom strategy: the SDKs skip a
 * strategy they have no implementation for, so it never turns a flag on.
 */
export function compileStrategyRule(strategy: Pick<ClientStrategy, 'name' | 'parameters'>): Predicate | undefined {
  const compile = isBuiltInStrategy(strategy.name) ? BUILT_IN[strategy.name] : undefined;
  return compile?.(strategy.parameters ?? {});
}
