/**
 * A loopback Microsoft Defender for Endpoint API (provider_14, engines.md 5.17) and its Azure AD
 * token endpoint:
 * - `POST <login prefix>/<tenant>/oauth2/token` (v1 client credentials: form `resource`,
 *   `client_id`, `client_secret`, `grant_type`) issues a random JWT-shaped token with
 *   `expires_in` as a string, as Azure AD does; wrong credentials get Azure's 401 `invalid_client`;
 * - `GET <api prefix>/api/files/<hash>/stats`, `/api/files/<hash>`, `/api/ips/<ip>/stats`,
 *   `/api/domains/<host>/stats`; unknown objects get MDE's 404 `ResourceNotFound`.
 * The API answers only a bearer token it issued (and not revoked). Every token request and
 * every issued token is recorded.
 *
 * `fakeRoutes()` / `fakeSettings(url)` serve whole-system tests (any credentials accepted).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { reply, type FakeReply, type FakeRequest, type FakeRoute } from './http.js';

export const API_PREFIX = '/mde';
export const LOGIN_PREFIX = '/mde-login';

export const FILES = {
  sha1: '0991a395da64e1c5fbe8732ed11e6be064081d9f',
  sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  md5: '44d88612fea8a8f36de82e1278abb02f',
};

/** The organisation's data: stats by `<collection>/<value>`, file info by hash. */
export interface MdeData {
  stats: Record<string, Record<string, unknown>>;
  files: Record<string, Record<string, unknown>>;
}

const IP_CONTEXT = 'https://api.securitycenter.microsoft.com/api/$metadata#microsoft.windowsDefenderATP.api.InOrgIPStats';
const DOMAIN_CONTEXT = 'https://api.securitycenter.microsoft.com/api/$metadata#microsoft.windowsDefenderATP.api.InOrgDomainStats';
const FILE_CONTEXT = 'https://api.securitycenter.microsoft.com/api/$metadata#microsoft.windowsDefenderATP.api.InOrgFileStats';

function fileInfo(sha1: string, sha256: string, md5: string, fields: Record<string, unknown>): Record<string, unknown> {
  return {
    '@odata.context': 'https://api.securitycenter.microsoft.com/api/$metadata#Files/$entity',
    sha1, sha256, md5, globalPrevalence: 180022, globalFirstObserved: '2017-09-19T03:45:28.3015348Z',
    globalLastObserved: '2020-01-06T03:59:21.3229314Z', size: 22139496, fileType: 'PE', isPeFile: true,
    filePublisher: 'Microsoft Corporation', fileProductName: 'Microsoft Windows Operating System', signer: 'Microsoft Windows',
    issuer: 'Microsoft Windows Production PCA 2011', signerHash: '9dc17888b5cfad98b3cb35c1994e96227f061675', isValidCertificate: true,
    determinationType: 'Clean', determinationValue: 'Good',
    ...fields,
  };
}

