import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { TransportError } from '../../../src/errors.js';
import { withPassword } from '../../../src/db/postgres/open.js';
import { postgresError } from '../../../src/db/postgres/errors.js';

const LOCATION = 'postgres://mirror@db.example:5432/mirror';

/** A server error as pg hands it on: the SQLSTATE in `code`, the server's words in `message`. */
function serverError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: 'FATAL' });
}

function translated(error: unknown): TransportError {
  const result = postgresError(error, LOCATION);
  if (!(result instanceof TransportError)) throw new Error(`not translated: ${String(result)}`);
  return result;
}

describe('PostgreSQL failures as coded errors', () => {
  it('a wrong password, an unknown role and a missing password are db.auth_failed', () => {
    const wrong = translated(
      serverError('28P01', 'password authentication failed for user "mirror"'),
    );
    expect(wrong.code).toBe('db.auth_failed');
    expect(wrong.message).toBe(
      `the database server ${LOCATION} refused the role (password authentication failed for user "mirror")`,
    );
    expect(wrong.hint).toMatch(/TRANSPORT_DB_PASSWORD_FILE/);
    expect(wrong.hint).toMatch(/pg_hba\.conf/);
    expect(translated(serverError('28000', 'role "x" does not exist')).code).toBe('db.auth_failed');
    const none = translated(
      new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string'),
    );
    expect(none.code).toBe('db.auth_failed');
    expect(none.message).toMatch(/asks for a password and none was given/);
  });

  it('a database the server does not have is db.missing, saying how to create it', () => {
    const error = translated(serverError('3D000', 'database "mirror" does not exist'));
    expect(error.code).toBe('db.missing');
    expect(error.message).toBe(
      `no database at ${LOCATION}: the server has no such database (database "mirror" does not exist)`,
    );
    expect(error.hint).toMatch(/createdb/);
  });

  it('a refused connection is db.unreachable, also inside an AggregateError or a wrapper', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
    });
    expect(translated(refused).code).toBe('db.unreachable');
    expect(translated(refused).isRetryable).toBe(true);
    const both = new AggregateError([refused, refused], '');
    expect(translated(both).code).toBe('db.unreachable');
    expect(translated(new Error('Failed query', { cause: refused })).code).toBe('db.unreachable');
  });

  it('a server that takes no writes is db.read_only; a full one db.full', () => {
    const standby = serverError('25006', 'cannot execute INSERT in a read-only transaction');
    expect(translated(standby).code).toBe('db.read_only');
    expect(translated(serverError('53100', 'could not extend file')).code).toBe('db.full');
  });

  it('leaves a bug or a constraint as it is', () => {
    const unique = serverError('23505', 'duplicate key value');
    expect(postgresError(unique, LOCATION)).toBe(unique);
    const bug = new TypeError('x is undefined');
    expect(postgresError(bug, LOCATION)).toBe(bug);
  });
});

describe('the password beside the URL', () => {
  it('reaches pg inside the URL, special characters and all', () => {
    const url = 'postgres://mirror@127.0.0.1:5432/mirror';
    const password = "p@ss:w%rd/ é'x";
    const client = new pg.Client({ connectionString: withPassword(url, password) });
    expect((client as unknown as { password: string }).password).toBe(password);
    expect(withPassword(url, undefined)).toBe(url);
  });
});
