// db/group-commit.ts: what arrives while a lane's write is in flight goes together in its next write;
// lanes are independent; a group keeps to its size; an item can fail alone; a throw fails the group.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createGroupCommit } from '../daemon/db/group-commit.ts';

/** A write that records its groups and finishes when told to. */
function recordingWrite() {
  const groups: string[][] = [];
  const pending: Array<() => void> = [];
  const write = (items: string[]) =>
    new Promise<Array<PromiseSettledResult<string>>>((resolve) => {
      groups.push(items);
      pending.push(() =>
        resolve(
          items.map((item) =>
            item.startsWith('bad')
              ? { status: 'rejected', reason: new Error(`refused ${item}`) }
              : { status: 'fulfilled', value: `wrote ${item}` },
          ),
        ),
      );
    });
  const finishNext = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    pending.shift()!();
  };
  return { groups, write, finishNext };
}

test('an item alone goes at once; those made during a write go together next, within the size', async () => {
  const { groups, write, finishNext } = recordingWrite();
  const commit = createGroupCommit({ write, maxSize: 5, sizeOf: (item: string) => (item === 'big' ? 4 : 1) });
  const first = commit.submit('a');
  assert.equal(groups, [['a']], 'written without waiting for company');
  const rest = ['b', 'c', 'big', 'd'].map((item) => commit.submit(item));
  await finishNext();
  assert.is(await first, 'wrote a');
  assert.equal(groups[1], ['b', 'c'], 'big would pass the size: it waits for the next group');
  await finishNext();
  await finishNext();
  assert.equal(groups.slice(2), [['big', 'd']]);
  assert.equal(await Promise.all(rest), ['wrote b', 'wrote c', 'wrote big', 'wrote d']);
});

test('lanes do not wait for each other; an item fails alone; a throw fails its whole group', async () => {
  const { groups, write, finishNext } = recordingWrite();
  const commit = createGroupCommit({ write, maxSize: 10 });
  const x = commit.submit('x', 'one');
  const y = commit.submit('y', 'two');
  assert.equal(groups, [['x'], ['y']], 'another lane is written while the first is in flight');
  const good = commit.submit('good', 'one');
  // Its handler from the start: a rejection without one would end the process.
  const refused = commit.submit('bad', 'one').then(
    () => 'written',
    (error: Error) => error.message,
  );
  await finishNext();
  await finishNext();
  await finishNext();
  assert.equal(await Promise.all([x, y, good]), ['wrote x', 'wrote y', 'wrote good']);
  assert.is(await refused, 'refused bad');

  const throwing = createGroupCommit<string, string>({ write: () => Promise.reject(new Error('down')), maxSize: 10 });
  const results = await Promise.allSettled([throwing.submit('p'), throwing.submit('q')]);
  assert.equal(
    results.map((r) => r.status === 'rejected' && (r.reason as Error).message),
    ['down', 'down'],
  );
});

test.run();
