import { createTransport } from 'nodemailer';

/** An SMTP server to send through (the server's configuration, EMAIL_*). */
export interface MailerOptions {
  host: string;
  port: number;
  /** TLS from the start (port 465); otherwise STARTTLS when the server offers it. */
  secure: boolean;
  user?: string;
  password?: string;
  sender: string;
}

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

/** How long one message may take, connection included: a slow SMTP server must not hold a request. */
const SEND_TIMEOUT_MS = 10_000;

/** Sends mail through the SMTP server with nodemailer; the password stays in the transport, never in a log. */
export function createMailer(options: MailerOptions): Mailer {
  const transport = createTransport({
    host: options.host,
    port: options.port,
    secure: options.secure,
    ...(options.user ? { auth: { user: options.user, pass: options.password } } : {}),
    connectionTimeout: SEND_TIMEOUT_MS,
    greetingTimeout: SEND_TIMEOUT_MS,
    socketTimeout: SEND_TIMEOUT_MS,
  });
  return {
    async send(mail) {
      await transport.sendMail({ from: options.sender, ...mail });
    },
    close: () => transport.close(),
  };
}
