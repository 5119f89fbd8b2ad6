import type { Connection } from '../db/sql.js';
import { readSyncState, readSyncStatePrefix } from '../db/store/sync-state-store.js';

/** sync_state keys of the daemons: one per member, and the leader's. */
export const MEMBER_KEY_PREFIX = 'member:';
export const LEADER_KEY = 'leader';
/** A member not heard from for this long is gone. */
export const MEMBER_GONE_MS = 30_000;

/** One daemon as `status` shows it (key `cluster.members`). */
export interface MemberReport {
  id: string;
  host: string;
  pid: number;
  started_at: string;
  last_seen_at: string;
  is_leader: boolean;
}

/** `status` key `cluster`: the daemons on this database, and which leads since when. */
export interface ClusterReport {
  members: MemberReport[];
  leader: { id: string; host: string; pid: number; since: string } | null;
}

/**
 * The daemons heard from in the last 30 s, and the leader: the one that polls, applies events,
 * drains the outbox and prunes (on SQLite, the only one).
 */
export async function readCluster(db: Connection, nowMs: number): Promise<ClusterReport> {
  const entries = await readSyncStatePrefix(db, MEMBER_KEY_PREFIX);
  const members = entries
    .filter((entry) => nowMs - Date.parse(entry.updated_at) <= MEMBER_GONE_MS)
    .map((entry) => {
      const member = JSON.parse(entry.value) as Omit<MemberReport, 'last_seen_at'>;
      return { ...member, last_seen_at: entry.updated_at };
    });
  const leaderEntry = await readSyncState(db, LEADER_KEY);
  const leader = leaderEntry
    ? {
        ...(JSON.parse(leaderEntry.value) as { id: string; host: string; pid: number }),
        since: leaderEntry.updated_at,
      }
    : null;
  // A leader no member vouches for is gone: nobody leads until a member takes over.
  const isLeaderAlive = leader !== null && members.some((m) => m.id === leader.id && m.is_leader);
  return { members, leader: isLeaderAlive ? leader : null };
}
