// GET/PATCH /platform/settings (platform admins only).
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { adminIdOf } from '../../access.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';
import { PlatformSettingsBody, UpdatePlatformSettingsBody } from '../../../shared/schemas/platform.ts';
import { readPlatformSettings, updatePlatformSettings } from './service.ts';
import { runDoctor } from '../doctor/service.ts';
import { DoctorReport } from '../../../shared/schemas/doctor.ts';

export default async function platformRoutes(app: App, deps: ModuleDeps): Promise<void> {
  const tags = ['platform'];
  const config = { access: access.session({ tenant: false, platformAdmin: true }) };
  const errors = { 401: ErrorBody, 403: ErrorBody };
  const sequelize = deps.db.sequelize;

  app.get(
    '/platform/settings',
    {
      config,
      schema: {
        tags,
        summary: 'Platform settings (platform admins only)',
        response: { 200: PlatformSettingsBody, ...errors },
      },
    },
    async (request) => readPlatformSettings(deps, { adminId: adminIdOf(request) }),
  );

  app.patch(
    '/platform/settings',
    {
      config,
      // Up to 500 feedback-loop domains of 253 characters each.
      bodyLimit: 256 * 1024,
      schema: {
        tags,
        summary: 'Change platform settings (platform admins only); answers the whole set',
        body: UpdatePlatformSettingsBody,
        response: { 200: PlatformSettingsBody, 400: ErrorBody, ...errors },
      },
    },
    async (request) => updatePlatformSettings(deps, { adminId: adminIdOf(request), ip: request.ip }, request.body),
  );

  app.get(
    '/platform/doctor',
    {
      config,
      schema: {
        tags,
        summary: 'Deployment readiness checks, one per line with the fix (platform admins only; extension)',
        response: { 200: DoctorReport, ...errors },
      },
    },
    async () =>
      runDoctor({
        config: deps.config,
        secrets: deps.secrets,
        sequelize,
        redis: deps.redis,
        embedded: deps.db.embedded,
        eventLoop: deps.eventLoop,
      }),
  );
}
