import type { Command } from './command.ts';
import { sandboxCommand } from './sandbox.ts';

/** The command table: every command crm-ferry knows, in the order `--help` lists them. */
export const commands: Command[] = [sandboxCommand];
