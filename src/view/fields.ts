// Until the engines import them from src/lookup/fields.ts (their import lines change last).
export { field, fields, listText, safeHref, sourceLink } from '../lookup/fields.js';
