import assert from 'node:assert/strict';
import fc from 'fast-check';
import { redactedHeaderList, redactedHeaders, redactedUrl, redactedUrlText, withUrlsRedacted } from '../../views/common/redaction';

/** Every spelling of `secret` a message could carry: as given, percent-encoded, as the URL API stores a password. */
function spellings(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret)]);
  try {
    forms.add(new URL(`http://u:${secret}@h/`).password);
  } catch {
    // Not a password the URL API takes: the raw and encoded forms stay.
  }
  return [...forms].filter((form) => form.length >= 6);
}

describe('redaction: URL userinfo, query values and header values never reach a message', () => {
  it('a URL prints its userinfo as ***, whatever it held; the rest as the URL API reads it', () => {
    assert.equal(redactedUrl(new URL('http://scrape:pa55@10.0.0.5:8000/metrics?x=1#f')), 'http://***@10.0.0.5:8000/metrics?x=***#f');
    assert.equal(redactedUrl(new URL('https://token@gateway/otlp')), 'https://***@gateway/otlp');
    assert.equal(redactedUrl(new URL('http://10.0.0.5:8000/@me')), 'http://10.0.0.5:8000/@me');
    assert.equal(redactedUrlText('http://otel:pa55@collector:4318/v1/metrics'), 'http://***@collector:4318/v1/metrics');
    // What the URL API refuses is redacted as text: up to the last @, so no part of a password holding / or ? is left.
    assert.equal(redactedUrlText('http://otel:pa/ss?w@collector:99999'), 'http://***@collector:99999');
    assert.equal(redactedUrlText('otel:pa55@collector:4317'), '***@collector:4317');
    assert.equal(redactedUrlText('collector:4317'), 'collector:4317');
  });

  it('a query keeps its keys; each value, and each part without =, is ***', () => {
    assert.equal(
      redactedUrl(new URL('http://10.0.0.5:8000/metrics?access_token=t0k3n&tenant=a&&debug')),
      'http://10.0.0.5:8000/metrics?access_token=***&tenant=***&&***',
    );
    assert.equal(redactedUrl(new URL('http://10.0.0.5:8000/metrics?')), 'http://10.0.0.5:8000/metrics?');
    assert.equal(redactedUrlText('http://c:4318/v1/metrics?api_key=s3cr3t#top'), 'http://c:4318/v1/metrics?api_key=***#top');
    // What the URL API refuses: the userinfo up to the last @, then the query up to a #.
    assert.equal(redactedUrlText('http://u:p@c:99999/m?api_key=s3cr3t&x#f'), 'http://***@c:99999/m?api_key=***&***#f');
    assert.equal(redactedUrlText('c:4317?token=s3cr3t'), 'c:4317?token=***');
  });

  it('free text: each word holding an @ or a ? is redacted; other words stay', () => {
    assert.equal(
      withUrlsRedacted('request to http://otel:pa55@collector:4318/v1/metrics failed: connect ECONNREFUSED 127.0.0.1:4318'),
      'request to http://***@collector:4318/v1/metrics failed: connect ECONNREFUSED 127.0.0.1:4318',
    );
    assert.equal(withUrlsRedacted('got "http://a:b@c/" and <user:pw@host>'), 'got "http://***@c/" and <***@host>');
    assert.equal(withUrlsRedacted('GET http://h:8000/metrics?token=t0k3n failed: is it up?'), 'GET http://h:8000/metrics?token=*** failed: is it up?');
    assert.equal(withUrlsRedacted('nothing to hide'), 'nothing to hide');
  });

  it('headers keep their names; values, and entries that may be bare tokens, are <redacted>', () => {
    assert.deepEqual(redactedHeaders({ authorization: 'Bearer t0ken', 'x-scope': 'a' }), { authorization: '<redacted>', 'x-scope': '<redacted>' });
    assert.equal(redactedHeaderList('authorization=Bearer t0ken,broken, x-a = 1,,'), 'authorization=<redacted>,<redacted>, x-a =<redacted>,,');
    assert.equal(redactedHeaderList('Bearer abc=def'), '<redacted>');
  });

  it('property: no spelling of a password or token survives, whatever characters it holds', () => {
    const secret = fc
      .string({
        unit: fc.oneof(
          fc.constantFrom('/', '?', '#', '@', ':', ' ', '"', '%', '=', ',', '\\', "'"),
          fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
        ),
        minLength: 1,
        maxLength: 24,
      })
      .map((tail) => `Zq9${tail}`);
    fc.assert(
      fc.property(secret, fc.constantFrom('http', 'https', 'ftp'), (password, scheme) => {
        const url = `${scheme}://scrape:${password}@collector.example:4318/v1/metrics`;
        const queried = `${scheme}://collector.example:4318/v1/metrics?tenant=a&api_key=${encodeURIComponent(password)}`;
        // A library quotes a URL as the URL API prints it (blanks and quotes percent-encoded); one it could not read, as given.
        let printed = url;
        try {
          printed = new URL(url).href;
        } catch {
          fc.pre(!/[\s"<>`]/.test(password));
        }
        const messages = [
          redactedUrlText(url),
          withUrlsRedacted(`export to ${printed} failed`),
          redactedUrlText(queried),
          withUrlsRedacted(`export to ${new URL(queried).href} failed`),
          redactedHeaderList(`authorization=Bearer ${password},x=${password}`),
          JSON.stringify(redactedHeaders({ authorization: password })),
        ];
        for (const message of messages) for (const form of spellings(password)) assert.ok(!message.includes(form), `${JSON.stringify(message)} holds ${form}`);
        // The host is still named, unless the password's own / ? or # ended the authority where the URL API reads it.
        if (!/[/?#]/.test(password)) assert.ok(messages[0]?.includes('collector.example'), 'the host is still named');
        assert.ok(messages[2]?.startsWith(`${scheme}://collector.example:4318/v1/metrics?tenant=***&api_key=***`), messages[2]);
      }),
      { numRuns: 500 },
    );
  });
});
