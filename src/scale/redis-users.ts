/**
 * The users in Redis (`redis_url`): every server of a team sees the same users. Two hashes:
 * `oas:users` (name -> the user as JSON, with its token's hash) and `oas:user-tokens` (token hash
 * -> name). A Redis that does not answer is an error, never "no users".
 */
import type { Redis } from 'ioredis';
import type { Role, User, UserStore } from '../store/users.js';

const USERS = 'oas:users';
const TOKENS = 'oas:user-tokens';

interface Stored extends User {
  token_hash: string | null;
}

export function redisUsers(redis: Redis): UserStore {
  const read = async (name: string): Promise<Stored | undefined> => {
    const text = await redis.hget(USERS, name);
    return text ? (JSON.parse(text) as Stored) : undefined;
  };
  const plain = ({ token_hash: _hash, ...user }: Stored): User => user;
  const write = (stored: Stored) => redis.hset(USERS, stored.name, JSON.stringify(stored));
  return {
    async add(user, tokenHash) {
      const added = await redis.hsetnx(USERS, user.name, JSON.stringify({ ...user, token_hash: tokenHash }));
      if (added === 0) return false;
      if (tokenHash) await redis.hset(TOKENS, tokenHash, user.name);
      return true;
    },
    async get(name) {
      const stored = await read(name);
      return stored ? plain(stored) : undefined;
    },
    async list() {
      const all = await redis.hvals(USERS);
      return all.map((text) => plain(JSON.parse(text) as Stored)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
    async byTokenHash(hash) {
      const name = await redis.hget(TOKENS, hash);
      if (!name) return undefined;
      const stored = await read(name);
      // A token replaced meanwhile no longer belongs to its user.
      return stored && stored.token_hash === hash ? plain(stored) : undefined;
    },
    async setToken(name, hash) {
      const stored = await read(name);
      if (!stored) return false;
      if (stored.token_hash) await redis.hdel(TOKENS, stored.token_hash);
      await write({ ...stored, token_hash: hash });
      await redis.hset(TOKENS, hash, name);
      return true;
    },
    async setRole(name, role: Role) {
      const stored = await read(name);
      if (!stored) return false;
      await write({ ...stored, role });
      return true;
    },
    async remove(name) {
      const stored = await read(name);
      if (!stored) return false;
      if (stored.token_hash) await redis.hdel(TOKENS, stored.token_hash);
      await redis.hdel(USERS, name);
      return true;
    },
    async touch(name, at) {
      const stored = await read(name);
      if (stored) await write({ ...stored, last_used_at: at });
    },
    count: () => redis.hlen(USERS),
  };
}
