/**
 * Finds the real peers the tests talk to, and builds them when a person or CI asks for it
 * (`npm run peers`, `bash .ci/peers`, or `OMNI_PEERS_BUILD=1` for a test run), into a cache folder
 * outside the repository (`$OMNI_PEERS_CACHE`, default `~/.cache/omni-otel-metrics-peers`), one
 * folder per peer and version, so a machine builds each once. A test run on its own only looks:
 * a build takes minutes of both cores and the network, which nobody asked of `npm test`. A folder
 * counts only once its `peer.json` is written, which happens after the build succeeded and the
 * folder was moved into place: an interrupted build leaves nothing that looks usable. Debian's
 * Prometheus 2.42 and prometheus_client 0.16 are peers too, found where Debian installs them and
 * installed with apt-get by `npm run peers` when it runs as root (never by a test run).
 * `OMNI_PEERS_HIDE=name,...` makes the named peers count as missing, to see what a machine
 * without them runs.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findBinary } from '../binaries';
import { PROMETHEUS_BUILD_TAGS, PROMETHEUS_CLIENT_VERSION, PROMETHEUS_MODULE, PROMETHEUS_MODULE_VERSION } from './versions';

type BuiltPeerName = 'prometheus3' | 'collector' | 'client-golang' | 'prometheus-client';
type DebianPeerName = 'debian-prometheus' | 'debian-prometheus-client';
export type PeerName = BuiltPeerName | DebianPeerName;

/** Where a ready peer's programs are. */
export interface PeerPaths {
  /** Program name → absolute path. */
  readonly bin: Readonly<Record<string, string>>;
  /** The version built, as the tests report it. */
  readonly version: string;
}

interface PeerRecipe {
  /** What a person would call it. */
  readonly title: string;
  /** The toolchain the build needs, found on this machine or undefined. */
  readonly toolchain: () => string | undefined;
  /** What is missing when the toolchain is. */
  readonly toolchainHint: string;
  /** What a first build takes on 2 cores and what it needs, for the line that names a missing peer. */
  readonly buildCost: string;
  /** Cache key: changes whenever what is built would change. */
  readonly key: () => string;
  readonly version: string;
  /** Builds into `dir` (empty, made by the caller) with the toolchain; returns program name → path relative to `dir`. */
  readonly build: (toolchain: string, dir: string, log: fs.WriteStream) => Promise<Record<string, string>>;
}

const PEERS_DIR = __dirname;
/** The command that builds every peer (`bash .ci/peers`, which CI runs before the tests). */
export const PEERS_COMMAND = 'npm run peers';

export function peersCacheRoot(): string {
  return process.env.OMNI_PEERS_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'omni-otel-metrics-peers');
}

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(name: string, fallbacks: readonly string[] = []): string | undefined {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir !== '');
  return [...dirs.map((dir) => path.join(dir, name)), ...fallbacks].find(executable);
}

const goToolchain = (): string | undefined => onPath('go', ['/usr/local/go/bin/go']);

/** A hash of the files a Go program is built from: editing one rebuilds it. */
function sourceHash(folder: string): string {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(file).update(fs.readFileSync(path.join(PEERS_DIR, folder, file)));
  return hash.digest('hex').slice(0, 12);
}

/** Runs a build step with its output appended to the build log; rejects with the log's tail on failure. */
function run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }, log: fs.WriteStream): Promise<void> {
  log.write(`$ ${command} ${args.join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (chunk: Buffer): void => {
      log.write(chunk);
      tail = (tail + chunk.toString('utf8')).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code ?? signal}:\n${tail}`));
    });
  });
}

/**
 * Go builds take both cores for minutes: `-p 2` keeps them from starting more compilers than the
 * machine has, `-trimpath` and `-s -w` keep the binaries small and the same on every machine.
 */
const GO_ENV: NodeJS.ProcessEnv = { GOFLAGS: '-trimpath -buildvcs=false', CGO_ENABLED: '0' };
const GO_BUILD_FLAGS = ['-p', '2', '-ldflags=-s -w'];

const GO_HINT = 'Go (the `go` command on PATH)';

function goProgram(folder: string, binary: string, title: string, version: string, buildCost: string): PeerRecipe {
  return {
    title,
    toolchain: goToolchain,
    toolchainHint: GO_HINT,
    buildCost,
    key: () => `${folder}-${sourceHash(folder)}`,
    version,
    build: async (go, dir, log) => {
      await run(
        go,
        ['build', ...GO_BUILD_FLAGS, '-tags', PROMETHEUS_BUILD_TAGS, '-o', path.join(dir, binary), '.'],
        { cwd: path.join(PEERS_DIR, folder), env: GO_ENV },
        log,
      );
      return { [binary]: binary };
    },
  };
}

