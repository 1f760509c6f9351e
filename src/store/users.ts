/**
 * The people (and tools) that use a shared server: a name, a role and a token kept only as its
 * SHA-256 hash (a token is 32 random bytes: a slow hash would add nothing). They live in the
 * SQLite file (`users` table), or in Redis with `redis_url` (src/scale/redis-users.ts), so that
 * every server of a team sees the same users.
 */
import { createHash, randomBytes } from 'node:crypto';
import type KeyvSqlite from '@keyv/sqlite';

export const ROLES = ['viewer', 'analyst', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Whether `role` includes what `needed` may do (viewer < analyst < admin). */
export function hasRole(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

export interface User {
  name: string;
  role: Role;
  created_at: string;
  /** When its token (or its sign-in through the proxy) was last accepted; null before. */
  last_used_at: string | null;
}

export interface UserStore {
  /** Adds a user; false when the name is taken. */
  add(user: User, tokenHash: string | null): Promise<boolean>;
  get(name: string): Promise<User | undefined>;
  list(): Promise<User[]>;
  /** The user whose token has this hash. */
  byTokenHash(hash: string): Promise<User | undefined>;
  /** Replaces the user's token (the old one stops working at once); false for an unknown name. */
  setToken(name: string, hash: string): Promise<boolean>;
  setRole(name: string, role: Role): Promise<boolean>;
  remove(name: string): Promise<boolean>;
  touch(name: string, at: string): Promise<void>;
  count(): Promise<number>;
}

/** `oas_` then 32 random bytes, base64url: 47 characters. */
export function newToken(): string {
  return `oas_${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A user name: letters, digits and `.`, `_`, `-`, `@` (e-mail addresses from a proxy included). */
export const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/;

const TABLE = 'users';

/** The users in the SQLite file, on the analyses table's connection. */
export function sqliteUsers(table: KeyvSqlite): UserStore {
  let ready: Promise<unknown> | undefined;
  const query = async <T>(sql: string, ...params: unknown[]): Promise<T[]> => {
    ready ??= table.query(`CREATE TABLE IF NOT EXISTS ${TABLE} (name TEXT PRIMARY KEY, role TEXT NOT NULL, created_at TEXT NOT NULL, last_used_at TEXT, token_hash TEXT UNIQUE)`);
    await ready;
    return (await table.query(sql, ...params)) as T[];
  };
  const row = (r: { name: string; role: Role; created_at: string; last_used_at: string | null }): User => ({ name: r.name, role: r.role, created_at: r.created_at, last_used_at: r.last_used_at ?? null });
  return {
    async add(user, tokenHash) {
      if ((await query<{ name: string }>(`SELECT name FROM ${TABLE} WHERE name = ?`, user.name)).length > 0) return false;
      await query(`INSERT INTO ${TABLE} (name, role, created_at, last_used_at, token_hash) VALUES (?, ?, ?, ?, ?)`, user.name, user.role, user.created_at, user.last_used_at, tokenHash);
      return true;
    },
    async get(name) {
      const [found] = await query<Parameters<typeof row>[0]>(`SELECT name, role, created_at, last_used_at FROM ${TABLE} WHERE name = ?`, name);
      return found ? row(found) : undefined;
    },
    async list() {
      return (await query<Parameters<typeof row>[0]>(`SELECT name, role, created_at, last_used_at FROM ${TABLE} ORDER BY name`)).map(row);
    },
    async byTokenHash(hash) {
      const [found] = await query<Parameters<typeof row>[0]>(`SELECT name, role, created_at, last_used_at FROM ${TABLE} WHERE token_hash = ?`, hash);
      return found ? row(found) : undefined;
    },
    async setToken(name, hash) {
      if (!(await this.get(name))) return false;
      await query(`UPDATE ${TABLE} SET token_hash = ? WHERE name = ?`, hash, name);
      return true;
    },
    async setRole(name, role) {
      if (!(await this.get(name))) return false;
      await query(`UPDATE ${TABLE} SET role = ? WHERE name = ?`, role, name);
      return true;
    },
    async remove(name) {
      if (!(await this.get(name))) return false;
      await query(`DELETE FROM ${TABLE} WHERE name = ?`, name);
      return true;
    },
    async touch(name, at) {
      await query(`UPDATE ${TABLE} SET last_used_at = ? WHERE name = ?`, at, name);
    },
    async count() {
      const [found] = await query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${TABLE}`);
      return found?.n ?? 0;
    },
  };
}
