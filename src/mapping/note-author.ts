/**
 * Who wrote a note, against the user an import writes as. The service files every note it is
 * sent as the token's user; a note carried from elsewhere keeps its author only in its text. The
 * one rule, shared by restore and by the mappings' `author` target: a note whose author is the
 * writing user keeps its text as it was; another author's is headed with a line naming them.
 */

import type { WritingUser } from '../client/index.ts';

export type { WritingUser } from '../client/index.ts';

/** What is known of a note's author: any of a full name, a username, an e-mail address. */
export interface NoteAuthor {
  name?: unknown;
  username?: unknown;
  email?: unknown;
}

/**
 * Whether `author` is the writing user (the same person in another account has another id): the
 * same e-mail address (case aside) where both are known, or else the same full name and, where
 * both say one, the same username. With no writing user known, nobody is.
 */
export function isWritingUser(author: NoteAuthor, writer: WritingUser | null | undefined): boolean {
  if (writer === null || writer === undefined) return false;
  const { name, username, email } = author;
  if (typeof email === 'string' && email !== '' && typeof writer.email === 'string')
    return email.toLowerCase() === writer.email.toLowerCase();
  if (typeof name !== 'string' || name.trim() === '' || writer.name === undefined || name.trim() !== writer.name.trim())
    return false;
  return typeof username !== 'string' || username === '' || username === writer.username;
}

/** The line that heads another author's note unless the mapping gives its own: `Originally by Ann Smith`. */
export const authorLineOf = (author: string): string => `Originally by ${author}`;

/**
 * A note's text as it is sent: as it was when `author` is the writing user or is empty, else
 * headed by `line` (or `Originally by AUTHOR`) and a blank line.
 */
export function authoredContent(
  content: string,
  author: NoteAuthor & { line?: string | undefined },
  writer: WritingUser | null | undefined,
): string {
  const named =
    typeof author.name === 'string' && author.name.trim() !== ''
      ? author.name.trim()
      : typeof author.username === 'string' && author.username !== ''
        ? author.username
        : typeof author.email === 'string'
          ? author.email
          : '';
  if (named === '' || isWritingUser(author, writer)) return content;
  const line = author.line !== undefined && author.line.trim() !== '' ? author.line : authorLineOf(named);
  return content === '' ? line : `${line}\n\n${content}`;
}
