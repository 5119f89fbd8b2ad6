export {
  CREDENTIAL_FILES,
  loadConfig,
  redactConfig,
  type Config,
  type ConfigOverrides,
} from './load.js';
export { SETTINGS, REQUEST_STATES, type RequestState } from './settings.js';
export { configHelpText, configMarkdownTable } from './docs.js';
export { applyEnvironmentFile, DEFAULT_ENV_FILE, ENV_FILE_VARIABLE } from './environment-file.js';
export { parseEnvFile, type EnvFileContents, type EnvFileProblem } from './env-file.js';
