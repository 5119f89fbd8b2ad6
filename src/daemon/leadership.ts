import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type pg from 'pg';
import type { Clock } from '../clock.js';
import type { MirrorDb } from '../db/open.js';
import type { Store } from '../db/store.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { LEADER_KEY, MEMBER_KEY_PREFIX } from '../ops/cluster.js';
import { isoFromMs } from '../time.js';
import { acquireOwnerLease } from './owner-lease.js';

/** How often a member says it is alive, and a follower tries to lead. */
export const MEMBER_BEAT_MS = 5_000;
/** The advisory lock whose holder leads: one session at a time holds it, the server sees to it. */
const LEADER_LOCK = 7_461_019_002;

/** What a member writes of itself. */
export interface MemberInfo {
  id: string;
  host: string;
  pid: number;
  started_at: string;
  is_leader: boolean;
}

/** The daemon's part in the election. */
export interface Leadership {
  member: MemberInfo;
  isLeader(): boolean;
  /** Steps down (if leading), leaves the member list; resolves once the duties are stopped. */
  stop(): Promise<void>;
}

interface LeadershipDeps {
  db: MirrorDb;
  store: Store;
  clock: Clock;
  log: Logger;
  /** Start the leader's duties (polling, applying events, the outbox, pruning). */
  onLead: () => Promise<void>;
  /** Stop them: another member leads now, or nobody can until this one reconnects. */
  onFollow: () => Promise<void>;
  /** SQLite: another daemon took the file over; this one must stop whole. */
  onOusted: () => void;
}

/**
 * Who does the one-at-a-time work. On SQLite there is one daemon per file (the owner lease
 * refuses a second) and it leads at once. On PostgreSQL any number of daemons share a database:
 * every one receives webhooks, and the one whose session holds an advisory lock leads. A leader
 * that dies loses its session, and with it the lock (its TCP keepalives tell the server within
 * about 20 s even if its host vanished), and a follower takes it at its next try (every 5 s).
 * A leader that loses its connection stops its duties at once, before another can start them.
 */
export async function startLeadership(deps: LeadershipDeps): Promise<Leadership> {
  const member: MemberInfo = {
    id: `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
    host: hostname(),
    pid: process.pid,
    started_at: isoFromMs(deps.clock.now()),
    is_leader: false,
  };
  return deps.db.engine === 'sqlite'
    ? leadAlone(deps, member)
    : electOnPostgres(deps, member, deps.db.newClient);
}

async function leadAlone(deps: LeadershipDeps, member: MemberInfo): Promise<Leadership> {
  const lease = await acquireOwnerLease({
    store: deps.store,
    clock: deps.clock,
    log: deps.log,
    onLost: deps.onOusted,
  });
  member.is_leader = true;
  await writeMember(deps, member, true);
  await deps.store.transaction((tx) =>
    tx.state.set(LEADER_KEY, leaderValue(member), member.started_at),
  );
  await deps.onLead();
  // The member's heartbeat, for status: a daemon not heard from for 30 s is gone.
  const timer = setInterval(() => {
    writeMember(deps, member, true).catch((error: unknown) =>
      deps.log.warn({ err: describeError(error) }, 'member heartbeat not written'),
    );
  }, MEMBER_BEAT_MS);
  timer.unref();
  return {
    member,
    isLeader: () => true,
    async stop() {
      clearInterval(timer);
      await deps.onFollow();
      await deps.store.transaction(async (tx) => {
        await tx.state.delete(`${MEMBER_KEY_PREFIX}${member.id}`);
        await tx.state.deleteIf(LEADER_KEY, leaderValue(member));
      });
      await lease.release();
    },
  };
}

async function electOnPostgres(
  deps: LeadershipDeps,
  member: MemberInfo,
  newClient: () => pg.Client,
): Promise<Leadership> {
  const log = deps.log.child({ area: 'cluster' });
  let session: pg.Client | undefined;
  let isStopped = false;
  let turn: Promise<void> = Promise.resolve();

  const closeSession = async () => {
    const ending = session;
    session = undefined;
    await ending?.end().catch(() => undefined);
  };
  const stepDown = async (why: string, error?: unknown) => {
    if (!member.is_leader) return;
    member.is_leader = false;
    log.error(
      { memberId: member.id, why, err: error ? describeError(error) : undefined },
      'stepped down as leader',
    );
    await deps.onFollow();
    await closeSession();
  };
  const tryToLead = async () => {
    if (!session) {
      const client = newClient();
      // The session is the leadership: a lost connection must end the duties at once.
      client.on(
        'error',
        (error) => void schedule(() => stepDown('the leader session failed', error)),
      );
      await client.connect();
      // Keepalives on the server's side of this session: a vanished host loses the lock in ~20 s.
      await client.query(
        'SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3',
      );
      session = client;
    }
    const result = await session.query('SELECT pg_try_advisory_lock($1) AS won', [LEADER_LOCK]);
    if (!result.rows[0]?.won) return;
    member.is_leader = true;
    const since = isoFromMs(deps.clock.now());
    await deps.store.transaction((tx) => tx.state.set(LEADER_KEY, leaderValue(member), since));
    log.info(
      { memberId: member.id, since },
      'leading: polling, applying events, draining the outbox',
    );
    await deps.onLead();
  };
  const beat = async () => {
    try {
      if (member.is_leader) await session!.query('SELECT 1');
      else await tryToLead();
    } catch (error) {
      if (member.is_leader) await stepDown('the leader session failed', error);
      else {
        await closeSession();
        log.warn({ err: describeError(error) }, 'could not try for the leadership; trying again');
      }
    }
    try {
      await writeMember(deps, member, member.is_leader);
    } catch (error) {
      log.warn({ err: describeError(error) }, 'member heartbeat not written');
    }
  };
  // Beats run one at a time: a slow one delays the next rather than overlapping it.
  const schedule = (work: () => Promise<void>) => {
    turn = turn.then(() => (isStopped ? undefined : work()));
    return turn;
  };
  await schedule(beat);
  const timer = setInterval(() => void schedule(beat), MEMBER_BEAT_MS);
  timer.unref();
  log.info(
    { memberId: member.id, isLeader: member.is_leader },
    'joined the daemons on this database',
  );

  return {
    member,
    isLeader: () => member.is_leader,
    async stop() {
      clearInterval(timer);
      await turn;
      isStopped = true;
      if (member.is_leader) {
        member.is_leader = false;
        await deps.onFollow();
      }
      await closeSession();
      await deps.store
        .transaction((tx) => tx.state.delete(`${MEMBER_KEY_PREFIX}${member.id}`))
        .catch(() => undefined);
    },
  };
}

function leaderValue(member: MemberInfo): string {
  return JSON.stringify({ id: member.id, host: member.host, pid: member.pid });
}

async function writeMember(deps: LeadershipDeps, member: MemberInfo, isLeader: boolean) {
  const now = isoFromMs(deps.clock.now());
  await deps.store.transaction((tx) =>
    tx.state.set(
      `${MEMBER_KEY_PREFIX}${member.id}`,
      JSON.stringify({ ...member, is_leader: isLeader }),
      now,
    ),
  );
}
