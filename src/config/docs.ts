import { SETTINGS } from './settings.js';

/** The README's configuration table, generated from the settings table. */
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
