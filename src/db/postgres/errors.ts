import { TransportError } from '../../errors.js';

/** A PostgreSQL server error or a failed connection, as pg reports them. */
interface PgFailure {
  code?: string;
  message?: string;
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
]);

/**
 * Turns the PostgreSQL failures an operator can act on into coded errors with a hint. The
 * transaction that failed was rolled back whole; what was committed before stays.
 */
export function postgresError(error: unknown, location: string): unknown {
  if (error instanceof TransportError || !(error instanceof Error)) return error;
  const failure = serverFailure(error);
  const code = failure.code ?? '';
  const detail = failure.message ?? error.message;
  if (code === '53100' || code === '53200' || code === '54000') {
    return new TransportError({
      code: 'db.full',
      message: `the database ${location} cannot grow: out of disk or memory (${detail})`,
      hint: 'Free space on the database server; the daemon resumes by itself, losing nothing that was committed.',
      cause: error,
      isRetryable: true,
    });
  }
  if (code === '40001' || code === '40P01' || code === '55P03' || code === '57014') {
    return new TransportError({
      code: 'db.locked',
      message: `the database ${location} could not complete a transaction for a competing one (${detail})`,
      hint: 'Another session holds locks for long; the work is retried.',
      cause: error,
      isRetryable: true,
    });
  }
  if (
    CONNECTION_CODES.has(code) ||
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    /Connection terminated|connection timeout|Client has encountered a connection error/i.test(
      detail,
    )
  ) {
    return new TransportError({
      code: 'db.unreachable',
      message: `the database server ${location} cannot be reached (${detail})`,
      hint: 'Check that PostgreSQL runs and answers at TRANSPORT_DB (host and port), and that no firewall is in the way: `pg_isready -h HOST -p PORT`. The daemon retries and loses nothing committed.',
      cause: error,
      isRetryable: true,
    });
  }
  if (code === '28P01' || code === '28000' || NO_PASSWORD.test(detail)) {
    const isMissing = NO_PASSWORD.test(detail);
    return new TransportError({
      code: 'db.auth_failed',
      message: isMissing
        ? `the database server ${location} asks for a password and none was given (${detail})`
        : `the database server ${location} refused the role (${detail})`,
      hint: "Check the role's name in TRANSPORT_DB and its password: in the file TRANSPORT_DB_PASSWORD_FILE names (or the credential db_password, or PGPASSFILE), never in the URL. A refused host or role needs a line in the server's pg_hba.conf.",
      cause: error,
    });
  }
  if (code === '3D000') {
    return new TransportError({
      code: 'db.missing',
      message: `no database at ${location}: the server has no such database (${detail})`,
      hint: 'Check the database name at the end of TRANSPORT_DB. A new mirror needs its database created first (`createdb -O ROLE NAME`); migrate then creates the tables.',
      cause: error,
    });
  }
  if (code === '25006') {
    return new TransportError({
      code: 'db.read_only',
      message: `the database ${location} accepts no writes (${detail})`,
      hint: 'TRANSPORT_DB must name the primary server, not a standby, in a database that is not read-only (default_transaction_read_only).',
      cause: error,
      isRetryable: true,
    });
  }
  if (code === '42501') {
    return new TransportError({
      code: 'db.open_failed',
      message: `cannot use the database ${location}: ${detail}`,
      hint: "Check the role's privileges: it must own the mirror's tables (migrate creates them as that role) and may connect to the database.",
      cause: error,
    });
  }
  return error;
}

/** What pg says when the server asks for a password and the client has none to give. */
const NO_PASSWORD = /client password must be a string|no password was provided/i;

/**
 * The server's or the socket's failure behind `error`: itself, or a cause (drizzle wraps what
 * pg throws). A refused connection to a name with several addresses is an AggregateError whose
 * members carry the code.
 */
function serverFailure(error: Error): PgFailure {
  let at: unknown = error;
  for (let depth = 0; at instanceof Error && depth < 5; depth += 1) {
    const failure = at as PgFailure & { errors?: unknown[] };
    if (failure.code) return failure;
    const inner = failure.errors?.find((member) => (member as PgFailure | undefined)?.code);
    if (inner) return inner as PgFailure;
    at = at.cause;
  }
  return error;
}
