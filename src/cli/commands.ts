import type { Command } from './command.ts';
import { apiCommand } from './api.ts';
import { authLoginCommand, authLogoutCommand, authStatusCommand } from './auth.ts';
import { exportCommand } from './export.ts';
import { importCommand, rollbackCommand, runCommand } from './import.ts';
import { inspectCommand } from './inspect.ts';
import { mappingInitCommand, mappingSchemaCommand } from './mapping.ts';
import { sandboxCommand } from './sandbox.ts';
import { validateCommand } from './validate.ts';

/** The command table: every command crm-ferry knows, in the order `--help` lists them. */
export const commands: Command[] = [sandboxCommand, inspectCommand, mappingInitCommand, mappingSchemaCommand, validateCommand, importCommand, runCommand, rollbackCommand, exportCommand, apiCommand, authLoginCommand, authStatusCommand, authLogoutCommand];
