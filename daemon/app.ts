// buildApp(deps): every plugin and module, no listen. main.ts listens; tests use app.inject().
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { App, AppDeps, ModuleDeps } from './app-types.ts';
import errorsPlugin, { sendError } from './plugins/errors.ts';
import finiteNumbersPlugin from './plugins/finite-numbers.ts';
import jsonBodyPlugin from './plugins/json-body.ts';
import requestBodyPlugin, { NO_BODY_LIMIT_BYTES } from './plugins/request-body.ts';
import { ApiError } from './errors.ts';
import authPlugin, { credentialStillValid } from './plugins/auth.ts';
import rateLimitPlugin from './plugins/rate-limit.ts';
import { initModels } from './modules/models.ts';
import { isHealthPoll } from './logging.ts';
import { ErrorBody } from '../shared/schemas/common.ts';
import type { TlsPair } from './tls.ts';
import { componentName, describeOperation } from './openapi.ts';
import healthRoutes from './modules/health/routes.ts';
import metricsRoutes from './modules/metrics/routes.ts';
import { createEventLoopMonitor } from './modules/metrics/event-loop.ts';
import { createNodeMetrics, type NodeMetrics } from './modules/metrics/registry.ts';
import authRoutes from './modules/auth/routes.ts';
import tenantRoutes from './modules/tenants/routes.ts';
import platformRoutes from './modules/platform/routes.ts';
import outboundQueueRoutes from './modules/outbound-queue/routes.ts';
import shapingRoutes from './modules/shaping/routes.ts';
import ipPoolRoutes from './modules/ip-pools/routes.ts';
import tlsReportRoutes from './modules/tls-reports/routes.ts';
import systemMailRoutes from './modules/system-mail/routes.ts';
import webhookRoutes from './modules/webhooks/routes.ts';
import inboundRoutes from './modules/inbound/routes.ts';
import keptReportRoutes from './modules/inbound/kept-report-routes.ts';
import inboundRoutingRoutes from './modules/inbound-routing/routes.ts';
import domainRoutes from './modules/domains/routes.ts';
import dmarcRoutes from './modules/dmarc/routes.ts';
import deliverabilityRoutes from './modules/deliverability/routes.ts';
import contactRoutes from './modules/contacts/routes.ts';
import billingRoutes from './modules/billing/routes.ts';
import campaignRoutes from './modules/campaigns/routes.ts';
import emailRoutes from './modules/emails/routes.ts';
import suppressionRoutes from './modules/suppressions/routes.ts';
import projectRoutes from './modules/projects/routes.ts';
import scheduledRoutes from './modules/scheduled/routes.ts';
import trackingRoutes from './modules/tracking/routes.ts';
import pageRoutes from './modules/pages/routes.ts';
import emailLogStreamRoutes from './modules/emails/stream-routes.ts';
import templateRoutes from './modules/templates/routes.ts';
import sendTemplateRoutes from './modules/templates/send-template-routes.ts';
import { createTenantStateCache } from './modules/tenants/state-cache.ts';
import { createAcceptGroups } from './modules/emails/accept-groups.ts';
import { createReadinessMemo } from './modules/health/service.ts';
import { closeMailResources } from './mail/resources.ts';
import { createMailResources } from './modules/mail-resources.ts';
import { quotaHeaders, quotaOfRow } from './modules/quota/service.ts';
import { createLazySchemas, type LazySchemas } from './plugins/lazy-schemas.ts';

/** Longest path parameter accepted: tracking and unsubscribe tokens (a click token carries its URL). */
const TRACKING_TOKEN_MAX_LENGTH = 8200;

export interface BuildAppOptions {
  /** Pino logger options, or false to stay quiet (tests). */
  logger?: boolean | Record<string, unknown>;
  /** Serve HTTPS with this pair: HTTP/2 where the client offers it (ALPN), HTTP/1.1 otherwise. */
  tls?: TlsPair | null;
  /** A logger made by the caller (main.ts: readable lines in a terminal); wins over `logger`. */
  loggerInstance?: FastifyBaseLogger;
}

/** Keys whose values never reach a log line. */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'password',
  'newPassword',
  'currentPassword',
  'refreshToken',
  'accessToken',
  'secret',
];

/** Each app's route schemas, compiled on first use (plugins/lazy-schemas.ts). */
const routeSchemas = new WeakMap<App, LazySchemas>();

