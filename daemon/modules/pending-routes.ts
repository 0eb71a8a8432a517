// Endpoints of the interface spec that are registered (so they appear in /openapi.json and answer
// with a clear sentence) but not built yet. Each answers 501; the README lists them.
// When an area is built, its rows leave this table and move to the area's routes.ts.
import { Type } from '@sinclair/typebox';
import type { App } from '../app-types.ts';
import { NotImplementedError } from '../errors.ts';
import type { Access } from '../plugins/access.ts';
import { ErrorBody } from '../../shared/schemas/common.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
interface PendingRoute {
  method: Method;
  url: string;
  access: Access;
}

export interface PendingArea {
  tag: string;
  reason: string;
  routes: PendingRoute[];
}

/** Empty: every area of the spec is built. An area added later lists its routes here until it is. */
export const PENDING_AREAS: PendingArea[] = [];

export function registerPendingRoutes(app: App, areas: PendingArea[] = PENDING_AREAS): void {
  for (const area of areas) {
    for (const route of area.routes) {
      app.route({
        method: route.method,
        url: route.url,
        config: { access: route.access },
        schema: {
          tags: [area.tag],
          summary: `Not implemented yet: ${area.reason}`,
          ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { body: Type.Unknown() }),
          response: { 501: ErrorBody },
        },
        handler: async () => {
          throw new NotImplementedError(`${route.method} ${route.url} is not implemented yet. ${area.reason}`);
        },
      });
    }
  }
}
