/**
 * Static token file authentication (kube-apiserver's `--token-auth-file`): a CSV file with one
 * token per line, `token,user,uid,"group1,group2"` (the groups column is optional; further
 * columns are ignored). Read once at start; a malformed file stops the start, naming the line.
 */
import { Errors } from '@app/apimachinery';
import type { AuthenticationRequest, Authenticator } from './authenticator.port.js';
import { bearerToken } from './bearer.token.js';
import type { UserInfo } from './user.info.js';

/** A token file that cannot be read as one (the message names the line, never a token). */
export class TokenFileError extends Error {
  override readonly name = 'TokenFileError';
}

/** Splits one CSV record (RFC 4180 quoting, as Go's encoding/csv with TrimLeadingSpace). */
function csvFields(line: string, lineNo: number): string[] {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    let field = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (i >= line.length) throw new TokenFileError(`line ${lineNo}: unterminated quoted field`);
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += line[i++];
      }
      if (i < line.length && line[i] !== ',') throw new TokenFileError(`line ${lineNo}: extraneous text after a quoted field`);
    } else {
      const end = line.indexOf(',', i);
      field = end < 0 ? line.slice(i) : line.slice(i, end);
      if (field.includes('"')) throw new TokenFileError(`line ${lineNo}: bare " in a field that is not quoted`);
      i = end < 0 ? line.length : end;
    }
    fields.push(field);
    if (i >= line.length) return fields;
    i++; // the comma
  }
}

/**
 * Parses the text of a token file into token -> user. Blank lines are skipped; a line with fewer
 * than three columns, an empty token, user name or broken quoting is a TokenFileError naming the
 * line. A token given twice keeps its last line (kube-apiserver warns and does the same).
 */
export function parseTokenFile(text: string): Map<string, UserInfo> {
  const users = new Map<string, UserInfo>();
  const lines = text.split(/\r?\n/);
  lines.forEach((line, idx) => {
    const lineNo = idx + 1;
    if (line.trim() === '') return;
    const f = csvFields(line, lineNo);
    if (f.length < 3) throw new TokenFileError(`line ${lineNo}: must have at least 3 columns (token, user name, user uid), found ${f.length}`);
    const [token, username, uid, groups] = f as [string, string, string, string | undefined];
    if (token === '') throw new TokenFileError(`line ${lineNo}: empty token`);
    if (username === '') throw new TokenFileError(`line ${lineNo}: empty user name`);
    const user: UserInfo = {
      username,
      uid,
      groups: groups
        ? groups
            .split(',')
            .map((g) => g.trim())
            .filter((g) => g !== '')
        : [],
    };
    users.set(token, user);
  });
  return users;
}

/**
 * Bearer tokens looked up in the parsed file; a token not in it is left to the next method. The
 * users are copied and frozen once, and a request gets the same object for the same token (no
 * copy per request; UserInfo is never mutated after authentication).
 */
export class TokenFileAuthenticator implements Authenticator {
  private readonly users = new Map<string, UserInfo>();

  constructor(users: ReadonlyMap<string, UserInfo>) {
    for (const [token, u] of users) this.users.set(token, Object.freeze({ ...u, groups: Object.freeze([...u.groups]) as string[] }));
  }

  authenticate(req: AuthenticationRequest): UserInfo | undefined {
    const token = bearerToken(req.headers);
    return token === undefined ? undefined : this.users.get(token);
  }
}

/**
 * The last method of the token authenticators (Kubernetes' bearertoken wrapper): a bearer token
 * that no token method accepted is a 401, never anonymous.
 */
export class UnrecognizedBearerTokenAuthenticator implements Authenticator {
  authenticate(req: AuthenticationRequest): undefined {
    if (bearerToken(req.headers) !== undefined) throw Errors.unauthorized();
    return undefined;
  }
}
