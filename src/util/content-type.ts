import { extname } from 'node:path';

/**
 * The MIME types of the files people attach most, by extension: an uploaded attachment keeps a
 * type the CRM can preview (a restored backup's files keep theirs). Anything else is sent as
 * application/octet-stream, as before; a whole MIME database would be a dependency for a label.
 */
const TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.htm': 'text/html',
  '.html': 'text/html',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.eml': 'message/rfc822',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.svg': 'image/svg+xml',
  '.webp': 'image/webp',
  '.doc': 'application/msword',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xls': 'application/vnd.ms-excel',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.ppt': 'application/vnd.ms-powerpoint',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
};

/** The MIME type of a file name by its extension (any case), or application/octet-stream. */
export function contentTypeOf(filename: string): string {
  return TYPES[extname(filename).toLowerCase()] ?? 'application/octet-stream';
}
