/**
 * The API's endpoints (src/server/api.ts) as the OpenAPI document tells them (issue 36): the
 * spec's three, `POST {prefix}extract` (issue 35) and `GET {prefix}openapi.json` itself, each with
 * the schemas of src/server/api-schemas.ts the route validates with and answers in, the statuses
 * the route gives, and examples (the tests check each against its schema).
 */
import {
  analysisHandleSchema,
  analyzeFormSchema,
  analyzeRequestSchema,
  completionSchema,
  errorSchema,
  extractFormSchema,
  extractionPreviewSchema,
  extractRequestSchema,
  observableResultSchema,
  openApiDocumentSchema,
  resultsSchema,
} from './api-schemas.js';
import { errorResponse as error, type OpenApiContribution } from './openapi-entry.js';

const ID = '0b9b8f5e-3c1e-4c5e-9a57-2f6f3e1d2c4b';

const RETRY_AFTER = { 'Retry-After': 'Seconds to wait before trying again.' };
const ID_PARAM = { id: { description: 'The analysis\'s id, as POST analyze answered it.', example: ID } };

const RESULT_EXAMPLE = [
  {
    observable: 'https://www.example.com/login',
    type: 'URL',
    reversed_success: true,
    reversed_ip: '93.184.215.14',
    reverse_dns: { reverse_dns: ['93.184.215.14'] },
    rdap_whois: {
      abuse_contact: 'abuse@example-registrar.test', creation_date: '1995-08-14', data_source: 'rdap', emails: [], expiration_date: '2026-08-13',
      link: 'https://rdap.example-registry.test/domain/example.com', name_servers: ['a.iana-servers.net', 'b.iana-servers.net'], organization: null,
      registrant: null, registrant_country: null, registrant_email: null, registrar: 'Example Registrar', update_date: '2025-08-14',
    },
  },
  {
    observable: '10.1.2.3',
    type: 'IPv4',
    found_in: ['Received header 2'],
    reversed_success: false,
    reverse_dns: null,
    ipquery: null,
    errors: { reverse_dns: 'no PTR record' },
    withheld: { ipquery: '10.1.2.3 is a private address: sent to no third party' },
  },
];

const PREVIEW_EXAMPLE = {
  file: { name: 'reported.eml', kind: 'eml', bytes: 48213 },
  observables: [
    { value: 'login-example.test', type: 'FQDN', found_in: ['From header', 'link 1 of the HTML body (shows https://www.example.com)'] },
    { value: '10.1.2.3', type: 'IPv4', found_in: ['Received header 2'], internal: '10.1.2.3 is a private address' },
  ],
  email_auth: { spf: 'fail', dkim: 'none', dmarc: 'fail', authserv_id: 'mx.example.com' },
  notes: [],
};

