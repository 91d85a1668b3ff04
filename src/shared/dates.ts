/** A stored instant as the API writes it (ISO 8601, UTC), or null for none. */
export const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);
