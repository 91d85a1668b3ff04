import { trace } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Who made the request, as a trace may say it: a kind, never a token or a person's name. */
function actorKind(request: FastifyRequest): string {
  const { actor } = request;
  if (actor) return 'via' in actor && actor.via ? `${actor.kind} via agent` : actor.kind;
  if (request.sdkToken) return `${request.sdkToken.type}-token`;
  return 'anonymous';
}

/**
 * Names each request's span (made by OpenTelemetry's HTTP instrumentation) by its route pattern, as the conventions
 * ask (never the URL: names and ids would make every span a name of its own), and records the actor's kind. Does
 * nothing while telemetry is off: there is no recording span then.
 */
export function registerRequestTracing(app: FastifyInstance): void {
  app.addHook('onSend', (request, _reply, payload, done) => {
    const span = trace.getActiveSpan();
    if (span?.isRecording()) {
      const route = request.routeOptions.url;
      if (route) span.updateName(`${request.method} ${route}`).setAttribute('http.route', route);
      span.setAttribute('vexil.actor.kind', actorKind(request));
    }
    done(null, payload);
  });
}
