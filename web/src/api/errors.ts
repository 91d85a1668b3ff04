/** An answer of the API in Unleash's error format, kept whole so the page can show each detail by its field. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: Array<{ message: string; path?: string }> = [],
  ) {
    super(message);
  }

  /** The detail about one field of a body (`/body/name` or `/body/name/...`), if the API named it. */
  about(field: string): string | undefined {
    const path = `/body/${field}`;
    return this.details.find((detail) => detail.path === path || detail.path?.startsWith(`${path}/`))?.message;
  }
}

/** Called when the API answers 401: the session ended, so the app goes back to the sign-in page. */
let onSignedOut: () => void = () => {};
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

export function signedOut(): void {
  onSignedOut();
}
