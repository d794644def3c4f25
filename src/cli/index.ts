/** The command line's door, for the demo script: the rooms below never import the CLI. */
export { main } from './main.ts';
