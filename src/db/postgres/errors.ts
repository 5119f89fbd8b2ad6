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
  const code = (error as PgFailure).code ?? '';
  const detail = error.message;
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
      hint: 'Check that PostgreSQL runs and answers at TRANSPORT_DB; the daemon retries and loses nothing committed.',
      cause: error,
      isRetryable: true,
    });
  }
  if (code === '28P01' || code === '28000' || code === '3D000' || code === '42501') {
    return new TransportError({
      code: 'db.open_failed',
      message: `cannot use the database ${location}: ${detail}`,
      hint: "Check the role, its password (TRANSPORT_DB_PASSWORD_FILE, the credential db_password or PGPASSFILE), the database name and the role's privileges.",
      cause: error,
    });
  }
  return error;
}
