/** What a command printed and how it ends, so that a test reads it as a user would. */
export interface CommandOutcome {
  stdout: string;
  stderr: string;
  exitCode: number;
}
