export { loadConfig, redactConfig, type Config, type ConfigOverrides } from './load.js';
export { SETTINGS, REQUEST_STATES, type RequestState } from './settings.js';
export { configHelpText, configMarkdownTable } from './docs.js';
