// /health/ready says 200 only once every listener of the daemon takes connections: a real daemon
// (`svc daemon start`) with the SMTP submission and inbound ports, its readiness polled every 5 ms from
// the moment it starts; at the first 200 both SMTP ports must answer with their banner. The SMTP edge
// opens after slow steps of its own (a self-signed certificate generated on first start, a LISTEN
// connection): when the API listened first, a probe could find the daemon ready and the ports closed
// (CI saw swaks refused on the inbound port of a daemon its helper had just found ready).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { freePort } from './helpers/swaks.ts';
import { killAllDaemons, seedSendWorld, startChildDaemon, type SendWorld } from './helpers/send-daemon.ts';

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

test('the daemon is ready only once its SMTP ports take connections', async () => {
  const [submission, inbound] = [await freePort(), await freePort()];
  world = await seedSendWorld({ SMTP_SUBMISSION_PORT: String(submission), SMTP_INBOUND_PORT: String(inbound) });
  // Readiness polled every 5 ms: the first 200 is the moment the ports are checked.
  await startChildDaemon(world, 60_000, 5);
  try {
    const [submissionBanner, inboundBanner] = await Promise.all([banner(submission), banner(inbound)]);
    assert.match(submissionBanner, /^220 /);
    assert.match(inboundBanner, /^220 /);
  } finally {
    killAllDaemons();
  }
});

test.run();