function goModuleVersion(folder: string, module: string): string {
  const line = fs
    .readFileSync(path.join(PEERS_DIR, folder, 'go.mod'), 'utf8')
    .split('\n')
    .find((text) => text.trim().startsWith(`${module} `));
  return line?.trim().split(/\s+/)[1] ?? 'unknown';
}

const RECIPES: Readonly<Record<BuiltPeerName, PeerRecipe>> = {
  prometheus3: {
    title: `Prometheus 3 (${PROMETHEUS_MODULE}@${PROMETHEUS_MODULE_VERSION}) and its promtool`,
    toolchain: goToolchain,
    toolchainHint: GO_HINT,
    buildCost: 'about 10 minutes on 2 cores, with Go 1.26 and the Go module proxy',
    key: () => `prometheus-${PROMETHEUS_MODULE_VERSION}-${PROMETHEUS_BUILD_TAGS}`,
    version: PROMETHEUS_MODULE_VERSION,
    build: async (go, dir, log) => {
      const packages = ['prometheus', 'promtool'].map((program) => `${PROMETHEUS_MODULE}/cmd/${program}@${PROMETHEUS_MODULE_VERSION}`);
      await run(go, ['install', ...GO_BUILD_FLAGS, '-tags', PROMETHEUS_BUILD_TAGS, ...packages], { cwd: dir, env: { ...GO_ENV, GOBIN: dir } }, log);
      return { prometheus: 'prometheus', promtool: 'promtool' };
    },
  },
  collector: goProgram(
    'collector',
    'omni-otelcol',
    `an OpenTelemetry Collector (otelcol ${goModuleVersion('collector', 'go.opentelemetry.io/collector/otelcol')}, contrib ${goModuleVersion('collector', 'github.com/open-telemetry/opentelemetry-collector-contrib/receiver/prometheusreceiver')})`,
    goModuleVersion('collector', 'go.opentelemetry.io/collector/otelcol'),
    'about 11 minutes on 2 cores, with Go 1.26 and the Go module proxy',
  ),
  'client-golang': goProgram(
    'client-golang',
    'omni-client-golang',
    `client_golang ${goModuleVersion('client-golang', 'github.com/prometheus/client_golang')} with common ${goModuleVersion('client-golang', 'github.com/prometheus/common')}`,
    goModuleVersion('client-golang', 'github.com/prometheus/client_golang'),
    'about 2 minutes on 2 cores, with Go 1.26 and the Go module proxy',
  ),
  'prometheus-client': {
    title: `Python prometheus_client ${PROMETHEUS_CLIENT_VERSION} (PyPI) in a virtual environment`,
    // Any Python 3 that can make a virtual environment with pip (Debian's needs python3-venv).
    toolchain: () => onPath('python3', ['/usr/bin/python3']),
    toolchainHint: 'Python 3 with its venv module (Debian: python3-venv)',
    buildCost: 'under a minute, with Python 3, its venv module and PyPI',
    key: () => `prometheus-client-${PROMETHEUS_CLIENT_VERSION}`,
    version: PROMETHEUS_CLIENT_VERSION,
    build: async (python, dir, log) => {
      await run(python, ['-m', 'venv', dir], { cwd: dir }, log);
      const pip = path.join(dir, 'bin', 'pip');
      await run(pip, ['install', '--quiet', '--disable-pip-version-check', '--no-input', `prometheus-client==${PROMETHEUS_CLIENT_VERSION}`], { cwd: dir }, log);
      return { python: path.join('bin', 'python') };
    },
  },
};

/** A peer Debian installs: found where Debian puts it, installed with apt-get when this runs as root. */
interface DebianPeer {
  readonly title: string;
  readonly packages: readonly string[];
  /** The installed programs, or why they are not usable. */
  readonly find: () => PeerPaths | string;
}

/** The first line a command prints, or undefined when it cannot run. */
function firstLine(command: string, args: readonly string[]): string | undefined {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
      .split('\n')[0]
      ?.trim();
  } catch {
    return undefined;
  }
}

/**
 * Debian's interpreter, not the `python3` on PATH, which may be another installation without
 * Debian's prometheus_client.
 */
const DEBIAN_PYTHON = '/usr/bin/python3';