export const MDE_DATA: MdeData = {
  stats: {
    'ips/10.209.67.177': {
      '@odata.context': IP_CONTEXT, ipAddress: '10.209.67.177', orgPrevalence: 63515, organizationPrevalence: 63515,
      orgFirstSeen: '2017-07-30T13:36:06Z', orgLastSeen: '2017-08-29T13:32:59Z',
    },
    'ips/8.8.8.8': {
      '@odata.context': IP_CONTEXT, ipAddress: '8.8.8.8', orgPrevalence: 5120, organizationPrevalence: 5120,
      orgFirstSeen: '2019-03-01T08:00:00Z', orgLastSeen: '2026-01-08T23:59:59Z',
    },
    'ips/2001:db8:5::7': {
      '@odata.context': IP_CONTEXT, ipAddress: '2001:db8:5::7', orgPrevalence: 3, organizationPrevalence: 3,
      orgFirstSeen: '2025-12-31T23:30:00Z', orgLastSeen: '2026-01-02T00:10:00Z',
    },
    'domains/example.com': {
      '@odata.context': DOMAIN_CONTEXT, host: 'example.com', orgPrevalence: '4070', organizationPrevalence: 4070,
      orgFirstSeen: '2017-07-30T13:23:48Z', orgLastSeen: '2017-08-29T13:09:05Z',
    },
    'domains/login.phish.example': {
      '@odata.context': DOMAIN_CONTEXT, host: 'login.phish.example', orgPrevalence: '2', organizationPrevalence: 2,
      // With an offset: 2026-01-09T01:30:00Z in UTC.
      orgFirstSeen: '2026-01-08T20:30:00-05:00', orgLastSeen: '2026-01-09T08:15:00Z',
    },
    [`files/${FILES.sha1}`]: {
      '@odata.context': FILE_CONTEXT, sha1: FILES.sha1, organizationPrevalence: 14850, orgPrevalence: '14850',
      orgFirstSeen: '2019-12-07T13:44:16Z', orgLastSeen: '2020-01-06T13:39:36Z', globalPrevalence: 7329,
      globalFirstObserved: '2018-07-17T18:17:27.5909748Z', globalLastObserved: '2020-01-06T13:39:36Z', topFileNames: ['swscan.exe', 'swscan.dll'],
    },
    [`files/${FILES.sha256}`]: {
      '@odata.context': FILE_CONTEXT, sha256: FILES.sha256, organizationPrevalence: 120, orgPrevalence: '120',
      orgFirstSeen: '2024-02-29T23:59:59.9999999Z', orgLastSeen: null, globalPrevalence: 1000000,
      globalFirstObserved: '2016-01-01T00:00:00Z', globalLastObserved: '2026-01-09T10:00:00Z', topFileNames: ['empty.txt'],
    },
    [`files/${FILES.md5}`]: {
      '@odata.context': FILE_CONTEXT, md5: FILES.md5, organizationPrevalence: 1, orgPrevalence: '1',
      orgFirstSeen: '2025-06-01T10:00:00Z', orgLastSeen: '2025-06-01T10:00:00Z', globalPrevalence: 95000, topFileNames: ['eicar.com'],
    },
  },
  files: {
    [FILES.sha1]: fileInfo(FILES.sha1, '5f1ba9a4c5fe1e2d4fb8a9dbc62af3ce3ba7bb7a1e8e05d4dc8fb4f5e2bd0f5a', 'e3b0c44298fc1c149afbf4c8996fb924', {}),
    // Unsigned, no verdict fields at all: the engine's "Unknown"s.
    [FILES.sha256]: {
      '@odata.context': 'https://api.securitycenter.microsoft.com/api/$metadata#Files/$entity',
      sha1: 'da39a3ee5e6b4b0d3255bfef95601890afd80709', sha256: FILES.sha256, md5: 'd41d8cd98f00b204e9800998ecf8427e',
      size: 0, fileType: null, isPeFile: false, filePublisher: null, fileProductName: null, signer: null, issuer: null,
      signerHash: null, isValidCertificate: false,
    },
    // FILES.md5 has stats but no file record: the file call answers 404.
  },
};

export interface MdeFakeOptions {
  apiPrefix?: string;
  loginPrefix?: string;
  /** Expected credentials; when unset any non-empty values are accepted. */
  tenantId?: string;
  clientId?: string;
  clientSecret?: string;
  /** `expires_in` of issued tokens, default "3599" (a string, as Azure AD sends it); null leaves it out. */
  expiresIn?: number | string | null;
  /** Seconds from now of the JWT `exp` claim, default 3600. */
  jwtLifetime?: number;
  /** The API answers 401 to the first N tokens issued (revoked right after issue). */
  rejectFirst?: number;
  data?: MdeData;
}

export interface MdeFake {
  routes: Record<string, FakeRoute>;
  tokenRequests(): number;
  /** The forms of the token requests (client_secret included, for assertions). */
  tokenForms: URLSearchParams[];
  /** Every token issued so far. */
  issued: string[];
  apiCalls: { path: string; token: string | undefined }[];
}

function mdeError(status: number, code: string, message: string): FakeReply {
  return reply.json({ error: { code, message, target: randomUUID() } }, status);
}