/** Each app's Prometheus registry: main.ts serves it on METRICS_PORT (modules/metrics/listener.ts). */
const appMetrics = new WeakMap<App, NodeMetrics>();

export function metricsOf(app: App): NodeMetrics | null {
  return appMetrics.get(app) ?? null;
}

/** Compiles every route schema no request has needed yet (tests: each one compiles). */
export function compileRouteSchemas(app: App): void {
  routeSchemas.get(app)?.compileAll();
}

export async function buildApp(appDeps: AppDeps, options: BuildAppOptions = {}): Promise<App> {
  initModels(appDeps.db.sequelize);
  const schemas = createLazySchemas();
  const logger =
    options.logger === undefined ? { level: appDeps.config.logLevel, redact: REDACTED_LOG_PATHS } : options.logger;
  // Typed as a plain object: Fastify's typings pick the http or http2 server type from this literal, while
  // every module is written against the HTTP/1 request types that the compatibility layer also provides.
  const tls: object = options.tls
    ? { http2: true as const, https: { allowHTTP1: true, cert: options.tls.cert, key: options.tls.key } }
    : {};
  const app = Fastify({
    ...tls,
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger }),
    // Health polls are logged at debug by the hook below, not as two info lines each.
    logController: new LogController({
      disableRequestLogging: (request: { url?: string }) => isHealthPoll(request.url),
    }),
    // Each route's own limit is set as it is declared (plugins/request-body.ts); this one is the
    // unknown routes' (whose bodies are not read) and the default of content-type parsers.
    bodyLimit: NO_BODY_LIMIT_BYTES,
    // Under routerOptions: the top-level option is deprecated (a FastifyWarning at boot).
    routerOptions: { maxParamLength: TRACKING_TOKEN_MAX_LENGTH },
    trustProxy: appDeps.config.trustProxy,
    // Fastify answers a malformed URL before routing, outside the error handler: keep the envelope.
    frameworkErrors: (error, _request, reply) =>
      sendError(
        reply,
        error.code === 'FST_ERR_BAD_URL'
          ? new ApiError(400, 'BAD_URL', 'The request URL is malformed.')
          : new ApiError(400, 'BAD_REQUEST', 'The request could not be routed.'),
      ),
    ajv: {
      customOptions: { allErrors: true, coerceTypes: 'array', useDefaults: true, removeAdditional: false },
    },
    schemaController: { compilersFactory: schemas.compilersFactory },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  routeSchemas.set(app, schemas);

  // State the modules share for the life of this app (tenants/state-cache.ts, emails/accept-groups.ts,
  // mail/resources.ts): created here, never at import, and closed with the app.
  // The embedded PGlite is one session: it cannot deliver another session's NOTIFY, the TTL serves.
  const tenantState = await createTenantStateCache({
    sql: appDeps.db.sql,
    listenUrl: appDeps.db.embedded ? null : appDeps.db.url,
    onListenError: (error) =>
      app.log.warn({ err: error }, 'tenant state cache: LISTEN lost, retrying (entries expire on their own meanwhile)'),
  });
  app.addHook('onClose', async () => tenantState.close());
  const mail = createMailResources(appDeps.config, appDeps.secrets, appDeps.db.sequelize, appDeps.dkimSigning, app.log);
  app.addHook('onClose', async () => closeMailResources(mail));
  const eventLoop = createEventLoopMonitor();
  // The node's Prometheus registry (modules/metrics/registry.ts): this app's, none at import.
  const metrics = createNodeMetrics({ config: appDeps.config, db: appDeps.db, eventLoop, log: app.log });
  // Measured from the moment the app serves: loading modules and migrating at boot are not stalls.
  app.addHook('onReady', async () => {
    eventLoop.reset();
    metrics.startSampling();
  });
  app.addHook('onClose', async () => {
    metrics.close();
    eventLoop.close();
  });
  appMetrics.set(app, metrics);
  const deps: ModuleDeps = {
    ...appDeps,
    ...mail,
    tenantState,
    acceptGroups: createAcceptGroups(appDeps.db.sql),
    readiness: createReadinessMemo(),
    eventLoop,
    metrics,
  };

  app.addSchema(ErrorBody);
  app.addHook('onResponse', async (request, reply) => {
    // One histogram observe per request: O(1), labels bounded by the route table.
    metrics.observeRequest(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime);
    if (isHealthPoll(request.url))
      request.log.debug(
        { url: request.url, statusCode: reply.statusCode, responseTime: reply.elapsedTime },
        'health poll',
      );
  });
  // JSON only: a text/plain body on a JSON route is a 415, not a string that fails validation.
  // Scopes that accept other types (inbound, tracking, billing) add their own parser.
  app.removeContentTypeParser('text/plain');
  await app.register(errorsPlugin);
  await app.register(finiteNumbersPlugin);
  await app.register(jsonBodyPlugin);
  await app.register(requestBodyPlugin);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'svc transactional email API',
        version: '1.0.0',
        description:
          'Multi-tenant transactional email: sends, templates, domains, webhooks. Errors share one body (ErrorBody).',
      },
      servers: [{ url: deps.config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'An admin access token (JWT) or an API key (svc_live_… / svc_test_…).',
          },
        },
      },
    },
    refResolver: { buildLocalReference: componentName },
    transform: ({ schema, url, route }) => ({
      schema: describeOperation(
        schema as Record<string, unknown>,
        [route.method].flat()[0],
        url,
        route.config?.access,
      ) as typeof schema,
      url,
    }),
  });
  await app.register(authPlugin, {
    jwtSecret: deps.secrets.jwtSecret,
    cache: tenantState,
    sequelize: deps.db.sequelize,
  });
  app.addHook('onSend', async (request, reply) => {
    // This node's own changes to tenants and keys apply from its next request on: what it cached is
    // dropped before the answer of a successful write by an admin session leaves. API keys cannot
    // change any of it; public routes (billing and inbound webhooks, at their own rate) change plans,
    // cycles and pauses, which the accept statement re-checks and NOTIFY announces.
    const write = request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'OPTIONS';
    if (write && reply.statusCode < 400 && request.principal?.kind === 'admin') tenantState.forgetAll();
    // Spec §8: X-Quota-* on each answer of a tenant-scoped route, from the cached state (a send's
    // answer already carries its own, taken right after its reservation).
    if (!request.tenant || reply.hasHeader('x-quota-limit')) return;
    const quota =
      tenantState.cachedQuota(request.tenant.tenantId) ??
      (await tenantState.tenant(request.tenant.tenantId).then(
        (state) => (state ? quotaOfRow(state.row) : null),
        () => null,
      ));
    if (quota) reply.headers(quotaHeaders(quota));
  });
  await app.register(rateLimitPlugin, {
    max: deps.config.rateLimitMax,
    windowMs: deps.config.rateLimitWindowMs,
    authMax: deps.config.authRateLimitMax,
    authWindowMs: deps.config.authRateLimitWindowMs,
    redis: deps.redis,
    namespace: deps.redisPrefix,
  });

  app.get('/openapi.json', { config: { access: { kind: 'public' } }, schema: { hide: true } }, async () =>
    app.swagger(),
  );

  await app.register(healthRoutes, deps);
  await app.register(metricsRoutes, deps);
  await app.register(authRoutes, deps);
  await app.register(tenantRoutes, deps);
  await app.register(platformRoutes, deps);
  await app.register(outboundQueueRoutes, deps);
  await app.register(shapingRoutes, deps);
  await app.register(ipPoolRoutes, deps);
  await app.register(tlsReportRoutes, deps);
  await app.register(systemMailRoutes, deps);
  await app.register(webhookRoutes, deps);
  await app.register(inboundRoutes, deps);
  await app.register(keptReportRoutes, deps);
  await app.register(inboundRoutingRoutes, deps);
  await app.register(domainRoutes, deps);
  await app.register(dmarcRoutes, deps);
  await app.register(deliverabilityRoutes, deps);
  await app.register(contactRoutes, deps);
  await app.register(billingRoutes, deps);
  await app.register(campaignRoutes, deps);
  await app.register(emailRoutes, deps);
  await app.register(suppressionRoutes, deps);
  await app.register(projectRoutes, deps);
  await app.register(scheduledRoutes, deps);
  await app.register(trackingRoutes, deps);
  await app.register(pageRoutes, deps);
  await app.register(emailLogStreamRoutes, {
    ...deps,
    credentialStillValid: (request) =>
      credentialStillValid(app, { cache: tenantState, sequelize: deps.db.sequelize }, request),
  });
  await app.register(templateRoutes, deps);
  await app.register(sendTemplateRoutes, deps);
  return app;
}
