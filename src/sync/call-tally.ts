/** One HTTP attempt, as the client reports it. */
export interface CallEvent {
  endpoint: string;
  status: number | null;
  attempt: number;
}

/** Calls by kind, for a run's sync_runs row. */
export interface CallCounts {
  listCalls: number;
  detailCalls: number;
  retries: number;
}

const LIST_ENDPOINTS = new Set(['requests.list', 'requests.details']);

/**
 * Counts the client's calls. The client reports every attempt through its onCall hook; a run
 * takes a snapshot at its start and reports the difference, so runs share one client.
 */
export function createCallTally() {
  const totals: CallCounts = { listCalls: 0, detailCalls: 0, retries: 0 };
  return {
    /** Feed for the client's onCall hook. */
    record(event: CallEvent): void {
      if (LIST_ENDPOINTS.has(event.endpoint)) totals.listCalls += 1;
      else if (event.endpoint === 'requests.detail') totals.detailCalls += 1;
      if (event.attempt > 1) totals.retries += 1;
    },
    snapshot(): CallCounts {
      return { ...totals };
    },
    /** Calls made since `since`. */
    since(since: CallCounts): CallCounts {
      return {
        listCalls: totals.listCalls - since.listCalls,
        detailCalls: totals.detailCalls - since.detailCalls,
        retries: totals.retries - since.retries,
      };
    },
  };
}

/** The tally's interface. */
export type CallTally = ReturnType<typeof createCallTally>;
