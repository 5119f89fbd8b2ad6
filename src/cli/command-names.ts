/**
 * Every command's name, in the order `help` lists them. A module of its own, with nothing else in
 * it: main.ts loads each command's module by these names, and bin.js keeps a code cache for each
 * (code-cache.ts) before it loads anything else.
 */
export const COMMAND_NAMES = [
  'run',
  'sync',
  'backfill',
  'accept',
  'decline',
  'state',
  'locations',
  'change-request',
  'best-time',
  'status',
  'gaps',
  'changes',
  'doctor',
  'backup',
  'prune',
  'migrate',
  'copy',
  'demo',
  'simulator',
] as const;

export type CommandName = (typeof COMMAND_NAMES)[number];
