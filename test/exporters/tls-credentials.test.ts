import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPrometheusServer } from '../../exporters/prometheus-http';
import { registerOmniMetrics } from '../../register';
import { OmniOptionError } from '../../views/common/option-checks';

/** Self-signed key/certificate pairs made with openssl for this run: RSA, EC P-256, and a second RSA key. */
interface Pems {
  readonly dir: string;
  readonly rsaKey: string;
  readonly rsaCert: string;
  readonly ecKey: string;
  readonly ecCert: string;
  readonly otherRsaKey: string;
  readonly garbage: string;
}

function makePems(): Pems {
  const dir = mkdtempSync(join(tmpdir(), 'omni-tls-'));
  const file = (name: string) => join(dir, name);
  const selfSigned = (key: string, cert: string, algorithm: string[]) =>
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        ...algorithm,
        '-nodes',
        '-keyout',
        file(key),
        '-out',
        file(cert),
        '-days',
        '2',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      {
        stdio: 'ignore',
      },
    );
  selfSigned('rsa-key.pem', 'rsa-cert.pem', ['-newkey', 'rsa:2048']);
  selfSigned('ec-key.pem', 'ec-cert.pem', ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256']);
  execFileSync('openssl', ['genrsa', '-out', file('other-rsa-key.pem'), '2048'], { stdio: 'ignore' });
  writeFileSync(file('garbage.pem'), '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n');
  return {
    dir,
    rsaKey: file('rsa-key.pem'),
    rsaCert: file('rsa-cert.pem'),
    ecKey: file('ec-key.pem'),
    ecCert: file('ec-cert.pem'),
    otherRsaKey: file('other-rsa-key.pem'),
    garbage: file('garbage.pem'),
  };
}

function httpsStatus(url: string, ca: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, ca }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

const SOURCE = { metricsText: async () => '# TYPE x gauge\nx 1.0\n' };

describe('metrics server TLS: key and certificate checked as a pair before start', function () {
  this.timeout(20_000);
  let pems: Pems;

  before(() => {
    pems = makePems();
  });

  after(() => rmSync(pems.dir, { recursive: true, force: true }));

  for (const kind of ['rsa', 'ec'] as const) {
    it(`a matching ${kind.toUpperCase()} pair serves https scrapes`, async () => {
      const keyFile = kind === 'rsa' ? pems.rsaKey : pems.ecKey;
      const certFile = kind === 'rsa' ? pems.rsaCert : pems.ecCert;
      const server = await startPrometheusServer(SOURCE, { host: '127.0.0.1', port: 0, tls: { keyFile, certFile } });
      try {
        assert.equal(await httpsStatus(server.url, readFileSync(certFile)), 200);
      } finally {
        await server.close();
      }
    });
  }

  /** What each refused pair's message starts with (OpenSSL's own reason follows in parentheses where it has one). */
  const refused = (): ReadonlyArray<{ what: string; keyFile: string; certFile: string; message: string }> => [
    {
      what: 'an EC key with an RSA certificate',
      keyFile: pems.ecKey,
      certFile: pems.rsaCert,
      message: `omni-otel-metrics: prometheus.tls: the key in keyFile ${pems.ecKey} (ec) is not the key of the certificate in certFile ${pems.rsaCert} (rsa public key); every TLS handshake would fail`,
    },
    {
      what: "another RSA key than the certificate's",
      keyFile: pems.otherRsaKey,
      certFile: pems.rsaCert,
      message: `omni-otel-metrics: prometheus.tls: the key in keyFile ${pems.otherRsaKey} (rsa) is not the key of the certificate in certFile ${pems.rsaCert} (rsa public key); every TLS handshake would fail`,
    },
    {
      what: 'a garbage key PEM',
      keyFile: pems.garbage,
      certFile: pems.rsaCert,
      message: `omni-otel-metrics: prometheus.tls: keyFile ${pems.garbage} is not a PEM private key (unencrypted) (`,
    },
    {
      what: 'a garbage certificate PEM',
      keyFile: pems.rsaKey,
      certFile: pems.garbage,
      message: `omni-otel-metrics: prometheus.tls: certFile ${pems.garbage} is not a PEM certificate (`,
    },
    {
      what: 'key and certificate swapped',
      keyFile: pems.rsaCert,
      certFile: pems.rsaKey,
      message: `omni-otel-metrics: prometheus.tls: keyFile ${pems.rsaCert} is not a PEM private key (unencrypted) (`,
    },
  ];

  it('startPrometheusServer refuses each bad pair with an OmniOptionError for prometheus.tls naming the file', async () => {
    for (const { what, keyFile, certFile, message } of refused()) {
      await assert.rejects(startPrometheusServer(SOURCE, { host: '127.0.0.1', port: 0, tls: { keyFile, certFile } }), (error: unknown) => {
        assert.ok(error instanceof OmniOptionError, `${what}: an OmniOptionError, got ${String(error)}`);
        assert.equal(error.option, 'prometheus.tls', what);
        assert.ok(error.message.startsWith(message), `${what}: ${error.message}`);
        return true;
      });
    }
  });

  it('registerOmniMetrics refuses an EC key with an RSA certificate before anything starts', async () => {
    await assert.rejects(
      registerOmniMetrics({
        modelName: 'm',
        stagePools: [1],
        prometheus: { host: '127.0.0.1', port: 0, tls: { keyFile: pems.ecKey, certFile: pems.rsaCert } },
      }),
      (error: unknown) => {
        assert.ok(error instanceof OmniOptionError, `an OmniOptionError, got ${String(error)}`);
        assert.equal(error.option, 'prometheus.tls');
        assert.match(error.message, /prometheus\.tls: the key in keyFile .*ec-key\.pem \(ec\) is not the key of the certificate in certFile .*rsa-cert\.pem/);
        return true;
      },
    );
  });
});
