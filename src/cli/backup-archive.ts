/**
 * The `arbor backup` file: an uncompressed POSIX tar of a few named files (the gzipped
 * database dump and the key files). Only what this needs: regular files, names under 100
 * bytes, no links.
 */
export interface ArchiveFile {
  name: string;
  data: Uint8Array;
}

const BLOCK = 512;

function header(name: string, size: number): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const put = (text: string, at: number) => h.set(new TextEncoder().encode(text), at);
  if (Buffer.byteLength(name) > 99) throw new Error(`archive name too long: ${name}`);
  put(name, 0);
  put('0000600\0', 100); // mode
  put('0000000\0', 108); // uid
  put('0000000\0', 116); // gid
  put(`${size.toString(8).padStart(11, '0')}\0`, 124);
  put(
    `${Math.floor(Date.now() / 1000)
      .toString(8)
      .padStart(11, '0')}\0`,
    136,
  );
  put('        ', 148); // checksum field counts as spaces while summing
  put('0', 156); // regular file
  put('ustar\x0000', 257);
  const sum = h.reduce((a, b) => a + b, 0);
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

/** The tar of `files`, in order. */
export function writeArchive(files: readonly ArchiveFile[]): Buffer {
  const parts: Uint8Array[] = [];
  for (const f of files) {
    parts.push(header(f.name, f.data.length), f.data);
    const pad = (BLOCK - (f.data.length % BLOCK)) % BLOCK;
    parts.push(new Uint8Array(pad));
  }
  parts.push(new Uint8Array(BLOCK * 2));
  return Buffer.concat(parts);
}

/** @throws Error when `tar` is not such an archive (a bad checksum, a truncated file). */
export function readArchive(tar: Buffer): ArchiveFile[] {
  const out: ArchiveFile[] = [];
  for (let at = 0; at + BLOCK <= tar.length;) {
    const h = tar.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) break;
    const field = (from: number, len: number) =>
      h
        .subarray(from, from + len)
        .toString('latin1')
        .replace(/\0.*$/s, '')
        .trim();
    const stored = parseInt(field(148, 8), 8);
    const sum = h.reduce((a, b, i) => a + (i >= 148 && i < 156 ? 32 : b), 0);
    if (stored !== sum) throw new Error('not an arbor backup (bad tar header)');
    const size = parseInt(field(124, 12), 8);
    const start = at + BLOCK;
    if (start + size > tar.length) throw new Error('the backup is truncated');
    out.push({ name: field(0, 100), data: tar.subarray(start, start + size) });
    at = start + Math.ceil(size / BLOCK) * BLOCK;
  }
  return out;
}