export const API_OPENAPI: OpenApiContribution = {
  tags: [
    { name: 'analyses', description: 'Start an analysis, poll it, read its results (the three endpoints of the HTTP interface).' },
    { name: 'files', description: 'A file\'s or a text\'s observables, before anything is sent.' },
    { name: 'meta', description: 'This document.' },
  ],
  schemas: {
    AnalyzeRequest: analyzeRequestSchema,
    AnalyzeForm: analyzeFormSchema,
    AnalysisHandle: analysisHandleSchema,
    CompletionStatus: completionSchema,
    ObservableResult: observableResultSchema,
    AnalysisResults: resultsSchema,
    ExtractRequest: extractRequestSchema,
    ExtractForm: extractFormSchema,
    ExtractionPreview: extractionPreviewSchema,
    Error: errorSchema,
  },
  entries: [
    {
      method: 'post',
      path: 'analyze',
      operationId: 'analyze',
      summary: 'Start an analysis',
      description: 'Extracts the observables of `text` (or of the files) and starts their analysis with the engines. Answers at once; poll `is_analysis_complete`, then read `results`. Cached answers are used unless `ignore_cache`.',
      tags: ['analyses'],
      role: 'analyst',
      requestBody: {
        content: {
          'application/json': { schema: analyzeRequestSchema, example: { text: 'hxxps://www[.]example[.]com/login and 8.8.8.8', engines: ['reverse_dns', 'rdap_whois'], ignore_cache: false, tlp: 'AMBER' } },
          'multipart/form-data': { schema: analyzeFormSchema, example: { file: ['(the bytes of reported.eml)'], engines: 'reverse_dns,rdap_whois', tlp: 'AMBER' } },
        },
      },
      responses: {
        200: { description: 'The analysis started.', body: { schema: analysisHandleSchema, example: { analysis_id: ID, link: `/results/${ID}` } } },
        400: error('The request is not what the endpoint takes: not JSON, `text` or `engines` missing or empty, an unknown engine, a word that is no TLP or PAP level, a form without a `file` part.', 'unknown engine: urlscn; did you mean urlscan? (valid engines: abusix (provider_01), ...)'),
        413: error('The body is over max_body_bytes (JSON), a file over max_upload_bytes (multipart), or the text holds more observables than max_observables.', 'request body larger than 1048576 bytes'),
        415: error('The body is neither `application/json` nor `multipart/form-data`.', 'Content-Type must be application/json (or multipart/form-data with a "file" part)'),
        422: error('A file could not be read (malformed, encrypted, a CSV column that is not there); the line names it.', 'iocs.csv: no column named "nope" (columns: ip, comment)'),
        429: error('Too many analyses from this client: setting rate_limit_per_minute.', 'too many analyses: at most 60 per minute per client (setting rate_limit_per_minute); retry in 12 s', RETRY_AFTER),
        503: error('Busy: the extraction of large texts, or the files being read, are too far behind; retry after Retry-After.', 'server busy: 4 file(s) being read; retry in 2 s', RETRY_AFTER),
      },
    },
    {
      method: 'get',
      path: 'is_analysis_complete/{id}',
      operationId: 'isAnalysisComplete',
      summary: 'Whether an analysis has finished',
      tags: ['analyses'],
      role: 'viewer',
      params: ID_PARAM,
      responses: {
        200: { description: 'Its state.', body: { schema: completionSchema, example: { complete: true } } },
        404: error('No analysis has this id.', `analysis not found: ${ID}`),
      },
    },
    {
      method: 'get',
      path: 'results/{id}',
      operationId: 'getResults',
      summary: 'The results of a finished analysis',
      description: 'One element per observable, in the order they were found; one key per selected engine.',
      tags: ['analyses'],
      role: 'viewer',
      params: ID_PARAM,
      responses: {
        200: { description: 'The results.', body: { schema: resultsSchema, example: RESULT_EXAMPLE } },
        404: error('No analysis has this id.', `analysis not found: ${ID}`),
        409: error('The analysis has not finished yet: poll is_analysis_complete until it says true.', 'analysis not complete yet: poll is_analysis_complete until it reports true'),
      },
    },
    {
      method: 'post',
      path: 'extract',
      operationId: 'extract',
      summary: 'List the observables of a file or a text, asking no engine',
      description: 'What an analysis of it would look up: each observable with its type and where it was found; those of the team\'s own networks and domains marked `internal`.',
      tags: ['files'],
      role: 'analyst',
      requestBody: {
        content: {
          'application/json': { schema: extractRequestSchema, example: { text: 'Seen: evil[.]example and 10.1.2.3' } },
          'multipart/form-data': { schema: extractFormSchema, example: { file: '(the bytes of reported.eml)' } },
        },
      },
      responses: {
        200: { description: 'The observables.', body: { schema: extractionPreviewSchema, example: PREVIEW_EXAMPLE } },
        400: error('Not JSON, no `text`, a form without a `file` part or with more than one.', '"text" is required and must be a non-empty string (or send a file as multipart/form-data field "file")'),
        413: error('The body is over max_body_bytes (JSON), or the file over max_upload_bytes.', 'upload larger than max_upload_bytes (10485760 bytes): send a smaller file, or raise max_upload_bytes'),
        415: error('The body is neither `application/json` nor `multipart/form-data`.', 'Content-Type must be application/json (a {"text": ...} object) or multipart/form-data (a "file" part)'),
        422: error('The file could not be read; the line names it.', 'report.pdf: not a PDF file (no %PDF header)'),
        503: error('Busy: too many files being read at once; retry after Retry-After.', 'server busy: 4 file(s) being read; retry in 2 s', RETRY_AFTER),
      },
    },
    {
      method: 'get',
      path: 'openapi.json',
      operationId: 'getOpenApi',
      summary: 'This OpenAPI document',
      description: 'The same document `oas openapi` prints, for the prefix this server serves under.',
      tags: ['meta'],
      role: 'viewer',
      responses: {
        200: { description: 'An OpenAPI 3.1 document.', body: { schema: openApiDocumentSchema } },
      },
    },
  ],
};
