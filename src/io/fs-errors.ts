/** File-system errors in words: Node's own messages ("ENOSPC: no space left on device, write") name no file. */

const REASONS: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOENT: 'no such file or folder',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EISDIR: 'is a folder, not a file',
  EEXIST: 'already exists',
  ENAMETOOLONG: 'name too long',
  EMFILE: 'too many open files',
  EIO: 'input/output error',
};

/** "no space left on the device (ENOSPC)" for a Node file-system error; the plain message for anything else. */
export function fsErrorText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code && REASONS[code]) return `${REASONS[code]} (${code})`;
  return (err as Error)?.message ?? String(err);
}
