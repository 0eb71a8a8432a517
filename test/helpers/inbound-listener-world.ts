// A daemon in this process with the real inbound SMTP listener and the in-process `svc` CLI: the reply
// tests (inbound-replies, inbound-reply-address) start it alike and stop it in the reverse order.
import { createTestContext, type TestContext } from './context.ts';
import { freePort } from './swaks.ts';
import { listen } from './svc-cli.ts';
import { InProcessCli, operationMatchers } from './svc-inprocess.ts';
import { startInboundServer } from '../../daemon/smtp/inbound.ts';

export interface InboundListenerWorld {
  ctx: TestContext;
  cli: InProcessCli;
  inbound: { port: number; stop(): Promise<void> };
  close(): Promise<void>;
}

/** The daemon at `PUBLIC_URL=http://mail.example.test` with `SMTP_INBOUND_PORT` on a free port, beside `env`. */
export async function startInboundListenerWorld(env: Record<string, string>): Promise<InboundListenerWorld> {
  const ctx = await createTestContext({
    env: { PUBLIC_URL: 'http://mail.example.test', SMTP_INBOUND_PORT: String(await freePort()), ...env },
  });
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  const cli = new InProcessCli(await listen(ctx), operationMatchers(document));
  const log = { info: () => {}, warn: () => {} };
  const inbound = (await startInboundServer({ config: ctx.config, db: ctx.db, secrets: ctx.deps.secrets, log }))!;
  return {
    ctx,
    cli,
    inbound,
    async close() {
      cli.cleanup();
      await inbound.stop();
      await ctx.close();
    },
  };
}