const DEBIAN_PEERS: Readonly<Record<DebianPeerName, DebianPeer>> = {
  'debian-prometheus': {
    title: "Debian's Prometheus 2.42 and its promtool (package prometheus)",
    packages: ['prometheus'],
    find: () => {
      try {
        // $PROMETHEUS_BIN / $PROMTOOL_BIN, then PATH, then /usr/bin.
        const bin = { prometheus: findBinary('prometheus', 'PROMETHEUS_BIN'), promtool: findBinary('promtool', 'PROMTOOL_BIN') };
        const version = /version (\S+)/.exec(firstLine(bin.prometheus, ['--version']) ?? '')?.[1];
        return version === undefined ? `${bin.prometheus} --version prints no version` : { bin, version };
      } catch (error) {
        return `it is not installed (${(error as Error).message.split(' (')[0]})`;
      }
    },
  },
  'debian-prometheus-client': {
    title: "Debian's Python prometheus_client 0.16 (package python3-prometheus-client)",
    packages: ['python3-prometheus-client'],
    find: () => {
      if (!executable(DEBIAN_PYTHON)) return `${DEBIAN_PYTHON} is not installed`;
      const version = firstLine(DEBIAN_PYTHON, ['-c', "import importlib.metadata, prometheus_client; print(importlib.metadata.version('prometheus_client'))"]);
      return version === undefined ? `${DEBIAN_PYTHON} cannot import prometheus_client` : { bin: { python: DEBIAN_PYTHON }, version };
    },
  },
};

const isDebianPeer = (name: PeerName): name is DebianPeerName => name in DEBIAN_PEERS;

export const PEER_NAMES = [...Object.keys(RECIPES), ...Object.keys(DEBIAN_PEERS)] as PeerName[];

export function peerTitle(name: PeerName): string {
  return isDebianPeer(name) ? DEBIAN_PEERS[name].title : RECIPES[name].title;
}

/** The command a person runs to get the peer. */
export function peerCommand(name: PeerName): string {
  return isDebianPeer(name) ? `apt-get install -y --no-install-recommends ${DEBIAN_PEERS[name].packages.join(' ')}` : `${PEERS_COMMAND} ${name}`;
}

/** How a person gets the peer and what that takes: the command, then its cost. */
export function peerRemedy(name: PeerName): string {
  return isDebianPeer(name)
    ? `\`${peerCommand(name)}\` (as root, about a minute) installs it`
    : `\`${peerCommand(name)}\` builds it (${RECIPES[name].buildCost})`;
}

/** The peers `OMNI_PEERS_HIDE` (comma-separated names) makes count as missing. */
function hiddenPeers(): readonly string[] {
  return (process.env.OMNI_PEERS_HIDE ?? '').split(',').map((name) => name.trim());
}

const POLICY_RC_D = '/usr/sbin/policy-rc.d';

/**
 * `apt-get update` and `apt-get install` of `packages`, as root. Debian's `prometheus` package
 * would start its own server on port 9090 during the install: a temporary policy-rc.d answering
 * 101 ("action forbidden") keeps every package's service from starting, unless the machine has its
 * own policy-rc.d, which is left alone.
 */
