import { SETTINGS } from './settings.js';

/** The configuration table of docs/configuration.md, generated from the settings table. */
export function configMarkdownTable(): string {
  const rows = Object.values(SETTINGS).map((setting) => {
    const fallback =
      setting.defaultText === undefined
        ? setting.isServiceSetting
          ? 'required'
          : ''
        : `\`${setting.defaultText}\``;
    return `| \`${setting.env}\` | ${fallback} | ${setting.description.replace(/\|/g, '\\|')} |`;
  });
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** The settings as plain text for `transport-sync help config`. */
export function configHelpText(): string {
  const lines = Object.values(SETTINGS).map((setting) => {
    const fallback =
      setting.defaultText === undefined
        ? setting.isServiceSetting
          ? '(required)'
          : '(optional)'
        : `(default: ${setting.defaultText})`;
    return `  ${setting.env} ${fallback}\n      ${setting.description}`;
  });
  return `Settings (environment variables, or lines of the environment file TRANSPORT_ENV_FILE; the\nenvironment wins over the file, and flags such as --db over both):\n\n${lines.join('\n')}`;
}
