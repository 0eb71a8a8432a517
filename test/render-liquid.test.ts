// The Liquid renderer on its own: escaping per part, strict filters, no file access, limits,
// header-safe subjects, and the text part derived from HTML.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkLiquid, renderLiquid, textFromHtml } from '../daemon/render/liquid.ts';
import { UnprocessableError } from '../daemon/errors.ts';

async function failure(promise: Promise<unknown>): Promise<UnprocessableError> {
  try {
    await promise;
  } catch (error) {
    assert.instance(error, UnprocessableError);
    return error as UnprocessableError;
  }
  throw new Error('expected the render to fail');
}

test('HTML bodies escape variables; text and subject do not', async () => {
  const data = { name: '<script>alert("x")</script>', user: { first: 'Ann & Bo' } };
  assert.is(
    await renderLiquid('htmlBody', '<p>{{ name }} {{ user.first }}</p>', data),
    '<p>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; Ann &amp; Bo</p>',
  );
  assert.is(
    await renderLiquid('textBody', '{{ name }} {{ user.first }}', data),
    '<script>alert("x")</script> Ann & Bo',
  );
  assert.is(await renderLiquid('subject', 'For {{ user.first }}', data), 'For Ann & Bo');
});

test('missing variables render empty; filters work; a subject never carries a line break', async () => {
  assert.is(await renderLiquid('htmlBody', 'Hi {{ missing.deep }}!', {}), 'Hi !');
  assert.is(await renderLiquid('textBody', '{{ name | upcase | append: "!" }}', { name: 'ann' }), 'ANN!');
  assert.is(
    await renderLiquid('subject', 'Hello {{ name }}', { name: 'Ann\r\nBcc: evil@example.test' }),
    'Hello Ann Bcc: evil@example.test',
  );
});

test('unknown filters and bad syntax are 422 naming the part and the problem', async () => {
  const unknown = await failure(renderLiquid('htmlBody', '{{ name | shout }}', { name: 'x' }));
  assert.is(unknown.statusCode, 422);
  assert.is(unknown.code, 'TEMPLATE_INVALID');
  assert.match(unknown.message, /^The template's HTML body is not valid Liquid: undefined filter: shout/);
  assert.throws(
    () => checkLiquid('subject', '{% if %}'),
    (e: UnprocessableError) => /subject is not valid Liquid/.test(e.message),
  );
  assert.not.throws(() => checkLiquid('textBody', '{% if a %}{{ a | downcase }}{% endif %}'));
});

test('include, render and layout find nothing: no file is read', async () => {
  for (const source of [
    "{% include 'package.json' %}",
    "{% render '/etc/passwd' %}",
    "{% layout '../../../etc/hostname' %}x",
  ]) {
    const error = await failure(renderLiquid('htmlBody', source, {}));
    assert.is(error.code, 'TEMPLATE_RENDER_FAILED');
    assert.not.match(error.message, /root:|svc-email/);
  }
});

test('runaway templates stop at the limits', async () => {
  const started = Date.now();
  const error = await failure(renderLiquid('htmlBody', '{% for i in (1..100000000) %}{{ i }}{% endfor %}', {}));
  assert.is(error.code, 'TEMPLATE_LIMIT_EXCEEDED');
  assert.ok(Date.now() - started < 2000);
  const huge = await failure(renderLiquid('htmlBody', 'x'.repeat(600_000), {}));
  assert.is(huge.code, 'TEMPLATE_LIMIT_EXCEEDED');
});

test('prototype members of data are not reachable', async () => {
  assert.is(
    await renderLiquid('textBody', '[{{ x.constructor }}][{{ x.__proto__ }}][{{ x.toString }}]', { x: {} }),
    '[][][]',
  );
});

test('the text part derived from HTML keeps words and links, drops markup and images', () => {
  const text = textFromHtml(
    '<h1>Hello</h1><p>Your <b>order</b> shipped. <a href="https://acme.test/t">Track it</a></p><img src="x.png" alt="logo">',
  );
  assert.match(text, /HELLO/);
  assert.match(text, /Your order shipped\. Track it \[https:\/\/acme\.test\/t\]/);
  assert.not.match(text, /<|x\.png/);
});

test.run();
