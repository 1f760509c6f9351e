/** Text helpers for the pages: defanged indicators, dates, durations, sizes. */

/**
 * The defanged form analysts paste into tickets and chats: `hxxps://www[.]example[.]com`,
 * `user[@]example[.]com`, `8[.]8[.]8[.]8`, `2001[:]db8[:][:]1`. Hashes stay as they are.
 */
export function defang(value: string, type: string): string {
  if (/^(MD5|SHA1|SHA256)$/.test(type)) return value;
  let out = value.replace(/^(h)tt(ps?):\/\//i, '$1xx$2://').replace(/^ftp:\/\//i, 'fxp://');
  if (type === 'IPv6') return out.replace(/:/g, '[:]');
  out = out.replace(/\./g, '[.]').replace(/@/g, '[@]');
  return out;
}

/** Local date and time, to the second: 2026-11-21 14:03:05. */
export function formatTime(iso: string | null): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return '';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function plural(count: number, word: string, many = `${word}s`): string {
  return `${count} ${count === 1 ? word : many}`;
}

/** A file's size as people read it: 812 bytes, 14.2 KB, 3.1 MB (1024-based, as file managers show). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return plural(bytes, 'byte');
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}
