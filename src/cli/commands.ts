import type { Command } from './command.ts';
import { apiCommand } from './api.ts';
import { authLoginCommand, authLogoutCommand, authStatusCommand } from './auth.ts';
import { inspectCommand } from './inspect.ts';
import { sandboxCommand } from './sandbox.ts';

/** The command table: every command crm-ferry knows, in the order `--help` lists them. */
export const commands: Command[] = [sandboxCommand, inspectCommand, apiCommand, authLoginCommand, authStatusCommand, authLogoutCommand];
