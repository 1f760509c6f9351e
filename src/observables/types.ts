/** Observable types, spelled as the results report them. */
export const OBSERVABLE_TYPES = ['IPv4', 'IPv6', 'FQDN', 'URL', 'MD5', 'SHA1', 'SHA256', 'Email', 'CHROME_EXTENSION'] as const;
export type ObservableType = (typeof OBSERVABLE_TYPES)[number];

export interface Observable {
  /** The indicator as written (after refanging). */
  value: string;
  type: ObservableType;
  /**
   * Where it was found, when it came from a file (issue 35): `Received header 2`, `row 14,
   * column ip`... Absent for a pasted text. Results carry it as they are.
   */
  found_in?: string[];
}

export const IP_TYPES: readonly ObservableType[] = ['IPv4', 'IPv6'];
export const HASH_TYPES: readonly ObservableType[] = ['MD5', 'SHA1', 'SHA256'];