function jwt(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ typ: 'JWT', alg: 'RS256', x5t: 'kWbkaa6qs8wsTnBwiiNYOhHbnAw', kid: 'kWbkaa6qs8wsTnBwiiNYOhHbnAw' })}.${part(claims)}.${randomBytes(64).toString('base64url')}`;
}

export function mdeFake(options: MdeFakeOptions = {}): MdeFake {
  const apiPrefix = options.apiPrefix ?? API_PREFIX;
  const loginPrefix = options.loginPrefix ?? LOGIN_PREFIX;
  const data = options.data ?? MDE_DATA;
  const issued: string[] = [];
  const revoked = new Set<string>();
  const tokenForms: URLSearchParams[] = [];
  const apiCalls: MdeFake['apiCalls'] = [];

  function denied(req: FakeRequest): FakeReply | null {
    const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    apiCalls.push({ path: req.path, token });
    if (!token || !issued.includes(token) || revoked.has(token)) {
      return mdeError(401, 'Unauthorized', 'Authorization has been denied for this request.');
    }
    return null;
  }

  const routes: Record<string, FakeRoute> = {
    [`POST ${loginPrefix}/*`]: (req) => {
      const match = new RegExp(`^${loginPrefix}/([^/]+)/oauth2/token$`).exec(req.path);
      if (!match) return reply.html('<html><body>Sorry, but we’re having trouble signing you in.</body></html>', 404);
      const form = new URLSearchParams(req.body);
      tokenForms.push(form);
      const tenant = match[1]!;
      const id = form.get('client_id') ?? '';
      const secret = form.get('client_secret') ?? '';
      const trace = `Trace ID: ${randomUUID()}\r\nCorrelation ID: ${randomUUID()}\r\nTimestamp: 2026-01-09 10:00:00Z`;
      const azureError = (status: number, error: string, code: number, description: string) => reply.json({
        error, error_description: `${description}\r\n${trace}`, error_codes: [code], timestamp: '2026-01-09 10:00:00Z',
        trace_id: randomUUID(), correlation_id: randomUUID(), error_uri: `https://login.microsoftonline.com/error?code=${code}`,
      }, status);
      if (options.tenantId !== undefined && tenant !== options.tenantId) {
        return azureError(400, 'invalid_request', 90002, `AADSTS90002: Tenant '${tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`);
      }
      if (form.get('grant_type') !== 'client_credentials' || !form.get('resource')) {
        return azureError(400, 'invalid_request', 900144, "AADSTS900144: The request body must contain the following parameter: 'grant_type' or 'resource'.");
      }
      if (id === '' || (options.clientId !== undefined && id !== options.clientId)) {
        return azureError(400, 'unauthorized_client', 700016, `AADSTS700016: Application with identifier '${id}' was not found in the directory '${tenant}'.`);
      }
      if (secret === '' || (options.clientSecret !== undefined && secret !== options.clientSecret)) {
        return azureError(401, 'invalid_client', 7000215, `AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${id}'.`);
      }
      const now = Math.floor(Date.now() / 1000);
      const exp = now + (options.jwtLifetime ?? 3600);
      const token = jwt({
        aud: form.get('resource'), iss: `https://sts.windows.net/${tenant}/`, iat: now, nbf: now, exp,
        aio: randomBytes(12).toString('base64url'), appid: id, oid: randomUUID(), roles: ['Ip.Read.All', 'File.Read.All', 'Url.Read.All'],
        tid: tenant, uti: randomBytes(16).toString('base64url'), ver: '1.0',
      });
      issued.push(token);
      if (issued.length <= (options.rejectFirst ?? 0)) revoked.add(token);
      const expiresIn = options.expiresIn === undefined ? '3599' : options.expiresIn;
      return reply.json({
        token_type: 'Bearer',
        ...(expiresIn === null ? {} : { expires_in: expiresIn, ext_expires_in: expiresIn }),
        expires_on: String(exp), not_before: String(now), resource: form.get('resource'), access_token: token,
      });
    },
    [`GET ${apiPrefix}/api/*`]: (req) => {
      const refused = denied(req);
      if (refused) return refused;
      const rest = req.path.slice(`${apiPrefix}/api/`.length);
      const stats = /^(files|ips|domains)\/([^/]+)\/stats$/.exec(rest);
      if (stats) {
        const found = data.stats[`${stats[1]}/${stats[2]}`];
        if (found) return reply.json(found);
        const what = { files: 'File', ips: 'Ip', domains: 'Domain' }[stats[1] as 'files' | 'ips' | 'domains'];
        return mdeError(404, 'ResourceNotFound', `${what} ${stats[2]} was not found`);
      }
      const file = /^files\/([^/]+)$/.exec(rest);
      if (file) {
        const found = data.files[file[1]!];
        return found ? reply.json(found) : mdeError(404, 'ResourceNotFound', `File ${file[1]} was not found`);
      }
      return mdeError(400, 'BadRequest', `Resource not supported: ${rest}`);
    },
  };
  return { routes, tokenRequests: () => tokenForms.length, tokenForms, issued, apiCalls };
}

/** For whole-system tests: the API at `/mde`, the token endpoint at `/mde-login`, any credentials accepted. */
export function fakeRoutes(): Record<string, FakeRoute> {
  const fake = mdeFake();
  wholeSystem.push(fake);
  return fake.routes;
}

const wholeSystem: MdeFake[] = [];

/** Every token the whole-system fakes issued: leak tests look for them too. */
export function issuedTokens(): string[] {
  return wholeSystem.flatMap((fake) => fake.issued);
}

/** A tenant id for whole-system tests (no secret, so set here rather than by the caller). */
export const FAKE_TENANT = '00000000-0000-4000-8000-00000000c0de';

/** `engines.provider_14` settings for a fake server at `url`: the URLs and the tenant, not the client credentials. */
export function fakeSettings(url: string): Record<string, unknown> {
  return { base_url: `${url}${API_PREFIX}`, login_url: `${url}${LOGIN_PREFIX}`, tenant_id: FAKE_TENANT };
}
