/**
 * Whether an Outlook `.msg`'s compound-file structure (MS-CFB) is safe to hand to msgreader.
 * msgreader follows the file's sector chains and directory links as they are written, without
 * checking for loops: a 2 KB file whose allocation table points a sector at itself sends it into
 * an endless loop that only ends when the process runs out of memory, and a directory entry
 * claiming a 2 GB stream makes it allocate 2 GB. This check reads no content, only the structure
 * msgreader is about to walk (the header, the allocation tables, the directory's links and
 * sizes), the way msgreader reads it, each bounded by the file's own size; it answers what is
 * wrong, or undefined when msgreader's walks all end.
 */

const END_OF_CHAIN = -2;
const NO_ENTRY = -1;
const ENTRY_SIZE = 128;
const STORAGE = 1;
const STREAM = 2;
/** The allocation table sectors the header lists itself. */
const HEADER_DIFAT = 109;

/**
 * What makes `bytes` unsafe to walk (`truncated: ...` when the file does not end on a sector
 * boundary, else `damaged: ...`), or undefined. `bytes` starts with the compound-file signature.
 */
export function compoundFileProblem(bytes: Uint8Array): string | undefined {
  if (bytes.byteLength < 512) return 'truncated: shorter than a compound file header';
  const problem = structureProblem(bytes);
  if (!problem) return undefined;
  const cut = bytes.byteLength % (bytes[30] === 12 ? 4096 : 512) !== 0;
  return `${cut ? 'truncated' : 'damaged'}: ${problem}`;
}

function structureProblem(bytes: Uint8Array): string | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const int = (offset: number): number => (offset >= 0 && offset + 4 <= bytes.byteLength ? view.getInt32(offset, true) : END_OF_CHAIN);
  // As msgreader reads it: sector shift 12 means 4096-byte sectors, anything else 512.
  const size = bytes[30] === 12 ? 4096 : 512;
  const perSector = size / 4;
  const sectors = Math.ceil(bytes.byteLength / size);
  const fatCount = int(0x2c);
  const miniFatCount = int(0x40);
  const difatCount = int(0x48);
  for (const count of [fatCount, miniFatCount, difatCount]) {
    if (count < 0 || count > sectors) return 'its header counts more sectors than the file holds';
  }
  const sectorOffset = (sector: number) => (sector + 1) * size;

  // The allocation table's sectors: those the header lists, then the DIFAT chain's.
  const fatSectors: number[] = [];
  for (let i = 0; i < Math.min(fatCount, HEADER_DIFAT); i++) fatSectors.push(int(0x4c + 4 * i));
  let difat = int(0x44);
  let remaining = fatCount - fatSectors.length;
  for (let i = 0; i < difatCount && remaining > 0; i++) {
    for (let j = 0; j < Math.min(remaining, perSector - 1); j++) {
      const sector = int(sectorOffset(difat) + 4 * j);
      if (sector === NO_ENTRY || sector === END_OF_CHAIN) break;
      fatSectors.push(sector);
    }
    remaining -= perSector - 1;
    difat = int(sectorOffset(difat) + 4 * (perSector - 1));
    if (difat === NO_ENTRY || difat === END_OF_CHAIN) break;
  }
  const fat = tableOf(fatSectors, perSector, (sector, j) => int(sectorOffset(sector) + 4 * j));
  if (hasLoop(fat)) return 'a sector chain of its allocation table loops';
  const next = (sector: number) => (sector >= 0 && sector < fat.length ? fat[sector]! : END_OF_CHAIN);

  // The mini allocation table: a chain of the big table (no longer able to loop).
  const miniFatSectors: number[] = [];
  for (let sector = int(0x3c), i = 0; i < miniFatCount && sector && sector !== END_OF_CHAIN; i++, sector = next(sector)) miniFatSectors.push(sector);
  if (hasLoop(tableOf(miniFatSectors, perSector, (sector, j) => int(sectorOffset(sector) + 4 * j)))) {
    return 'a sector chain of its mini allocation table loops';
  }

  // The directory: its entries, then its tree, each entry met once.
  const entries: { type: number; left: number; right: number; child: number; size: number }[] = [];
  for (let sector = int(0x30); sector !== END_OF_CHAIN; sector = next(sector)) {
    for (let k = 0; k < size / ENTRY_SIZE; k++) {
      const at = sectorOffset(sector) + k * ENTRY_SIZE;
      if (at < 0 || at + ENTRY_SIZE > bytes.byteLength) break;
      entries.push({ type: bytes[at + 0x42]!, left: int(at + 0x44), right: int(at + 0x48), child: int(at + 0x4c), size: int(at + 0x78) });
    }
    if (sector < 0) break;
  }
  if (entries.length === 0) return 'it has no directory';
  for (const entry of entries) {
    if (entry.type === STREAM && (entry.size < 0 || entry.size > bytes.byteLength)) return 'a stream claims more bytes than the file holds';
  }
  const seen = new Uint8Array(entries.length);
  const stack = entries[0]!.child === NO_ENTRY ? [] : [entries[0]!.child];
  while (stack.length) {
    const index = stack.pop()!;
    const entry = entries[index];
    if (!entry) return 'a directory entry points outside the directory';
    if (seen[index]) return 'its directory tree loops';
    seen[index] = 1;
    if (entry.left !== NO_ENTRY) stack.push(entry.left);
    if (entry.right !== NO_ENTRY) stack.push(entry.right);
    if (entry.type === STORAGE && entry.child !== NO_ENTRY) stack.push(entry.child);
  }
  return undefined;
}

/** The entries of the table made of `sectors` (perSector entries each), read by `read`. */
function tableOf(sectors: number[], perSector: number, read: (sector: number, index: number) => number): Int32Array {
  const table = new Int32Array(sectors.length * perSector);
  for (let i = 0; i < sectors.length; i++) {
    for (let j = 0; j < perSector; j++) table[i * perSector + j] = read(sectors[i]!, j);
  }
  return table;
}

/** True when following `table` from some entry comes back to an entry of the same walk. */
function hasLoop(table: Int32Array): boolean {
  // 0: not met; 1: on the walk under way; 2: known to end.
  const state = new Uint8Array(table.length);
  const path: number[] = [];
  for (let start = 0; start < table.length; start++) {
    let at = start;
    while (at >= 0 && at < table.length && state[at] === 0) {
      state[at] = 1;
      path.push(at);
      at = table[at]!;
    }
    if (at >= 0 && at < table.length && state[at] === 1) return true;
    for (const done of path) state[done] = 2;
    path.length = 0;
  }
  return false;
}
