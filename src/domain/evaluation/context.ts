/**
 * The context an evaluation reads, in the SDKs' shape: the standard fields, any other field by name, and
 * `properties`. Values arrive from requests, so nothing here trusts their types.
 */
export interface EvaluationContext {
  userId?: string;
  sessionId?: string;
  remoteAddress?: string;
  environment?: string;
  appName?: string;
  currentTime?: Date | string;
  properties?: Record<string, unknown>;
  [field: string]: unknown;
}

/**
 * A field's value as the SDKs resolve it: the field itself, else the property of that name, as a string.
 * Deliberately the same lookup as theirs (a field named like an object member resolves to it, as in the SDK).
 */
export function contextValue(context: EvaluationContext, field: string): string | undefined {
  const value = context[field] ?? (context.properties as Record<string, unknown> | undefined)?.[field];
  return value !== undefined && value !== null ? String(value) : undefined;
}
