// Every listener of a daemon takes connections before its API answers anything (and so before
// /health/ready can say 200): a real daemon (`svc daemon start`) with the SMTP submission and inbound
// ports; from the moment it is spawned its API is asked again as soon as each try is refused, and at
// its first answer both SMTP ports must answer with their banner. The SMTP edge opens after slow steps
// of its own (a self-signed certificate, a LISTEN connection, its mail resources): when the API
// listened first, this found the SMTP ports closed in 3 runs of 4, and a probe could find the daemon
// ready with them closed (CI saw swaks refused on the inbound port of a daemon found ready).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { freePort } from './helpers/swaks.ts';
import { killAllDaemons, seedSendWorld, spawnChildDaemon, type SendWorld } from './helpers/send-daemon.ts';
import { waitFor } from './helpers/wait.ts';

let world: SendWorld;

test.after(async () => {
  killAllDaemons();
  await world?.database.drop();
});

/** The first line the server at `port` sends, or the connection's error. */
function banner(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(5_000, () => socket.destroy(new Error('no banner in 5 s')));
    socket.once('data', (chunk) => {
      resolve(chunk.toString().split('\r\n')[0]);
      socket.destroy();
    });
    socket.once('error', (error) => resolve(`error: ${error.message}`));
  });
}

/**
 * Whether the API answers HTTP at all (any status). Not a bare TCP accept: the daemon checks its port is
 * free by listening on it for a moment at start.
 */
function apiAnswers(url: string): Promise<boolean> {
  return fetch(`${url}/health/live`).then(
    () => true,
    () => false,
  );
}

test('the SMTP ports take connections before the API listens', async () => {
  const [submission, inbound] = [await freePort(), await freePort()];
  world = await seedSendWorld({ SMTP_SUBMISSION_PORT: String(submission), SMTP_INBOUND_PORT: String(inbound) });
  const daemon = spawnChildDaemon(world);
  try {
    await waitFor(
      'the API to listen',
      async () => {
        assert.is(daemon.child.exitCode, null, daemon.output());
        return apiAnswers(world.url);
      },
      { timeoutMs: 60_000, intervalMs: 0, details: daemon.output },
    );
    const [submissionBanner, inboundBanner] = await Promise.all([banner(submission), banner(inbound)]);
    assert.match(submissionBanner, /^220 /, submissionBanner);
    assert.match(inboundBanner, /^220 /, inboundBanner);
  } finally {
    killAllDaemons();
  }
});

test.run();
