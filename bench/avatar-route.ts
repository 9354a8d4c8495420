/**
 * `npm run bench -- --avatar-upload --route [--iterations 10] [--out FILE]` (issue 35 item 4: "an
 * avatar upload's time and peak memory"): the inputs of bench/avatar-upload.ts, each posted
 * `iterations` times, one after the other, to `POST /settings/profile/avatar` of our real server
 * (`dist/`, pinned to core 0 as in every bench) by a signed-in member, as a browser's form sends
 * it: multipart with the CSRF field. The multipart read, the check with sharp and the write are
 * all in the figures.
 *
 * Each input gets a server of its own, so the server's peak RSS (VmHWM) after its uploads is that
 * input's alone; `baselinePeakRssMb` is the peak before the first upload (started, the profile
 * page served). The server decodes each image in a child process (src/images/sharp-reencoder.ts):
 * the bench reads the children's VmHWM every millisecond while they live, and reports the largest
 * beside the server's, and their sum, what the machine needs at most. Figures per input: the
 * median and slowest upload as the client timed it, and the CPU per upload of the server and its
 * children. Embedded SQLite, or DATABASE_URL's PostgreSQL as the main bench.
 * Writes bench/results/<date>-avatar-route.json.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AVATAR_MAX_BYTES, AVATAR_MAX_PIXELS } from '../src/core/community/avatars.js';
import { Visitor } from '../test/site/visitor.js';
import { inputFiles, round, spread, watchChildren, writeAvatarReport } from './avatar-upload.js';
import { TICKS_PER_SECOND, cpuTicks, peakRssMb, prepareDatabaseTarget, prepareRun, seedDatabase, serviceEnvironment, startService } from './run.js';
import { SMOKE_SEED, seedSession } from './seed.js';

const UPLOAD = '/settings/profile/avatar';

/** What an upload came to: stored (the redirect to the profile page's notice), or the form's error; anything else ends the bench. */
function outcomeOf(answer: { status: number; location: string | null }): string {
  if (answer.status === 303 && answer.location === '/settings/profile?notice=avatar') return 'stored';
  if (answer.status === 400) return 'refused: the form\'s error';
  throw new Error(`the upload answered ${answer.status} ${answer.location ?? ''}`);
}

export async function runAvatarRoute(iterations: number, out: string | undefined): Promise<void> {
  const { log, env } = prepareRun({ build: true });
  const work = mkdtempSync(join(tmpdir(), 'avatar-route-'));
  try {
    const databaseUrl = await prepareDatabaseTarget(env, work, 'svc_bench_avatar');
    const serviceEnv = serviceEnvironment(databaseUrl, undefined);
    const { seeded, extra: sessionId } = await seedDatabase(serviceEnv, SMOKE_SEED, 1, 'bench-avatar-route', log, undefined, async (deps) => {
      const first = await deps.database.db.selectFrom('users').select('id').orderBy('id').limit(1).executeTakeFirstOrThrow();
      return seedSession(deps.database.db, first.id, deps.clock.now());
    });
    const inputs = [];
    for (const input of await inputFiles(work)) {
      const { server } = await startService(serviceEnv, env, seeded.rotatingTokens[0]!);
      try {
        const member = new Visitor(server.url);
        member.cookies.set('svc_session', sessionId!);
        const profile = await member.get('/settings/profile');
        if (profile.status !== 200) throw new Error(`GET /settings/profile as the member answered ${profile.status}`);
        const csrf = await member.csrf();
        const bytes = readFileSync(input.file);
        const baselinePeakRssMb = peakRssMb(server.pid);
        const times: number[] = [];
        const outcomes = new Set<string>();
        const ticksBefore = cpuTicks(server.pid, true);
        const children = watchChildren(server.pid);
        for (let i = 0; i < iterations; i++) {
          const form = new FormData();
          form.append('_csrf', csrf);
          form.append('avatar', new Blob([bytes]), input.id);
          const started = performance.now();
          outcomes.add(outcomeOf(await member.request(UPLOAD, { method: 'POST', body: form })));
          times.push(performance.now() - started);
        }
        const { childPeakRssMb, children: childCount } = children.stop();
        const cpuMsPerUpload = round(((cpuTicks(server.pid, true) - ticksBefore) / TICKS_PER_SECOND) * 1000 / iterations);
        const serverPeak = peakRssMb(server.pid);
        const figures = {
          bytes: bytes.length, outcomes: [...outcomes], ...spread(times), cpuMsPerUpload, baselinePeakRssMb, peakRssMb: serverPeak,
          childPeakRssMb, childCount, machinePeakRssMb: round(serverPeak + childPeakRssMb),
        };
        inputs.push({ id: input.id, title: input.title, ...figures });
        log(`${input.id}: ${figures.outcomes.join(', ')}; median ${figures.medianMs} ms, max ${figures.maxMs} ms, ${cpuMsPerUpload} ms CPU, peak RSS ${baselinePeakRssMb} → ${figures.peakRssMb} MB, decoding children (${childCount}) ${childPeakRssMb} MB`);
      } finally {
        await server.stop();
      }
    }
    writeAvatarReport('avatar-route', out, {
      setup: { iterations, route: UPLOAD, database: databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres', serverCore: 0, maxPixels: AVATAR_MAX_PIXELS, maxBytes: AVATAR_MAX_BYTES },
      inputs,
      notes: [
        'each input against a fresh server (dist/, the Node flags of npm start, pinned to core 0), uploads one after the other by one signed-in member with the CSRF field',
        'outcomes: stored (the redirect to the profile page\'s notice) or the form\'s error (400); medianMs and maxMs are the client\'s time for the whole POST; cpuMsPerUpload the user + system CPU of the server and of its decoding children over the uploads divided by them (10 ms clock ticks)',
        'baselinePeakRssMb is the server\'s VmHWM before the first upload (started, the profile page served); peakRssMb after the last; childPeakRssMb the largest VmHWM of a decoding child read while it lived (every millisecond, so a floor), childCount the children seen; machinePeakRssMb the server\'s peak plus the child\'s, what the machine needs at most',
      ],
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