async function aptGetInstall(packages: readonly string[], log: fs.WriteStream): Promise<void> {
  const ownPolicy = !fs.existsSync(POLICY_RC_D);
  if (ownPolicy) fs.writeFileSync(POLICY_RC_D, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  try {
    const options = { cwd: os.tmpdir(), env: { DEBIAN_FRONTEND: 'noninteractive' } };
    await run('apt-get', ['-o', 'Acquire::Retries=3', 'update'], options, log);
    await run('apt-get', ['-o', 'Acquire::Retries=3', 'install', '-y', '--no-install-recommends', ...packages], options, log);
  } finally {
    if (ownPolicy) fs.rmSync(POLICY_RC_D, { force: true });
  }
}

/** The Debian peer as installed, or installed now when this runs as root with apt-get. */
async function provisionDebianPeer(name: DebianPeerName, how: ProvisionHow, seconds: () => number): Promise<Provisioned> {
  const peer = DEBIAN_PEERS[name];
  const found = peer.find();
  if (typeof found !== 'string') return { ok: true, paths: found, seconds: seconds(), built: false };
  if (!how.build) return { ok: false, reason: found };
  if (process.getuid?.() !== 0 || onPath('apt-get') === undefined) return { ok: false, reason: `${found}, and only root can install it here` };
  fs.mkdirSync(peersCacheRoot(), { recursive: true });
  const logFile = path.join(peersCacheRoot(), `${name}-apt-get.log`);
  const log = fs.createWriteStream(logFile);
  how.progress(`installing ${peer.title} with apt-get (log: ${logFile})`);
  try {
    await aptGetInstall(peer.packages, log);
  } catch (error) {
    return { ok: false, reason: `${found}, and apt-get failed after ${seconds().toFixed(0)} s (${(error as Error).message.trim()})` };
  } finally {
    await new Promise<void>((resolve) => log.end(resolve));
  }
  const installed = peer.find();
  if (typeof installed === 'string') return { ok: false, reason: `apt-get installed ${peer.packages.join(' ')} but ${installed}` };
  return { ok: true, paths: installed, seconds: seconds(), built: true };
}

interface Stamp {
  readonly bin: Record<string, string>;
  readonly version: string;
  readonly buildSeconds: number;
}

function readStamp(dir: string): PeerPaths | undefined {
  try {
    const stamp = JSON.parse(fs.readFileSync(path.join(dir, 'peer.json'), 'utf8')) as Stamp;
    const bin = Object.fromEntries(Object.entries(stamp.bin).map(([name, file]) => [name, path.join(dir, file)]));
    return Object.values(bin).every(executable) ? { bin, version: stamp.version } : undefined;
  } catch {
    return undefined;
  }
}

/** The outcome of making one peer ready. */
export type Provisioned =
  { readonly ok: true; readonly paths: PeerPaths; readonly seconds: number; readonly built: boolean } | { readonly ok: false; readonly reason: string };

/** The cached peer, if this machine has it built. */
export function cachedPeer(name: BuiltPeerName): PeerPaths | undefined {
  return readStamp(path.join(peersCacheRoot(), RECIPES[name].key()));
}

/** Whether to build (or install) a peer that is missing, and where its progress lines go. */
export interface ProvisionHow {
  readonly build: boolean;
  readonly progress: (line: string) => void;
}

/**
 * The peer from the cache (or where Debian installs it), or, with `build`, built into the cache or
 * installed now. Never throws: a peer that cannot be had comes back with the reason, for the
 * caller to skip or fail on.
 */
export async function provisionPeer(name: PeerName, how: ProvisionHow): Promise<Provisioned> {
  const started = performance.now();
  const seconds = (): number => (performance.now() - started) / 1000;
  if (hiddenPeers().includes(name)) return { ok: false, reason: 'OMNI_PEERS_HIDE hides it' };
  if (isDebianPeer(name)) return provisionDebianPeer(name, how, seconds);
  const recipe = RECIPES[name];
  let dir: string;
  try {
    dir = path.join(peersCacheRoot(), recipe.key());
  } catch (error) {
    return { ok: false, reason: `its sources are unreadable: ${(error as Error).message}` };
  }
  const cached = readStamp(dir);
  if (cached) return { ok: true, paths: cached, seconds: seconds(), built: false };
  if (!how.build) return { ok: false, reason: `it is not built in ${peersCacheRoot()}` };
  const toolchain = recipe.toolchain();
  if (toolchain === undefined) return { ok: false, reason: `${recipe.toolchainHint} is not installed` };

  fs.mkdirSync(peersCacheRoot(), { recursive: true });
  const staging = fs.mkdtempSync(`${dir}.building-`);
  const log = fs.createWriteStream(path.join(staging, 'build.log'));
  how.progress(`building ${recipe.title} into ${dir} (log: ${path.join(staging, 'build.log')})`);
  try {
    const bin = await recipe.build(toolchain, staging, log);
    const stamp: Stamp = { bin, version: recipe.version, buildSeconds: Math.round(seconds()) };
    fs.writeFileSync(path.join(staging, 'peer.json'), `${JSON.stringify(stamp, null, 2)}\n`);
    await new Promise<void>((resolve) => log.end(resolve));
    try {
      fs.renameSync(staging, dir);
    } catch {
      // Another run finished the same build first: keep its folder.
      fs.rmSync(staging, { recursive: true, force: true });
    }
    const paths = readStamp(dir);
    if (!paths) return { ok: false, reason: `the build finished but ${dir} holds no usable programs` };
    return { ok: true, paths, seconds: seconds(), built: true };
  } catch (error) {
    await new Promise<void>((resolve) => log.end(resolve));
    const reason = `its build failed after ${seconds().toFixed(0)} s (${(error as Error).message.trim()})`;
    fs.rmSync(staging, { recursive: true, force: true });
    return { ok: false, reason };
  }
}
