/**
 * The three bad-ASN lists as their hosts serve them, for the bad_asn tests, plus an ipapi.is
 * answer for the provider the engine depends on.
 *
 * - Spamhaus ASN-DROP: JSON lines with the metadata line last (the entries are made up, with the
 *   example of engines.md 5.4 among them; some lack domain / cc as real entries do);
 * - brianhama bad-asn-list: lines of the real file, with its quirks: quoted and unquoted rows,
 *   entities with commas and doubled quotes, quoted ASNs, ASNs listed twice;
 * - LETHAL-FORENSICS ASN blacklist: lines of the real file (every field quoted, a trailing space
 *   in a name, an empty Info) plus one entry for an ASN all three lists share.
 */
import { startFakeHttp, type FakeHttpServer, type FakeReply } from './http.js';

export const PATHS = {
  spamhaus: '/drop/asndrop.json',
  brianhama: '/brianhama/bad-asn-list/master/bad-asn-list.csv',
  lethal_forensics: '/LETHAL-FORENSICS/Microsoft-Analyzer-Suite/refs/heads/main/Blacklists/ASN-Blacklist.csv',
} as const;

export const spamhausLines = [
  { asn: 203999, rir: 'ripencc', domain: 'badhost.example', cc: 'RU', asname: 'BADHOST-AS' },
  { asn: 200019, rir: 'ripencc', domain: 'alexhost.example', cc: 'MD', asname: 'ALEXHOST' },
  { asn: 210644, rir: 'ripencc', domain: 'bulletproof.example', cc: 'SC', asname: 'BPHOST-NETWORK' },
  { asn: 401120, rir: 'arin', asname: 'CHEAPY-HOST' },
  { asn: 398722, rir: 'arin', domain: 'scanfarm.example', cc: 'US', asname: 'SCANFARM-LLC' },
  { asn: 51381, rir: 'ripencc', domain: 'quietnet.example', asname: 'QUIETNET' },
];

export function spamhausBody(entries: readonly object[] = spamhausLines): string {
  const metadata = {
    type: 'metadata', timestamp: 1767225600, size: 0, records: entries.length,
    copyright: '(c) 2026 The Spamhaus Project SLU', terms: 'https://www.spamhaus.org/drop/terms/',
  };
  return `${[...entries, metadata].map((e) => JSON.stringify(e)).join('\n')}\n`;
}

export const brianhamaCsv = [
  'ASN,Entity',
  '3223,"VOXILITY, RO"',
  '3842,"RAMNODE - RamNode LLC, US"',
  '6870,"H1ASN, RU"',
  '9009,"M247, GB"',
  '14061,"DIGITALOCEAN-ASN - Digital Ocean, Inc., US"',
  '15497,"COLOCALL Internet Data Center ""ColoCALL"", UA"',
  '16276,"OVH, FR"',
  '16509,"AMAZON-02 - Amazon.com, Inc., US"',
  '20264,WEBAIR-INTERNET-2 - Webair Internet Development Company Inc.',
  '49505,"OOO Network of data-centers Selectel"',
  '49505,"SELECTEL, RU"',
  '200019,"ASCLOUDATA, MD"',
  '395978,UNKNOWN',
  '"20248","Take 2 Hosting, Inc."',
  '"200019","ALEXHOST SRL"',
  '"54290","Hostwinds LLC."',
  '',
].join('\n');

export const lethalForensicsCsv = [
  '"ASN","OrgName","Info","Date"',
  '"174","Cogent Communications","CyberGhost VPN, Mullvad VPN, PIA VPN, ProtonVPN, Pure VPN","2024-12-17"',
  '"9009","M247 Europe SRL","CyberGhost VPN, ExpressVPN, HMA VPN, NordVPN, Pure VPN, Surfshark VPN, TunnelBear VPN, Windscribe VPN","2024-12-17"',
  '"14061","DigitalOcean, LLC","CyberGhost VPN, Pure VPN, Surfshark VPN, TunnelBear VPN, Windscribe VPN","2024-12-17"',
  '"16276","OVH SAS","ExpressVPN, PIA VPN, Pure VPN, Windscribe VPN","2024-12-17"',
  '"24940","Hetzner Online GmbH","NordVPN, CyberGhost VPN, ProtonVPN, Surfshark VPN","2024-12-17"',
  '"37684","Angani Limited ","CyberGhost VPN, ExpressVPN, Pure VPN, TunnelBear VPN","2024-12-17"',
  '"136258","BrainStorm Network, Inc","","2025-05-24"',
  '"200019","ALEXHOST SRL","Pure VPN","2024-12-17"',
  '',
].join('\r\n');

/** Replies as the hosts send them (raw.githubusercontent.com serves CSV as text/plain). */
export const listReplies = {
  spamhaus: (body: string = spamhausBody()): FakeReply => ({ status: 200, headers: { 'content-type': 'application/json' }, body }),
  csv: (body: string): FakeReply => ({ status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body }),
};

export interface FakeBadAsn {
  http: FakeHttpServer;
  /** The three URL settings, pointing at the fake. */
  settings: { spamhaus_url: string; brianhama_url: string; lethal_forensics_url: string };
  /** Back to the default lists. */
  restore(): void;
  /** Requests per list. */
  hits(): { spamhaus: number; brianhama: number; lethal_forensics: number };
}

export async function startFakeBadAsn(): Promise<FakeBadAsn> {
  const http = await startFakeHttp();
  const restore = () => {
    http.route(`GET ${PATHS.spamhaus}`, listReplies.spamhaus());
    http.route(`GET ${PATHS.brianhama}`, listReplies.csv(brianhamaCsv));
    http.route(`GET ${PATHS.lethal_forensics}`, listReplies.csv(lethalForensicsCsv));
  };
  restore();
  return {
    http,
    settings: {
      spamhaus_url: `${http.url}${PATHS.spamhaus}`,
      brianhama_url: `${http.url}${PATHS.brianhama}`,
      lethal_forensics_url: `${http.url}${PATHS.lethal_forensics}`,
    },
    restore,
    hits: () => ({
      spamhaus: http.hits(PATHS.spamhaus).length,
      brianhama: http.hits(PATHS.brianhama).length,
      lethal_forensics: http.hits(PATHS.lethal_forensics).length,
    }),
  };
}

/** An ipapi.is answer (engines.md 5.14's example, for another network). */
export function ipapiAnswer(ip: string, asn: number, org: string): Record<string, unknown> {
  return {
    ip, rir: 'RIPE', is_bogon: false, is_mobile: false, is_crawler: false, is_datacenter: true, is_tor: false,
    is_proxy: false, is_vpn: false, is_abuser: true,
    company: { name: org, domain: 'badhost.example', type: 'hosting', network: '45.155.205.0 - 45.155.205.255' },
    abuse: { name: 'Abuse desk', email: 'abuse@badhost.example' },
    asn: {
      asn, route: '45.155.205.0/24', descr: 'BADHOST-AS, RU', country: 'ru', active: true,
      org, domain: 'badhost.example', abuse: 'abuse@badhost.example', type: 'hosting',
    },
    location: {
      is_eu_member: false, continent: 'EU', country: 'Russia', country_code: 'RU', state: 'Moscow',
      city: 'Moscow', latitude: 55.75, longitude: 37.62, timezone: 'Europe/Moscow',
    },
    elapsed_ms: 0.8,
  };
}
