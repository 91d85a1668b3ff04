import { SMTPServer } from 'smtp-server';

/** What a test's SMTP server received: the envelope's recipients and the raw message. */
export interface ReceivedMail {
  to: string[];
  raw: string;
}

/**
 * A real SMTP server (smtp-server from npm) on a free port of 127.0.0.1, keeping what it is sent. `hold` keeps each
 * message's acceptance back until the promise it returns settles, as a distant relay is slow to accept.
 */
export async function startSmtpReceiver(): Promise<{
  port: number;
  received: ReceivedMail[];
  hold: { until?: Promise<void> };
  close(): Promise<void>;
}> {
  const received: ReceivedMail[] = [];
  const hold: { until?: Promise<void> } = {};
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        void (hold.until ?? Promise.resolve()).then(() => {
          received.push({ to: session.envelope.rcptTo.map((recipient) => recipient.address), raw: Buffer.concat(chunks).toString('utf8') });
          callback();
        });
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };
  return { port, received, hold, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
